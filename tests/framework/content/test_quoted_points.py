"""Every maximum and score the README and docs/ quote agrees with lab.toml.

Points change (a question added, a test given 2 points) and prose is easy to forget, so every
quote of a question's points or a lab's total is found by its pattern and checked here:

- a question's points, written next to its id: ``## update_rules (7 points: ...)``,
  ``(`roofline`, 5 points)``, ``question `softmax_overflow`, 4 points``, ``break_no_scaling
  (2 points)``.  In ``docs/labN.md`` the id is lab N's; elsewhere it must name one lab's
  question (the toy lab's, in the engine docs, are the toy's).
- ``(N points: H hidden, P public)``: H + P = N.
- the README's totals: the tested points of each lab (otter's maximum) and the full score;
- the platform set-up guide's table of each lab's full score and tested points.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autograder.core import labs

REPO = Path(__file__).resolve().parents[3]
TOY = REPO / "tests" / "framework" / "fixtures" / "toyroot"
DOCS = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"]

# an id (with or without backticks), then "(N point(s)" or ", N point(s)"
QUOTE = re.compile(r"(?<![\w.])`?(?P<qid>[a-z][a-z0-9_]*)`?(?:\s*\(|,\s*)(?P<n>\d+(?:\.\d+)?) points?\b"
                   r"(?::\s*(?P<hidden>\d+) hidden,\s*(?P<public>\d+) public)?")


def _lab_number(path: Path) -> int | None:
    m = re.fullmatch(r"lab(\d)\.md", path.name)
    return int(m.group(1)) if m else None


@pytest.fixture(scope="module")
def questions():
    """Per lab number (0: the toy lab): question id -> points."""
    found = {i + 1: {q.id: q.points for q in lab.manifest.questions} for i, lab in enumerate(labs.all_labs(REPO))}
    found[0] = {q.id: q.points for lab in labs.all_labs(TOY) for q in lab.manifest.questions}
    return found


def quotes(path: Path):
    text = path.read_text(encoding="utf-8")
    for m in QUOTE.finditer(text):
        yield text.count("\n", 0, m.start()) + 1, m


def test_the_pattern_finds_the_quotes_it_must():
    found = {m.group("qid"): m.group("n") for _n, m in quotes(REPO / "docs" / "lab2.md")}
    assert {"update_rules", "adamw", "break_no_scaling", "break_zero_grad_inside"} <= set(found)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_each_quoted_question_has_its_points(path, questions):
    lab = _lab_number(path)
    wrong = []
    for line, m in quotes(path):
        qid, n = m.group("qid"), float(m.group("n"))
        if qid.startswith("test_"):
            continue  # a test's own points (its marker), not a question's
        owners = [i for i, qs in questions.items() if qid in qs and (lab is None or i == lab)]
        if not owners:
            continue  # a word before "(2 points" that is no question id
        if all(questions[i][qid] != n for i in owners):
            wrong.append(f"{path.name}:{line}: {qid} is quoted at {n:g} points; lab.toml gives "
                         f"{', '.join(f'{questions[i][qid]:g}' for i in owners)}")
        if m.group("hidden") and int(m.group("hidden")) + int(m.group("public")) != n:
            wrong.append(f"{path.name}:{line}: {qid}: {m.group('hidden')} hidden + {m.group('public')} public "
                         f"is not {n:g}")
    assert not wrong, "\n".join(wrong)


def test_the_readmes_totals_are_lab_tomls():
    text = re.sub(r"\s+", " ", (REPO / "README.md").read_text(encoding="utf-8"))
    all_labs = labs.all_labs(REPO)
    tested = [f"{sum(q.points for q in lab.manifest.tested):g}" for lab in all_labs]
    full = [f"{lab.manifest.max_score:g}" for lab in all_labs]
    m = re.search(r"tested questions' points: lab 1 (\d+), lab 2 (\d+), lab 3 (\d+), lab 4 (\d+) "
                  r"\(with the answers marked by hand and the predictions' participation point: "
                  r"(\d+), (\d+), (\d+) and (\d+)\)", text)
    assert m, "the README's sentence on otter's maximum moved: update this test with it"
    assert list(m.groups()) == tested + full, (
        f"README quotes {m.groups()}; lab.toml gives tested {tested}, full {full}")


def test_the_set_up_guides_table_is_lab_tomls():
    text = (REPO / "docs" / "platform_setup.md").read_text(encoding="utf-8")
    rows = {m.group(1): (m.group(2), m.group(3))
            for m in re.finditer(r"^\| \d \| `(\w+)` \| (\d+) \| (\d+) \|$", text, re.M)}
    want = {lab.name: (f"{lab.manifest.max_score:g}", f"{sum(q.points for q in lab.manifest.tested):g}")
            for lab in labs.all_labs(REPO)}
    assert rows == want
