"""Refused calls change nothing, and the environments say the same thing about bad input.

One regression test per defect found by fuzzing the environments: a refused
first ``reset`` of ``env()``, a seed too large to use, targets the encoders
cannot represent, opponents' generators after an opponent fails, calls before
``reset``, non-integer actions, illegal moves in ``env()``, and record keys
that collide with the record's own. Where a call is refused, the test compares
a full snapshot of the environment (every wrapper, the match, the generators)
before and after.
"""

from __future__ import annotations

import copy
import pickle
import random
import warnings

import numpy as np
import pytest
from conftest import snapshot

from allfives_env.aec_env import env, raw_env
from allfives_env.core import IllegalActionError
from allfives_env.core.record import RECORD_KEYS, replay, to_record
from allfives_env.core.rules import MAX_TARGET
from allfives_env.gym_env import AllFivesSingleAgentEnv
from allfives_env.options import MAX_SEED

BAD_DEAL = {"hands": [["0-0"]], "boneyard": [], "leader": 0}


# -- snapshots ---------------------------------------------------------------------------------


def _value(x):
    """A comparable copy of an attribute value (arrays by content, generators by state)."""
    if isinstance(x, np.ndarray):
        return ("array", x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, np.random.Generator):
        return ("generator", repr(x.bit_generator.state))
    if isinstance(x, random.Random):
        return ("random", x.getstate())
    if isinstance(x, dict):
        return ("dict", tuple((k, _value(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_value(v) for v in x))
    return x


def aec_snapshot(e) -> tuple:
    """Every attribute of every wrapper of ``e`` and of the raw env, the match included."""
    layers = []
    while True:
        raw = e.unwrapped is e
        items = []
        for name, value in sorted(vars(e).items()):
            if name in ("env", "_mirrors", "_state"):
                continue
            items.append((name, _value(value)))
        if raw:
            items.append(("_state", None if e._state is None else snapshot(e._state)))
        layers.append((type(e).__name__, tuple(items)))
        if raw:
            return tuple(layers)
        e = e.env


def gym_snapshot(e: AllFivesSingleAgentEnv) -> tuple:
    items = []
    for name, value in sorted(vars(e).items()):
        if name == "state":
            items.append((name, None if value is None else snapshot(value)))
        elif name == "seats":  # by kind and generator state, so that a copy's seats compare equal
            items.append((name, tuple((type(seat).__name__, _value(_seat_generator(seat))) for seat in value)))
        else:
            items.append((name, _value(value)))
    return tuple(items)


def _seat_generator(seat):
    """An opponent seat's generator: its own (uniform random) or its agent's ``rng`` (the bots)."""
    return getattr(seat, "rng", None) or getattr(getattr(seat, "agent", None), "rng", None)


def play_aec(e, seed: int, decisions: int) -> list:
    """Random legal play for ``decisions`` steps; what each ``last()`` showed."""
    chooser = np.random.default_rng(seed)
    seen = []
    for _ in range(decisions):
        if not e.agents:
            break
        obs, reward, terminated, truncated, info = e.last()
        seen.append((e.agent_selection, obs["observation"].tobytes(), reward, terminated, truncated))
        e.step(None if terminated or truncated else int(chooser.choice(np.flatnonzero(obs["action_mask"]))))
    return seen


# -- 3: a refused first reset leaves env() unreset ---------------------------------------------------


def test_a_refused_first_reset_leaves_env_exactly_as_new():
    e = env(num_players=3)
    before = aec_snapshot(e)
    with pytest.raises(ValueError, match="deal"):
        e.reset(options={"deal": BAD_DEAL})
    assert aec_snapshot(e) == before
    with pytest.raises(AttributeError):
        e.agents  # noqa: B018 (the order-enforcing wrapper refuses the read before a reset)
    with pytest.raises(AssertionError, match="reset"):
        e.step(0)
    # It then resets and plays exactly as a fresh env would.
    fresh = env(num_players=3)
    e.reset(seed=5)
    fresh.reset(seed=5)
    assert play_aec(e, 1, 80) == play_aec(fresh, 1, 80)


@pytest.mark.parametrize("make", [env, raw_env], ids=["env", "raw_env"])
def test_a_refused_reset_mid_match_changes_nothing(make):
    e = make(num_players=2)
    e.reset(seed=3)
    play_aec(e, 0, 7)
    twin = copy.deepcopy(e)
    before = aec_snapshot(e)
    for bad in [{"options": {"deal": BAD_DEAL}}, {"seed": -1}, {"seed": 10**5000}, {"seed": 2.5}]:
        with pytest.raises(ValueError):
            e.reset(**bad)
        assert aec_snapshot(e) == before, bad
    assert play_aec(e, 9, 60) == play_aec(twin, 9, 60)


# -- 4: a seed too large to use changes nothing ------------------------------------------------------


def test_a_refused_seed_leaves_the_aec_generator_as_it_was():
    e = raw_env()
    e.reset(seed=7)
    twin = copy.deepcopy(e)
    before = aec_snapshot(e)
    with pytest.raises(ValueError, match="seed"):
        e.reset(seed=10**5000)
    assert aec_snapshot(e) == before
    e.reset()
    twin.reset()
    assert e.match_seed == twin.match_seed
    assert snapshot(e.core_state) == snapshot(twin.core_state)


def test_a_refused_seed_leaves_the_gym_env_as_it_was():
    e = AllFivesSingleAgentEnv()
    e.reset(seed=7)
    twin = copy.deepcopy(e)
    before = gym_snapshot(e)
    for bad in (10**5000, MAX_SEED + 1, -1, 1.5, True):
        with pytest.raises(ValueError, match="seed"):
            e.reset(seed=bad)
        assert gym_snapshot(e) == before, bad
    assert e.reset()[0]["observation"].tobytes() == twin.reset()[0]["observation"].tobytes()
    assert e.match_seed == twin.match_seed


def test_the_largest_seed_is_used_by_both_environments():
    e = raw_env()
    e.reset(seed=MAX_SEED)
    g = AllFivesSingleAgentEnv()
    g.reset(seed=MAX_SEED)
    assert e.match_seed == g.match_seed == MAX_SEED
    assert snapshot(e.core_state)[4] == snapshot(g.state)[4]  # the same deal


# -- 5: targets the encoders cannot represent ----------------------------------------------------------


@pytest.mark.parametrize(
    "target", [10**400, 10**20, MAX_TARGET + 1, 1e308, float("nan")], ids=["1e400", "1e20", "max+1", "1e308f", "nan"]
)
@pytest.mark.parametrize("make", [raw_env, env, AllFivesSingleAgentEnv], ids=["raw_env", "env", "gym"])
def test_targets_beyond_the_largest_are_refused_at_construction(make, target):
    with pytest.raises(ValueError, match=r"target=.*allowed: .*10000"):
        make(target=target)


@pytest.mark.parametrize("target", [MAX_TARGET, MAX_TARGET - 0.5, 1])
def test_the_largest_target_is_encoded_by_both_environments(target):
    e = raw_env(num_players=3, target=target)
    e.reset(seed=1)
    obs = e.last()[0]["observation"]
    assert obs.dtype == np.int8 and e.state_space.contains(e.state())
    g = AllFivesSingleAgentEnv(num_players=3, target=target)
    assert g.observation_space.contains(g.reset(seed=1)[0])


# -- 10: opponents' generators after an opponent fails ------------------------------------------------


class FailsOnce:
    """A callable opponent that raises on its ``fail_at``-th call, then plays the lowest legal action."""

    def __init__(self, fail_at: int | None) -> None:
        self.calls = 0
        self.fail_at = fail_at

    def __call__(self, observation, mask) -> int:
        self.calls += 1
        if self.calls == self.fail_at:
            raise RuntimeError("opponent failure")
        return int(np.flatnonzero(mask)[0])


@pytest.mark.parametrize("opponent", [None, "random"], ids=["uniform", "random-bot"])
def test_a_retried_step_after_an_opponent_fails_is_identical(opponent):
    for seed in range(6):
        failing = AllFivesSingleAgentEnv(num_players=3, opponents=[opponent, FailsOnce(3)])
        steady = AllFivesSingleAgentEnv(num_players=3, opponents=[opponent, FailsOnce(None)])
        obs, _ = failing.reset(seed=seed)
        steady.reset(seed=seed)
        chooser = np.random.default_rng(seed)
        for _ in range(40):
            action = int(chooser.choice(np.flatnonzero(obs["action_mask"])))
            before = gym_snapshot(failing)
            try:
                result = failing.step(action)
            except RuntimeError:
                after = gym_snapshot(failing)
                assert [item for item in after if item[0] != "seats"] == [item for item in before if item[0] != "seats"]
                assert (
                    after[[i for i, item in enumerate(after) if item[0] == "seats"][0]][1][0]
                    == (before[[i for i, item in enumerate(before) if item[0] == "seats"][0]][1][0])
                ), "the first opponent's generator moved"
                result = failing.step(action)
            expected = steady.step(action)
            assert result[0]["observation"].tobytes() == expected[0]["observation"].tobytes()
            assert result[1:4] == expected[1:4]
            obs = result[0]
            if result[2]:
                break


# -- calls before reset ----------------------------------------------------------------------------


RAW_CALLS = {
    "step": lambda e: e.step(0),
    "observe": lambda e: e.observe("player_0"),
    "last": lambda e: e.last(),
    "state": lambda e: e.state(),
    "render": lambda e: e.render(),
    "record": lambda e: e.record(),
    "seat_view": lambda e: e.seat_view("player_0"),
    "core_state": lambda e: e.core_state,
    "agent_iter": lambda e: next(iter(e.agent_iter())),
}


@pytest.mark.parametrize("call", sorted(RAW_CALLS))
def test_every_raw_env_call_before_reset_raises_the_same_runtime_error(call):
    e = raw_env(render_mode="ansi")
    before = aec_snapshot(e)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before"):
        RAW_CALLS[call](e)
    assert aec_snapshot(e) == before


GYM_CALLS = {
    "step": lambda e: e.step(0),
    "render": lambda e: e.render(),
    "record": lambda e: e.record(),
    "action_masks": lambda e: e.action_masks(),
}


@pytest.mark.parametrize("call", sorted(GYM_CALLS))
def test_every_gym_call_before_reset_raises_the_same_runtime_error(call):
    import gymnasium

    e = AllFivesSingleAgentEnv(render_mode="ansi")
    before = gym_snapshot(e)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before") as info:
        GYM_CALLS[call](e)
    assert isinstance(info.value, gymnasium.error.ResetNeeded)
    assert gym_snapshot(e) == before


# -- one rule for non-integer actions -------------------------------------------------------------


def _legal(e) -> int:
    return int(e.unwrapped.core_state.legal_actions()[0])


def _non_integers(a: int) -> list:
    return [float(a), np.float64(a), np.float32(a), str(a), [a], np.array([a]), None]


def test_raw_env_takes_integer_actions_only():
    e = raw_env()
    e.reset(seed=2)
    a = _legal(e)
    before = aec_snapshot(e)
    for bad in _non_integers(a) + [bool(a) if a in (0, 1) else True, np.bool_(True)]:
        with pytest.raises(IllegalActionError, match="integer"):
            e.step(bad)
        assert aec_snapshot(e) == before, repr(bad)
    for good in (a, np.int64(a), np.int8(a), np.array(a)):
        twin = copy.deepcopy(e)
        twin.step(good)
        assert twin.core_state.moves[-1] % 128 == a and type(twin.core_state.moves[-1]) is int


def test_a_bool_is_not_an_action_even_where_its_integer_would_be_legal():
    """``False == 0``: leading the 0-0 is action 0, and ``step(False)`` must not play it."""
    e = raw_env()
    seed = next(s for s in range(500) if e.reset(seed=s) is None and 0 in e.core_state.legal_actions())
    before = aec_snapshot(e)
    with pytest.raises(IllegalActionError, match="integer"):
        e.step(False)
    assert aec_snapshot(e) == before
    g = AllFivesSingleAgentEnv()
    seed = next(s for s in range(500) if 0 in g.reset(seed=s)[0]["action_mask"].nonzero()[0])
    before = gym_snapshot(g)
    with pytest.raises(ValueError, match="integer"):
        g.step(np.bool_(False))
    assert gym_snapshot(g) == before, seed


def test_env_fails_the_action_space_assertion_on_non_integers():
    e = env()
    e.reset(seed=2)
    a = _legal(e)
    e.last()
    before = aec_snapshot(e)
    for bad in _non_integers(a)[:-1] + [True, False, np.bool_(False)]:
        with pytest.raises(AssertionError, match="action"):
            e.step(bad)
        assert aec_snapshot(e) == before, repr(bad)


def test_gym_refuses_the_same_non_integers_and_penalizes_them_when_asked():
    g = AllFivesSingleAgentEnv()
    g.reset(seed=2)
    a = int(g.state.legal_actions()[0])
    before = gym_snapshot(g)
    for bad in _non_integers(a):
        with pytest.raises(ValueError, match="integer"):
            g.step(bad)
        assert gym_snapshot(g) == before
    p = AllFivesSingleAgentEnv(illegal="penalize")
    p.reset(seed=2)
    assert p.step(float(a))[1:3] == (-1.0, True)


# -- illegal moves in env(): what PettingZoo's classic environments do -------------------------------------


def test_an_illegal_move_in_env_ends_the_episode_as_documented():
    e = env(num_players=3)
    e.reset(seed=4)
    obs = e.last()[0]
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    agent = e.agent_selection
    core_before = snapshot(e.unwrapped.core_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(illegal)
    assert all(e.terminations.values()) and all(e.truncations.values())
    assert e._cumulative_rewards[agent] == -1 and sum(e._cumulative_rewards.values()) == -1
    assert all(info == {} for info in e.infos.values())  # no scores: the match did not end by the rules
    assert snapshot(e.unwrapped.core_state) == core_before
    from pathlib import Path

    docs = Path(__file__).resolve().parents[1].joinpath("docs", "environment.md").read_text(encoding="utf-8")
    section = docs.split("### Illegal moves", 1)[1].split("###", 1)[0]
    assert "truncations" in section and "`infos`" in section
    assert "truncations never" not in docs.replace("\n", " ")


# -- record keys -------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", [*RECORD_KEYS, "seed"])
def test_record_refuses_extra_keys_that_collide_with_its_own(key):
    e = raw_env()
    e.reset(seed=1)
    play_aec(e, 0, 10)
    before = aec_snapshot(e)
    with pytest.raises(ValueError, match=rf"'{key}'.*allowed"):
        e.record(**{key: "x"})
    assert aec_snapshot(e) == before
    g = AllFivesSingleAgentEnv()
    g.reset(seed=1)
    with pytest.raises(ValueError, match=rf"'{key}'.*allowed"):
        g.record(**{key: "x"})
    if key != "seed":
        with pytest.raises(ValueError, match=rf"'{key}'"):
            to_record(e.core_state, **{key: "x"})
    # Other keys are kept, and the record still replays to the same scores.
    record = e.record(agents=["a", "b"], note="x")
    assert record["agents"] == ["a", "b"] and replay(record).state.scores == e.core_state.scores


def test_gym_record_refuses_its_learner_seat_key():
    g = AllFivesSingleAgentEnv()
    g.reset(seed=1)
    with pytest.raises(ValueError, match="'learner_seat'.*allowed"):
        g.record(learner_seat=3)


@pytest.mark.parametrize("reseed", [None, 5, "abc"])
def test_a_bots_generator_goes_back_exactly_after_any_draw_and_a_reseed(reseed):
    """The bots' ``random.Random`` is swapped for one that can go back; its draws must not change."""
    from allfives_env.opponents import AgentSeat as _AgentSeat

    class Bot:
        def __init__(self) -> None:
            self.rng = random.Random(3)

    bot, reference = Bot(), random.Random(3)
    seat = _AgentSeat(bot)
    assert [bot.rng.choice(range(100)) for _ in range(50)] == [reference.choice(range(100)) for _ in range(50)]
    bot.rng.gauss(0, 1)
    saved, state = seat.saved(), bot.rng.getstate()
    bot.rng.shuffle(list(range(30)))
    bot.rng.sample(range(1000), 10)
    bot.rng.getrandbits(100)
    bot.rng.randbytes(7)
    bot.rng.gauss(0, 1)
    bot.rng.choices([1, 2, 3], k=5)
    bot.rng.seed(reseed)
    bot.rng.random()
    seat.restore(saved)
    assert bot.rng.getstate() == state
    reference.setstate(state)
    assert [bot.rng.random() for _ in range(5)] == [reference.random() for _ in range(5)]
    for copier in (copy.deepcopy, lambda rng: pickle.loads(pickle.dumps(rng))):
        twin = copier(bot.rng)
        assert twin.getstate() == bot.rng.getstate() and twin.random() == bot.rng.random()
