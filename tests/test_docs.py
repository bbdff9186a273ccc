"""The docs are a promise to users: their tables must match the code, their links must resolve, their examples must run."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from agents.registry import AGENT_NAMES
from allfives_env.aec_env import raw_env
from allfives_env.views.action_features import ACTION_FEATURE_FIELDS
from allfives_env.views.observation import FIELD_HIGH, FIELDS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md")) + [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]


def section(path: Path, heading: str) -> str:
    """The page's text under ``heading``, up to the next heading."""
    text = path.read_text(encoding="utf-8")
    start = text.index(heading + "\n")
    end = text.find("\n#", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


def test_observation_table_matches_fields():
    expected, offset = [], 0
    for name, size, _ in FIELDS:
        expected.append((offset, offset + size - 1, name, f"0..{FIELD_HIGH.get(name, 1)}"))
        offset += size
    found = [
        (int(m[1]), int(m[2] or m[1]), m[3], m[4])
        for m in re.finditer(
            r"^\| (\d+)(?:-(\d+))? \| `(\w+)` \| ([\d.]+) \|",
            section(DOCS / "environment.md", "### Observation"),
            re.MULTILINE,
        )
    ]
    assert found == expected


def test_action_feature_table_matches_fields():
    expected, offset = [], 0
    for name, width, description, high in ACTION_FEATURE_FIELDS:
        expected.append((offset, offset + width - 1, name, f"0..{high}", description))
        offset += width
    found = [
        (int(m[1]), int(m[2] or m[1]), m[3], m[4], m[5])
        for m in re.finditer(
            r"^\| (\d+)(?:-(\d+))? \| `(\w+)` \| ([\d.]+) \| (.*) \|$",
            section(DOCS / "environment.md", "### Action features"),
            re.MULTILINE,
        )
    ]
    assert found == expected


def test_keyword_table_lists_every_keyword_of_the_environment():
    table = section(DOCS / "environment.md", "### Keyword arguments")
    documented = re.findall(r"^\| `(\w+)` \|", table, re.MULTILINE)
    accepted = [name for name in inspect.signature(raw_env.__init__).parameters if name != "self"]
    assert sorted(documented) == sorted(accepted)


def test_bot_spec_table_lists_every_spec():
    table = section(DOCS / "agents.md", "## Bot specs")
    documented = re.findall(r"^\| `([^`]+)` \|", table, re.MULTILINE)
    assert documented == list(AGENT_NAMES)


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page):
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (page.parent / target).exists(), f"{page.name} links to {target}, which does not exist"


def test_every_document_cited_in_the_code_exists():
    cited = re.compile(r"\b(docs/[\w.-]+\.md|README\.md|CONTRIBUTING\.md)\b")
    for path in [*ROOT.glob("*.py"), *ROOT.glob("*/**/*.py")]:
        if any(part in {"runs", "build"} or part.startswith(".") for part in path.relative_to(ROOT).parts):
            continue
        for name in cited.findall(path.read_text(encoding="utf-8")):
            assert (ROOT / name).exists(), f"{path.relative_to(ROOT)} cites {name}, which does not exist"


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)


EXAMPLES = [
    pytest.param(page, i, block, id=f"{page.name}-{i}")
    for page in (DOCS / "environment.md", DOCS / "records.md", DOCS / "agents.md", DOCS / "evaluation.md")
    for i, block in enumerate(python_blocks(page))
    if "class Agent:" not in block  # the interface sketch, not a script
]


@pytest.mark.parametrize(("page", "index", "block"), EXAMPLES)
def test_examples_run(page, index, block, capsys):
    exec(compile(block, f"{page.name} example {index}", "exec"), {"__name__": "__docs__"})


def test_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme) <= 8000
    for page in ("rules", "environment", "records", "agents", "evaluation", "training", "results"):
        assert f"(docs/{page}.md)" in readme
