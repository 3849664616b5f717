"""The course loop, end to end, on the toy lab: a Moodle and a Canvas download in, their grade files out.

Each export is built as the platform writes it (Moodle's ``mod/assign/classes/
downloader.php`` folders and grading worksheet; Canvas's ``lib/content_zipper.rb``
flat names), with every case the platforms produce: a zip, an online-text
folder beside a file submission, two uploads of one file (Moodle's `` (1)``,
Canvas's ``-1`` and file ids), a RAR, a 7z, a zip with Windows backslashes, a
zip inside the zip, a damaged zip, a text entry, a student who handed in
nothing, a late one.  Each is graded sandboxed (``autograder grade labx
DOWNLOAD.zip``, the download as it is), and the files that go back are read
with the platform's own column rules: every student has a row, the right upload
was graded, the late penalty is shown and applied.  The submissions are the
lab's own reference, stub and negative variant (``autograder.authoring.candidates``).

What is tested is the engine's intake and the platforms' files, not a lab's grading: the toy lab
(numpy only) grades the same downloads in a fraction of lab 2's time (a zygote and graders that
import torch, for every batch), and lab 2's own batch is graded by ``test_examples.py``.  The toy
gets its question marked by hand (``fixtures/written_question.toml``), as lab 2 has its reflections,
so the platforms' "points possible" (every point) differs from what the code earns.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import tomllib
import zipfile
from pathlib import Path

import pytest

from autograder.authoring import candidates
from autograder.cli import main
from autograder.core import labs, manifest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WRITTEN = (FIXTURES / "written_question.toml").read_text()  # the toy's written question
LAB_TOML = (FIXTURES / "toyroot" / "assignments" / "labx_toy" / "lab.toml").read_text().replace(
    "[[variants]]", WRITTEN + "\n[[variants]]", 1)
LAB = manifest.parse(tomllib.loads(LAB_TOML), "labx_toy")
MAX = LAB.max_score
# the reference's code earns every tested point; its written answer (marked by hand) is pending and it hands in
# no predictions.json here, so its score is the tested points
AUTO = sum(q.points for q in LAB.tested)
SCORE, LATE2, LATE1 = (f"{round(AUTO * k, 6):g}" for k in (1, 0.8, 0.9))  # on time; 2 and 1 days late at 10% a day
FULL = f"{MAX:g}"  # the lab's maximum, as the platforms' "points possible"
RAR = b"Rar!\x1a\x07\x01\x00" + b"\x00" * 64  # a RAR 5 header: what WinRAR writes first
SEVEN_Z = b"7z\xbc\xaf\x27\x1c\x00\x04" + b"\x00" * 64
DUE = ["--due", "2026-12-20T23:59", "--tz", "Asia/Ho_Chi_Minh", "--late-penalty", "10"]


@pytest.fixture(scope="module", autouse=True)
def toy(tmp_path_factory):
    """A private copy of the toy project for the module (IRONLAW_ROOT points at it), with the written question."""
    root = tmp_path_factory.mktemp("platforms") / "toyroot"
    shutil.copytree(FIXTURES / "toyroot", root)
    lab_dir = root / "assignments" / "labx_toy"
    (lab_dir / "lab.toml").write_text(LAB_TOML)
    cells = [{"cell_type": "markdown", "id": "c", "metadata": {"tags": ["answer:essay"]},
              "source": ["*Your answer here.*"]}]
    (lab_dir / "labx_toy.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                        "nbformat_minor": 5}))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IRONLAW_ROOT", str(root))
        mp.setenv("IRONLAW_LANG", "en")  # as english_unless_asked, which a module's fixture runs before
        yield labs.get("labx", root)


@pytest.fixture(scope="module")
def code(toy) -> dict[str, dict[str, str]]:
    """reference (full marks), stub (0) and variant double_norm (its toy.py is wrong)."""
    by_id = {c.id: c for c in candidates.all_candidates(toy)}
    return {name: candidates.sources(toy, by_id[name]) for name in ("reference", "stub", "double_norm")}


def _zip(members: dict[str, str | bytes]) -> bytes:
    """A zip whose members all bear one fixed time: no order of uploads can come from their times
    (``staging.upload_order``), whatever second the test runs in."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(zipfile.ZipInfo(name, date_time=(2026, 12, 1, 12, 0, 0)), data,
                       compress_type=zipfile.ZIP_DEFLATED)
    return buf.getvalue()


def _download(path: Path, files: dict[str, str | bytes]) -> Path:
    """The platform's download: one zip of the export, as the instructor gets it."""
    path.write_bytes(_zip(files))
    return path


def _grade(download: Path, out: Path, *extra: str) -> int:
    return main(["grade", "labx", str(download), "--out", str(out), "--jobs", "2", *extra])


def _gradebook(out: Path) -> dict[str, dict[str, str]]:
    return {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text("utf-8-sig")))}


# -- Moodle ------------------------------------------------------------------------------------
WORKSHEET_HEADER = ["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade",
                    "Grade can be changed", "Last modified (submission)", "Online text", "Last modified (grade)",
                    "Feedback comments"]
STUDENTS = {  # participant id -> full name, as the worksheet and the folders name them
    "1001": "Nguyễn Văn An", "1002": "Trần Thị Bình", "1003": "Lê Văn Cường", "1004": "Phạm Thị Dung",
    "1005": "Hoàng Văn Em", "1006": "Đỗ Thị Giang", "1007": "Vũ Văn Hùng",
}


def _worksheet() -> bytes:
    """Moodle's "Download grading worksheet": a BOM, its headers, a row per participant, CRLF."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(WORKSHEET_HEADER)
    for pid, name in STUDENTS.items():
        w.writerow([f"Participant {pid}", name, "", "Submitted for grading" if pid != "1007" else "No submission",
                    "", f"{MAX:.2f}", "Yes", "Sunday, 20 December 2026, 11:00 PM" if pid != "1007" else "-", "", "-",
                    ""])  # Moodle's own times (an hour before DUE, in its zone) count: --times moves 1001's (issue 37)
    return ("\ufeff" + buf.getvalue()).encode()


def _moodle_export(code) -> dict[str, str | bytes]:
    ref, a = code["reference"], code["double_norm"]
    f = lambda pid, new=True: f"{STUDENTS[pid]}_{pid}_assignsubmission_file" + ("" if new else "_")  # noqa: E731
    return {
        # a zip, and Moodle's online text beside it: one submission
        f"{f('1001')}/labx.zip": _zip({f"labx/{n}": t for n, t in ref.items()}),
        f"{STUDENTS['1001']}_1001_assignsubmission_onlinetext/onlinetext.html": "<p>see my zip</p>",
        # two uploads of toy.py (Moodle < 4.1 folder name): "toy (1).py" is the later
        f"{f('1002', new=False)}/toy.py": a["toy.py"],
        f"{f('1002', new=False)}/toy (1).py": ref["toy.py"],
        f"{f('1003')}/labx.rar": RAR,
        f"{f('1004')}/labx.zip": _zip({f"labx\\{n}": t for n, t in ref.items()}),  # Windows backslashes
        f"{f('1005')}/labx.zip": _zip({"labx/code.zip": _zip(ref)}),  # a zip inside the zip
        f"{f('1006')}/labx.zip": b"PK\x03\x04 this zip was cut short",
    }


@pytest.fixture(scope="module")
def moodle(tmp_path_factory, code):
    """The Moodle download and worksheet, graded once with a due date (1001 is 2 days late)."""
    base = tmp_path_factory.mktemp("moodle")
    download = _download(base / "LABX-Toy-42.zip", _moodle_export(code))
    (base / "worksheet.csv").write_bytes(_worksheet())
    (base / "times.csv").write_text("submission,submitted_at\nNguyễn Văn An_1001,2026-12-22T10:00\n", "utf-8")
    out = base / "out"
    assert _grade(download, out, "--gradebook", str(base / "worksheet.csv"), *DUE, "--times",
                  str(base / "times.csv")) == 0
    return base, out


def test_moodle_every_upload_reaches_the_gradebook(moodle):
    _, out = moodle
    rows = _gradebook(out)
    assert set(rows) == {f"{STUDENTS[p]}_{p}" for p in STUDENTS if p != "1007"}  # one per participant who handed in
    got = {k.rsplit("_", 1)[1]: (v["raw_score"], v["score"]) for k, v in rows.items()}
    assert got == {"1001": (SCORE, LATE2), "1002": (SCORE, SCORE), "1003": ("0", "0"), "1004": (SCORE, SCORE),
                   "1005": ("0", "0"), "1006": ("0", "0")}
    an = rows["Nguyễn Văn An_1001"]
    assert (an["late_days"], an["penalty_percent"]) == ("2", "20") and an["name"] == "Nguyễn Văn An"
    binh = rows["Trần Thị Bình_1002"]["notes"]
    assert "toy.py: graded toy (1).py; ignored toy.py" in binh
    assert "Moodle's download does not say which upload came last" in binh  # the order is said to be a guess
    assert "backslashes" in rows["Phạm Thị Dung_1004"]["notes"]
    says = {"1003": "labx.rar is a RAR archive, which the grader does not open",
            "1005": "labx.zip/labx/code.zip is an archive inside a zip",
            "1006": "could not read labx.zip: the zip file is damaged"}
    summary = (out / "summary.md").read_text()
    for pid, text in says.items():
        sub = f"{STUDENTS[pid]}_{pid}"
        assert rows[sub]["problems"].startswith(text), rows[sub]["problems"]
        assert "missing" not in rows[sub]["problems"]  # an archive that cannot be opened is not a missing file
        assert text in (out / "feedback" / f"{sub}.md").read_text()
        assert text in summary


def test_moodle_worksheet_goes_back_as_downloaded_with_grades_and_comments(moodle):
    base, out = moodle
    raw = (out / "moodle-worksheet.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and b"\r\n" in raw  # as Moodle wrote it
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"), newline="")))
    sent = list(csv.reader(io.StringIO(_worksheet().decode("utf-8-sig"), newline="")))
    assert rows[0] == WORKSHEET_HEADER and len(rows) == len(sent)  # the headers exactly, every row, same order
    grade, comment = WORKSHEET_HEADER.index("Grade"), WORKSHEET_HEADER.index("Feedback comments")
    for got, was in zip(rows[1:], sent[1:]):
        assert [c for i, c in enumerate(got) if i not in (grade, comment)] == \
               [c for i, c in enumerate(was) if i not in (grade, comment)]  # nothing else touched
    by_pid = {r[0]: r for r in rows[1:]}
    assert {p: by_pid[f"Participant {p}"][grade] for p in STUDENTS} == {
        "1001": LATE2, "1002": SCORE, "1003": "0", "1004": SCORE, "1005": "0", "1006": "0", "1007": "0"}
    assert f"Handed in 2 day(s) late: the late policy took off 20%, from {SCORE} points." \
        in by_pid["Participant 1001"][comment]
    assert "RAR archive" in by_pid["Participant 1003"][comment]
    assert by_pid["Participant 1007"][comment] == ""  # nothing handed in: a 0, no feedback


def test_moodle_feedback_zip_has_the_download_folders(moodle):
    _, out = moodle
    with zipfile.ZipFile(out / "moodle-feedback.zip") as z:
        names = z.namelist()
        an = z.read("Nguyễn Văn An_1001_assignsubmission_file/labx-feedback.md").decode()
    # Moodle's importer: fullname_participantid_plugintype_pluginname[_]/file
    assert all(n.split("/")[0].split("_")[1] in STUDENTS and n.split("/")[0].split("_")[2:4] ==
               ["assignsubmission", "file"] for n in names)
    assert len(names) == 6 and "Trần Thị Bình_1002_assignsubmission_file_/labx-feedback.md" in names
    assert f"**Score: {LATE2} / {FULL}**" in an and "the late policy took off 20%" in an


def test_moodle_only_by_a_students_name(moodle, capsys):
    """--only takes the start of a name (accents and case ignored): one regraded, the rest kept."""
    base, out = moodle
    assert _grade(base / "LABX-Toy-42.zip", out, "--only", "tran thi", "--force",
                  "--gradebook", str(base / "worksheet.csv")) == 0
    err = " ".join(capsys.readouterr().err.split())  # the console wraps at its width
    assert "graded 1, unchanged 5" in err and "Moodle (folders" in err


# -- Canvas ------------------------------------------------------------------------------------
def _canvas_export(code) -> dict[str, str | bytes]:
    ref, a = code["reference"], code["double_norm"]
    return {
        "nguyenvanan_101_5001_notes.txt": "not a declared file",  # grouped with the student's code, not graded
        "nguyenvanan_101_5002_toy.py": ref["toy.py"],
        # ranked by Canvas's file id, never by the number the student put in the name
        "tranthibinh_102_5010_toy-2.py": a["toy.py"],
        "tranthibinh_102_5011_toy-1.py": ref["toy.py"],
        "levancuong_LATE_103_5020_labx.zip": _zip({f"labx/{n}": t for n, t in ref.items()}),
        "phamthidung_104_5030_labx.7z": SEVEN_Z,
        "hoangvanem_105_text.html": "<p>my answer is in the notebook</p>",
        "dothigiang_106_5040_labx.zip": _zip({"labx/code.zip": _zip(ref)}),
    }


def _canvas_gradebook() -> str:
    """Canvas's gradebook export: it also names the student who handed in nothing (107)."""
    rows = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lab X (77)"],
            ["    Points Possible", "", "", "", "", FULL]]
    for uid, name in (("101", "Nguyễn, Văn An"), ("102", "Trần, Thị Bình"), ("103", "Lê, Văn Cường"),
                      ("104", "Phạm, Thị Dung"), ("105", "Hoàng, Văn Em"), ("106", "Đỗ, Thị Giang"),
                      ("107", "Vũ, Văn Hùng")):
        rows.append([name, uid, f"SV{uid}", f"sv{uid}@uni.edu", "CS-01", ""])
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


@pytest.fixture(scope="module")
def canvas(tmp_path_factory, code):
    base = tmp_path_factory.mktemp("canvas")
    download = _download(base / "submissions.zip", _canvas_export(code))
    (base / "gradebook.csv").write_text(_canvas_gradebook(), "utf-8")
    (base / "times.csv").write_text("submission,submitted_at\nlevancuong_103,2026-12-21T08:00\n", "utf-8")
    out = base / "out"
    assert _grade(download, out, "--gradebook", str(base / "gradebook.csv"), *DUE, "--times",
                  str(base / "times.csv")) == 0
    return base, out


def test_canvas_every_upload_reaches_the_gradebook(canvas):
    _, out = canvas
    rows = _gradebook(out)
    assert set(rows) == {"nguyenvanan_101", "tranthibinh_102", "levancuong_103", "phamthidung_104",
                         "hoangvanem_105", "dothigiang_106"}
    assert {k: v["score"] for k, v in rows.items()} == {
        "nguyenvanan_101": SCORE, "tranthibinh_102": SCORE, "levancuong_103": LATE1, "phamthidung_104": "0",
        "hoangvanem_105": "0", "dothigiang_106": "0"}
    assert "graded tranthibinh_102_5011_toy-1.py" in rows["tranthibinh_102"]["notes"]
    assert "phamthidung_104_5030_labx.7z is a 7z archive" in rows["phamthidung_104"]["problems"]
    assert "archive inside a zip" in rows["dothigiang_106"]["problems"]
    assert "missing" not in rows["phamthidung_104"]["problems"] + rows["dothigiang_106"]["problems"]
    assert rows["hoangvanem_105"]["problems"].startswith("file toy.py is missing")  # a text entry: no file
    summary = (out / "summary.md").read_text()
    assert "levancuong\\_103: the platform marked this submission LATE" in summary
    assert f"| levancuong\\_103 | 1 | 10% | {SCORE} | {LATE1} |" in summary  # the late table


def test_canvas_csv_lists_every_student_with_canvas_columns(canvas):
    _, out = canvas
    text = (out / "canvas.csv").read_text("utf-8-sig")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", LAB.title]
    assert "Points Possible" in rows[1][0] and rows[1][-1] == FULL
    got = {r[1]: (r[0], r[2], r[3], r[4], r[5]) for r in rows[2:]}
    assert set(got) == {"101", "102", "103", "104", "105", "106", "107"}  # every student, 107 handed in nothing
    assert {k: v[-1] for k, v in got.items()} == {"101": SCORE, "102": SCORE, "103": LATE1, "104": "0", "105": "0",
                                                 "106": "0", "107": "0"}
    assert got["101"][:4] == ("Nguyễn, Văn An", "SV101", "sv101@uni.edu", "CS-01")


def test_canvas_feedback_files_are_named_for_re_upload(canvas):
    """Canvas's "Re-Upload Submissions" reads the user id and one of their file ids from a name."""
    _, out = canvas
    with zipfile.ZipFile(out / "canvas-feedback.zip") as z:
        names = z.namelist()
        binh = z.read("tranthibinh_102_5011_labx-feedback.md").decode()
    ids = {n: [p for p in n.split("_") if p.isdigit()][:2] for n in names}
    assert sorted(ids.values()) == [["101", "5002"], ["102", "5011"], ["103", "5020"], ["104", "5030"],
                                    ["106", "5040"]]  # 105 handed in text only: no file to attach to
    assert "Note: toy.py: graded tranthibinh\\_102\\_5011\\_toy-1.py" in binh


def test_pending_no_file_leaves_the_cell_blank(canvas, capsys):
    base, out = canvas
    assert _grade(base / "submissions.zip", out, "--gradebook", str(base / "gradebook.csv"), "--no-file",
                  "pending", "--change-settings") == 0  # the record kept --no-file zero (docs/record.md)
    rows = list(csv.reader(io.StringIO((out / "canvas.csv").read_text("utf-8-sig"), newline="")))
    got = {r[1]: r[-1] for r in rows[2:]}
    assert got["104"] == got["105"] == got["106"] == got["107"] == "" and got["101"] == SCORE
    assert "Canvas (flat files" in " ".join(capsys.readouterr().err.split())  # the console wraps at its width


# -- Gradescope --------------------------------------------------------------------------------
def test_gradescope_runner_stages_as_grade_does(tmp_path, code):
    """The stubs a student left loose beside their work are passed over, as `grade` passes them
    over, and the note that says which copy was graded reaches the output."""
    from autograder.batch import gradescope_run
    from autograder.authoring import gradescope_zip

    autograder_zip = tmp_path / "labx-autograder.zip"
    assert main(["gradescope", "labx", "--out", str(autograder_zip)]) == 0
    root = gradescope_zip.lay_out(autograder_zip, tmp_path / "autograder", code["reference"], upload="my labx")
    for name, text in code["stub"].items():  # the untouched stubs, loose at the top of the upload
        (root / "submission" / name).write_text(text)
    payload = gradescope_run.grade(root)
    assert payload["score"] == AUTO, payload["output"]
    assert "Note: toy.py: graded my labx/toy.py; ignored toy.py" in payload["output"]
