"""Predict before you measure (issue 29): ``[[predictions]]`` in lab.toml, the notebook's
``predict``/``reveal`` and its ``predictions.json`` (the lock, a headless run, a corrupt file),
the hand-in (submit, staging as data, Gradescope), the participation points, and the
instructor's summary; with "Run all" on the stubs (``grading.unwritten``).

On the toy lab, which declares two predictions (``norm_of_ones``, a number, its truth each
student's measurement; ``sum_dtype``, a choice, its truth fixed in lab.toml) and no points
for them; the tests that need points add ``[predictions_policy]`` to their copy.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import itertools
import json
import zipfile
from pathlib import Path

import pytest

from autograder.batch import feedback, manual, predictions_report as report
from autograder.cli import main
from autograder.core import labs, results
from autograder.core.manifest import PARTICIPATION, ManifestError, parse
from autograder.grading import predictions as P
from autograder.grading import staging
from autograder.grading.unwritten import attempt, skip_if_unwritten

TOY = Path(__file__).resolve().parents[1] / "fixtures" / "toyroot"
REF = TOY / "solutions" / "labx_toy" / "toy.py"
POINTS = "\n[predictions_policy]\npoints = 1\n"


def _data(extra: str = "") -> dict:
    import tomllib

    return tomllib.loads((TOY / "assignments" / "labx_toy" / "lab.toml").read_text() + extra)


def _manifest(extra: str = ""):
    return parse(_data(extra), "labx_toy")


class Clock:
    """A clock a test moves: one microsecond per reading, so every event has its own time."""

    def __init__(self):
        self.n = itertools.count()

    def __call__(self) -> str:
        return f"2026-05-01T12:00:00.{next(self.n):06d}Z"


@pytest.fixture
def lab_dir(tmp_path) -> Path:
    """A lab folder as a student has it: lab.toml and the stub."""
    d = tmp_path / "labx_toy"
    d.mkdir()
    (d / "lab.toml").write_bytes((TOY / "assignments" / "labx_toy" / "lab.toml").read_bytes())
    (d / "toy.py").write_bytes((TOY / "assignments" / "labx_toy" / "toy.py").read_bytes())
    return d


def _file(lab_dir: Path) -> dict:
    return json.loads((lab_dir / P.FILE).read_text())["predictions"]


# -- lab.toml ------------------------------------------------------------------------------
def test_the_manifest_declares_predictions_and_their_points():
    m = _manifest()
    assert [p.id for p in m.predictions] == ["norm_of_ones", "sum_dtype"] and m.participation is None
    assert m.prediction("sum_dtype").truth == "float64" and m.prediction("norm_of_ones").truth is None
    assert m.max_score == 5
    assert m.prediction("sum_dtype").reveals == ()  # what no cell before its predict cell may say: none given
    data = _data()
    data["predictions"][1]["reveals"] = ["float ?64", "64-bit"]
    assert parse(data, "labx_toy").prediction("sum_dtype").reveals == ("float ?64", "64-bit")
    paid = _manifest(POINTS)
    q = paid.participation
    assert q.id == PARTICIPATION and q.points == 1 and q.manual and q.participation and paid.max_score == 6
    assert [x.id for x in paid.tested] == ["add", "norm"] and paid.manual == ()  # no test, no TA


@pytest.mark.parametrize("change, message", [
    (lambda d: d["predictions"][0].update(guess=1), 'unknown key "guess" in \\[\\[predictions\\]\\] #1'),
    (lambda d: d["predictions"][0].pop("low"), "missing required key 'low'"),
    (lambda d: d["predictions"][0].update(low=2000), "low must be below high"),
    (lambda d: d["predictions"][0].update(kind="integer"), "kind must be one of 'number', 'choice'"),
    (lambda d: d["predictions"][0].update(choices=["a", "b"]), 'key "choices" is for kind = "choice"'),
    (lambda d: d["predictions"][1].update(truth="float8"), "truth 'float8' is not one of its choices"),
    (lambda d: d["predictions"][1].update(choices=["float32"], truth="float32"), "two or more different"),
    (lambda d: d["predictions"][0].update(question="nope"), "question 'nope' is not in"),
    (lambda d: d["predictions"][0].update(reflection="norm"), "must name a question with manual = true"),
    (lambda d: d["predictions"][0].update(id="a/b"), "id must be letters, digits"),
    (lambda d: d["predictions"][1].update(id="norm_of_ones"), "duplicate prediction ids"),
    (lambda d: d["predictions"][1].update(reveals="float64"), 'key "reveals" .* must be a list of strings'),
    (lambda d: d["predictions"][1].update(reveals=["float(64"]), "reveals 'float\\(64' is not a regular expression"),
    (lambda d: d["predictions"][1].update(reveals=["(float64)?"]), "matches an empty text"),
    (lambda d: d["predictions"][0].update(reveals=["ones"]), 'key "reveals" needs a fixed truth'),
    (lambda d: d.update(predictions_policy={"points": 1, "per_prediction": 1}), 'unknown key "per_prediction"'),
    (lambda d: d.update(predictions_policy={"points": -1}), "must be 0 or more"),
    (lambda d: (d.update(predictions_policy={"points": 1}), d.pop("predictions")), "declares no \\[\\[predictions"),
    (lambda d: (d.update(predictions_policy={"points": 1}), d["questions"].append(
        {"id": PARTICIPATION, "title": "t", "points": 1, "manual": True})),
     "is taken by \\[predictions_policy\\]"),
])
def test_a_wrong_prediction_table_is_refused_by_name(change, message):
    data = _data()
    change(data)
    with pytest.raises(ManifestError, match=message):
        parse(data, "labx_toy")


# -- the notebook's file: the lock, a headless run, a corrupt file ------------------------
def test_a_change_after_the_measurement_is_recorded_and_the_first_kept(lab_dir):
    book = P.Predictions(lab_dir, clock=Clock())
    book.predict("norm_of_ones", 5)
    book.predict("norm_of_ones", 8)  # changed before measuring: the one that counts
    said = book.reveal("norm_of_ones", 10.0)
    assert "Your prediction: 8. The result: 10." in said and "divided by the result: 0.8." in said[-2]
    said = book.predict("norm_of_ones", 10)  # after the measurement: recorded, changes nothing
    assert "your prediction stays 8. 10 is recorded as a change made after the measurement" in said[-1]
    entry = _file(lab_dir)["norm_of_ones"]
    assert entry["value"] == 5 and entry["at"] == "2026-05-01T12:00:00.000000Z"  # the first, never replaced
    assert [c["value"] for c in entry["changes"]] == [8, 10]
    assert entry["changes"][0]["at"] < entry["locked_at"] < entry["changes"][1]["at"] and entry["measured"] == 10
    book.reveal("norm_of_ones", 11.0)  # measured again: the lock stays where it was
    r = P.parse((lab_dir / P.FILE).read_bytes(), book.manifest)["norm_of_ones"]
    assert r.locked_at == entry["locked_at"] and r.measured == 11 and r.in_force()[0] == 8
    assert r.answered and r.changed_after_lock
    before = len(entry["changes"])
    book.predict("norm_of_ones", 10)  # the same value again: nothing new
    assert len(_file(lab_dir)["norm_of_ones"]["changes"]) == before


def test_a_first_value_after_the_measurement_is_no_prediction(lab_dir):
    book = P.Predictions(lab_dir, clock=Clock())
    assert "You made no prediction before this measurement. The result: float64." in book.reveal("sum_dtype")
    assert "without a prediction: float64 is recorded as given after" in book.predict("sum_dtype", "c")[-1]
    r = P.parse((lab_dir / P.FILE).read_bytes(), book.manifest)["sum_dtype"]
    assert r.value == "float64" and not r.answered


def test_a_headless_run_lists_every_prediction_unanswered(lab_dir, capsys):
    """Nobody typed: every guess is None.  The file lists each declared prediction, the
    measured ones locked with their result, none answered."""
    P.predict("norm_of_ones", None, folder=lab_dir)
    assert "write your guess in place of None" in capsys.readouterr().out
    P.reveal("norm_of_ones", 10.0, folder=lab_dir)
    entries = _file(lab_dir)
    assert list(entries) == ["norm_of_ones", "sum_dtype"]  # sum_dtype was never asked: listed all the same
    assert all(e["value"] is None and e["at"] is None and e["changes"] == [] for e in entries.values())
    assert entries["norm_of_ones"]["locked_at"] and entries["norm_of_ones"]["measured"] == 10
    assert entries["sum_dtype"]["locked_at"] is None
    assert not any(r.answered for r in P.parse((lab_dir / P.FILE).read_bytes(), None).values())


def test_a_stub_measures_nothing_and_locks_nothing(lab_dir):
    book = P.Predictions(lab_dir, clock=Clock())
    book.predict("norm_of_ones", 3)
    assert "Nothing was measured" in book.reveal("norm_of_ones", None)[-1]
    assert _file(lab_dir)["norm_of_ones"]["locked_at"] is None


def test_a_guess_is_checked_against_its_declaration(lab_dir):
    book = P.Predictions(lab_dir, clock=Clock())
    assert "is not a number from 0 to 1,000: nothing is recorded" in book.predict("norm_of_ones", 5000)[-1]
    assert "nothing is recorded" in book.predict("norm_of_ones", float("nan"))[-1]
    assert "is not one of a) float16, b) float32, c) float64" in book.predict("sum_dtype", "int8")[-1]
    assert all(e["value"] is None for e in _file(lab_dir).values())
    for said in ("b", " Float32 ", "float32"):  # the letter shown, or the words, case aside
        book.predict("sum_dtype", said)
    assert _file(lab_dir)["sum_dtype"]["value"] == "float32" and _file(lab_dir)["sum_dtype"]["changes"] == []
    import numpy as np
    import torch

    assert "nothing is recorded" in book.predict("norm_of_ones", torch.ones(2))[-1]  # no one number
    book.predict("norm_of_ones", np.float32(3.5))  # a scalar of NumPy (or torch) is a number
    assert _file(lab_dir)["norm_of_ones"]["value"] == 3.5
    with pytest.raises(KeyError, match="no prediction 'nope'"):
        book.predict("nope", 1)  # the notebook names one lab.toml lacks: the lab's bug, said at once


@pytest.mark.parametrize("content", [
    b"{not json", b"[]",
    b'{"format": 1, "predictions": {"norm_of_ones": {"value": 5000, "at": "2026-05-01T12:00:00Z"}}}',
    b'{"format": 1, "predictions": {"norm_of_ones": {"value": NaN, "at": "2026-05-01T12:00:00Z"}}}',
    b'{"format": 1, "predictions": {"norm_of_ones": {"value": 1, "at": "yesterday"}}}',
    b"[" * 100_000, b"\xff\xfe", b'{"format": 2, "predictions": {}}',
])
def test_a_corrupt_file_is_kept_aside_and_a_new_one_started(lab_dir, content):
    (lab_dir / P.FILE).write_bytes(content)
    said = P.Predictions(lab_dir, clock=Clock()).predict("norm_of_ones", 4)
    kept = list((lab_dir / P.KEPT_DIR).iterdir())
    assert len(kept) == 1 and kept[0].read_bytes() == content  # nothing the student wrote is lost
    assert said[0].startswith(f"{P.FILE} could not be read (") and f"kept as {P.KEPT_DIR}/" in said[0]
    assert _file(lab_dir)["norm_of_ones"]["value"] == 4 and list(_file(lab_dir)) == ["norm_of_ones", "sum_dtype"]


def test_the_result_is_said_in_the_notebooks_language(lab_dir, monkeypatch):
    monkeypatch.setenv("IRONLAW_LANG", "vi")
    book = P.Predictions(lab_dir, clock=Clock())
    book.predict("norm_of_ones", 1500 / 1000)
    said = "\n".join(book.reveal("norm_of_ones", 10.0))
    assert "1,5" in said and "0,15" in said and "1.5" not in said  # notebook_text.num: a comma decimal mark


# -- "Run all" on the stubs ---------------------------------------------------------------
def test_a_stub_skips_the_rest_of_its_block_and_names_the_function(lab_dir, capsys, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.syspath_prepend(str(lab_dir))
    import importlib

    toy = importlib.import_module("toy")
    importlib.reload(toy)  # this lab folder's stub
    ran = []
    with skip_if_unwritten(lab_dir) as guard:
        plt.figure()
        toy.norm([1.0])
        ran.append("after")  # never reached
    ran.append("next")
    assert ran == ["next"] and guard.skipped == "toy.norm" and plt.get_fignums() == []  # no empty plot left
    out = capsys.readouterr().out.strip().splitlines()
    assert out == ["toy.norm is not written yet (in toy.py): this cell skips what needs it. Write it, then run "
                   "the cell again."]
    monkeypatch.chdir(lab_dir)  # where the notebook's first cell puts it
    assert attempt(toy.add, [1], [2]) is None  # the function form
    with pytest.raises(NotImplementedError):  # not raised in a student file: not ours to hide
        with skip_if_unwritten(lab_dir):
            raise NotImplementedError("a library's")
    with pytest.raises(ZeroDivisionError):
        with skip_if_unwritten(lab_dir):
            1 / 0


def test_run_all_on_the_stubs_reaches_the_end_headless(lab_dir):
    """A notebook of prediction, measurement and check cells, run by nbclient on the untouched
    stub with every guess left None: it runs to the end, and predictions.json lists both
    predictions, unanswered."""
    import nbformat
    from nbclient import NotebookClient

    cells = [
        "from autograder.grading.predictions import predict, reveal\n"
        "from autograder.grading.unwritten import attempt, skip_if_unwritten\nimport toy",
        "guess = None\npredict('norm_of_ones', guess)",
        "reveal('norm_of_ones', attempt(toy.norm, [1.0] * 100))",
        "guess = None\npredict('sum_dtype', guess)",
        "with skip_if_unwritten():\n    import numpy as np\n    a = np.ones(3, np.float32)\n"
        "    reveal('sum_dtype', str(toy.add(a, a).dtype))",
        "print('the end')",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(lab_dir)}}).execute()
    text = [o.get("text", "") for c in nb.cells for o in c.outputs]
    assert "the end" in text[-1] and not any(o.output_type == "error" for c in nb.cells for o in c.outputs)
    for function in ("toy.norm", "toy.add"):
        assert any(f"{function} is not written yet" in t for t in text)
    entries = _file(lab_dir)
    assert list(entries) == ["norm_of_ones", "sum_dtype"] and all(e["value"] is None for e in entries.values())
    assert all(e["locked_at"] is None for e in entries.values())  # nothing measured on a stub


# -- the hand-in ------------------------------------------------------------------------------
def test_submit_puts_predictions_json_in_the_zip(toy_root, tmp_path, capsys):
    work = tmp_path / "work"
    work.mkdir()
    (work / "toy.py").write_bytes(REF.read_bytes())
    assert main(["submit", "labx", "--path", str(work), "--out", str(tmp_path / "none.zip")]) == 0
    assert "no predictions.json in" in capsys.readouterr().out
    P.Predictions(work, labs.get("labx", toy_root).manifest, clock=Clock()).predict("norm_of_ones", 9)
    assert main(["submit", "labx", "--path", str(work), "--out", str(tmp_path / "s.zip")]) == 0
    with zipfile.ZipFile(tmp_path / "s.zip") as z:
        assert z.namelist() == ["MANIFEST.json", P.FILE, "toy.py"]
        assert z.read(P.FILE) == (work / P.FILE).read_bytes()
        assert [f["name"] for f in json.loads(z.read("MANIFEST.json"))["files"]] == [P.FILE, "toy.py"]


def test_staging_keeps_predictions_as_data_beside_the_code(tmp_path):
    sub = tmp_path / "alice"
    sub.mkdir()
    (sub / "toy.py").write_bytes(REF.read_bytes())
    (sub / P.FILE).write_text("import os; os.system('echo pwned')")  # only ever read as JSON
    st = staging.stage(sub, ("toy.py",), tmp_path / "staged", optional=(P.FILE,))
    assert sorted(p.name for p in st.directory.iterdir()) == ["toy.py"]  # what the grader gets: the code only
    assert st.extra == {P.FILE: (sub / P.FILE).read_bytes()} and not st.problems
    without = staging.stage(sub, ("toy.py",), tmp_path / "staged2")
    assert st.sha256 == without.sha256  # the score does not depend on it: an edit regrades nothing
    handed = report.read(st.extra[P.FILE], _manifest())
    assert handed.records is None and handed.problem.startswith("not JSON")


AT = '"at": "2026-05-01T12:00:00.000000Z"'


@pytest.mark.parametrize("content, problem", [
    (b"[" * 100_000 + b"]" * 100_000, "nested more than 8 levels deep"),
    (b'{"format": 1, "predictions": {"norm_of_ones": {"value": 1' + b"0" * 4000 + b", " + AT.encode() + b"}}}",
     "a number too large"),
    (b'{"format": 1, "predictions": {"norm_of_ones": {"value": 1e999, ' + AT.encode() + b"}}}", "not a finite number"),
    (b'{"format": 1, "predictions": {"norm_of_ones": {"value": "5", ' + AT.encode() + b"}}}", "is not a number"),
    (b'{"format": 1, "predictions": {"sum_dtype": {"value": ["float32"], ' + AT.encode() + b"}}}", "not one of"),
    (b'{"format": 1, "predictions": {"norm_of_ones": {"value": 1, "at": "' + b"9" * 100_000 + b'"}}}', "UTC time"),
    (b'{"format": 1, "predictions": {"norm_of_ones": {"changes": [' + b"{}," * 300 + b'{}]}}}', "at most 200"),
    (b'{"format": 1, "predictions": {"norm_of_ones": {"value": 1, ' + AT.encode() + b', "x": 1}}}', "not a prediction"),
    (b"\xff\xfe\x00", "not JSON"),
    (b'{"format": 1, "predictions": []}', "not a predictions file"),
])
def test_a_hostile_file_is_read_as_data_and_never_raises(content, problem):
    handed = report.read(content, _manifest())
    assert handed.records is None and problem in handed.problem and len(handed.problem) <= 200


def test_entries_the_lab_does_not_declare_are_left_out():
    many = {f"p{i}": {"value": "x" * 1000} for i in range(1000)}  # never checked: not declared
    data = json.dumps({"format": 1, "predictions": {**many, "norm_of_ones": {"value": 3, "at": AT[7:-1]}}})
    assert list(report.read(data.encode(), _manifest()).records) == ["norm_of_ones"]


# -- participation points --------------------------------------------------------------------
def _handed(manifest, **guesses) -> report.Handed:
    """A submission whose predictions are ``guesses`` (id -> value, or (value, measured)), each
    given before its measurement."""
    clock, records = Clock(), {}
    for pid, g in guesses.items():
        value, measured = g if isinstance(g, tuple) else (g, None)
        r = P.Record()
        if value is not None:
            r.value, r.at = value, clock()
        r.locked_at, r.measured = clock(), measured
        records[pid] = r
    return report.Handed(records)


def _result(m) -> results.SubmissionResult:
    t = results.TestResult(nodeid="t::a", name="test_add", question="add", max_points=3, points=3, status="passed",
                           visibility="visible")
    return results.SubmissionResult(submission="alice", lab="labx_toy", tests=[t])


def test_participation_points_for_a_complete_set_only():
    m = _manifest(POINTS)
    full = report.apply(_result(m), m, _handed(m, norm_of_ones=(9.0, 10.0), sum_dtype="float32"))
    assert full.score == 4 and full.pending_points(m) == 0  # never graded for being right: float32 is wrong
    again = report.apply(full, m, _handed(m, norm_of_ones=(9.0, 10.0), sum_dtype="float32"))
    assert sum(t.kind == report.KIND for t in again.tests) == 1  # replaced, not added
    part = report.apply(_result(m), m, _handed(m, norm_of_ones=9.0, sum_dtype=None))
    assert part.score == 3 and part.pending_points(m) == 0  # 0, and said why; never "pending"
    none = report.apply(_result(m), m, report.Handed(None))
    bad = report.apply(_result(m), m, report.read(b"[" * 50 + b"]" * 50, m))
    md = feedback.markdown(part, m)
    assert "## ❌ Predictions made before measuring: 0 / 1" in md
    assert "1 of 2 predictions were made before their measurement" in md
    assert "All 2 predictions were made before their measurement" in feedback.markdown(full, m)
    assert "No predictions.json was handed in" in feedback.markdown(none, m)
    assert "predictions.json could not be read (nested more than 8 levels deep)" in feedback.markdown(bad, m)
    gs = results.gradescope_json(full, m)
    assert gs["score"] == 4 and any(t["tags"] == [PARTICIPATION] and t["score"] == 1 for t in gs["tests"])
    assert report.apply(_result(m), _manifest(), report.Handed(None)).tests == _result(m).tests  # no points: nothing


def test_check_says_where_the_participation_points_come_from(toy_root, tmp_path, capsys):
    toml = toy_root / "assignments" / "labx_toy" / "lab.toml"
    toml.write_text(toml.read_text() + POINTS)
    work = tmp_path / "work"
    work.mkdir()
    (work / "toy.py").write_bytes(REF.read_bytes())
    main(["check", "labx", "--path", str(work)])
    row = next(line for line in capsys.readouterr().out.splitlines() if "Predictions made before measuring" in line)
    cells = [c.strip() for c in row.split("│")[1:-1]]  # no test: nothing earned yet, 1 point at grading
    assert cells[1:] == ["from your predictions.json", "-", "1"], row


def test_marks_cannot_be_given_to_the_participation_points(tmp_path):
    marks = tmp_path / "marks.csv"
    marks.write_text(f"submission,question,points\nalice,{PARTICIPATION},1\n")
    with pytest.raises(ValueError, match="participation points, given from the predictions.json handed in"):
        manual.read_marks(marks, _manifest(POINTS))


def test_gradescope_gives_the_participation_points_from_the_upload(toy_root, tmp_path, monkeypatch):
    import contextlib
    import shutil

    from autograder.batch import gradescope_run
    from autograder.grading import runner
    from autograder.sandbox import backend

    root = tmp_path / "autograder"
    shutil.copytree(toy_root, root / "source")
    toml = root / "source" / "assignments" / "labx_toy" / "lab.toml"
    toml.write_text(toml.read_text() + POINTS)
    (root / "submission").mkdir()
    (root / "submission" / "toy.py").write_bytes(REF.read_bytes())
    m = labs.get("labx", root / "source").manifest
    P.Predictions(root / "submission", m, clock=Clock()).predict("norm_of_ones", 9)
    P.Predictions(root / "submission", m, clock=Clock()).predict("sum_dtype", "c")
    seen = {}

    def graded(lab, code_dir, sub, **kw):  # the tests' part, without a sandbox: not what this test is about
        seen["code"] = sorted(p.name for p in Path(code_dir).iterdir())
        return _result(m)

    monkeypatch.setattr(runner, "grade_staged", graded)
    monkeypatch.setattr(backend, "shared_zygote", lambda **kw: contextlib.nullcontext())
    payload = gradescope_run.grade(root)
    assert seen["code"] == ["toy.py"] and payload["score"] == 4
    (root / "submission" / P.FILE).unlink()
    assert gradescope_run.grade(root)["score"] == 3


# -- the instructor's summary -----------------------------------------------------------------
def test_the_summary_shows_the_class_against_the_truth(tmp_path):
    m = _manifest()
    handed = {
        "a": _handed(m, norm_of_ones=(10.0, 10.0), sum_dtype="float64"),  # ratio 1, right
        "b": _handed(m, norm_of_ones=(15.0, 10.0), sum_dtype="float32"),  # 1.5: within 2x
        "c": _handed(m, norm_of_ones=(3.0, 10.0), sum_dtype="float32"),   # 0.3: 1/4 to 1/2
        "d": _handed(m, norm_of_ones=(100.0, 10.0), sum_dtype="float16"),  # 10: above 4
        "e": _handed(m, norm_of_ones=(None, 10.0), sum_dtype=None),        # unanswered
        "f": report.Handed(None),                                          # no file: missing
        "g": report.read(b"not json", m),                                  # unreadable: missing
        "h": report.Handed({"sum_dtype": P.Record()}),                     # norm_of_ones not in the file
    }
    text = report.section(m, handed)
    norm, dtype = text.split("### `norm_of_ones`")[1].split("### `sum_dtype`")
    assert "- submissions with predictions.json: 6 of 8 (none: 1; not readable: 1)" in text
    assert "answered before the measurement: 4; unanswered: 1; missing (no file, or not in it): 3" in norm
    assert "within 2x of the truth: 2 of 4 (50%)" in norm and "the truth: each student's own measurement" in norm
    assert "| 1/2 to 2 (within 2x) | 2 |" in norm and "| 1/4 to 1/2 | 1 |" in norm and "| above 4 | 1 |" in norm
    assert "| below 1/4 | 0 |" in norm and "median 1.25" in norm
    assert "answered before the measurement: 4; unanswered: 2; missing (no file, or not in it): 2" in dtype
    assert "most common wrong choice: `float32` (2 of 4 (50%))" in dtype and "| float64 (the answer) | 1 | 1 |" in dtype
    assert "![predictions](predictions.png)" in text
    report.plot(m, handed, tmp_path / "predictions.png")
    assert (tmp_path / "predictions.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "with predictions.json: 0 of 0" in report.section(m, {})  # an empty batch: counted, no error
    assert report.section(dataclasses.replace(m, predictions=()), handed) == ""


def test_each_panel_names_its_question_the_truth_and_how_many_answered(tmp_path):
    from autograder.core import i18n

    m = dataclasses.replace(_manifest(), predictions=tuple(
        dataclasses.replace(p, unit="x") if p.kind == "number" else p for p in _manifest().predictions))
    handed = {"a": _handed(m, norm_of_ones=(10.0, 10.0), sum_dtype="float64"),
              "b": _handed(m, norm_of_ones=(None, 10.0), sum_dtype="float32"), "c": report.Handed(None)}
    norm, dtype = (report.panel(t, 5) for t in report.tallies(m, handed))
    assert norm.title == "norm_of_ones: The norm of a vector of 100 ones? [x]"  # the question and its unit
    assert norm.count == "1 answered of 5" and dtype.count == "2 answered of 5"  # N: the roster's, given
    assert norm.truth == "the truth: each student's own measurement" and dtype.truth == "the truth: float64"
    assert norm.xlabel.startswith("prediction / truth")
    with i18n.speaking("vi"):  # the batch's language
        assert report.panel(report.tallies(m, handed)[0], 5).count == "1 trên 5 đã trả lời"
    # ten predictions: every title stays within its panel's lines; the figure is drawn, N the batch's
    many = dataclasses.replace(m, predictions=tuple(dataclasses.replace(p, id=f"{p.id}_{k}", prompt=p.prompt * 3)
                                                    for k in range(5) for p in m.predictions))
    titles = [report.panel(t, 3).title for t in report.tallies(many, {})]
    assert len(titles) == 10 and all(len(line) <= report.TITLE_WIDTH for t in titles for line in t.splitlines())
    report.plot(many, handed, tmp_path / "many.png")
    assert (tmp_path / "many.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_summarys_figure_counts_the_roster_who_handed_in_nothing(tmp_path, monkeypatch):
    from autograder.batch import summary

    drawn = []
    monkeypatch.setattr(report, "plot", lambda m, handed, path, total=None: drawn.append((len(handed), total)))
    summary.write(tmp_path, [_result(_manifest())], _manifest(), nothing=["Zed Vo", "Yen Le"])
    assert drawn == [(1, 3)]  # one submission; N: the three students of the roster


def test_a_change_after_the_lock_is_counted_apart():
    m = _manifest()
    h = _handed(m, norm_of_ones=(10.0, 10.0))
    h.records["norm_of_ones"].changes.append((500.0, "2026-05-01T13:00:00.000000Z"))
    t, = [x for x in report.tallies(m, {"a": h}) if x.prediction.id == "norm_of_ones"]
    assert t.answers == [(10.0, 10.0)] and t.after_lock == 1
    assert "changed after the measurement (recorded, not counted): 1" in report.section(m, {"a": h})


def test_demo_submissions_hand_in_their_predictions(toy_root):
    """solutions/<lab>/demo_predictions.toml: what each demo submission predicted; the demo zips
    hold it as predictions.json, byte-reproducible; one it does not list hands in none."""
    from autograder.authoring import candidates

    lab = labs.get("labx", toy_root)
    demo = lab.solution_dir / candidates.DEMO_PREDICTIONS
    demo.write_text('[measured]\nnorm_of_ones = 10.0\n[guesses.reference]\nnorm_of_ones = 0\nsum_dtype = "float64"\n'
                    '[guesses.stub]\nsum_dtype = "float32"\n')
    ref, stub, variant = candidates.all_candidates(lab)
    made = candidates.demo_predictions(lab, ref)[P.FILE]
    assert made == candidates.demo_predictions(lab, ref)[P.FILE]  # fixed times: the zip does not drift
    records = P.parse(made, lab.manifest)
    assert records["norm_of_ones"].in_force()[0] == 0 and records["norm_of_ones"].measured == 10
    assert records["sum_dtype"].answered and records["sum_dtype"].measured == "float64"  # the fixed truth
    assert not P.parse(candidates.demo_predictions(lab, stub)[P.FILE], lab.manifest)["norm_of_ones"].answered
    assert candidates.demo_predictions(lab, variant) == {}
    with zipfile.ZipFile(candidates.zip_candidate(lab, ref, toy_root / "ref.zip")) as z:
        assert sorted(z.namelist()) == ["reference/predictions.json", "reference/toy.py"]
    demo.write_text('[guesses.reference]\nsum_dtype = "int8"\n')
    with pytest.raises(ValueError, match="demo_predictions.toml: sum_dtype: 'int8' is not one of the choices"):
        candidates.demo_predictions(lab, ref)
    demo.write_text('[guesses.reference]\nnope = 1\n')
    with pytest.raises(ValueError, match="no prediction 'nope'"):
        candidates.demo_predictions(lab, ref)


# -- the batch, end to end ----------------------------------------------------------------------
REFLECTION = '''
[[questions]]
id = "reflections"
title = "One line after each prediction"
points = 1
manual = true
rubric = "a reason, not a restatement"
'''


def _notebook(**answers: str) -> dict:
    cells = [{"cell_type": "markdown", "id": f"c{i}", "metadata": {"tags": [f"answer:reflections/{pid}"]},
              "source": [text]} for i, (pid, text) in enumerate(answers.items())]
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture
def predicting_lab(toy_root):
    """The toy lab with participation points and a manual question collecting a reflection after
    each prediction, its notebook as handed out."""
    lab_dir = toy_root / "assignments" / "labx_toy"
    text = (lab_dir / "lab.toml").read_text().replace("[[variants]]", REFLECTION + "\n[[variants]]", 1)
    text = text.replace('question = "norm"', 'question = "norm"\nreflection = "reflections"')
    text = text.replace('question = "add"', 'question = "add"\nreflection = "reflections"')
    (lab_dir / "lab.toml").write_text(text + POINTS)
    blank = "*One line here.*"
    (lab_dir / "labx_toy.ipynb").write_text(json.dumps(_notebook(norm_of_ones=blank, sum_dtype=blank)))
    return toy_root


def test_answer_parts_are_read_part_by_part_and_an_empty_one_is_missing(predicting_lab, tmp_path):
    lab = labs.get("labx", predicting_lab)
    m, out = lab.manifest, tmp_path / "out"
    assert manual.expected_parts(lab.assignment_dir, m) == {"reflections": ["norm_of_ones", "sum_dtype"]}
    nb = json.dumps(_notebook(norm_of_ones="Square roots grow slowly", sum_dtype="  *One line here.*\n")).encode()
    manual.extract(out, m, lab.assignment_dir, {"alice": {"labx_toy.ipynb": nb, P.FILE: b"{}"}, "bob": {}})
    record = json.loads((out / "manual" / "answers" / "alice.json").read_text())
    assert record["notebooks"] == ["labx_toy.ipynb"]  # predictions.json is no notebook
    assert record["answers"]["reflections"] == [["labx_toy.ipynb", "norm_of_ones", "Square roots grow slowly"]]
    assert record["missing"] == {"reflections": ["sum_dtype"]}
    assert manual.missing_count(out, m, ["alice", "bob"]) == {"reflections": 3}  # bob: no notebook, both parts
    shown = manual.missing_notes(out, report.apply(_result(m), m, report.Handed(None)), m)
    assert shown.notes == ['Your answer to "One line after each prediction" (Given two float32 arrays, toy.add '
                           'returns which dtype?) is missing: its cell is empty or as handed out. Your marker reads '
                           'only what the notebook you hand in holds.']
    assert shown.pending_points(m) == 1 and shown.score == 3  # the reflections wait for a TA: pending, never 0
    sheet = manual.answers_markdown(m.question("reflections"), {"alice": record, "bob": manual._record(out, "bob")})
    alice, bob = sheet.split("## alice")[1].split("## bob")
    assert alice.index("### `norm_of_ones`") < alice.index("Square roots") < alice.index("### `sum_dtype`")
    assert "_missing: the answer cell is empty" in alice.split("### `sum_dtype`")[1] and "no notebook handed in" in bob
    old = {"notebooks": ["n.ipynb"], "answers": {"reflections": [["n.ipynb", "before parts"]]}}  # an earlier run's
    assert "before parts" in manual.answers_markdown(m.question("reflections"), {"carol": old})
    assert manual.answers(nb) == {"reflections": ["Square roots grow slowly", "  *One line here.*\n"]}
    forged = json.dumps(_notebook(**{"x`` <script>\n# ✅": "hi"})).encode()  # a tag the student wrote
    manual.extract(out, m, lab.assignment_dir, {"eve": {"labx_toy.ipynb": forged}})
    sheet = manual.answers_markdown(m.question("reflections"), {"eve": manual._record(out, "eve")})
    assert "### ```x`` &lt;script&gt; # ✅```" in sheet and "<script>" not in sheet  # inline code, one line


def test_a_notebook_run_in_the_course_repository_ships_no_predictions(tmp_path):
    from autograder.core.files import shipped_files

    lab = tmp_path / "assignments" / "labx_toy"
    (lab / P.KEPT_DIR).mkdir(parents=True)
    for name in ("toy.py", P.FILE, f"{P.KEPT_DIR}/predictions-1.json"):
        (lab / name).write_text("{}")
    assert list(shipped_files(lab, tmp_path)) == ["assignments/labx_toy/toy.py"]


def test_grade_collects_predictions_reflections_and_participation(predicting_lab, tmp_path, capsys):
    m = labs.get("labx", predicting_lab).manifest
    subs, out = tmp_path / "subs", tmp_path / "out"
    for who in ("alice", "bob", "carol", "dave"):
        (subs / who).mkdir(parents=True)
        (subs / who / "toy.py").write_bytes(REF.read_bytes())
    (subs / "dave" / P.FILE).write_bytes(b"[" * 100_000)  # hostile: costs the participation points, nothing else
    book = P.Predictions(subs / "alice", m, clock=Clock())
    book.predict("norm_of_ones", 8)
    book.reveal("norm_of_ones", 10.0)
    book.predict("sum_dtype", "a")
    book.reveal("sum_dtype")
    (subs / "alice" / "labx_toy.ipynb").write_text(json.dumps(_notebook(
        norm_of_ones="I forgot the square root", sum_dtype="*One line here.*")))
    P.Predictions(subs / "bob", m, clock=Clock()).predict("norm_of_ones", 8)  # sum_dtype unanswered
    assert main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "2"]) == 0
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text("utf-8-sig")))}
    assert [rows[s][PARTICIPATION] for s in ("alice", "bob", "carol", "dave")] == ["1", "0", "0", "0"]
    assert rows["dave"]["score"] == "5" and not rows["dave"]["problems"]  # the code's points, all of them
    assert "predictions.json could not be read (nested more than 8" in (out / "feedback" / "dave.md").read_text()
    assert (rows["alice"]["reflections"], rows["alice"]["score"], rows["alice"]["max_score"]) == ("", "6", "7")
    summary = (out / "summary.md").read_text()
    assert "## Predictions" in summary and "with predictions.json: 2 of 4 (none: 1; not readable: 1)" in summary
    assert (out / report.FIGURE).is_file()
    assert "| One line after each prediction (`reflections`) | 7 |" in summary  # 1, then 2 each without a notebook
    sheet = (out / "manual" / "reflections.md").read_text()
    alice = sheet.split("## alice")[1].split("## bob")[0]
    assert "### `norm_of_ones`" in alice and "I forgot the square root" in alice
    assert "> prediction `norm_of_ones`: `8` before the measurement; result `10`: prediction / result 0.8" in alice
    assert "> prediction `sum_dtype`: `float16` before the measurement; result `float64`: wrong" in alice
    assert alice.split("### `sum_dtype`")[1].count("_missing: the answer cell is empty or as handed out_") == 1
    fb = (out / "feedback" / "alice.md").read_text()
    assert "is missing: its cell is empty or as handed out" in fb and "Given two float32 arrays" in fb
    assert "⏳ One line after each prediction: marked by hand, not marked yet" in fb  # pending, never 0
    assert "All 2 predictions were made before their measurement" in fb
    raw = json.loads((out / "raw" / "alice.json").read_text())
    assert not any(t["kind"] == report.KIND for t in raw["tests"])  # applied on every run, like a mark
    # --only keeps the others' predictions, and the summary still counts them
    assert main(["grade", "labx", str(subs), "--out", str(out), "--only", "carol", "--force"]) == 0
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text("utf-8-sig")))}
    assert rows["alice"][PARTICIPATION] == "1"
    assert "- submissions with predictions.json: 2 of 4" in (out / "summary.md").read_text()
