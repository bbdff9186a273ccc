"""The docs are a promise to users: their tables must match the code, their links must resolve, their examples must run."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from agents.registry import AGENT_NAMES
from allfives_env.aec_env import raw_env
from allfives_env.core.record import load_record, replay
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


ANCHOR_LINK = re.compile(r"\]\(([^)#\s]*)#([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """The fragments a link into ``page`` may name on GitHub: each heading's, and each ``<a id>`` or ``<a name>``."""
    text = page.read_text(encoding="utf-8")
    prose = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    found, seen = set(), {}
    for heading in re.findall(r"^#{1,6} +(.+?)[ #]*$", prose, re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return found | set(re.findall(r'<a (?:id|name)="([^"]+)"', text))


def test_anchors_are_read_as_github_makes_them(tmp_path):
    page = tmp_path / "page.md"
    page.write_text('# A title\n\n## The search bot (`agents/search.py`)\n\n## A title\n\n| <a id="row"></a>x |\n')
    assert anchors(page) == {"a-title", "the-search-bot-agentssearchpy", "a-title-1", "row"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_anchor_resolves(page):
    for target, fragment in ANCHOR_LINK.findall(page.read_text(encoding="utf-8")):
        if "://" in target:
            continue
        linked = page.parent / target if target else page
        assert fragment in anchors(linked), f"{page.name} links to {target}#{fragment}, not a heading or anchor there"


RESULTS_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(docs/results\.md#[^)]+\)")


def test_every_headline_figure_links_to_its_row_of_results():
    """Each row and bullet of the README's headline results links into results.md, and no rate stands outside a link."""
    headline = section(ROOT / "README.md", "## Headline results")
    rows = re.findall(r"^\| (?!line-up |---).*$", headline, re.MULTILINE)
    bullets = re.split(r"\n(?=- )", headline[headline.index("\n- ") :].strip())
    assert len(rows) >= 5 and len(bullets) >= 4
    for item in rows + bullets:
        assert RESULTS_LINK.search(item), f"no link into docs/results.md in: {item}"
    unlinked = re.search(r".{0,40}\d(%|x| ms).{0,40}", RESULTS_LINK.sub("", headline).replace("95% intervals", ""))
    assert not unlinked, f"a figure without a link into docs/results.md: {unlinked[0]}"


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


def test_the_readme_example_says_which_extra_it_needs():
    """The ten lines build a PettingZoo environment: the core install alone cannot run them."""
    ten_lines = section(ROOT / "README.md", "## Ten lines")
    assert "allfives_env.env(" in ten_lines and 'pip install -e ".[env]"' in ten_lines


def test_records_md_names_harness_options_that_exist_and_its_command_writes_records(tmp_path, monkeypatch):
    """The harness command records.md shows parses, and writes the records where the page says."""
    from agents.evaluation.cli import _parser, main

    text = (DOCS / "records.md").read_text(encoding="utf-8")
    harness = {flag for action in _parser()._actions for flag in action.option_strings}
    replay_flags = {"--json"}  # python -m allfives_env replay FILE [--json]
    named = set(re.findall(r"`(--[a-z][a-z-]*)", text))
    assert named and named <= harness | replay_flags, named - harness - replay_flags
    commands = re.findall(r"`python -m agents\.evaluate ([^`]+)`", text)
    assert commands
    monkeypatch.chdir(tmp_path)
    for command in commands:
        assert main([*command.split(), "--workers", "1", "--no-progress"]) == 0
        out = command.split()[command.split().index("--out") + 1]
        records = sorted((tmp_path / out / "records").glob("*.json"))
        assert records and all(replay(load_record(r.read_text())).summary()["finished"] for r in records)


def test_the_calls_documented_to_need_a_reset_are_those_that_raise_before_one():
    """environment.md lists the raw_env() calls that raise before reset(), and what render() does without a mode."""
    import warnings

    from allfives_env.options import ResetNeeded

    text = " ".join((DOCS / "environment.md").read_text(encoding="utf-8").split())
    start = text.index("Before the first `reset()`")
    bullet = text[start : text.index("`env()` keeps", start)]
    listed = re.findall(r"`(\w+)`", bullet[bullet.index('before ...":') : bullet.index(", and `render` when")])
    assert set(listed) == {"step", "observe", "last", "state", "record", "seat_view", "agent_iter", "core_state"}
    calls = {
        "step": lambda e: e.step(0),
        "observe": lambda e: e.observe("player_0"),
        "last": lambda e: e.last(),
        "state": lambda e: e.state(),
        "record": lambda e: e.record(),
        "seat_view": lambda e: e.seat_view("player_0"),
        "agent_iter": lambda e: next(iter(e.agent_iter())),
        "core_state": lambda e: e.core_state,
    }
    for name in listed:
        with pytest.raises(ResetNeeded, match=r"call reset\(\) before"):
            calls[name](raw_env())
    with pytest.raises(ResetNeeded):
        raw_env(render_mode="ansi").render()
    assert "Without a `render_mode`, `render()` warns and returns `None`" in bullet
    env = raw_env()
    for _ in ("before the first reset", "after it"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert env.render() is None
        assert any("render_mode" in str(w.message) for w in caught)
        env.reset(seed=1)
