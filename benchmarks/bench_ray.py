"""Rollouts on Ray against the multiprocessing backend, Ray's overhead per update, and a projection to N nodes.

Run (Ray binds to the machine's address; a private network namespace keeps it on loopback):

    unshare -n sh -c 'ip link set lo up; python benchmarks/bench_ray.py [--envs 64] [--updates 3]'

Each setting builds the trainer of the default config (no warm start, no
evaluation) with ``train.envs`` matches per update, plays one update to warm
up, then times ``--updates`` updates. The trainer reports how long each
update spent playing (``rollout_s``) and learning (``update_s``). Every
setting plays the same matches (same seed), so throughputs compare the same
work: with the same number of shards both backends play exactly the same
decisions (a warning says if not); one shard and two are not bit-identical
runs, so their decision counts may differ a little.
Settings:

* ``processes x1``: this process plays every match (the reference);
* ``processes x2``: this process and one worker process;
* ``ray x1`` / ``ray x2``: one / two Ray actors play the shards, this process only learns.

Ray's overhead per update is the extra rollout time of ``ray x1`` over
``processes x1`` (the same shard, the same core count), and, measured
directly, the round trip of a call that carries the weights and plays nothing. The projection
assumes each node adds ``--cores`` actors at the rate of ``ray x1``'s one actor and
the learner (one process, the measured ``update_s`` per decision) stays
where it is: an update takes rollout + learning time, so the speed-up
levels off where the rollouts get faster than the learner.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from allfives_train.config import load_config
from allfives_train.trainer import Trainer

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = [("multiprocessing", 1), ("multiprocessing", 2), ("ray", 1), ("ray", 2)]


def _receive(weights: dict) -> int:
    """A call that only carries the weights to an actor: Ray's fixed cost per shard, without the playing."""
    return len(weights)


def measure(backend: str, workers: int, envs: int, updates: int, seed: int) -> dict:
    """Start a trainer on ``backend`` with ``workers`` shards; time its updates."""
    with tempfile.TemporaryDirectory() as tmp:
        overrides = [
            f"run.dir={tmp}", f"run.seed={seed}", f"run.backend={backend}", f"train.rollout_workers={workers}",
            f"train.envs={envs}", "imitation.teacher=null", "eval.every=0", "eval.final_matches=0",
        ]  # fmt: skip
        cfg = load_config(ROOT / "configs" / "default.yaml", overrides)
        start = time.perf_counter()
        trainer = Trainer(cfg, Path(tmp) / "bench", progress=False)
        try:
            trainer.step()  # warm-up: worker start, first weights, first imports
            started = time.perf_counter() - start
            before = trainer.steps
            rows = [trainer.step() for _ in range(updates)]
            round_trip = None
            if backend == "ray":
                pool = trainer.rollouts
                actor = {k: v.cpu() for k, v in trainer.net.actor_state_dict().items()}
                trips = []
                for _ in range(5):
                    t = time.perf_counter()
                    pool.backend.gather(pool.backend.submit(_receive, [(actor,)]))
                    trips.append(time.perf_counter() - t)
                round_trip = statistics.median(trips)
        finally:
            trainer.close()
    return {"rows": rows, "before": before, "started_s": started, "round_trip_s": round_trip}


def summarize(result: dict) -> dict:
    rows = result["rows"]
    steps = [rows[0]["steps"] - result["before"]] + [
        b["steps"] - a["steps"] for a, b in zip(rows, rows[1:], strict=False)
    ]
    rollout = sum(r["rollout_s"] for r in rows)
    update = sum(r["update_s"] for r in rows)
    return {
        "decisions": sum(steps),
        "rollout_s": rollout / len(rows),
        "update_s": update / len(rows),
        "rollout_rate": sum(steps) / rollout,
        "learn_rate": sum(steps) / update,
        "started_s": result["started_s"],
        "round_trip_s": result["round_trip_s"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=64, help="matches per update (default 64)")
    parser.add_argument("--updates", type=int, default=3, help="timed updates per setting (default 3)")
    parser.add_argument("--cores", type=int, default=2, help="cores per node in the projection (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    import ray

    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start; "
          f"{args.envs} matches per update, {args.updates} timed updates per setting\n")  # fmt: skip
    results = {}
    try:
        for backend, workers in SETTINGS:
            raw = measure(backend, workers, args.envs, args.updates, args.seed)
            results[backend, workers] = raw
    finally:
        ray.shutdown()
    stats = {key: summarize(r) for key, r in results.items()}
    for workers in (1, 2):  # the same shards give the same run on either backend
        if stats["multiprocessing", workers]["decisions"] != stats["ray", workers]["decisions"]:
            print(f"warning: with {workers} shard(s) the backends learned from different decisions; the runs differ")
    ref = stats["multiprocessing", 1]
    print(
        "| setting | decisions | start s | rollout s / update | decisions / s (rollout) | vs processes x1 | learn s / update |"
    )
    print("|---|---|---|---|---|---|---|")
    for (backend, workers), s in stats.items():
        name = f"{'processes' if backend == 'multiprocessing' else 'ray'} x{workers}"
        print(f"| {name} | {s['decisions']:,} | {s['started_s']:.1f} | {s['rollout_s']:.2f} | {s['rollout_rate']:,.0f} | "
              f"{s['rollout_rate'] / ref['rollout_rate']:.2f} | {s['update_s']:.2f} |")  # fmt: skip
    ray1, ray2 = stats["ray", 1], stats["ray", 2]
    overhead = ray1["rollout_s"] - ref["rollout_s"]
    print(f"\nRay overhead per update: {overhead:+.3f} s ({100 * overhead / ref['rollout_s']:+.1f}% of the rollout); "
          f"round trip of a call carrying the weights: {1000 * ray1['round_trip_s']:.1f} ms")  # fmt: skip
    per_actor = ray1["rollout_rate"]  # one actor on a core of its own; x2 also shares the cores with this process
    print(f"two actors against one: {ray2['rollout_rate'] / ray1['rollout_rate']:.2f}x "
          f"(2.00x would be perfect scaling; {os.cpu_count()} cores here, shared with this process and the machine)")  # fmt: skip
    learn = statistics.mean(s["learn_rate"] for s in stats.values())
    base = 1 / (1 / ref["rollout_rate"] + 1 / learn)
    print(f"per-actor rollout rate (ray x1): {per_actor:,.0f} decisions/s; "
          f"learner: {learn:,.0f} decisions/s of PPO update in one process\n")  # fmt: skip
    print(f"Projection: {args.cores} actors per node, one learner; decisions learned per second, end to end")
    print("| nodes | actors | rollout decisions / s | end-to-end decisions / s | vs this machine's processes x1 |")
    print("|---|---|---|---|---|")
    for nodes in (1, 2, 4, 8, 16, 32, 64):
        actors = nodes * args.cores
        rollout = actors * per_actor
        total = 1 / (1 / rollout + 1 / learn)
        print(f"| {nodes} | {actors} | {rollout:,.0f} | {total:,.0f} | {total / base:.1f} |")
    knee = learn / per_actor / args.cores
    print(f"\nThe learner takes as long as the rollouts at about {knee:.1f} nodes; beyond that the end-to-end rate "
          f"approaches the learner's {learn:,.0f} decisions/s (more nodes buy at most "
          f"{learn / base:.1f}x over processes x1 here).")  # fmt: skip


if __name__ == "__main__":
    main()
