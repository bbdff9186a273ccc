"""The search's model of play: which placements it reads, the weight it gives a deal, and that it informs."""

from __future__ import annotations

import math
import random

import pytest

from agents import make_agent
from agents.heuristic import ALL_TILES
from agents.inference import DEFAULT_BETA, PlayModel
from agents.search import SearchAgent, outcome, play_out, sample_hidden
from allfives_env.core import DRAW, PASS, State, make_rules
from allfives_env.core.layout import Layout
from allfives_env.core.scoring import placement_points
from allfives_env.core.tiles import mask_to_tiles

CONFIGS = [
    dict(rules="pagat", num_players=2),
    dict(rules="fives", num_players=3),
    dict(rules="pagat", num_players=4, partnerships=True),
]


def positions(config: dict, seed: int, bot: str = "greedy"):
    """(true hands, view) at each decision with a choice of a seeded match between ``bot``s."""
    state = State(make_rules(**config), seed=seed)
    bots = [make_agent(bot, seed=seed * 10 + s) for s in range(state.rules.num_players)]
    while not state.finished:
        view = state.view(state.to_act)
        if len(view.legal) > 1:
            yield list(state.hands), view
        state.apply(bots[state.to_act].act(view))


def weight_by_definition(view, hands: list[int], beta: float) -> float:
    """The model's weight written plainly: replay the round and score every choice each counted placement had."""
    moves = view.moves
    weight = 1.0
    for index, (seat, action) in enumerate(moves):
        if action in (DRAW, PASS) or seat == view.seat:
            continue
        layout = Layout()
        for _, earlier in moves[:index]:
            if earlier < DRAW:
                layout.place(earlier >> 2, earlier & 3)
        drew_later = any(s == seat and a == DRAW for s, a in moves[index + 1 :])
        just_drew = index > 0 and moves[index - 1] == (seat, DRAW)
        if layout.empty or drew_later or just_drew:
            continue
        hand = hands[seat]
        for s, a in moves[index:]:
            if s == seat and a < DRAW:
                hand |= 1 << (a >> 2)
        choices = [(t, slot) for t in mask_to_tiles(hand) for slot in layout.fits(t)]
        weight /= sum(math.exp(beta * placement_points(layout.end_total_after(t, slot))) for t, slot in choices)
    return weight


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c['rules']}{c['num_players']}")
def test_weight_is_its_definition(config):
    rng = random.Random(7)
    checked = counted = 0
    for seed in range(3):
        for _, view in positions(config, seed):
            model = PlayModel(view)
            counted += bool(model.placements)
            for _ in range(3):
                hands, _ = sample_hidden(view, rng)
                assert model.weight(hands) == pytest.approx(weight_by_definition(view, hands, DEFAULT_BETA), rel=1e-9)
                checked += 1
    assert checked > 100 and counted > 20


def test_a_seat_that_passed_up_points_probably_lacked_them():
    """On positions from real play, the weighted deals guess the other hands' tiles better than uniform ones."""
    rng = random.Random(0)
    errors = {0.0: [], DEFAULT_BETA: []}
    for seed in range(12):
        for truth, view in list(positions(CONFIGS[0], 100 + seed, bot="heuristic"))[::3]:
            if not PlayModel(view).placements:
                continue
            deals = [sample_hidden(view, rng)[0] for _ in range(60)]
            other = 1 - view.seat
            hidden = mask_to_tiles(ALL_TILES & ~view.layout.played & ~view.hand)
            for beta, found in errors.items():
                model = PlayModel(view, beta)
                weights = [model.weight(hands) for hands in deals]
                for tile in hidden:
                    held = sum(w for w, hands in zip(weights, deals, strict=True) if hands[other] >> tile & 1)
                    found.append((held / sum(weights) - (truth[other] >> tile & 1)) ** 2)
    uniform, weighted = (sum(errors[b]) / len(errors[b]) for b in (0.0, DEFAULT_BETA))
    assert len(errors[0.0]) > 1000
    assert weighted < uniform - 0.002, (weighted, uniform)


def test_zero_beta_reads_nothing_and_bad_beta_is_refused():
    _, view = next(iter(positions(CONFIGS[0], 3)))
    assert PlayModel(view, 0.0).placements == []
    assert PlayModel(view, 0.0).weight([0, 0]) == 1.0
    for bad in (-0.1, math.inf, math.nan, True, "0.3", None):
        with pytest.raises(ValueError, match="beta="):
            PlayModel(view, bad)
        with pytest.raises(ValueError, match="inference="):
            SearchAgent(inference=bad)


def test_search_means_are_weighted_by_the_model():
    """The search's value of each action is its rollouts' outcomes averaged with the deals' weights."""
    assert SearchAgent().inference == 0.0  # ``search``, the ladder's fixed reference, weighs every deal alike
    views = [view for _, view in positions(CONFIGS[0], 5) if len(PlayModel(view).placements) > 1][:4]
    assert views
    for view in views:
        bot = SearchAgent(seed=3, simulations=30, inference=DEFAULT_BETA)
        rng = random.Random()
        rng.setstate(bot.rng.getstate())
        model = PlayModel(view)
        totals, weights = [0.0] * len(view.legal), []
        for _ in range(30 // len(view.legal)):
            hands, boneyard = sample_hidden(view, rng)
            weights.append(model.weight(hands))
            for i, action in enumerate(view.legal):
                play = State.from_view(view, hands, boneyard, round_limit=1)
                play.apply(action)
                play_out(play)
                totals[i] += weights[-1] * outcome(play, view.seat, view.scores)
        assert len(set(weights)) > 1
        assert bot.evaluate(view) == pytest.approx([total / sum(weights) for total in totals])
