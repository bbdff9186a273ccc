"""The README's observation table is a promise to users: it must match the encoder."""

import re
from pathlib import Path

from allfives_env.views.observation import FIELD_HIGH, FIELDS

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_rows() -> list[tuple[int, int, str, str]]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Observation") :]
    rows = []
    for match in re.finditer(r"^\| (\d+)(?:-(\d+))? \| `(\w+)` \| ([\d.]+) \|", section, re.MULTILINE):
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
