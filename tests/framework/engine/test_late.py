"""Due dates and the late policy (``autograder.batch.late``): the arithmetic, time zones, the readers
(Gradescope's times: ``autograder.batch.platforms.gradescope``)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from autograder.batch import late, platforms
from autograder.batch.platforms import gradescope
from autograder.batch.late import LatePolicy, lateness

UTC = timezone.utc
DUE = datetime(2026, 12, 20, 23, 59, tzinfo=UTC)
TEN_A_DAY = LatePolicy(penalty_percent_per_day=10, cap_percent=100, grace_minutes=15)


def write(path: Path, text: str, bom: bool = False) -> Path:
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


# ---------------------------------------------------------------- the arithmetic

def test_on_time_costs_nothing():
    got = lateness(DUE - timedelta(hours=3), DUE, TEN_A_DAY)
    assert (got.late_days, got.penalty_percent, got.problem) == (0, 0.0, "")
    assert got.final_score(7.25) == 7.25


def test_exactly_at_the_end_of_grace_is_on_time():
    assert lateness(DUE + timedelta(minutes=15), DUE, TEN_A_DAY).late_days == 0


@pytest.mark.parametrize("past_grace", [timedelta(seconds=1), timedelta(microseconds=1)])
def test_any_time_past_grace_starts_a_day(past_grace):
    got = lateness(DUE + timedelta(minutes=15) + past_grace, DUE, TEN_A_DAY)
    assert (got.late_days, got.penalty_percent) == (1, 10.0)
    assert got.final_score(8) == 7.2


def test_a_day_is_24_hours_then_the_next_one_starts():
    end = DUE + timedelta(minutes=15)
    assert lateness(end + timedelta(hours=24), DUE, TEN_A_DAY).late_days == 1
    assert lateness(end + timedelta(hours=24, seconds=1), DUE, TEN_A_DAY).late_days == 2


def test_many_days_stop_at_the_cap():
    policy = LatePolicy(penalty_percent_per_day=10, cap_percent=50)
    got = lateness(DUE + timedelta(days=8, hours=1), DUE, policy)
    assert (got.late_days, got.penalty_percent) == (9, 50.0)
    assert got.final_score(8) == 4.0


def test_a_cap_of_100_reaches_zero_and_never_below():
    policy = LatePolicy(penalty_percent_per_day=30, cap_percent=100)
    got = lateness(DUE + timedelta(days=5), DUE, policy)
    assert (got.late_days, got.penalty_percent) == (5, 100.0)
    assert got.final_score(9.5) == 0.0
    assert str(got.final_score(9.5)) == "0.0"  # never -0.0


def test_the_final_score_is_rounded_to_a_millionth():
    got = lateness(DUE + timedelta(hours=1), DUE, LatePolicy(penalty_percent_per_day=100 / 3))
    assert got.penalty_percent == 33.333333
    assert got.final_score(10) == 6.666667


def test_the_default_policy_takes_nothing():
    got = lateness(DUE + timedelta(days=3), DUE, LatePolicy())
    assert got.late_days == 3 and got.final_score(5) == 5


@pytest.mark.parametrize("kwargs", [{"penalty_percent_per_day": -1}, {"cap_percent": 101},
                                    {"grace_minutes": float("nan")}, {"cap_percent": "50"}])
def test_a_policy_out_of_range_is_refused(kwargs):
    with pytest.raises(ValueError):
        LatePolicy(**kwargs)


def test_an_extension_moves_the_due_date():
    extensions = {"alice@uni.edu": DUE + timedelta(days=3), "s9": DUE + timedelta(days=1)}
    submitted = DUE + timedelta(days=2)
    assert lateness(submitted, DUE, TEN_A_DAY).late_days == 2
    due = late.effective_due(DUE, extensions, "s1", emails=[" Alice@Uni.EDU "])
    assert due == DUE + timedelta(days=3)
    assert lateness(submitted, due, TEN_A_DAY).late_days == 0
    assert late.effective_due(DUE, extensions, "s9") == DUE + timedelta(days=1)  # by submission id
    assert late.effective_due(DUE, extensions, "s2", sids=["s3"]) == DUE  # nobody matches


def test_a_group_gets_its_latest_extension():
    extensions = {"111": DUE + timedelta(days=1), "222": DUE + timedelta(days=4)}
    assert late.effective_due(DUE, extensions, "g1", sids=["111", "222"]) == DUE + timedelta(days=4)


def test_the_latest_extension_is_latest_in_real_time_not_on_the_wall_clock():
    tz = "America/Los_Angeles"  # 01:00-02:00 happens twice on 2026-11-01
    first = late.parse_time("2026-11-01T01:30-07:00", tz)   # the first 01:30 (PDT)
    second = late.parse_time("2026-11-01T01:10-08:00", tz)  # the second 01:10 (PST), 40 min later
    assert (first.hour, first.minute, second.hour, second.minute) == (1, 30, 1, 10)
    extensions = {"111": first, "222": second}
    assert late.effective_due(DUE, extensions, "g1", sids=["111", "222"]) is second


def test_late_days_across_spring_forward_are_elapsed_hours():
    tz = "America/Los_Angeles"
    due = late.parse_time("2026-03-07T23:59", tz)          # PST, the night before the change
    sub = late.parse_time("2026-03-09T00:30", tz)          # PDT: 23 h 31 min later
    assert due.utcoffset() == timedelta(hours=-8) and sub.utcoffset() == timedelta(hours=-7)
    assert lateness(sub, due, LatePolicy(penalty_percent_per_day=10)).late_days == 1


def test_late_days_across_fall_back_are_elapsed_hours():
    tz = "America/Los_Angeles"
    due = late.parse_time("2026-10-31T23:59", tz)          # PDT
    sub = late.parse_time("2026-11-01T23:30", tz)          # PST: 24 h 31 min later
    assert lateness(sub, due, LatePolicy(penalty_percent_per_day=10)).late_days == 2


def test_grace_is_elapsed_time_even_across_fall_back():
    tz = "America/Los_Angeles"
    due = late.parse_time("2026-11-01T01:30-07:00", tz)   # the first 01:30 (PDT), 08:30 UTC
    policy = LatePolicy(penalty_percent_per_day=10, grace_minutes=60)
    on_time = datetime(2026, 11, 1, 9, 30, tzinfo=UTC)    # 60 min later: the last on-time instant
    assert lateness(on_time, due, policy).late_days == 0
    assert lateness(on_time + timedelta(minutes=15), due, policy).late_days == 1


def test_a_final_score_is_never_negative():
    assert late.Lateness(0, 0.0).final_score(-1.5) == 0.0
    with pytest.raises(ValueError):
        late.Lateness(0, 0.0).final_score(float("nan"))


def test_naive_times_are_refused():
    naive = datetime(2026, 12, 20, 23, 59)
    with pytest.raises(ValueError, match="naive"):
        lateness(naive, DUE, TEN_A_DAY)
    with pytest.raises(ValueError, match="naive"):
        lateness(DUE, naive, TEN_A_DAY)
    with pytest.raises(ValueError, match="naive"):
        late.effective_due(naive, {}, "s1")


def test_an_unknown_time_gets_no_penalty_and_a_problem():
    got = lateness(None, DUE, TEN_A_DAY, submission="submission_7")
    assert got.late_days is None and got.penalty_percent == 0.0
    assert "submission_7" in got.problem and "unknown" in got.problem
    assert got.final_score(6.5) == 6.5


# ---------------------------------------------------------------- parsing times

@pytest.mark.parametrize("text, tz, expected", [
    ("2026-12-20T23:59", "UTC", datetime(2026, 12, 20, 23, 59, tzinfo=UTC)),
    ("2026-12-20 23:59:30", "UTC", datetime(2026, 12, 20, 23, 59, 30, tzinfo=UTC)),
    ("2026-12-20T23:59:30.123456789", "UTC", datetime(2026, 12, 20, 23, 59, 30, 123456, tzinfo=UTC)),
    ("2026-12-20T23:59+07:00", "UTC", datetime(2026, 12, 20, 16, 59, tzinfo=UTC)),
    ("2026-12-20T23:59-0800", "UTC", datetime(2026, 12, 21, 7, 59, tzinfo=UTC)),
    ("2026-12-20T23:59Z", "Asia/Ho_Chi_Minh", datetime(2026, 12, 20, 23, 59, tzinfo=UTC)),
    ("2026-12-20T23:59", "Asia/Ho_Chi_Minh", datetime(2026, 12, 20, 16, 59, tzinfo=UTC)),
    ("2026-03-08T02:30-08:00", "America/Los_Angeles", datetime(2026, 3, 8, 10, 30, tzinfo=UTC)),
])
def test_parse_time_reads_iso_local_or_with_an_offset(text, tz, expected):
    got = late.parse_time(text, tz)
    assert got == expected
    assert getattr(got.tzinfo, "key", None) == tz  # shown in the course's zone


def test_a_time_the_clocks_skip_is_refused():
    with pytest.raises(ValueError, match=r"2026-03-08T02:30 does not exist in America/Los_Angeles"):
        late.parse_time("2026-03-08T02:30", "America/Los_Angeles")


def test_a_time_the_clocks_repeat_is_refused():
    with pytest.raises(ValueError, match=r"2026-11-01T01:30 happens twice.*-07:00 or -08:00"):
        late.parse_time("2026-11-01T01:30", "America/Los_Angeles")


@pytest.mark.parametrize("name", ["Mars/Olympus_Mons", "", "utc ", "../etc/passwd", "America"])
def test_an_unknown_zone_is_refused(name):
    with pytest.raises(ValueError, match="unknown time zone"):
        late.parse_time("2026-12-20T23:59", name)


@pytest.mark.parametrize("text", ["2026-12-20", "20/12/2026 23:59", "2026-13-01T00:00",
                                  "2026-12-20T25:00", "2026-12-20T23:59+24:00", "tomorrow"])
def test_a_bad_time_is_refused_naming_it(text):
    with pytest.raises(ValueError, match=re.escape(repr(text))):
        late.parse_time(text, "UTC")


# ---------------------------------------------------------------- Gradescope's times

PST = timezone(timedelta(hours=-8))


@pytest.mark.parametrize("text, expected", [
    ("2023-12-02 02:52:07.938335000 Z", datetime(2023, 12, 2, 2, 52, 7, 938335, tzinfo=UTC)),
    ("2016-09-26 17:38:17.037738000 +01:00",
     datetime(2016, 9, 26, 17, 38, 17, 37738, tzinfo=timezone(timedelta(hours=1)))),
    ("2026-12-19 23:58:03.123456000 -0800", datetime(2026, 12, 19, 23, 58, 3, 123456, tzinfo=PST)),
    ("2026-12-19 23:58:03 -0800", datetime(2026, 12, 19, 23, 58, 3, tzinfo=PST)),
    ("2026-12-19 23:58:03 UTC", datetime(2026, 12, 19, 23, 58, 3, tzinfo=UTC)),
    ("2021-09-10T18:25:53.109082-07:00",
     datetime(2021, 9, 10, 18, 25, 53, 109082, tzinfo=timezone(timedelta(hours=-7)))),
])
def test_gradescope_time_forms(text, expected):
    got = late.parse_gradescope_time(text)
    assert got == expected and got.utcoffset() == expected.utcoffset()


def test_gradescope_time_as_yaml_already_parsed_it():
    loaded = yaml.safe_load(":created_at: 2023-12-02 02:52:07.938335000 Z")[":created_at"]
    assert isinstance(loaded, datetime)  # PyYAML turns Ruby's form into a datetime
    assert late.parse_gradescope_time(loaded) == datetime(2023, 12, 2, 2, 52, 7, 938335, tzinfo=UTC)


@pytest.mark.parametrize("value", ["2026-12-19 23:58:03.123456000", datetime(2026, 12, 19, 23, 58),
                                   datetime(2026, 12, 19).date(), 1766217483, "yesterday"])
def test_gradescope_time_without_a_zone_is_refused(value):
    with pytest.raises(ValueError):
        late.parse_gradescope_time(value)


def test_read_gradescope_times_from_an_export(tmp_path):
    write(tmp_path / "submission_metadata.yml", """---
submission_216975964:
  :submitters:
  - :name: Alice Sun
    :sid: '06758767'
    :email: alice@example.edu
  :created_at: 2023-12-02 02:52:07.938335000 Z
  :score: 0.0
  :history:
  - :created_at: 2023-11-30 01:00:00.000000000 Z
submission_216996427:
  :submitters: []
  :created_at: 2023-12-01 20:04:59.089605000 -0800
submission_3:
  :submitters: []
submission_4:
  :created_at: sometime
""")
    times, problems = gradescope.read_times(tmp_path)
    assert times == {"submission_216975964": datetime(2023, 12, 2, 2, 52, 7, 938335, tzinfo=UTC),
                     "submission_216996427": datetime(2023, 12, 1, 20, 4, 59, 89605, tzinfo=PST)}
    assert len(problems) == 2
    assert problems[0].startswith("submission_3:") and problems[1].startswith("submission_4:")
    assert gradescope.read_times(tmp_path / "nothing") == ({}, [])
    intake = platforms.read(tmp_path)  # what `grade` reads: the platform found by its own file
    assert intake.platform.name == "gradescope" and intake.times == times and intake.problems == problems
    assert intake.people["submission_216975964"].sids == ("06758767",)


# ---------------------------------------------------------------- the CSV readers

def test_read_extensions_with_a_bom_keyed_by_email(tmp_path):
    path = write(tmp_path / "ext.csv", " Email ,due,note\r\n"
                                       "Alice@Uni.edu,2026-12-23T23:59,doctor's note\r\n"
                                       "\r\n"
                                       "bob@uni.edu,2026-12-22T12:00+00:00,\r\n", bom=True)
    got = late.read_extensions(path, "Asia/Ho_Chi_Minh")
    assert got == {"alice@uni.edu": datetime(2026, 12, 23, 16, 59, tzinfo=UTC),
                   "bob@uni.edu": datetime(2026, 12, 22, 12, 0, tzinfo=UTC)}


@pytest.mark.parametrize("key", ["submission", "sid"])
def test_read_extensions_keyed_by_submission_or_sid(tmp_path, key):
    path = write(tmp_path / "ext.csv", f"{key},due\nAbC-7,2026-12-21T09:00\n")
    assert late.read_extensions(path, "UTC") == {"AbC-7": datetime(2026, 12, 21, 9, tzinfo=UTC)}


@pytest.mark.parametrize("body, line, words", [
    ("email,due\na@x,2026-12-21T09:00\nb@x,2026-12-21 nine\n", 3, "not an ISO 8601"),
    ("email,due\na@x,2026-12-21T09:00\nA@X,2026-12-22T09:00\n", 3, "already has an extension on line 2"),
    ("email,due\na@x,\n", 2, "no due date"),
    ("email,due\n,2026-12-21T09:00\n", 2, "no email"),
    ("email,due\na@x,2026-03-08T02:30\n", 2, "does not exist"),
    ("email,sid,due\na@x,1,2026-12-21T09:00\n", 1, "exactly one key column"),
    ("name,due\nAnn,2026-12-21T09:00\n", 1, "exactly one key column"),
    ('email,due\n"a@x,2026-12-21T09:00\n', 2, "not valid CSV"),
])
def test_read_extensions_errors_name_the_file_and_line(tmp_path, body, line, words):
    _errors_name_the_file_and_line(tmp_path, late.read_extensions, body, line, words)


@pytest.mark.parametrize("body, line, words", [
    ("submission,submitted_at\ns1,2026-12-20T23:58\ns2,late\n", 3, "'late'"),
    ("submission,submitted_at\ns1,2026-12-20T23:58\ns1,2026-12-20T23:59\n", 3, "already on line 2"),
    ("submission,time\ns1,2026-12-20T23:58\n", 1, "'submitted_at'"),
])
def test_read_times_errors_name_the_file_and_line(tmp_path, body, line, words):
    _errors_name_the_file_and_line(tmp_path, late.read_times, body, line, words)


def _errors_name_the_file_and_line(tmp_path, reader, body, line, words):
    path = write(tmp_path / "in.csv", body)
    with pytest.raises(ValueError) as err:
        reader(path, "America/Los_Angeles")
    assert f"{path}, line {line}: " in str(err.value) and words in str(err.value)


def test_read_extensions_refuses_a_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "ext.csv"
    path.write_bytes("email,due\ncafé@x,2026-12-21T09:00\n".encode("latin-1"))
    with pytest.raises(ValueError, match=f"{path}: not UTF-8"):
        late.read_extensions(path, "UTC")


def test_read_times_with_a_bom(tmp_path):
    path = write(tmp_path / "times.csv", "Submission,Submitted_At\n"
                                         "s1,2026-12-20T23:58:59+07:00\n"
                                         "s2,2026-12-21 00:10\n", bom=True)
    assert late.read_times(path, "Asia/Ho_Chi_Minh") == {
        "s1": datetime(2026, 12, 20, 16, 58, 59, tzinfo=UTC),
        "s2": datetime(2026, 12, 20, 17, 10, tzinfo=UTC)}


def test_the_readers_refuse_an_unknown_zone_before_reading(tmp_path):
    path = write(tmp_path / "times.csv", "submission,submitted_at\ns1,2026-12-20T23:58Z\n")
    with pytest.raises(ValueError, match="unknown time zone"):
        late.read_times(path, "Nowhere/Land")
