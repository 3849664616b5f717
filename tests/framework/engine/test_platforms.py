"""One module per platform (``autograder.batch.platforms``), on the toy lab: how each export is read
and what goes back, case by case (the end-to-end runs on lab 2 are ``test_platforms_e2e.py``).

Graded in-process (``--no-sandbox``): the sandbox is the hostile suite's business.
"""

from __future__ import annotations

import csv
import io
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from autograder.batch import late, platforms, summary
from autograder.batch.platforms import canvas
from autograder.core import stubs
from autograder.cli import main
from autograder.core import labs, results
from autograder.grading import staging

TOY = ("toy.py",)


def _ref(root: Path) -> str:
    return stubs.unmarked((root / "solutions" / "labx_toy" / "toy.py").read_text())


def _stub(root: Path) -> str:
    return stubs.texts(labs.get("labx", root))["toy.py"]


def _zip(members: dict[str, str | bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _grade(subs: Path, out: Path, *extra: str) -> int:
    return main(["grade", "labx", str(subs), "--out", str(out), "--no-sandbox", "--jobs", "1", *extra])


def _rows(out: Path) -> dict[str, dict[str, str]]:
    return {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text("utf-8-sig")))}


def _csv(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text("utf-8-sig"), newline="")))


# -- detection -----------------------------------------------------------------------------------
def test_every_platform_is_one_module_and_the_layout_says_which(tmp_path):
    assert set(platforms.platforms()) == {"canvas", "folder", "gradescope", "moodle"}
    (tmp_path / "m" / "An_1_assignsubmission_file").mkdir(parents=True)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "an_1_2_toy.py").write_text("")
    (tmp_path / "g" / "submission_1").mkdir(parents=True)
    (tmp_path / "g" / "submission_metadata.yml").write_text("{}\n")
    (tmp_path / "f" / "alice").mkdir(parents=True)
    assert [platforms.detect(tmp_path / k).name for k in "mcgf"] == ["moodle", "canvas", "gradescope", "folder"]
    with pytest.raises(ValueError, match="unknown platform 'blackboard'"):
        platforms.read(tmp_path / "f", "blackboard")


def test_a_download_zipped_again_with_a_top_folder_is_read_inside_it(toy_root, tmp_path, capsys):
    download = tmp_path / "again.zip"
    download.write_bytes(_zip({"submissions/an_101_5_toy.py": _ref(toy_root),
                               "submissions/binh_102_6_toy.py": _stub(toy_root)}))
    assert _grade(download, tmp_path / "out") == 0
    assert "Canvas (flat files" in capsys.readouterr().err  # what it was taken for, said
    assert {k: v["score"] for k, v in _rows(tmp_path / "out").items()} == {"an_101": "5", "binh_102": "0"}


# -- Canvas ------------------------------------------------------------------------------------
def test_canvas_uploads_ranked_by_file_id_a_zip_among_them(toy_root, tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    ref = _ref(toy_root)
    (subs / "smith_1_20_toy-2.py").write_text(ref + "# uploaded first, numbered 2 by its author\n")
    (subs / "smith_1_21_toy-1.py").write_text(ref + "# uploaded second\n")
    (subs / "smith_1_22_lab.zip").write_bytes(_zip({"lab/toy.py": ref + "# uploaded last, in a zip\n"}))
    (subs / "smith_1_text.html").write_text("<p>hi</p>")
    (subs / "jones_LATE_2_30_toy.py").write_text(ref)
    intake = platforms.read(subs)
    entries = {e.id: e for e in intake.entries}
    assert set(entries) == {"smith_1", "jones_2"} and intake.people["smith_1"].ids == ("1",)
    st = staging.stage(entries["smith_1"], TOY, tmp_path / "s")
    assert (tmp_path / "s" / "toy.py").read_text().endswith("# uploaded last, in a zip\n")
    assert st.notes == ["toy.py: graded smith_1_22_lab.zip/lab/toy.py; ignored smith_1_20_toy-2.py, "
                        "smith_1_21_toy-1.py"]
    (subs / "smith_1_22_lab.zip").unlink()
    st = staging.stage(platforms.read(subs).entries[1], TOY, tmp_path / "s2")
    assert (tmp_path / "s2" / "toy.py").read_text().endswith("# uploaded second\n")  # the id, not the "-2"


def test_canvas_parse_names_as_canvas_writes_them():
    assert canvas.parse("nguyenvanan_LATE_123_456_lab 2-1.zip") == {
        "student": "nguyenvanan", "late": True, "user": "123", "file_id": 456, "file": "lab 2-1.zip"}
    assert canvas.parse("smith_john_12_34_toy.py")["student"] == "smith_john"
    assert canvas.parse("le_7_text.html")["file"] == "text.html" and canvas.parse("le_7_link.html")["user"] == "7"
    assert canvas.parse("anon_Ab3x9_55_toy.py")["user"] == "anon_Ab3x9"
    assert canvas.parse("toy.py") is None and canvas.parse("notes_12_toy.py") is None


# -- Moodle ------------------------------------------------------------------------------------
HEADER = ["Identifier", "Full name", "Status", "Grade", "Maximum Grade", "Grade can be changed",
          "Last modified (submission)", "Last modified (grade)", "Feedback comments"]


def _worksheet(path: Path, rows: list[list[str]]) -> Path:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([HEADER, *rows])
    path.write_text(buf.getvalue(), "utf-8")  # no BOM, LF: written back the same way
    return path


def _moodle(root: Path, subs: Path) -> None:
    ref = _ref(root)
    ann = subs / "Ann Lee_11_assignsubmission_file"
    ann.mkdir(parents=True)
    (ann / "toy.py").write_text(ref + "# the first upload\n")
    (ann / "toy (1).py").write_text(ref + "# uploaded again: Moodle renamed it\n")
    (subs / "Ann Lee_11_assignsubmission_onlinetext").mkdir()
    (subs / "Ann Lee_11_assignsubmission_onlinetext" / "onlinetext.html").write_text("<p>notes</p>")
    (subs / "Bo Tran_12_assignsubmission_file_toy.py").write_text(_stub(root))  # "download in folders" off


def test_moodle_folders_one_submission_per_participant(toy_root, tmp_path):
    subs = tmp_path / "subs"
    _moodle(toy_root, subs)
    intake = platforms.read(subs)
    assert intake.platform.name == "moodle" and [e.id for e in intake.entries] == ["Ann Lee_11", "Bo Tran_12"]
    st = staging.stage(intake.entries[0], TOY, tmp_path / "s")  # the online text is read with the files
    assert (tmp_path / "s" / "toy.py").read_text().endswith("# uploaded again: Moodle renamed it\n")
    assert st.notes[0] == "toy.py: graded toy (1).py; ignored toy.py"
    assert st.notes[1].startswith("toy.py: Moodle's download does not say which upload came last; toy (1).py "
                                  "was graded as the latest")


def _timed_zip(members: dict[str, tuple[bytes, tuple]]) -> bytes:
    """A zip whose every member has the time given (``zipfile.ZipInfo.date_time``)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, (data, when) in members.items():
            z.writestr(zipfile.ZipInfo(name, when), data)
    return buf.getvalue()


EARLY, LATER = (2026, 12, 20, 9, 0, 0), (2026, 12, 20, 21, 30, 0)
ANN = "Ann Lee_11_assignsubmission_file"


def _stage_download(tmp_path: Path, download: bytes) -> staging.Staged:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "LAB-42.zip").write_bytes(download)
    with platforms.unpacked(tmp_path / "LAB-42.zip") as (folder, skipped):
        intake = platforms.read(folder)
        assert intake.platform.name == "moodle" and not skipped
        return staging.stage(intake.entries[0], TOY, tmp_path / "s")


@pytest.mark.parametrize("first", ["bai2.zip", "bai2_nop_lai.zip"])  # the later upload, by name, both ways
def test_moodle_two_uploads_are_ordered_by_the_times_of_its_download(toy_root, tmp_path, first):
    ref = _ref(toy_root).encode()
    second = ({"bai2.zip", "bai2_nop_lai.zip"} - {first}).pop()
    inner = lambda tag, when: _timed_zip({"bai2/toy.py": (ref + tag, when)})  # noqa: E731  (the student's times)
    # the student's own times say the opposite of Moodle's: the platform's decide
    st = _stage_download(tmp_path, _timed_zip({f"{ANN}/{first}": (inner(b"# first\n", LATER), EARLY),
                                               f"{ANN}/{second}": (inner(b"# again\n", EARLY), LATER)}))
    assert (tmp_path / "s" / "toy.py").read_bytes().endswith(b"# again\n")
    assert st.notes[0] == f"toy.py: graded {second}/bai2/toy.py; ignored {first}/bai2/toy.py"
    assert st.notes[1] == (f"toy.py: {second}/bai2/toy.py was graded as the latest upload, by the upload times in "
                           f"the platform's download (2026-12-20 21:30:00; ignored: {first}/bai2/toy.py "
                           "2026-12-20 09:00:00).")


def test_moodle_uploads_of_one_time_are_ordered_by_the_students_times_then_said_unknown(toy_root, tmp_path):
    ref = _ref(toy_root).encode()
    inner = lambda tag, when: _timed_zip({"toy.py": (ref + tag, when)})  # noqa: E731
    st = _stage_download(tmp_path / "a", _timed_zip({f"{ANN}/bai2.zip": (inner(b"# new\n", LATER), EARLY),
                                                     f"{ANN}/bai2_nop_lai.zip": (inner(b"# old\n", EARLY), EARLY)}))
    assert (tmp_path / "a" / "s" / "toy.py").read_bytes().endswith(b"# new\n")  # the students' times, said to be
    assert "the times inside the zips" in st.notes[1] and "the student's own clock" in st.notes[1]
    st = _stage_download(tmp_path / "b", _timed_zip({f"{ANN}/bai2.zip": (inner(b"# a\n", EARLY), EARLY),
                                                     f"{ANN}/bai2_nop_lai.zip": (inner(b"# b\n", EARLY), EARLY)}))
    assert st.notes[1] == ("toy.py: the platform's download does not say which of these uploads came last "
                           "(bai2.zip, bai2_nop_lai.zip); bai2.zip/toy.py was graded by where it lies (the shallowest, "
                           "then the first by name). Check by hand which one the student meant.")


def test_moodle_folder_times_order_uploads_only_a_minute_apart_or_more(toy_root, tmp_path):
    import os

    ref = _ref(toy_root)
    for gap, expect in ((3600, "# b\n"), (2, "# a\n")):  # two seconds apart: a copy's times, no order
        subs = tmp_path / str(gap) / "subs"
        (subs / ANN).mkdir(parents=True)
        (subs / ANN / "toy.py").write_text(ref + "# a\n")
        (subs / ANN / "b").mkdir()
        (subs / ANN / "b" / "toy.py").write_text(ref + "# b\n")
        os.utime(subs / ANN / "toy.py", (1_800_000_000, 1_800_000_000))
        os.utime(subs / ANN / "b" / "toy.py", (1_800_000_000 + gap, 1_800_000_000 + gap))
        st = staging.stage(platforms.read(subs).entries[0], TOY, tmp_path / str(gap) / "s")
        assert (tmp_path / str(gap) / "s" / "toy.py").read_text().endswith(expect), st.notes
        assert ("by the files' times in the unpacked download" in st.notes[1]) == (gap == 3600)
        assert ("was graded by where it lies" in st.notes[1]) == (gap == 2)  # the old rule (shallowest), said


def test_moodle_worksheet_matched_on_the_participant_id_without_emails(toy_root, tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    _moodle(toy_root, subs)
    sheet = _worksheet(tmp_path / "sheet.csv", [
        ["Participant 11", "Ann Lee", "Submitted", "", "100.00", "Yes", "-", "-", ""],
        ["Participant 13", "Cam Vo", "No submission", "", "100.00", "Yes", "-", "-", ""],
        ["Participant 12", "Bo Trần", "Submitted", "", "100.00", "Yes", "-", "-", ""]])
    assert _grade(subs, out, "--gradebook", str(sheet)) == 0
    assert _rows(out)["Bo Tran_12"]["name"] == "Bo Trần"  # named by the worksheet
    raw = (out / "moodle-worksheet.csv").read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf") and b"\r\n" not in raw  # as it came
    rows = _csv(out / "moodle-worksheet.csv")
    assert rows[0] == HEADER and [r[0] for r in rows[1:]] == ["Participant 11", "Participant 13", "Participant 12"]
    assert [r[3] for r in rows[1:]] == ["100", "0", "0"]  # on Moodle's maximum, 100; nothing handed in: 0
    assert rows[1][8].startswith("Score: 100 / 100 (5 / 5)<br>")  # Moodle's scale, the lab's in brackets


@pytest.mark.parametrize("value, lang", [("vi", "vi"), ("Tiếng Việt", "vi"), ("tieng viet", "vi"),
                                         ("Vietnamese", "vi"), ("vi_VN", "vi"), ("en", "en"), ("English", "en"),
                                         ("", ""), ("Français", None)])
def test_a_roster_language_column_is_read_in_its_usual_spellings(value, lang):
    from autograder.batch import roster

    assert roster.language(value) == lang
    assert roster.lang_column(["Student", "ID", "Ngôn ngữ"]) == 2 and roster.lang_column(["Identifier", "LANG"]) == 1
    assert roster.lang_column(["Identifier", "Full name"]) is None


def test_the_feedback_language_is_the_notebooks_then_the_rosters_then_the_batchs(toy_root, tmp_path):
    from autograder.batch import bulk, roster

    m = labs.get("labx", toy_root).manifest
    vi = roster.Submitters(("An",), (), (), lang="vi")
    none, english_nb = staging.Staged(tmp_path), staging.Staged(tmp_path, extra={"labx_toy.ipynb": b"{}"})
    assert bulk.feedback_lang(m, none, vi) == "vi"  # no notebook: the roster's column
    assert bulk.feedback_lang(m, english_nb, vi) == "en"  # the notebook handed in wins
    assert bulk.feedback_lang(m, none, roster.NOBODY) == "en"  # neither: the batch's (here English)
    # read from Moodle's worksheet (a column the instructor added) and from Canvas's gradebook export
    subs = tmp_path / "subs"
    _moodle(toy_root, subs)
    sheet = _worksheet(tmp_path / "sheet.csv", [
        ["Participant 11", "Ann Lee", "Submitted", "", "100.00", "Yes", "-", "-", "", "Tiếng Việt"],
        ["Participant 12", "Bo Trần", "Submitted", "", "100.00", "Yes", "-", "-", "", "Klingon"]])
    text = sheet.read_text("utf-8").splitlines()
    sheet.write_text("\n".join([text[0] + ",Language", *text[1:]]) + "\n", "utf-8")
    intake = platforms.read(subs, gradebook=sheet)
    assert [intake.people[i].lang for i in ("Ann Lee_11", "Bo Tran_12")] == ["vi", ""]
    assert any("participant 12: the worksheet's language 'Klingon'" in w for w in intake.warnings)
    assert _grade(subs, tmp_path / "out", "--gradebook", str(sheet)) == 0  # neither handed in a notebook
    assert (tmp_path / "out" / "feedback" / "Ann Lee_11.md").read_text().count("Điểm") >= 1
    assert "Score" in (tmp_path / "out" / "feedback" / "Bo Tran_12.md").read_text()  # not readable: the batch's
    gradebook = tmp_path / "canvas.csv"
    gradebook.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Lang\n,,,,,\n"
                         "\"Lee, Ann\",7,s7,ann,A,en\n", "utf-8")
    assert canvas.read_roster(gradebook)[0].lang == "en"


def test_moodle_without_a_worksheet_writes_one_the_importer_reads(toy_root, tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    _moodle(toy_root, subs)
    assert _grade(subs, out, "--no-file", "pending") == 0
    rows = _csv(out / "moodle-worksheet.csv")
    assert rows[0] == ["Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)",
                       "Feedback comments"]
    assert [r[:4] for r in rows[1:]] == [["Participant 11", "Ann Lee", "5", "5"],
                                         ["Participant 12", "Bo Tran", "0", "5"]]
    with zipfile.ZipFile(out / "moodle-feedback.zip") as z:
        assert sorted(z.namelist()) == ["Ann Lee_11_assignsubmission_file/labx-feedback.md",
                                        "Bo Tran_12_assignsubmission_file/labx-feedback.md"]


def test_a_file_that_is_not_a_worksheet_is_refused_in_one_line(toy_root, tmp_path, capsys):
    subs = tmp_path / "subs"
    _moodle(toy_root, subs)
    (tmp_path / "grades.csv").write_text("Email address,Full name,Lab 2\n")
    assert _grade(subs, tmp_path / "out", "--gradebook", str(tmp_path / "grades.csv")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a Moodle grading worksheet: no column 'Identifier'" in err


# -- late penalties and pending marks, in every output -----------------------------------------------
WRITTEN = (Path(__file__).parents[1] / "fixtures" / "written_question.toml").read_text()  # the toy's written question


def test_pending_marks_and_the_late_penalty_in_every_output(toy_root, tmp_path):
    lab_dir = toy_root / "assignments" / "labx_toy"
    (lab_dir / "lab.toml").write_text((lab_dir / "lab.toml").read_text().replace("[[variants]]",
                                                                                  WRITTEN + "\n[[variants]]", 1))
    subs, out = tmp_path / "subs", tmp_path / "out"
    (subs / "An Vo_7_assignsubmission_file").mkdir(parents=True)
    (subs / "An Vo_7_assignsubmission_file" / "toy.py").write_text(_ref(toy_root))
    (tmp_path / "times.csv").write_text("submission,submitted_at\nAn Vo_7,2026-12-22T10:00Z\n")
    assert _grade(subs, out, "--due", "2026-12-20T23:59Z", "--late-penalty", "10", "--times",
                  str(tmp_path / "times.csv")) == 0
    md = (out / "feedback" / "An Vo_7.md").read_text()
    assert "**Score: 4 / 7**" in md and "Handed in 2 day(s) late: the late policy took off 20%, from 5 points." in md
    # no notebook handed in: said as such, never "pending, not lost" (issue 37)
    assert "2 points marked by hand: no notebook handed in." in md and "pending, not lost" not in md
    text = (out / "summary.md").read_text()
    assert "| An Vo\\_7 | 2 | 20% | 5 | 4 |" in text
    assert "| Why the norm is a square root (`essay`) | 2 | pending (1) | - |" in text  # never 0%
    assert "mean score: 4.00 / 7" in text
    comment = _csv(out / "moodle-worksheet.csv")[1][5]
    assert "Score: 4 / 7<br>Handed in 2 day(s) late" in comment and "2 points marked by hand: no notebook" in comment


def test_summary_counts_pending_apart_and_scores_after_the_penalty(toy_lab):
    m = toy_lab.manifest
    t = lambda q, p, mx: results.TestResult(nodeid=q, name=q, question=q, max_points=mx, points=p,  # noqa: E731
                                            status="passed" if p == mx else "failed", visibility="visible")
    rows = [results.SubmissionResult("a", "labx", tests=[t("add", 3, 3), t("norm", 2, 2)]),
            results.SubmissionResult("b", "labx", tests=[t("add", 3, 3), t("norm", 0, 2)])]
    due = datetime(2026, 1, 1, tzinfo=timezone.utc)
    verdict = late.lateness(datetime(2026, 1, 2, 1, tzinfo=timezone.utc), due, late.LatePolicy(50))
    text = summary.markdown(rows, m, late={"a": verdict})
    assert "- mean score: 1.50 / 5" in text and "- handed in late: 1" in text  # 0 and 3
    assert "| a | 2 | 100% | 5 | 0 |" in text  # two days started at 50%: nothing left
    assert summary.pass_rates(rows, m) == {"add": 1.0, "norm": 0.5}
