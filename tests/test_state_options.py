"""State options beyond the rules: stopping after a number of rounds."""

import random

import pytest

from allfives_env.core import State, make_rules


def play_out(state: State, seed: int = 0) -> State:
    chooser = random.Random(seed)
    while not state.finished:
        state.apply(chooser.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_round_limit_stops_after_that_many_rounds(limit):
    for seed in range(20):
        state = play_out(State(make_rules("pagat", 3), seed=seed, round_limit=limit))
        full = play_out(State(make_rules("pagat", 3), seed=seed))
        if len(full.past) > limit:
            assert len(state.past) == limit
            assert state.winners == ()
            assert state.legal_actions() == []
            # The table is left as the last round ended: no next deal was made.
            assert state.round_index == limit - 1
        else:  # the target came first: an ordinary finished match
            assert state.winners


def test_round_limit_survives_clone():
    state = State(make_rules(), seed=4, round_limit=1)
    copy = play_out(state.clone())
    assert len(copy.past) == 1 and copy.finished


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "1"])
def test_bad_round_limit_is_refused(bad):
    with pytest.raises(ValueError, match="round_limit"):
        State(make_rules(), round_limit=bad)


def test_a_refused_later_deal_leaves_the_state_as_it_was():
    from allfives_env.core import DealError, IllegalActionError  # noqa: F401

    # Play round 0 of a seeded match to learn its moves, then give round 1 a
    # deal whose leader the rules refuse (pagat: the seat that went out leads).
    probe = State(make_rules(), seed=11)
    chooser = random.Random(0)
    while len(probe.past) == 0:
        probe.apply(chooser.choice(probe.legal_actions()))
    first = probe.past[0]
    if first.result.domino_seat is None:
        pytest.skip("this seed blocks round 0")
    next_deal = probe.deal
    wrong = type(next_deal)(next_deal.hands, next_deal.boneyard, 1 - first.result.domino_seat)
    state = State(make_rules(), seed=11, deals={0: first.deal, 1: wrong})
    for _seat, action in first.moves[:-1]:
        state.apply(action)
    before = (list(state.scores), list(state.hands), state.layout.end_total, list(state.moves), state.to_act)
    with pytest.raises(DealError, match="leader"):
        state.apply(first.moves[-1][1])
    after = (list(state.scores), list(state.hands), state.layout.end_total, list(state.moves), state.to_act)
    assert after == before
    assert state.past == () and state.round_index == 0
