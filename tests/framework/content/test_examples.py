"""The demo submissions are exactly what `autograder examples` writes from the sources,
and grading them with the README's main job gives the expected per-question scores."""

from __future__ import annotations

import csv

import pytest

from autograder.authoring import candidates
from autograder.core import labs
from autograder.cli import main

LABS = labs.all_labs()


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_examples_are_current(lab, tmp_path):
    want = {f"{c.id}.zip" for c in candidates.all_candidates(lab)}
    have = {p.name for p in lab.examples_dir.glob("*.zip")}
    assert have == want, "run `autograder examples` to regenerate"
    for c in candidates.all_candidates(lab):
        fresh = candidates.zip_candidate(lab, c, tmp_path / f"{c.id}.zip")
        assert fresh.read_bytes() == (lab.examples_dir / f"{c.id}.zip").read_bytes(), \
            f"examples/{lab.short}/{c.id}.zip is stale: run `autograder examples {lab.short}`"


def test_readme_main_job_on_lab2(tmp_path):
    lab = labs.get("lab2")
    out = tmp_path / "grades"
    assert main(["grade", "lab2", str(lab.examples_dir), "--out", str(out)]) == 0
    rows = {r["submission"]: r for r in csv.DictReader(open(out / "gradebook.csv", encoding="utf-8-sig"))}
    m = lab.manifest
    for c in candidates.all_candidates(lab):
        row = rows[c.id]
        for q in m.tested:  # marked by hand: pending here; the participation points: the demo's predictions
            got = float(row[q.id])
            if q.id in c.expect_lost:
                assert got < q.points, f"{c.id} should lose points on {q.id}"
            else:
                assert got == q.points, f"{c.id} should keep {q.id}"
    # the reference hands in a complete set of predictions; its reflections are pending (marked by hand)
    assert float(rows["reference"]["score"]) == m.max_score - sum(q.points for q in m.manual)
    assert m.participation is None or float(rows["reference"][m.participation.id]) == m.participation.points
    if m.predictions:  # the README's main job shows the class's predictions (docs/predictions.md)
        assert "## Predictions" in (out / "summary.md").read_text() and (out / "predictions.png").is_file()
    assert float(rows["stub"]["score"]) == 0
    fb_a = (out / "feedback" / "A_no_scale.md").read_text()
    assert "× the big-batch gradient" in fb_a, "variant A's feedback names the symptom"
    # zero_grad() misplaced either way, each named for what it is (issue 38): the chapter's bug (B), stale
    # gradients, and the other misplacement, cleared inside the micro-batch loop
    assert "a stale gradient from the previous step" in (out / "feedback" / "B_stale_grad.md").read_text()
    assert "it equals only the last micro" in (out / "feedback" / "H_zero_grad_inside.md").read_text()
    assert "SyntaxError" in (out / "feedback" / "syntax_error.md").read_text()
