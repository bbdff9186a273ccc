"""The search's compiled play-outs (agents.rollout) against the core's play-out, move for move, and the search's
choices against the search as it was written on the core.

``reference_evaluate`` is the search's evaluation written on the core alone:
the deals from ``sample_hidden`` on the same generator, each candidate
applied to a core ``State`` and played out by ``play_out``. The compiled
search must give the same values to the last bit, so it makes the same
choices on the same seeds.
"""

from __future__ import annotations

import random

import pytest
from test_bots import CONFIGS, positions

from agents.guided_search import GuidedSearchAgent
from agents.inference import PlayModel
from agents.match_equity import NO_EQUITY, equity_bonus, equity_table
from agents.rollout import logged_play_out
from agents.search import SearchAgent, outcome, play_out, playout_values, sample_hidden
from allfives_env.core import State


def searched_states(config: dict, seeds: range, target: int | None, every: float = 0.3):
    """(state, action) as the search plays them out: a sampled deal of a view's hidden tiles, a legal action."""
    rng = random.Random(7)
    for _, view in positions(config, seeds, target=target):
        if rng.random() > every:
            continue
        hands, boneyard = sample_hidden(view, rng)
        yield State.from_view(view, hands, boneyard, round_limit=1), rng.choice(view.legal)


@pytest.mark.parametrize("guarded", [True, False])
@pytest.mark.parametrize("target", [None, 60])  # a low target ends many play-outs in the middle of the round
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_play_outs_make_the_cores_moves_and_end_where_it_does(config, target, guarded):
    checked = ended_mid_round = 0
    for state, action in searched_states(config, range(4), target):
        moves, scores, won = logged_play_out(state, action, guarded)
        reference = state.clone()
        reference.apply(action)
        played_before = len(reference.moves)
        play_out(reference, guarded)
        assert moves == reference.moves[played_before:]
        assert scores == reference.scores
        assert [side for side in range(4) if won >> side & 1] == list(reference.winners)
        checked += 1
        ended_mid_round += bool(won) and reference.past[-1].result.end == "target"
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


def reference_evaluate(
    view, rng: random.Random, actions, deals: int, guarded: bool, inference: float, equity=NO_EQUITY
) -> list[float]:
    """The search's mean outcomes, written on the core alone (the search as it was before it was compiled); with an
    ``equity`` table, a round's end short of the target adds its match chance."""
    side = view.rules.side_of[view.seat]
    model = PlayModel(view, inference) if inference else None
    totals, weights = [0.0] * len(actions), 0.0
    for _ in range(deals):
        hands, boneyard = sample_hidden(view, rng)
        weight = model.weight(hands) if model else 1.0
        root = State.from_view(view, hands, boneyard, round_limit=1)
        for i, action in enumerate(actions):
            play = root.clone()
            play.apply(action)
            play_out(play, guarded)
            bonus = 0.0 if play.winners else equity_bonus(equity, view.rules.target, play.scores, side)
            totals[i] += weight * (outcome(play, side, view.scores) + bonus)
        weights += weight
    return [total / weights for total in totals]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_search_values_and_choices_equal_the_core_searchs(config):
    checked = 0
    for index, (_, view) in enumerate(positions(config, range(2), target=150)):
        if len(view.legal) < 2 or index % 3:
            continue
        rollout = ("guarded", "greedy")[index % 2]
        inference = 0.3 if index % 4 == 0 else 0.0
        agent = SearchAgent(seed=index, simulations=24, rollout=rollout, inference=inference)
        values = agent.evaluate(view)
        deals = max(1, 24 // len(view.legal))
        expected = reference_evaluate(view, random.Random(index), view.legal, deals, rollout == "guarded", inference)
        assert values == expected
        agent.reset(index)
        assert agent.act(view) == view.legal[expected.index(max(expected))]
        checked += 1
    assert checked > 10


@pytest.mark.parametrize(
    "config",
    [
        dict(rules="pagat", num_players=2),
        dict(rules="fives", num_players=3),
        dict(rules="fives", num_players=4, partnerships=True),
    ],
    ids=str,
)
def test_search_values_with_match_equity_equal_the_core_searchs(config):
    """A round's end short of the target adds the table's match chance, to the bit, and changes some choices."""
    checked = changed = 0
    for index, (_, view) in enumerate(positions(config, range(3), target=150)):
        if len(view.legal) < 2 or index % 2:
            continue
        agent = SearchAgent(seed=index, simulations=30, equity=True)
        values = agent.evaluate(view)
        deals = max(1, 30 // len(view.legal))
        table = equity_table(view.rules)
        assert table.size
        assert values == reference_evaluate(view, random.Random(index), view.legal, deals, True, 0.0, table)
        points = reference_evaluate(view, random.Random(index), view.legal, deals, True, 0.0)
        changed += values.index(max(values)) != points.index(max(points))
        checked += 1
    assert checked > 10 and changed > 0


@pytest.mark.parametrize("config", CONFIGS[:3], ids=lambda c: "-".join(str(v) for v in c.values()))
def test_guided_search_choices_equal_the_core_searchs(config):
    checked = 0
    for index, (_, view) in enumerate(positions(config, range(1), target=150)):
        if len(view.legal) < 3 or index % 2:
            continue
        agent = GuidedSearchAgent(seed=index, simulations=40, candidates=2, min_prior=0.5)
        actions, _ = agent.shortlist(view)
        if len(actions) < 2:
            continue
        deals = max(1, 40 // len(actions))
        expected = reference_evaluate(view, random.Random(index), actions, deals, True, 0.0)
        assert agent.act(view) == actions[expected.index(max(expected))]
        checked += 1
    assert checked > 5


def test_a_play_out_of_a_finished_match_stops_with_its_winner():
    for state, action in searched_states(dict(rules="pagat", num_players=2), range(2), target=30, every=1.0):
        reference = state.clone()
        reference.apply(action)
        if reference.finished and reference.winners:
            moves, scores, won = logged_play_out(state, action)
            assert moves == [] and scores == reference.scores and won == 1 << reference.winners[0]
            return
    pytest.fail("no searched action ended the match")
