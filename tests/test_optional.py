"""A test that skips for want of an optional package says, in the run's summary, which extra to install."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from optional import EXTRA, skip_reason

ROOT = Path(__file__).resolve().parent.parent


def test_every_optional_package_names_an_extra_that_brings_it():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    extras = set(re.findall(r"^(\w+) = \[", text[text.index("[project.optional-dependencies]") :], re.M))
    for module, extra in EXTRA.items():
        assert extra in extras, (module, extra)
        assert f"pip install -e '.[{extra}]'" in skip_reason(module)


def test_a_run_without_the_ray_extra_prints_why_it_skipped(tmp_path):
    """Tianshou hidden from the run, as where the ray extra is not installed: the summary says what to install."""
    (tmp_path / "tianshou.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'tianshou'\", name='tianshou')\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "ALLFIVES_REQUIRE_RAY"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests/test_tianshou.py"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode in (0, 5), done.stdout[-2000:]  # 5: nothing ran, the module skipped as a whole
    summary = done.stdout[done.stdout.index("short test summary") :]
    assert "SKIPPED" in summary and "pip install -e '.[ray]'" in summary, done.stdout[-2000:]
