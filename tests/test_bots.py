"""The baseline bots: legal moves only, greedy's choice, determinism, no peeking, the sampler and the registry."""

from __future__ import annotations

import random
import sys
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents import AGENT_NAMES, GreedyAgent, HeuristicAgent, RandomAgent, SearchAgent, make_agent
from agents.heuristic import lacked_tiles
from agents.registry import AgentSpec, parse_agent_spec
from agents.search import SamplingError, _fill_exact, play_out, rollout_action, sample_hidden
from allfives_env.core import DRAW, PIPS, Deal, State, make_rules, tile_from_text
from allfives_env.core.tiles import SUIT_MASK, mask_to_tiles

CONFIGS = [
    dict(rules="pagat", num_players=2),
    dict(rules="pagat", num_players=3),
    dict(rules="pagat", num_players=4),
    dict(rules="fives", num_players=2),
    dict(rules="fives", num_players=2, opening="descending"),
    dict(rules="fives", num_players=3),
    dict(rules="fives", num_players=4),
    dict(rules="fives", num_players=4, partnerships=True),
]
ALL_TILES = (1 << 28) - 1


def bots(seed: int = 0) -> list:
    return [RandomAgent(seed), GreedyAgent(seed), HeuristicAgent(seed), SearchAgent(seed, simulations=6)]


def positions(config: dict, seeds: range, policy_seed: int = 0, target: int | None = None):
    """(state, view of the acting seat) at every decision of random-play matches."""
    rng = random.Random(policy_seed)
    for seed in seeds:
        state = State(make_rules(**config, target=target), seed=seed)
        while not state.finished:
            yield state, state.view(state.to_act)
            state.apply(rng.choice(state.legal_actions()))


def public(view) -> tuple:
    """Everything in a view, the layout compared by content."""
    layout = view.layout
    fields = tuple(value for name, value in view._asdict().items() if name != "layout")
    return fields + (tuple(layout.values), tuple(layout.counts), layout.played, layout.spinner, layout.lead)


def hidden_swapped(state: State, rng: random.Random) -> State:
    """A copy of ``state`` whose tiles unseen by the acting seat are dealt again, all counts kept."""
    seat = state.to_act
    other = state.clone()
    others = [s for s in range(state.rules.num_players) if s != seat]
    unseen = [t for s in others for t in mask_to_tiles(state.hands[s])] + list(state.boneyard[state.bone_pos :])
    rng.shuffle(unseen)
    for s in others:
        count = state.hands[s].bit_count()
        other.hands[s] = sum(1 << t for t in unseen[:count])
        unseen = unseen[count:]
    other.boneyard = state.boneyard[: state.bone_pos] + tuple(unseen)
    other._legal = None
    return other


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_every_bot_plays_only_legal_actions(config):
    players = bots(seed=3)
    checked = 0
    for _, view in positions(config, range(4), target=100):
        for bot in players:
            assert bot.act(view) in view.legal, (bot, view)
        checked += len(view.legal) > 1
    assert checked > 50


def test_greedy_takes_the_most_points_in_a_built_position():
    # Lead 3-6 (9, nothing). Seat 1 can score 15 with 6-6 on the 6 end; 6-4 and 3-2 score nothing.
    tiles = [tile_from_text(t) for t in ("3-6", "0-0", "0-1", "0-2", "1-1", "1-2", "0-3", "0-4", "0-5")]
    other = [tile_from_text(t) for t in ("6-6", "6-4", "3-2", "1-4", "1-5", "2-2", "2-4", "2-5", "4-4")]
    rest = [t for t in range(28) if t not in tiles + other]
    deal = Deal((tuple(tiles), tuple(other)), tuple(rest), 0)
    state = State(make_rules(), deals={0: deal})
    state.apply(tile_from_text("3-6") * 4)
    view = state.view(1)
    assert GreedyAgent(0).act(view) == tile_from_text("6-6") * 4 + 1  # E: the 6 end


def test_greedy_choice_has_the_most_points_then_the_most_pips():
    greedy = GreedyAgent(0)
    for _, view in positions(dict(rules="pagat", num_players=2), range(3)):
        choice = greedy.act(view)
        if choice >= DRAW:
            assert view.legal == (choice,)
            continue

        def key(a, view=view):
            layout = view.layout.copy()
            layout.place(a >> 2, a & 3)
            total = layout.end_total
            return (total if total % 5 == 0 else 0, PIPS[a >> 2])

        assert key(choice) == max(key(a) for a in view.legal)


@pytest.mark.parametrize("make", [lambda s: HeuristicAgent(s), lambda s: SearchAgent(s, simulations=20)])
def test_fixed_seed_bots_are_deterministic(make):
    views = [view for _, view in positions(dict(rules="pagat", num_players=3), range(2)) if len(view.legal) > 1]
    first, second = make(11), make(11)
    choices = [first.act(v) for v in views]
    assert choices == [second.act(v) for v in views]
    first.reset(11)
    assert choices == [first.act(v) for v in views]


@pytest.fixture(scope="module")
def guided_search_spec(tmp_path_factory) -> str | None:
    """``search:checkpoint:PATH:12`` of a small untrained policy (None without torch)."""
    try:
        import torch
    except ModuleNotFoundError:
        return None
    from agents.policy_net import PolicyNet, policy_payload

    torch.manual_seed(3)
    path = tmp_path_factory.mktemp("guided") / "policy.pt"
    torch.save(policy_payload(PolicyNet(32, 16), actor_only=True, steps=0), path)
    return f"search:checkpoint:{path}:12"


@pytest.mark.parametrize("config", CONFIGS[:4] + CONFIGS[7:], ids=lambda c: "-".join(str(v) for v in c.values()))
def test_no_bot_reads_hidden_tiles(config, guided_search_spec):
    """Dealing again the tiles the acting seat cannot see never changes its view or any bot's choice."""
    rng = random.Random(5)
    changed = compared = 0
    makers = [RandomAgent, GreedyAgent, HeuristicAgent, lambda s: SearchAgent(s, simulations=12),
              lambda s: make_agent("search:belief:12", seed=s)]  # fmt: skip
    if guided_search_spec is not None:  # the policy-guided search
        makers.append(lambda s: make_agent(guided_search_spec, seed=s))
    for state, view in positions(config, range(2), target=80):
        if len(view.legal) < 2:
            continue
        twin = hidden_swapped(state, rng)
        twin_view = twin.view(twin.to_act)
        assert public(twin_view) == public(view)
        changed += twin.hands != state.hands
        for make in makers:
            a, b = make(7), make(7)
            assert a.act(view) == b.act(twin_view)
        compared += 1
    assert compared > 20 and changed > compared // 2


def check_sample(view, hands, boneyard) -> None:
    assert hands[view.seat] == view.hand
    assert [h.bit_count() for h in hands] == list(view.hand_counts)
    assert len(boneyard) == view.boneyard_left == len(set(boneyard))
    everything = view.layout.played
    for hand in hands:
        assert not everything & hand
        everything |= hand
    for tile in boneyard:
        assert not everything >> tile & 1
        everything |= 1 << tile
    assert everything == ALL_TILES
    for seat, lacks in enumerate(view.lacks):
        if seat != view.seat:
            for v in range(7):
                if lacks >> v & 1:
                    assert not hands[seat] & SUIT_MASK[v], (seat, v)


@settings(max_examples=60, deadline=None)
@given(
    config=st.sampled_from(CONFIGS),
    seed=st.integers(0, 10_000),
    moves=st.integers(0, 60),
    sample_seed=st.integers(0, 2**32),
)
def test_sampler_respects_counts_and_lacks(config, seed, moves, sample_seed):
    state = State(make_rules(**config), seed=seed)
    greedy = GreedyAgent(seed)  # greedy play draws and passes often, so lacks are common
    for _ in range(moves):
        if state.finished:
            break
        state.apply(greedy.act(state.view(state.to_act)))
    if state.finished:
        return
    view = state.view(state.to_act)
    rng = random.Random(sample_seed)
    check_sample(view, *sample_hidden(view, rng))
    others = [s for s in range(len(view.hand_counts)) if s != view.seat]
    hidden = ALL_TILES & ~view.hand & ~view.layout.played
    allowed = {s: hidden & ~lacked_tiles(view.lacks[s]) for s in others}
    check_sample(view, *_fill_exact(view, rng, hidden, allowed, others))


def test_sampler_refuses_a_view_no_deal_agrees_with():
    for _, view in positions(dict(rules="pagat", num_players=2), range(1)):
        if view.hand_counts[1 - view.seat] > view.boneyard_left and view.layout.lead >= 0:
            lacks = list(view.lacks)
            lacks[1 - view.seat] = 0b1111111  # the opponent holds tiles but could hold none of them
            with pytest.raises(SamplingError, match="lacks"):
                sample_hidden(view._replace(lacks=tuple(lacks)), random.Random(0))
            return
    pytest.fail("no suitable position found")


@pytest.mark.parametrize("guarded", [True, False])
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_rollouts_from_the_view_end_the_round_as_the_true_state_does(config, guarded):
    """A rollout from a view dealt the true hidden tiles ends the round exactly as the real state does."""
    rng = random.Random(2)
    checked = 0
    for state, view in positions(config, range(2), target=120):
        if rng.random() > 0.2 or view.layout.lead < 0:  # a rollout starts after the searched action
            continue
        play = State.from_view(view, state.hands, state.boneyard[state.bone_pos :], round_limit=1)
        play_out(play, guarded)
        engine = state.clone()
        while not engine.finished and engine.round_index == state.round_index:
            legal = engine.legal_actions()
            if legal[0] >= DRAW:
                engine.apply(legal[0])
            else:
                fit = sum(1 << t for t in {a >> 2 for a in legal})
                answers = engine.hands[(engine.to_act + 1) % engine.rules.num_players]
                engine.apply(rollout_action(engine.layout, fit, answers, guarded))
        assert play.finished and len(play.past) == 1
        assert play.scores == engine.scores, (view.seat, state)
        assert play.winners == engine.winners
        checked += 1
    assert checked > 10


def test_search_budget_options_are_checked():
    with pytest.raises(ValueError, match="simulations"):
        SearchAgent(simulations=0)
    with pytest.raises(ValueError, match="time_limit"):
        SearchAgent(time_limit=-1)
    with pytest.raises(ValueError, match="rollout"):
        SearchAgent(rollout="perfect")
    with pytest.raises(ValueError, match="heuristic weights"):
        HeuristicAgent(weights={"nonsense": 1.0})


def test_make_agent_builds_every_bot():
    assert isinstance(make_agent("random"), RandomAgent)
    assert isinstance(make_agent("greedy", seed=1), GreedyAgent)
    assert isinstance(make_agent("heuristic"), HeuristicAgent)
    assert make_agent("search:37").simulations == 37
    assert make_agent("search", seed=4).rng.random() == SearchAgent(seed=4).rng.random()
    assert {"random", "greedy", "heuristic", "search", "search:N", "checkpoint:PATH", "trained"} <= set(AGENT_NAMES)


BAD_SPECS = ["", "randm", "search:", "search:0", "search:-3", "search:many", "greedy:2", None, 3, "search:²", "search:٣",
             "search:+5", "search: 5", "search:1_000", "search:" + "9" * 4301, "search:trained:²",
             "search:trained:" + "9" * 4301]  # fmt: skip


@pytest.mark.parametrize("spec", BAD_SPECS, ids=lambda spec: repr(spec)[:24])
def test_make_agent_refuses_unknown_specs(spec):
    with pytest.raises(ValueError, match="allowed|search:N|positive") as caught:
        make_agent(spec)
    assert "invalid literal" not in str(caught.value) and "Exceeds the limit" not in str(caught.value)


def test_a_spec_is_read_into_its_parts_by_one_parser():
    assert parse_agent_spec(" greedy ") == AgentSpec("greedy")
    assert parse_agent_spec("search:0040") == AgentSpec("search", simulations=40)
    assert parse_agent_spec("search:trained") == AgentSpec("guided")
    assert parse_agent_spec("search:trained:400") == AgentSpec("guided", simulations=400)
    assert parse_agent_spec("search:checkpoint:a:b.pt:12") == AgentSpec("guided", simulations=12, path="a:b.pt")
    assert parse_agent_spec("search:checkpoint:x.pt:²") == AgentSpec("guided", path="x.pt:²")
    assert parse_agent_spec("checkpoint:runs/p.pt") == AgentSpec("checkpoint", path="runs/p.pt")
    assert parse_agent_spec("trained") == AgentSpec("trained")
    assert parse_agent_spec("rllib:runs/r") == AgentSpec("rllib", path="runs/r")


def test_make_agent_hands_policies_to_the_policy_module(monkeypatch):
    calls = []
    fake = types.ModuleType("agents.policy_agent")
    fake.load_policy_agent = lambda path, seed: calls.append((path, seed)) or RandomAgent(seed)
    monkeypatch.setitem(sys.modules, "agents.policy_agent", fake)
    monkeypatch.setitem(sys.modules, "torch", sys.modules.get("torch") or types.ModuleType("torch"))
    make_agent("checkpoint:runs/best.pt", seed=3)
    make_agent("trained", seed=4)
    assert calls == [("runs/best.pt", 3), (None, 4)]


@pytest.mark.parametrize("spec", ["checkpoint:best.pt", "trained"])
def test_make_agent_says_to_install_the_train_extra_without_torch(monkeypatch, spec):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now fails as it does where torch is missing
    with pytest.raises(ValueError, match=r"install the train extra: pip install -e '\.\[train\]'"):
        make_agent(spec)


@pytest.mark.parametrize(
    "rules, opening, expect_required",
    [("fives", "winners_choice", True), ("fives", "descending", True), ("pagat", None, False)],
)
def test_a_state_built_from_the_leaders_view_keeps_the_lead_requirement(rules, opening, expect_required):
    """The view says which tile the lead must be; a determinized state offers the leader the same actions."""
    for seed in range(6):
        state = State(make_rules(rules, 3, opening=opening), seed=seed)
        leader = state.view(state.to_act)
        others = [state.view(s) for s in range(3) if s != state.to_act]
        assert (leader.required_lead >= 0) == expect_required
        assert all(v.required_lead == -1 for v in others)  # what the leader must lead is its own business
        if expect_required:
            assert leader.legal == (leader.required_lead * 4,)
        rebuilt = State.from_view(leader, state.hands, state.boneyard)
        assert rebuilt.legal_actions() == state.legal_actions()
        state.apply(leader.legal[0])
        assert state.view(state.to_act).required_lead == -1  # once led, nothing is required


def random_layout(rules, seed: int, moves: int):
    """The layout after up to ``moves`` random legal actions of a seeded match (an odd ``moves`` keeps it empty)."""
    state = State(rules, seed=seed)
    rng = random.Random(seed)
    for _ in range(moves):
        if state.finished or state.layout.empty and moves % 2:
            break
        state.apply(rng.choice(state.legal_actions()))
    return state.layout


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 60), st.integers(0, 2**28 - 1))
def test_rollout_best_answer_is_the_best_placement_of_any_tile(seed, moves, hand):
    """The rollouts' fast reply table against its definition: every tile of the hand at every end it fits."""
    from agents.search import best_answer
    from allfives_env.core.scoring import POINTS_FOR_TOTAL

    layout = random_layout(make_rules("pagat", 3), seed, moves)
    if layout.empty:
        return
    expected = max(
        (POINTS_FOR_TOTAL[layout.end_total_after(t, s)] for t in mask_to_tiles(hand) for s in layout.fits(t)),
        default=0,
    )
    assert best_answer(layout, hand) == expected


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 60), st.integers(0, 2**28 - 1), st.integers(0, 2**28 - 1))
def test_guarded_rollout_choice_is_its_definition(seed, moves, fit, reply_hand):
    """The guarded rollout policy, which skips hopeless placements, against its plain definition: the best
    (points now minus the next seat's best answer, then pips, then the lowest action id) over every placement."""
    from agents.search import best_answer, guarded_placement
    from allfives_env.core.scoring import POINTS_FOR_TOTAL

    layout = random_layout(make_rules("pagat", 2), seed, moves)
    fit &= ~layout.played & layout.playable_mask()
    reply_hand &= ~layout.played & ~fit
    if layout.empty or not fit:
        return

    def key(action: int) -> tuple[int, int, int]:
        tile, slot = divmod(action, 4)
        after = layout.copy()
        points = POINTS_FOR_TOTAL[after.place(tile, slot)]
        return points - best_answer(after, reply_hand), PIPS[tile], -action

    placements = [t * 4 + s for t in mask_to_tiles(fit) for s in layout.fits(t)]
    assert guarded_placement(layout, fit, reply_hand) == max(placements, key=key)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 60), st.integers(0, 2**28 - 1), st.sampled_from([0, 120, 245]))
def test_heuristic_best_reply_is_the_best_placement_of_each_tile(seed, moves, tiles, score):
    """The heuristic's fast reply table against its definition: every tile tried at every end it fits."""
    from agents.heuristic import WIN, best_reply
    from allfives_env.core.scoring import POINTS_FOR_TOTAL

    layout = random_layout(make_rules("pagat", 2), seed, moves)
    expected = []
    for tile in mask_to_tiles(tiles):
        best = max((POINTS_FOR_TOTAL[layout.end_total_after(tile, s)] for s in layout.fits(tile)), default=0)
        if best and not layout.empty:
            expected.append(best + WIN if score + best >= 250 else best)
    assert sorted(best_reply(layout, tiles, score, 250)) == sorted(expected)
