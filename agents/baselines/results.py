"""The baselines' results: rows kept as plain dicts, written as CSV, JSON and a Markdown summary.

Four tables, each with the algorithm and seed on every row: ``runs`` (the
training run: decisions, wall seconds, decisions a second, peak memory, the
exact command), ``curves`` (each snapshot against each curve opponent),
``final`` (the benchmark rows of the last snapshot) and ``exploitability``.
The summary gives, per algorithm, the mean over seeds and the range
(lowest to highest seed).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..benchmark import strict_json

TABLES = ("runs", "curves", "final", "exploitability")


@dataclass
class Results:
    command: str | list[str]  # a list for results combined from runs made apart
    settings: dict
    runs: list[dict] = field(default_factory=list)
    curves: list[dict] = field(default_factory=list)
    final: list[dict] = field(default_factory=list)
    exploitability: list[dict] = field(default_factory=list)

    def write(self, out: Path) -> list[Path]:
        """``TABLE.csv`` for each table, ``baselines.json`` with all of them, ``summary.md``; the paths."""
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for name in TABLES:
            paths.append(out / f"{name}.csv")
            paths[-1].write_text(to_csv(getattr(self, name)), encoding="utf-8")
        everything = {"command": self.command, "settings": self.settings, **{n: getattr(self, n) for n in TABLES}}
        paths.append(out / "baselines.json")
        paths[-1].write_text(json.dumps(strict_json(everything), indent=2, allow_nan=False) + "\n", encoding="utf-8")
        paths.append(out / "summary.md")
        paths[-1].write_text(self.markdown(), encoding="utf-8")
        return paths

    def markdown(self) -> str:
        algorithms = list(dict.fromkeys(r["algorithm"] for r in self.runs))
        opponents = list(dict.fromkeys(r["opponent"] for r in self.final))
        commands = as_commands(self.command)
        said = (
            [f"Command: `{commands[0]}`"] if len(commands) == 1 else ["Commands:", ""] + [f"- `{c}`" for c in commands]
        )
        lines = ["# Baselines", "", *said, "",
                 "Mean over seeds, [lowest, highest seed] after it. WP: win rate of the final agent against each "
                 "ladder opponent (two-player pagat, held-out seeds). Exploitability: the attacker's win rate "
                 "against the final agent.", "",
                 "| Algorithm | Seeds | Decisions | Wall s | Decisions/s | Peak MB | "
                 + " | ".join(f"WP vs {o}" for o in opponents) + " | Best response | Exploiter |",
                 "|---" * (8 + len(opponents)) + "|"]  # fmt: skip
        for a in algorithms:
            runs = [r for r in self.runs if r["algorithm"] == a]
            cells = [a, str(len(runs)), _spread([r["decisions"] for r in runs], "{:,.0f}"),
                     _spread([r["seconds"] for r in runs], "{:,.0f}"), _spread([r["decisions_per_s"] for r in runs], "{:,.0f}"),
                     _spread([r["peak_mb"] for r in runs], "{:,.0f}")]  # fmt: skip
            for o in opponents:
                cells.append(
                    _spread([r["win_rate"] for r in self.final if (r["algorithm"], r["opponent"]) == (a, o)], "{:.1%}")
                )
            for method in ("best_response", "exploiter"):
                found = [r["win_rate"] for r in self.exploitability if (r["algorithm"], r["method"]) == (a, method)]
                cells.append(_spread(found, "{:.1%}"))
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", "Training commands (one per run):", ""]
        lines += [f"- {r['algorithm']} seed {r['seed']}: `{r['command']}`" for r in self.runs]
        return "\n".join(lines) + "\n"


def _spread(values: Sequence[float], fmt: str) -> str:
    """``mean [low, high]`` of ``values`` (just the value for one, ``-`` for none)."""
    values = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not values:
        return "-"
    mean = sum(values) / len(values)
    if len(values) == 1:
        return fmt.format(mean)
    return f"{fmt.format(mean)} [{fmt.format(min(values))}, {fmt.format(max(values))}]"


def to_csv(rows: list[dict]) -> str:
    fields = list(dict.fromkeys(key for row in rows for key in row))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def as_commands(command: str | list[str]) -> list[str]:
    """The command of one run's results, or the commands of combined ones, as a list."""
    return command if isinstance(command, list) else [command]


def read_results(out: Path) -> dict:
    """``baselines.json`` of ``out``, as written."""
    return json.loads((Path(out) / "baselines.json").read_text(encoding="utf-8"))


def _measured_by(settings: dict) -> dict:
    """The settings that parts combined must share: not the algorithms and seeds each chose, nor the harness's
    worker count, on which no figure depends."""
    shared = {k: v for k, v in settings.items() if k not in ("algorithms", "seeds")}
    if "evaluation" in shared:
        shared["evaluation"] = {k: v for k, v in shared["evaluation"].items() if k != "workers"}
    return shared


def combine(parts: Sequence[dict]) -> Results:
    """One set of results from runs made apart (each with its own ``--out``); ValueError unless measured alike."""
    if not parts:
        raise ValueError("nothing to combine; allowed: one or more folders with a baselines.json")
    first = _measured_by(parts[0]["settings"])
    combined = Results([], {**first, "seeds": [], "algorithms": {}})
    seen = set()
    for part in parts:
        settings = _measured_by(part["settings"])
        differ = sorted(k for k in first.keys() | settings.keys() if first.get(k) != settings.get(k))
        if differ:
            raise ValueError(
                f"{part['command']!r} was measured with other settings ({', '.join(differ)}) than "
                f"{parts[0]['command']!r}; allowed: runs with the same budget, points, threads and evaluation"
            )
        runs = {(r["algorithm"], r["seed"]) for r in part["runs"]}
        if runs & seen:
            twice = ", ".join(f"{a} seed {s}" for a, s in sorted(runs & seen))
            raise ValueError(f"{twice} appear in more than one of the results; allowed: each run once")
        seen |= runs
        combined.command += as_commands(part["command"])
        combined.settings["algorithms"].update(part["settings"].get("algorithms", {}))
        combined.settings["seeds"] = sorted({*combined.settings["seeds"], *part["settings"].get("seeds", [])})
        for name in TABLES:
            getattr(combined, name).extend(part[name])
    return combined
