"""Stateful fuzzing of the environments: random call sequences, good and bad, against what they promise.

Hypothesis drives the PettingZoo environment (``raw_env`` and ``env()``) and
the Gymnasium environment through resets with and without seeds and deal
options (good and bad), legal, illegal, non-integer and dead steps,
``observe``, ``state()``, copies mid-episode (deep copies and pickles, which
must then play on exactly as the original), records (which must replay to the
same scores) and calls before the first reset. Every refused call is checked
against a full snapshot: it must change nothing. The Gymnasium machine also
plays against an opponent that raises now and then: the step is put back and
its retry plays exactly as an environment whose opponent never raised.

The default budget keeps each machine to a few seconds;
``ALLFIVES_FUZZ_EXAMPLES=300 python -m pytest tests/test_fuzz_envs.py`` runs
a longer search by hand.
"""

from __future__ import annotations

import copy
import json
import os
import pickle
import warnings

import gymnasium
import numpy as np
import pytest
from conftest import snapshot
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from test_hardening_env import aec_snapshot, gym_snapshot, play_aec

from allfives_env.aec_env import env, raw_env
from allfives_env.core import IllegalActionError, State
from allfives_env.core.deal import seeded_deal
from allfives_env.core.record import load_record, replay
from allfives_env.gym_env import AllFivesSingleAgentEnv
from allfives_env.options import MAX_SEED

EXAMPLES = int(os.environ.get("ALLFIVES_FUZZ_EXAMPLES", "20"))
FUZZ = settings(
    max_examples=EXAMPLES,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)

SETTINGS = [
    {"num_players": 2},
    {"num_players": 3, "target": 60},
    {"num_players": 4, "partnerships": True, "target": 60},
    {"num_players": 2, "rules": "fives", "opening": "descending", "target": 40},
    {"num_players": 3, "rules": "fives", "target": 40},
    {"num_players": 4, "rules": "fives", "partnerships": False, "target": 40},
]
OPTIONS = st.fixed_dictionaries(
    {
        "reward": st.sampled_from(["win_loss", "points"]),
        "episode": st.sampled_from(["match", "round"]),
        "auto_forced": st.booleans(),
        "history": st.booleans(),
    }
)
GOOD_SEEDS = st.one_of(st.none(), st.integers(0, 1000), st.just(MAX_SEED), st.integers(0, MAX_SEED))


class Huge(int):
    """An integer too long for ``repr`` (Python refuses more than 4300 digits), shown by its size."""

    def __repr__(self) -> str:
        return f"Huge(<{self.bit_length()} bits>)"


BAD_SEEDS = st.sampled_from([-1, MAX_SEED + 1, Huge(10**5000), 1.5, True, np.bool_(False), "3", [1]])
NON_INTEGERS = st.sampled_from([5.0, np.float64(1.0), True, False, np.bool_(True), "4", [4], np.array([4]), 2.5])


def good_deal(rules, seed: int) -> dict:
    return seeded_deal(rules, seed, 0, None).to_json()


def bad_deal(rules, seed: int, how: str):
    deal = good_deal(rules, seed)
    if how == "twice":
        deal["hands"][0][0] = deal["hands"][1][0]
    elif how == "short":
        deal["hands"][-1].pop()
    elif how == "leader":
        deal["leader"] = rules.num_players
    elif how == "tile":
        deal["boneyard"].append("9-9") if deal["boneyard"] else deal["hands"][0].append("9-9")
    elif how == "type":
        deal["hands"] = "3-4 5-6"
    else:
        deal = ["not", "a", "deal"]
    return deal


BAD_DEAL_KINDS = st.sampled_from(["twice", "short", "leader", "tile", "type", "list"])


def core_of(e) -> State:
    return e.unwrapped.core_state


# -- the PettingZoo environment ------------------------------------------------------------------


class AECMachine(RuleBasedStateMachine):
    """``raw_env`` or ``env()`` under random calls."""

    @initialize(setting=st.sampled_from(SETTINGS), options=OPTIONS, wrapped=st.booleans(), entropy=st.integers(0, 99))
    def make(self, setting, options, wrapped, entropy):
        self.wrapped = wrapped
        self.env = (env if wrapped else raw_env)(**setting, **options)
        # An unseeded first reset draws fresh entropy; a drawn first seed keeps hypothesis's runs repeatable.
        self.env.unwrapped._first_seed = entropy
        self.rules = self.env.unwrapped.game_rules
        self.has_reset = False

    # -- resets ---------------------------------------------------------------------------

    @rule(seed=GOOD_SEEDS, deal=st.one_of(st.none(), st.integers(0, 10_000)))
    def reset(self, seed, deal):
        options = None if deal is None else {"deal": good_deal(self.rules, deal)}
        self.env.reset(seed=seed, options=options)
        self.has_reset = True
        state = core_of(self.env)
        if seed is not None and deal is None:
            assert state.deal == State(self.rules, seed=seed).deal or state.round_index > 0
        if deal is not None and state.round_index == 0:
            assert state.deal.to_json() == options["deal"]

    @rule(seed=st.one_of(GOOD_SEEDS, BAD_SEEDS), deal_seed=st.integers(0, 1000), how=BAD_DEAL_KINDS, bad_seed=BAD_SEEDS)
    def refused_reset(self, seed, deal_seed, how, bad_seed):
        before = aec_snapshot(self.env)
        with pytest.raises(ValueError):
            self.env.reset(seed=seed, options={"deal": bad_deal(self.rules, deal_seed, how)})
        with pytest.raises(ValueError, match="seed"):
            self.env.reset(seed=bad_seed)
        assert aec_snapshot(self.env) == before

    # -- steps ----------------------------------------------------------------------------

    @precondition(lambda self: self.has_reset and self.env.agents)
    @rule(data=st.data(), kind=st.sampled_from([int, np.int64, np.int16, np.array]))
    def step_legal(self, data, kind):
        obs, _, terminated, truncated, _ = self.env.last()
        if terminated or truncated:
            self.env.step(None)
            return
        legal = [int(a) for a in np.flatnonzero(obs["action_mask"])]
        assert legal == core_of(self.env).legal_actions()
        scores = list(core_of(self.env).scores)
        self.env.step(kind(data.draw(st.sampled_from(legal))))
        if self.env.unwrapped.reward_mode == "points" and core_of(self.env).scores != scores:
            assert abs(sum(self.env.rewards.values())) < 1e-9

    @precondition(lambda self: self.has_reset and self.env.agents)
    @rule(data=st.data())
    def step_illegal(self, data):
        obs, _, terminated, truncated, _ = self.env.last()
        if terminated or truncated:
            return
        illegal = data.draw(st.sampled_from([int(a) for a in np.flatnonzero(obs["action_mask"] == 0)]))
        if not self.wrapped:
            before = aec_snapshot(self.env)
            with pytest.raises(IllegalActionError):
                self.env.step(illegal)
            assert aec_snapshot(self.env) == before
            return
        core_before = snapshot(core_of(self.env))
        agent = self.env.agent_selection
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.env.step(illegal)
        assert all(self.env.terminations.values()) and all(self.env.truncations.values())
        assert self.env.rewards[agent] == -1
        assert snapshot(core_of(self.env)) == core_before

    @precondition(lambda self: self.has_reset and self.env.agents)
    @rule(value=NON_INTEGERS)
    def step_non_integer(self, value):
        _, _, terminated, truncated, _ = self.env.last()
        if terminated or truncated:
            return
        before = aec_snapshot(self.env)
        with pytest.raises(AssertionError if self.wrapped else IllegalActionError):
            self.env.step(value)
        assert aec_snapshot(self.env) == before

    # -- reading --------------------------------------------------------------------------

    @precondition(lambda self: self.has_reset)
    @rule(data=st.data())
    def observe(self, data):
        agent = data.draw(st.sampled_from(self.env.possible_agents))
        obs = self.env.observe(agent)
        assert self.env.observation_space(agent).contains(obs)
        state = core_of(self.env)
        acting = self.env.possible_agents[state.to_act] == agent and not state.finished
        assert list(np.flatnonzero(obs["action_mask"])) == (state.legal_actions() if acting else [])

    @precondition(lambda self: self.has_reset)
    @rule()
    def global_state(self):
        assert self.env.unwrapped.state_space.contains(self.env.state())

    @precondition(lambda self: self.has_reset)
    @rule()
    def record_replays(self):
        record = self.env.unwrapped.record(agents=["fuzz"] * self.rules.num_players)
        result = replay(load_record(json.dumps(record)))
        assert result.state.scores == core_of(self.env).scores
        if self.env.unwrapped.episode == "match":
            assert result.state.finished == core_of(self.env).finished

    @precondition(lambda self: self.has_reset)
    @rule(how=st.sampled_from(["deepcopy", "pickle"]), chooser=st.integers(0, 1000), steps=st.integers(1, 40))
    def copy_plays_on_identically(self, how, chooser, steps):
        twin = copy.deepcopy(self.env) if how == "deepcopy" else pickle.loads(pickle.dumps(self.env))
        assert aec_snapshot(twin) == aec_snapshot(self.env)
        assert play_aec(twin, chooser, steps) == play_aec(self.env, chooser, steps)
        assert aec_snapshot(twin) == aec_snapshot(self.env)

    @precondition(lambda self: not self.has_reset)
    @rule(call=st.sampled_from(["step", "observe", "last", "state", "record"]))
    def call_before_reset(self, call):
        before = aec_snapshot(self.env)
        calls = {
            "step": lambda: self.env.step(0),
            "observe": lambda: self.env.observe("player_0"),
            "last": lambda: self.env.last(),
            "state": lambda: self.env.state(),
            "record": lambda: self.env.unwrapped.record(),
        }
        expected = (RuntimeError, AttributeError, AssertionError) if self.wrapped else RuntimeError
        with pytest.raises(expected):
            calls[call]()
        assert aec_snapshot(self.env) == before

    @invariant()
    def consistent(self):
        raw = self.env.unwrapped
        if not self.has_reset:
            assert raw._state is None
            return
        if raw.agents and not all(raw.terminations.values()):
            assert raw.agent_selection == raw.possible_agents[raw.core_state.to_act]


# -- the Gymnasium environment ---------------------------------------------------------------------


class Flaky(Exception):
    pass


class FlakyOpponent:
    """A deterministic callable opponent that raises on every fifth call while ``failing``, then keeps quiet
    for 30 calls (more than one step needs), so that a retried call gets through."""

    def __init__(self) -> None:
        self.calls = 0
        self.quiet = 0
        self.failing = True

    def __call__(self, observation, mask) -> int:
        self.calls += 1
        if self.quiet:
            self.quiet -= 1
        elif self.failing and self.calls % 5 == 0:
            self.quiet = 30
            raise Flaky("opponent failure")
        legal = np.flatnonzero(mask)
        return int(legal[int(observation.sum()) % len(legal)])


def steady_twin(e: AllFivesSingleAgentEnv) -> AllFivesSingleAgentEnv:
    twin = copy.deepcopy(e)
    for seat in twin.seats:
        if isinstance(getattr(seat, "policy", None), FlakyOpponent):
            seat.policy.failing = False
    return twin


def retried(call, e: AllFivesSingleAgentEnv):
    """``call()``, retried while the flaky opponent raises; each failure must leave ``e`` unchanged."""
    for _ in range(10):
        before = gym_snapshot(e)
        try:
            return call()
        except Flaky:
            assert gym_snapshot(e) == before
    raise AssertionError("the flaky opponent never let the call through")


def same_result(a: tuple, b: tuple) -> None:
    """Two ``reset`` or ``step`` results are the same: observations by content, the rest by value."""
    assert len(a) == len(b) and a[0].keys() == b[0].keys()
    for key in a[0]:
        assert np.array_equal(a[0][key], b[0][key]), key
    assert a[1:] == b[1:]


class GymMachine(RuleBasedStateMachine):
    @initialize(
        setting=st.sampled_from(SETTINGS),
        options=OPTIONS,
        opponents=st.sampled_from(["uniform", "random", "greedy", "flaky"]),
        learner=st.sampled_from([0, 1, "random"]),
        illegal=st.sampled_from(["raise", "penalize"]),
        entropy=st.integers(0, 99),
    )
    def make(self, setting, options, opponents, learner, illegal, entropy):
        n = setting["num_players"]
        others = {
            "uniform": None,
            "random": "random",
            "greedy": "greedy",
            "flaky": [None] * (n - 2) + [FlakyOpponent()],
        }[opponents]
        self.env = AllFivesSingleAgentEnv(**setting, **options, opponents=others, learner_seat=learner, illegal=illegal)
        self.env._np_random = np.random.default_rng(entropy)  # as in the AEC machine: repeatable runs
        self.rules = self.env.game_rules
        self.obs = None
        self.done = True

    @rule(
        seed=GOOD_SEEDS,
        deal=st.one_of(st.none(), st.integers(0, 10_000)),
        learner=st.sampled_from([None, 0, "random"]),
    )
    def reset(self, seed, deal, learner):
        options = {}
        if deal is not None:
            options["deal"] = good_deal(self.rules, deal)
        if learner is not None:
            options["learner_seat"] = learner
        twin = steady_twin(self.env)
        result = retried(lambda: self.env.reset(seed=seed, options=options), self.env)
        same_result(result, twin.reset(seed=seed, options=options))
        self.obs, info = result
        self.done = False
        assert info["learner_seat"] == self.env.learner

    @rule(
        seed=st.one_of(GOOD_SEEDS, BAD_SEEDS),
        deal_seed=st.integers(0, 1000),
        how=BAD_DEAL_KINDS,
        bad_seed=BAD_SEEDS,
        bad_learner=st.sampled_from([-1, 7, "first", True, 1.0]),
    )
    def refused_reset(self, seed, deal_seed, how, bad_seed, bad_learner):
        before = gym_snapshot(self.env)
        with pytest.raises(ValueError):
            self.env.reset(seed=seed, options={"deal": bad_deal(self.rules, deal_seed, how)})
        with pytest.raises(ValueError, match="seed"):
            self.env.reset(seed=bad_seed)
        with pytest.raises(ValueError, match="learner_seat"):
            self.env.reset(options={"learner_seat": bad_learner})
        with pytest.raises(ValueError, match="options="):
            self.env.reset(options=["deals"])
        assert gym_snapshot(self.env) == before

    @precondition(lambda self: not self.done)
    @rule(data=st.data(), kind=st.sampled_from([int, np.int64, np.array]))
    def step_legal(self, data, kind):
        legal = [int(a) for a in np.flatnonzero(self.obs["action_mask"])]
        assert legal == [int(a) for a in np.flatnonzero(self.env.action_masks())]
        action = kind(data.draw(st.sampled_from(legal)))
        twin = steady_twin(self.env)
        result = retried(lambda: self.env.step(action), self.env)
        same_result(result, twin.step(action))
        self.obs, reward, terminated, truncated, info = result
        assert not truncated and isinstance(reward, float)
        self.done = terminated
        if terminated:
            assert not self.env.action_masks().any()

    @precondition(lambda self: not self.done)
    @rule(data=st.data(), non_integer=NON_INTEGERS, use_illegal=st.booleans())
    def step_refused(self, data, non_integer, use_illegal):
        illegal = [int(a) for a in np.flatnonzero(self.obs["action_mask"] == 0)]
        action = data.draw(st.sampled_from(illegal)) if use_illegal else non_integer
        before = gym_snapshot(self.env)
        if self.env.illegal == "raise":
            with pytest.raises(ValueError):
                self.env.step(action)
            assert gym_snapshot(self.env) == before
            return
        obs, reward, terminated, truncated, info = self.env.step(action)
        assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
        assert snapshot(self.env.state) == [item for item in before if item[0] == "state"][0][1]
        self.done = True

    @precondition(lambda self: self.done and self.env.state is not None)
    @rule()
    def step_after_the_end(self):
        with pytest.raises(gymnasium.error.ResetNeeded):
            self.env.step(0)

    @precondition(lambda self: self.env.state is None)
    @rule(call=st.sampled_from(["step", "action_masks", "record"]))
    def call_before_reset(self, call):
        before = gym_snapshot(self.env)
        with pytest.raises(RuntimeError, match=r"call reset\(\) before"):
            getattr(self.env, call)(*([0] if call == "step" else []))
        assert gym_snapshot(self.env) == before

    @precondition(lambda self: self.env.state is not None)
    @rule()
    def record_replays(self):
        record = self.env.record(note="fuzz")
        assert record["learner_seat"] == self.env.learner
        result = replay(load_record(json.dumps(record)))
        assert result.state.scores == self.env.state.scores

    @precondition(lambda self: not self.done)
    @rule(how=st.sampled_from(["deepcopy", "pickle"]), data=st.data(), steps=st.integers(1, 15))
    def copy_plays_on_identically(self, how, data, steps):
        twin = copy.deepcopy(self.env) if how == "deepcopy" else pickle.loads(pickle.dumps(self.env))
        obs = self.obs
        for _ in range(steps):
            action = data.draw(st.sampled_from([int(a) for a in np.flatnonzero(obs["action_mask"])]))
            outcomes = []
            for e in (self.env, twin):
                try:
                    outcomes.append(e.step(action))
                except Flaky:
                    outcomes.append("flaky")
            if outcomes[0] == "flaky" or outcomes[1] == "flaky":
                assert outcomes == ["flaky", "flaky"]
                continue
            same_result(*outcomes)
            obs = outcomes[0][0]
            if outcomes[0][2]:
                break
        self.obs, self.done = obs, self.env.done
        assert gym_snapshot(twin) == gym_snapshot(self.env)


TestAECMachine = AECMachine.TestCase
TestAECMachine.settings = FUZZ
TestGymMachine = GymMachine.TestCase
TestGymMachine.settings = FUZZ
