"""Evaluation on Ray: matches played as Ray tasks, on one node and on a simulated two-node cluster, give the local tables.

Needs the ``ray`` extra (skipped without it, failing instead with
``ALLFIVES_REQUIRE_RAY=1``). Run in a private network namespace:
``unshare -n sh -c 'ip link set lo up; python -m pytest tests/test_ray_eval.py'``.
"""

from __future__ import annotations

from dataclasses import fields

import pytest
from optional import require, require_loopback_only

ray = require("ray")
require_loopback_only()

from ray.cluster_utils import Cluster  # noqa: E402

from agents.evaluate import evaluate, main  # noqa: E402
from agents.evaluation.ray_map import RayMatchMap  # noqa: E402

LINEUP = ["greedy", "random", "heuristic"]
OPTIONS = {"num_players": 3, "target": 60, "seed": 7, "progress": False}
TIMING = {"choice_seconds", "slowest", "seconds"}


def without_timing(game) -> dict:
    return {f.name: getattr(game, f.name) for f in fields(game) if f.name not in TIMING}


def figures(result) -> list[tuple]:
    return [
        (a.label, a.games, a.wins, a.ci_low, a.paired_low, a.margin, a.margin_half_width, a.rating)
        for a in result.agents
    ]


@pytest.fixture(scope="module")
def local_result():
    return evaluate(LINEUP, 6, workers=1, **OPTIONS)


def test_a_two_node_cluster_gives_the_local_games(local_result):
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    try:
        cluster.wait_for_nodes()
        nodes = {node.node_id for node in cluster.list_all_nodes()}
        backend = RayMatchMap(cluster.address)  # connects, and disconnects when done
        result = evaluate(LINEUP, 6, backend=backend, **OPTIONS)
        assert not ray.is_initialized()
    finally:
        cluster.shutdown()
    assert [without_timing(g) for g in result.games] == [without_timing(g) for g in local_result.games]
    assert figures(result) == figures(local_result)
    # Ray places the tasks (spread, best effort): every match ran once, on the cluster's nodes.
    assert set(backend.matches_per_node) <= nodes
    assert sum(backend.matches_per_node.values()) == 6


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray instance for the tests below (the two-node cluster test runs before it starts)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_matches_as_tasks_on_a_local_instance_give_the_local_games(local_result, local_ray):
    backend = RayMatchMap()
    result = evaluate(LINEUP, 6, backend=backend, **OPTIONS)
    assert ray.is_initialized()  # an instance it did not start is left running
    assert [without_timing(g) for g in result.games] == [without_timing(g) for g in local_result.games]
    assert figures(result) == figures(local_result)
    assert sum(backend.matches_per_node.values()) == 6


def table_without_timing(text: str) -> list[list[str]]:
    rows = [line.split("|") for line in text.splitlines() if line.startswith("|")]
    timing = [i for i, cell in enumerate(rows[0]) if "ms" in cell]
    return [[c for i, c in enumerate(row) if i not in timing] for row in rows]


def test_the_command_line_flag_prints_the_local_table(capsys, local_ray):
    argv = [*LINEUP, "--players", "3", "--target", "60", "--seed", "7", "--matches", "4", "--no-progress"]
    assert main([*argv, "--workers", "1"]) == 0
    local = capsys.readouterr().out
    assert main([*argv, "--ray"]) == 0
    remote = capsys.readouterr().out
    assert table_without_timing(remote) == table_without_timing(local)
    assert len(table_without_timing(local)) == 5  # header, rule, three agents
