"""The belief model: its rows read only the view, its deals never contradict it, its file, and what it predicts."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from test_bots import CONFIGS, check_sample, hidden_swapped, positions, public

from agents.belief import (
    SHIPPED,
    BeliefError,
    Dealer,
    deals_agree,
    load_belief,
    places_of,
    save_belief,
    shipped_belief,
    sinkhorn,
    tile_features,
    true_places,
)
from agents.registry import make_agent, parse_agent_spec
from allfives_env.core import State, make_rules

ALL_TILES = (1 << 28) - 1


def labelled(config: dict, seeds: range, bots=("heuristic", "greedy")):
    """(view, true place of each hidden tile, features) at the decisions with a choice of bot matches."""
    rules = make_rules(**config)
    for seed in seeds:
        state = State(rules, seed=seed)
        agents = [make_agent(bots[s % len(bots)], seed * 10 + s) for s in range(rules.num_players)]
        while not state.finished:
            view = state.view(state.to_act)
            if len(view.legal) > 1:
                features = tile_features(view)
                boneyard = sum(1 << t for t in state.boneyard[state.bone_pos :])
                yield view, true_places(view, state.hands, boneyard, features[0]), features
            state.apply(agents[state.to_act].act(view))


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_deals_respect_hand_sizes_the_boneyard_the_layout_and_every_known_lack(config):
    model = shipped_belief()
    rng = random.Random(3)
    checked = lacking = 0
    for _, view in positions(config, range(3), target=120):
        if len(view.legal) < 2:
            continue
        dealer = model.dealer(view)
        hands, boneyards = dealer.deals(rng, 30)
        n = len(view.hand_counts)
        for h, b in zip(hands, boneyards, strict=True):
            deal = ([int(x) for x in h[:n]], tuple(int(t) for t in b[: view.boneyard_left]))
            check_sample(view, *deal)
            assert deals_agree(view, *deal)
            assert not h[n:].any()
        checked += 1
        lacking += any(view.lacks[s] for s in range(n) if s != view.seat)
    assert checked > 30 and lacking > 5


@pytest.mark.parametrize("config", CONFIGS[:3] + CONFIGS[7:], ids=lambda c: "-".join(str(v) for v in c.values()))
def test_rows_and_deals_depend_on_the_view_alone(config):
    """Dealing again what the acting seat cannot see changes neither the model's input nor the deals it draws."""
    model = shipped_belief()
    rng = random.Random(8)
    compared = changed = 0
    for state, view in positions(config, range(2), target=100):
        if len(view.legal) < 2:
            continue
        twin = hidden_swapped(state, rng)
        twin_view = twin.view(twin.to_act)
        assert public(twin_view) == public(view)
        changed += twin.hands != state.hands
        for a, b in zip(tile_features(view), tile_features(twin_view), strict=True):
            assert np.array_equal(a, b)
        first = model.dealer(view).deals(random.Random(5), 8)
        second = model.dealer(twin_view).deals(random.Random(5), 8)
        assert all(np.array_equal(a, b) for a, b in zip(first, second, strict=True))
        compared += 1
    assert compared > 20 and changed > compared // 2


def test_labels_name_a_place_the_tile_may_lie_and_the_features_have_one_row_each():
    seen = 0
    for view, label, (hidden, sizes, allowed, rows) in labelled(dict(rules="pagat", num_players=3), range(3)):
        assert rows.shape == (len(hidden), len(places_of(view)), len(rows[0, 0]))
        assert allowed[np.arange(len(hidden)), label].all()  # the truth is never ruled out
        assert sizes.sum() == len(hidden)
        seen += 1
    assert seen > 50


def test_sinkhorn_makes_rows_sum_to_one_and_columns_to_the_sizes():
    rng = np.random.default_rng(0)
    allowed = rng.random((12, 3)) > 0.2
    allowed[:, 2] = True  # the boneyard takes anything
    probs = np.where(allowed, rng.random((12, 3)), 0)
    sizes = np.array([3.0, 4.0, 5.0])
    out = sinkhorn(probs, sizes, allowed, passes=200)
    assert np.allclose(out.sum(1), 1)
    assert np.allclose(out.sum(0), sizes, atol=1e-6)
    assert (out[~allowed] == 0).all()


def exact_uniform(view, allowed: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Two players: among the tiles the opponent may hold, each is in its hand with the same chance."""
    possible = allowed[:, 0]
    p = np.zeros(allowed.shape)
    p[possible, 0] = sizes[0] / possible.sum()
    p[:, 1] = 1 - p[:, 0]
    return p


def test_the_shipped_model_predicts_held_out_hands_better_than_uniform_deals():
    model = shipped_belief()
    ours, uniform, tiles = 0.0, 0.0, 0
    for view, label, (hidden, sizes, allowed, _) in labelled(dict(rules="pagat", num_players=2), range(700, 715)):
        _, _, probs = model.marginals(view)
        at = np.arange(len(hidden))
        ours -= np.log(np.maximum(probs[at, label], 1e-12)).sum()
        uniform -= np.log(exact_uniform(view, allowed, sizes)[at, label]).sum()
        tiles += len(hidden)
    assert tiles > 1000
    assert ours / tiles < uniform / tiles - 0.01


def test_a_search_with_beliefs_plays_legally_and_the_same_for_the_same_seed():
    first, second = make_agent("search:belief:40", 4), make_agent("search:belief:40", 4)
    assert first.name == "search:belief"
    views = [v for _, v in positions(dict(rules="pagat", num_players=2), range(2)) if len(v.legal) > 1]
    choices = [first.act(v) for v in views]
    assert all(c in v.legal for c, v in zip(choices, views, strict=True))
    assert choices == [second.act(v) for v in views]


def test_belief_specs():
    assert parse_agent_spec("search:belief").belief
    assert parse_agent_spec("search:belief:300").simulations == 300
    spec = parse_agent_spec("search:trained:belief:500")
    assert (spec.kind, spec.simulations, spec.belief) == ("guided", 500, True)
    spec = parse_agent_spec("search:checkpoint:my.pt:belief")
    assert (spec.kind, spec.path, spec.belief) == ("guided", "my.pt", True)
    assert not parse_agent_spec("search:trained:400").belief
    with pytest.raises(ValueError, match="positive whole number"):
        parse_agent_spec("search:belief:many")


def test_a_saved_model_loads_back_and_predicts_the_same(tmp_path):
    model = shipped_belief()
    weights = {f"{k}{i}": w if k == "w" else b for i, (w, b) in enumerate(model.layers) for k in "wb"}
    path = save_belief(tmp_path / "copy.npz", weights, {"note": "copy"})
    again = load_belief(path)
    view = next(v for _, v in positions(dict(rules="fives", num_players=3), range(1)) if len(v.moves) > 6)
    assert np.allclose(again.marginals(view)[2], model.marginals(view)[2], atol=1e-6)
    assert again.meta["note"] == "copy"


def broken_files(tmp_path):
    """(file, words its error must hold) for every way a belief file can be unusable."""
    good = SHIPPED.read_bytes()
    with np.load(SHIPPED) as data:
        arrays = {k: data[k] for k in data.files}
    header = json.loads(str(arrays["header"]))

    def npz(name: str, **changes) -> object:
        path = tmp_path / name
        np.savez(path, **{**arrays, **changes})
        return path

    (tmp_path / "text.npz").write_text("not an archive")
    (tmp_path / "cut.npz").write_bytes(good[: len(good) // 2])
    tampered = arrays["w0"].copy()
    tampered[0, 0] += 1
    return [
        (tmp_path / "missing.npz", "does not exist"),
        (tmp_path / "text.npz", "cannot be read"),
        (tmp_path / "cut.npz", "cannot be read"),
        (npz("noheader.npz", header=np.array("{")), "no readable header"),
        (npz("foreign.npz", header=np.array(json.dumps({**header, "format": "other"}))), "not an allfives belief"),
        (npz("future.npz", header=np.array(json.dumps({**header, "version": 99}))), "version 99"),
        (npz("features.npz", header=np.array(json.dumps({**header, "features": ["x"]}))), "other features"),
        (npz("tampered.npz", w0=tampered), "do not match their SHA-256"),
    ]


def test_broken_belief_files_are_refused_in_one_line(tmp_path):
    for path, words in broken_files(tmp_path):
        with pytest.raises(BeliefError) as caught:
            load_belief(path)
        message = str(caught.value)
        assert words in message and str(path) in message and "\n" not in message


def test_a_dealer_falls_back_to_a_uniform_deal_when_the_weighted_fill_dead_ends():
    """Beliefs that leave the opponent too few tiles to fill its hand still give deals that agree with the view."""
    view = next(
        v
        for _, v in positions(dict(rules="pagat", num_players=2), range(4))
        if len(v.legal) > 1 and v.hand_counts[1 - v.seat] > 1 and v.boneyard_left
    )
    hidden, sizes, allowed, _ = tile_features(view)
    probs = np.where(allowed, 0.5, 0.0)
    first = int(np.flatnonzero(allowed[:, 0])[0])
    probs[:, 0] = 0.0
    probs[first, 0] = 0.5  # the opponent's hand could take a single tile only
    hands, boneyards = Dealer(view, hidden, np.array(places_of(view)), probs).deals(random.Random(2), 20)
    for h, b in zip(hands, boneyards, strict=True):
        assert deals_agree(view, [int(h[0]), int(h[1])], tuple(int(t) for t in b[: view.boneyard_left]))


def test_the_trainer_can_name_the_policy_that_plays_trained_in_two_player_pagat():
    """--trained swaps the checkpoint behind ``trained`` (how the shipped model is reproduced with an earlier policy)."""
    from pathlib import Path

    import agents
    from allfives_train.belief import _play

    checkpoints = Path(agents.__file__).parent / "checkpoints"
    job = ("pagat", 2, False, ("trained", "heuristic"), 61_000_000, False)
    shipped, same, other = (
        _play((*job, path)) for path in (None, checkpoints / "default.pt", checkpoints / "fives3.pt")
    )
    assert all((a == b).all() for a, b in zip(shipped["label"], same["label"], strict=True))
    assert len(shipped["label"]) != len(other["label"]) or any(
        (a != b).any() for a, b in zip(shipped["label"], other["label"], strict=True)
    )


def test_a_trained_directory_names_the_policy_that_plays_trained_at_each_table(tmp_path):
    """A directory laid out as the shipped checkpoints' swaps each table's policy (how the shipped model is
    reproduced with the earlier policies of every table)."""
    import shutil
    from pathlib import Path

    import agents
    from allfives_train.belief import _play, checkpoint_names

    checkpoints = Path(agents.__file__).parent / "checkpoints"
    same, other = tmp_path / "same", tmp_path / "other"
    for directory in (same, other):
        directory.mkdir()
        for name in checkpoint_names():
            shutil.copy(checkpoints / name, directory / name)
    shutil.copy(checkpoints / "default.pt", other / "fives3.pt")  # another policy at three-player fives only
    job = ("fives", 3, False, ("trained", "heuristic", "search"), 62_000_000, False)
    shipped, as_shipped, swapped = (_play((*job, path)) for path in (None, str(same), str(other)))
    assert all((a == b).all() for a, b in zip(shipped["label"], as_shipped["label"], strict=True))
    assert len(shipped["label"]) != len(swapped["label"]) or any(
        (a != b).any() for a, b in zip(shipped["label"], swapped["label"], strict=True)
    )


def test_the_trainer_refuses_a_trained_directory_that_lacks_a_table(tmp_path, capsys):
    from allfives_train.belief import main

    (tmp_path / "default.pt").write_bytes(b"")
    with pytest.raises(SystemExit) as stop:
        main(["--out", str(tmp_path / "b.npz"), "--trained", str(tmp_path)])
    message = capsys.readouterr().err
    assert stop.value.code == 2 and "lacks fives3.pt, pagat4_partners.pt" in message
    assert not (tmp_path / "b.npz").exists()


def test_the_trainer_refuses_a_missing_trained_policy(tmp_path, capsys):
    from allfives_train.belief import main

    with pytest.raises(SystemExit) as stop:
        main(["--out", str(tmp_path / "b.npz"), "--trained", str(tmp_path / "none.pt")])
    assert stop.value.code == 2 and "--trained" in capsys.readouterr().err and not (tmp_path / "b.npz").exists()
