"""The leaderboard page's data: the evaluation harness's and the benchmark's results found under a folder.

The harness writes ``results.md`` (its title names the line-up, the rules and
the seed) and ``results.csv`` into its ``--out`` folder; from the title the
command that reproduces the table is written back out. A benchmark's
``LEADERBOARD.md`` or ``benchmark.md`` is passed on as its Markdown text, which
holds its own command.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shlex

MARKDOWN_FILES = ("LEADERBOARD.md", "benchmark.md")
MAX_FILE_BYTES = 500_000
MAX_TABLES = 200

_TITLE = re.compile(
    r"Duplicate evaluation: (?P<lineup>.+?) \((?P<rules>pagat|fives), (?P<players>\d) players"
    r"(?P<partners>, partnerships)?, target (?P<target>[\d.]+)(?:, opening (?P<opening>\w+))?\); "
    r"(?P<matches>\d+) duplicate matches.*?; seed (?P<seed>-?\d+)"
)


def evaluate_command(title: str) -> str | None:
    """The ``python -m agents.evaluate`` command that plays the evaluation a results title describes."""
    m = _TITLE.search(title)
    if m is None:
        return None
    words = ["python", "-m", "agents.evaluate", *m["lineup"].split(" vs ")]
    words += ["--matches", m["matches"], "--rules", m["rules"], "--players", m["players"]]
    if m["players"] == "4":
        words.append("--partnerships" if m["partners"] else "--no-partnerships")
    words += ["--target", m["target"]]
    if m["opening"]:
        words += ["--opening", m["opening"]]
    words += ["--seed", m["seed"]]
    return " ".join(shlex.quote(w) for w in words)


def _read(path: str) -> str | None:
    try:
        if os.path.getsize(path) > MAX_FILE_BYTES:
            return None
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def _number(text: str):
    try:
        return float(text)
    except ValueError:
        return None


def harness_table(folder: str, rel: str) -> dict | None:
    """One evaluation's rows (from ``results.csv``) with its title and command (from ``results.md``)."""
    text = _read(os.path.join(folder, "results.csv"))
    if text is None:
        return None
    rows = []
    for row in csv.DictReader(io.StringIO(text)):
        rows.append(
            {
                "agent": row.get("agent", ""),
                "games": _number(row.get("games", "")),
                "win_rate": _number(row.get("win_rate", "")),
                "ci_low": _number(row.get("ci_low", "")),
                "ci_high": _number(row.get("ci_high", "")),
                "margin": _number(row.get("margin", "")),
                "margin_half_width": _number(row.get("margin_ci_half_width", "")),
                "ms_per_decision": (_number(row.get("seconds_per_choice", "")) or 0) * 1000,
                "rating": _number(row.get("rating_ordinal", "") or "x"),
            }
        )
    rows.sort(key=lambda r: -(r["win_rate"] or 0))
    title = (_read(os.path.join(folder, "results.md")) or "").split("\n", 1)[0].strip("* ")
    return {"kind": "evaluation", "source": rel, "title": title, "command": evaluate_command(title), "rows": rows}


def find_results(root: str | None, leaderboard: str | None = None) -> list[dict]:
    """The ``leaderboard`` Markdown file if it exists, then every harness evaluation and benchmark
    leaderboard under ``root`` (a few levels deep)."""
    found = []
    shown = os.path.realpath(leaderboard) if leaderboard is not None else None
    if leaderboard is not None and os.path.isfile(leaderboard):
        text = _read(leaderboard)
        if text is not None:
            found.append({"kind": "markdown", "source": os.path.basename(leaderboard), "text": text})
    if root is None or not os.path.isdir(root):
        return found
    root = os.path.realpath(root)
    for top, dirs, files in os.walk(root):
        depth = os.path.relpath(top, root).count(os.sep)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "records") if depth < 3 else []
        rel = os.path.relpath(top, root).replace(os.sep, "/")
        if "results.csv" in files:
            table = harness_table(top, rel)
            if table is not None:
                found.append(table)
        for name in MARKDOWN_FILES:
            if name in files and os.path.realpath(os.path.join(top, name)) != shown:
                text = _read(os.path.join(top, name))
                if text is not None:
                    found.append({"kind": "markdown", "source": f"{rel}/{name}".lstrip("./"), "text": text})
        if len(found) >= MAX_TABLES:
            break
    return found
