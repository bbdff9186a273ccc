"""The PettingZoo AEC environment: PettingZoo's own checks, masks, leaks, rewards, options and records."""

from __future__ import annotations

import copy
import json
import pickle
import random
import warnings
from functools import partial

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.test.state_test import test_state as pz_state_test
from pettingzoo.test.state_test import test_state_space as pz_state_space_test

import allfives_env
from allfives_env.aec_env import ENV_ID, env, raw_env
from allfives_env.common import UnknownResetOptionWarning
from allfives_env.core import DRAW, PASS, IllegalActionError, State, make_rules
from allfives_env.core.record import load_record, replay
from allfives_env.core.tiles import TILE_TEXT
from allfives_env.views.observation import OFFSETS

SETTINGS = [
    {"num_players": 2},
    {"num_players": 3},
    {"num_players": 4, "partnerships": True},
    {"num_players": 2, "rules": "fives"},
    {"num_players": 3, "rules": "fives", "opening": "descending"},
    {"num_players": 4, "rules": "fives", "partnerships": False},
    {"num_players": 4, "rules": "fives", "partnerships": True},
]
NAMES = [",".join(f"{k}={v}" for k, v in s.items()) for s in SETTINGS]


def pick(obs, chooser: random.Random) -> int:
    return int(chooser.choice(np.flatnonzero(obs["action_mask"])))


def play(e, chooser: random.Random, limit: int = 100_000) -> int:
    """Random legal play until every agent is done; returns the number of decisions."""
    decisions = 0
    for _ in range(limit):
        if not e.agents:
            return decisions
        obs, _, terminated, truncated, _ = e.last()
        e.step(None if terminated or truncated else pick(obs, chooser))
        decisions += not (terminated or truncated)
    raise AssertionError("the episode did not end")


# -- PettingZoo's own checks (the bars of the issue) ----------------------------------------


@pytest.mark.parametrize("settings", SETTINGS, ids=NAMES)
def test_pettingzoo_checks(settings, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "observation is not a NumPy array": the observation is a Dict
        api_test(env(**settings), num_cycles=200)
        api_test(raw_env(**settings), num_cycles=200)
        seed_test(partial(env, **settings), num_cycles=100)
        render_test(partial(env, **settings))
        wrapped = env(**settings)
        wrapped.reset(seed=1)
        # state_test() also wants a parallel env, which a turn-based game has not
        # (is_parallelizable is False); these are its two AEC parts.
        pz_state_space_test(wrapped)
        pz_state_test(wrapped, num_cycles=20)
    assert "Passed API test" in capsys.readouterr().out


def test_options_pass_the_checks_too(capsys):
    settings = {"num_players": 3, "reward": "points", "episode": "round", "auto_forced": True, "history": True}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env(**settings), num_cycles=200)
        seed_test(partial(env, **settings), num_cycles=100)
    capsys.readouterr()


def test_registered_with_pettingzoo():
    made = pettingzoo.make("aec", ENV_ID, num_players=3, rules="fives")
    made.reset(seed=0)
    assert made.possible_agents == ["player_0", "player_1", "player_2"]
    assert made.unwrapped.game_rules.rules == "fives"
    assert allfives_env.env is env and allfives_env.raw_env is raw_env


def test_metadata_agents_and_spaces():
    e = raw_env(num_players=3)
    assert e.metadata["name"] == "allfives_v0" and e.metadata["is_parallelizable"] is False
    assert set(e.metadata["render_modes"]) == {"ansi", "human", "rgb_array"}
    assert e.possible_agents == [f"player_{i}" for i in range(3)]
    for agent in e.possible_agents:
        assert e.observation_space(agent) is e.observation_space(agent)
        assert e.action_space(agent) is e.action_space(agent) and e.action_space(agent).n == 114
        space = e.observation_space(agent)["action_mask"]
        assert space.shape == (114,) and space.dtype == np.int8 and space.high.max() == 1


# -- masks and observations ---------------------------------------------------------------------


@pytest.mark.parametrize("settings", [SETTINGS[1], SETTINGS[3], SETTINGS[6]], ids=[NAMES[1], NAMES[3], NAMES[6]])
def test_mask_is_exactly_the_core_legal_actions(settings):
    e = raw_env(**settings)
    e.reset(seed=11)
    chooser = random.Random(11)
    steps = 0
    while steps < 3000:
        if not e.agents:
            e.reset()
            continue
        state = e.core_state
        for agent in e.agents:
            mask = e.observe(agent)["action_mask"]
            seat = int(agent.split("_")[1])
            if seat == state.to_act and not state.finished:
                assert list(np.flatnonzero(mask)) == state.legal_actions()
            else:
                assert not mask.any()
        obs, _, terminated, truncated, _ = e.last()
        e.step(None if terminated or truncated else pick(obs, chooser))
        steps += 1


def test_observations_are_fresh_and_never_change():
    e = raw_env(num_players=2, history=True)
    e.reset(seed=4)
    chooser = random.Random(4)
    kept = []
    for _ in range(60):
        obs, *_ = e.last()
        kept.append((obs, {k: v.copy() for k, v in obs.items()}))
        again = e.observe(e.agent_selection)
        assert not np.shares_memory(again["observation"], obs["observation"])
        e.step(pick(obs, chooser))
    for obs, copied in kept:
        for key in copied:
            np.testing.assert_array_equal(obs[key], copied[key])


def test_auto_forced_never_asks_for_a_lone_draw_or_pass():
    e = raw_env(num_players=2, auto_forced=True)
    e.reset(seed=8)
    chooser = random.Random(8)
    asked = 0
    for _ in range(3000):
        if not e.agents:
            e.reset()
            continue
        obs, _, terminated, truncated, _ = e.last()
        if terminated or truncated:
            e.step(None)
            continue
        legal = list(np.flatnonzero(obs["action_mask"]))
        assert legal not in ([DRAW], [PASS])
        asked += 1
        e.step(pick(obs, chooser))
    played = [a for log in e.core_state.past for _, a in log.moves] + [m % 128 for m in e.core_state.moves]
    assert asked > 1000 and DRAW in played  # the draws happened, nobody was asked for them


# -- no leak -------------------------------------------------------------------------------------


def _swapped_deal(state: State, observer: int, chooser: random.Random) -> tuple[dict, int, int] | None:
    """The round-0 deal with two tiles the observer cannot see exchanged (between hands and/or the boneyard)."""
    deal = state.deal
    hidden = [("hand", s, i) for s in range(len(deal.hands)) if s != observer for i in range(len(deal.hands[s]))]
    hidden += [("bone", None, i) for i in range(len(deal.boneyard))]
    chooser.shuffle(hidden)
    hands = [list(h) for h in deal.hands]
    bone = list(deal.boneyard)
    for a, b in zip(hidden, hidden[1:], strict=False):
        if a[1] == b[1] and a[0] == b[0]:
            continue  # same hand: a swap inside it changes nothing

        def get(where):
            return hands[where[1]][where[2]] if where[0] == "hand" else bone[where[2]]

        def put(where, tile):
            if where[0] == "hand":
                hands[where[1]][where[2]] = tile
            else:
                bone[where[2]] = tile

        x, y = get(a), get(b)
        put(a, y)
        put(b, x)
        text = {"hands": [[TILE_TEXT[t] for t in h] for h in hands], "boneyard": [TILE_TEXT[t] for t in bone]}
        return {**text, "leader": deal.leader}, x, y
    return None


@pytest.mark.parametrize("settings", SETTINGS, ids=NAMES)
def test_hidden_tiles_never_reach_an_observation(settings):
    chooser = random.Random(21)
    compared = 0
    for trial in range(25):
        observer = trial % settings["num_players"]
        first = raw_env(history=True, action_features=True, **settings)
        first.reset(seed=trial)
        swapped = _swapped_deal(first.core_state, observer, chooser)
        if swapped is None:
            continue
        deal, x, y = swapped
        try:
            second = raw_env(history=True, action_features=True, **settings)
            second.reset(seed=trial, options={"deal": deal})
        except ValueError:
            continue  # the swap moved a required opening double: the rules fix the leader
        original = first.core_state.deal.to_json()
        first.reset(seed=trial, options={"deal": original})
        me = f"player_{observer}"
        assert (first.state() != second.state()).any()  # the deals really differ
        for _ in range(200):
            s1, s2 = first.core_state, second.core_state
            revealed = (1 << x | 1 << y) & (
                s1.layout.played | s2.layout.played | s1.hands[observer] | s2.hands[observer]
            )
            if revealed or s1.round_index > 0 or s1.finished or s2.finished:
                break
            a, b = first.observe(me), second.observe(me)
            np.testing.assert_array_equal(a["observation"], b["observation"])
            np.testing.assert_array_equal(a["action_mask"], b["action_mask"])
            np.testing.assert_array_equal(a["action_features"], b["action_features"])
            compared += 1
            both = sorted(set(s1.legal_actions()) & set(s2.legal_actions()))
            if not both or first.agent_selection != second.agent_selection:
                break
            action = chooser.choice(both)
            first.step(action)
            second.step(action)
    assert compared > 50


# -- illegal actions -------------------------------------------------------------------------------


def _snapshot(e) -> tuple:
    raw = e.unwrapped
    obs = [raw.observe(a) for a in raw.agents]
    return (
        raw.state().tobytes(),
        json.dumps(raw.record()),
        raw.agent_selection,
        dict(raw.rewards),
        dict(raw._cumulative_rewards),
        dict(raw.terminations),
        [(o["observation"].tobytes(), o["action_mask"].tobytes()) for o in obs],
    )


@pytest.mark.parametrize("bad", [0, 111, DRAW, PASS, 5000, -1, None, "draw"])
def test_raw_env_refuses_an_illegal_action_and_changes_nothing(bad):
    e = raw_env(num_players=3, rules="fives")
    e.reset(seed=5)
    chooser = random.Random(5)
    for _ in range(7):
        obs, *_ = e.last()
        e.step(pick(obs, chooser))
    if bad in e.core_state.legal_actions():
        bad = 0 if 0 not in e.core_state.legal_actions() else 1
    before = _snapshot(e)
    with pytest.raises(IllegalActionError) as info:
        e.step(bad)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert repr(bad) in message or str(bad) in message
    assert "legal actions" in message and str(e.core_state.legal_actions()[0]) in message
    assert _snapshot(e) == before


def test_env_ends_the_episode_on_an_illegal_action_with_minus_one():
    e = env(num_players=2)
    e.reset(seed=3)
    obs, *_ = e.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    offender = e.agent_selection
    record = json.dumps(e.unwrapped.record())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(illegal)
    assert all(e.terminations.values())
    assert e.rewards[offender] == -1 and all(r == 0 for a, r in e.rewards.items() if a != offender)
    assert json.dumps(e.unwrapped.record()) == record  # the match itself was not touched
    rewards = {}
    while e.agents:
        agent = e.agent_selection
        rewards[agent] = e.last()[1]
        e.step(None)
    assert rewards[offender] == -1 and sum(rewards.values()) == -1


def test_env_refuses_calls_before_reset():
    e = env(num_players=2)
    for name in ("agents", "agent_selection", "terminations", "rewards"):
        with pytest.raises(AttributeError):
            getattr(e, name)
    e.reset(seed=0)
    assert e.agents == ["player_0", "player_1"] and e.agent_selection in e.agents


def test_env_asserts_actions_outside_the_space():
    e = env(num_players=2)
    e.reset(seed=3)
    with pytest.raises(AssertionError):
        e.step(114)


# -- rewards and episodes ----------------------------------------------------------------------------


def _collect(e, chooser) -> dict[str, float]:
    """Play to the end, summing every agent's rewards as PettingZoo hands them out."""
    totals = dict.fromkeys(e.possible_agents, 0.0)
    while e.agents:
        agent = e.agent_selection
        obs, reward, terminated, truncated, _ = e.last()
        totals[agent] += reward
        e.step(None if terminated or truncated else pick(obs, chooser))
    return totals


@pytest.mark.parametrize("settings", [SETTINGS[1], SETTINGS[2]], ids=[NAMES[1], NAMES[2]])
def test_win_loss_pays_the_winning_side_at_the_end(settings):
    e = raw_env(target=60, **settings)
    e.reset(seed=2)
    chooser = random.Random(2)
    totals = _collect(e, chooser)
    state = e.core_state
    rules = state.rules
    assert state.finished and len(state.winners) == 1
    for seat, agent in enumerate(e.possible_agents):
        assert totals[agent] == (1.0 if rules.side_of[seat] == state.winners[0] else -1.0)


def test_shared_win_pays_nobody():
    e = raw_env(num_players=3)
    e.reset(seed=0)
    state = e.core_state
    state.finished, state.winners = True, (0, 2)  # a three-player split can leave two sides level on top
    e._finish()
    assert all(r == 0 for r in e.rewards.values()) and all(e.terminations.values())


@pytest.mark.parametrize("settings", [SETTINGS[1], SETTINGS[2], SETTINGS[3]], ids=[NAMES[1], NAMES[2], NAMES[3]])
def test_points_rewards_are_zero_sum_and_add_up_to_the_score_margin(settings):
    e = raw_env(reward="points", target=80, **settings)
    e.reset(seed=6)
    chooser = random.Random(6)
    totals = dict.fromkeys(e.possible_agents, 0.0)
    while e.agents:
        obs, _, terminated, truncated, _ = e.last()
        e.step(None if terminated or truncated else pick(obs, chooser))
        assert abs(sum(e.rewards.values())) < 1e-9
        for agent, reward in e.rewards.items():
            totals[agent] += reward
    state = e.core_state
    rules = state.rules
    for seat, agent in enumerate(e.possible_agents):
        mine = state.scores[rules.side_of[seat]]
        others = [s for side, s in enumerate(state.scores) if side != rules.side_of[seat]]
        assert totals[agent] == pytest.approx((mine - sum(others) / len(others)) / rules.target)
    assert any(totals.values())


def test_round_episode_stops_at_the_end_of_the_first_round():
    e = raw_env(num_players=2, episode="round", render_mode="ansi")
    e.reset(seed=9)
    totals = _collect(e, random.Random(9))
    state = e.core_state
    assert state.round_index == 0 and len(state.past) == 1 and state.layout.played  # the table as the round ended
    result = state.past[0].result
    if result.winner is None:
        assert all(v == 0 for v in totals.values())
    else:
        assert totals["player_0"] == (1.0 if result.winner == 0 else -1.0) == -totals["player_1"]
    assert "Round over" in e.render() or state.winners
    record = e.record()
    assert len(record["rounds"]) == 1
    assert replay(record).state.scores == state.scores


# -- reset, seeds, options ----------------------------------------------------------------------------


def test_seeds_fix_the_match_and_unseeded_resets_continue_the_generator():
    a, b = raw_env(), raw_env()
    a.reset(seed=123)
    b.reset(seed=123)
    assert a.match_seed == b.match_seed == 123
    assert a.core_state.deal == b.core_state.deal == State(make_rules(), seed=123).deal
    a.reset()
    b.reset()
    assert a.match_seed == b.match_seed and a.core_state.deal == b.core_state.deal
    fresh, other = raw_env(), raw_env()
    fresh.reset()
    other.reset()
    assert fresh.match_seed != other.match_seed  # fresh entropy
    with pytest.raises(ValueError, match="seed"):
        a.reset(seed=-1)


def test_a_fixed_deal_is_dealt_and_a_bad_one_changes_nothing():
    rules = make_rules("pagat", 2)
    deal = State(rules, seed=77).deal.to_json()
    e = raw_env()
    with pytest.warns(UnknownResetOptionWarning, match="'ignored' is not known and is ignored; allowed: 'deal'"):
        e.reset(seed=1, options={"deal": deal, "ignored": True})
    obs = e.observe("player_0")["observation"]
    hand = {TILE_TEXT[t] for t in np.flatnonzero(obs[OFFSETS["hand"] : OFFSETS["hand"] + 28])}
    assert hand == set(deal["hands"][0]) and e.agent_selection == f"player_{deal['leader']}"
    before = _snapshot(e)
    broken = {**deal, "hands": [deal["hands"][0][:-1], deal["hands"][1]]}
    for bad in (broken, {**deal, "leader": 5}, {"hands": []}, "nonsense"):
        with pytest.raises(ValueError, match="deal"):
            e.reset(options={"deal": bad})
        assert _snapshot(e) == before


@pytest.mark.parametrize(
    "kwargs, named",
    [
        ({"num_players": 5}, "num_players"),
        ({"rules": "bergen"}, "rules"),
        ({"num_players": 2, "partnerships": True}, "partnerships"),
        ({"target": -5}, "target"),
        ({"opening": "descending"}, "opening"),
        ({"render_mode": "rgb"}, "render_mode"),
        ({"reward": "score"}, "reward"),
        ({"episode": "game"}, "episode"),
        ({"auto_forced": "yes"}, "auto_forced"),
        ({"history": 1}, "history"),
        ({"record_dir": 3}, "record_dir"),
    ],
)
def test_bad_arguments_are_named(kwargs, named):
    with pytest.raises(ValueError, match=named):
        raw_env(**kwargs)


# -- copies, views, records ------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [raw_env, env], ids=["raw_env", "env"])
def test_pickled_and_copied_envs_carry_on_identically(make):
    e = make(num_players=3, rules="fives")
    e.reset(seed=12)
    chooser = random.Random(12)
    for _ in range(15):
        obs, *_ = e.last()
        e.step(pick(obs, chooser))
    copies = [pickle.loads(pickle.dumps(e)), copy.deepcopy(e)]
    alone = copy.deepcopy(e)  # stepped on its own: the original must not see it
    selected, record = e.agent_selection, json.dumps(e.unwrapped.record())
    obs, *_ = alone.last()
    alone.step(pick(obs, random.Random(0)))
    assert alone.agent_selection != selected and e.agent_selection == selected
    assert json.dumps(e.unwrapped.record()) == record
    for _ in range(40):
        obs, reward, *_ = e.last()
        for c in copies:
            other, other_reward, *_ = c.last()
            assert c.agent_selection == e.agent_selection and other_reward == reward
            np.testing.assert_array_equal(other["observation"], obs["observation"])
        action = pick(obs, chooser)
        for x in [e, *copies]:
            x.step(action)


def test_seat_view_is_what_the_bots_play_from():
    e = raw_env(num_players=4, partnerships=True)
    e.reset(seed=3)
    view = e.seat_view(e.agent_selection)
    assert list(view.legal) == list(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))
    assert e.seat_view("player_1").hand == e.core_state.hands[1]
    with pytest.raises(ValueError, match="player_7"):
        e.seat_view("player_7")


def test_records_replay_to_the_same_scores(tmp_path):
    e = raw_env(num_players=3, target=80, record_dir=tmp_path)
    e.reset(seed=31)
    chooser = random.Random(31)
    for _ in range(30):
        obs, *_ = e.last()
        e.step(pick(obs, chooser))
    partial_record = e.record(note="midway")
    assert partial_record["seed"] == 31 and partial_record["note"] == "midway"
    assert replay(partial_record).state.scores == e.core_state.scores
    play(e, chooser)
    e.reset()
    play(e, chooser)
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == 2
    for file in files:
        record = load_record(file.read_text())
        result = replay(record)
        assert result.state.finished
        state = State(make_rules("pagat", 3, target=80), seed=record["seed"])
        for entry in record["rounds"]:
            for text in entry["actions"]:
                state.apply(state.parse_action(text))
        assert result.state.scores == state.scores


def test_human_render_prints_hands_and_ansi_does_not(capsys):
    e = raw_env(num_players=2, render_mode="human")
    e.reset(seed=1)
    printed = capsys.readouterr().out
    secret = " ".join(TILE_TEXT[t] for t in e.core_state.hand_tiles(1))
    assert secret in printed and "To act: player_" in printed
    text = raw_env(num_players=2, render_mode="ansi")
    text.reset(seed=1)
    assert secret not in text.render() and "Scores:" in text.render()
    image = raw_env(render_mode="rgb_array")
    image.reset(seed=1)
    frame = image.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
