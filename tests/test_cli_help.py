"""Every command line's --help is plain text: no reST or Markdown markup, and every document it names exists.

Help texts are often made from module docstrings, which are written in reST
for readers of the code; ``allfives_env.help_text.plain_help`` takes the
markup out. This runs the help of every command: ``python -m allfives_env``
and each of its subcommands, the modules with a command line, and every
script under benchmarks/, research/ and examples/ and train.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from allfives_env.__main__ import parser as cli_parser
from allfives_env.help_text import plain_help

ROOT = Path(__file__).resolve().parent.parent
MODULES = ["allfives_env", "agents.play", "agents.evaluate", "agents.evaluation", "agents.benchmark", "agents.baselines",
           "agents.baselines.train", "allfives_train.baseline_run", "allfives_web", "allfives_web.server"]  # fmt: skip
SUBCOMMANDS = sorted(cli_parser()._subparsers._group_actions[0].choices)  # demo, replay, and the forwarded ones
SCRIPTS = sorted(
    str(path.relative_to(ROOT))
    for folder in ("benchmarks", "research", "examples")
    for path in (ROOT / folder).glob("*.py")
    if "ArgumentParser" in path.read_text(encoding="utf-8")
) + ["train.py"]
COMMANDS = [["-m", m] for m in MODULES] + [["-m", "allfives_env", sub] for sub in SUBCOMMANDS] + [[s] for s in SCRIPTS]
MARKUP = re.compile(r"`|:(?:mod|class|func|meth|attr|data|obj|ref|doc|exc):")
DOC_PATH = re.compile(r"\b(?:docs/[\w.-]+\.md|README\.md|CONTRIBUTING\.md)")


# One fresh process runs every command's --help in turn, so the heavy imports (torch, Ray) are paid once.
DRIVER = """
import contextlib, io, json, os, runpy, sys, traceback
out, path = {}, list(sys.path)
for command in json.loads(sys.argv[1]):
    buffer, status = io.StringIO(), 0
    module = command[0] == "-m"
    sys.argv = [command[1] if module else command[0], *command[2 if module else 1:], "--help"]
    sys.path[:] = [os.getcwd() if module else os.path.dirname(os.path.abspath(command[0])), *path[1:]]
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        try:
            if module:
                runpy.run_module(command[1], run_name="__main__", alter_sys=True)
            else:
                runpy.run_path(command[0], run_name="__main__")
        except SystemExit as stop:
            status = stop.code if isinstance(stop.code, int) else 1
        except BaseException:
            status = 1
            traceback.print_exc()
    out[" ".join(command)] = [status, buffer.getvalue()]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def helps() -> dict[str, tuple[int, str]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(COMMANDS)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600, check=True)  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1])


def test_every_subcommand_and_script_is_covered():
    assert {"demo", "replay", "play", "evaluate", "benchmark", "serve"} <= set(SUBCOMMANDS)
    assert len(SCRIPTS) >= 12 and "train.py" in SCRIPTS


@pytest.mark.parametrize("command", [" ".join(c) for c in COMMANDS])
def test_help_is_plain_text_and_names_only_documents_that_exist(helps, command):
    status, text = helps[command]
    assert status == 0 and "usage:" in text, text[-2000:]
    leftover = [line for line in text.splitlines() if MARKUP.search(line)]
    assert not leftover, leftover
    assert "the README" not in text  # say where, or say it
    for name in DOC_PATH.findall(text):
        assert (ROOT / name).is_file(), name


RESEARCH = {
    "policy_regret.py",
    "search_regret.py",
    "fit_play_model.py",
    "policy_iteration.py",
    "exploiter_reading.py",
    "baseline_reward.py",
    "finetune.py",
}


def test_the_research_tools_have_a_folder_of_their_own():
    """benchmarks/ times things; the tools that study the bots live in research/ (and run: their help is above)."""
    assert {path.name for path in (ROOT / "research").glob("*.py")} >= RESEARCH
    assert not RESEARCH & {path.name for path in (ROOT / "benchmarks").glob("*.py")}
    assert {f"research/{name}" for name in RESEARCH} <= set(SCRIPTS)


def test_plain_help_takes_out_roles_and_code_quotes_and_keeps_paragraphs():
    doc = """First line with ``code`` and :mod:`agents.play`.

        See :class:`~allfives_env.core.SeatView`, `x`, and :ref:`the rules <rules>`.
        """
    assert plain_help(doc) == "First line with code and agents.play.\n\nSee SeatView, x, and the rules."
    assert plain_help(None) == ""
