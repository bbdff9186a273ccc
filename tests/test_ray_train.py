"""Training on Ray: rollout workers as Ray actors give the run the process backend gives, survive a killed actor, resume.

Needs the ``ray`` extra (skipped without it, failing instead with
``ALLFIVES_REQUIRE_RAY=1``). Run in a private network namespace:
``unshare -n sh -c 'ip link set lo up; python -m pytest tests/test_ray_train.py'``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from optional import require, require_loopback_only

ray = require("ray")
require_loopback_only()

from ray.cluster_utils import Cluster  # noqa: E402

from agents.policy_net import read_checkpoint  # noqa: E402
from allfives_train.checkpoint import read_training_checkpoint  # noqa: E402
from allfives_train.config import load_config  # noqa: E402
from allfives_train.trainer import Trainer  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "configs" / "tiny.yaml"
UPDATES = 3
# Two shards of three matches per update, an evaluation after the second update, no final evaluation.
COMMON = ["train.rollout_workers=2", "train.envs=6", "eval.every=2", "eval.final_matches=0"]


def tiny(run_dir: Path, *overrides: str) -> dict:
    return load_config(TINY, [f"run.dir={run_dir}", *COMMON, *overrides])


def train(run_dir: Path, *overrides: str, updates: int = UPDATES, resume: Path | None = None, patch=None) -> dict:
    """Run ``updates`` updates (the warm start included) and return the saved checkpoint."""
    trainer = Trainer(tiny(run_dir, *overrides), run_dir / "tiny", resume_from=resume, progress=False)
    try:
        if patch is not None:
            patch(trainer)
        trainer.run(stop_after=updates)
        trainer.save()
    finally:
        trainer.close()
    return read_training_checkpoint(run_dir / "tiny" / "checkpoint.pt")


def assert_same_run(a: dict, b: dict) -> None:
    assert a["weights"].keys() == b["weights"].keys()
    for key in a["weights"]:
        assert torch.equal(a["weights"][key], b["weights"][key]), key
    ta, tb = a["training"], b["training"]
    for key in ("iteration", "steps", "matches", "recent", "imitated"):
        assert ta[key] == tb[key], key
    assert ta["rng"]["python"] == tb["rng"]["python"]
    assert all(torch.equal(pa[k], pb[k]) for pa, pb in zip(ta["pool"], tb["pool"], strict=True) for k in pa)


@pytest.fixture(scope="module")
def process_run(tmp_path_factory) -> dict:
    """The reference: the same config on the multiprocessing backend (this process and one worker process)."""
    return train(tmp_path_factory.mktemp("processes"))


def test_a_two_node_cluster_runs_the_actors_on_both_nodes_and_trains_the_same(process_run, tmp_path):
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    nodes = []
    try:
        cluster.wait_for_nodes()
        ray_run = train(tmp_path, "run.backend=ray", f"run.ray_address={cluster.address}",
                        patch=lambda t: nodes.extend(t.rollouts.backend.nodes()))  # fmt: skip
        assert not ray.is_initialized()  # the backend left the cluster it joined
    finally:
        cluster.shutdown()
    assert len(set(nodes)) == 2
    assert_same_run(process_run, ray_run)
    assert process_run["training"]["iteration"] == UPDATES


@pytest.fixture(scope="module")
def local_ray():
    """One local instance for the tests below; the backend reuses it and leaves it running."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_the_ray_backend_trains_exactly_as_the_process_backend(process_run, local_ray, tmp_path):
    assert_same_run(process_run, train(tmp_path, "run.backend=ray"))
    saved = read_checkpoint(tmp_path / "tiny" / "checkpoint.pt")
    assert saved["training"]["config"]["run"]["backend"] == "ray"


def test_a_killed_worker_actor_is_replaced_mid_update_and_the_stopped_run_resumes_to_the_same_state(
    process_run, local_ray, tmp_path
):
    """Kill an actor while the second update's shards are in flight, stop after that update, resume the last one."""
    submitted, backends = [], []

    def kill_during_the_second_update(trainer):
        backend = trainer.rollouts.backend
        backends.append(backend)
        submit = backend.submit

        def submit_then_kill(fn, shards):
            handles = submit(fn, shards)
            submitted.append(len(shards))
            if submitted.count(2) == 1 and len(shards) == 2:  # update 2's two shards are running: kill shard 1's actor
                ray.kill(backend.actors[1], no_restart=True)
            return handles

        backend.submit = submit_then_kill

    train(tmp_path, "run.backend=ray", updates=UPDATES - 1, patch=kill_during_the_second_update)
    # The warm start plays its three matches one part at a time (one shard each), then update 2 plays two shards.
    assert backends[0].replaced == 1 and submitted[:4] == [1, 1, 1, 2]
    checkpoint = tmp_path / "tiny" / "checkpoint.pt"
    assert read_training_checkpoint(checkpoint)["training"]["iteration"] == UPDATES - 1
    resumed = train(tmp_path, "run.backend=ray", updates=1, resume=checkpoint)
    assert_same_run(process_run, resumed)


def test_an_unknown_backend_is_refused(tmp_path):
    from allfives_train.config import ConfigError

    with pytest.raises(ConfigError, match="'multiprocessing' or 'ray'"):
        tiny(tmp_path, "run.backend=spark")
