"""The bulk run (``autograder.batch.bulk``): raw/ read once, the gradebook grown one row at a time.

The grader is replaced by a quick fake (``runner.grade_staged``), so a batch of
dozens takes a second: these tests are about the batch's files, not grading
(``test_cli.py`` and ``test_intake_robust.py`` grade for real).
"""

from __future__ import annotations

import builtins
import csv
import io
import json
from pathlib import Path

import pytest

from autograder.batch import gradebook, roster
from autograder.commands import grade
from autograder.core import results
from autograder.grading import runner

N = 30


class Crash(BaseException):
    """Not an Exception: the batch must not take it for one submission's error."""


def fake_grader(monkeypatch, *, crash_at: int | None = None) -> list[str]:
    """A grader that scores ``toy.py``'s first line (``points = a, b``) without
    running anything, and raises Crash on call ``crash_at`` (1-based)."""
    calls: list[str] = []

    def grade_staged(lab, staged, submission_id, *, sha256="", problems=None, **_kw):
        calls.append(submission_id)
        if crash_at is not None and len(calls) == crash_at:
            raise Crash(f"injected after {crash_at - 1} submissions")
        add, norm = (float(x) for x in (Path(staged) / "toy.py").read_text().split("\n")[0]
                     .removeprefix("points = ").split(","))
        tests = [results.TestResult(nodeid=f"t::{q}", name=f"test_{q}", question=q, max_points=mx, points=p,
                                    status=results.PASSED if p == mx else results.FAILED, visibility="visible",
                                    duration_s=0.01, instructor_note="note")
                 for q, p, mx in (("add", add, 3.0), ("norm", norm, 2.0))]
        return results.SubmissionResult(submission=submission_id, lab=lab.name, tests=tests, sha256=sha256,
                                        errors=list(problems or []), duration_s=0.5, lang="en")

    monkeypatch.setattr(runner, "grade_staged", grade_staged)
    return calls


def make_subs(folder: Path, n: int = N) -> list[str]:
    ids = [f"s{i:03d}" for i in range(n)]
    for i, sub_id in enumerate(ids):
        (folder / sub_id).mkdir(parents=True)
        (folder / sub_id / "toy.py").write_text(f"points = {i % 4}, {i % 3}\n")
    return ids


@pytest.fixture
def raw_reads(monkeypatch, tmp_path):
    """Every opening for reading of a file in <tmp>/out/raw/, by name.  ``Path.read_text``
    and ``read_bytes`` go through ``io.open``; so do ``open`` and the json module's readers."""
    raw = tmp_path / "out" / "raw"
    seen: list[str] = []
    real = io.open

    def counting(file, mode="r", *args, **kwargs):
        if isinstance(file, (str, Path)) and Path(file).parent == raw and not set(mode) & set("wax+"):
            seen.append(Path(file).name)
        return real(file, mode, *args, **kwargs)

    monkeypatch.setattr(io, "open", counting)
    monkeypatch.setattr(builtins, "open", counting)
    return seen


def batch(subs: Path, out: Path, **kw) -> int:
    return grade.main(lab="labx", submissions_dir=str(subs), out=str(out), jobs=kw.pop("jobs", 2),
                      sandbox=False, quiet=True, **kw)


def gradebook_rows(out: Path) -> list[dict]:
    with open(out / "gradebook.csv", newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    assert rows[0] == gradebook.FIXED_COLUMNS + ["add", "norm", gradebook.PROBLEMS_COLUMN]
    assert all(len(r) == len(rows[0]) for r in rows), "a torn row"
    return [dict(zip(rows[0], r)) for r in rows[1:]]


def test_raw_reads_are_linear_and_the_gradebook_matches_a_rebuild(toy_lab, tmp_path, monkeypatch, raw_reads):
    ids = make_subs(tmp_path / "subs")
    out = tmp_path / "out"
    calls = fake_grader(monkeypatch)
    assert batch(tmp_path / "subs", out) == 0
    assert sorted(calls) == ids
    assert raw_reads == [], "a fresh batch reads back nothing it wrote"
    book = (out / "gradebook.csv").read_text(encoding="utf-8")
    assert book == gradebook.csv_text(gradebook.load_raw(out), toy_lab.manifest)  # what a rebuild would write
    assert [r["submission"] for r in gradebook_rows(out)] == ids
    raw_reads.clear()  # (the rebuild above read each once)

    calls.clear()
    assert batch(tmp_path / "subs", out) == 0  # nothing changed: nothing graded, every row still there
    assert calls == []
    assert sorted(raw_reads) == [f"{i}.json" for i in ids], "each raw file read once, no more"
    assert (out / "gradebook.csv").read_text(encoding="utf-8") == book
    assert f"- submissions: {N}\n" in (out / "summary.md").read_text(), "the summary counts the unchanged ones"

    raw_reads.clear()
    assert batch(tmp_path / "subs", out, force=True) == 0
    assert sorted(calls) == ids and len(raw_reads) <= N
    assert (out / "gradebook.csv").read_text(encoding="utf-8") == book


def test_a_crash_after_k_submissions_leaves_a_gradebook_of_k_rows(toy_lab, tmp_path, monkeypatch, raw_reads):
    ids = make_subs(tmp_path / "subs", 8)
    out = tmp_path / "out"
    k = 3
    fake_grader(monkeypatch, crash_at=k + 1)
    with pytest.raises(Crash):
        batch(tmp_path / "subs", out, jobs=1)
    rows = gradebook_rows(out)
    assert [r["submission"] for r in rows] == ids[:k]
    assert [r["score"] for r in rows] == ["0", "2", "4"]  # (0, 0), (1, 1), (2, 2)
    assert not (out / "summary.md").exists(), "the summary is written once, at the end"
    written = len(list((out / "raw").glob("*.json")))
    assert k <= written <= k + 1, "the crash stops the batch: what waits is not graded"

    raw_reads.clear()
    calls = fake_grader(monkeypatch)
    assert batch(tmp_path / "subs", out, jobs=1) == 0  # the rerun grades only the rest
    assert len(calls) == len(ids) - written and len(raw_reads) == written
    assert [r["submission"] for r in gradebook_rows(out)] == ids
    assert (out / "gradebook.csv").read_text(encoding="utf-8") == \
        gradebook.csv_text(gradebook.load_raw(out), toy_lab.manifest)
    assert "- submissions: 8\n" in (out / "summary.md").read_text()


def test_a_submission_whose_files_changed_is_regraded_alone(toy_lab, tmp_path, monkeypatch):
    ids = make_subs(tmp_path / "subs", 5)
    out = tmp_path / "out"
    calls = fake_grader(monkeypatch)
    assert batch(tmp_path / "subs", out) == 0
    (tmp_path / "subs" / ids[2] / "toy.py").write_text("points = 3, 2\n")
    calls.clear()
    assert batch(tmp_path / "subs", out) == 0
    assert calls == [ids[2]]
    rows = {r["submission"]: r for r in gradebook_rows(out)}
    assert set(rows) == set(ids) and rows[ids[2]]["score"] == "5"


def test_the_growing_gradebook_writes_what_csv_text_writes(toy_lab, tmp_path):
    """Same bytes once finished, roster columns and formula escaping included, whatever the order
    rows come in; while it grows, rows are appended (never the file rewritten) and always whole."""
    m = toy_lab.manifest
    res = [results.SubmissionResult(submission=s, lab="labx", tests=[results.TestResult(
        nodeid="t", name="t", question="add", max_points=3, points=p, status="passed", visibility="visible")])
        for s, p in (("=1+1", 3), ("b", 0), ("a\r\nb", 1.5))]
    people = {"b": roster.Submitters(("@Ann", "Bo"), ("a@x", "b@x"), ("-1", "2"))}
    path = tmp_path / "gradebook.csv"
    book = gradebook.Gradebook(path, m, people)
    book.add()
    assert path.read_text(encoding="utf-8") == gradebook.csv_text([], m, people)  # a header, before any row
    for i, r in enumerate(reversed(res)):
        inode = path.stat().st_ino
        book.add(r)
        assert path.stat().st_ino == inode, "a row is appended, the file not replaced"
        grown = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
        assert [g["submission"] for g in grown] == [gradebook.text_cell(x.submission).replace("\r\n", "\n")
                                                    for x in list(reversed(res))[:i + 1]]
    book.add(res[1])  # a row given again: the file is made whole again, one row per submission
    assert len(list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))) == 3
    book.finish()
    text = path.read_text(encoding="utf-8")
    assert text == gradebook.csv_text(res, m, people) and len(book) == 3
    assert "'=1+1" in text and "'@Ann; Bo" in text and "'-1; 2" in text


def test_one_serialisation_of_a_result(toy_lab, tmp_path):
    """raw/<id>.json is ``to_json``; ``from_json`` reads it back whole, and reads a
    grader's report (tests and isolation only) once told the submission and lab."""
    t = results.TestResult(nodeid="n", name="t", question="add", max_points=3, points=3, status="passed",
                           visibility="hidden", instructor_note="printed: 0.123456789")
    res = results.SubmissionResult(submission="x", lab="labx", tests=[t], errors=["e"], isolation={"sandbox": True},
                                   duration_s=1.25, sha256="ab", lang="vi")
    assert res.to_json() == json.dumps(res.to_dict())
    assert results.SubmissionResult.from_json(res.to_json()) == res
    report = results.SubmissionResult.report_json([t], {"seccomp": True})
    back = results.SubmissionResult.from_json(report, submission="x", lab="labx")
    assert back.tests == [t] and back.isolation == {"seccomp": True} and back.submission == "x"
    for torn in ("", "{", "[]", '{"lab": "labx"}'):
        with pytest.raises((ValueError, KeyError)):
            results.SubmissionResult.from_json(torn)
    gradebook.write_raw(tmp_path, res)
    gradebook.write_shown(tmp_path, res, toy_lab.manifest, "feedback")
    assert (tmp_path / "raw" / "x.json").read_text() == res.to_json()
    assert (tmp_path / "results" / "x.json").read_text() == \
        json.dumps(results.gradescope_json(res, toy_lab.manifest), indent=1)
    assert gradebook.load_raw(tmp_path) == [res]


def test_a_batch_left_to_choose_starts_a_grader_only_where_it_pays():
    """Without --jobs, one grader per ``pool.SHARE`` submissions at most (a grader's start costs as
    much as several submissions); --jobs is what it says, never more graders than submissions."""
    from autograder.grading.pool import SHARE, graders

    assert SHARE == 4
    assert [graders(2, n, SHARE) for n in (1, 3, 4, 5, 8, 24)] == [1, 1, 1, 2, 2, 2]
    assert graders(4, 24, SHARE) == 4 and graders(4, 9, SHARE) == 3
    assert [graders(2, n) for n in (1, 2, 3)] == [1, 2, 2]  # an explicit --jobs 2
