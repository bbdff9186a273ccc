"""The trainer: the tiny config end to end, checkpoints, exact resume, the loss on a fixed batch, config errors."""

from __future__ import annotations

import csv
import os
import random
import signal
import subprocess
import sys
import time
from multiprocessing.shared_memory import SharedMemory
from pathlib import Path

import numpy as np
import pytest
import torch

import train
from agents.greedy import GreedyAgent
from agents.policy_net import CheckpointError, read_checkpoint
from agents.search import SearchAgent, playout_values
from allfives_env.core import State, make_rules
from allfives_env.views.action_features import action_features
from allfives_env.views.observation import encode_observation
from allfives_env.views.state_vector import encode_state
from allfives_train.checkpoint import atomic_save, read_training_checkpoint
from allfives_train.config import ITERATION_BOTS, ConfigError, defaults, load_config, rules_of
from allfives_train.parallel import RolloutPool, _from_shared_memory, _through_shared_memory
from allfives_train.ppo import advantages, critic_values, losses, policy_logits, reorder, to_tensors, update
from allfives_train.rollout import CURRENT, Batch, MatchSpec, RolloutWorker, Teacher
from allfives_train.trainer import PolicyNet, Trainer

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "configs" / "tiny.yaml"


def tiny(tmp_path: Path, *overrides: str) -> dict:
    return load_config(TINY, [f"run.dir={tmp_path}", *overrides])


def run_train(*args: str) -> int:
    return train.main([*map(str, args), "--no-progress"])


def assert_same_state(a: dict, b: dict) -> None:
    """Two checkpoints hold the same weights, optimizer state, counters, pool and random state."""
    assert a["weights"].keys() == b["weights"].keys()
    for key in a["weights"]:
        assert torch.equal(a["weights"][key], b["weights"][key]), key
    ta, tb = a["training"], b["training"]
    for key in ("iteration", "steps", "matches", "recent"):
        assert ta[key] == tb[key], key
    assert len(ta["pool"]) == len(tb["pool"])
    for pa, pb in zip(ta["pool"], tb["pool"], strict=True):
        assert all(torch.equal(pa[k], pb[k]) for k in pa)
    oa, ob = ta["optimizer"]["state"], tb["optimizer"]["state"]
    assert oa.keys() == ob.keys()
    for k in oa:
        assert all(torch.equal(oa[k][name], ob[k][name]) for name in oa[k])
    assert ta["rng"]["python"] == tb["rng"]["python"]
    assert torch.equal(ta["rng"]["torch_generator"], tb["rng"]["torch_generator"])


def chains(batch: Batch) -> list[list[int]]:
    """Each seat's decisions in one match, in order, following the batch's ``next`` links."""
    starts = set(range(len(batch))) - set(batch.next[batch.next >= 0].tolist())
    out = []
    for i in sorted(starts):
        chain = [i]
        while batch.next[chain[-1]] >= 0:
            chain.append(int(batch.next[chain[-1]]))
        out.append(chain)
    return out


def metrics_rows(run_dir: Path) -> list[dict]:
    with (run_dir / "metrics.csv").open() as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        for timing in ("decisions_per_s", "rollout_s", "update_s", "eval_s"):  # the columns that may differ
            row.pop(timing)
    return rows


# -- end to end -------------------------------------------------------------------------


def test_tiny_config_trains_end_to_end(tmp_path):
    assert run_train("--config", TINY, "--set", f"run.dir={tmp_path}") == 0
    run = tmp_path / "tiny"
    for name in ("checkpoint.pt", "policy.pt", "metrics.csv", "config.yaml", "eval.md"):
        assert (run / name).is_file(), name
    assert (run / "learning_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert any(p.name.startswith("events.out.tfevents") for p in (run / "tb").iterdir())
    rows = metrics_rows(run)
    steps = [int(r["steps"]) for r in rows]
    assert steps == sorted(steps) and steps[-1] >= 600
    assert [int(r["iteration"]) for r in rows] == list(range(1, len(rows) + 1))
    assert any(r["eval_win_greedy"] for r in rows)
    table = (run / "eval.md").read_text()
    for baseline in ("random", "greedy", "heuristic"):
        assert f"| {baseline} |" in table
        assert (run / "eval" / f"vs_{baseline}" / "results.csv").is_file()
    policy = read_checkpoint(run / "policy.pt")
    assert policy["actor_only"] and not any(k.startswith("critic.") for k in policy["weights"])
    assert policy["steps"] == steps[-1]


def test_a_run_directory_with_a_checkpoint_is_not_overwritten_silently(tmp_path, capsys):
    assert run_train("--config", TINY, "--set", f"run.dir={tmp_path}", "--set", "eval.final_matches=0") == 0
    assert run_train("--config", TINY, "--set", f"run.dir={tmp_path}") == 2
    assert "--resume" in capsys.readouterr().err


# -- checkpoints -------------------------------------------------------------------------


def test_checkpoint_round_trip(tmp_path):
    cfg = tiny(tmp_path)
    first = Trainer(cfg, tmp_path / "run", progress=False)
    for _ in range(2):
        first.step()
    path = first.save()
    second = Trainer(tiny(tmp_path), tmp_path / "run", resume_from=path, progress=False)
    for key, value in first.net.state_dict().items():
        assert torch.equal(value, second.net.state_dict()[key]), key
    assert (second.iteration, second.steps, second.matches) == (first.iteration, first.steps, first.matches)
    assert len(second.pool) == len(first.pool) == 2
    assert second.rng.getstate() == first.rng.getstate()
    assert torch.equal(second.generator.get_state(), first.generator.get_state())
    assert_same_state(read_training_checkpoint(path), second._payload())


def test_atomic_save_leaves_the_old_file_when_writing_fails(tmp_path):
    path = tmp_path / "c.pt"
    atomic_save({"n": 1}, path)

    class Unpicklable:
        def __reduce__(self):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        atomic_save({"n": Unpicklable()}, path)
    assert torch.load(path, weights_only=True) == {"n": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["c.pt"]  # no temporary file left behind


@pytest.fixture
def policy_file(tmp_path) -> Path:
    trainer = Trainer(tiny(tmp_path), tmp_path / "run", progress=False)
    return trainer.save()


def test_truncated_checkpoint_is_refused(policy_file):
    data = policy_file.read_bytes()
    policy_file.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="cannot be read") as info:
        read_checkpoint(policy_file)
    assert str(policy_file) in str(info.value)


def test_garbage_and_foreign_files_are_refused(tmp_path):
    junk = tmp_path / "junk.pt"
    junk.write_bytes(os.urandom(4000))
    with pytest.raises(CheckpointError, match="junk.pt.*cannot be read"):
        read_checkpoint(junk)
    foreign = tmp_path / "foreign.pt"
    torch.save({"state_dict": {"w": torch.zeros(2)}}, foreign)
    with pytest.raises(CheckpointError, match="foreign.pt.*not an allfives policy checkpoint"):
        read_checkpoint(foreign)
    with pytest.raises(CheckpointError, match="missing.pt.*does not exist"):
        read_checkpoint(tmp_path / "missing.pt")


def test_altered_weights_are_refused(policy_file):
    data = torch.load(policy_file, weights_only=True)
    data["weights"]["score.bias"] += 1.0
    torch.save(data, policy_file)
    with pytest.raises(CheckpointError, match="corrupt: its weights do not match"):
        read_checkpoint(policy_file)


def test_resume_needs_a_training_checkpoint(tmp_path, capsys):
    trainer = Trainer(tiny(tmp_path), tmp_path / "run", progress=False)
    policy = trainer.save_policy()
    with pytest.raises(CheckpointError, match="policy only"):
        read_training_checkpoint(policy)
    assert run_train("--resume", policy) == 2
    assert "policy only" in capsys.readouterr().err


# -- exact resume ---------------------------------------------------------------------------


def test_stopped_and_resumed_run_ends_like_a_straight_run(tmp_path):
    common = ["--config", TINY, "--set", "eval.final_matches=0"]
    assert run_train(*common, "--set", f"run.dir={tmp_path / 'a'}") == 0
    assert run_train(*common, "--set", f"run.dir={tmp_path / 'b'}", "--stop-after-updates", "3") == 0
    stopped = read_training_checkpoint(tmp_path / "b" / "tiny" / "checkpoint.pt")
    assert stopped["training"]["iteration"] == 3
    assert run_train("--resume", tmp_path / "b" / "tiny") == 0
    a = read_training_checkpoint(tmp_path / "a" / "tiny" / "checkpoint.pt")
    b = read_training_checkpoint(tmp_path / "b" / "tiny" / "checkpoint.pt")
    assert a["training"]["iteration"] > 3
    assert_same_state(a, b)
    assert metrics_rows(tmp_path / "a" / "tiny") == metrics_rows(tmp_path / "b" / "tiny")


def test_killed_and_resumed_run_ends_like_a_straight_run(tmp_path):
    """SIGKILL at an arbitrary moment after the second update, then --resume: same final state."""
    common = ["--config", str(TINY), "--set", "eval.final_matches=0", "--set", "train.total_steps=1200"]
    assert run_train(*common, "--set", f"run.dir={tmp_path / 'a'}") == 0
    run = tmp_path / "b" / "tiny"
    cmd = [sys.executable, str(ROOT / "train.py"), *common, "--set", f"run.dir={tmp_path / 'b'}", "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if (run / "metrics.csv").exists() and len((run / "metrics.csv").read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed; raise train.total_steps"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert run_train("--resume", run) == 0
    a = read_training_checkpoint(tmp_path / "a" / "tiny" / "checkpoint.pt")
    b = read_training_checkpoint(run / "checkpoint.pt")
    assert_same_state(a, b)
    assert metrics_rows(tmp_path / "a" / "tiny") == metrics_rows(run)
    assert not [p for p in run.iterdir() if p.suffix == ".tmp"]


def test_same_seed_same_run(tmp_path):
    first = Trainer(tiny(tmp_path), tmp_path / "one", progress=False)
    second = Trainer(tiny(tmp_path), tmp_path / "two", progress=False)
    other = Trainer(tiny(tmp_path, "run.seed=1"), tmp_path / "three", progress=False)
    for t in (first, second, other):
        t.step()
    same = [torch.equal(v, second.net.state_dict()[k]) for k, v in first.net.state_dict().items()]
    differ = [torch.equal(v, other.net.state_dict()[k]) for k, v in first.net.state_dict().items()]
    assert all(same) and not all(differ)


def thread_run_weights(tmp_path: Path, threads: int, env: dict) -> dict:
    """The weights after a short run with ``threads`` update threads, in a fresh process with ``env``."""
    out = tmp_path / f"threads{threads}"
    sets = ["model.hidden=128", "model.action_hidden=64", "train.envs=24", "train.minibatch=512",
            "train.rollout_workers=2", "train.total_steps=1500", "imitation.teacher=null", "eval.every=0",
            "eval.final_matches=0", f"run.threads={threads}", f"run.dir={out}"]  # fmt: skip
    cmd = [sys.executable, str(ROOT / "train.py"), "--config", str(TINY), "--no-progress"]
    cmd += [arg for key in sets for arg in ("--set", key)]
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return read_checkpoint(out / "tiny" / "policy.pt")["weights"]


def test_the_thread_count_does_not_change_the_weights_in_mkl_strict_mode(tmp_path):
    """Bit-for-bit runs from the seed at any ``run.threads``, with Intel MKL's strict reproducible mode.

    On some CPUs (AVX-512 ones among them) MKL splits a product differently for
    one thread and for two, so the thread count changes the last bits unless
    ``MKL_CBWR=AUTO,STRICT`` is set. MKL reads it when it starts: each run is its own process.
    """
    env = {**os.environ, "MKL_CBWR": "AUTO,STRICT"}
    one, two = (thread_run_weights(tmp_path, threads, env) for threads in (1, 2))
    assert one.keys() == two.keys()
    assert all(torch.equal(value, two[key]) for key, value in one.items())


# -- learning ----------------------------------------------------------------------------------


def test_loss_falls_on_a_fixed_batch(tmp_path):
    cfg = tiny(tmp_path)
    trainer = Trainer(cfg, tmp_path / "run", progress=False)
    specs = [MatchSpec(seed, [CURRENT, CURRENT], "self") for seed in range(4)]
    batch, _ = trainer.rollouts.play(specs, trainer.net)
    data = to_tensors(batch, trainer.device)
    adv, ret = advantages(batch, critic_values(trainer.net, data), 0.99, 0.9)
    data.adv, data.ret = torch.from_numpy(adv), torch.from_numpy(ret)
    everything = torch.arange(len(data))

    def total() -> float:
        with torch.no_grad():
            terms = losses(trainer.net, data, everything, clip=0.2)
        return float(terms["policy_loss"] + 0.5 * terms["value_loss"])

    before = total()
    cfg["train"].update(epochs=5, minibatch=len(data), entropy_coef=0.0)
    update(trainer.net, trainer.optimizer, data, cfg, trainer.generator)
    after = total()
    assert after < before - 0.01 * abs(before)


def test_a_shuffled_epoch_read_in_runs_gives_the_gathered_minibatches_losses_and_gradients(tmp_path):
    trainer = Trainer(tiny(tmp_path), tmp_path / "run", progress=False)
    specs = [MatchSpec(seed, [CURRENT, CURRENT], "self") for seed in range(4)]
    batch, _ = trainer.rollouts.play(specs, trainer.net)
    data = to_tensors(batch, trainer.device)
    adv, ret = advantages(batch, critic_values(trainer.net, data), 0.99, 0.9)
    data.adv, data.ret = torch.from_numpy(adv), torch.from_numpy(ret)
    order = torch.randperm(len(data), generator=torch.Generator().manual_seed(3))
    shuffled = reorder(data, order)

    def terms_and_grads(source, idx):
        trainer.net.zero_grad()
        terms = losses(trainer.net, source, idx, clip=0.2)
        (terms["policy_loss"] + terms["value_loss"] - 0.01 * terms["entropy"]).backward()
        return {k: float(v.detach()) for k, v in terms.items()}, [p.grad.clone() for p in trainer.net.parameters()]

    for start in range(0, len(data), 7):
        gathered, gathered_grads = terms_and_grads(data, order[start : start + 7])
        run, run_grads = terms_and_grads(shuffled, slice(start, start + 7))
        assert gathered == run
        assert all(torch.equal(a, b) for a, b in zip(gathered_grads, run_grads, strict=True))


def _echo(*values):
    return values


def test_worker_results_come_back_through_shared_memory_whole_and_leave_no_block():
    arrays = (np.arange(10, dtype=np.int8).reshape(2, 5), np.zeros((0, 3), np.float32), np.array([1.5, -2.0]))
    head, name, sizes = _through_shared_memory(_echo, (*arrays, "text"))
    assert name is not None and sum(sizes) == 10 + 0 + 16
    back = _from_shared_memory(head, name, sizes)
    assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(arrays, back[:3], strict=True))
    assert back[3] == "text"
    back[0][0, 0] = 99  # the arrays are the caller's own, writable, and the block is gone
    with pytest.raises(FileNotFoundError):
        SharedMemory(name=name)
    assert _from_shared_memory(*_through_shared_memory(_echo, ("no arrays", 3))) == ("no arrays", 3)


def test_rewards_give_the_match_result_and_the_points_difference():
    rules = make_rules("pagat", 2, target=100)
    net = PolicyNet(16, 8)
    specs = [MatchSpec(seed, [CURRENT, CURRENT], "self", sample_seed=seed) for seed in range(6)]
    win_only = RolloutWorker(rules, torch.device("cpu"), points_weight=0.0, win_weight=1.0)
    batch, _ = win_only.play(specs, net)
    trajectories = chains(batch)
    assert len(trajectories) == 12 == batch.matches_ended  # one per seat and match: both seats learn in self-play
    assert len(batch) == sum(len(t) for t in trajectories)
    finals = sorted(batch.reward[t[-1]] for t in trajectories)
    assert finals == [-1.0] * 6 + [1.0] * 6  # one winner, one loser per match, on the last decision of each
    assert all(batch.reward[i] == 0.0 for t in trajectories for i in t[:-1])
    points_only = RolloutWorker(rules, torch.device("cpu"), points_weight=1.0, win_weight=0.0)
    batch, _ = points_only.play(specs, net)
    for i in range(len(batch)):
        assert abs(batch.reward[i] * 100 / 5 - round(batch.reward[i] * 100 / 5)) < 1e-9  # points come in fives
    assert (batch.reward > 0).any() and (batch.reward < 0).any()


# -- inputs ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("rules", "players"), [("pagat", 2), ("fives", 3), ("pagat", 4)])
def test_the_trainer_learns_from_the_environments_contract(rules, players):
    """Every recorded decision holds the seat's observation, its legal feature rows and the global state."""
    table = make_rules(rules, players)
    worker = RolloutWorker(table, torch.device("cpu"), 1.0, 1.0)
    spec = MatchSpec(5, [Teacher(GreedyAgent(seat)) for seat in range(players)], "teacher", sample_seed=9)
    batch, _ = worker.play([spec], PolicyNet(16, 8))
    bots = [GreedyAgent(seat) for seat in range(players)]
    for seat, bot in enumerate(bots):
        bot.reset(spec.sample_seed + seat)
    state = State(table, seed=spec.seed)
    i, row = 0, 0
    while not state.finished:
        view = state.view(state.to_act)
        action = bots[state.to_act].act(view)
        if len(view.legal) > 1:
            legal = sorted(view.legal)
            assert (batch.obs[i] == encode_observation(view)).all()
            assert (batch.state[i] == encode_state(state)).all()
            assert batch.width[i] == len(legal)
            assert (batch.rows[row : row + len(legal)] == action_features(view)[legal]).all()
            assert legal[batch.chosen[i]] == action
            i, row = i + 1, row + len(legal)
        state.apply(action)
    assert i == len(batch) > 20


def test_playout_teachers_label_every_legal_action_with_its_value_on_the_true_deal():
    table = make_rules("pagat", 2, target=80)
    worker = RolloutWorker(table, torch.device("cpu"), 1.0, 1.0)
    spec = MatchSpec(3, [Teacher(GreedyAgent(seat), playouts=True) for seat in range(2)], "teacher", sample_seed=4)
    batch, _ = worker.play([spec], PolicyNet(16, 8))
    assert batch.values is not None and batch.values.shape == (len(batch.rows),)
    bots = [GreedyAgent(seat) for seat in range(2)]
    for seat, bot in enumerate(bots):
        bot.reset(spec.sample_seed + seat)
    state, row = State(table, seed=spec.seed), 0
    while not state.finished:
        view = state.view(state.to_act)
        if len(view.legal) > 1:
            values = playout_values(state)
            assert batch.values[row : row + len(values)].tolist() == pytest.approx(values, abs=1e-4)
            row += len(values)
        state.apply(bots[state.to_act].act(view))
    assert row == len(batch.rows) and len(set(batch.values.tolist())) > 3
    plain, _ = worker.play([MatchSpec(3, [Teacher(GreedyAgent(s)) for s in range(2)], "teacher", 4)], PolicyNet(16, 8))
    assert plain.values is None
    with pytest.raises(ValueError, match="play-out values"):
        Batch.concat([batch, plain])


def test_a_playouts_warm_start_ranks_actions_by_their_values(tmp_path):
    from allfives_train.imitation import _loss, imitate

    cfg = tiny(tmp_path, "imitation.target=playouts", "imitation.matches=40", "imitation.epochs=15", "game.target=250",
               "imitation.minibatch=128", "model.hidden=64", "model.action_hidden=32")  # fmt: skip
    trainer = Trainer(cfg, tmp_path / "run", progress=False)
    specs = [MatchSpec(seed, [Teacher(GreedyAgent(s), playouts=True) for s in range(2)], "teacher", seed)
             for seed in range(900, 910)]  # fmt: skip
    held_out, _ = trainer.rollouts.play(specs, trainer.net)
    data = to_tensors(held_out, trainer.device)
    data.ret = torch.zeros(len(data))
    values = torch.from_numpy(held_out.values)
    everything = torch.arange(len(data))

    @torch.no_grad()
    def gain() -> float:
        """Points the actor's favourite plays out above the mean legal action, on decisions it never saw."""
        logits, mask = policy_logits(trainer.net, data, everything)
        table = torch.zeros_like(logits)
        table[mask] = values
        mean = table.sum(1) / mask.sum(1)
        return float((table.gather(1, logits.argmax(1, keepdim=True)).squeeze(1) - mean).mean())

    with torch.no_grad():
        loss, _ = _loss(trainer.net, data, everything, 0.0, values)
        shifted, _ = _loss(trainer.net, data, everything, 0.0, values + 7.0)
    assert float(shifted) == pytest.approx(float(loss), rel=1e-5)  # only the differences between actions count
    before = gain()
    stats = imitate(
        trainer.net, trainer.optimizer, trainer.rollouts, cfg, trainer.rng, trainer.generator, trainer.device
    )
    after = gain()
    print(before, after, stats)
    assert stats["imitation_decisions"] > 2000 and 0 < stats["imitation_agreement"] <= 1
    assert after > before + 3.0  # its favourites play out points better than before it learned


def test_the_huber_fit_counts_small_errors_squared_and_large_ones_linearly(tmp_path):
    from allfives_train.imitation import _loss

    trainer = Trainer(tiny(tmp_path, "model.hidden=32", "model.action_hidden=16"), tmp_path / "run", progress=False)
    specs = [MatchSpec(seed, [Teacher(GreedyAgent(s), playouts=True) for s in range(2)], "teacher", seed)
             for seed in range(3)]  # fmt: skip
    batch, _ = trainer.rollouts.play(specs, trainer.net)
    data = to_tensors(batch, trainer.device)
    data.ret = torch.zeros(len(data))
    values = torch.from_numpy(batch.values)
    everything = torch.arange(len(data))

    def actor_loss(scale: float, huber: float) -> float:
        with torch.no_grad():
            return float(_loss(trainer.net, data, everything, 0.0, values * scale, huber)[0])

    assert actor_loss(1.0, 1e6) == pytest.approx(actor_loss(1.0, 0.0), rel=1e-6)  # no error beyond the bound
    assert actor_loss(1000.0, 1.0) < actor_loss(1000.0, 0.0) / 100
    assert actor_loss(2000.0, 0.0) / actor_loss(1000.0, 0.0) == pytest.approx(4.0, rel=0.01)
    assert actor_loss(2000.0, 1.0) / actor_loss(1000.0, 1.0) == pytest.approx(2.0, rel=0.01)


# -- configuration -------------------------------------------------------------------------------


def test_default_yaml_spells_out_the_built_in_defaults():
    assert load_config(ROOT / "configs" / "default.yaml") == defaults()


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.stem)
def test_shipped_configs_load_and_write_to_their_own_run_directory(path):
    cfg = load_config(path)
    assert cfg["run"]["name"] == path.stem  # two shipped configs never overwrite each other's runs


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("train.totl_steps=5", ["train.totl_steps", "allowed keys in 'train'", "total_steps"]),
        ("trian.lr=0.1", ["trian.lr", "run, game"]),
        ("train.lr=fast", ["train.lr", "wrong type", "positive number"]),
        ("train.envs=0", ["train.envs", "not allowed", "positive integer"]),
        ("train.envs=2.5", ["train.envs", "wrong type"]),
        ("game.num_players=5", ["game.num_players", "2, 3 or 4"]),
        ("run.device=tpu", ["run.device", "'cuda'"]),
        ("eval.baselines=[greedy, grandmaster]", ["eval.baselines", "heuristic"]),
        ("train.epochs", ["train.epochs", "section.key=value"]),
        ("game.partnerships=true", ["game", "partnerships"]),
        ("imitation.teacher=grandmaster", ["imitation.teacher", "'search:N'"]),
        ("imitation.teacher=search:0", ["imitation.teacher", "positive whole number"]),
        ("imitation.teacher=search:checkpoint:missing.pt", ["imitation.teacher", "missing.pt"]),
        ("imitation.target=search", ["imitation.target", "'playouts'"]),
        ("imitation.value_scale=0", ["imitation.value_scale", "positive number"]),
        ("imitation.huber=-1", ["imitation.huber", "not allowed"]),
        ("iteration.heuristic=1.5", ["iteration.heuristic", "not allowed"]),
    ],
)
def test_bad_overrides_name_the_key(tmp_path, capsys, override, words):
    with pytest.raises(ConfigError) as info:
        load_config(TINY, [override])
    for word in words:
        assert word in str(info.value)
    assert run_train("--config", TINY, "--set", override) == 2
    err = capsys.readouterr().err
    assert words[0] in err and not (tmp_path / "tiny").exists()


def test_the_rounds_bot_shares_must_leave_room_for_each_other():
    with pytest.raises(ConfigError, match="iteration: the shares of heuristic, greedy, search"):
        load_config(TINY, ["iteration.heuristic=0.7", "iteration.search=0.4"])
    assert load_config(TINY, ["iteration.heuristic=0.6", "iteration.greedy=0.4"])["iteration"]["greedy"] == 0.4
    assert load_config(TINY, ["iteration.heuristic=0.7", "iteration.greedy=0.2", "iteration.search=0.1"])
    from allfives_train.iteration import BOTS

    assert tuple(BOTS) == ITERATION_BOTS  # every share the config takes names a bot a round can seat


def test_a_search_can_teach_the_warm_start(tmp_path):
    from allfives_train.imitation import teacher_specs

    cfg = tiny(tmp_path, "imitation.teacher=search:8")
    specs = teacher_specs(rules_of(cfg), cfg["imitation"]["teacher"], 2, random.Random(0))
    teachers = [control.agent for spec in specs for control in spec.controls]
    assert all(isinstance(t, SearchAgent) and t.simulations == 8 for t in teachers)


def test_dotted_options_and_bad_files(tmp_path, capsys):
    assert train.split_dotted(["--train.lr", "0.1", "--eval.every=3"]) == ["train.lr=0.1", "eval.every=3"]
    assert run_train("--config", TINY, "--train.envs", "zero") == 2
    assert "train.envs" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("train:\n  lr: [1\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    bad.write_text("train:\n  warmup: 3\n")
    with pytest.raises(ConfigError, match=r"train\.warmup"):
        load_config(bad)
    bad.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(bad)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")


def test_rollouts_over_two_processes_equal_one(tmp_path):
    rules = make_rules("pagat", 2, target=60)
    net = PolicyNet(16, 8)
    specs = [MatchSpec(seed, [CURRENT, CURRENT], "self", sample_seed=seed + 100) for seed in range(6)]
    worker = RolloutWorker(rules, torch.device("cpu"), points_weight=1.0, win_weight=1.0)
    one, results_one = RolloutPool(worker, 1, 16, 8).play(specs, net)
    pool = RolloutPool(worker, 2, 16, 8)
    try:
        two, results_two = pool.play(specs, net)
    finally:
        pool.close()
    assert sorted(results_one) == sorted(results_two)

    def games(batch):  # each seat's decisions and rewards; the order of interleaving differs
        return sorted(
            (tuple(batch.chosen[i] for i in t), tuple(round(batch.reward[i], 9) for i in t)) for t in chains(batch)
        )

    assert len(one) == len(two) and games(one) == games(two)


def test_imitation_learns_the_teachers_choices(tmp_path):
    from allfives_train.imitation import _loss, imitate, teacher_specs

    cfg = tiny(tmp_path, "imitation.target=choice", "imitation.matches=16", "imitation.epochs=15", "model.hidden=64",
               "model.action_hidden=32")  # fmt: skip
    trainer = Trainer(cfg, tmp_path / "run", progress=False)
    specs = teacher_specs(trainer.rules, "greedy", 6, trainer.rng)
    held_out, _ = trainer.rollouts.play(specs, trainer.net)
    data = to_tensors(held_out, trainer.device)
    data.ret = torch.zeros(len(data))
    everything = torch.arange(len(data))
    _, before = _loss(trainer.net, data, everything, 0.0, None)
    cfg["imitation"]["teacher"] = "greedy"
    stats = imitate(
        trainer.net, trainer.optimizer, trainer.rollouts, cfg, trainer.rng, trainer.generator, trainer.device
    )
    _, after = _loss(trainer.net, data, everything, 0.0, None)
    print(before, after, stats)
    assert stats["imitation_agreement"] > 0.65 and after > before + 0.15  # greedy is easy to read from the features


def test_a_run_out_of_time_evaluates_its_last_update_and_says_how_to_go_on(tmp_path, capsys):
    """run.max_minutes stops self-play after a whole update: that update's evaluation is logged, eval.md says the
    run stopped early, and the message names --resume."""
    common = ["--config", TINY, "--set", f"run.dir={tmp_path}", "--set", "train.total_steps=60000"]
    assert run_train(*common, "--set", "run.max_minutes=0.00001") == 0
    run = tmp_path / "tiny"
    with open(run / "metrics.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1 and rows[0]["iteration"] == "1" and rows[0]["eval_win_random"] != ""
    table = (run / "eval.md").read_text()
    assert table.startswith("**Stopped early**: run.max_minutes=1e-05 was reached after update 1")
    assert f"python train.py --resume {run}" in table and f"python train.py --resume {run}" in capsys.readouterr().out
    assert run_train("--resume", run, "--set", "run.max_minutes=null", "--stop-after-updates", "1") == 0
    assert read_training_checkpoint(run / "checkpoint.pt")["training"]["iteration"] == 2  # it trains on


def test_the_warm_start_shows_its_own_progress(tmp_path, capsys):
    cfg = tiny(tmp_path, "imitation.target=playouts", "imitation.matches=4")
    trainer = Trainer(cfg, tmp_path / "run", progress=True)
    try:
        trainer.warm_start()
    finally:
        trainer.close()
    err = capsys.readouterr().err
    assert "warm start: playing and labelling heuristic's matches" in err and "4/4" in err
    assert "warm start: fitting" in err
