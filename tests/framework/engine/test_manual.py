"""Questions marked by hand (``manual = true``): the marks file, the answers to mark, the
pending score, and the hand-in's notebook, on the toy lab given one written question."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest

from autograder.batch import manual
from autograder.cli import main
from autograder.core import results
from autograder.core.manifest import ManifestError, parse

WRITTEN = (Path(__file__).parents[1] / "fixtures" / "written_question.toml").read_text()  # the toy's written question
REF = ("solutions", "labx_toy")
BLANK = "*Your answer here.*"


def _notebook(answer: str, *, outputs: bool = False) -> dict:
    cells = [{"cell_type": "markdown", "id": "a", "metadata": {}, "source": ["# Toy\n"]},
             {"cell_type": "code", "id": "b", "metadata": {}, "execution_count": 3 if outputs else None,
              "outputs": [{"output_type": "stream", "name": "stdout", "text": "x" * 100}] if outputs else [],
              "source": "print(1)"},
             {"cell_type": "markdown", "id": "c", "metadata": {"tags": ["answer:essay"]}, "source": [answer]}]
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture
def written_lab(toy_root):
    """The toy lab with a question marked by hand, and its notebook as handed out."""
    lab_dir = toy_root / "assignments" / "labx_toy"
    (lab_dir / "lab.toml").write_text((lab_dir / "lab.toml").read_text().replace("[[variants]]", WRITTEN + "\n[[variants]]", 1))
    (lab_dir / "labx_toy.ipynb").write_text(json.dumps(_notebook(BLANK)))
    return toy_root


def _data(extra: str = WRITTEN) -> dict:
    import tomllib

    base = (Path(__file__).parents[1] / "fixtures" / "toyroot" / "assignments" / "labx_toy" / "lab.toml").read_text()
    return tomllib.loads(base.replace("[[variants]]", extra + "\n[[variants]]", 1))


def _manifest(extra: str = WRITTEN):
    return parse(_data(extra), "labx_toy")


def _marks(tmp_path, text: str) -> Path:
    p = tmp_path / "marks.csv"
    p.write_text(text, encoding="utf-8")
    return p


# -- the manifest ----------------------------------------------------------------------
def test_manifest_knows_the_manual_question():
    m = _manifest()
    assert [q.id for q in m.manual] == ["essay"] and [q.id for q in m.tested] == ["add", "norm"]
    assert m.max_score == 7 and m.question("essay").rubric.startswith("1 point")
    assert m.notebooks == ("labx_toy.ipynb", "labx_toy.vi.ipynb")
    with pytest.raises(ManifestError, match='key "manual" .* must be true or false'):
        _manifest(WRITTEN.replace("manual = true", 'manual = "yes"'))
    data = _data()
    data["variants"][0]["loses"] = ["essay"]  # no test scores it: no variant can be seen to lose it
    with pytest.raises(ManifestError, match="loses \\['essay'\\], marked by hand"):
        parse(data, "labx_toy")


# -- the marks file --------------------------------------------------------------------
def test_read_marks_accepts_what_a_spreadsheet_writes(tmp_path):
    m = _manifest()
    text = "\ufeffsubmission, question ,points,comment\nalice,essay,\"1,5\",'=clear; say why\nbob,essay,,\n\ncarol,essay,2,\n"
    marks = manual.read_marks(_marks(tmp_path, text), m)
    assert marks == {("alice", "essay"): manual.Mark(1.5, "=clear; say why"), ("carol", "essay"): manual.Mark(2.0, "")}
    # written back as it was read: the formula-looking comment escaped, a blank mark blank
    again = _marks(tmp_path, manual.marks_csv([("alice", "essay", marks[("alice", "essay")]), ("bob", "essay", None)]))
    assert manual.read_marks(again, m) == {("alice", "essay"): marks[("alice", "essay")]}
    assert "'=clear" in again.read_text(encoding="utf-8-sig")
    semicolons = _marks(tmp_path, "submission;question;points;comment\nalice;essay;1,5;ok\n")  # Excel, vi locale
    assert manual.read_marks(semicolons, m) == {("alice", "essay"): manual.Mark(1.5, "ok")}


@pytest.mark.parametrize("body, message", [
    ("alice,essay,3,\n", "marks.csv:2: points '3' is outside 0 to 2 for question 'essay'"),
    ("alice,essay,-1,\n", "outside 0 to 2"),
    ("alice,essay,two,\n", "marks.csv:2: points 'two' is not a number"),
    ("alice,norm,1,\n", "marks.csv:2: question 'norm' is scored by its tests, not by hand"),
    ("alice,essai,1,\n", "marks.csv:2: no question 'essai' in labx_toy/lab.toml"),
    ("alice,essay,1,\nalice,essay,2,\n", "marks.csv:3: a second mark for 'alice', question 'essay'"),
    (",essay,1,\n", "marks.csv:2: no submission"),
])
def test_read_marks_names_the_line_of_a_bad_mark(tmp_path, body, message):
    with pytest.raises(ValueError) as info:
        manual.read_marks(_marks(tmp_path, "submission,question,points,comment\n" + body), _manifest())
    assert message in str(info.value)


def test_read_marks_needs_its_header(tmp_path):
    with pytest.raises(ValueError, match="header must name submission, question, points.*missing points"):
        manual.read_marks(_marks(tmp_path, "submission,question,score\na,essay,1\n"), _manifest())


def test_a_mark_is_a_result_and_pending_is_not_zero():
    m = _manifest()
    t = results.TestResult(nodeid="t::a", name="test_add", question="add", max_points=3, points=3, status="passed",
                           visibility="visible")
    res = results.SubmissionResult(submission="alice", lab="labx_toy", tests=[t])
    assert res.pending_points(m) == 2 and [q.pending for q in res.questions(m)] == [False, False, True]
    marked = manual.apply(res, m, {("alice", "essay"): manual.Mark(1.5, "say why")})
    assert marked.score == 4.5 and marked.pending_points(m) == 0 and res.score == 3  # the original untouched
    again = manual.apply(marked, m, {("alice", "essay"): manual.Mark(2.0)})
    assert again.score == 5 and sum(t.kind == results.MANUAL for t in again.tests) == 1  # replaced, not added
    assert manual.apply(again, m, {}).score == 3  # a mark taken back is pending again
    assert "2 points are marked by hand and not marked yet" in results.gradescope_json(res, m)["output"]


def test_answers_are_read_from_any_notebook_json_and_bad_ones_refused():
    nb = _notebook("My answer")
    nb["cells"].append({"cell_type": "code", "metadata": {"tags": ["answer:essay", "x"]}, "source": "y = 2"})
    assert manual.answers(json.dumps(nb).encode()) == {"essay": ["My answer", "y = 2"]}
    assert manual.answers(b'{"cells": [1, {"metadata": []}, {"metadata": {"tags": "answer:essay"}}]}') == {}
    for bad in (b"\xff\xfe", b"not json", b"[]"):
        try:
            assert manual.answers(bad) == {}
        except ValueError as exc:
            assert "not a notebook" in str(exc)


# -- the workflow, through the CLI ----------------------------------------------------
def _submissions(root: Path, tmp_path: Path) -> Path:
    subs = tmp_path / "subs"
    for who in ("alice", "bob", "carol"):
        (subs / who).mkdir(parents=True)
        (subs / who / "toy.py").write_bytes(root.joinpath(*REF, "toy.py").read_bytes())
    (subs / "alice" / "labx_toy.ipynb").write_text(json.dumps(_notebook("Because <b>norms</b>\n```\n# ✅ 7/7")))
    (subs / "bob" / "labx_toy.vi.ipynb").write_text(json.dumps(_notebook(BLANK)))  # handed out as it was
    return subs


def _rows(out: Path) -> dict[str, dict]:
    return {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text("utf-8-sig")))}


def test_grade_extracts_answers_then_takes_the_marks(written_lab, tmp_path, capsys):
    subs, out = _submissions(written_lab, tmp_path), tmp_path / "out"
    assert main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "2"]) == 0
    assert "3 answer(s) of questions marked by hand wait for their marks" in capsys.readouterr().err
    rows = _rows(out)
    assert rows["alice"]["score"] == "5" and rows["alice"]["max_score"] == "7" and rows["alice"]["essay"] == ""
    md = (out / "feedback" / "alice.md").read_text()
    assert "2 points are marked by hand and not marked yet" in md and "not marked yet / 2" in md
    essay = (out / "manual" / "essay.md").read_text()
    assert "Rubric: 1 point: says it" in essay
    alice = essay.split("## alice")[1].split("## bob")[0]
    assert "&lt;b&gt;norms&lt;/b&gt;" in alice and "````" in alice  # fenced: no heading, no HTML of its own
    assert "no answer" in essay.split("## bob")[1].split("## carol")[0]  # the blank cell is no answer
    assert "no notebook handed in" in essay.split("## carol")[1]
    template = (out / "manual" / "marks-template.csv").read_text("utf-8-sig").splitlines()
    assert template == ["submission,question,points,comment", "alice,essay,,", "bob,essay,,", "carol,essay,,"]
    raw = json.loads((out / "raw" / "alice.json").read_text())
    assert not any(t["kind"] == results.MANUAL for t in raw["tests"])

    marks = _marks(tmp_path, "submission,question,points,comment\nalice,essay,1.5,say why\nzed,essay,1,\n")
    assert main(["grade", "labx", str(subs), "--out", str(out), "--manual", str(marks)]) == 0
    err = capsys.readouterr().err
    assert "graded 0, unchanged 3" in err and "'zed', which is not a submission" in err
    rows = _rows(out)
    assert (rows["alice"]["score"], rows["alice"]["essay"], rows["bob"]["essay"]) == ("6.5", "1.5", "")
    md = (out / "feedback" / "alice.md").read_text()
    assert "1.5 / 2" in md and "say why" in md and "not marked yet" not in md
    gs = json.loads((out / "results" / "alice.json").read_text())
    assert gs["score"] == 6.5 and "marked by hand" in {t["name"].split(": ", 1)[1] for t in gs["tests"]}
    assert "questions marked by hand still to mark: 2" in (out / "summary.md").read_text()
    # a later run without --manual (here a regrade of one) keeps the marks and everyone's answers
    assert main(["grade", "labx", str(subs), "--out", str(out), "--only", "bob", "--force"]) == 0
    assert _rows(out)["alice"]["score"] == "6.5"
    assert "&lt;b&gt;norms" in (out / "manual" / "essay.md").read_text()


@pytest.mark.parametrize("body, message", [
    ("alice,essay,5,\n", "points '5' is outside 0 to 2"),
    ("alice,add,1,\n", "question 'add' is scored by its tests"),
])
def test_grade_refuses_a_bad_marks_file_in_one_line(written_lab, tmp_path, capsys, body, message):
    subs = _submissions(written_lab, tmp_path)
    marks = _marks(tmp_path, "submission,question,points\n" + body)
    assert main(["grade", "labx", str(subs), "--out", str(tmp_path / "out"), "--manual", str(marks)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "out" / "gradebook.csv").exists()


def test_manual_marks_need_a_manual_question(toy_root, tmp_path, capsys):
    subs = tmp_path / "subs"
    (subs / "a").mkdir(parents=True)
    marks = _marks(tmp_path, "submission,question,points\na,add,1\n")
    assert main(["grade", "labx", str(subs), "--out", str(tmp_path / "out"), "--manual", str(marks)]) == 2
    assert "has no question marked by hand" in capsys.readouterr().err


def test_submit_puts_the_notebook_in_the_zip_with_its_outputs(written_lab, tmp_path, capsys):
    work = tmp_path / "work"
    work.mkdir()
    (work / "toy.py").write_bytes(written_lab.joinpath(*REF, "toy.py").read_bytes())
    assert main(["submit", "labx", "--path", str(work), "--out", str(tmp_path / "none.zip")]) == 0
    assert "no notebook (labx_toy.ipynb, labx_toy.vi.ipynb)" in capsys.readouterr().out
    (work / "labx_toy.vi.ipynb").write_text(json.dumps(_notebook("Vì chuẩn", outputs=True)))
    assert main(["submit", "labx", "--path", str(work), "--out", str(tmp_path / "s.zip")]) == 0
    with zipfile.ZipFile(tmp_path / "s.zip") as z:
        assert z.namelist() == ["MANIFEST.json", "labx_toy.vi.ipynb", "toy.py"]
        nb = json.loads(z.read("labx_toy.vi.ipynb"))
        names = [f["name"] for f in json.loads(z.read("MANIFEST.json"))["files"]]
    code = [c for c in nb["cells"] if c["cell_type"] == "code"][0]
    # the notebook the student worked in, as it is: its outputs are what the TA reads beside the answers
    assert code["outputs"] and names == ["labx_toy.vi.ipynb", "toy.py"]
    assert manual.answers(json.dumps(nb).encode()) == {"essay": ["Vì chuẩn"]}


def test_verify_has_nothing_to_prove_of_a_manual_question(written_lab):
    from autograder.authoring import candidates, verify
    from autograder.core import labs

    lab = labs.get("labx", written_lab)
    ref, stub = candidates.all_candidates(lab)[:2]
    assert "essay" not in stub.expect_lost
    t = [results.TestResult(nodeid=f"t::{q}", name=q, question=q, max_points=p, points=p, status="passed",
                            visibility="visible") for q, p in (("add", 3), ("norm", 2))]
    assert verify.judge(lab, ref, results.SubmissionResult(submission="r", lab=lab.name, tests=t)) == []


def test_demo_submissions_hand_in_the_notebook():
    """examples/lab1: the reference's notebook holds the model answer, the stub's is as handed out."""
    from autograder.authoring import candidates
    from autograder.core import labs

    lab = labs.get("lab1")
    ref, stub, variant = candidates.all_candidates(lab)[:3]
    blank = manual.blank_answers(lab.assignment_dir, lab.manifest)
    (name, data), = candidates.notebook(lab, ref).items()
    answer = manual.answers(data)["rent_or_buy_memo"]
    assert name == "lab1_iron_law.ipynb" and answer[0].startswith("Rent.") and answer[0].strip() not in blank
    assert [t.strip() for t in manual.answers(candidates.notebook(lab, stub)[name])["rent_or_buy_memo"]][0] in blank
    assert candidates.notebook(lab, variant) == {}
