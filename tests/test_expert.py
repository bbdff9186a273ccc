"""Expert iteration (``expert.rounds``): the search's labels, what they are made of, and runs that use them."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from train_snapshots import TINY, metrics_rows, run_differences, run_train, tb_view

from agents.belief import shipped_belief
from agents.guided_search import DEFAULT_CANDIDATES, GuidedSearchAgent
from agents.policy_agent import PolicyAgent
from agents.policy_net import PolicyNet, policy_payload, read_checkpoint
from allfives_env.core import State, make_rules
from allfives_env.views.action_features import action_features
from allfives_env.views.observation import encode_observation
from allfives_train.checkpoint import read_training_checkpoint
from allfives_train.expert import label_round, search_values
from allfives_train.iteration import FIELDS, load_labels

RULES = {"rules": "pagat", "num_players": 2, "target": 60}
EXPERT = ["--set", "expert.matches=2", "--set", "expert.light=2", "--set", "expert.deep=3", "--set",
          "expert.epochs=1", "--set", "eval.final_matches=0"]  # fmt: skip


@pytest.fixture(scope="module")
def guide(tmp_path_factory):
    torch.manual_seed(2)
    path = tmp_path_factory.mktemp("expert") / "guide.pt"
    torch.save(policy_payload(PolicyNet(32, 16), actor_only=True, steps=0), path)
    return path


def test_a_rounds_labels_do_not_depend_on_how_many_processes_made_them(guide):
    seeds, samples = [5, 6, 7], [50, 60, 70]
    one = label_round(guide, RULES, seeds, samples, workers=1, light=2, deep=3)
    two = label_round(guide, RULES, seeds, samples, workers=2, light=2, deep=3)
    for key in FIELDS:
        np.testing.assert_array_equal(one[key], two[key], err_msg=key)
    assert len(one["rows"]) == one["width"].sum() == len(one["values"]) and (one["width"] > 1).all()
    other = label_round(guide, RULES, seeds, [51, 60, 70], workers=1, light=2, deep=3)
    assert not np.array_equal(other["values"][:10], one["values"][:10])


@pytest.mark.parametrize("network_deals", [0, 2])
def test_labels_are_the_guided_searchs_means_on_the_views_of_the_matches_played(guide, network_deals):
    """Replaying the first match by hand: the same views, rows and values as the round's first labels."""
    labels = label_round(guide, RULES, [9], [90], workers=1, light=2, deep=3, network_deals=network_deals)
    player = PolicyAgent(guide, sample=True)
    search = GuidedSearchAgent(
        guide, candidates=DEFAULT_CANDIDATES, belief=shipped_belief(), network_deals=network_deals
    )
    player.reset(90)
    search.reset(91)
    state, at, decisions = State(make_rules(**RULES), seed=9), 0, 0
    while not state.finished:
        view = state.view(state.to_act)
        if len(view.legal) > 1:
            legal, values = search_values(search, view, 2, 3)
            np.testing.assert_array_equal(labels["obs"][decisions], encode_observation(view))
            np.testing.assert_array_equal(labels["rows"][at : at + len(legal)], action_features(view)[legal])
            np.testing.assert_allclose(labels["values"][at : at + len(legal)], values, rtol=1e-6)
            at += len(legal)
            decisions += 1
        state.apply(player.act(view))
    assert decisions == len(labels["width"]) > 10


def test_candidates_get_the_deep_deals_and_the_rest_the_light_ones(guide):
    """With deep deals, each candidate's label mixes both samples; the others keep their light means."""
    state = State(make_rules(**RULES), seed=3)
    rng = random.Random(0)
    while not (len(state.legal_actions()) > 4 and not state.layout.empty):
        state.apply(rng.choice(state.legal_actions()))
    view = state.view(state.to_act)
    search = GuidedSearchAgent(guide, seed=4)
    search.candidates, search.min_prior = 2, 1.0
    light_only = search_values(search, view, 5, 0)[1]
    search.reset(4)
    legal, mixed = search_values(search, view, 5, 50)
    candidates = search.shortlist(view)[0]
    assert len(candidates) == 2
    for i, action in enumerate(legal):
        if action not in candidates:
            assert mixed[i] == light_only[i]
    assert any(mixed[legal.index(a)] != light_only[legal.index(a)] for a in candidates)


def test_rounds_run_after_the_other_stages_and_a_run_extended_by_a_round_ends_like_a_straight_one(tmp_path):
    assert run_train("--config", TINY, "--set", f"run.dir={tmp_path / 'a'}", "--set", "expert.rounds=2", *EXPERT) == 0
    assert run_train("--config", TINY, "--set", f"run.dir={tmp_path / 'b'}", "--set", "expert.rounds=1", *EXPERT) == 0
    assert read_training_checkpoint(tmp_path / "b" / "tiny" / "checkpoint.pt")["training"]["experted"] == 1
    assert run_train("--resume", tmp_path / "b" / "tiny", "--set", "expert.rounds=2") == 0
    a, b = tmp_path / "a" / "tiny", tmp_path / "b" / "tiny"
    assert read_training_checkpoint(a / "checkpoint.pt")["training"]["experted"] == 2
    for k in (1, 2):
        first, second = load_labels(a / "expert" / f"labels{k}.npz"), load_labels(b / "expert" / f"labels{k}.npz")
        assert all(np.array_equal(first[key], second[key]) for key in FIELDS)
        assert (
            read_checkpoint(a / "expert" / f"guide{k}.pt")["weights_sha256"]
            == read_checkpoint(b / "expert" / f"guide{k}.pt")["weights_sha256"]
        )
    assert run_differences(a, b) == []
    rows = metrics_rows(b, "expert.csv")
    assert [r["round"] for r in rows] == ["1", "2"]
    assert rows[1]["labels_total"] == str(sum(int(r["labelled"]) for r in rows))
    assert [step for step, _ in tb_view(b, "tb/expert")["expert/labelled"]] == [1, 2]
    # each round's guide is the network the round started from: round 2's is round 1's result
    guide2 = read_checkpoint(a / "expert" / "guide2.pt")["weights"]
    guide1 = read_checkpoint(a / "expert" / "guide1.pt")["weights"]
    assert any(not torch.equal(guide1[k], guide2[k]) for k in guide1)


def test_expert_rounds_out_of_time_say_so_and_a_resume_takes_them(tmp_path, capsys):
    short = ["--set", "train.total_steps=10", "--set", "expert.rounds=1", "--set", "eval.final_matches=2"]
    assert run_train("--config", TINY, "--set", f"run.dir={tmp_path}", *EXPERT[:8], *short,
                     "--set", "run.max_minutes=0.00001") == 0  # fmt: skip
    run = tmp_path / "tiny"
    assert (
        (run / "eval.md")
        .read_text()
        .startswith("**Stopped early**: run.max_minutes=1e-05 was reached after 0 of 1 rounds of expert iteration")
    )
    assert f"python train.py --resume {run}" in capsys.readouterr().out
    assert run_train("--resume", run, "--set", "run.max_minutes=null") == 0
    assert read_training_checkpoint(run / "checkpoint.pt")["training"]["experted"] == 1
