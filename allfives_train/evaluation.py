"""Evaluating the network against the baseline bots.

During training, :func:`quick_eval` plays duplicate matches in one batched
pass (the network's argmax against one bot, every deal played once with the
network's side in each position), which is fast enough to run every few
updates. At the end, :func:`final_eval` hands the saved policy to the
project's evaluation harness (:mod:`agents.evaluation`), which plays it as any
other agent, in worker processes, and writes its tables.
"""

from __future__ import annotations

from pathlib import Path

from agents.evaluation import evaluate, mean_interval
from agents.policy_net import PolicyNet
from agents.registry import make_agent
from agents.seeding import derive_seed
from allfives_env.core import Rules

from .parallel import RolloutPool
from .rollout import CURRENT, MatchSpec


def duplicate_specs(rules: Rules, baseline: str, matches: int, seed: int) -> list[MatchSpec]:
    """Each deal played once with the network's side in each position; the other seats play ``baseline``."""
    specs = []
    for k in range(matches):
        deal_seed = derive_seed(seed, "quick-eval", k)
        for side in range(rules.num_sides):
            controls = [
                CURRENT if rules.side_of[s] == side else make_agent(baseline, derive_seed(seed, baseline, k, side, s))
                for s in range(rules.num_players)
            ]
            specs.append(MatchSpec(deal_seed, controls, baseline, derive_seed(seed, "sample", k, side)))
    return specs


def quick_eval(rollouts: RolloutPool, net: PolicyNet, baseline: str, matches: int, seed: int) -> tuple[float, float]:
    """The network's match win rate against ``baseline`` and the half-width of its 95% interval."""
    specs = duplicate_specs(rollouts.worker.rules, baseline, matches, seed)
    was_training = net.training
    net.eval()
    _, results = rollouts.play(specs, net, None, learn=False)
    net.train(was_training)
    return mean_interval([r for _, r in results])


def lineup_against(spec: str, baseline: str, rules: Rules) -> list[str]:
    """The harness line-up: the policy's side against ``baseline`` in every other seat."""
    if rules.partnerships:
        return [spec, baseline]
    return [spec] + [baseline] * (rules.num_players - 1)


def final_eval(policy: Path, rules: Rules, baselines: list[str], matches: int, seed: int, workers: int, out: Path):
    """Evaluate the saved policy with the harness against each baseline; write its tables, return the summaries.

    Returns (baseline, stats of the policy's entry, harness result) per baseline.
    """
    spec = f"checkpoint:{policy}"
    rows = []
    for baseline in baselines:
        result = evaluate(
            lineup_against(spec, baseline, rules),
            matches,
            rules=rules.rules,
            num_players=rules.num_players,
            partnerships=rules.partnerships,
            target=rules.target,
            opening=rules.opening,
            seed=seed,
            workers=workers,
            progress=True,
        )
        result.write(str(out / f"vs_{baseline}"))
        rows.append((baseline, result.agents[0], result))
    return rows


def eval_table(rows, policy_name: str) -> str:
    """One Markdown table: the policy's win rate and margin against each baseline."""
    lines = [
        f"| {policy_name} vs | Games | Win rate | 95% CI (Wilson) | Margin / match |",
        "|---|---|---|---|---|",
    ]
    for baseline, s, _ in rows:
        lines.append(
            f"| {baseline} | {s.games} | {100 * s.win_rate:.1f}% | [{100 * s.ci_low:.1f}%, {100 * s.ci_high:.1f}%] "
            f"| {s.margin:+.1f} ± {s.margin_half_width:.1f} |"
        )
    return "\n".join(lines) + "\n"
