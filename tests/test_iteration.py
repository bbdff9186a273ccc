"""Policy iteration (``iteration.rounds``): its play-out values, its labels, its fit, and runs that use it.

The play-out values are held to an independent computation on the core: a
clone of the table's state plays the action, then every seat plays the
policy's favourite from its own view (through the shipped agent's numpy
actor, not the batched forward pass) until the round ends, and the value is
read off the scores.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from train_snapshots import TINY, metrics_rows, run_differences, run_train, snapshot, tb_view

from agents.greedy import GreedyAgent
from agents.heuristic import HeuristicAgent
from agents.policy_agent import PolicyAgent
from agents.policy_net import PolicyNet, policy_payload, read_checkpoint
from agents.policy_playouts import SeatBots
from agents.search import WIN_BONUS
from allfives_env.aec_env import raw_env
from allfives_env.core.tiles import NUM_TILES, TILES
from allfives_env.vector import VectorEnv
from allfives_env.views.action_features import ACTION_FEATURE_OFFSETS
from allfives_env.views.observation import OFFSETS, encode_observation
from allfives_train.checkpoint import read_training_checkpoint
from allfives_train.iteration import (
    FIELDS,
    Fit,
    LabelJob,
    choose,
    fit_fresh,
    label_matches,
    label_round,
    load_labels,
    play_outs,
    save_labels,
    seat_bots,
)
from allfives_train.metrics import RoundLog

POLICY = "agents/checkpoints/default.pt"
ITERATE = ["--set", "iteration.matches=3", "--set", "iteration.epochs=1", "--set", "eval.final_matches=0"]


def core_play_out(state, action: int, agent: PolicyAgent, bots: dict | None = None) -> float:
    """``action`` on a clone of ``state``, then the round out with ``agent``'s favourite at every seat but those
    that ``bots`` (seat: agent) play."""
    state = state.clone()
    seat, rounds, before = state.to_act, len(state.past), list(state.scores)
    state.apply(action)
    while not state.finished and len(state.past) == rounds:
        legal = state.legal_actions()
        player = (bots or {}).get(state.to_act, agent)
        state.apply(legal[0] if len(legal) == 1 else player.act(state.view(state.to_act)))
    side_of = state.rules.side_of
    gains = [after - b for after, b in zip(state.scores, before, strict=True)]
    mine = side_of[seat]
    value = gains[mine] - sum(g for s, g in enumerate(gains) if s != mine) / (len(gains) - 1)
    if state.winners:
        value += WIN_BONUS / len(state.winners) if mine in state.winners else -WIN_BONUS
    return value


def test_play_out_values_equal_the_cores():
    agent = PolicyAgent(POLICY)
    net = PolicyNet(**read_checkpoint(POLICY)["model"])
    net.load_state_dict(read_checkpoint(POLICY)["weights"], strict=False)
    net.eval()
    config = {"rules": "pagat", "num_players": 2, "auto_forced": True, "action_features": True}
    seeds = [31, 32, 33, 34]
    env = VectorEnv(len(seeds), **config, reward="points")
    raws = [raw_env(**config) for _ in seeds]
    step = env.reset(seeds)
    for raw, seed in zip(raws, seeds, strict=True):
        raw.reset(seed=seed)
    rng = np.random.default_rng(0)
    checked = near_target = 0
    for turn in range(160):
        mask = step.action_mask.astype(bool)
        tables = np.flatnonzero(mask.sum(1) > 1)
        if turn % 9 == 0 and tables.size:
            owners, actions = np.nonzero(mask[tables])
            got = play_outs(net, env, tables[owners], actions)
            for j, (table, action) in enumerate(zip(tables[owners].tolist(), actions.tolist(), strict=True)):
                state = raws[table].core_state
                assert got[j] == pytest.approx(core_play_out(state, action, agent), abs=1e-6), (turn, table, action)
                near_target += max(state.scores) >= state.rules.target - 60
                checked += 1
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
        step = env.step(actions)
        for table, raw in enumerate(raws):
            raw.step(int(actions[table]))
            if all(raw.terminations.values()):
                raw.reset()  # the next match, as the engine restarts a table
    assert checked > 150 and near_target > 0  # matches decided inside a play-out were among them


@pytest.mark.parametrize(
    "config, bot, side",
    [
        ({"rules": "fives", "num_players": 3}, HeuristicAgent, 1),
        ({"rules": "pagat", "num_players": 4, "partnerships": True}, GreedyAgent, 0),
    ],
)
def test_play_outs_with_a_bot_on_a_side_equal_the_cores(config, bot, side):
    """A bot plays every seat of its side in the play-outs (each table its own, seeded alike on both engines)."""
    agent = PolicyAgent(POLICY)
    net = PolicyNet(**read_checkpoint(POLICY)["model"])
    net.load_state_dict(read_checkpoint(POLICY)["weights"], strict=False)
    net.eval()
    config = {**config, "auto_forced": True, "action_features": True}
    seeds = [41, 42, 43, 44, 45, 46]
    env = VectorEnv(len(seeds), **config, reward="points")
    raws = [raw_env(**config) for _ in seeds]
    step = env.reset(seeds)
    for raw, seed in zip(raws, seeds, strict=True):
        raw.reset(seed=seed)
    bot_seats = np.array([[s == side for s in env.game_rules.side_of]] * len(seeds))
    rng = np.random.default_rng(1)
    checked = by_bot = 0
    for turn in range(150):
        mask = step.action_mask.astype(bool)
        tables = np.flatnonzero((mask.sum(1) > 1) & ~bot_seats[np.arange(len(seeds)), step.current_player])
        if turn % 5 == 0 and tables.size:
            actions = np.array([rng.choice(np.flatnonzero(mask[t])) for t in tables])
            seed_of = [1000 * turn + t for t in range(len(seeds))]
            got = play_outs(net, env, tables, actions, bots=SeatBots(bot_seats, [bot(seed=x) for x in seed_of]))
            for j, (table, action) in enumerate(zip(tables.tolist(), actions.tolist(), strict=True)):
                player = bot(seed=seed_of[table])  # one bot for its side, as on the batched engine
                players = {s: player for s in np.flatnonzero(bot_seats[table]).tolist()}
                want = core_play_out(raws[table].core_state, action, agent, players)
                assert got[j] == pytest.approx(want, abs=1e-6), (turn, table, action)
                checked += 1
            plain = play_outs(net, env, tables, actions)
            by_bot += int((plain != got).sum())
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
        step = env.step(actions)
        for table, raw in enumerate(raws):
            raw.step(int(actions[table]))
            if all(raw.terminations.values()):
                raw.reset()
    assert checked > 40 and by_bot > 0  # the bots changed some of the values


def small_actor(seed: int = 3) -> tuple[dict, dict]:
    torch.manual_seed(seed)
    net = PolicyNet(32, 16)
    return net.actor_state_dict(), net.sizes()


RULES = {"rules": "pagat", "num_players": 2, "partnerships": None, "target": 60, "opening": None}


def assert_rows_belong_to_their_observations(labels: dict) -> None:
    """Each decision's feature rows place tiles from the hand its observation shows, and leave one fewer."""
    start = np.cumsum(labels["width"]) - labels["width"]
    hand_at, values_at = OFFSETS["hand"], ACTION_FEATURE_OFFSETS["tile_values"]
    left_at = ACTION_FEATURE_OFFSETS["own_left"]
    for obs, first, width in zip(labels["obs"], start, labels["width"], strict=True):
        hand = np.flatnonzero(obs[hand_at : hand_at + NUM_TILES]).tolist()
        shown = {frozenset(TILES[t]) for t in hand}
        for row in labels["rows"][first : first + width]:
            if row[0]:  # a placement
                assert frozenset(np.flatnonzero(row[values_at : values_at + 7]).tolist()) in shown
                assert row[left_at] == len(hand) - 1


def test_a_rounds_labels_do_not_depend_on_how_many_processes_played_it():
    actor, model = small_actor()
    seeds, sample_seeds = [5, 6, 7, 8, 9], [50, 60, 70, 80, 90]
    one = label_round(actor, model, RULES, seeds, sample_seeds, workers=1)
    two = label_round(actor, model, RULES, seeds, sample_seeds, workers=2)
    assert one.keys() == two.keys() == set(FIELDS)
    for key in FIELDS:
        np.testing.assert_array_equal(one[key], two[key], err_msg=key)
    assert len(one["rows"]) == one["width"].sum() == len(one["values"]) and (one["width"] > 1).all()
    assert_rows_belong_to_their_observations(one)
    other = label_round(actor, model, RULES, seeds, [51, 60, 70, 80, 90], workers=1)
    assert len(other["width"]) != len(one["width"]) or not np.array_equal(other["obs"], one["obs"])


def test_each_match_draws_its_bot_and_the_side_it_plays_from_its_own_seed():
    side_of = (0, 1, 0, 1)  # partnerships: a bot plays both seats of its side
    seeds = list(range(3000))
    job = LabelJob({}, {}, {}, 0, tuple(seeds), tuple(s + 7 for s in seeds), bots=(("heuristic", 0.3), ("greedy", 0.2)))
    seats, players, helpers = seat_bots(job, side_of)
    kinds = [type(p).__name__ if p else "" for p in players]
    assert kinds == [type(h).__name__ if h else "" for h in helpers]
    assert all(p is not h for p, h in zip(players, helpers, strict=True) if p)
    assert kinds.count("HeuristicAgent") / 3000 == pytest.approx(0.3, abs=0.03)
    assert kinds.count("GreedyAgent") / 3000 == pytest.approx(0.2, abs=0.03)
    rows = {tuple(row) for row in seats.tolist()}
    assert rows == {(False,) * 4, (True, False, True, False), (False, True, False, True)}
    assert not seats[[k == "" for k in kinds]].any() and seats[[k != "" for k in kinds]].sum(1).tolist() == [2] * (
        3000 - kinds.count("")
    )
    later = LabelJob({}, {}, {}, 1000, tuple(seeds[1000:]), job.sample_seeds[1000:], bots=job.bots)
    np.testing.assert_array_equal(seat_bots(later, side_of)[0], seats[1000:])  # whichever shard plays it
    assert not seat_bots(LabelJob({}, {}, {}, 0, (1, 2), (3, 4)), side_of)[0].any()


def test_a_bot_on_a_side_leaves_only_the_policys_seats_to_label(tmp_path):
    """Replayed on the core, the bot from its match's seed at its side (the search among them) and the policy's
    favourite elsewhere (a temperature near 0): the labels are the policy seats' decisions with a choice, and only
    those."""
    actor, model = small_actor()
    net = PolicyNet(**model)
    net.load_state_dict(actor, strict=False)
    torch.save(policy_payload(net, actor_only=True, steps=0), tmp_path / "small.pt")
    agent = PolicyAgent(str(tmp_path / "small.pt"))
    rules = {**RULES, "num_players": 3, "rules": "fives"}
    seeds, sample_seeds = list(range(5, 17)), list(range(50, 62))
    job = LabelJob(actor, model, rules, 0, tuple(seeds), tuple(sample_seeds), temperature=1e-6,
                   bots=(("heuristic", 0.3), ("greedy", 0.3), ("search", 0.3)))  # fmt: skip
    got = label_matches(job)
    order = np.lexsort((got["turn"], got["match"]))
    got = {key: got[key][order] for key in ("match", "obs")}
    bot_seats, players, _ = seat_bots(job, (0, 1, 2))
    want = []
    for m, seed in enumerate(seeds):
        raw = raw_env(**{k: v for k, v in rules.items() if v is not None})
        raw.reset(seed=seed)
        state = raw.core_state
        while not state.finished:
            legal = state.legal_actions()
            if len(legal) > 1 and not bot_seats[m, state.to_act]:
                want.append((m, encode_observation(state.view(state.to_act))))
            player = players[m] if bot_seats[m, state.to_act] else agent
            state.apply(legal[0] if len(legal) == 1 else player.act(state.view(state.to_act)))
    assert got["match"].tolist() == [m for m, _ in want]
    np.testing.assert_array_equal(got["obs"], np.stack([obs for _, obs in want]))
    kinds = {type(p).__name__ for p in players}
    assert kinds == {"HeuristicAgent", "GreedyAgent", "SearchAgent", "NoneType"}, kinds


def test_labels_with_bots_do_not_depend_on_how_many_processes_played_them():
    actor, model = small_actor()
    seeds, sample_seeds = list(range(5, 13)), list(range(50, 58))
    plain = label_round(actor, model, RULES, seeds, sample_seeds, workers=1)
    one = label_round(actor, model, RULES, seeds, sample_seeds, workers=1, bots={"heuristic": 0.5})
    two = label_round(actor, model, RULES, seeds, sample_seeds, workers=2, bots={"heuristic": 0.5})
    for key in FIELDS:
        np.testing.assert_array_equal(one[key], two[key], err_msg=key)
    assert_rows_belong_to_their_observations(one)
    assert len(one["width"]) != len(plain["width"])
    none = label_round(actor, model, RULES, seeds, sample_seeds, workers=1, bots={"heuristic": 0.0, "greedy": 0.0})
    for key in FIELDS:
        np.testing.assert_array_equal(none[key], plain[key], err_msg=key)


def test_labels_with_match_equity_value_the_same_decisions_by_the_match():
    """The same matches and decisions; a round's end short of the target adds its match chance (at most the value
    of a match won) to the values (tests/test_policy_playouts.py holds it to the core)."""
    actor, model = small_actor()
    rules = {**RULES, "target": 150}  # most rounds end short of it
    plain = label_round(actor, model, rules, [5, 6], [50, 60], workers=1)
    valued = label_round(actor, model, rules, [5, 6], [50, 60], workers=1, equity=True)
    for key in ("obs", "rows", "width"):
        np.testing.assert_array_equal(plain[key], valued[key], err_msg=key)
    change = np.abs(valued["values"] - plain["values"])
    assert change.max() > 0 and change.max() < WIN_BONUS + 1e-3


def test_sampling_follows_the_softmax():
    actor, model = small_actor()
    net = PolicyNet(**model)
    net.load_state_dict(actor, strict=False)
    with torch.no_grad():
        net.score.weight.mul_(30)  # a small network's scores are nearly equal; spread them so temperature shows
    env = VectorEnv(1, rules="pagat", num_players=2, auto_forced=True, action_features=True)
    step = env.reset([4])
    while step.action_mask.sum() < 3:
        step = env.step(step.action_mask.argmax(1))
    tables = np.zeros(4000, dtype=int)
    step = step._replace(**{f: v[tables] for f, v in step._asdict().items() if v is not None})
    legal = np.flatnonzero(step.action_mask[0])
    with torch.no_grad():
        logits = net.logits(*(torch.from_numpy(x[:1]) for x in (step.observation, step.action_features,
                                                                 step.action_mask)))[0, legal]  # fmt: skip
    assert (torch.softmax(logits / 0.25, 0) - torch.softmax(logits, 0)).abs().max() > 0.06
    draws = np.random.default_rng(1).random(tables.size)
    for temperature in (1.0, 0.25):
        picks = choose(net, step, tables, draws, temperature)
        expected = torch.softmax(logits / temperature, 0).numpy()
        share = np.array([(picks == a).mean() for a in legal])
        assert np.abs(share - expected).max() < 0.03, temperature
    assert choose(net, step, tables[:1])[0] == legal[int(logits.argmax())]


def test_a_fresh_fit_ranks_actions_by_their_labels():
    actor, model = small_actor()
    labels = label_round(actor, model, RULES, list(range(40)), list(range(100, 140)), workers=1)
    # labels that a network can learn exactly: the value of a placement is 10 x the points it scores
    points = labels["rows"][:, ACTION_FEATURE_OFFSETS["points"]].astype(np.float32)
    labels["values"] = 10 * points
    net = fit_fresh(labels, model, Fit(epochs=30, lr=3e-3, minibatch=64, huber=10.0, value_scale=10.0), 7,
                    torch.device("cpu"))  # fmt: skip
    start = np.cumsum(labels["width"]) - labels["width"]
    with torch.no_grad():
        scores = net.score_rows(
            net.embed(torch.from_numpy(labels["obs"])).repeat_interleave(torch.from_numpy(labels["width"]), 0),
            torch.from_numpy(labels["rows"]),
        ).numpy()
    ranked = [
        labels["values"][s + np.argmax(scores[s : s + w])] == labels["values"][s : s + w].max()
        for s, w in zip(start, labels["width"], strict=True)
        if np.ptp(labels["values"][s : s + w]) > 0
    ]
    assert len(ranked) > 50 and np.mean(ranked) > 0.95


def test_labels_round_trip_and_broken_files_are_refused(tmp_path):
    actor, model = small_actor()
    labels = label_round(actor, model, RULES, [1, 2], [3, 4], workers=1)
    save_labels(tmp_path / "labels1.npz", labels)
    back = load_labels(tmp_path / "labels1.npz")
    for key in FIELDS:
        np.testing.assert_array_equal(back[key], labels[key])
    (tmp_path / "cut.npz").write_bytes((tmp_path / "labels1.npz").read_bytes()[:500])
    short = dict(labels, values=labels["values"][:-1])
    save_labels(tmp_path / "short.npz", short)
    for name in ("cut.npz", "short.npz", "absent.npz"):
        with pytest.raises(ValueError, match="allowed: the file a round of this run wrote"):
            load_labels(tmp_path / name)


def test_rounds_run_after_self_play_and_a_run_extended_by_a_round_ends_like_a_straight_one(tmp_path):
    assert (
        run_train("--config", TINY, "--set", f"run.dir={tmp_path / 'a'}", "--set", "iteration.rounds=2", *ITERATE) == 0
    )
    assert (
        run_train("--config", TINY, "--set", f"run.dir={tmp_path / 'b'}", "--set", "iteration.rounds=1", *ITERATE) == 0
    )
    one = read_training_checkpoint(tmp_path / "b" / "tiny" / "checkpoint.pt")
    assert one["training"]["iterated"] == 1
    assert run_train("--resume", tmp_path / "b" / "tiny", "--set", "iteration.rounds=2") == 0
    a, b = tmp_path / "a" / "tiny", tmp_path / "b" / "tiny"
    assert read_training_checkpoint(a / "checkpoint.pt")["training"]["iterated"] == 2
    for k in (1, 2):
        first, second = load_labels(a / "iteration" / f"labels{k}.npz"), load_labels(b / "iteration" / f"labels{k}.npz")
        assert all(np.array_equal(first[key], second[key]) for key in FIELDS)
    assert run_differences(a, b) == []
    # each round is logged once, at its number, though the extended run wrote the file twice
    rows = metrics_rows(b, "iteration.csv")
    assert [(r["round"], r["labelled"]) for r in rows] == [
        (str(k), str(len(load_labels(b / "iteration" / f"labels{k}.npz")["width"]))) for k in (1, 2)
    ]
    assert rows[1]["labels_total"] == str(sum(int(r["labelled"]) for r in rows))
    assert all(0 <= float(r["eval_win_random"]) <= 1 for r in rows)
    assert [step for step, _ in tb_view(b, "tb/iteration")["iteration/labelled"]] == [1, 2]
    # the rounds changed the actor, not the critic self-play left
    plain = tmp_path / "c"
    assert run_train("--config", TINY, "--set", f"run.dir={plain}", *ITERATE) == 0
    weights, before = (
        read_checkpoint(a / "checkpoint.pt")["weights"],
        read_checkpoint(plain / "tiny" / "checkpoint.pt")["weights"],
    )
    assert all(torch.equal(weights[k], before[k]) == k.startswith("critic.") for k in weights)


def test_a_resume_with_a_broken_labels_file_is_refused_and_changes_nothing(tmp_path, capsys):
    assert run_train("--config", TINY, "--set", f"run.dir={tmp_path}", "--set", "iteration.rounds=1", *ITERATE) == 0
    run = tmp_path / "tiny"
    labels = run / "iteration" / "labels1.npz"
    labels.write_bytes(labels.read_bytes()[:-40])
    before = snapshot(run)
    capsys.readouterr()
    assert run_train("--resume", run, "--set", "iteration.rounds=2") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "labels1.npz" in err[0] and "--overwrite" in err[0]
    assert snapshot(run) == before


def test_the_rounds_log_keeps_only_the_rounds_a_resumed_checkpoint_holds(tmp_path):
    log = RoundLog(tmp_path, ["random"], None)
    for k in (1, 2, 3):
        log.write(
            {"round": k, "steps": 600, "labelled": 10 * k, "labels_total": 5 * k * (k + 1), "eval_win_random": 0.5}
        )
    log.close()
    with (tmp_path / "iteration.csv").open("a") as f:
        f.write("4,600,4")  # a row cut short by a kill
    RoundLog(tmp_path, ["random"], 2).close()
    assert [(r["round"], r["labelled"]) for r in metrics_rows(tmp_path, "iteration.csv")] == [("1", "10"), ("2", "20")]
    assert [step for step, _ in tb_view(tmp_path, "tb/iteration")["iteration/labelled"]] == [1, 2]
    RoundLog(tmp_path, ["random"], None).close()  # a fresh run in the same folder starts both empty
    assert metrics_rows(tmp_path, "iteration.csv") == []
    assert tb_view(tmp_path, "tb/iteration") == {}


def test_rounds_out_of_time_say_so_in_eval_md_and_a_resume_takes_them(tmp_path, capsys):
    """Self-play ends within its first update; the rounds then find run.max_minutes passed and start none."""
    short = ["--set", "train.total_steps=10", "--set", "iteration.rounds=2", "--set", "eval.final_matches=2"]
    assert run_train("--config", TINY, "--set", f"run.dir={tmp_path}", *ITERATE[:4], *short,
                     "--set", "run.max_minutes=0.00001") == 0  # fmt: skip
    run = tmp_path / "tiny"
    table = (run / "eval.md").read_text()
    assert table.startswith("**Stopped early**: run.max_minutes=1e-05 was reached after 0 of 2 rounds of policy")
    assert f"python train.py --resume {run}" in capsys.readouterr().out
    assert read_training_checkpoint(run / "checkpoint.pt")["training"]["iterated"] == 0
    assert run_train("--resume", run, "--set", "run.max_minutes=null") == 0
    assert read_training_checkpoint(run / "checkpoint.pt")["training"]["iterated"] == 2
    assert not (run / "eval.md").read_text().startswith("**Stopped early**")
