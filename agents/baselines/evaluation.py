"""How every snapshot is measured, all with the project's own tools on held-out seeds.

- The learning curve: each snapshot against ``random``, ``greedy`` and
  ``heuristic`` through the duplicate harness (:func:`agents.evaluation.evaluate`),
  dealt from the seed of the benchmark's two-player table, so the last
  point meets the same deals as the benchmark row.
- The final row: the last snapshot through :func:`agents.benchmark.run_benchmark`
  against the whole ladder, in the two-player ``pagat`` setting it was
  trained for.
- Exploitability, two ways: the benchmark's ``--best-response`` (a fresh
  policy trained against the frozen agent for some CPU minutes; started as
  its own process, since it trains) and the exact-opponent exploiter
  ``exploit:N:SPEC`` (a search whose play-outs let the agent play its own
  seats) through the harness. Each reports the attacker's win rate: the
  higher, the more exploitable the agent.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..benchmark import BEST_RESPONSE_SEED, HELD_OUT_SEEDS, SETTINGS, run_benchmark
from ..evaluation import evaluate

#: The curve's opponents.
CURVE_OPPONENTS: tuple[str, ...] = ("random", "greedy", "heuristic")
#: The two-player pagat table of the benchmark: its setting and harness seed.
TABLE = SETTINGS[0]
#: The exploiter's harness seed, inside the held-out range and apart from the benchmark's own.
EXPLOIT_SEED = HELD_OUT_SEEDS[4]


@dataclass(frozen=True)
class Budgets:
    """How much evaluation each measurement gets: duplicate matches, play-outs and CPU minutes."""

    curve_matches: int = 100
    bench_matches: int = 100
    exploit_matches: int = 20
    exploit_playouts: int = 200
    best_response_minutes: float = 10.0
    best_response_matches: int = 100
    best_response_overrides: tuple[str, ...] = ()
    workers: int = 2


def curve_rows(spec: str, budgets: Budgets) -> list[dict]:
    """The snapshot ``spec`` against each curve opponent: win rate, its interval and the points margin."""
    rows = []
    for opponent in CURVE_OPPONENTS:
        result = evaluate([spec, opponent], budgets.curve_matches, rules=TABLE.rules, num_players=TABLE.num_players,
                          seed=TABLE.seed, workers=budgets.workers, progress=False)  # fmt: skip
        me = result.agents[0]
        rows.append({"opponent": opponent, "games": me.games, "win_rate": me.win_rate, "ci_low": me.ci_low,
                     "ci_high": me.ci_high, "adp": me.margin})  # fmt: skip
    return rows


def final_rows(spec: str, budgets: Budgets) -> list[dict]:
    """The benchmark's two-player table for ``spec``: one row per ladder opponent."""
    result = run_benchmark([spec], budgets.bench_matches, settings=(TABLE,), workers=budgets.workers)
    return [{"opponent": r.opponent, "games": r.games, "win_rate": r.win_rate, "ci_low": r.wp_low,
             "ci_high": r.wp_high, "adp": r.adp, "ms_per_choice": r.ms_per_choice} for r in result.rows]  # fmt: skip


def exploiter_row(spec: str, budgets: Budgets) -> dict:
    """``exploit:N:SPEC`` against ``spec``: the exploiter's win rate."""
    attacker = f"exploit:{budgets.exploit_playouts}:{spec}"
    result = evaluate([attacker, spec], budgets.exploit_matches, rules=TABLE.rules, num_players=TABLE.num_players,
                      seed=EXPLOIT_SEED, workers=budgets.workers, progress=False)  # fmt: skip
    me = result.agents[0]
    return {"method": "exploiter", "attacker": attacker, "games": me.games, "win_rate": me.win_rate,
            "ci_low": me.ci_low, "ci_high": me.ci_high}  # fmt: skip


def best_response_command(spec: str, out: Path, budgets: Budgets) -> list[str]:
    command = [sys.executable, "-m", "agents.benchmark", "--best-response", spec, "--out", str(out),
               "--cpu-minutes", str(budgets.best_response_minutes), "--matches", str(budgets.best_response_matches)]  # fmt: skip
    for override in budgets.best_response_overrides:
        command += ["--set", override]
    return command


def best_response_row(spec: str, out: Path, budgets: Budgets, log: Path) -> dict:
    """The benchmark's ``--best-response`` for ``spec``, in its own process; RuntimeError if it fails."""
    command = best_response_command(spec, out, budgets)
    with open(log, "w", encoding="utf-8") as f:
        code = subprocess.call(command, stdout=f, stderr=subprocess.STDOUT)
    if code != 0:
        raise RuntimeError(f"the best response to {spec} failed (exit status {code}); see {log}")
    found = json.loads((out / "best_response.json").read_text(encoding="utf-8"))[0]
    return {"method": "best_response", "attacker": f"PPO, {budgets.best_response_minutes:g} CPU minutes",
            "games": found["games"], "win_rate": found["win_rate"], "ci_low": found["ci_low"],
            "ci_high": found["ci_high"], "attacker_seed": BEST_RESPONSE_SEED}  # fmt: skip
