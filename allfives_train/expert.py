"""Expert iteration: the network learns the action values of the search it guides, then guides the next one.

Policy iteration (:mod:`.iteration`) values each action by one play-out on
the true deal; here the values come from the strongest search, which reads
only the seat's view. A round:

1. the network plays ``expert.matches`` matches against itself, sampling its softmax;
2. at every decision with a choice, the policy-guided search (:mod:`agents.guided_search`),
   the network as its guide and its deals drawn from the belief model, values every legal
   action on ``expert.light`` deals and the network's candidates on ``expert.deep`` more:
   each label is the mean of the search's play-outs on all the deals that action was played on;
3. the network, from where it stands, is fit to the labels of every round so far with the
   warm start's loss (each action's score against its value minus the decision's mean);
4. the fitted network plays and guides the next round.

The search reads the network from a policy file the round writes in the run
directory (``expert/guide<k>.pt``), so the search is the very agent
``search:checkpoint:PATH:belief`` plays. Every match is seeded on its own and
the labels are ordered by match and turn, so a round's labels do not depend
on how many processes made them.
"""

from __future__ import annotations

import multiprocessing
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from agents.belief import shipped_belief
from agents.guided_search import DEFAULT_CANDIDATES, GuidedSearchAgent
from agents.policy_agent import PolicyAgent
from allfives_env.core import State, make_rules
from allfives_env.views.action_features import ACTION_FEATURE_SIZE, action_features
from allfives_env.views.observation import OBSERVATION_SIZE, encode_observation

from .iteration import FIELDS


@dataclass(frozen=True)
class ExpertJob:
    """A shard of a round's matches: the guide's policy file, the table and the matches' seeds."""

    guide: str
    rules: dict  # Rules.as_dict()
    seeds: tuple[int, ...]  # a deal seed per match
    sample_seeds: tuple[int, ...]  # seeds the match's sampling and its search
    light: int
    deep: int
    belief: bool
    network_deals: int = 0


def search_values(search: GuidedSearchAgent, view, light: int, deep: int) -> tuple[list[int], np.ndarray]:
    """The legal actions in id order and each one's mean play-out value: ``light`` deals for every action, and
    ``deep`` more for each of the guide's candidates (the means of the two samples, weighted by their sizes)."""
    legal = sorted(view.legal)
    search.simulations = light * len(legal)
    values = np.array(search.evaluate(view, legal))
    candidates, _ = search.shortlist(view)
    if deep:
        search.simulations = deep * len(candidates)
        for action, value in zip(candidates, search.evaluate(view, candidates), strict=True):
            i = legal.index(action)
            values[i] = (light * values[i] + deep * value) / (light + deep)
    return legal, values


def label_matches(job: ExpertJob) -> dict[str, np.ndarray]:
    """Every decision with a choice of the shard's self-play matches, with the search's value of each action."""
    torch.set_num_threads(1)
    rules = make_rules(**job.rules)
    player = PolicyAgent(job.guide, sample=True)
    belief = shipped_belief() if job.belief else None
    search = GuidedSearchAgent(
        job.guide, candidates=DEFAULT_CANDIDATES, belief=belief, network_deals=job.network_deals
    )  # the candidates the rounds were measured with, with or without the network's play-outs
    found: dict[str, list] = {k: [] for k in FIELDS}
    for seed, sample_seed in zip(job.seeds, job.sample_seeds, strict=True):
        player.reset(sample_seed)
        search.reset(sample_seed + 1)
        state = State(rules, seed=seed)
        while not state.finished:
            view = state.view(state.to_act)
            if len(view.legal) > 1:
                legal, values = search_values(search, view, job.light, job.deep)
                found["obs"].append(encode_observation(view)[None])
                found["rows"].append(action_features(view)[legal])
                found["width"].append(np.array([len(legal)]))
                found["values"].append(values.astype(np.float32))
            state.apply(player.act(view))
    if not found["width"]:
        return {"obs": np.zeros((0, OBSERVATION_SIZE), np.int8), "rows": np.zeros((0, ACTION_FEATURE_SIZE), np.int8),
                "width": np.zeros(0, np.int64), "values": np.zeros(0, np.float32)}  # fmt: skip
    return {k: np.concatenate(v) for k, v in found.items()}


def label_round(
    guide: Path,
    rules: dict,
    seeds: list[int],
    sample_seeds: list[int],
    workers: int,
    light: int,
    deep: int,
    belief: bool = True,
    network_deals: int = 0,
) -> dict[str, np.ndarray]:
    """A round's labels, its matches dealt in turn to ``workers`` processes (1: this one), in match order."""
    jobs = [
        ExpertJob(str(guide), rules, (seed,), (sample,), light, deep, belief, network_deals)
        for seed, sample in zip(seeds, sample_seeds, strict=True)
    ]
    if workers == 1:
        parts = [label_matches(job) for job in jobs]
    else:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            parts = pool.map(label_matches, jobs, chunksize=max(1, len(jobs) // (8 * workers)))
    return {k: np.concatenate([p[k] for p in parts]) for k in FIELDS}
