"""The search's play-outs on plain integers (agents.rollout) against the core's play-out, move for move."""

from __future__ import annotations

import random

import pytest
from test_bots import CONFIGS, positions

from agents.rollout import REPLIES, play_round
from agents.search import outcome, outcome_of, play_out, playout_values, sample_hidden
from allfives_env.core import State, make_rules
from allfives_env.core.scoring import END_TOTAL_LIMIT, placement_points
from allfives_env.core.tiles import END_COUNT, SUIT_MASK, mask_to_tiles


def searched_states(config: dict, seeds: range, target: int | None, every: float = 0.3):
    """States as the search plays them out: a sampled deal of a view's hidden tiles, one legal action taken."""
    rng = random.Random(7)
    for _, view in positions(config, seeds, target=target):
        if rng.random() > every:
            continue
        hands, boneyard = sample_hidden(view, rng)
        state = State.from_view(view, hands, boneyard, round_limit=1)
        state.apply(rng.choice(view.legal))
        yield state


@pytest.mark.parametrize("guarded", [True, False])
@pytest.mark.parametrize("target", [None, 60])  # a low target ends many play-outs in the middle of the round
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_play_round_makes_the_cores_moves_and_ends_where_it_does(config, target, guarded):
    checked = ended_mid_round = 0
    for state in searched_states(config, range(3), target):
        before = (state.hands[:], state.scores[:], state.layout.values[:], state.layout.counts[:], state.bone_pos)
        log: list[int] = []
        scores, winners = play_round(state, guarded, log)
        assert (state.hands, state.scores, state.layout.values, state.layout.counts, state.bone_pos) == before
        reference = state.clone()
        played_before = len(reference.moves)
        play_out(reference, guarded)
        assert log == reference.moves[played_before:]
        assert scores == reference.scores
        assert winners == reference.winners
        assert outcome_of(scores, winners, 0, tuple(before[1])) == outcome(reference, 0, tuple(before[1]))
        checked += 1
        ended_mid_round += bool(winners) and reference.past[-1].result.end == "target"
    assert checked > 30
    if target:
        assert ended_mid_round > 0


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_playout_values_play_each_action_out_on_the_true_deal(config):
    """Each legal action's value: the core plays it and the rest of the round on the state itself."""
    checked = 0
    for state, view in positions(config, range(2), target=120):
        legal = sorted(view.legal)
        if len(legal) < 2:
            continue
        values = playout_values(state)
        assert len(values) == len(legal)
        side = state.rules.side_of[state.to_act]
        for action, value in zip(legal, values, strict=True):
            reference = state.clone()
            reference.round_limit = len(reference.past) + 1  # stop where this round ends
            reference.apply(action)
            play_out(reference)
            assert value == outcome(reference, side, tuple(state.scores))
        assert playout_values(state, legal[::-1]) == values[::-1]
        checked += 1
    assert checked > 20


def test_play_round_of_a_finished_state_is_its_result():
    for state in searched_states(dict(rules="pagat", num_players=2), range(2), target=30, every=1.0):
        if state.finished:
            assert play_round(state) == (state.scores, state.winners)
            return
    pytest.fail("no searched action ended the match")


def test_play_round_refuses_a_state_before_the_lead():
    with pytest.raises(ValueError, match="after the lead"):
        play_round(State(make_rules("pagat", 2), seed=0))


def test_reply_table_is_its_definition():
    """REPLIES[v][covered]: every scoring tile showing v, grouped by its points, most points first."""
    for v in range(7):
        for covered in range(END_TOTAL_LIMIT):
            table = REPLIES[v][covered]
            assert [points for points, _ in table] == sorted({points for points, _ in table}, reverse=True)
            for t in mask_to_tiles(SUIT_MASK[v]):
                points = placement_points(covered + END_COUNT[t][v])
                holding = [p for p, tiles in table if tiles >> t & 1]
                assert holding == ([points] if points else [])
