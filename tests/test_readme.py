"""The README's observation and action feature tables are a promise to users: they must match the encoders."""

import re
from pathlib import Path

from allfives_env.views.action_features import ACTION_FEATURE_FIELDS
from allfives_env.views.observation import FIELD_HIGH, FIELDS

README = Path(__file__).resolve().parent.parent / "README.md"


def section(heading: str) -> str:
    """The README's text under ``heading``, up to the next heading."""
    text = README.read_text(encoding="utf-8")
    start = text.index(heading + "\n")
    end = text.find("\n#", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


def readme_rows(heading: str = "### Observation") -> list[tuple[int, int, str, str]]:
    rows = []
    for match in re.finditer(r"^\| (\d+)(?:-(\d+))? \| `(\w+)` \| ([\d.]+) \|", section(heading), re.MULTILINE):
        first, last = int(match[1]), int(match[2] or match[1])
        rows.append((first, last, match[3], match[4]))
    return rows


def test_observation_table_matches_fields():
    expected, offset = [], 0
    for name, size, _ in FIELDS:
        high = FIELD_HIGH.get(name, 1)
        expected.append((offset, offset + size - 1, name, f"0..{high}"))
        offset += size
    assert readme_rows() == expected


def test_action_feature_table_matches_fields():
    expected, offset = [], 0
    for name, width, description, high in ACTION_FEATURE_FIELDS:
        expected.append((offset, offset + width - 1, name, f"0..{high}", description))
        offset += width
    found = [
        (int(m[1]), int(m[2] or m[1]), m[3], m[4], m[5])
        for m in re.finditer(
            r"^\| (\d+)(?:-(\d+))? \| `(\w+)` \| ([\d.]+) \| (.*) \|$", section("### Action features"), re.MULTILINE
        )
    ]
    assert found == expected
