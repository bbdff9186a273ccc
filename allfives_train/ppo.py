"""Proximal policy optimisation over variable action sets.

Each decision keeps its own rows of action features (a few to twenty), so a
minibatch pads them to its widest decision and masks the padding. Advantages
come from GAE over each seat's decisions in a match, with the centralised
critic's values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from agents.policy_net import PolicyNet

from .rollout import Batch


@dataclass
class Tensors:
    """A batch as tensors: flat action rows plus a padded index of each decision's rows."""

    states: torch.Tensor  # [N, S]
    hidden: torch.Tensor  # [N, G]
    rows: torch.Tensor  # [M + 1, A]: every action row, then one zero row for padding
    index: torch.Tensor  # [N, Kmax] into rows (M = padding)
    width: torch.Tensor  # [N] legal actions per decision
    chosen: torch.Tensor
    logp: torch.Tensor
    adv: torch.Tensor | None = None
    ret: torch.Tensor | None = None

    def __len__(self) -> int:
        return self.states.shape[0]


def to_tensors(batch: Batch, device: torch.device) -> Tensors:
    widths = np.array([len(a) for a in batch.actions], dtype=np.int64)
    rows = np.concatenate(batch.actions + [np.zeros((1, batch.actions[0].shape[1]), dtype=np.float32)])
    starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    kmax = int(widths.max())
    offsets = np.arange(kmax)
    index = starts[:, None] + offsets[None, :]
    index = np.where(offsets[None, :] < widths[:, None], index, rows.shape[0] - 1)

    def t(x, dtype=None):
        return torch.as_tensor(np.asarray(x), dtype=dtype).to(device)

    return Tensors(
        states=t(np.stack(batch.states)),
        hidden=t(np.stack(batch.hidden)),
        rows=t(rows),
        index=t(index),
        width=t(widths),
        chosen=t(batch.chosen, torch.int64),
        logp=t(batch.logp, torch.float32),
    )


@torch.no_grad()
def critic_values(net: PolicyNet, data: Tensors, chunk: int = 8192) -> np.ndarray:
    """The critic's values of every decision, computed in large batches after the rollout."""
    out = [net.value(data.states[i : i + chunk], data.hidden[i : i + chunk]) for i in range(0, len(data), chunk)]
    return torch.cat(out).cpu().numpy().astype(np.float64)


def advantages(batch: Batch, value: np.ndarray, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """GAE advantages and value targets; every trajectory ends with its match."""
    reward = np.asarray(batch.reward, dtype=np.float64)
    adv = np.zeros_like(reward)
    for steps in batch.trajectories:
        running = 0.0
        next_value = 0.0
        for i in reversed(steps):
            delta = reward[i] + gamma * next_value - value[i]
            running = delta + gamma * lam * running
            adv[i] = running
            next_value = value[i]
    return adv.astype(np.float32), (adv + value).astype(np.float32)


def losses(net: PolicyNet, data: Tensors, idx: torch.Tensor, clip: float) -> dict[str, torch.Tensor]:
    """The PPO losses of the decisions ``idx``."""
    width = data.width[idx]
    k = int(width.max())
    index = data.index[idx, :k]
    mask = torch.arange(k, device=index.device)[None, :] < width[:, None]
    states = data.states[idx]
    logits = net.logits(states, data.rows[index], mask)
    logp_all = torch.log_softmax(logits, dim=-1)
    logp = logp_all.gather(1, data.chosen[idx, None]).squeeze(1)
    probs = logp_all.exp()
    entropy = -(probs * logp_all.masked_fill(~mask, 0.0)).sum(-1).mean()
    adv = data.adv[idx]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8) if len(idx) > 1 else adv
    ratio = torch.exp(logp - data.logp[idx])
    policy = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
    value = 0.5 * (net.value(states, data.hidden[idx]) - data.ret[idx]).pow(2).mean()
    with torch.no_grad():
        kl = (data.logp[idx] - logp).mean()
        clipped = ((ratio - 1).abs() > clip).float().mean()
    return {"policy_loss": policy, "value_loss": value, "entropy": entropy, "approx_kl": kl, "clip_frac": clipped}


def update(
    net: PolicyNet, optimizer: torch.optim.Optimizer, data: Tensors, cfg: dict, generator: torch.Generator
) -> dict[str, float]:
    """Several epochs of minibatch PPO; returns the mean of each loss term."""
    tc = cfg["train"]
    n = len(data)
    sums: dict[str, float] = {}
    count = 0
    for _ in range(tc["epochs"]):
        order = torch.randperm(n, generator=generator).to(data.states.device)
        for start in range(0, n, tc["minibatch"]):
            idx = order[start : start + tc["minibatch"]]
            terms = losses(net, data, idx, tc["clip"])
            loss = terms["policy_loss"] + tc["value_coef"] * terms["value_loss"] - tc["entropy_coef"] * terms["entropy"]
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), tc["max_grad_norm"])
            optimizer.step()
            terms["loss"] = loss
            for key, v in terms.items():
                sums[key] = sums.get(key, 0.0) + float(v.detach())
            count += 1
    return {key: v / count for key, v in sums.items()}
