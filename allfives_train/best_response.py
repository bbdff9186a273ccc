"""Approximate exploitability: train a fresh policy against a frozen agent and see how often it beats it.

    python -m allfives_train.best_response trained --cpu-minutes 10 --baselines heuristic search
    python -m agents.benchmark --best-response trained --baselines heuristic   # the same, from the benchmark

The project's trainer (:class:`~allfives_train.trainer.Trainer`, the default
config with the short warm start of earlier defaults, imitating `heuristic`'s
choices in 600 matches, then PPO) runs with every match of every update
against the frozen agent, on one rollout process and one torch
thread, and stops at the budget (``run.max_minutes`` = ``--cpu-minutes``: one
core busy, so wall minutes are CPU minutes). The policy it reaches then plays
the frozen agent through the harness on held-out seeds; its win rate is a
lower bound on how exploitable the agent is (a stronger learner could only
do better). ``--baselines`` gives the same figure for other agents, trained
and measured the same way, so the figures can be compared.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from agents.evaluation import evaluate
from agents.registry import make_agent

from .config import ConfigError, load_config
from .rollout import CURRENT, MatchSpec
from .trainer import Trainer

#: The harness seed of the measurement when none is given (inside the benchmark's held-out range).
DEFAULT_SEED = 9_000_000_003
DEFAULT_MATCHES = 100
FROZEN = "frozen"  # the opponent label of every training match
#: What the best response changes in the default config: a cheap warm start (the play-out one would take most of a
#: 10-minute budget on one core, and the budget goes to the frozen agent), and the self-play settings its
#: documented figures were measured with (the default's then).
SETTINGS = (
    "imitation.target=choice",
    "imitation.matches=600",
    "imitation.epochs=4",
    "imitation.minibatch=1024",
    "train.total_steps=4000000",
    "train.envs=512",
    "train.minibatch=1024",
    "opponents.snapshot_every=4",
)


class BestResponseTrainer(Trainer):
    """The trainer with every match of every update against one frozen agent."""

    def __init__(self, cfg: dict, run_dir: Path, frozen: str, progress: bool = False) -> None:
        self.frozen_spec = frozen
        self.frozen = make_agent(frozen, cfg["run"]["seed"])  # one instance; each match reseeds it
        super().__init__(cfg, run_dir, progress=progress)

    def _specs(self) -> list[MatchSpec]:
        n, side_of = self.rules.num_players, self.rules.side_of
        specs = []
        for _ in range(self.cfg["train"]["envs"]):
            seed = self.rng.randrange(2**62)
            sample_seed = self.rng.randrange(2**62)
            side = self.rng.randrange(self.rules.num_sides)
            controls = [CURRENT if side_of[s] == side else self.frozen for s in range(n)]
            specs.append(MatchSpec(seed, controls, FROZEN, sample_seed))
        return specs


@dataclass(frozen=True)
class Exploit:
    """One agent's figure: the best response's win rate against it, with its 95% interval."""

    agent: str
    win_rate: float
    ci_low: float
    ci_high: float
    games: int
    trained_steps: int
    cpu_minutes: float


def best_response(
    spec: str,
    out: Path,
    cpu_minutes: float = 10.0,
    matches: int = DEFAULT_MATCHES,
    seed: int = DEFAULT_SEED,
    overrides: list[str] = (),
    workers: int = 1,
) -> Exploit:
    """Train against ``spec`` for ``cpu_minutes`` and measure the result against it (ValueError for bad input)."""
    if not cpu_minutes > 0:
        raise ValueError(f"cpu_minutes={cpu_minutes!r} is not allowed; allowed: a positive number of minutes")
    make_agent(spec, 0)  # a bad spec fails here, before any training
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in spec)
    cfg = load_config(
        None,
        [
            f"run.name={safe}",
            f"run.dir={out}",
            f"run.max_minutes={cpu_minutes}",
            "run.threads=1",
            "run.device=cpu",
            "train.rollout_workers=1",
            "eval.every=0",
            "eval.final_matches=0",
            *SETTINGS,
            *overrides,
        ],
    )
    trainer = BestResponseTrainer(cfg, out / safe, spec)
    try:
        trainer.run()
    finally:
        trainer.close()
    policy = trainer.save_policy()
    result = evaluate([f"checkpoint:{policy}", spec], matches, rules=cfg["game"]["rules"],
                      num_players=cfg["game"]["num_players"], partnerships=cfg["game"]["partnerships"],
                      seed=seed, workers=workers, progress=False)  # fmt: skip
    me = result.agents[0]
    return Exploit(spec, me.win_rate, me.ci_low, me.ci_high, me.games, trainer.steps, cpu_minutes)


def markdown(rows: list[Exploit]) -> str:
    lines = [
        "| Frozen agent | Best response's win rate | 95% CI | Games | Trained decisions | CPU minutes |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r.agent} | {100 * r.win_rate:.1f}% | [{100 * r.ci_low:.1f}%, {100 * r.ci_high:.1f}%] | "
                     f"{r.games} | {r.trained_steps:,} | {r.cpu_minutes:g} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m allfives_train.best_response", description=__doc__.split("\n")[0])
    p.add_argument("spec", metavar="SPEC", help="the frozen agent")
    p.add_argument("--cpu-minutes", type=float, default=10.0, help="training budget per agent (default 10)")
    p.add_argument("--baselines", nargs="*", default=[], help="agents to give the same figure for")
    p.add_argument("--matches", type=int, default=DEFAULT_MATCHES, help="duplicate matches of the measurement")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="harness seed of the measurement")
    p.add_argument("--out", type=Path, default=Path("benchmark"), help="folder for the runs and the tables")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a training config key (e.g. train.envs=64)")  # fmt: skip
    args = p.parse_args(argv)
    rows = []
    try:
        for spec in dict.fromkeys([args.spec, *args.baselines]):
            rows.append(best_response(spec, args.out / "best_response", args.cpu_minutes, args.matches, args.seed,
                                      args.overrides))  # fmt: skip
    except (ValueError, ConfigError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    text = markdown(rows)
    print(text, end="")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "best_response.md").write_text(text, encoding="utf-8")
    (args.out / "best_response.json").write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
