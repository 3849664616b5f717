"""docs/security.md states each lab's budgets: its table must match the lab.toml files it quotes."""

from __future__ import annotations

import re
from pathlib import Path

from autograder.core import labs
from autograder.core.manifest import GRADER_ALLOWANCE_S

DOC = Path(__file__).resolve().parents[3] / "docs" / "security.md"


def budget_rows() -> dict[int, list[float]]:
    text = DOC.read_text(encoding="utf-8").split("## Per-submission budgets", 1)[1]
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\| (\d) \| (.+) \|$", line)
        if m:
            rows[int(m.group(1))] = [float(re.match(r"[\d.]+", c.strip()).group()) for c in m.group(2).split("|")]
    return rows


def test_the_budget_table_matches_every_lab():
    rows = budget_rows()
    every = labs.all_labs()
    assert sorted(rows) == list(range(1, len(every) + 1))
    for number, lab in enumerate(every, start=1):
        lim = lab.manifest.limits
        assert rows[number] == [lim.timeout_s, lim.test_timeout_s, lim.submission_timeout_s, lim.memory_mb], lab.name
    assert f"plus {GRADER_ALLOWANCE_S:.0f} s" in DOC.read_text(encoding="utf-8")
