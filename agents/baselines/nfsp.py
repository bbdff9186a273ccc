"""RLCard's NFSP on :class:`agents.rlcard_env.AllFivesRLCardEnv`, self-play: one NFSP agent per seat.

Why NFSP as the sixth algorithm: every other one here learns a best reply
to whatever it meets (itself, or the bots); Neural Fictitious Self-Play
comes from game theory instead. Each seat keeps a DQN best response to the
others' average play and a supervised network of its own average play, and
in two-player zero-sum games that average approaches a Nash equilibrium, so
its exploitability (which the baselines measure) is the figure it aims at.
CFR, the other game-theoretic family RLCard has, walks the whole game tree
and does not scale to a domino match.

The loop is RLCard's own: each episode every agent samples its policy
(``sample_episode_policy``), ``env.run(is_training=True)`` plays a match,
``reorganize`` turns it into transitions and each seat's agent is fed its
own. NFSP's defaults, with the hidden layers RLCard's examples use ([64, 64]
for both networks; the class has none). A decision is one env step of either
seat (``env.timestep``). NFSP prints two loss lines at every step it
learns, about 70 bytes a decision; they go nowhere, not into the run's log.

A run can be stopped and resumed (``--resume``): each snapshot leaves beside
it the whole training state, both agents with their networks, optimizers and
buffers, the env and every random generator, so a resumed run goes on exactly
as the run would have without the stop. The file is a pickle: resume only
runs you made.

Torch runs on one thread: NFSP takes two small optimizer steps for every
decision, and on two threads it ran several times slower when other runs
shared the cores (on the 2-core machine, beside a DMC run: 97 decisions a
second on one thread, 11 on two).
"""

from __future__ import annotations

import contextlib
import lzma
import os
import pickle
import random
from pathlib import Path

import numpy as np
import torch
from rlcard.agents import NFSPAgent
from rlcard.utils import reorganize

from ..rlcard_agent import NFSP_FORMAT
from ..rlcard_env import AllFivesRLCardEnv
from .job import Job, Recorder, ResumeError

LAYERS = [64, 64]

SETTINGS = {
    "env": "AllFivesRLCardEnv({'seed': SEED}, auto_forced=True)",
    "hidden_layers_sizes": "64, 64 (RLCard's examples)",
    "q_mlp_layers": "64, 64 (RLCard's examples)",
    "torch threads": "1",
}


STATE_SUFFIX = ".state.xz"


def train(job: Job, recorder: Recorder) -> int:
    torch.set_num_threads(1)
    if recorder.last is None:
        torch.manual_seed(job.seed)
        np.random.seed(job.seed)  # NFSP samples its policies and actions from numpy's global generator
        random.seed(job.seed)  # and its buffers' minibatches from Python's
        env = AllFivesRLCardEnv({"seed": job.seed}, auto_forced=True)
        agents = [NFSPAgent(num_actions=env.num_actions, state_shape=env.state_shape[0], hidden_layers_sizes=LAYERS,
                            q_mlp_layers=LAYERS, device=torch.device("cpu")) for _ in range(env.num_players)]  # fmt: skip
        env.set_agents(agents)
    else:
        env = load_state(recorder.path(recorder.last.decisions, STATE_SUFFIX), recorder.last.decisions)
        agents = env.agents
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):  # two loss lines a decision
        while not recorder.finished(env.timestep):
            for agent in agents:
                agent.sample_episode_policy()
            trajectories, payoffs = env.run(is_training=True)
            for agent, transitions in zip(agents, reorganize(trajectories, payoffs), strict=True):
                for transition in transitions:
                    agent.feed(transition)
            if recorder.due(env.timestep) or recorder.finished(env.timestep):
                path = recorder.path(env.timestep, ".pt")
                torch.save({"format": NFSP_FORMAT, "mlp_layers": agents[0].policy_network.mlp_layers,
                            "seats": [agent.policy_network.state_dict() for agent in agents]}, path)  # fmt: skip
                save_state(recorder.path(env.timestep, STATE_SUFFIX), env)
                recorder.save(env.timestep, f"nfsp:{path}")
                for older in path.parent.glob(f"*{STATE_SUFFIX}"):  # the run goes on from its last snapshot only
                    if older.name != path.with_suffix(STATE_SUFFIX).name:
                        older.unlink()
    return env.timestep


def save_state(path: Path, env: AllFivesRLCardEnv) -> None:
    """Everything the run goes on from: the env with its agents, and every random generator the loop draws from.

    Each DQN's schedule of exploration rates (a million floats, rebuilt from its ends) is left out.
    """
    dqns = [agent._rl_agent for agent in env.agents]
    schedules = [dqn.epsilons for dqn in dqns]
    for dqn in dqns:
        dqn.epsilons = None
    try:
        state = {"decisions": env.timestep, "env": env, "schedules": [(e[0], e[-1], len(e)) for e in schedules],
                 "numpy": np.random.get_state(), "python": random.getstate(), "torch": torch.get_rng_state()}  # fmt: skip
        blob = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        for dqn, schedule in zip(dqns, schedules, strict=True):
            dqn.epsilons = schedule
    partial = path.with_name(path.name + ".partial")
    with lzma.open(partial, "wb", preset=1) as out:
        out.write(blob)
    partial.replace(path)  # a stop while writing leaves the last whole state


def load_state(path: Path, decisions: int) -> AllFivesRLCardEnv:
    """The env (with its agents) saved at ``decisions``, every random generator set back as it was then."""
    try:
        with lzma.open(path, "rb") as saved:
            state = pickle.load(saved)
    except (OSError, EOFError, lzma.LZMAError, pickle.UnpicklingError) as err:
        raise ResumeError(f"{path}: no readable training state to resume from ({err})") from None
    if state.get("decisions") != decisions:
        raise ResumeError(f"{path}: saved at {state.get('decisions')} decisions, not {decisions}")
    env = state["env"]
    for agent, (first, last, count) in zip(env.agents, state["schedules"], strict=True):
        agent._rl_agent.epsilons = np.linspace(first, last, count)
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    return env
