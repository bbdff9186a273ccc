"""The policy-guided search: its specs, legal and seeded play, and the policy's shortlist."""

from __future__ import annotations

import random

import pytest
from optional import require

torch = require("torch")

from agents import make_agent  # noqa: E402
from agents.guided_search import DEFAULT_CANDIDATES, DEFAULT_SIMULATIONS, GuidedSearchAgent  # noqa: E402
from agents.inference import DEFAULT_BETA  # noqa: E402
from agents.policy_net import PolicyNet, policy_payload  # noqa: E402
from allfives_env.core import State, make_rules  # noqa: E402

CONFIGS = [
    dict(rules="pagat", num_players=2),
    dict(rules="fives", num_players=3),
    dict(rules="pagat", num_players=4, partnerships=True),
]


@pytest.fixture(scope="module")
def policy(tmp_path_factory):
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("guided") / "policy.pt"
    torch.save(policy_payload(PolicyNet(32, 16), actor_only=True, steps=0), path)
    return path


def views(config: dict, seed: int, limit: int = 200):
    """(state, view) at each decision with a choice of a random-play match."""
    state = State(make_rules(**config, target=60), seed=seed)
    rng = random.Random(seed)
    while not state.finished and limit:
        view = state.view(state.to_act)
        if len(view.legal) > 1:
            yield state, view
            limit -= 1
        state.apply(rng.choice(view.legal))


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_plays_legal_actions_and_is_seeded(policy, config):
    a = make_agent(f"search:checkpoint:{policy}:8", seed=5)
    b = make_agent(f"search:checkpoint:{policy}:8", seed=5)
    checked = 0
    for _, view in views(config, 1, limit=15):
        action = a.act(view)
        assert action in view.legal
        assert b.act(view) == action
        checked += 1
    assert checked >= 5


def test_the_shortlist_is_the_policys_most_probable_actions(policy):
    agent = GuidedSearchAgent(policy, seed=0, candidates=2, min_prior=1.0)
    seen = 0
    for _, view in views(CONFIGS[0], 3, limit=30):
        legal, probs = agent.priors(view)
        assert sorted(view.legal) == legal and sum(probs) == pytest.approx(1.0)
        actions, kept = agent.shortlist(view)
        assert len(actions) == min(2, len(legal))
        assert min(kept) >= max((p for a, p in zip(legal, probs, strict=True) if a not in actions), default=0)
        seen += len(legal) > 2
    assert seen > 0


def test_one_candidate_plays_the_policys_choice(policy):
    guided = GuidedSearchAgent(policy, seed=0, candidates=1, min_prior=1.0)
    plain = make_agent(f"checkpoint:{policy}")
    for _, view in views(CONFIGS[1], 2, limit=20):
        assert guided.act(view) == plain.act(view)


def test_the_prior_weight_leans_the_choice_toward_the_policy(policy):
    plain = make_agent(f"checkpoint:{policy}")
    # A weight far above any rollout outcome: the policy's favourite always wins.
    leaning = GuidedSearchAgent(policy, seed=0, simulations=12, prior_weight=1e6)
    searched = GuidedSearchAgent(policy, seed=0, simulations=12, candidates=4)
    overruled = 0
    for _, view in views(CONFIGS[0], 4, limit=25):
        assert leaning.act(view) == plain.act(view)
        overruled += searched.act(view) != plain.act(view)
    assert overruled > 0  # so the agreement above is the weight's doing, not the rollouts'


def test_spec_grammar(policy):
    agent = make_agent(f"search:checkpoint:{policy}")
    assert isinstance(agent, GuidedSearchAgent)
    assert agent.simulations is None and agent.candidates == DEFAULT_CANDIDATES
    fixed = make_agent(f"search:checkpoint:{policy}:37")
    for config in CONFIGS:
        _, view = next(views(config, 1, limit=1))
        assert agent.budget(view) == DEFAULT_SIMULATIONS[view.rules.num_players]
        assert fixed.budget(view) == 37


@pytest.mark.parametrize(
    "spec, message",
    [
        ("search:trained:0", "positive whole number"),
        ("search:trained:many", "positive whole number"),
        ("search:trained:", "positive whole number"),
        ("search:checkpoint:", "needs the path"),
        ("search:checkpoint::12", "needs the path"),
        ("search:checkpoint:no/such/file.pt", "no/such/file.pt"),
    ],
)
def test_bad_specs_are_refused_by_name(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec)


def test_bad_options_are_refused(policy):
    with pytest.raises(ValueError, match="candidates"):
        GuidedSearchAgent(policy, candidates=0)
    for prior in (1.5, -0.1, float("nan"), "0.2", True):
        with pytest.raises(ValueError, match="min_prior"):
            GuidedSearchAgent(policy, min_prior=prior)
    for weight in (-1.0, float("inf"), float("nan"), "1.5", True):
        with pytest.raises(ValueError, match="prior_weight"):
            GuidedSearchAgent(policy, prior_weight=weight)
        with pytest.raises(ValueError, match="inference"):
            GuidedSearchAgent(policy, inference=weight)


def test_inference_weighs_the_guided_search_deals(policy):
    """Off by default; on, the shortlist's means are the deals' weighted means (the plain search's, tested there)."""
    assert GuidedSearchAgent(policy).inference == 0.0
    informed = GuidedSearchAgent(policy, seed=0, simulations=60, inference=DEFAULT_BETA)
    alike = GuidedSearchAgent(policy, seed=0, simulations=60)
    differ = 0
    for _, view in views(CONFIGS[0], 6, limit=40):
        actions, _ = informed.shortlist(view)
        if len(actions) < 2:
            continue
        informed.rng.seed(1)
        alike.rng.seed(1)
        differ += informed.evaluate(view, actions) != alike.evaluate(view, actions)
    assert differ > 0
