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
