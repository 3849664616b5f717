"""The output folder as the assignment's record (``autograder.batch.record``, ``docs/record.md``):
settings kept, Moodle's own submission times, marks merged, history kept; and the semester
replayed on the toy lab (a Moodle class), which must end where one run with the final settings does.

Graded in-process (``--no-sandbox``): the sandbox is the hostile suite's business.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime
from pathlib import Path

import pytest

from autograder.core import stubs
from autograder.batch import manual, record
from autograder.batch.platforms import moodle_time
from autograder.cli import main

WRITTEN = (Path(__file__).parents[1] / "fixtures" / "written_question.toml").read_text()  # the toy's written question
SHEET_HEADER = ["Identifier", "Full name", "Status", "Grade", "Maximum Grade", "Grade can be changed",
                "Last modified (submission)", "Last modified (grade)", "Feedback comments"]
DUE = ["--due", "2026-12-20T23:59", "--tz", "Asia/Ho_Chi_Minh", "--late-penalty", "10"]
ANN, BO, CAM, DAN = "Ann Lee_11", "Bo Tran_12", "Cam Vo_13", "Dan Pham_14"


# -- Moodle's dates ------------------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ("Thursday, 2 October 2025, 10:43 AM", datetime(2025, 10, 2, 10, 43)),
    ("Friday, 12 December 2025, 12:05 PM", datetime(2025, 12, 12, 12, 5)),
    ("Monday, 21 December 2026, 12:00 AM", datetime(2026, 12, 21, 0, 0)),
    ("Thứ Năm, 2 tháng 10 2025, 10:43 CH", datetime(2025, 10, 2, 22, 43)),  # a Vietnamese language pack
    ("jeudi 2 octobre 2025, 22:43", datetime(2025, 10, 2, 22, 43)),  # a 24-hour clock
    ("-", None), ("", None),  # Moodle's "never"
])
def test_moodle_dates_as_the_worksheet_writes_them(text, expected):
    assert moodle_time.parse(text) == expected


@pytest.mark.parametrize("text", ["yesterday", "Thursday, 2 Octobar 2025, 10:43 AM", "2 October 2025, 13:43 PM"])
def test_a_moodle_date_that_cannot_be_read_is_refused_naming_it(text):
    with pytest.raises(ValueError, match=text.split(",")[0]):
        moodle_time.parse(text)


# -- the record's functions ------------------------------------------------------------------------
def test_settings_are_kept_and_a_different_flag_is_refused_naming_both(tmp_path):
    out = tmp_path / "out"
    first = record.resolve(out, {"due": "2026-12-20T23:59", "late_penalty": 10.0}, change=False)
    assert first.first and first["tz"] == "UTC" and first["late_penalty"] == 10.0
    record.save(out, first)
    again = record.resolve(out, {}, change=False)  # nothing given: the record's
    assert (again["due"], again["late_penalty"], again.changed) == ("2026-12-20T23:59", 10.0, {})
    assert record.resolve(out, {"late_penalty": 10}, change=False).changed == {}  # the same value: fine
    refused = record.resolve(out, {"late_penalty": 5.0}, change=False)
    assert isinstance(refused, str) and "--late-penalty 5 differs from the record" in refused and "(10)" in refused
    taken = record.resolve(out, {"late_penalty": 5.0}, change=True)
    assert taken["late_penalty"] == 5.0 and taken.changed == {"late_penalty": (10.0, 5.0)}


def test_a_file_setting_is_kept_as_a_copy_compared_by_content(tmp_path):
    out, ext = tmp_path / "out", tmp_path / "ext.csv"
    ext.write_text("submission,due\na,2026-12-23T23:59\n")
    s = record.resolve(out, {"extensions": str(ext)}, change=False)
    record.save(out, s)
    later = record.resolve(out, {}, change=False)
    assert Path(later["extensions"]).read_text() == ext.read_text() and "record" in later["extensions"]
    ext.write_text("submission,due\na,2026-12-30T23:59\n")
    assert "--extensions ext.csv (sha256" in record.resolve(out, {"extensions": str(ext)}, change=False)


def test_a_new_time_is_added_and_a_moved_one_waits_for_change_settings(tmp_path):
    from datetime import timezone

    out = tmp_path / "out"
    t = lambda h: datetime(2026, 12, 21, h, tzinfo=timezone.utc)  # noqa: E731
    record.save_times(out, {"a": t(1)}, {"c": t(3)})  # "c" from a times file
    times, moved = record.merge_times(out, {"a": t(1), "b": t(2)}, change=False)  # only added: fine
    assert times == {"a": t(1), "b": t(2), "c": t(3)} and moved == {}
    times, moved = record.merge_times(out, {"a": t(5)}, change=False)  # moved: the record's stays, said
    assert times["a"] == t(1) and moved == {"a": (t(1).isoformat(), t(5).isoformat())}
    assert record.merge_times(out, {"a": t(5)}, change=True)[0]["a"] == t(5)
    assert record.merge_times(out, {}, change=False)[0] == {"a": t(1), "c": t(3)}  # no source this run: the record's
    # the platform's time never moves one the instructor's times file gave; a new times file does (a change)
    assert record.merge_times(out, {"c": t(9)}, change=False) == ({"a": t(1), "c": t(3)}, {})
    assert record.merge_times(out, {}, {"c": t(9)}, change=False)[1] == {"c": (t(3).isoformat(), t(9).isoformat())}


def test_marks_merge_row_by_row_and_a_conflict_waits_for_prefer(tmp_path):
    out = tmp_path / "out"
    e = lambda p, who, c="": record.Entry(p, c, who, "t")  # noqa: E731
    record.merge_marks(out, {("a", "essay"): e(2, "ta1"), ("b", "essay"): e(1, "ta1")})
    m = record.merge_marks(out, {("c", "essay"): e(1.5, "ta2")})  # the second TA's file holds only their rows
    assert m.added == [("c", "essay")] and set(record.read_marks(out)) == {("a", "essay"), ("b", "essay"),
                                                                          ("c", "essay")}
    m = record.merge_marks(out, {("a", "essay"): e(1, "ta2")})  # another marker, another mark: a conflict
    assert [(s, q, o.points, n.points) for s, q, o, n in m.conflicts] == [("a", "essay", 2, 1)]
    assert record.read_marks(out)[("a", "essay")].points == 2  # nothing taken without --prefer
    assert record.merge_marks(out, {("a", "essay"): e(1, "ta2")}, prefer="old").conflicts
    assert record.read_marks(out)[("a", "essay")].points == 2
    record.merge_marks(out, {("a", "essay"): e(1, "ta2")}, prefer="new")
    assert record.read_marks(out)[("a", "essay")] == e(1, "ta2")
    m = record.merge_marks(out, {("a", "essay"): e(0.5, "ta2")})  # a marker changing their own mark: an update
    assert not m.conflicts and m.changed and record.read_marks(out)[("a", "essay")].points == 0.5
    m = record.merge_marks(out, {}, remove=frozenset({("b", "essay")}))  # removing is explicit
    assert m.removed[0][:2] == ("b", "essay") and ("b", "essay") not in record.read_marks(out)


def test_a_removal_by_one_marker_never_takes_anothers_mark(tmp_path):
    """The marking page removes a mark as its marker: decided under the record's lock, so a mark
    another marker saved after the page was loaded is a conflict, never silently removed."""
    out = tmp_path / "out"
    e = lambda p, who: record.Entry(p, "", who, "t")  # noqa: E731
    record.merge_marks(out, {("a", "essay"): e(2, "Lan"), ("b", "essay"): e(1, "Minh"), ("c", "essay"): e(1, "")})
    for key in (("a", "essay"), ("c", "essay")):  # Lan's, and one no marker named
        m = record.merge_marks(out, {}, remove=frozenset({key}), remover="Minh")
        assert [(s, q, n) for s, q, _o, n in m.conflicts] == [(*key, None)] and not m.removed
        assert key in record.read_marks(out)
        assert "removed" in record.conflicts_text(m)
    m = record.merge_marks(out, {}, remove=frozenset({("b", "essay")}), remover="Minh")  # his own
    assert not m.conflicts and ("b", "essay") not in record.read_marks(out)
    m = record.merge_marks(out, {}, remove=frozenset({("a", "essay")}), remover="Minh", prefer="new")  # on purpose
    assert m.removed[0][:2] == ("a", "essay") and ("a", "essay") not in record.read_marks(out)


def test_a_marks_file_says_remove_and_names_its_marker(tmp_path):
    from autograder.core.manifest import parse
    import tomllib

    base = (Path(__file__).parents[1] / "fixtures" / "toyroot" / "assignments" / "labx_toy" / "lab.toml").read_text()
    m = parse(tomllib.loads(base.replace("[[variants]]", WRITTEN + "\n[[variants]]", 1)), "labx_toy")
    f = tmp_path / "marks.csv"
    f.write_text("submission,question,points,comment,marker\na,essay,1.5,ok,ta1\nb,essay,remove,,\n")
    removals: set = set()
    assert manual.read_marks(f, m, removals) == {("a", "essay"): manual.Mark(1.5, "ok", "ta1")}
    assert removals == {("b", "essay")}
    with pytest.raises(ValueError, match="'remove' is not a number"):  # only where removing is asked for
        manual.read_marks(f, m)


def test_changes_say_old_new_and_why():
    g = lambda score, raw, pen, days, marks: record.Grade(score, raw, pen, days, marks)  # noqa: E731
    old = {"a": g(4.5, 5, 10, 1, {}), "b": g(5, 5, 0, 0, {})}
    new = {"a": g(4.5, 5, 10, 1, {}), "b": g(6.5, 6.5, 0, 0, {"essay": 1.5}), "c": g(3, 3, 0, 0, {})}
    got = record.changes(old, new, {"b": ["mark essay given"]})
    assert got == [{"submission": "b", "score": [5, 6.5], "raw": [5, 6.5], "marks": {"essay": [None, 1.5]},
                    "why": ["mark essay given"]},
                   {"submission": "c", "score": [None, 3], "why": ["first graded"]}]


# -- the semester, replayed --------------------------------------------------------------------------
def _notebook(answer: str) -> str:
    cells = [{"cell_type": "markdown", "id": "c", "metadata": {"tags": ["answer:essay"]}, "source": [answer]}]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def _sheet(path: Path, times: dict[str, str]) -> Path:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(SHEET_HEADER)
    for pid, name in (("11", "Ann Lee"), ("12", "Bo Tran"), ("13", "Cam Vo"), ("14", "Dan Pham")):
        w.writerow([f"Participant {pid}", name, "", "", "7.00", "Yes", times.get(pid, "-"), "-", ""])
    path.write_text("\ufeff" + buf.getvalue(), encoding="utf-8")
    return path


def _grade(subs: Path, out: Path, *extra: str) -> int:
    return main(["grade", "labx", str(subs), "--out", str(out), "--no-sandbox", "--jobs", "1", *extra])


def _rows(out: Path) -> dict[str, dict[str, str]]:
    return {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text("utf-8-sig")))}


def _scores(out: Path) -> dict[str, tuple[str, str]]:
    return {k: (v["raw_score"], v["score"]) for k, v in _rows(out).items()}


def _marks(path: Path, body: str) -> str:
    path.write_text("submission,question,points,comment\n" + body, encoding="utf-8")
    return str(path)


@pytest.fixture
def semester(toy_root, tmp_path):
    """A Moodle class on the toy lab with a written question: Ann (full marks, an answer), Bo (full
    marks, the answer cell as handed out, a day late), Cam (a wrong norm, no notebook)."""
    lab_dir = toy_root / "assignments" / "labx_toy"
    (lab_dir / "lab.toml").write_text((lab_dir / "lab.toml").read_text().replace("[[variants]]",
                                                                                  WRITTEN + "\n[[variants]]", 1))
    (lab_dir / "labx_toy.ipynb").write_text(_notebook("*Your answer here.*"))
    ref = stubs.unmarked((toy_root / "solutions" / "labx_toy" / "toy.py").read_text())
    wrong = ref + "\n\n" + (toy_root / "solutions" / "labx_toy" / "variants" / "double_norm.py").read_text()
    subs = tmp_path / "subs"
    for name, code, answer in ((ANN, ref, "Because a norm is a length."), (BO, ref, "*Your answer here.*"),
                               (CAM, wrong, None)):
        folder = subs / f"{name}_assignsubmission_file"
        folder.mkdir(parents=True)
        (folder / "toy.py").write_text(code)
        if answer is not None:
            (folder / "labx_toy.ipynb").write_text(_notebook(answer))
    return subs, ref


def test_the_semester_replayed_ends_as_one_run_with_the_final_settings(semester, tmp_path, capsys):
    subs, ref = semester
    out = tmp_path / "out"
    on_time, a_day_late = "Sunday, 20 December 2026, 10:00 PM", "Monday, 21 December 2026, 9:15 AM"
    sheet1 = _sheet(tmp_path / "sheet1.csv", {"11": on_time, "12": a_day_late, "13": "Sunday, 20 December 2026, 11:00 AM"})

    # 1. the first batch: the settings go into the record; Moodle's worksheet gives the times
    assert _grade(subs, out, "--gradebook", str(sheet1), *DUE) == 0
    assert _scores(out) == {ANN: ("5", "5"), BO: ("5", "4.5"), CAM: ("3", "3")}  # Bo: a day late, from Moodle
    assert _rows(out)[BO]["submitted_at"] == "2026-12-21T09:15:00+07:00"
    settings = json.loads((out / "record" / "settings.json").read_text())
    assert (settings["due"], settings["tz"], settings["late_penalty"], settings["platform"]) == (
        "2026-12-20T23:59", "Asia/Ho_Chi_Minh", 10.0, "moodle")
    cam = (out / "feedback" / f"{CAM}.md").read_text()
    assert "2 points marked by hand: no notebook handed in." in cam and "pending, not lost" not in cam
    assert "no answer handed in" in (out / "feedback" / f"{BO}.md").read_text()
    assert "_Graded on 20" in cam  # when its tests ran
    assert "graded_at" in json.loads((out / "results" / f"{CAM}.json").read_text())["extra_data"]

    # 2. a late hand-in: Dan uploads after the first batch; the old worksheet has no time for him
    dan = subs / f"{DAN}_assignsubmission_file"
    dan.mkdir()
    (dan / "toy.py").write_text(ref)
    (dan / "labx_toy.ipynb").write_text(_notebook("The root undoes the squares."))
    capsys.readouterr()
    assert _grade(subs, out) == 1  # no flag: the record's settings; a time unknown: nothing goes to Moodle
    err = capsys.readouterr().err
    assert f"1 submission time(s) unknown, so no late penalty was applied: {DAN}" in err
    assert "submission time unknown: 1" in (out / "summary.md").read_text()
    assert "Moodle's files were not written" in (out / "summary.md").read_text()
    sheet2 = _sheet(tmp_path / "sheet2.csv", {"11": on_time, "12": a_day_late, "13": "Sunday, 20 December 2026, "
                                              "11:00 AM", "14": "Tuesday, 22 December 2026, 8:00 AM"})
    assert _grade(subs, out, "--gradebook", str(sheet2)) == 0  # a newer download of the worksheet: taken
    assert _scores(out) == {ANN: ("5", "5"), BO: ("5", "4.5"), CAM: ("3", "3"), DAN: ("5", "4")}  # 2 days late

    # 3. two TAs' marks: the second TA's file holds only their own row, and drops nobody's
    assert _grade(subs, out, "--manual", _marks(tmp_path / "ta1.csv", f"{ANN},essay,2,clear and right\n"),
                  "--marker", "ta1") == 0
    assert _grade(subs, out, "--manual", _marks(tmp_path / "ta2.csv", f"{DAN},essay,1,say why\n"),
                  "--marker", "ta2") == 0
    assert _scores(out)[ANN] == ("7", "7") and _scores(out)[DAN] == ("6", "4.8")
    sheet = list(csv.reader(io.StringIO((out / "moodle-worksheet.csv").read_text("utf-8-sig"))))
    assert "clear and right" in sheet[1][8]  # the TA's comment, in Moodle's Feedback comments
    capsys.readouterr()
    clash = _marks(tmp_path / "ta2b.csv", f"{ANN},essay,1,too short\n")
    assert _grade(subs, out, "--manual", clash, "--marker", "ta2") == 2  # a conflict: nothing taken
    err = capsys.readouterr().err
    assert f"{ANN}, essay: recorded 2 by ta1, new 1 by ta2" in err and "--prefer new" in err
    assert _grade(subs, out, "--manual", clash, "--marker", "ta2", "--prefer", "old") == 0
    assert _scores(out)[ANN] == ("7", "7")
    # "no notebook" and "no answer" closed in one step: 0, the reason in the feedback
    assert _grade(subs, out, "--close-marking") == 0
    assert _rows(out)[CAM]["essay"] == "0" and _rows(out)[BO]["essay"] == "0"
    cam = (out / "feedback" / f"{CAM}.md").read_text()
    assert "no notebook handed in" in cam and "not marked yet" not in cam

    # 4. a regrade with no flags keeps every late penalty; a flag that differs is refused
    before = {p.name: p.read_bytes() for p in (out / "feedback").iterdir()}
    assert _grade(subs, out, "--only", "Bo", "--force") == 0
    assert _scores(out) == {ANN: ("7", "7"), BO: ("5", "4.5"), CAM: ("3", "3"), DAN: ("6", "4.8")}
    after = {p.name: p.read_bytes() for p in (out / "feedback").iterdir()}
    assert {n for n in before if before[n] != after[n]} <= {f"{BO}.md"}  # nobody else's file is rewritten
    capsys.readouterr()
    assert _grade(subs, out, "--only", "Bo", "--late-penalty", "5") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--late-penalty 5 differs from the record" in err and "(10)" in err
    # the instructor changes the policy on purpose: every grade that moves is listed before Moodle's files
    assert _grade(subs, out, "--late-penalty", "5", "--change-settings") == 0
    err = capsys.readouterr().err
    assert "setting changed: --late-penalty 10 -> 5" in err and f"{BO}: 4.5 -> 4.75" in err
    assert err.index(f"{DAN}: 4.8 -> 5.4") < err.index("for the platform:")
    assert _scores(out)[DAN] == ("6", "5.4")

    # 5. one student switches language: Dan hands in the Vietnamese notebook; his feedback follows it,
    # nobody else's file changes, and --lang (the record's default language) is not the way
    capsys.readouterr()
    assert _grade(subs, out, "--only", "Dan", "--lang", "vi") == 2
    assert "--lang vi differs from the record of" in capsys.readouterr().err
    (dan / "labx_toy.ipynb").rename(dan / "labx_toy.vi.ipynb")
    files = lambda: {p: (p.read_bytes(), p.stat().st_mtime_ns)  # noqa: E731
                     for p in [*(out / "feedback").iterdir(), *(out / "results").iterdir()]}
    before = files()
    assert _grade(subs, out, "--only", "Dan") == 0
    after = files()
    assert {p.name for p in before if before[p] != after[p]} == {f"{DAN}.md", f"{DAN}.json"}  # not even rewritten
    dan_md = after[out / "feedback" / f"{DAN}.md"][0].decode()
    assert "Điểm: 5,4 / 7" in dan_md or "Điểm: 5.4 / 7" in dan_md
    assert "chấm tay" in dan_md and "Score:" not in dan_md
    assert _scores(out)[DAN] == ("6", "5.4")
    sheet = {r[0]: r for r in csv.reader(io.StringIO((out / "moodle-worksheet.csv").read_text("utf-8-sig")))}
    assert sheet["Participant 14"][8].startswith("Điểm") and sheet["Participant 11"][8].startswith("Score")

    # 6. a dispute: one student's story, run by run
    capsys.readouterr()
    assert main(["history", "labx", str(out), "--only", "Dan"]) == 0
    story = capsys.readouterr().out
    assert "score None -> 5" not in story and "score - -> 5" in story and "first graded" in story
    assert "submission time unknown: no late penalty applied" in story
    assert "score 5 -> 4; time unknown -> 2 day(s) late -20%" in story
    assert "submission time now known: 2026-12-22T08:00:00+07:00" in story
    assert "mark essay - -> 1  (why: mark essay given by ta2 (marks file ta2.csv))" in story
    assert "score 4.8 -> 5.4" in story and "setting --late-penalty: 10 -> 5" in story
    assert story.strip().splitlines()[-1].startswith(f"now: {DAN} (Dan Pham): 5.4 / 7, 2 day(s) late, -10%")
    assert main(["history", "labx", str(out)]) == 0  # every run, every student
    assert capsys.readouterr().out.count("first graded") == 4
    assert main(["history", "labx", str(out), "--only", "Zed"]) == 2
    lines = [json.loads(x) for x in (out / "record" / "history.jsonl").read_text().splitlines()]
    assert all({"at", "command", "settings", "engine", "changes"} <= set(x) for x in lines) and len(lines) == 10  # the refused runs left none

    # the same as one run with the final settings and the record's marks
    final_marks = tmp_path / "final.csv"
    final_marks.write_bytes((out / "manual" / "marks.csv").read_bytes())
    fresh = tmp_path / "fresh"
    assert _grade(subs, fresh, "--gradebook", str(sheet2), "--due", "2026-12-20T23:59", "--tz", "Asia/Ho_Chi_Minh",
                  "--late-penalty", "5", "--manual", str(final_marks)) == 0
    assert _rows(fresh) == _rows(out)


# -- what staff read, and nothing dropped from a folder ------------------------------------------------
def test_canvas_late_marker_is_a_verdict_never_a_day_count():
    from datetime import timezone

    from autograder.batch import gradebook, late

    due = datetime(2026, 12, 20, tzinfo=timezone.utc)
    d = gradebook.Deadline(due, late.LatePolicy(10), late_flags={"ontime": False, "late": True})
    assert d.of("ontime")[1] == late.Lateness(0, 0.0)  # Canvas did not mark it late
    assert d.of("late")[1].late_days is None and "unknown" in d.of("late")[1].problem  # how late: not said


def test_summary_counts_the_tested_points_names_who_handed_in_nothing_and_cuts_at_words(toy_lab):
    from autograder.batch import summary
    from autograder.core import results

    t = lambda q, p, mx: results.TestResult(nodeid=q, name=q, question=q, max_points=mx, points=p,  # noqa: E731
                                            status="passed" if p == mx else "failed", visibility="visible")
    long = "word " * 60
    rows = [results.SubmissionResult("a", "labx", tests=[t("add", 3, 3), t("norm", 2, 2)]),
            results.SubmissionResult("b", "labx", tests=[t("add", 3, 3), t("norm", 0, 2)], errors=[long])]
    text = summary.markdown(rows, toy_lab.manifest, nothing=["Vũ Văn Hùng"])
    assert "- full marks (every tested point, 5): 1" in text
    assert "- handed in nothing (in the platform's gradebook): 1" in text and "- Vũ Văn Hùng" in text
    cell = next(line for line in text.splitlines() if line.startswith("| b |")).split(" | ")[2]
    assert cell.endswith("word… |") and "wor…" not in cell
    assert summary.clip("short", 10) == "short"


def test_a_late_hand_in_beside_a_download_is_graded_never_dropped(semester, tmp_path, capsys):
    subs, ref = semester
    (subs / "dan_late").mkdir()  # dropped in by hand: not Moodle's layout
    (subs / "dan_late" / "toy.py").write_text(ref)
    out = tmp_path / "out"
    assert _grade(subs, out) == 0
    assert _rows(out)["dan_late"]["score"] == "5" and len(_rows(out)) == 4
    assert "graded as plain folders, not as Moodle's" in (out / "summary.md").read_text()
    (subs / "notes.txt").write_text("a loose file")  # no one's: refused, never left out quietly
    capsys.readouterr()
    assert _grade(subs, tmp_path / "out2") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "neither Moodle's nor a student's folder or zip: notes.txt" in err
