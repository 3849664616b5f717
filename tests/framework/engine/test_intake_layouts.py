"""Batches built the way learning platforms export them (``docs/intake.md``).

Moodle's "download all" (a folder per student holding a zip), Canvas's flat
files (``name[_LATE]_userid_submissionid_file``, resubmissions ``-1``),
two entries that give one id, several copies of a declared file, a broken
file among good ones (partial credit), the gradebook's BOM, problems and
late columns, ``--only``, and the one-line errors.  Graded in-process on the
toy lab (the sandbox is the hostile suite's business).
"""

from __future__ import annotations

import csv
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from autograder.batch import platforms
from autograder.core import stubs
from autograder.calls import errors, loader
from autograder.cli import main
from autograder.core import labs
from autograder.grading import staging

TOY_FILES = ("toy.py",)


def _ref(toy_root: Path) -> str:
    return stubs.unmarked((toy_root / "solutions" / "labx_toy" / "toy.py").read_text())


def _stub(toy_root: Path) -> str:
    return stubs.texts(labs.get("labx", toy_root))["toy.py"]


def _zip(path: Path, members: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        for name, text in members.items():
            z.writestr(name, text)
    return path


def _rows(out: Path) -> dict[str, dict[str, str]]:
    raw = (out / "gradebook.csv").read_bytes()
    assert raw.startswith("\ufeff".encode()), "the gradebook starts with a BOM (Excel, Vietnamese names)"
    return {r["submission"]: r for r in csv.DictReader(raw.decode("utf-8-sig").splitlines())}


def _grade(subs: Path, out: Path, *extra: str) -> int:
    return main(["grade", "labx", str(subs), "--out", str(out), "--no-sandbox", "--jobs", "1", *extra])


# -- intake ------------------------------------------------------------------------------------
def test_a_moodle_folder_holding_a_zip_is_opened_one_level_deep(toy_root, tmp_path):
    folder = tmp_path / "subs" / "Trần Thị B_12345_assignsubmission_file_"
    _zip(folder / "bai2.zip", {"bai2/toy.py": _ref(toy_root)})
    _zip(folder / "nested.zip", {"inner.zip": "not opened: a zip in a zip"})
    intake = platforms.read(tmp_path / "subs")
    [entry] = intake.entries
    assert intake.platform.name == "moodle" and entry.id == "Trần Thị B_12345"  # name and participant id
    st = staging.stage(entry, TOY_FILES, tmp_path / "staged")
    assert st.problems == [] and (tmp_path / "staged" / "toy.py").read_text() == _ref(toy_root)
    assert _grade(tmp_path / "subs", tmp_path / "out") == 0
    row = _rows(tmp_path / "out")["Trần Thị B_12345"]
    assert row["score"] == "5" and row["name"] == "Trần Thị B"  # the name, from Moodle's folder name
    _zip(tmp_path / "deep" / "s" / "outer.zip", {"inner.zip": b"PK"})  # only a zip inside: not opened, and said
    st = staging.stage(staging.discover(tmp_path / "deep")[0], TOY_FILES, tmp_path / "staged2")
    assert st.problems == ["outer.zip/inner.zip is an archive inside a zip, which the grader does not open: "
                           "put all the files in one zip",
                           "file toy.py was not found in the part of the submission that could be read"]


def test_canvas_flat_files_are_grouped_per_student_and_the_latest_resubmission_wins(toy_root, tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "smithjohn_12345_678_toy.py").write_text(_stub(toy_root))
    (subs / "smithjohn_12345_679_toy-1.py").write_text(_ref(toy_root))  # resubmitted: Canvas adds -1
    (subs / "smithjohn_12345_679_notes.txt").write_text("not a declared file")
    (subs / "doejane_LATE_222_333_toy.py").write_text(_ref(toy_root))
    intake = platforms.read(subs)
    entries = {e.id: e for e in intake.entries}
    assert intake.platform.name == "canvas" and set(entries) == {"smithjohn_12345", "doejane_222"}
    assert len(entries["smithjohn_12345"].sources) == 3
    assert "doejane_222: the platform marked this submission LATE" in intake.warnings
    st = staging.stage(entries["smithjohn_12345"], TOY_FILES, tmp_path / "s1")
    assert (tmp_path / "s1" / "toy.py").read_text() == _ref(toy_root)
    assert st.notes == ["toy.py: graded smithjohn_12345_679_toy-1.py; ignored smithjohn_12345_678_toy.py"]
    assert _grade(subs, tmp_path / "out", "--export", "canvas") == 0
    rows = _rows(tmp_path / "out")
    assert rows["smithjohn_12345"]["score"] == rows["doejane_222"]["score"] == "5"
    canvas = list(csv.reader((tmp_path / "out" / "canvas.csv").read_text(encoding="utf-8-sig").splitlines()))
    assert canvas[0][:2] == ["Student", "ID"] and "Points Possible" in canvas[1][0]
    assert sorted((r[1], r[-1]) for r in canvas[2:]) == [("12345", "5"), ("222", "5")]  # matched on the user id
    assert "the platform marked this submission LATE" in (tmp_path / "out" / "summary.md").read_text()


def test_two_entries_with_one_id_are_both_graded_and_said_so(toy_root, tmp_path, capsys):
    subs = tmp_path / "subs"
    (subs / "alice").mkdir(parents=True)
    (subs / "alice" / "toy.py").write_text(_stub(toy_root))
    _zip(subs / "alice.zip", {"alice/toy.py": _ref(toy_root)})
    assert _grade(subs, tmp_path / "out") == 0
    rows = _rows(tmp_path / "out")
    assert {k: v["score"] for k, v in rows.items()} == {"alice": "0", "alice~2": "5"}
    err = capsys.readouterr().err
    assert "both give the id 'alice'" in err and "graded separately" in err
    assert "both give the id 'alice'" in (tmp_path / "out" / "summary.md").read_text()


@pytest.mark.parametrize(("layout", "graded"), [
    ({"draft/toy.py": "stub", "final/toy.py": "ref"}, "final/toy.py"),  # the untouched stub loses
    ({"final/toy.py": "stub", "draft/toy.py": "ref"}, "draft/toy.py"),  # ... wherever it is
    ({"toy.py": "ref", "old/toy.py": "ref2"}, "toy.py"),  # the shallowest
    ({"old/toy.py": "ref", "v2/toy.py": "ref2"}, "v2/toy.py"),  # not in a folder named like a draft
    ({"a/toy.py": "ref", "b/toy.py": "ref2"}, "a/toy.py"),  # else the first by name
])
def test_several_copies_of_a_file_the_rule_picks_one_and_the_feedback_names_both(toy_root, tmp_path, layout,
                                                                                   graded):
    texts = {"stub": _stub(toy_root), "ref": _ref(toy_root), "ref2": _ref(toy_root) + "\n# another\n"}
    entry = tmp_path / "carol"
    for name, which in layout.items():
        (entry / name).parent.mkdir(parents=True, exist_ok=True)
        (entry / name).write_text(texts[which])
    st = staging.stage(entry, TOY_FILES, tmp_path / "staged", stubs={"toy.py": texts["stub"].encode()})
    assert (tmp_path / "staged" / "toy.py").read_text() == texts[layout[graded]]
    ignored = ", ".join(sorted(n for n in layout if n != graded))
    assert st.notes == [f"toy.py: graded {graded}; ignored {ignored}"]


def test_the_graded_and_ignored_copies_reach_the_feedback(toy_root, tmp_path):
    subs = tmp_path / "subs"
    for folder, text in (("draft", _stub(toy_root)), ("final", _ref(toy_root))):
        (subs / "carol" / folder).mkdir(parents=True)
        (subs / "carol" / folder / "toy.py").write_text(text)
    assert _grade(subs, tmp_path / "out") == 0
    assert _rows(tmp_path / "out")["carol"]["score"] == "5"
    assert "Note: toy.py: graded final/toy.py; ignored draft/toy.py" in (tmp_path / "out" / "feedback" / "carol.md").read_text()


# -- partial credit per file ---------------------------------------------------------------------
def test_a_broken_file_costs_only_the_calls_that_need_it(tmp_path):
    (tmp_path / "good.py").write_text("def f():\n    return 1\n")
    (tmp_path / "bad.py").write_text("def g():\n    return 2\n\ndef h(:\n")
    modules, failed = loader.load_each(tmp_path, ("good.py", "bad.py", "gone.py"))
    assert set(modules) == {"good"} and set(failed) == {"bad.py", "gone.py"}
    assert loader.find_function(modules, "f", failed, tmp_path)() == 1
    with pytest.raises(errors.StudentCodeError) as g:  # its def line is there: the syntax error is the reason
        loader.find_function(modules, "g", failed, tmp_path)
    assert g.value.kind == errors.IMPORT and "bad.py" in str(g.value)
    with pytest.raises(errors.StudentCodeError) as k:  # defined nowhere: the first failed file's error
        loader.find_function(modules, "k", failed, tmp_path)
    assert k.value.kind == errors.IMPORT
    with pytest.raises(errors.StudentCodeError) as all_or_nothing:
        loader.load_modules(tmp_path, ("good.py", "bad.py"))
    assert all_or_nothing.value.kind == errors.IMPORT


def test_a_file_that_does_not_import_is_a_named_problem(toy_root, tmp_path):
    subs = tmp_path / "subs"
    (subs / "dave").mkdir(parents=True)
    (subs / "dave" / "toy.py").write_text(_ref(toy_root) + "\ndef broken(:\n")
    assert _grade(subs, tmp_path / "out") == 0
    row = _rows(tmp_path / "out")["dave"]
    assert row["score"] == "0" and row["problems"].startswith("importing toy.py failed: SyntaxError")
    assert "importing toy.py failed" in (tmp_path / "out" / "summary.md").read_text()


# -- the gradebook: late columns, --only, errors ------------------------------------------------------
def test_late_days_penalty_extension_and_cap_in_the_gradebook(toy_root, tmp_path):
    subs = tmp_path / "subs"
    for sid in ("ontime", "late2", "ext", "verylate", "notime"):
        (subs / sid).mkdir(parents=True)
        (subs / sid / "toy.py").write_text(_ref(toy_root))
    times = tmp_path / "times.csv"
    times.write_text("submission,submitted_at\n"
                     "ontime,2026-12-20T23:59\n"
                     "late2,2026-12-22T00:00:01\n"  # 24 h and 1 s after the due date: 2 days started
                     "ext,2026-12-22T10:00\n"
                     "verylate,2027-01-20T12:00+07:00\n", encoding="utf-8")
    ext = tmp_path / "ext.csv"
    ext.write_text("\ufeffsubmission,due\next,2026-12-23T23:59\n", encoding="utf-8")
    assert _grade(subs, tmp_path / "out", "--due", "2026-12-20T23:59", "--tz", "Asia/Ho_Chi_Minh",
                  "--late-penalty", "10", "--late-cap", "50", "--times", str(times), "--extensions", str(ext),
                  "--allow-unknown-times") == 0  # "notime": without the flag, exit 1 (issue 37, test_record.py)
    rows = _rows(tmp_path / "out")
    got = {k: (v["late_days"], v["penalty_percent"], v["raw_score"], v["score"]) for k, v in rows.items()}
    assert got == {"ontime": ("0", "0", "5", "5"), "late2": ("2", "20", "5", "4"), "ext": ("0", "0", "5", "5"),
                   "verylate": ("31", "50", "5", "2.5"), "notime": ("", "0", "5", "5")}
    assert "submission time is unknown" in rows["notime"]["problems"]
    assert rows["late2"]["submitted_at"] == "2026-12-22T00:00:01+07:00"


def test_only_regrades_the_named_and_keeps_the_rest(toy_root, tmp_path):
    subs = tmp_path / "subs"
    for sid in ("a", "b"):
        (subs / sid).mkdir(parents=True)
        (subs / sid / "toy.py").write_text(_stub(toy_root))
    out = tmp_path / "out"
    assert _grade(subs, out) == 0
    for sid in ("a", "b"):
        (subs / sid / "toy.py").write_text(_ref(toy_root))
    assert _grade(subs, out, "--only", "b") == 0
    assert {k: v["score"] for k, v in _rows(out).items()} == {"a": "0", "b": "5"}  # a changed, but was not asked for
    assert _grade(subs, out, "--only", "zed") == 2


@pytest.mark.parametrize(("args", "says"), [
    (["grade", "labx", "/nonexistent", "--out", "o"], "no folder /nonexistent"),
    (["grade", "labz", ".", "--out", "o"], "no lab 'labz'"),
    (["grade", "labx", "EMPTY", "--out", "o"], "0 submission(s)"),
    (["grade", "labx", "EMPTY", "--out", "o", "--late-penalty", "5"], ""),
])
def test_clear_one_line_errors(toy_root, tmp_path, capsys, args, says):
    (tmp_path / "EMPTY").mkdir()
    args = [str(tmp_path / "EMPTY") if a == "EMPTY" else a for a in args]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("autograder grade: ") and says in err


# -- archives that cannot be read, and one that can ------------------------------------------------------
RAR = b"Rar!\x1a\x07\x01\x00" + b"\x00" * 64
SEVEN_Z = b"7z\xbc\xaf\x27\x1c\x00\x04" + b"\x00" * 64


def test_an_archive_that_cannot_be_read_is_named_as_such_never_a_missing_file(toy_root, tmp_path):
    import gzip

    from autograder.batch.feedback import inline

    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.rar").write_bytes(RAR)
    (subs / "bob.7z").write_bytes(SEVEN_Z)
    (subs / "carol.tar.gz").write_bytes(gzip.compress(b"toy.py"))
    _zip(subs / "dave.zip", {"lab/inner.zip": "a zip in the zip"})
    (subs / "erin.zip").write_bytes(b"PK\x03\x04 cut short")
    (subs / "frank" / "upload").mkdir(parents=True)  # a folder holding a RAR beside nothing else
    (subs / "frank" / "upload" / "lab.rar").write_bytes(RAR)
    _zip(subs / "gina.zip", {"lab\\toy.py": _ref(toy_root)})  # Windows backslashes: read as folders
    assert _grade(subs, tmp_path / "out") == 0
    rows = _rows(tmp_path / "out")
    says = {"alice": "alice.rar is a RAR archive, which the grader does not open: hand in a .zip file",
            "bob": "bob.7z is a 7z archive, which the grader does not open",
            "carol": "carol.tar.gz is a gzip (.gz, .tgz) archive, which the grader does not open",
            "dave": "dave.zip/lab/inner.zip is an archive inside a zip, which the grader does not open",
            "erin": "could not read erin.zip: the zip file is damaged or incomplete",
            "frank": "upload/lab.rar is a RAR archive"}
    summary = (tmp_path / "out" / "summary.md").read_text()
    for sub, text in says.items():
        problems = rows[sub]["problems"]
        assert problems.startswith(text) and "missing" not in problems, (sub, problems)
        assert "toy.py was not found in the part of the submission that could be read" in problems
        assert inline(text) in (tmp_path / "out" / "feedback" / f"{sub}.md").read_text()
        assert inline(text) in summary.split(f"| {inline(sub)} |")[1].splitlines()[0]
    assert rows["gina"]["score"] == "5" and rows["gina"]["problems"] == ""
    assert rows["gina"]["notes"] == ("gina.zip writes its folders with backslashes (\\), as some Windows tools do: "
                                     "they were read as folders")


def test_an_unreadable_upload_beside_a_graded_one_is_still_said(toy_root, tmp_path):
    entry = tmp_path / "hana"
    entry.mkdir()
    (entry / "toy.py").write_text(_ref(toy_root))
    (entry / "final.rar").write_bytes(RAR)
    st = staging.stage(entry, TOY_FILES, tmp_path / "staged")
    assert st.problems == [] and st.found == ["toy.py"]
    assert st.notes == ["final.rar is a RAR archive, which the grader does not open: hand in a .zip file"]


# -- --only: a name, an email, the start of one ----------------------------------------------------------
def test_only_takes_a_name_email_or_a_unique_start_of_one(toy_root, tmp_path, capsys):
    subs = tmp_path / "export"
    for n in (1, 2, 3):
        (subs / f"submission_{n}").mkdir(parents=True)
        (subs / f"submission_{n}" / "toy.py").write_text(_stub(toy_root))
    (subs / "submission_metadata.yml").write_text(
        "submission_1:\n  :submitters:\n  - :name: Nguyễn Văn An\n    :email: an@uni.edu\n    :sid: '06758767'\n"
        "submission_2:\n  :submitters:\n  - :name: Nguyễn Thị Bình\n    :email: binh@uni.edu\n"
        "submission_3:\n  :submitters:\n  - :name: Lê Chi\n    :email: chi@uni.edu\n", encoding="utf-8")
    out = tmp_path / "out"
    assert _grade(subs, out) == 0
    for n in (1, 2, 3):
        (subs / f"submission_{n}" / "toy.py").write_text(_ref(toy_root))
    capsys.readouterr()
    assert _grade(subs, out, "--only", "le chi") == 0  # accents, case and spaces ignored
    assert {k: v["score"] for k, v in _rows(out).items()} == {"submission_1": "0", "submission_2": "0",
                                                               "submission_3": "5"}
    assert _grade(subs, out, "--only", "binh@,0675") == 0  # the start of an email, of a sid
    assert {k: v["score"] for k, v in _rows(out).items()} == {"submission_1": "5", "submission_2": "5",
                                                               "submission_3": "5"}
    capsys.readouterr()
    assert _grade(subs, out, "--only", "nguyen") == 2  # two students: name them, grade nobody
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--only 'nguyen' names 2 submissions" in err
    assert "submission_1 (Nguyễn Văn An)" in err and "submission_2 (Nguyễn Thị Bình)" in err
