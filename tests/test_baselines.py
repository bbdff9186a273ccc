"""The baselines: every algorithm's --quick path trains, leaves playable snapshots and is measured; bad input is refused.

One ``python -m agents.baselines --quick`` run (a few minutes on two cores)
serves the per-algorithm tests. An algorithm whose library is missing is
skipped with the extra to install (a failure where ``CI`` is set, since CI
installs the ``baselines`` extra); RLlib also needs a network namespace with
loopback only, as every Ray test here (see ``tests/optional.py``).
"""

from __future__ import annotations

import csv
import importlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from optional import skip_reason

from agents.baselines import ALGORITHMS, Job, Recorder, read_record
from agents.baselines.__main__ import QUICK
from agents.baselines.evaluation import CURVE_OPPONENTS
from agents.benchmark import LADDER
from agents.registry import LIBRARY_AGENTS, make_agent
from allfives_env.core import State, make_rules

ROOT = Path(__file__).resolve().parent.parent
RUN = [sys.executable, "-m", "agents.baselines"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def missing_library(name: str) -> str | None:
    """What to install for the algorithm, or None; a failure where CI is set, since CI installs every extra."""
    algorithm = ALGORITHMS[name]
    missing = algorithm.missing()
    if missing and os.environ.get("CI"):
        pytest.fail(f"{name} needs {', '.join(missing)}, which CI installs (the {algorithm.extra} extra)")
    if missing:
        return f"needs {', '.join(missing)}: pip install -e '.[{algorithm.extra}]' (the '{algorithm.extra}' extra)"
    return None


def why_not(name: str) -> str | None:
    """Why the algorithm cannot run here (a missing package, Ray without a loopback-only network), or None."""
    missing = missing_library(name)
    if missing:
        return missing
    others = sorted(n for _, n in socket.if_nameindex() if n != "lo")
    if name == "rllib_ppo" and others and os.environ.get("ALLFIVES_REQUIRE_RAY") != "1":
        return f"Ray runs only where loopback is the sole network interface (found {', '.join(others)})"
    return None


@pytest.fixture(scope="module")
def quick(tmp_path_factory) -> tuple[Path, dict, list[str]]:
    """One --quick run of every algorithm that can run here: (output folder, baselines.json, algorithms run)."""
    names = [name for name in ALGORITHMS if why_not(name) is None]
    if not names:
        pytest.skip("no baseline library is installed: pip install -e '.[baselines]'")
    out = tmp_path_factory.mktemp("baselines")
    done = subprocess.run([*RUN, "--quick", "--only", *names, "--out", str(out)], cwd=ROOT, env=_env(),
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out, json.loads((out / "baselines.json").read_text(encoding="utf-8")), names


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_quick_run_trains_the_budget_and_measures_every_snapshot(quick, name):
    out, results, names = quick
    if name not in names:
        pytest.skip(why_not(name))
    (run,) = [r for r in results["runs"] if r["algorithm"] == name]
    assert run["decisions"] >= QUICK["budget"] and run["seconds"] > 0 and run["peak_mb"] > 50
    assert run["decisions_per_s"] == pytest.approx(run["decisions"] / run["seconds"], rel=0.01)
    record = read_record(out / "runs" / name / "seed1")
    assert record["decisions"] == run["decisions"] and record["snapshots"][-1].spec == run["final_spec"]
    log = out / "runs" / name / "seed1" / "train.log"
    assert log.stat().st_size < 50_000, "a library's chatter per step would fill the disk at the full budget"
    progress = [line for line in log.read_text(encoding="utf-8").splitlines() if line.startswith("snapshot: ")]
    assert len(progress) == len(record["snapshots"]), "each snapshot logs a progress line, whatever the library mutes"
    curve = [r for r in results["curves"] if r["algorithm"] == name]
    points = sorted({r["point"] for r in curve})
    assert points == list(range(1, len(record["snapshots"]) + 1))
    for point, snapshot in zip(points, record["snapshots"], strict=True):
        rows = [r for r in curve if r["point"] == point]
        assert [r["opponent"] for r in rows] == list(CURVE_OPPONENTS)
        for r in rows:
            assert r["decisions"] == snapshot.decisions and r["games"] == 2 * QUICK["matches"]
            assert r["ci_low"] <= r["win_rate"] <= r["ci_high"]
    assert [r["decisions"] for r in curve] == sorted(r["decisions"] for r in curve)
    assert [r["opponent"] for r in results["final"] if r["algorithm"] == name] == list(LADDER)
    attacks = [r for r in results["exploitability"] if r["algorithm"] == name]
    assert [r["method"] for r in attacks] == ["best_response", "exploiter"]
    assert [r["seed"] for r in attacks] == [1, 1], "each row names the training run it attacked"
    assert results["settings"]["algorithms"][name]["changed"], "every run lists what it changed"


def test_result_files_parse_and_agree(quick):
    out, results, names = quick
    for table in ("runs", "curves", "final", "exploitability"):
        with open(out / f"{table}.csv", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == len(results[table]) > 0
        assert [r["algorithm"] for r in rows] == [r["algorithm"] for r in results[table]]
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert all(f"| {name} | 1 |" in summary for name in names)
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_the_final_snapshot_plays_legal_moves_through_its_spec(quick, name):
    out, results, names = quick
    if name not in names:
        pytest.skip(why_not(name))
    (run,) = [r for r in results["runs"] if r["algorithm"] == name]
    chosen, state = play_legally(make_agent(run["final_spec"], seed=3), seed=11, limit=60)
    assert chosen == 60 or state.finished


def play_legally(agent, seed: int, limit: int | None = None) -> tuple[int, State]:
    """``agent`` at every seat of a two-player match, each choice checked legal, to the end or ``limit`` choices."""
    state = State(make_rules("pagat", 2), seed=seed)
    chosen = 0
    while not state.finished and chosen != limit:
        view = state.view(state.to_act)
        action = agent.act(view)
        assert action in view.legal
        state.apply(action)
        chosen += 1
    return chosen, state


# -- bad input: one line that says what is allowed ---------------------------------------------


@pytest.mark.parametrize(
    ("args", "allowed"),
    [
        (["--only", "nope"], "allowed: " + ", ".join(ALGORITHMS)),
        (["--budget", "0"], "--budget 0: allowed: a positive whole number"),
        (["--seeds", "x"], "--seeds x: allowed: whole numbers >= 0"),
        (["--points", "-3"], "--points -3: allowed: a positive whole number"),
        (["--br-minutes", "0"], "--br-minutes 0: allowed: a positive number of minutes"),
    ],
)
def test_bad_arguments_are_refused_in_one_line(args, allowed, tmp_path):
    done = subprocess.run(
        [*RUN, *args, "--out", str(tmp_path)], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and allowed in done.stderr, done.stderr


def test_a_missing_library_names_its_extra(tmp_path):
    """RLCard hidden, as where the baselines extra is not installed: the run and the spec both say what to install."""
    (tmp_path / "rlcard.py").write_text("raise ModuleNotFoundError(\"No module named 'rlcard'\", name='rlcard')\n")
    env = {**_env(), "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    done = subprocess.run([*RUN, "--only", "dmc", "--quick", "--out", str(tmp_path)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "dmc needs rlcard" in done.stderr and "pip install -e '.[baselines]'" in done.stderr
    probe = "from agents.registry import make_agent\ntry:\n    make_agent('nfsp:x.pt')\nexcept ValueError as e:\n    print(e)"
    said = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True).stdout
    assert (
        said.strip() == "nfsp:x.pt needs rlcard, which is not installed; install it with: pip install -e '.[baselines]'"
    )


@pytest.mark.parametrize("kind", ["sb3", "tianshou", "dmc", "nfsp"])
@pytest.mark.parametrize("content", [b"", b"not a checkpoint at all", b"PK\x03\x04broken zip"])
def test_a_broken_checkpoint_is_refused_in_one_line(tmp_path, kind, content):
    package = LIBRARY_AGENTS[kind][1]
    if importlib.util.find_spec(package.split(".")[0]) is None:
        pytest.skip(skip_reason(package.split(".")[0]))
    path = tmp_path / "broken.bin"
    path.write_bytes(content)
    for target in (path, tmp_path / "missing.bin"):
        with pytest.raises(ValueError) as err:
            make_agent(f"{kind}:{target}")
        message = str(err.value)
        assert message.startswith(f"{kind}:{target}: not ") and "\n" not in message


def test_a_spec_without_a_path_says_what_the_path_is():
    for kind, (_, _, _, what) in LIBRARY_AGENTS.items():
        with pytest.raises(ValueError, match=f"{kind}:PATH needs {what}"):
            make_agent(f"{kind}:")


# -- the budget's marks and the run record, without any library ---------------------------------


def test_snapshots_are_due_once_per_mark_passed(tmp_path):
    job = Job("x", 0, 1000, 4, tmp_path)
    assert job.marks() == [250, 500, 750, 1000]
    recorder = Recorder(job)
    assert not recorder.due(249) and recorder.due(250)
    recorder.save(600, "random")  # one update passed two marks: one snapshot covers both
    assert not recorder.due(700) and recorder.due(750) and not recorder.finished(999) and recorder.finished(1000)
    recorder.save(1000, "greedy")
    record = read_record(tmp_path)
    assert [(s.decisions, s.spec) for s in record["snapshots"]] == [(600, "random"), (1000, "greedy")]
    assert record["job"]["budget"] == 1000


def test_each_snapshot_logs_how_far_the_run_is_and_how_long_it_has_left(tmp_path, monkeypatch, capsys):
    now = [160.0]
    monkeypatch.setattr("agents.baselines.job.time.perf_counter", lambda: now[0])
    recorder = Recorder(Job("x", 0, 1000, 4, tmp_path), started=100.0)
    recorder.save(250, "random")
    assert (
        capsys.readouterr().err == "snapshot: 250 of 1,000 decisions (25%) in 60 s; at this pace about 3 minutes more\n"
    )
    now[0] = 1900.0
    recorder.save(1000, "greedy")
    assert capsys.readouterr().err == "snapshot: 1,000 of 1,000 decisions (100%) in 1,800 s\n"


def test_a_run_without_a_record_is_named(tmp_path):
    with pytest.raises(ValueError, match="run.json: no readable run record"):
        read_record(tmp_path)


# -- the RLCard adapter ------------------------------------------------------------------------


def test_the_rlcard_env_plays_whole_matches_and_counts_its_steps():
    if importlib.util.find_spec("rlcard") is None:
        if os.environ.get("CI"):
            pytest.fail("rlcard is missing; CI installs the baselines extra")
        pytest.skip(skip_reason("rlcard"))
    import multiprocessing

    from rlcard.agents import RandomAgent

    from agents.rlcard_env import AllFivesRLCardEnv

    steps = multiprocessing.get_context("spawn").Value("q", 0)
    env = AllFivesRLCardEnv({"seed": 5}, steps=steps, auto_forced=True)
    env.set_agents([RandomAgent(env.num_actions) for _ in range(env.num_players)])
    trajectories, payoffs = env.run()
    assert sorted(payoffs.tolist()) in ([-1.0, 1.0], [0.0, 0.0])
    assert steps.value == env.timestep == sum((len(t) - 1) // 2 for t in trajectories)
    for seed, same in ((0, True), (1, False)):
        first, other = AllFivesRLCardEnv({"seed": 5}), AllFivesRLCardEnv({"seed": 5})
        first.seed(0)
        other.seed(seed)
        a, b = first.reset()[0]["obs"], other.reset()[0]["obs"]
        assert (a == b).all() == same  # the actor index, with the run's seed, picks the deals
    with pytest.raises(ValueError, match="allowed: 'win_loss'"):
        AllFivesRLCardEnv(reward="points")


def _count_forever(steps) -> None:
    while True:  # as the env counts a DMC actor's steps
        with steps.get_lock():
            steps.value += 1


def _end_counting_actors_ten_times() -> None:
    """In a process of its own, so that ending every child ends only the counters started here."""
    import multiprocessing
    import time

    from agents.baselines.dmc import end_actors

    context = multiprocessing.get_context("fork")  # the actors are ended at once, whatever they were doing
    steps = context.Value("q", 0)
    for _ in range(10):
        actors = [context.Process(target=_count_forever, args=(steps,), daemon=True) for _ in range(3)]
        for actor in actors:
            actor.start()
        time.sleep(0.05)
        end_actors(steps)
        assert not any(actor.is_alive() for actor in actors)
        assert steps.get_lock().acquire(timeout=2), "an actor was ended holding the counter's lock"
        steps.get_lock().release()
    assert steps.value > 0


def test_dmc_actors_are_ended_without_keeping_the_step_counters_lock():
    if importlib.util.find_spec("rlcard") is None:
        pytest.skip(skip_reason("rlcard"))
    import multiprocessing

    checker = multiprocessing.get_context("spawn").Process(target=_end_counting_actors_ten_times)
    checker.start()
    checker.join(timeout=120)
    if checker.is_alive():
        checker.terminate()
    assert checker.exitcode == 0


def test_a_run_that_fails_later_keeps_the_rows_of_the_runs_before_it(tmp_path, monkeypatch):
    """Each finished run's rows are written at once: a failure (or a kill) later loses only the run it hit."""
    from agents.baselines import __main__ as cli

    done = []

    def fake_run(name, seed, budget, points, budgets, threads, out, results, resume=False):
        if done:  # the first run's rows are on disk before the second starts, as a kill now would leave them
            assert "ppo,1," in (out / "runs.csv").read_text()
            raise RuntimeError(f"{name} seed {seed}: training failed (exit status 1)")
        done.append(name)
        results.runs.append({"algorithm": name, "seed": seed, "budget": budget, "decisions": budget, "seconds": 1.0,
                             "decisions_per_s": float(budget), "peak_mb": 1, "command": "x", "final_spec": "random"})  # fmt: skip

    monkeypatch.setattr(cli, "run_one", fake_run)
    monkeypatch.setattr(cli, "missing_extras", lambda names: None)
    assert cli.main(["--only", "ppo", "--seeds", "1", "2", "--budget", "10", "--out", str(tmp_path)]) == 1
    with (tmp_path / "runs.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["algorithm"], r["seed"]) for r in rows] == [("ppo", "1")]


def _part(out: Path, algorithm: str, seeds: list[int], budget: int = 10, matches: int = 20, workers: int = 2) -> Path:
    """A finished run's result files, written as the command writes them (no training)."""
    from agents.baselines import __main__ as cli
    from agents.baselines.results import Results

    results = Results(f"python -m agents.baselines --only {algorithm}", {"budget": budget, "points": 1,
                      "seeds": seeds, "algorithms": {algorithm: {"title": algorithm}},
                      "evaluation": {"curve_matches": matches, "workers": workers}})  # fmt: skip
    for seed in seeds:
        results.runs.append({"algorithm": algorithm, "seed": seed, "budget": budget, "decisions": budget,
                             "seconds": 1.0, "decisions_per_s": float(budget), "peak_mb": 1, "command": "x",
                             "final_spec": "random"})  # fmt: skip
        results.final.append({"algorithm": algorithm, "seed": seed, "opponent": "random", "win_rate": 0.25 * seed})
    cli.write(results, out, quiet=True)
    return out


def test_runs_made_apart_combine_into_one_table(tmp_path, capsys):
    from agents.baselines import __main__ as cli

    parts = [
        _part(tmp_path / "a", "dmc", [1, 2]),
        _part(tmp_path / "b", "nfsp", [1]),
        _part(tmp_path / "c", "nfsp", [3], workers=1),  # the harness's figures do not depend on its workers
    ]
    assert cli.main(["--combine", *map(str, parts), "--out", str(tmp_path / "all")]) == 0
    combined = json.loads((tmp_path / "all" / "baselines.json").read_text(encoding="utf-8"))
    runs = [("dmc", 1), ("dmc", 2), ("nfsp", 1), ("nfsp", 3)]
    assert [(r["algorithm"], r["seed"]) for r in combined["runs"]] == runs
    assert (
        combined["command"]
        == ["python -m agents.baselines --only dmc"] + ["python -m agents.baselines --only nfsp"] * 2
    )
    assert combined["settings"]["seeds"] == [1, 2, 3]
    assert set(combined["settings"]["algorithms"]) == {"dmc", "nfsp"}
    summary = (tmp_path / "all" / "summary.md").read_text(encoding="utf-8")
    assert "| dmc | 2 |" in summary and "37.5% [25.0%, 50.0%]" in summary and "| nfsp | 2 |" in summary


@pytest.mark.parametrize(
    ("second", "refusal"),
    [
        (("dmc", [2], 20), "measured with other settings (budget)"),
        (("dmc", [2], 10, 40), "measured with other settings (evaluation)"),
        (("dmc", [1], 10), "dmc seed 1 appear in more than one"),
        (None, "no baselines.json in"),
    ],
)
def test_results_that_do_not_match_are_not_combined(tmp_path, capsys, second, refusal):
    from agents.baselines import __main__ as cli

    first = _part(tmp_path / "a", "dmc", [1])
    other = _part(tmp_path / "b", *second) if second else tmp_path / "empty"
    assert cli.main(["--combine", str(first), str(other), "--out", str(tmp_path / "all")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and refusal in err and "allowed:" in err, err
    assert not (tmp_path / "all").exists()


def test_dmc_trains_in_a_checkout_with_a_detached_head(tmp_path, monkeypatch):
    """RLCard's DMC asks git for the current branch, which a detached HEAD lacks; the runner leaves git out."""
    if why_not("dmc"):
        pytest.skip(why_not("dmc"))
    from rlcard.agents.dmc_agent import file_writer

    from agents.baselines import dmc

    repo = tmp_path / "checkout"
    repo.mkdir()
    for args in (["init", "-q"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
                 "-m", "x"], ["checkout", "-q", "--detach"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    monkeypatch.chdir(repo)
    monkeypatch.setattr(file_writer, "gather_metadata", file_writer.gather_metadata)  # restored after the test
    with pytest.raises(TypeError, match="detached"):
        file_writer.FileWriter(xpid="x", rootdir=str(tmp_path / "logs"))
    monkeypatch.setattr(file_writer, "gather_metadata", dmc._metadata_without_git)
    writer = file_writer.FileWriter(xpid="x", rootdir=str(tmp_path / "logs"))
    assert writer.metadata["git"] is None and writer.metadata["env"] == {} and writer.metadata["xpid"] == "x"


#: (spec kind, algorithm, file under docs/baselines): the 200,000-decision runs' and the full budget's snapshots
SHIPPED = [("checkpoint", "ppo", "checkpoints/ppo-seed1.pt"), ("sb3", "maskable_ppo", "checkpoints/maskable_ppo-seed1.zip"),
           ("tianshou", "tianshou_dqn", "checkpoints/tianshou_dqn-seed1.pt"), ("nfsp", "nfsp", "checkpoints/nfsp-seed1.pt"),
           ("rllib", "rllib_ppo", "checkpoints/rllib_ppo-seed1"),
           ("checkpoint", "ppo", "full-budget/checkpoints/ppo-seed1.pt"),
           ("sb3", "maskable_ppo", "full-budget/checkpoints/maskable_ppo-seed1.zip"),
           ("tianshou", "tianshou_dqn", "full-budget/checkpoints/tianshou_dqn-seed1.pt"),
           ("nfsp", "nfsp", "full-budget/checkpoints/nfsp-seed1.pt"),
           ("rllib", "rllib_ppo", "full-budget/checkpoints/rllib_ppo-seed1")]  # fmt: skip


@pytest.mark.parametrize(("kind", "algorithm", "file"), SHIPPED, ids=[file for _, _, file in SHIPPED])
def test_the_shipped_baseline_snapshots_play_legal_moves(kind, algorithm, file):
    """docs/baselines: the first seed's final snapshot of each algorithm, a spec the harness takes."""
    missing = ALGORITHMS[algorithm].missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{kind}: needs {', '.join(missing)}, which CI installs")
        pytest.skip(f"needs {', '.join(missing)}")
    agent = make_agent(f"{kind}:{ROOT / 'docs' / 'baselines' / file}", seed=5)
    for seed in range(3):
        assert play_legally(agent, seed)[1].finished


@pytest.mark.parametrize("name", ["maskable_ppo", "tianshou_dqn"])
def test_the_gym_learners_train_on_the_reward_asked_for(name, tmp_path, monkeypatch):
    """research/baseline_reward.py passes the reward to these two; the baselines themselves keep win_loss."""
    reason = why_not(name)
    if reason:
        pytest.skip(reason)
    runner = importlib.import_module(ALGORITHMS[name].runner)
    built, original = [], runner.AllFivesSingleAgentEnv

    def spy(*args, **kwargs):
        env = original(*args, **kwargs)
        built.append(env.reward_mode)
        return env

    monkeypatch.setattr(runner, "AllFivesSingleAgentEnv", spy)
    for reward in ("points", "win_loss"):
        built.clear()
        job = Job(name, 1, 16, 1, tmp_path / reward)
        job.out.mkdir()
        runner.train(job, Recorder(job), **({} if reward == "win_loss" else {"reward": reward}))
        assert built and set(built) == {reward}


def test_rllib_ppo_builds_its_env_with_the_reward_asked_for():
    missing = missing_library("rllib_ppo")  # no Ray is started, so no network namespace is needed
    if missing:
        pytest.skip(missing)
    from agents.baselines.rllib_ppo import build_config
    from agents.rllib_env import rllib_env

    for args, reward in (((1,), "win_loss"), ((1, "points"), "points")):
        config = build_config(*args).env_config  # what RLlib hands the env creator
        assert rllib_env(config).env.unwrapped.reward_mode == reward and config["auto_forced"] is True


# -- stopping a run and resuming it ------------------------------------------------------------


class _Stopped(Exception):
    """Stands for the stop (a machine taken back, a kill) right after a snapshot."""


def _stop_after_first_snapshot(recorder: Recorder) -> Recorder:
    save = recorder.save

    def save_then_stop(decisions: int, spec: str) -> None:
        save(decisions, spec)
        raise _Stopped

    recorder.save = save_then_stop
    return recorder


def test_a_stopped_nfsp_run_resumes_exactly_where_it_stopped(tmp_path):
    """The run stopped at its first snapshot and resumed ends with the very weights of the run left alone."""
    reason = why_not("nfsp")
    if reason:
        pytest.skip(reason)
    import torch

    runner = importlib.import_module(ALGORITHMS["nfsp"].runner)
    whole, stopped = (Job("nfsp", 4, 1200, 2, tmp_path / name) for name in ("whole", "stopped"))
    for job in (whole, stopped):
        job.out.mkdir()
    runner.train(whole, Recorder(whole))
    with pytest.raises(_Stopped):
        runner.train(stopped, _stop_after_first_snapshot(Recorder(stopped)))
    first = read_record(stopped.out)["snapshots"]
    assert len(first) == 1 and 600 <= first[0].decisions < 1200
    resumed = Recorder.resume(stopped)
    assert resumed.resumed_at == [first[0].decisions] and resumed.last == first[0]
    assert runner.train(stopped, resumed) == read_record(whole.out)["decisions"]
    resumed.write(resumed.snapshots[-1].decisions)
    ends = [read_record(job.out)["snapshots"] for job in (whole, stopped)]
    assert [s.decisions for s in ends[0]] == [s.decisions for s in ends[1]]
    weights = [torch.load(s[-1].spec.split(":", 1)[1], weights_only=True)["seats"] for s in ends]
    for seat, other in zip(*weights, strict=True):
        assert seat.keys() == other.keys() and all(torch.equal(seat[k], other[k]) for k in seat)
    assert [p.name for p in (stopped.out / "snapshots").glob("*.state.xz")] == [
        f"{ends[1][-1].decisions:010d}.state.xz"
    ]
    assert read_record(stopped.out)["resumed_at"] == [first[0].decisions]


def test_a_stopped_rllib_run_goes_on_from_its_last_snapshot(tmp_path, monkeypatch):
    """The resumed sitting restores the algorithm, counters included: one more update reaches the budget."""
    reason = why_not("rllib_ppo")
    if reason:
        pytest.skip(reason)
    from ray.rllib.algorithms.algorithm import Algorithm as RLlibAlgorithm

    runner = importlib.import_module(ALGORITHMS["rllib_ppo"].runner)
    job = Job("rllib_ppo", 2, 8000, 2, tmp_path)  # PPO's default batch: 4,000 decisions an update
    with pytest.raises(_Stopped):
        runner.train(job, _stop_after_first_snapshot(Recorder(job)))
    updates, train = [], RLlibAlgorithm.train
    monkeypatch.setattr(RLlibAlgorithm, "train", lambda self: updates.append(1) or train(self))
    resumed = Recorder.resume(job)
    assert runner.train(job, resumed) == 8000
    assert len(updates) == 1 and [s.decisions for s in resumed.snapshots] == [4000, 8000]
    kept = sorted(
        p.relative_to(tmp_path / "snapshots" / "0000004000")
        for p in (tmp_path / "snapshots" / "0000004000").rglob("*")
        if p.is_file()
    )
    assert kept and all(p.parts[:4] == ("learner_group", "learner", "rl_module", "shared") for p in kept)
    assert (tmp_path / "snapshots" / "0000008000" / "learner_group" / "learner" / "state.pkl").is_file()
    last = [p for p in (tmp_path / "snapshots" / "0000008000").rglob("*") if p.is_file()]
    assert not [p for p in last if str(ROOT).encode() in p.read_bytes()]  # no code pickled with this checkout's path


def test_resuming_is_refused_for_another_run_or_an_algorithm_that_cannot(tmp_path, capsys):
    from agents.baselines.train import open_run

    Recorder(Job("dmc", 1, 1000, 4, tmp_path)).save(250, "random")
    with pytest.raises(ValueError, match=r"seed 1 \(asked: 2\).*with the algorithm, seed, budget and points"):
        open_run(Job("dmc", 2, 1000, 4, tmp_path), True, {})
    with pytest.raises(ValueError, match="dmc cannot go on from a snapshot; allowed: rllib_ppo, nfsp"):
        open_run(Job("dmc", 1, 1000, 4, tmp_path), True, {})
    assert open_run(Job("dmc", 1, 1000, 4, tmp_path), False, {}).last is None  # without --resume: afresh
    Recorder(Job("dmc", 1, 1000, 4, tmp_path)).save(1000, "random")
    assert open_run(Job("dmc", 1, 1000, 4, tmp_path), True, {}) is None  # finished: nothing to train
    assert "finished at 1,000 decisions" in capsys.readouterr().out


def test_a_resumed_nfsp_state_that_does_not_match_its_snapshot_is_named(tmp_path):
    reason = why_not("nfsp")
    if reason:
        pytest.skip(reason)
    from agents.baselines.job import ResumeError
    from agents.baselines.nfsp import load_state

    broken = tmp_path / "0000000600.state.xz"
    broken.write_bytes(b"not xz")
    with pytest.raises(ResumeError, match="0000000600.state.xz: no readable training state to resume from"):
        load_state(broken, 600)


def test_the_runner_resumes_a_stopped_run_and_keeps_a_finished_one(tmp_path, capsys):
    """``--resume`` goes on with a run stopped after its first snapshot, then, run again, only measures it."""
    reason = why_not("nfsp")
    if reason:
        pytest.skip(reason)
    from agents.baselines.__main__ import main

    runner = importlib.import_module(ALGORITHMS["nfsp"].runner)
    job = Job("nfsp", 1, 1200, 2, tmp_path / "runs" / "nfsp" / "seed1")
    job.out.mkdir(parents=True)
    with pytest.raises(_Stopped):
        runner.train(job, _stop_after_first_snapshot(Recorder(job)))
    first = read_record(job.out)["snapshots"][0]
    args = ["--quick", "--only", "nfsp", "--seeds", "1", "--budget", "1200", "--points", "2", "--out", str(tmp_path)]
    assert main([*args, "--resume"]) == 0
    record = read_record(job.out)
    assert record["resumed_at"] == [first.decisions] and record["snapshots"][0] == first
    assert (
        record["decisions"] >= 1200
        and f"resuming at {first.decisions:,} decisions" in (job.out / "train.log").read_text()
    )
    row = json.loads((tmp_path / "baselines.json").read_text(encoding="utf-8"))["runs"][0]
    assert row["seconds"] > first.seconds and row["peak_mb"] > 0 and "--resume" not in row["command"]
    assert main([*args, "--resume"]) == 0  # finished: measured again, not trained
    assert "finished earlier; measuring it again" in capsys.readouterr().out
    again = json.loads((tmp_path / "baselines.json").read_text(encoding="utf-8"))["runs"][0]
    assert again["seconds"] == row["seconds"] and again["peak_mb"] == row["peak_mb"]
    assert read_record(job.out)["snapshots"] == record["snapshots"]
    assert main([*(a if a != "1200" else "2400" for a in args), "--resume"]) == 1
    assert "a run of 1,200 decisions in 2 parts, not 2,400 in 2" in capsys.readouterr().err
