"""Run one benchmark on two versions of the code, interleaved, and print both figures from the same run.

A machine's speed drifts (other load, clock boost), so "before" and "after"
figures are only comparable when they come from one run: this script
alternates the two versions ``--rounds`` times and keeps each version's best
figure, as ``timeit`` does. A version is a git revision (exported to a
temporary folder), a folder holding a copy of the project, or ``.`` for the
working tree.

    python benchmarks/compare.py --before HEAD~3 --metric 'all +\\d+ +[\\d.]+ +([\\d,]+)' -- bench_core.py --matches 200
    python benchmarks/compare.py --before main --metric 'heuristic +\\d+ +([\\d,.]+)' -- bench_bots.py --bots heuristic

``--metric`` is a regular expression whose first group is the figure
(commas allowed); ``--lower-is-better`` for times. Without ``--metric``
every run's output is printed as it is. ``--same-script`` runs the after
version's benchmark script on both versions' code, for a measurement the
before version's own script does not make (the script must then use only
what both versions have).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def materialize(version: str, scratch: Path) -> Path:
    """A folder holding ``version`` of the project: the working tree, a given folder, or an exported revision."""
    if version == ".":
        return ROOT
    if Path(version).is_dir():
        return Path(version).resolve()
    target = scratch / re.sub(r"[^A-Za-z0-9_.-]", "_", version)
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", version], capture_output=True, check=False)
    if archive.returncode:
        sys.exit(f"error: cannot export {version!r}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def run(tree: Path, script: Path, args: list[str]) -> str:
    """The benchmark's output, run with ``tree`` first on the import path."""
    env = dict(os.environ, PYTHONPATH=str(tree) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, env=env, cwd=tree)
    if done.returncode:
        sys.exit(f"error: {script} failed in {tree}:\n{done.stderr}")
    return done.stdout


def shown(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.4g}"


def figure(pattern: re.Pattern, output: str) -> float:
    found = pattern.search(output)
    if found is None:
        sys.exit(f"error: --metric {pattern.pattern!r} matches nothing in:\n{output}")
    return float(found.group(1).replace(",", ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="a git revision, a folder, or '.'")
    parser.add_argument("--after", default=".", help="a git revision, a folder, or '.' (default: the working tree)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each version, interleaved (default 3)")
    parser.add_argument("--metric", help="regular expression; its first group is the figure compared")
    parser.add_argument("--lower-is-better", action="store_true", help="the figure is a time, not a rate")
    parser.add_argument(
        "--same-script", action="store_true", help="run the after version's script on both versions' code"
    )
    parser.add_argument("script", help="a file in benchmarks/, such as bench_core.py")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the benchmark's own options, after --")
    options = parser.parse_args(argv)
    if options.rounds < 1:
        parser.error("--rounds must be at least 1")
    args = options.args[1:] if options.args[:1] == ["--"] else options.args
    pattern = re.compile(options.metric) if options.metric else None
    best = max if not options.lower_is_better else min
    with tempfile.TemporaryDirectory() as scratch:
        trees = {
            "before": materialize(options.before, Path(scratch)),
            "after": materialize(options.after, Path(scratch)),
        }
        figures: dict[str, list[float]] = {"before": [], "after": []}
        for index in range(options.rounds):
            for label, tree in trees.items():
                source = trees["after"] if options.same_script else tree
                output = run(tree, source / "benchmarks" / options.script, args)
                if pattern is None:
                    print(f"--- {label} ({tree.name}), round {index + 1}\n{output}")
                else:
                    figures[label].append(figure(pattern, output))
                    print(f"round {index + 1} {label}: {shown(figures[label][-1])}")
    if pattern is not None:
        before, after = best(figures["before"]), best(figures["after"])
        print(
            f"best of {options.rounds}: before {shown(before)}, after {shown(after)}; after / before = {after / before:.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
