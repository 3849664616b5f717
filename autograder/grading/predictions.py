"""Predict before you measure: the notebook's prediction cells and ``predictions.json``.

A lab declares its predictions in ``lab.toml`` (``[[predictions]]``,
:class:`autograder.core.manifest.Prediction`); ``docs/predictions.md`` says
what they are for.  A prediction cell and, further down, its measurement cell
call::

    guess = None  # your prediction, in place of None
    predict("step_multiple", guess)      # records it (or says it is still open)
    ...
    reveal("step_multiple", measured)    # locks it, shows prediction vs result

Every call reads ``predictions.json`` in the lab's folder (the notebook's
current folder) and writes it back whole, atomically, listing every
prediction the lab declares (so a run where nobody typed, with every guess
left ``None``, lists each one as unanswered).  Per prediction the file keeps

- ``value`` and ``at``: the first value given and when (UTC), never replaced;
- ``changes``: each later, different value and when, in order;
- ``locked_at``: when its measurement first ran (:func:`reveal`);
- ``measured``: the result the measurement last showed.

The prediction that counts is the one in force when the measurement ran:
the last value given before ``locked_at`` (:meth:`Record.in_force`); a value
given after it is recorded as a change and changes nothing.  A file that
cannot be read (not JSON, hand-edited out of shape) never stops a notebook:
it is kept aside under a new name and a fresh one is started, with a note.

The history is checked, never trusted (a student can edit the file): its
times must run in order (each change at or after the value before it) and,
where the grader knows when the file was handed in (``Record.handed_in``,
the platform's time), none may be later than that (:data:`CLOCK_SKEW` aside).
From the first time that breaks this on, every value counts as changed after
the measurement, and the record says its history was inconsistent
(:attr:`Record.consistent`); ``docs/predictions.md`` says what a hand-edited
file can and cannot fake.

The grader reads a handed-in file with :func:`parse` (the student's data:
bounded by ``core.untrusted``, checked value by value, never imported or
run), and never grades a prediction for being right
(``autograder.batch.predictions_report``).

At import this module needs only the standard library and the engine's
``core`` modules; Babel (through ``notebook_text.num``) when it prints.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from autograder.core import manifest as _manifest
from autograder.core import untrusted
from autograder.core.files import atomic_write
from autograder.core.i18n import N_, _

FILE = "predictions.json"
FORMAT = 1
KEPT_DIR = "predictions-unreadable"  # where a file that could not be read is kept (never shipped: core.files)
MAX_CHANGES = 200  # changes kept per prediction (a cell rerun with a new value each time): the file stays small
MAX_NESTING = 8  # a predictions file nests 5 deep: deeper is refused (core.untrusted.load_json)
# the student's clock against the platform's: a time this much later than the hand-in still counts
CLOCK_SKEW = timedelta(hours=1)

ASK = N_("Prediction: {prompt}")
ASK_NUMBER = N_("Your answer: a number from {low} to {high}{unit}.")
ASK_CHOICE = N_("Your answer: one of {choices} (the letter or the words).")
OPEN = N_("No prediction yet: write your guess in place of None and run this cell again, before the "
          "measurement below.")
RECORDED = N_("Your prediction: {value} (recorded {time} UTC).")
CHANGED = N_("Changed to {value}. Your first prediction, {first}, stays in {file} with this change.")
AFTER_LOCK = N_("The measurement has run already ({time} UTC): your prediction stays {value}. {new} is "
                "recorded as a change made after the measurement.")
LATE = N_("The measurement has run already ({time} UTC), without a prediction: {new} is recorded as given after "
          "the measurement.")
BAD_NUMBER = N_("{value} is not a number from {low} to {high}: nothing is recorded. Correct it and run this "
                "cell again.")
BAD_CHOICE = N_("{value} is not one of {choices}: nothing is recorded. Correct it and run this cell again.")
NOT_MEASURED = N_("Nothing was measured (the code above is not written yet): prediction {id} stays open.")
RESULT_NUMBER = N_("Your prediction: {prediction}{unit}. The result: {result}{unit}.")
RATIO = N_("Your prediction divided by the result: {ratio}.")
RESULT_CHOICE = N_("Your prediction: {prediction}. The answer: {result}.")
RIGHT, WRONG = N_("Right."), N_("Not this time.")
NO_PREDICTION = N_("You made no prediction before this measurement. The result: {result}{unit}.")
REFLECT = N_("In the answer cell below, write one line: what did your prediction miss, or what made it right?")
KEPT_ASIDE = N_("{file} could not be read ({problem}): it is kept as {kept}, and a new {file} is started. "
                "Your earlier predictions are in {kept}.")


def now() -> str:
    """Now, in UTC, to the microsecond: a prediction and its measurement in one second stay in order."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _time(text) -> datetime:
    """A time of the file (ISO 8601, UTC): ValueError for anything else."""
    if not isinstance(text, str) or not text.endswith("Z"):
        raise ValueError(f"not a UTC time: {text!r:.40}")
    return datetime.fromisoformat(text[:-1] + "+00:00")


# -- the file's records -------------------------------------------------------------------
@dataclass
class Record:
    """One prediction's history (see the module docstring)."""

    value: float | str | None = None
    at: str | None = None
    changes: list[tuple[float | str, str]] = field(default_factory=list)
    locked_at: str | None = None
    measured: float | str | None = None
    # when the file was handed in (the platform's time, set by the grader; never read from the file)
    handed_in: datetime | None = field(default=None, compare=False)

    def given(self) -> list[tuple[float | str, str]]:
        """Every value given, in order: the first, then its changes."""
        return ([(self.value, self.at)] if self.at is not None else []) + list(self.changes)

    def _ordered(self) -> tuple[list[tuple[float | str, str]], bool]:
        """The values given up to the first whose time goes back (before the value it follows) or
        lies after the hand-in; and whether the whole history, the lock too, kept to that."""
        late = self.handed_in + CLOCK_SKEW if self.handed_in is not None else None
        kept, last = [], None
        for v, t in self.given():
            at = _time(t)
            if (last is not None and at < last) or (late is not None and at > late):
                return kept, False
            kept.append((v, t))
            last = at
        return kept, not (late is not None and self.locked_at is not None and _time(self.locked_at) > late)

    @property
    def consistent(self) -> bool:
        """The history's times run in order, none after the hand-in (see the module docstring)."""
        return self._ordered()[1]

    def in_force(self) -> tuple[float | str | None, str | None]:
        """The prediction that counts: the last value given before the lock (while there is no
        lock, the last one given) among those of a consistent history (:meth:`_ordered`: what
        follows a time that goes back counts as changed after the measurement); ``(None, None)``
        when none was given before the measurement."""
        kept = self._ordered()[0]
        lock = _time(self.locked_at) if self.locked_at else None
        before = [(v, t) for v, t in kept if lock is None or _time(t) < lock]
        return before[-1] if before else (None, None)

    @property
    def changed_after_lock(self) -> bool:
        """A value other than the one in force was given once the measurement had run (an
        inconsistent history counts as one)."""
        if not self.consistent:
            return True
        if self.locked_at is None:
            return False
        lock, force = _time(self.locked_at), self.in_force()[0]
        return any(_time(t) >= lock and v != force for v, t in self.given())

    @property
    def answered(self) -> bool:
        """A value given before its measurement ran (or given, while it has not run yet)."""
        return self.in_force()[0] is not None

    def to_dict(self) -> dict:
        return {"value": self.value, "at": self.at, "changes": [{"value": v, "at": t} for v, t in self.changes],
                "locked_at": self.locked_at, "measured": self.measured}


def finite(value) -> float:
    """``value`` as a finite float; ValueError for anything else (a bool, a text, NaN, an
    infinity, an integer too large for a float)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{str(value)[:40]!r} is not a number")
    try:
        number = float(value)
    except OverflowError:
        raise ValueError("a number too large") from None
    if not math.isfinite(number):
        raise ValueError(f"{number!r} is not a finite number")
    return number


def check_value(p: _manifest.Prediction, value) -> float | str:
    """``value`` as the file keeps it (a float; a choice's English text); ValueError if it is
    not one the prediction allows."""
    if p.kind == "number":
        number = finite(value)
        if not p.low <= number <= p.high:
            raise ValueError(f"{number!r} is not a number from {p.low:g} to {p.high:g}")
        return number
    if not isinstance(value, str) or value not in p.choices:
        raise ValueError(f"{str(value)[:40]!r} is not one of the choices")
    return value


def check_measured(p: _manifest.Prediction | None, value) -> float | str:
    """A measured result as the file keeps it: any finite number (it may lie outside the range
    a guess must keep to), or one of a choice's options."""
    if p is not None and p.kind == "choice":
        return check_value(p, value)
    return finite(value)


def _record(d, p: _manifest.Prediction | None) -> Record:
    """One prediction's entry of a file, checked field by field (ValueError: it is not one)."""
    if not isinstance(d, dict) or set(d) - {"value", "at", "changes", "locked_at", "measured"}:
        raise ValueError("an entry is not a prediction's record")
    changes = d.get("changes", [])
    if not isinstance(changes, list) or len(changes) > MAX_CHANGES:
        raise ValueError(f"changes must be a list of at most {MAX_CHANGES}")

    def given(value, at):
        _time(at)
        return check_value(p, value) if p is not None else _loose(value)

    r = Record()
    if d.get("value") is not None or d.get("at") is not None:
        r.value, r.at = given(d.get("value"), d.get("at")), d.get("at")
    for c in changes:
        if not isinstance(c, dict) or set(c) != {"value", "at"} or r.at is None:
            raise ValueError("a change is not {value, at}, or comes without a first value")
        r.changes.append((given(c["value"], c["at"]), c["at"]))
    if d.get("locked_at") is not None:
        _time(d["locked_at"])
        r.locked_at = d["locked_at"]
    if d.get("measured") is not None:
        r.measured = check_measured(p, d["measured"]) if p is not None else _loose(d["measured"])
    return r


def _loose(value) -> float | str:
    """A value of a prediction this folder has no declaration of: a finite number or a short text."""
    if isinstance(value, str) and len(value) <= 200:
        return value
    return check_measured(None, value)


def parse(data: bytes | str, manifest: _manifest.Manifest | None, handed_in: datetime | None = None
          ) -> dict[str, Record]:
    """Prediction id -> its record, from the bytes of a ``predictions.json``; ValueError (its
    message says what is wrong) for anything else.  With ``manifest``: only the predictions it
    declares, each value checked against its declaration (entries of others are left out).
    ``handed_in``: when the file was handed in (the platform's time), which no time of its
    history may pass (:meth:`Record.consistent`).  Bounded (``core.untrusted.load_json``): at most
    a handed-in file's size and :data:`MAX_NESTING` levels, linear in its size."""
    try:
        d = untrusted.load_json(data, max_depth=MAX_NESTING)
    except untrusted.Unreadable as exc:  # not UTF-8, not JSON, too large, too deep, an integer of 5,000 digits
        raise (ValueError(f"not JSON ({exc})") if exc.syntax else exc) from None
    if not isinstance(d, dict) or d.get("format") != FORMAT or not isinstance(d.get("predictions"), dict):
        raise ValueError(f'not a predictions file (format {FORMAT}, with "predictions")')
    declared = {p.id: p for p in manifest.predictions} if manifest else None
    if handed_in is not None and handed_in.tzinfo is None:
        handed_in = handed_in.replace(tzinfo=timezone.utc)
    out = {}
    for pid, entry in d["predictions"].items():
        untrusted.check()  # thousands of undeclared entries cost their loop, within the entry's budget
        if declared is None or pid in declared:
            out[pid] = _record(entry, declared[pid] if declared else None)
            out[pid].handed_in = handed_in
    return out


def dumps(records: dict[str, Record], lab: str) -> str:
    return json.dumps({"format": FORMAT, "lab": lab, "predictions": {k: r.to_dict() for k, r in records.items()}},
                      indent=1, ensure_ascii=False) + "\n"


# -- the notebook's side --------------------------------------------------------------------
def _say(template: str, **fields) -> str:
    return _(template).format(**fields)


def show(p: _manifest.Prediction | None, value) -> str:
    """A value as the student reads it: a number in the notebook's language, a choice translated."""
    from autograder.grading.notebook_text import num, tr

    if isinstance(value, str):
        return tr(value) if p is not None and p.kind == "choice" else value
    if value == 0 or not 1e-3 <= abs(value) < 1e6:
        return num(value, ".3g")  # 0, 1.5e+09
    # three significant digits, no exponent, no trailing zeros: 3.02, 0.66, 1,235
    return num(round(value, max(0, 2 - math.floor(math.log10(abs(value))))))


def _unit(p: _manifest.Prediction | None) -> str:
    return f" {p.unit}" if p is not None and p.unit else ""


def _letters(p: _manifest.Prediction) -> str:
    from autograder.grading.notebook_text import tr

    return ", ".join(f"{chr(ord('a') + i)}) {tr(c)}" for i, c in enumerate(p.choices))


def canonical_choice(p: _manifest.Prediction, guess) -> str | None:
    """A choice as the file keeps it (its English text), from what a student may write: the
    letter shown before it, its English words, or its words in the notebook's language
    (case and surrounding spaces aside); None when it is none of them."""
    from autograder.grading.notebook_text import tr

    if not isinstance(guess, str):
        return None
    g = guess.strip().casefold()
    for i, c in enumerate(p.choices):
        if g in (chr(ord("a") + i), c.strip().casefold(), tr(c).strip().casefold()):
            return c
    return None


class Predictions:
    """The ``predictions.json`` of one lab folder, read at every call and written back whole."""

    def __init__(self, folder: Path | str | None = None, manifest: _manifest.Manifest | None = None, clock=now):
        self.folder = Path(folder) if folder is not None else Path.cwd()
        if manifest is None and (self.folder / "lab.toml").is_file():
            manifest = _manifest.load(self.folder / "lab.toml")
        self.manifest = manifest  # None: a folder without lab.toml (otter's grading folder): nothing is declared
        self.clock = clock

    @property
    def path(self) -> Path:
        return self.folder / FILE

    def declared(self, pid: str) -> _manifest.Prediction | None:
        if self.manifest is None:
            return None
        return self.manifest.prediction(pid)  # KeyError: the notebook names a prediction lab.toml lacks

    def load(self) -> tuple[dict[str, Record], list[str]]:
        """The records, every declared prediction listed; and the notes to print (a file kept aside)."""
        records: dict[str, Record] = {}
        notes = []
        if self.path.is_file():
            try:
                records = parse(self.path.read_bytes(), self.manifest)
            except Exception as exc:  # noqa: BLE001  (whatever the file holds, the notebook goes on)
                kept = self.folder / KEPT_DIR / f"predictions-{self.clock().replace(':', '')}.json"
                try:
                    kept.parent.mkdir(exist_ok=True)
                    os.replace(self.path, kept)
                except OSError:
                    kept = self.path
                notes.append(_say(KEPT_ASIDE, file=FILE, problem=exc, kept=kept.relative_to(self.folder).as_posix()))
        for p in self.manifest.predictions if self.manifest else ():
            records.setdefault(p.id, Record())
        if self.manifest:  # in lab.toml's order
            records = {p.id: records[p.id] for p in self.manifest.predictions}
        return records, notes

    def save(self, records: dict[str, Record]) -> None:
        atomic_write(self.path, dumps(records, self.manifest.name if self.manifest else self.folder.name))

    def predict(self, pid: str, guess) -> list[str]:
        """Record ``guess`` for prediction ``pid`` (None: not answered yet); the lines to print."""
        p = self.declared(pid)
        records, lines = self.load()
        r = records.setdefault(pid, Record())
        if p is not None:
            lines.append(_say(ASK, prompt=_(p.prompt)))
        if guess is None:
            if p is not None:
                lines.append(_say(ASK_NUMBER, low=show(p, p.low), high=show(p, p.high), unit=_unit(p))
                             if p.kind == "number" else _say(ASK_CHOICE, choices=_letters(p)))
            lines.append(_(OPEN))
            self.save(records)  # every declared prediction listed, unanswered
            return lines
        try:
            value = self._value(p, guess)
        except ValueError:
            self.save(records)
            if p is not None and p.kind == "choice":
                return lines + [_say(BAD_CHOICE, value=repr(guess), choices=_letters(p))]
            low, high = (show(p, p.low), show(p, p.high)) if p is not None else ("-inf", "inf")
            return lines + [_say(BAD_NUMBER, value=repr(guess), low=low, high=high)]
        last = r.given()[-1][0] if r.given() else None
        if r.at is None:
            r.value, r.at = value, self.clock()
        elif value != last:
            if len(r.changes) >= MAX_CHANGES:
                r.changes.pop()  # the latest change is replaced; the first value and the earlier changes stay
            r.changes.append((value, self.clock()))
        self.save(records)
        force, when = r.in_force()
        if r.locked_at and force is None:
            lines.append(_say(LATE, time=_clock(r.locked_at), new=show(p, value)))
        elif r.locked_at and value != force:
            lines.append(_say(AFTER_LOCK, time=_clock(r.locked_at), value=show(p, force), new=show(p, value)))
        elif r.changes and value != last:
            lines.append(_say(CHANGED, value=show(p, value), first=show(p, r.value), file=FILE))
        else:
            lines.append(_say(RECORDED, value=show(p, force), time=_clock(when)))
        return lines

    @staticmethod
    def _value(p: _manifest.Prediction | None, guess) -> float | str:
        """A student's guess as the file keeps it; ValueError when it is not one ``p`` allows."""
        guess = _plain(guess)
        if p is None:
            return _loose(guess)
        if p.kind == "choice":
            choice = canonical_choice(p, guess)
            if choice is None:
                raise ValueError(guess)
            return choice
        return check_value(p, guess)

    def reveal(self, pid: str, measured=None) -> list[str]:
        """Lock prediction ``pid`` (its measurement ran) and compare it with ``measured`` (default:
        the ``truth`` lab.toml fixes); the lines to print.  Nothing to compare (the code that
        measures is not written yet): nothing is locked."""
        p = self.declared(pid)
        records, lines = self.load()
        r = records.setdefault(pid, Record())
        result = _result(p, measured if measured is not None else (p.truth if p is not None else None))
        if result is None:
            self.save(records)
            return lines + [_say(NOT_MEASURED, id=pid)]
        r.locked_at = r.locked_at or self.clock()
        r.measured = result
        self.save(records)
        force, _when = r.in_force()
        if force is None:
            lines.append(_say(NO_PREDICTION, result=show(p, result), unit=_unit(p)))
        elif isinstance(result, str):
            lines.append(_say(RESULT_CHOICE, prediction=show(p, force), result=show(p, result)) + " "
                         + _(RIGHT if force == result else WRONG))
        else:
            lines.append(_say(RESULT_NUMBER, prediction=show(p, force), result=show(p, result), unit=_unit(p)))
            if result != 0:
                lines.append(_say(RATIO, ratio=show(p, force / result)))
        lines.append(_(REFLECT))
        return lines


def _result(p: _manifest.Prediction | None, value) -> float | str | None:
    """A measurement's result as the file keeps it; None when there is none to compare with (a stub's
    None, a value that is no number, or no option of the choice)."""
    value = _plain(value)
    if value is None:
        return None
    if p is not None and p.kind == "choice":
        return canonical_choice(p, value)
    try:
        return check_measured(p, value) if p is not None else _loose(value)
    except ValueError:
        return None


def _plain(value):
    """A NumPy or torch scalar as a Python number; anything else (an array of many values: no
    number, which the checks then refuse) as it is."""
    if hasattr(value, "item") and not isinstance(value, str):
        try:
            return value.item()
        except Exception:  # noqa: BLE001  (an array of several values, a tensor that needs a device)
            return value
    return value


def _clock(at: str | None) -> str:
    """A time of the file as a student reads it: ``2026-05-01 14:03:07``."""
    return (at or "")[:19].replace("T", " ")


def predict(pid: str, guess, folder: Path | str | None = None) -> None:
    """A prediction cell: record ``guess`` (None: not answered yet) for prediction ``pid``."""
    print("\n".join(Predictions(folder).predict(pid, guess)))


def reveal(pid: str, measured=None, folder: Path | str | None = None) -> None:
    """A measurement cell: lock prediction ``pid`` and show it against ``measured``."""
    print("\n".join(Predictions(folder).reveal(pid, measured)))


def handin(folder: Path, manifest: _manifest.Manifest) -> dict[str, bytes]:
    """What a hand-in adds for the predictions: ``predictions.json`` as it is in ``folder``
    (what is handed in is the student's to decide; the grader checks it), when the lab
    declares predictions and the file is there."""
    path = Path(folder) / FILE
    return {FILE: path.read_bytes()} if manifest.predictions and path.is_file() else {}
