"""An optional warm start: learn from a baseline bot's matches before self-play begins.

The teacher bot plays every seat of ``imitation.matches`` matches; each of
its decisions is recorded with the same inputs the network sees (the engine's
observation, action features and state). What the actor learns depends on
``imitation.target``:

- ``choice``: to pick the teacher's action (cross-entropy over the legal actions);
- ``playouts``: the value of every legal action, each from one play-out of
  the round on the true deal with the search's rollout policy. Each action's
  score is fit to its value minus the mean over the decision's legal
  actions, in units of ``imitation.value_scale`` points, so the softmax over
  the scores prefers actions by how much better they play out. One deal is a
  noisy label, but over many decisions the true deals sample what the seat
  cannot see, so the policy learns what the search would find with unlimited
  deals: a stronger teacher than any bot's single choice, at one play-out per
  action.

In both, the critic learns the discounted returns of those matches, so PPO
starts from a sensible policy with a critic that already knows the game.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from agents.policy_net import PolicyNet
from agents.registry import make_agent
from allfives_env.core import Rules

from .ppo import Tensors, advantages, legal_rows, policy_logits, to_tensors
from .rollout import Batch, MatchSpec, Teacher

#: The teacher's matches are played in this many parts, so that the warm start can show its progress.
PARTS = 20


def teacher_specs(rules: Rules, teacher: str, matches: int, rng, playouts: bool = False) -> list[MatchSpec]:
    specs = []
    for _ in range(matches):
        seed, sample_seed = rng.randrange(2**62), rng.randrange(2**62)
        controls = [Teacher(make_agent(teacher, rng.randrange(2**62)), playouts) for _ in range(rules.num_players)]
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
    progress: bool = False,
) -> dict[str, float]:
    """Play the teacher's matches and fit the actor and critic to them; returns loss and agreement.

    With ``progress``, one bar counts the matches played (and labelled) and
    another the fitting's minibatches.
    """
    ic, tc = cfg["imitation"], cfg["train"]
    playouts = ic["target"] == "playouts"
    specs = teacher_specs(rollouts.worker.rules, ic["teacher"], ic["matches"], rng, playouts)
    what = "playing and labelling" if playouts else "playing"
    parts = []
    size = -(-len(specs) // PARTS)
    with tqdm(total=len(specs), unit="match", desc=f"warm start: {what} {ic['teacher']}'s matches",
              disable=not progress, dynamic_ncols=True) as bar:  # fmt: skip
        for start in range(0, len(specs), size):
            parts.append(rollouts.play(specs[start : start + size], net)[0])
            bar.update(len(specs[start : start + size]))
    batch = Batch.concat(parts)
    data = to_tensors(batch, device)
    _, ret = advantages(batch, np.zeros(len(batch)), tc["gamma"], 1.0)  # discounted returns
    data.ret = torch.from_numpy(ret).to(device)
    values = torch.from_numpy(batch.values / ic["value_scale"]).to(device) if playouts else None
    huber = ic["huber"] / ic["value_scale"]  # in the scores' units
    stats = {}
    steps = -(-len(data) // ic["minibatch"])
    bar = tqdm(total=ic["epochs"] * steps, unit="step", desc=f"warm start: fitting {len(data):,} decisions",
               disable=not progress, dynamic_ncols=True)  # fmt: skip
    for _ in range(ic["epochs"]):
        order = torch.randperm(len(data), generator=generator).to(device)
        for start in range(0, len(data), ic["minibatch"]):
            idx = order[start : start + ic["minibatch"]]
            loss, agree = _loss(net, data, idx, tc["value_coef"], values, huber)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), tc["max_grad_norm"])
            optimizer.step()
            stats = {"imitation_loss": float(loss.detach()), "imitation_agreement": agree}
            bar.update()
    bar.close()
    with torch.no_grad():
        _, agree = _loss(net, data, torch.arange(len(data), device=device), tc["value_coef"], values, huber)
    stats["imitation_agreement"] = agree
    stats["imitation_decisions"] = len(batch)
    return stats


def _loss(
    net: PolicyNet,
    data: Tensors,
    idx: torch.Tensor,
    value_coef: float,
    values: torch.Tensor | None,
    huber: float = 0.0,
) -> tuple[torch.Tensor, float]:
    """The actor's loss plus the critic's, and the share of decisions where the actor's favourite is the target's.

    With ``huber`` > 0 the actor's error counts squared up to ``huber`` and
    linearly beyond it: near the target one play-out's value swings by the
    match bonus, and squared errors let those few labels' noise steer the fit.
    """
    logits, mask = policy_logits(net, data, idx)
    critic = 0.5 * (net.value(data.state[idx]) - data.ret[idx]).pow(2).mean() if value_coef else 0.0
    if values is None:
        chosen = data.chosen[idx]
        agree = float((logits.argmax(-1) == chosen).float().mean())
        return nn.functional.cross_entropy(logits, chosen) + value_coef * critic, agree
    target = torch.zeros_like(logits)
    target[mask] = values[legal_rows(data, idx)[2]]
    width = mask.sum(1, keepdim=True)
    scores = torch.where(mask, logits, 0.0)
    centred = (scores - scores.sum(1, keepdim=True) / width) - (target - target.sum(1, keepdim=True) / width)
    if huber > 0:  # twice torch's Huber loss: equal to the squared error up to ``huber``
        error = 2 * nn.functional.huber_loss(centred, torch.zeros_like(centred), reduction="none", delta=huber)
    else:
        error = centred.pow(2)
    actor = (error * mask).sum() / mask.sum()
    best = target.masked_fill(~mask, -torch.inf).argmax(-1)
    agree = float((logits.argmax(-1) == best).float().mean())
    return actor + value_coef * critic, agree
