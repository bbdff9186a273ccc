"""Proximal policy optimisation over variable action sets.

Each decision keeps only the feature rows of its legal actions (a few to
twenty of the 114), stored flat. A minibatch scores its decisions' rows in
one pass of the shared head, then scatters the scores into a table padded to
its widest decision, so the softmax runs over the legal actions only and no
network work is spent on illegal ones. Advantages come from GAE over each
seat's decisions in a match, with the centralised critic's values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from agents.policy_net import NEG, PolicyNet

from .rollout import Batch


@dataclass
class Tensors:
    """A batch as tensors: the flat legal rows, and where each decision's rows start."""

    obs: torch.Tensor  # [N, 192] int8
    state: torch.Tensor  # [N, 302] int8
    rows: torch.Tensor  # [M, K] int8
    start: torch.Tensor  # [N] first row of each decision
    width: torch.Tensor  # [N] legal actions per decision
    chosen: torch.Tensor
    logp: torch.Tensor
    adv: torch.Tensor | None = None
    ret: torch.Tensor | None = None

    def __len__(self) -> int:
        return self.obs.shape[0]


def to_tensors(batch: Batch, device: torch.device) -> Tensors:
    start = np.cumsum(batch.width) - batch.width

    def t(x: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(x)).to(device)

    return Tensors(
        obs=t(batch.obs),
        state=t(batch.state),
        rows=t(batch.rows),
        start=t(start),
        width=t(batch.width),
        chosen=t(batch.chosen),
        logp=t(batch.logp),
    )


Index = torch.Tensor | slice  # decisions: their indices, or a run of them (see :func:`reorder`)


def legal_rows(data: Tensors, idx: Index) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """For the legal actions of decisions ``idx``, decision by decision: (decision in ``idx``, position, flat row)."""
    width = data.width[idx]
    owner = torch.repeat_interleave(torch.arange(len(width), device=width.device), width)
    first = torch.cumsum(width, 0) - width
    pos = torch.arange(len(owner), device=width.device) - first[owner]
    return owner, pos, data.start[idx][owner] + pos


def reorder(data: Tensors, order: torch.Tensor) -> Tensors:
    """The decisions in ``order``, each with its rows, advantage and return: a shuffled epoch's minibatches are then
    runs of decisions whose rows lie side by side, read as views instead of gathered one minibatch at a time."""
    _, _, flat = legal_rows(data, order)
    width = data.width[order]

    def pick(x: torch.Tensor | None) -> torch.Tensor | None:
        return None if x is None else x.index_select(0, order)

    return Tensors(
        obs=pick(data.obs),
        state=pick(data.state),
        rows=data.rows.index_select(0, flat),
        start=torch.cumsum(width, 0) - width,
        width=width,
        chosen=pick(data.chosen),
        logp=pick(data.logp),
        adv=pick(data.adv),
        ret=pick(data.ret),
    )


def policy_logits(net: PolicyNet, data: Tensors, idx: Index) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits [B, Kmax] of the decisions ``idx`` over their legal actions (padding at NEG), and the padding mask."""
    width = data.width[idx]
    owner, pos, flat = legal_rows(data, idx)
    if isinstance(idx, slice):  # a run of decisions: their rows are one run too
        rows = data.rows[int(flat[0]) : int(flat[-1]) + 1] if len(flat) else data.rows[:0]
    else:
        rows = data.rows[flat]
    scores = net.score_rows(net.embed(data.obs[idx])[owner], rows)
    k = int(width.max())
    logits = torch.full((len(width), k), NEG, dtype=scores.dtype, device=scores.device)
    logits = logits.index_put((owner, pos), scores)
    mask = torch.arange(k, device=width.device)[None, :] < width[:, None]
    return logits, mask


@torch.no_grad()
def critic_values(net: PolicyNet, data: Tensors, chunk: int = 8192) -> np.ndarray:
    """The critic's values of every decision, computed in large batches after the rollout."""
    out = [net.value(data.state[i : i + chunk]) for i in range(0, len(data), chunk)]
    return torch.cat(out).cpu().numpy().astype(np.float64)


def advantages(batch: Batch, value: np.ndarray, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """GAE advantages and value targets; every seat's chain of decisions ends with its match."""
    reward = np.asarray(batch.reward, dtype=np.float64)
    nxt = batch.next
    n = len(reward)
    value_ext = np.append(value, 0.0)
    follow = np.where(nxt >= 0, nxt, n)  # n: past a chain's last decision (value 0, advantage 0)
    delta = reward + gamma * value_ext[follow] - value
    # Every decision's successor comes later in the batch, so one backward pass sees it first.
    decay = gamma * lam
    out = [0.0] * (n + 1)
    d, f = delta.tolist(), follow.tolist()
    for i in range(n - 1, -1, -1):
        out[i] = d[i] + decay * out[f[i]]
    adv = np.array(out[:n])
    return adv.astype(np.float32), (adv + value).astype(np.float32)


def losses(net: PolicyNet, data: Tensors, idx: Index, clip: float) -> dict[str, torch.Tensor]:
    """The PPO losses of the decisions ``idx``."""
    logits, mask = policy_logits(net, data, idx)
    logp_all = torch.log_softmax(logits, dim=-1)
    logp = logp_all.gather(1, data.chosen[idx, None]).squeeze(1)
    probs = logp_all.exp()
    entropy = -(probs * logp_all.masked_fill(~mask, 0.0)).sum(-1).mean()
    adv = data.adv[idx]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8) if len(adv) > 1 else adv
    ratio = torch.exp(logp - data.logp[idx])
    policy = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
    value = 0.5 * (net.value(data.state[idx]) - data.ret[idx]).pow(2).mean()
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
        shuffled = reorder(data, torch.randperm(n, generator=generator).to(data.obs.device))
        for start in range(0, n, tc["minibatch"]):
            terms = losses(net, shuffled, slice(start, start + tc["minibatch"]), tc["clip"])
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
