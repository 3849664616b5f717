"""Due dates and the late policy: pure arithmetic on aware datetimes, and the readers that feed it.

Conventions (``docs/late_policy.md`` says the same for instructors):

- **Every time is aware.**  A naive ``datetime`` is refused with ValueError
  wherever one is taken: a time without a zone is a guess, and a guess of
  a few hours moves a submission across the due date.
- **Text times are ISO 8601** (:func:`parse_time`): ``2026-12-20T23:59``,
  with seconds (``23:59:30``) and a fraction of up to 9 digits (cut to
  microseconds, never rounded up), a space instead of the ``T``, and an
  optional offset: ``Z``, ``+07:00`` or ``+0700``.  Without an offset the
  time is wall-clock time in the IANA zone the caller names (``tz``); one
  that does not exist there (skipped by a DST change) or exists twice
  (repeated by one) is refused.  With an offset the offset wins and the
  zone is only used to show the time.
- **A late day is any part of 24 hours of elapsed time** after the due date
  plus the grace period: 1 second (or 1 microsecond) past it is 1 day,
  exactly at it is 0, 24 h past it is 1, 24 h and 1 s is 2.  Days are
  elapsed time, not calendar dates, so a DST change does not make a day
  23 or 25 hours long.
- **The penalty** is ``min(cap_percent, late_days * penalty_percent_per_day)``
  percent of the score, rounded to 1e-6; the final score is
  ``raw * (1 - penalty / 100)``, rounded to 1e-6 and never below 0.
- **An unknown submission time** gives ``late_days=None``, no penalty, and
  a ``problem`` the instructor must be shown: nothing is guessed.
- **CSV files** (extensions, times) are UTF-8, with or without a BOM; the
  first row is a header (names matched case-insensitively, surrounding
  spaces ignored, extra columns ignored); blank rows are skipped.  Every
  error is a ValueError that names the file and the line.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Iterable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DAY = timedelta(days=1)
DIGITS = 6  # scores and percentages are rounded to 1e-6

# Extension files name their key column with one of these; the value is matched
# against the submission id, each submitter's email, or each submitter's sid.
EXTENSION_KEYS = ("submission", "email", "sid")

_ISO = re.compile(r"""
    (?P<date>\d{4}-\d{2}-\d{2}) [T\ ]
    (?P<hm>\d{2}:\d{2}) (?::(?P<s>\d{2}) (?:\.(?P<frac>\d{1,9}))? )?
    \s* (?P<off>Z|UTC|[+-]\d{2}:?\d{2})? \Z
""", re.VERBOSE | re.IGNORECASE)


# ---------------------------------------------------------------- time zones and text times

def zone(tz: str) -> ZoneInfo:
    """The IANA time zone named ``tz`` (``"UTC"``, ``"Asia/Ho_Chi_Minh"``,
    ``"America/Los_Angeles"``); ValueError naming it when there is none."""
    try:
        if not tz or tz != tz.strip():
            raise ValueError
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"unknown time zone {tz!r}: give an IANA name such as 'UTC' "
                         "or 'Asia/Ho_Chi_Minh'") from None


def _split(text: str) -> tuple[datetime, timezone | None]:
    """The wall-clock time in ``text`` and its offset (None when it has none)."""
    m = _ISO.match(text.strip()) if isinstance(text, str) else None
    if not m:
        raise ValueError(f"{text!r} is not an ISO 8601 time such as 2026-12-20T23:59 "
                         "or 2026-12-20T23:59:00+07:00")
    frac = (m["frac"] or "")[:6].ljust(6, "0")  # 9 digits (Ruby's) are cut to microseconds
    try:
        wall = datetime.fromisoformat(f"{m['date']}T{m['hm']}:{m['s'] or '00'}.{frac}")
        off = m["off"]
        if off is None:
            return wall, None
        if off.upper() in ("Z", "UTC"):
            return wall, timezone.utc
        sign, hh, mm = off[0], int(off[1:3]), int(off[-2:])
        if hh > 23 or mm > 59:
            raise ValueError
        delta = timedelta(hours=hh, minutes=mm)
        return wall, timezone(-delta if sign == "-" else delta)
    except ValueError:
        raise ValueError(f"{text!r} is not a valid date and time") from None


def localize(wall: datetime, tz: str) -> datetime:
    """Naive wall-clock ``wall`` as an aware time in zone ``tz``.

    ValueError when that wall-clock time does not exist there (the hour a DST
    change skips) or exists twice (the hour it repeats): say which with an
    explicit offset instead."""
    z = zone(tz)
    if wall.tzinfo is not None:
        raise ValueError(f"{wall.isoformat()} already has a time zone")
    first, second = wall.replace(tzinfo=z, fold=0), wall.replace(tzinfo=z, fold=1)
    back = first.astimezone(timezone.utc).astimezone(z).replace(tzinfo=None)
    if back != wall:
        raise ValueError(f"{wall.isoformat(timespec='minutes')} does not exist in {tz} "
                         "(the clocks skip it for daylight saving time): give another time, "
                         "or an explicit offset such as -08:00")
    if first.utcoffset() != second.utcoffset():
        raise ValueError(f"{wall.isoformat(timespec='minutes')} happens twice in {tz} "
                         "(the clocks repeat it when daylight saving time ends): give its "
                         f"offset, {_offset(first)} or {_offset(second)}")
    return first


def _offset(t: datetime) -> str:
    return t.isoformat()[-6:]


def parse_time(text: str, tz: str) -> datetime:
    """An ISO 8601 time (a due date, an extension, a submission time) as an aware datetime.

    ``2026-12-20T23:59`` (or with seconds, a fraction, a space for the ``T``)
    is wall-clock time in the IANA zone ``tz``; a DST gap or fold is refused
    (:func:`localize`).  ``2026-12-20T23:59+07:00`` (also ``Z``, ``+0700``)
    is that instant, shown in ``tz``.  A date alone is refused: "the 20th"
    could mean its first minute or its last.  ValueError names the value."""
    z = zone(tz)
    wall, off = _split(text)
    if off is None:
        return localize(wall, tz)
    return wall.replace(tzinfo=off).astimezone(z)


def parse_gradescope_time(value: str | datetime) -> datetime:
    """A submission time from Gradescope's ``submission_metadata.yml`` (``:created_at``).

    Accepted, because real exports and Gradescope's own documents have them:

    - ``2023-12-02 02:52:07.938335000 Z``: Ruby's YAML for a UTC time, the
      form in "Export Submissions" downloads;
    - ``2016-09-26 17:38:17.037738000 +01:00``: Ruby's YAML for a time with
      an offset;
    - ``2026-12-19 23:58:03.123456000 -0800`` and ``2026-12-19 23:58:03 -0800``
      (Ruby's ``Time#to_s``; ``... UTC`` too);
    - ``2021-09-10T18:25:53.109082-07:00``: ISO 8601, as in the autograder's
      ``submission_metadata.json``;
    - an aware ``datetime``: ``yaml.safe_load`` already turns the first,
      second and fourth forms into one.

    Nine fraction digits are cut to microseconds.  A time without an offset,
    a naive datetime or a date alone is refused (ValueError): Gradescope always
    writes the offset, so a missing one means the file is not what we think."""
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"Gradescope time {value.isoformat()} has no time zone")
        return value
    if isinstance(value, date) or not isinstance(value, str):
        raise ValueError(f"Gradescope time {value!r} is not a date and time with an offset")
    wall, off = _split(value)
    if off is None:
        raise ValueError(f"Gradescope time {value!r} has no offset (such as Z or -08:00)")
    return wall.replace(tzinfo=off)


def _aware(t: datetime, what: str) -> datetime:
    if not isinstance(t, datetime):
        raise TypeError(f"{what} must be a datetime, not {type(t).__name__}")
    if t.tzinfo is None or t.utcoffset() is None:
        raise ValueError(f"{what} {t.isoformat()} is naive: every time must carry its time zone")
    return t


# ---------------------------------------------------------------- the policy and its arithmetic

@dataclass(frozen=True)
class LatePolicy:
    """How lateness costs points.

    ``penalty_percent_per_day``: percent of the score taken per late day
    (any part of 24 hours after the due date plus the grace period).
    ``cap_percent``: the most that is ever taken, 0 to 100; 100 lets a very
    late submission reach 0.  ``grace_minutes``: minutes after the due date
    that still count as on time.  The default takes nothing."""

    penalty_percent_per_day: float = 0.0
    cap_percent: float = 100.0
    grace_minutes: float = 0.0

    def __post_init__(self):
        for name in ("penalty_percent_per_day", "cap_percent", "grace_minutes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be a number >= 0, not {v!r}")
        if self.cap_percent > 100:
            raise ValueError(f"cap_percent is at most 100, not {self.cap_percent!r}")


@dataclass(frozen=True)
class Lateness:
    """What the policy makes of one submission.

    ``late_days``: whole late days started (0 when on time, None when the
    submission time is unknown).  ``penalty_percent``: percent taken.
    ``problem``: empty, or a sentence the instructor must be shown (the
    time is unknown, so no penalty was applied)."""

    late_days: int | None
    penalty_percent: float
    problem: str = ""

    def final_score(self, raw: float) -> float:
        """``raw * (1 - penalty_percent / 100)``, rounded to 1e-6, never below 0."""
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
            raise ValueError(f"a score must be a finite number, not {raw!r}")
        return max(0.0, round(raw * (1 - self.penalty_percent / 100), DIGITS)) + 0.0


def lateness(submitted_at: datetime | None, due: datetime, policy: LatePolicy,
             *, submission: str = "") -> Lateness:
    """The late days and penalty of a submission made at ``submitted_at``.

    ``due`` is the due date that applies to it (an extension already chosen:
    :func:`effective_due`).  Both must be aware (ValueError on a naive one);
    ``submitted_at=None`` means the time is unknown: no penalty, and
    ``problem`` says so, naming ``submission`` when given."""
    _aware(due, "the due date")
    if submitted_at is None:
        who = f"{submission}: " if submission else ""
        return Lateness(None, 0.0, f"{who}the submission time is unknown, so no late penalty "
                                   "was applied; check it by hand (or pass --times)")
    _aware(submitted_at, "the submission time")
    # In UTC: between two times of one ZoneInfo, Python subtracts wall clocks (DST ignored).
    end = due.astimezone(timezone.utc) + timedelta(minutes=policy.grace_minutes)
    over = submitted_at.astimezone(timezone.utc) - end
    if over <= timedelta(0):
        return Lateness(0, 0.0)
    whole, rest = divmod(over, DAY)
    days = whole + (rest > timedelta(0))
    return Lateness(days, round(min(policy.cap_percent, days * policy.penalty_percent_per_day), DIGITS))


def effective_due(due: datetime, extensions: dict[str, datetime], submission: str,
                  emails: Iterable[str] = (), sids: Iterable[str] = ()) -> datetime:
    """The due date for one submission: an extension's date, else ``due``.

    ``extensions`` is what :func:`read_extensions` returns.  A key matches
    the submission id (exactly), any submitter's email (case-insensitively,
    spaces trimmed) or any submitter's sid (exactly, spaces trimmed).  When
    several match (a group), the latest date wins.  The extension replaces
    the due date, even when it is earlier."""
    _aware(due, "the due date")
    keys = [submission.strip()] + [e.strip().lower() for e in emails] + [s.strip() for s in sids]
    found = [extensions[k] for k in keys if k and k in extensions]
    return max(found, key=lambda t: _aware(t, "an extension").astimezone(timezone.utc)) if found else due


# ---------------------------------------------------------------- readers

def _read_csv(path: Path) -> tuple[dict[str, int], list[tuple[int, list[str]]]]:
    """Header (lower-cased name -> column) and (line number, cells) of each non-blank row."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text (byte {e.start}); save it as CSV UTF-8") from None
    except OSError as e:
        raise ValueError(f"{path}: cannot be read ({e.strerror or e})") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, list[str]]] = []
    try:
        for cells in reader:
            if any(c.strip() for c in cells):
                rows.append((reader.line_num, [c.strip() for c in cells]))
    except csv.Error as e:
        raise ValueError(f"{path}, line {reader.line_num}: not valid CSV ({e})") from None
    if not rows:
        raise ValueError(f"{path}: empty; the first line must be a header")
    head_line, head = rows[0]
    header: dict[str, int] = {}
    for i, name in enumerate(head):
        name = name.lower()
        if name and name in header:
            raise ValueError(f"{path}, line {head_line}: column {name!r} appears twice")
        header.setdefault(name, i)
    return header, rows[1:]


def _cell(path: Path, line: int, cells: list[str], col: int, name: str) -> str:
    value = cells[col] if col < len(cells) else ""
    if not value:
        raise ValueError(f"{path}, line {line}: no {name}")
    return value


def _time_at(path: Path, line: int, text: str, tz: str) -> datetime:
    try:
        return parse_time(text, tz)
    except ValueError as e:
        raise ValueError(f"{path}, line {line}: {e}") from None


def read_extensions(path: Path, tz: str) -> dict[str, datetime]:
    """Per-student due dates from a CSV: a key column and ``due``.

    The key column is named ``submission``, ``email`` or ``sid`` (exactly one
    of them).  Keys are stripped; emails are lower-cased (they are matched
    case-insensitively, see :func:`effective_due`).  ``due`` is ISO 8601,
    wall-clock time in ``tz`` unless it has an offset (:func:`parse_time`).
    A key listed twice, a blank cell or a bad time is a ValueError naming
    the file and line; so is an unknown ``tz``."""
    zone(tz)
    header, rows = _read_csv(path)
    keys = [k for k in EXTENSION_KEYS if k in header]
    if len(keys) != 1 or "due" not in header:
        raise ValueError(f"{path}, line 1: the header needs a 'due' column and exactly one key "
                         f"column named {', '.join(map(repr, EXTENSION_KEYS))}")
    kind = keys[0]
    out: dict[str, datetime] = {}
    seen: dict[str, int] = {}
    for line, cells in rows:
        key = _cell(path, line, cells, header[kind], kind)
        key = key.lower() if kind == "email" else key
        if key in seen:
            raise ValueError(f"{path}, line {line}: {key!r} already has an extension on line {seen[key]}")
        seen[key] = line
        out[key] = _time_at(path, line, _cell(path, line, cells, header["due"], "due date"), tz)
    return out


def read_times(path: Path, tz: str) -> dict[str, datetime]:
    """Submission id -> submission time, from a CSV ``submission,submitted_at``.

    For exports that carry no times (Canvas's flat files, plain folders).
    ``submitted_at`` is ISO 8601, best with an offset; without one it is
    wall-clock time in ``tz``.  A submission listed twice, a blank cell or a
    bad time is a ValueError naming the file and line."""
    zone(tz)
    header, rows = _read_csv(path)
    if "submission" not in header or "submitted_at" not in header:
        raise ValueError(f"{path}, line 1: the header needs the columns 'submission' and 'submitted_at'")
    out: dict[str, datetime] = {}
    seen: dict[str, int] = {}
    for line, cells in rows:
        sub = _cell(path, line, cells, header["submission"], "submission")
        if sub in seen:
            raise ValueError(f"{path}, line {line}: submission {sub!r} is already on line {seen[sub]}")
        seen[sub] = line
        out[sub] = _time_at(path, line, _cell(path, line, cells, header["submitted_at"], "submitted_at"), tz)
    return out
