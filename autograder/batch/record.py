"""The assignment's record: what an output folder keeps between runs (``docs/record.md``).

A course grades one assignment over weeks (a first batch, late hand-ins, marks
from several TAs, disputes, regrades), so the output folder is the
assignment's record, not one run's output.  Everything here lives in
``OUT/record/``:

- ``settings.json``: the settings the first ``grade`` was given (due date,
  time zone, late policy, platform, worksheet, times, extensions, ...).
  Every later run uses them; a flag that says otherwise is refused unless
  the instructor says ``--change-settings`` (:func:`resolve`).  A file
  setting (``--extensions``, ``--gradebook``) is kept as a copy under
  ``files/`` with its SHA-256, so a later run needs no path.
- ``times.json``: every submission time known so far (submission id -> ISO
  8601 with its offset), from the platform's download, its worksheet and
  ``--times``.  A later source may add times; one that moves a time already
  recorded is a change of settings (:func:`merge_times`).
- ``marks.json``: the marks given by hand, each with its marker and when
  (:func:`merge_marks`, the one writer: the marks file and the marking page
  both go through it, under :func:`locked`).
- ``grades.json``: each student's last grade (score, late penalty, marks,
  when the tests last ran), what the next run compares against.
- ``history.jsonl``: one JSON line per run: when, the command and its
  settings, the engine version, and every student whose score, late penalty
  or marks changed, old -> new, and why (:func:`changes`).

Every write is atomic (``files.atomic_write``) or one appended line, and every
read-modify-write of the marks, the grades and the history holds the folder's
lock, so two writers (two TAs marking at once, a page and a run) never lose
each other's work.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from autograder.core.files import append_text, atomic_write

FOLDER = "record"
SETTINGS, TIMES, MARKS, GRADES, HISTORY, LOCK, FILES = (
    "settings.json", "times.json", "marks.json", "grades.json", "history.jsonl", "lock", "files")

# setting -> (the flag that gives it, its value when never given)
SETTINGS_FLAGS: dict[str, tuple[str, Any]] = {
    "platform": ("--platform", None), "gradebook": ("--gradebook", None), "export": ("--export", None),
    "no_file": ("--no-file", "zero"), "lang": ("--lang", None), "after_due": ("--after-due", False),
    "due": ("--due", None), "tz": ("--tz", "UTC"), "late_penalty": ("--late-penalty", 0.0),
    "late_cap": ("--late-cap", 100.0), "grace": ("--grace", 0.0), "extensions": ("--extensions", None),
}
FILE_SETTINGS = ("gradebook", "extensions")  # kept as a copy: the run reads record/files/<setting>.csv
# A newer download of the platform's worksheet is the platform's file, not a choice of the instructor's:
# it replaces the kept copy (its submission times still go through merge_times, like --times)
REPLACEABLE = ("gradebook",)


def folder(out: Path) -> Path:
    return Path(out) / FOLDER


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """The record's lock (``fcntl.flock`` on ``record/lock``): held around every read-modify-write."""
    path = folder(out) / LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _read_json(path: Path, default):
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: the record cannot be read ({exc}); restore it or start a new output folder") from None
    return data if isinstance(data, type(default)) else default


def _write_json(path: Path, data) -> None:
    atomic_write(path, json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n")


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def engine_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("iron-law-labs")
    except metadata.PackageNotFoundError:
        return "unknown"


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# ---------------------------------------------------------------- settings

@dataclass
class Settings:
    """The settings one run uses: ``values`` (a file setting: the path to read, the record's
    copy when the flag was not given), ``changed`` (setting -> (recorded, new), taken with
    ``--change-settings``), ``first`` (no record yet)."""
    values: dict[str, Any]
    changed: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    first: bool = False
    recorded: dict[str, Any] = field(default_factory=dict)  # as settings.json will hold them

    def __getitem__(self, key: str):
        return self.values[key]


def shown(value) -> str:
    """A recorded value as the console says it."""
    if isinstance(value, dict) and "sha256" in value:
        return f"{value.get('name', '?')} (sha256 {value['sha256'][:12]})"
    if value is None:
        return "none"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _same(key: str, old, new) -> bool:
    if key in FILE_SETTINGS:
        return (old or {}).get("sha256") == (new or {}).get("sha256")
    if isinstance(old, (int, float)) and isinstance(new, (int, float)) and not isinstance(old, bool):
        return float(old) == float(new)
    return old == new


def resolve(out: Path, given: dict[str, Any], *, change: bool) -> Settings | str:
    """The settings of this run: each given flag (not None) checked against the record.

    A flag that differs from the recorded value is refused (the sentence returned
    names the flag, the recorded value and the new one) unless ``change``; a flag not
    given takes the recorded value, else its default.  Nothing is written here:
    :func:`save` writes what a run that went ahead used."""
    recorded = _read_json(folder(out) / SETTINGS, {})
    first = not recorded
    values, kept, changed = {}, {}, {}
    for key, (flag, default) in SETTINGS_FLAGS.items():
        new = given.get(key)
        if key in FILE_SETTINGS and new is not None:
            new_rec = {"name": Path(new).name, "sha256": sha256(new)}
        else:
            new_rec = new
        old = recorded.get(key, default) if not first else default
        if new is None or first:
            kept[key] = new_rec if new is not None else old
        elif _same(key, old, new_rec):
            kept[key] = old
        elif change or key in REPLACEABLE:
            kept[key] = new_rec
            changed[key] = (old, new_rec)
        else:
            return (f"{flag} {shown(new_rec)} differs from the record of {out} ({shown(old)}): "
                    f"rerun without {flag} to keep the recorded value, or add --change-settings to change it "
                    "(the console lists every grade that changes)")
        if key in FILE_SETTINGS:
            copy = folder(out) / FILES / f"{key}.csv"
            values[key] = new if new is not None else (str(copy) if kept[key] and copy.is_file() else None)
        else:
            values[key] = kept[key]
    return Settings(values, changed, first, kept)


def save(out: Path, settings: Settings) -> None:
    """settings.json, and a copy of each file setting given this run."""
    files = folder(out) / FILES
    for key in FILE_SETTINGS:
        path = settings.values.get(key)
        copy = files / f"{key}.csv"
        if path and Path(path).resolve() != copy.resolve():
            files.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
    _write_json(folder(out) / SETTINGS, settings.recorded)


def recorded_settings(out: Path) -> dict:
    return _read_json(folder(out) / SETTINGS, {})


# ---------------------------------------------------------------- submission times

PLATFORM, GIVEN = "platform", "times"  # where a recorded time came from: the download (or worksheet), or --times


def merge_times(out: Path, platform: dict[str, datetime], given: dict[str, datetime] | None = None, *,
                change: bool) -> tuple[dict[str, datetime], dict[str, tuple[str, str]]]:
    """The record's times with this run's added: ``platform`` (the download's and its worksheet's)
    and ``given`` (``--times``, which wins over the platform's, in one run as across runs).

    Returns the times to use, and the recorded times this run would move: id -> (recorded, new).
    A moved time is taken only with ``change`` (the caller refuses otherwise); a platform's time
    never moves one a times file gave; a time the record has and this run lacks stays."""
    recorded, given = read_sourced_times(out), given or {}
    kept, moved = dict(recorded), {}
    mine = {i: t for i, t in platform.items() if i not in given}  # --times wins over the platform's
    for source, found in ((PLATFORM, mine), (GIVEN, given)):
        for i, t in found.items():
            old = recorded.get(i)
            if old is not None and source == PLATFORM and old[1] == GIVEN:
                continue  # the instructor's own times file said otherwise: it stands
            if old is not None and old[0] != t:
                moved[i] = (old[0].isoformat(), t.isoformat())
                if not change:
                    continue
            kept[i] = (t, source)
    return {i: t for i, (t, _s) in kept.items()}, moved


def read_sourced_times(out: Path) -> dict[str, tuple[datetime, str]]:
    """The record's submission times and where each came from (PLATFORM or GIVEN)."""
    out_ = {}
    for i, v in _read_json(folder(out) / TIMES, {}).items():
        at, source = (v.get("at"), v.get("source", PLATFORM)) if isinstance(v, dict) else (v, PLATFORM)
        if isinstance(at, str):
            out_[i] = (datetime.fromisoformat(at), source)
    return out_


def read_times(out: Path) -> dict[str, datetime]:
    """The submission times the record has."""
    return {i: t for i, (t, _s) in read_sourced_times(out).items()}


def save_times(out: Path, platform: dict[str, datetime], given: dict[str, datetime] | None = None) -> None:
    """times.json: the record's times merged with this run's, as :func:`merge_times` took them (with
    ``change``: call it after a run that went ahead)."""
    merged, given = read_sourced_times(out), given or {}
    for source, found in ((PLATFORM, {i: t for i, t in platform.items() if i not in given}), (GIVEN, given)):
        for i, t in found.items():
            if not (source == PLATFORM and merged.get(i, (None, ""))[1] == GIVEN):
                merged[i] = (t, source)
    _write_json(folder(out) / TIMES, {i: {"at": t.isoformat(), "source": src} for i, (t, src) in sorted(merged.items())})


# ---------------------------------------------------------------- marks

REMOVE = "remove"  # a marks file's points cell that takes a recorded mark away


@dataclass(frozen=True)
class Entry:
    """One mark as the record keeps it."""
    points: float
    comment: str = ""
    marker: str = ""
    at: str = ""


@dataclass
class Merge:
    """What a marks file did to the record: marks added, changed (old -> new), removed, and the
    conflicts: a (submission, question) the record marks differently, settled by ``prefer``."""
    added: list[tuple[str, str]] = field(default_factory=list)
    changed: list[tuple[str, str, Entry, Entry]] = field(default_factory=list)
    removed: list[tuple[str, str, Entry]] = field(default_factory=list)
    conflicts: list[tuple[str, str, Entry, Entry | None]] = field(default_factory=list)  # None: a removal


def _key(sub: str, qid: str) -> str:
    return f"{sub}\t{qid}"


def read_marks(out: Path) -> dict[tuple[str, str], Entry]:
    """The record's marks; {} when it has none."""
    data = _read_json(folder(out) / MARKS, {})
    marks = {}
    for k, v in data.items():
        sub, _sep, qid = k.partition("\t")
        if isinstance(v, dict) and isinstance(v.get("points"), (int, float)):
            marks[(sub, qid)] = Entry(float(v["points"]), str(v.get("comment", "")), str(v.get("marker", "")),
                                      str(v.get("at", "")))
    return marks


def has_marks(out: Path) -> bool:
    return (folder(out) / MARKS).is_file()


def _write_marks(out: Path, marks: dict[tuple[str, str], Entry]) -> None:
    _write_json(folder(out) / MARKS, {_key(s, q): {"points": e.points, "comment": e.comment, "marker": e.marker,
                                                    "at": e.at} for (s, q), e in sorted(marks.items())})


def merge_marks(out: Path, new: dict[tuple[str, str], Entry], *, remove: frozenset[tuple[str, str]] = frozenset(),
                remover: str | None = None, prefer: str | None = None, dry_run: bool = False) -> Merge:
    """Add ``new`` to the record's marks, row by row, and take ``remove`` away, under the lock.

    A mark equal to the recorded one (points and comment) changes nothing.  A mark for a
    (submission, question) the record marks differently is a conflict: with ``prefer="new"``
    it replaces the recorded one, with ``"old"`` the record's stays; without ``prefer``
    nothing at all is written (the caller reports the conflicts).  The same marker
    changing their own mark is an update, never a conflict.  ``remover``: who takes ``remove``
    away (the marking page's marker); a mark another (or no) marker recorded is then a conflict too
    (its new side ``None``), decided here under the lock, so a mark saved between a page's
    look and its removal is never lost.  ``dry_run``: decide, write nothing."""
    with locked(out):
        marks = read_marks(out)
        result = Merge()
        for key, entry in sorted(new.items()):
            old = marks.get(key)
            if old is None:
                result.added.append(key)
                marks[key] = entry
            elif (old.points, old.comment) == (entry.points, entry.comment):
                continue
            elif old.marker and old.marker == entry.marker:
                result.changed.append((*key, old, entry))
                marks[key] = entry
            else:
                result.conflicts.append((*key, old, entry))
                if prefer == "new":
                    result.changed.append((*key, old, entry))
                    marks[key] = entry
        for key in sorted(remove):
            old = marks.get(key)
            if old is None:
                continue
            if remover is not None and old.marker != remover:  # an unnamed marker is another's too
                result.conflicts.append((*key, old, None))
                if prefer != "new":
                    continue
            result.removed.append((*key, marks.pop(key)))
        if (result.conflicts and prefer is None) or dry_run:
            return result
        _write_marks(out, marks)
        return result


def conflicts_text(merge: Merge) -> str:
    """The conflicts of a merge, one per line, for the console."""
    def new(n: Entry | None) -> str:
        return "removed" if n is None else f"new {n.points:g}{f' by {n.marker}' if n.marker else ''}"

    return "\n".join(f"  {s}, {q}: recorded {o.points:g}{f' by {o.marker}' if o.marker else ''}, {new(n)}"
                     for s, q, o, n in merge.conflicts)


# ---------------------------------------------------------------- grades and history

@dataclass(frozen=True)
class Grade:
    """One student's grade as the record keeps it, to compare the next run with."""
    score: float  # after the late penalty
    raw: float
    penalty_percent: float
    late_days: int | None
    marks: dict[str, float]  # manual question -> points (absent: not marked)
    sha256: str = ""
    graded_at: str = ""  # when its tests last ran
    names: tuple[str, ...] = ()

    def as_json(self) -> dict:
        return {"score": self.score, "raw": self.raw, "penalty_percent": self.penalty_percent,
                "late_days": self.late_days, "marks": self.marks, "sha256": self.sha256,
                "graded_at": self.graded_at, "names": list(self.names)}

    @classmethod
    def from_json(cls, d: dict) -> Grade:
        return cls(float(d.get("score", 0)), float(d.get("raw", 0)), float(d.get("penalty_percent", 0)),
                   d.get("late_days"), {k: float(v) for k, v in (d.get("marks") or {}).items()},
                   str(d.get("sha256", "")), str(d.get("graded_at", "")), tuple(d.get("names") or ()))


def read_grades(out: Path) -> dict[str, Grade]:
    return {i: Grade.from_json(d) for i, d in _read_json(folder(out) / GRADES, {}).items() if isinstance(d, dict)}


def write_grades(out: Path, grades: dict[str, Grade]) -> None:
    _write_json(folder(out) / GRADES, {i: g.as_json() for i, g in sorted(grades.items())})


def changes(old: dict[str, Grade], new: dict[str, Grade], why: dict[str, list[str]]) -> list[dict]:
    """Every student whose score, late penalty or marks changed, old -> new (``why``: the
    reasons this run knows, per submission).  A student new to the record is "first graded"."""
    out = []
    for i in sorted(new):
        g, o = new[i], old.get(i)
        if o is None:
            out.append({"submission": i, "score": [None, g.score], "why": ["first graded", *why.get(i, [])]})
            continue
        d: dict[str, Any] = {}
        if o.score != g.score:
            d["score"] = [o.score, g.score]
        if o.raw != g.raw:
            d["raw"] = [o.raw, g.raw]
        if o.penalty_percent != g.penalty_percent or o.late_days != g.late_days:
            d["late"] = [[o.late_days, o.penalty_percent], [g.late_days, g.penalty_percent]]
        marks = {q: [o.marks.get(q), g.marks.get(q)] for q in sorted(set(o.marks) | set(g.marks))
                 if o.marks.get(q) != g.marks.get(q)}
        if marks:
            d["marks"] = marks
        if d:
            out.append({"submission": i, **d, "why": why.get(i, []) or ["(no reason recorded)"]})
    return out


def append_history(out: Path, line: dict) -> None:
    with locked(out):
        append_text(folder(out) / HISTORY, json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")


def history(out: Path) -> list[dict]:
    """Every run of the record, oldest first (a torn last line, from a killed run, is skipped)."""
    path = folder(out) / HISTORY
    if not path.is_file():
        return []
    lines = []
    for text in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError):
            lines.append(json.loads(text))
    return lines
