"""The policy's play-outs on the batched engine, and the guided search that values its candidates with them.

A play-out of a view with its true deal is replayed on the core, the policy
(``checkpoint:PATH``) choosing at every seat from that seat's own view: each
value must be the one the core's round ends with.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from optional import require

torch = require("torch")

from test_bots import positions  # noqa: E402
from test_guided_search import CONFIGS  # noqa: E402

from agents import make_agent  # noqa: E402
from agents.guided_search import NETWORK_CANDIDATES, NETWORK_DEALS, GuidedSearchAgent  # noqa: E402
from agents.heuristic import lacked_tiles  # noqa: E402
from agents.match_equity import NO_EQUITY, equity_bonus, equity_table  # noqa: E402
from agents.policy_net import PolicyNet, policy_payload  # noqa: E402
from agents.policy_playouts import NetworkPlayouts  # noqa: E402
from agents.search import outcome  # noqa: E402
from allfives_env.core import State  # noqa: E402


@pytest.fixture(scope="module")
def policy_file(tmp_path_factory):
    torch.manual_seed(3)
    path = tmp_path_factory.mktemp("playouts") / "policy.pt"
    torch.save(policy_payload(PolicyNet(32, 16), actor_only=True, steps=0), path)
    return path


def true_deal(state: State) -> tuple[np.ndarray, np.ndarray]:
    """The state's hands and boneyard left, as one deal of the arrays the search draws."""
    hands = np.zeros((1, 4), dtype=np.int32)
    hands[0, : len(state.hands)] = state.hands
    boneyards = np.zeros((1, max(1, state.rules.boneyard_size)), dtype=np.int8)
    left = state.boneyard[state.bone_pos :]
    boneyards[0, : len(left)] = left
    return hands, boneyards


def core_value(state: State, action: int, agent, side: int, equity: np.ndarray = NO_EQUITY) -> float:
    """``action``, then the rest of the round with ``agent`` at every seat, played by the core (a round's end short
    of the target valued by the ``equity`` table)."""
    reference = state.clone()
    reference.round_limit = len(reference.past) + 1  # stop where this round ends
    reference.apply(action)
    while not reference.finished:
        reference.apply(agent.act(reference.view(reference.to_act)))
    bonus = 0.0 if reference.winners else equity_bonus(equity, state.rules.target, reference.scores, side)
    return outcome(reference, side, tuple(state.scores)) + bonus


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
@pytest.mark.parametrize("target", [None, 40])  # a low target ends play-outs with the match, mid-round
@pytest.mark.parametrize("with_equity", [False, True], ids=["points", "equity"])
def test_a_play_out_is_the_round_the_core_plays_with_the_policy_at_every_seat(policy_file, config, target, with_equity):
    agent = make_agent(f"checkpoint:{policy_file}")
    playouts = NetworkPlayouts()
    rng = random.Random(2)
    checked = 0
    for state, view in positions(config, range(4), target=target):
        legal = sorted(view.legal)
        if len(legal) < 2 or rng.random() > 0.5:
            continue
        hands, boneyards = true_deal(state)
        equity = equity_table(state.rules) if with_equity else NO_EQUITY
        values = playouts.values(agent.actor, view, hands, boneyards, legal, equity)
        side = state.rules.side_of[state.to_act]
        expected = [core_value(state, action, agent, side, equity) for action in legal]
        np.testing.assert_allclose(values[0], expected, rtol=0, atol=1e-9)
        checked += 1
    assert checked > 10


def test_the_values_are_per_deal_and_per_action(policy_file):
    """Two deals of one view at once give each deal's values alone, in the actions' order."""
    agent = make_agent(f"checkpoint:{policy_file}")
    playouts = NetworkPlayouts()
    rng = random.Random(4)
    checked = 0
    for _, view in positions(CONFIGS[0], range(3)):
        legal = sorted(view.legal)
        if len(legal) < 3:
            continue
        search = GuidedSearchAgent(policy_file, seed=rng.randrange(100))
        hands, boneyards = search.deal_arrays(view, 2)
        both = playouts.values(agent.actor, view, hands, boneyards, legal)
        for d in range(2):
            alone = playouts.values(agent.actor, view, hands[d : d + 1], boneyards[d : d + 1], legal[::-1])
            np.testing.assert_array_equal(both[d], alone[0][::-1])
        checked += 1
    assert checked > 5


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_the_deals_agree_with_the_view(policy_file, config):
    search = GuidedSearchAgent(policy_file, seed=1)
    checked = 0
    for _, view in positions(config, range(1)):
        hands, boneyards = search.deal_arrays(view, 5)
        n = view.rules.num_players
        hidden = sum(1 << t for t in range(28)) & ~view.hand & ~view.layout.played
        for deal_hands, boneyard in zip(hands.tolist(), boneyards.tolist(), strict=True):
            assert deal_hands[view.seat] == view.hand
            assert [h.bit_count() for h in deal_hands[:n]] == list(view.hand_counts)
            pile = boneyard[: view.boneyard_left]
            union = sum(1 << t for t in pile)
            for seat in set(range(n)) - {view.seat}:
                assert not deal_hands[seat] & lacked_tiles(view.lacks[seat])
                assert not union & deal_hands[seat]
                union |= deal_hands[seat]
            assert union == hidden and len(set(pile)) == len(pile)
        checked += 1
    assert checked > 10


def test_the_guided_search_with_play_outs_is_seeded_legal_and_named(policy_file):
    spec = f"search:checkpoint:{policy_file}:net:8"
    a, b = make_agent(spec, seed=5), make_agent(spec, seed=5)
    assert a.network_deals == NETWORK_DEALS and a.name.endswith(":net")
    assert a.candidates == NETWORK_CANDIDATES  # more than the rollouts alone keep
    assert GuidedSearchAgent(policy_file, network_deals=8, candidates=2).candidates == 2
    plain = make_agent(f"search:checkpoint:{policy_file}:8", seed=5)
    assert plain.network_deals == 0
    differ = 0
    for _, view in positions(CONFIGS[0], range(2)):
        if len(view.legal) < 2:
            continue
        action = a.act(view)
        assert action in view.legal and b.act(view) == action
        differ += plain.act(view) != action
    assert differ > 0  # the play-outs change choices the rollouts alone would make


@pytest.mark.parametrize("with_equity", [False, True], ids=["points", "equity"])
def test_the_search_values_are_the_mean_of_both_estimates(policy_file, with_equity):
    agent = make_agent(f"checkpoint:{policy_file}")
    both = GuidedSearchAgent(policy_file, seed=0, simulations=24, network_deals=6, equity=with_equity)
    rollouts = GuidedSearchAgent(policy_file, seed=0, simulations=24, equity=with_equity)
    checked = 0
    for _, view in positions(CONFIGS[0], range(2)):
        legal = sorted(view.legal)
        if len(legal) < 2:
            continue
        both.rng.seed(checked)
        rollouts.rng.seed(checked)
        values = both.evaluate(view, legal)
        alone = rollouts.evaluate(view, legal)
        hands, boneyards = rollouts.deal_arrays(view, 6)  # the next deals of the same stream
        equity = rollouts.equity_table(view)
        assert equity.size == (51 * 51 if with_equity else 0)
        played = NetworkPlayouts().values(agent.actor, view, hands, boneyards, legal, equity).mean(0)
        np.testing.assert_allclose(values, (np.array(alone) + played) / 2, rtol=1e-12)
        checked += 1
    assert checked > 10


@pytest.mark.parametrize("deals", [-1, 2.5, "64", True])
def test_bad_network_deals_are_refused(policy_file, deals):
    with pytest.raises(ValueError, match="network_deals"):
        GuidedSearchAgent(policy_file, network_deals=deals)


@pytest.mark.parametrize("spec", ["search:net", "search:belief:net", "search:net:200"])
def test_play_outs_need_a_policy(spec):
    with pytest.raises(ValueError, match="net needs a policy"):
        make_agent(spec)
