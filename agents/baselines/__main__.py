"""Train the standard algorithms on two-player pagat under one budget, and measure them with the project's tools.

    python -m agents.baselines                                   # every algorithm, 3 seeds, 2,000,000 decisions
    python -m agents.baselines --only dmc nfsp --seeds 1 --budget 200000
    python -m agents.baselines --quick                           # a few thousand decisions each, for CI
    python -m agents.baselines --combine OUT1 OUT2 --out OUT     # one table from runs made apart
    python -m agents.baselines --only nfsp --out OUT --resume    # go on with the runs a stop cut short

Each algorithm and seed trains in its own process (:mod:`.train`), leaving a
snapshot at each tenth of the budget; every snapshot then plays the curve
opponents through the harness, the last one the benchmark's ladder and both
exploitability measures (:mod:`.evaluation`). Results go to ``--out``:
``runs.csv``, ``curves.csv``, ``final.csv``, ``exploitability.csv``,
``baselines.json``, ``summary.md`` and ``curves.png``; the runs' folders
(snapshots, logs) to ``--out``/runs (default ``results/baselines``). With
``--resume``, a run already in ``--out`` goes on from its last snapshot (RLlib
PPO and NFSP; a finished run of any algorithm is kept as it is, and only
measured again). See docs/baselines.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
from pathlib import Path

from ..evaluation import EvaluationError
from .algorithms import ALGORITHMS, resume_refusal
from .evaluation import Budgets, best_response_row, curve_rows, exploiter_row, final_rows
from .job import Job, read_record
from .measure import PEAK, Measured, run_measured
from .plot import plot_curves
from .results import Results, combine, read_results

SITTINGS = "measured.json"  # what a run's training measured: wall seconds and peak memory over its sittings
DEFAULT_BUDGET = 2_000_000
DEFAULT_SEEDS = (1, 2, 3)
#: ``--quick``: enough decisions for every library to finish a few of its own updates, and tiny evaluations.
QUICK = {"budget": 4_000, "seeds": [1], "points": 2, "matches": 2, "bench_matches": 1, "exploit_matches": 1,
         "exploit_playouts": 8, "br_minutes": 0.02, "workers": 1}  # fmt: skip
QUICK_BEST_RESPONSE = ("imitation.teacher=null", "train.envs=8", "train.minibatch=64")
FULL = {"budget": DEFAULT_BUDGET, "seeds": list(DEFAULT_SEEDS), "points": 10, "matches": 100, "bench_matches": 100,
        "exploit_matches": 20, "exploit_playouts": 200, "br_minutes": 10.0, "workers": 2}  # fmt: skip


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m agents.baselines", description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="+", metavar="ALGO", help=f"these algorithms ({', '.join(ALGORITHMS)})")
    p.add_argument("--seeds", nargs="+", metavar="SEED", help="training seeds (default 1 2 3)")
    p.add_argument("--budget", metavar="N", help=f"environment decisions per run (default {DEFAULT_BUDGET:,})")
    p.add_argument("--points", metavar="N", help="snapshots per run, at equal parts of the budget (default 10)")
    p.add_argument("--quick", action="store_true", help="a small budget and tiny evaluations, for CI")
    p.add_argument("--matches", metavar="N", help="duplicate matches per curve point and opponent (default 100)")
    p.add_argument("--bench-matches", metavar="N", help="duplicate matches per ladder opponent (default 100)")
    p.add_argument("--exploit-matches", metavar="N", help="duplicate matches of the exploiter (default 20)")
    p.add_argument("--exploit-playouts", metavar="N", help="the exploiter's play-outs a decision (default 200)")
    p.add_argument("--br-minutes", metavar="M", help="CPU minutes of each best response (default 10)")
    p.add_argument("--workers", metavar="N", help="harness worker processes (default 2; 1 with --quick)")
    p.add_argument("--threads", metavar="N", default="1", help="torch threads of each training process (default 1)")
    p.add_argument("--combine", nargs="+", type=Path, metavar="DIR",
                   help="train nothing: write one set of results from the --out folders of runs made apart "
                   "(with the same budget and evaluation settings)")  # fmt: skip
    p.add_argument("--out", type=Path, default=Path("results/baselines"), help="where the results go")
    p.add_argument("--resume", action="store_true",
                   help="go on with the runs already in --out from their last snapshots (RLlib PPO, NFSP), and "
                   "keep the finished ones; the same settings as their first start")  # fmt: skip
    return p


class UsageError(ValueError):
    """A bad argument; the message names it and what is allowed."""


def _whole(name: str, text: str | None, default: int) -> int:
    if text is None:
        return default
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"{name} {text}: allowed: a positive whole number")
    return int(text)


def settings_from(args: argparse.Namespace) -> tuple[list[str], list[int], int, int, Budgets, int]:
    """The algorithms, seeds, budget, points, evaluation budgets and threads asked for; UsageError if any is bad."""
    base = QUICK if args.quick else FULL
    names = args.only or list(ALGORITHMS)
    unknown = [n for n in names if n not in ALGORITHMS]
    if unknown:
        raise UsageError(f"--only {' '.join(unknown)}: unknown algorithm; allowed: {', '.join(ALGORITHMS)}")
    seeds = base["seeds"] if args.seeds is None else args.seeds
    if any(not str(s).isdigit() for s in seeds):
        raise UsageError(f"--seeds {' '.join(map(str, seeds))}: allowed: whole numbers >= 0")
    try:
        minutes = float(args.br_minutes) if args.br_minutes is not None else base["br_minutes"]
    except ValueError:
        minutes = -1.0
    if not 0 < minutes < 10_000:
        raise UsageError(f"--br-minutes {args.br_minutes}: allowed: a positive number of minutes")
    budgets = Budgets(
        curve_matches=_whole("--matches", args.matches, base["matches"]),
        bench_matches=_whole("--bench-matches", args.bench_matches, base["bench_matches"]),
        exploit_matches=_whole("--exploit-matches", args.exploit_matches, base["exploit_matches"]),
        exploit_playouts=_whole("--exploit-playouts", args.exploit_playouts, base["exploit_playouts"]),
        best_response_minutes=minutes,
        best_response_matches=_whole("--bench-matches", args.bench_matches, base["bench_matches"]),
        best_response_overrides=QUICK_BEST_RESPONSE if args.quick else (),
        workers=_whole("--workers", args.workers, base["workers"]),
    )
    budget = _whole("--budget", args.budget, base["budget"])
    points = _whole("--points", args.points, base["points"])
    threads = _whole("--threads", args.threads, 1)
    return list(dict.fromkeys(names)), [int(s) for s in dict.fromkeys(seeds)], budget, points, budgets, threads


def missing_extras(names: list[str]) -> str | None:
    """One line naming what to install for the algorithms whose libraries are missing, or None."""
    lacking = {n: ALGORITHMS[n].missing() for n in names}
    lacking = {n: m for n, m in lacking.items() if m}
    if not lacking:
        return None
    extras = sorted({ALGORITHMS[n].extra for n in lacking})
    listed = "; ".join(f"{n} needs {', '.join(m)}" for n, m in lacking.items())
    return f"{listed}: install pip install -e '.[{','.join(extras)}]' (or choose others with --only)"


def shown(command: list[str]) -> str:
    return shlex.join(["python", *command[1:]])


def run_one(name: str, seed: int, budget: int, points: int, budgets: Budgets, threads: int, out: Path,
            results: Results, resume: bool = False) -> None:  # fmt: skip
    """Train one algorithm with one seed, then measure its snapshots; RuntimeError if the training fails.

    With ``resume`` a run already in its folder goes on (or, finished, is only measured): its wall time adds
    the seconds its last snapshot was taken at to this sitting's, and its memory is the peak of every sitting.
    """
    algorithm = ALGORITHMS[name]
    job = Job(name, seed, budget, points, out / "runs" / name / f"seed{seed}")
    earlier = resume_point(job) if resume else None
    if earlier is None:
        shutil.rmtree(job.out, ignore_errors=True)
        job.out.mkdir(parents=True)
    measured = train_run(job, algorithm.command(job, resume=earlier is not None), threads, earlier)
    record = read_record(job.out)
    decisions = record["decisions"]
    tag = {"algorithm": name, "seed": seed}
    results.settings.setdefault("algorithms", {})[name] = {"title": algorithm.title, "family": algorithm.family,
        "api": algorithm.api, "opponents": algorithm.opponents, "changed": record["settings"]}  # fmt: skip
    results.runs.append({**tag, "budget": budget, "decisions": decisions, "seconds": round(measured.seconds, 1),
                         "decisions_per_s": round(decisions / measured.seconds, 1),
                         "peak_mb": round(measured.peak_bytes / 2**20), "command": shown(algorithm.command(job)),
                         "final_spec": record["snapshots"][-1].spec})  # fmt: skip
    print(f"{name} seed {seed}: {decisions:,} decisions in {measured.seconds:.0f} s, "
          f"peak {measured.peak_bytes / 2**20:.0f} MB; evaluating", flush=True)  # fmt: skip
    for point, snapshot in enumerate(record["snapshots"], start=1):
        for row in curve_rows(snapshot.spec, budgets):
            results.curves.append({**tag, "point": point, "decisions": snapshot.decisions,
                                   "seconds": round(snapshot.seconds, 1), **row})  # fmt: skip
    final = record["snapshots"][-1].spec
    results.final += [{**tag, **row} for row in final_rows(final, budgets)]
    br_out = job.out / "best_response"
    results.exploitability.append({**tag, **best_response_row(final, br_out, budgets, job.out / "best_response.log")})
    results.exploitability.append({**tag, **exploiter_row(final, budgets)})


def resume_point(job: Job) -> dict | None:
    """What a resumed run goes on from: its record and what its earlier sittings measured; None: start afresh.

    ValueError when the folder holds another run, or a stopped run its algorithm cannot go on with.
    """
    if not (job.out / "run.json").is_file():
        return None
    record = read_record(job.out)
    if record["job"]["budget"] != job.budget or record["job"]["points"] != job.points:
        raise ValueError(f"{job.out}: a run of {record['job']['budget']:,} decisions in {record['job']['points']} "
                         f"parts, not {job.budget:,} in {job.points}; --resume needs the settings it started with")  # fmt: skip
    finished = record["snapshots"][-1].decisions >= job.budget
    if not finished and not ALGORITHMS[job.algorithm].resumes:
        raise ValueError(f"{job.out}: stopped at {record['snapshots'][-1].decisions:,} decisions; --resume: "
                         f"{resume_refusal(job.algorithm)}")  # fmt: skip
    sittings = job.out / SITTINGS
    measured = json.loads(sittings.read_text(encoding="utf-8")) if sittings.is_file() else {}
    if finished and "seconds" not in measured:
        raise ValueError(f"{job.out}: finished, but what its training measured ({SITTINGS}) is missing")
    return {"record": record, "finished": finished, **measured}


def train_run(job: Job, command: list[str], threads: int, earlier: dict | None) -> Measured:
    """Run (or go on with) the training process of ``job``; its wall time and peak memory over every sitting."""
    name, seed = job.algorithm, job.seed
    if earlier is not None and earlier["finished"]:
        print(f"{name} seed {seed}: finished earlier; measuring it again", flush=True)
        return Measured(0, earlier["seconds"], earlier["peak_bytes"])
    print(f"{name} seed {seed}: training ({shown(command)}); its log, with a line at each snapshot: "
          f"{job.out / 'train.log'}", flush=True)  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    peak_file = job.out / PEAK
    measured = run_measured(command, job.out / "train.log", env, peak_file=peak_file, append=earlier is not None)
    if measured.returncode != 0:
        raise RuntimeError(f"{name} seed {seed}: training failed (exit status {measured.returncode}); "
                           f"see {job.out / 'train.log'}")  # fmt: skip
    if earlier is not None:  # the earlier sittings' time up to the snapshot this one went on from
        went_on_from = earlier["record"]["snapshots"][-1].seconds
        measured = Measured(0, went_on_from + measured.seconds, measured.peak_bytes)
    (job.out / SITTINGS).write_text(json.dumps({"seconds": measured.seconds, "peak_bytes": measured.peak_bytes}),
                                    encoding="utf-8")  # fmt: skip
    return measured


def main(argv: list[str] | None = None) -> int:
    """Run the command line; exit status 2 for bad arguments or missing libraries, 1 when a run fails."""
    args = parser().parse_args(argv)
    if args.combine:
        return combine_folders(args.combine, args.out)
    try:
        names, seeds, budget, points, budgets, threads = settings_from(args)
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    lacking = missing_extras(names)
    if lacking:
        print(f"error: {lacking}", file=sys.stderr)
        return 2
    command = "python -m agents.baselines " + " ".join(argv if argv is not None else sys.argv[1:])
    results = Results(command.strip(), {"budget": budget, "seeds": seeds, "points": points, "threads": threads,
                                        "evaluation": vars(budgets)})  # fmt: skip
    try:
        for name in names:
            for seed in seeds:
                run_one(name, seed, budget, points, budgets, threads, args.out, results, args.resume)
                write(results, args.out, quiet=True)  # a run stopped later keeps every finished run's rows
    except (RuntimeError, ValueError, EvaluationError) as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        return 1
    finally:
        write(results, args.out)
    print(results.markdown())
    return 0


def combine_folders(folders: list[Path], out: Path) -> int:
    """``--combine``: the results of several ``--out`` folders as one; exit status 2 if they cannot be."""
    try:
        missing = [str(f) for f in folders if not (f / "baselines.json").is_file()]
        if missing:
            raise ValueError(f"no baselines.json in {', '.join(missing)}; allowed: --out folders of finished runs")
        results = combine([read_results(f) for f in folders])
    except ValueError as err:
        print(f"error: --combine: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    except KeyError as err:
        print(f"error: --combine: a baselines.json lacks {err}; allowed: files python -m agents.baselines wrote",
              file=sys.stderr)  # fmt: skip
        return 2
    write(results, out)
    print(results.markdown())
    return 0


def write(results: Results, out: Path, quiet: bool = False) -> None:
    """The result files of the runs so far (none before the first run ends)."""
    if not results.runs:
        return
    paths = results.write(out)
    if results.curves:
        paths.append(plot_curves(results.curves, out / "curves.png"))
    if not quiet:
        print(f"Written: {', '.join(map(str, paths))}")


if __name__ == "__main__":
    sys.exit(main())
