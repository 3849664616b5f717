"""Whose upload it is, and what goes back to the platform (issue 35): the hostile student's attacks
on a platform's names, rebuilt on the toy lab.

A student controls their display name (where the platform lets them edit it) and their upload's
file name, never the ids the platform gives: a Canvas user id and file id, a Moodle participant
id.  Each attack here is one a student can mount from their own account; each test checks the
victim's entry, grade, row and feedback are untouched, and the attacker's entry is flagged (the
console, the summary and its row).  Every file that goes back to a platform escapes its cells as
``gradebook.csv`` does, and ``--only`` never picks one of several students silently.

Intake and export functions are called directly where that shows the rule; a batch is graded
in-process (``--no-sandbox``, the toy lab) only where the files that go back are the point.
"""

from __future__ import annotations

import ast
import csv
import io
import zipfile
from pathlib import Path

import pytest

from autograder.batch import platforms
from autograder.batch.platforms import canvas
from autograder.cli import main
from autograder.commands import grade
from autograder.core import labs, stubs

REPO = Path(__file__).resolve().parents[3]
BOB, ANN, MALLORY = "123457", "123458", "9000001"  # Canvas user ids: Mallory renames herself "bob_123457"


def _ref(root: Path) -> str:
    return stubs.unmarked((root / "solutions" / "labx_toy" / "toy.py").read_text())


def _stub(root: Path) -> str:
    return stubs.texts(labs.get("labx", root))["toy.py"]


def _zip(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _grade(subs: Path, out: Path, *extra: str) -> int:
    return main(["grade", "labx", str(subs), "--out", str(out), "--no-sandbox", "--jobs", "1", *extra])


def _csv(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text("utf-8-sig"), newline="")))


def _rows(out: Path) -> dict[str, dict[str, str]]:
    return {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text("utf-8-sig")))}


def _roster(path: Path, *students: tuple[str, str]) -> Path:
    """Canvas's gradebook export (Grades > Export): its header, the points row, a row per student."""
    lines = ["Student,ID,SIS User ID,SIS Login ID,Section,Toy lab (1)", "    Points Possible,,,,,5"]
    lines += [f'"{name}",{uid},,,S1,' for name, uid in students]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


# -- Canvas: a name read two ways --------------------------------------------------------------------
def test_a_canvas_name_is_read_every_way_canvas_could_have_written_it():
    """Canvas writes <display name>[_LATE]_<user id>_<file id>_<file name> and takes only "_<digits>_"
    out of the display name: a name ending "_123457" and a file name "5003_lab.zip" read the same."""
    ways = canvas.readings(f"bob_{BOB}_{MALLORY}_5003_lab.zip")
    assert [(w["student"], w["user"], w["file_id"], w["file"]) for w in ways] == [
        ("bob", BOB, int(MALLORY), "5003_lab.zip"), (f"bob_{BOB}", MALLORY, 5003, "lab.zip")]
    assert [w["user"] for w in canvas.readings(f"bob_{BOB}_{MALLORY}_text.html")] == [BOB, MALLORY]
    assert len(canvas.readings("nguyenvanan_LATE_123_456_lab 2-1.zip")) == 1  # one way: LATE is Canvas's
    assert canvas.readings("anon_Ab3x9_55_12_x.py")[0]["file"] == "12_x.py"  # anonymous: no name to mistake
    assert canvas.readings("toy.py") == [] and canvas.parse("notes_12_toy.py") is None
    assert canvas.readings("_1" * (1 << 20)) == []  # longer than any file name: read no further


def test_feedback_file_names_carry_only_the_trusted_ids():
    """Canvas's "Re-Upload Submissions" takes the first two all-digit parts for the user and file id:
    whatever the display name holds, those are the ids read from the download."""
    for name in (f"bob_{BOB}", BOB, "", "=cmd|' /C calc'!A0", "trần_thị_bình"):
        made = canvas.feedback_name(name, MALLORY, 5003, "labx")
        assert [p for p in made.split("_") if p.isdigit()][:2] == [MALLORY, "5003"], made
        assert "/" not in made and made.endswith("_labx-feedback.md")
    assert canvas.feedback_name("trần_thị_bình", "7", 8, "labx") == "trầnthịbình_7_8_labx-feedback.md"


def _canvas_class(root: Path, subs: Path, mallory_name: str) -> None:
    """Bob and Ann hand in the reference; Mallory, renamed ``mallory_name``, a stub in a zip."""
    subs.mkdir()
    (subs / f"bob_{BOB}_5001_toy.py").write_text(_ref(root))
    (subs / f"ann_{ANN}_5002_toy.py").write_text(_ref(root))
    (subs / f"{mallory_name}_{MALLORY}_5003_lab.zip").write_bytes(_zip({"lab/toy.py": _stub(root)}))


@pytest.mark.parametrize("mallory_name", [f"bob_{BOB}", f"bobby_{BOB}"])
@pytest.mark.parametrize("with_roster", [False, True])
def test_a_display_name_claiming_another_students_id_never_takes_their_place(toy_root, tmp_path, capsys,
                                                                                mallory_name, with_roster):
    """HIGH (``bob_123457``: her upload joined Bob's entry and was graded for him) and MEDIUM
    (``bobby_123457``: Bob split out of canvas.csv, Mallory's row under his name, her feedback
    addressed to his id).  Now Bob's entry, grade, row and feedback are his own; Mallory's file is
    graded on its own, as no one's, flagged, and nothing of it goes back to Canvas."""
    subs, out = tmp_path / "subs", tmp_path / "out"
    _canvas_class(toy_root, subs, mallory_name)
    extra = ["--gradebook", str(_roster(tmp_path / "roster.csv", ("Bob", BOB), ("Ann", ANN),
                                        (mallory_name, MALLORY)))] if with_roster else []
    assert _grade(subs, out, *extra) == 0
    attacker = f"{mallory_name}_{MALLORY}_5003_lab.zip"
    rows = _rows(out)
    assert set(rows) == {f"bob_{BOB}", f"ann_{ANN}", attacker}
    assert (rows[f"bob_{BOB}"]["score"], rows[f"bob_{BOB}"]["problems"]) == ("5", "")  # untouched
    assert "lab.zip" not in rows[f"bob_{BOB}"].get("notes", "")  # nothing of hers was even looked at
    assert rows[attacker]["score"] == "0"
    assert "reads as the upload of more than one student" in rows[attacker]["problems"]
    assert f"holds the id {BOB} of another student" in rows[attacker]["problems"]
    canvas_rows = _csv(out / "canvas.csv")[2:]
    assert sorted((r[1], r[0], r[-1]) for r in canvas_rows) == sorted(
        [(BOB, "Bob" if with_roster else "bob", "5"), (ANN, "Ann" if with_roster else "ann", "5")]
        + ([(MALLORY, mallory_name, "0")] if with_roster else []))  # her row: nothing handed in as hers
    with zipfile.ZipFile(out / "canvas-feedback.zip") as z:
        assert sorted(z.namelist()) == [f"ann_{ANN}_5002_labx-feedback.md", f"bob_{BOB}_5001_labx-feedback.md"]
        assert "**Score: 5 / 5**" in z.read(f"bob_{BOB}_5001_labx-feedback.md").decode()
    err = " ".join(capsys.readouterr().err.split())
    assert f"{attacker}: its name reads as the upload of user {BOB} or {MALLORY}" in err
    assert f"canvas.csv leaves out {attacker}" in err and "Bob" not in err.split("leaves out", 1)[1][:60]
    assert f"holds the id {BOB} of another student" in (out / "summary.md").read_text()


def test_the_gradebook_settles_a_name_that_names_one_student_of_the_course(toy_root, tmp_path):
    """A student number at the start of a zip's name (``20521234_lab.zip``) reads two ways too; the
    gradebook export lists only one of the two user ids, so the file is that student's, unflagged."""
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "nguyenvanan_111_5003_20521234_lab.zip").write_bytes(_zip({"lab/toy.py": _ref(toy_root)}))
    alone = platforms.read(subs, "canvas")
    assert [e.id for e in alone.entries] == ["nguyenvanan_111_5003_20521234_lab.zip"]  # no roster: no one's
    assert alone.state["users"] == {} and alone.entries[0].problems
    intake = platforms.read(subs, "canvas", _roster(tmp_path / "roster.csv", ("Nguyễn Văn An", "111")))
    (entry,) = intake.entries
    assert (entry.id, entry.problems, intake.state["users"]) == ("nguyenvanan_111", (), {"nguyenvanan_111": "111"})
    assert intake.state["file_ids"] == {"nguyenvanan_111": 5003}


def test_a_name_holding_another_id_and_one_id_under_two_names_are_flagged(toy_root, tmp_path):
    """One reading only (Canvas took "_123457_" out of "bob_123457_", so her name is "bob123457"):
    the file is hers, by her user id, and her row says the name claims Bob's id; her second upload
    under another name is hers too, and said."""
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / f"bob_{BOB}_5001_toy.py").write_text(_ref(toy_root))
    (subs / f"bob{BOB}_{MALLORY}_5003_toy.py").write_text(_stub(toy_root))
    (subs / f"mallory_{MALLORY}_5004_notes.txt").write_text("hi")
    intake = platforms.read(subs)
    entries = {e.id: e for e in intake.entries}
    assert set(entries) == {f"bob_{BOB}", f"bob{BOB}_{MALLORY}"} and entries[f"bob_{BOB}"].problems == ()
    said = " ".join(entries[f"bob{BOB}_{MALLORY}"].problems)
    assert f"holds the id {BOB} of another student" in said and "in more than one way" in said
    assert intake.state["users"] == {f"bob_{BOB}": BOB, f"bob{BOB}_{MALLORY}": MALLORY}
    assert any("more than one name" in w for w in intake.warnings)


# -- Moodle: the participant id, from the folder's own suffix -------------------------------------------
def test_moodle_takes_the_participant_id_from_the_suffix_and_flags_a_name_that_claims_another(toy_root, tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    (subs / "Bo Tran_12_assignsubmission_file").mkdir(parents=True)
    (subs / "Bo Tran_12_assignsubmission_file" / "toy.py").write_text(_ref(toy_root))
    # a name that is not Moodle's (Moodle writes no "_" in a name): the id is still the suffix's
    (subs / "Bo Tran_12_assignsubmission_file_13_assignsubmission_file").mkdir()
    (subs / "Bo Tran_12_assignsubmission_file_13_assignsubmission_file" / "toy.py").write_text(_stub(toy_root))
    intake = platforms.read(subs)
    entries = {e.id: e for e in intake.entries}
    assert intake.state["pids"] == {"Bo Tran_12": "12", "Bo Tran_12_assignsubmission_file_13": "13"}
    assert entries["Bo Tran_12"].problems == ()
    assert "holds the id 12 of another student" in entries["Bo Tran_12_assignsubmission_file_13"].problems[0]
    assert _grade(subs, out) == 0
    assert _rows(out)["Bo Tran_12"]["score"] == "5"
    with zipfile.ZipFile(out / "moodle-feedback.zip") as z:  # Moodle's importer: the second "_" part is the id
        assert sorted(n.split("/")[0].split("_")[1] for n in z.namelist()) == ["12", "13"]


# -- what goes back escapes its cells, whatever the options ----------------------------------------------
def test_a_formula_in_a_moodle_name_never_reaches_the_worksheet(toy_root, tmp_path):
    """MEDIUM: a full name ``=1+1 ...`` went into moodle-worksheet.csv as it was when no worksheet
    was given.  Every cell is escaped as gradebook.csv's, with and without --gradebook, but the
    cells Moodle's importer reads back (identifier, grade, the time it compares, the comment)."""
    evil = "=1+1 Eve"
    subs = tmp_path / "subs"
    (subs / f"{evil}_14_assignsubmission_file").mkdir(parents=True)
    (subs / f"{evil}_14_assignsubmission_file" / "toy.py").write_text(_ref(toy_root))
    assert _grade(subs, tmp_path / "plain") == 0
    rows = _csv(tmp_path / "plain" / "moodle-worksheet.csv")
    assert rows[1][:3] == ["Participant 14", "'" + evil, "5"]
    assert _rows(tmp_path / "plain")["'" + evil + "_14"]["score"] == "5"  # escaped as gradebook.csv's own

    header = ["Identifier", "Full name", "Online text", "Grade", "Maximum Grade", "Last modified (submission)",
              "Last modified (grade)", "Feedback comments"]
    sheet = tmp_path / "sheet.csv"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([header, ["Participant 14", evil, "@SUM(A1)", "", "5.00", "-",
                                                             "-", ""],
                                                    ["Participant 15", "-Ann", "+1", "", "5.00", "-", "-", "-ok"]])
    sheet.write_text(buf.getvalue(), "utf-8")
    assert _grade(subs, tmp_path / "given", "--gradebook", str(sheet)) == 0
    got = _csv(tmp_path / "given" / "moodle-worksheet.csv")
    assert got[0] == header
    assert got[1][:7] == ["Participant 14", "'" + evil, "'@SUM(A1)", "5", "5.00", "-", "-"]  # a lone "-": no formula
    assert got[1][7].startswith("Score: 5 / 5")
    assert got[2] == ["Participant 15", "'-Ann", "'+1", "0", "5.00", "-", "-", "-ok"]  # read back: as it came


def test_every_csv_writer_escapes_with_the_one_function():
    """Every module of the engine that writes CSV escapes its text cells with ``gradebook.text_cell``:
    one function, so no file that goes back to a platform can skip it."""
    writers = []
    for path in sorted((REPO / "autograder").rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and isinstance(n.func.value, ast.Name) and n.func.value.id == "csv"}
        if calls & {"writer", "DictWriter"}:
            names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
            writers.append(path.relative_to(REPO).as_posix())
            assert "text_cell" in names, f"{path.relative_to(REPO)} writes CSV without gradebook.text_cell"
    assert "autograder/batch/platforms/moodle.py" in writers and "autograder/batch/export.py" in writers


# -- --only: the exact name of one, the start of another ----------------------------------------------
def test_only_refuses_a_name_that_also_starts_another_and_lists_them(toy_root, tmp_path, capsys):
    """LOW: with "Tran Thi" and "Tran Thi Binh", ``--only "tran thi"`` regraded the first and said
    nothing.  Now it names both, and the instructor picks with the id."""
    subs = tmp_path / "subs"
    for name, pid in (("Tran Thi", "1"), ("Tran Thi Binh", "2"), ("Le Chi", "3")):
        (subs / f"{name}_{pid}_assignsubmission_file").mkdir(parents=True)
        (subs / f"{name}_{pid}_assignsubmission_file" / "toy.py").write_text(_stub(toy_root))
    intake = platforms.read(subs)
    assert intake.find("tran thi") == ["Tran Thi_1", "Tran Thi Binh_2"]  # the exact one first
    assert intake.find("Tran Thi_1") == ["Tran Thi_1"] and intake.find("tran thi binh") == ["Tran Thi Binh_2"]
    assert intake.find("le") == ["Le Chi_3"]  # the start of one name only: that one
    said = grade.chosen(intake, "tran thi")
    assert said == ("--only 'tran thi' names 2 submissions: Tran Thi_1 (Tran Thi), Tran Thi Binh_2 (Tran Thi Binh); "
                    "give the id of the one you mean")
    assert grade.chosen(intake, "Tran Thi_1") == frozenset({"Tran Thi_1"})
    assert _grade(subs, tmp_path / "out", "--only", "tran thi") == 2
    assert not (tmp_path / "out" / "gradebook.csv").exists()  # refused before anything was graded
    assert "names 2 submissions" in capsys.readouterr().err
