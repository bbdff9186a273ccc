"""An optional warm start: imitate a baseline bot before self-play begins.

The teacher bot plays every seat of ``imitation.matches`` matches; each of
its choices is recorded with the same inputs the network sees (the engine's
observation, action features and state). The actor
learns to pick the teacher's action (cross-entropy over the legal actions)
and the critic learns the discounted returns of those matches, so PPO starts
from a sensible policy with a critic that already knows the game, instead of
spending its first minutes rediscovering "score points now".
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from agents.policy_net import PolicyNet
from agents.registry import make_agent
from allfives_env.core import Rules

from .ppo import Tensors, advantages, policy_logits, to_tensors
from .rollout import MatchSpec, Teacher


def teacher_specs(rules: Rules, teacher: str, matches: int, rng) -> list[MatchSpec]:
    specs = []
    for _ in range(matches):
        seed, sample_seed = rng.randrange(2**62), rng.randrange(2**62)
        controls = [Teacher(make_agent(teacher, rng.randrange(2**62))) for _ in range(rules.num_players)]
        specs.append(MatchSpec(seed, controls, "teacher", sample_seed))
    return specs


def imitate(
    net: PolicyNet,
    optimizer: torch.optim.Optimizer,
    rollouts,
    cfg: dict,
    rng,
    generator: torch.Generator,
    device: torch.device,
) -> dict[str, float]:
    """Play the teacher's matches and fit the actor and critic to them; returns loss and agreement."""
    ic, tc = cfg["imitation"], cfg["train"]
    specs = teacher_specs(rollouts.worker.rules, ic["teacher"], ic["matches"], rng)
    batch, _ = rollouts.play(specs, net)
    data = to_tensors(batch, device)
    _, ret = advantages(batch, np.zeros(len(batch)), tc["gamma"], 1.0)  # discounted returns
    data.ret = torch.from_numpy(ret).to(device)
    stats = {}
    for _ in range(ic["epochs"]):
        order = torch.randperm(len(data), generator=generator).to(device)
        for start in range(0, len(data), ic["minibatch"]):
            idx = order[start : start + ic["minibatch"]]
            loss, agree = _loss(net, data, idx, tc["value_coef"])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), tc["max_grad_norm"])
            optimizer.step()
            stats = {"imitation_loss": float(loss.detach()), "imitation_agreement": agree}
    with torch.no_grad():
        _, agree = _loss(net, data, torch.arange(len(data), device=device), tc["value_coef"])
    stats["imitation_agreement"] = agree
    stats["imitation_decisions"] = len(batch)
    return stats


def _loss(net: PolicyNet, data: Tensors, idx: torch.Tensor, value_coef: float) -> tuple[torch.Tensor, float]:
    logits, _ = policy_logits(net, data, idx)
    chosen = data.chosen[idx]
    cross_entropy = nn.functional.cross_entropy(logits, chosen)
    value = 0.5 * (net.value(data.state[idx]) - data.ret[idx]).pow(2).mean()
    agree = float((logits.argmax(-1) == chosen).float().mean())
    return cross_entropy + value_coef * value, agree
