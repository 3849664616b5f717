"""The learning platforms: how each one's export is read, and how grades and feedback go back.

Everything the kit knows of one platform lives in one module of this package
(``moodle.py``, ``canvas.py``, ``gradescope.py``, ``folder.py`` for a plain
folder), behind the small interface the bulk loop calls:

- :class:`Platform`: ``detect(folder)`` says how many top-level names look
  like its export; ``read(folder, gradebook)`` gives an :class:`Intake` (the
  entries, who is who, the times the export holds); ``write_back(intake,
  outcomes, lab, out, no_file)`` writes what goes back to the platform and
  returns the paths written.
- :func:`read` detects the platform of a folder (or takes the one named) and
  reads it; :func:`unpacked` turns a download given as it is (a zip of the
  export) into a folder; :func:`stage` stages one entry exactly as ``grade``
  does (the Gradescope runner calls it too).

A new platform (Blackboard, say) is one new module here that defines
``PLATFORM``, an instance of a :class:`Platform` subclass: :func:`platforms`
finds it.  ``docs/intake.md`` and ``docs/exports.md`` describe each layout.
"""

from __future__ import annotations

import calendar
import contextlib
import dataclasses
import functools
import importlib
import os
import pkgutil
import re
import stat
import unicodedata
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath

from autograder.batch import late, roster
from autograder.core.files import run_folder
from autograder.core.results import SubmissionResult
from autograder.core.i18n import N_, _
from autograder.grading import staging

NO_FILE = ("zero", "pending")  # what a grade file gets for a student with nothing gradable (--no-file)
MAX_EXPORT_MEMBERS = 100_000  # members of a download zip unpacked
MAX_EXPORT_MEMBER_BYTES = 1 << 30  # one member (a student's upload): larger ones are left out, and said so
MAX_EXPORT_BYTES = 16 << 30  # the whole download


@dataclass(frozen=True)
class Outcome:
    """What one submission came to, for the files that go back to the platform.

    ``result``: as the student is shown it (marks given by hand applied);
    ``score``: after the late penalty; ``lateness``: None without a due date;
    ``gradable``: at least one of the lab's files could be read; ``feedback``:
    the student's feedback (Markdown); ``pending``: points of questions marked by
    hand that are not marked yet."""
    result: SubmissionResult
    score: float
    lateness: late.Lateness | None
    gradable: bool
    feedback: str
    pending: float = 0.0
    absent: dict[str, str] = field(default_factory=dict)  # manual questions handed in nothing for -> why

    def grade(self, no_file: str = "zero") -> float | None:
        """The grade a platform's file gets (None: left blank, pending): the score; for nothing
        gradable, 0 or pending as ``no_file`` says; pending when the grader failed (not the student)."""
        if self.result.grader_error:
            return None
        if not self.gradable:
            return 0.0 if no_file == "zero" else None
        return self.score


@dataclass
class Intake:
    """One export, read: its entries (one per student), who is behind each, the times
    it holds, and what the platform noticed (for the instructor)."""
    platform: Platform
    folder: Path
    entries: list[staging.Entry]
    people: dict[str, roster.Submitters] = field(default_factory=dict)
    times: dict[str, datetime] = field(default_factory=dict)  # submission id -> when (the export's own)
    # submission id -> a wall-clock time without a zone (Moodle's worksheet): in the site's zone, ``grade --tz``
    wall_times: dict[str, datetime] = field(default_factory=dict)
    # submission id -> the platform's own verdict, late or not, where it gives no time (Canvas's ``LATE``)
    late_flags: dict[str, bool] = field(default_factory=dict)
    nothing: list[str] = field(default_factory=list)  # the gradebook's students with no submission, by name
    others: list[str] = field(default_factory=list)  # top-level names not in the platform's layout
    problems: list[str] = field(default_factory=list)  # records the export could not give (a time)
    warnings: list[str] = field(default_factory=list)
    state: object = None  # the platform's own (Moodle's worksheet)

    def find(self, term: str) -> list[str]:
        """The ids of the entries ``term`` names: an id (exactly as written), or a name, email, login,
        sid or platform id of a student, exactly or as the start of one (case, accents and spaces
        ignored).  One entry only when nothing else matches it even as a start: "tran thi" is the
        name of "Tran Thi" and the start of "Tran Thi Binh", so it names both (the exact one first),
        and the instructor picks with the id.  Several: ambiguous (the caller lists them); none: unknown."""
        ids = [e.id for e in self.entries]
        if term in ids:
            return [term]
        keys = {e.id: (e.id, *self.people.get(e.id, roster.NOBODY).keys()) for e in self.entries}
        want = _fold(term)
        if not want:
            return []
        exact = [i for i in ids if any(_fold(k) == want for k in keys[i])]
        return exact + [i for i in ids if i not in exact and any(_fold(k).startswith(want) for k in keys[i])]

    def label(self, entry_id: str) -> str:
        """An entry's id with its students' names, for a list of candidates."""
        names = "; ".join(n for n in self.people.get(entry_id, roster.NOBODY).names if n)
        return f"{entry_id} ({names})" if names and names != entry_id else entry_id


# What a submission's row says when its platform's names put its owner in doubt (the student reads it too)
OTHERS_ID = N_("the name the platform gives this submission ({name}) holds the id {id} of another student: "
               "the instructor checks by hand whose work it is")
TWO_NAMES = N_("the platform names this student's uploads in more than one way ({names}): the instructor checks "
               "by hand that they are one student's")
_DIGITS = re.compile(r"\d+")


def name_doubts(label: str, names: list[str], own: str, known: set[str], claims: Iterable[str] = ()
                ) -> tuple[list[str], list[str]]:
    """What one submission's display names put in doubt: its row's problems (the student's words)
    and the warnings (the instructor's).  ``names``: the names its platform gave its uploads;
    ``own``: its trusted id (Canvas's user id, Moodle's participant id); ``known``: every id of
    the export; ``claims``: every name it may have (each reading of an ambiguous file name).

    Flagged: a name that holds another student's id (a whole run of digits equal to it), and
    uploads of one id under more than one name.  Nothing here decides whose the uploads are."""
    problems, warnings = [], []
    claims = list(dict.fromkeys([*names, *claims]))
    others = sorted({n for c in claims for n in _DIGITS.findall(c)} & (known - {own}), key=lambda n: (len(n), n))
    if others:
        claim = staging.printable(min(c for c in claims if others[0] in _DIGITS.findall(c)))
        problems.append(_(OTHERS_ID).format(name=claim, id=others[0]))
        warnings.append(f"{label}: the name {claim!r} holds the id {others[0]} of another student: "
                        "check whose work it is")
    if len(names) > 1:
        shown = ", ".join(staging.printable(n) for n in names)
        problems.append(_(TWO_NAMES).format(names=shown))
        warnings.append(f"{label}: uploads of id {own} under more than one name ({shown}): check they are "
                        "one student's")
    return problems, warnings


def _fold(text: str) -> str:
    """``text`` for matching: no accents (``đ`` as ``d``), no case, no spaces."""
    text = unicodedata.normalize("NFKD", text.replace("đ", "d").replace("Đ", "D"))
    return "".join(c for c in text if not unicodedata.combining(c) and not c.isspace()).casefold()


class Platform:
    """One platform's export, both ways.  Subclasses set the class attributes and override
    :meth:`detect`, :meth:`read` and (for a platform grades go back to) :meth:`write_back`."""
    name = ""  # the --platform value ("moodle")
    title = ""  # as the console says it ("Moodle")
    layout = ""  # how its export is recognised, for the console
    gradebook = ""  # what --gradebook means for it ("" : it takes none)

    def detect(self, folder: Path) -> int:
        """How many top-level names of ``folder`` look like this platform's (0: none)."""
        return 0

    def read(self, folder: Path, gradebook: Path | None = None) -> Intake:
        raise NotImplementedError

    def write_back(self, intake: Intake, outcomes: dict[str, Outcome], lab, out: Path,
                   no_file: str = "zero") -> list[Path]:
        """The files that carry grades and feedback back to the platform, written under ``out``."""
        return []


@functools.cache
def platforms() -> dict[str, Platform]:
    """Every platform module of this package, by name: a new platform is one new module."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        p = getattr(module, "PLATFORM", None)
        if isinstance(p, Platform):
            found[p.name] = p
    return found


def detect(folder: Path) -> Platform:
    """The platform whose layout most top-level names of ``folder`` follow (a plain folder when none)."""
    every = platforms()
    counts = {name: p.detect(folder) for name, p in every.items() if name != "folder"}
    best = max(counts, key=lambda n: (counts[n], n), default=None)
    return every[best] if best and counts[best] else every["folder"]


def read(folder: Path, name: str | None = None, gradebook: Path | None = None) -> Intake:
    """``folder`` read by the platform ``name``, or by the one :func:`detect` finds.
    ValueError (a sentence) for an unknown name or a gradebook the platform cannot read."""
    every = platforms()
    if name and name not in every:
        raise ValueError(f"unknown platform {name!r}: one of {', '.join(sorted(every))}")
    platform = every[name] if name else detect(folder)
    if gradebook and not platform.gradebook:
        raise ValueError(f"--gradebook: a {platform.title} export takes none")
    return with_others(platform.read(folder, Path(gradebook) if gradebook else None))


def with_others(intake: Intake) -> Intake:
    """``intake`` with the entries its platform did not name (a late hand-in's folder or zip dropped
    beside a download) graded as a plain folder's, each under its own name: nothing in the folder is
    left out.  A loose file that is neither is refused (ValueError naming it): it belongs to no one."""
    if not intake.others:
        return intake
    names = set(intake.others)
    extra = [e for e in staging.discover(intake.folder) if e.path.name in names]
    loose = sorted(names - {e.path.name for e in extra})
    if loose:
        shown = ", ".join(staging.printable(n) for n in loose[:5]) + (" ..." if len(loose) > 5 else "")
        raise ValueError(f"{intake.folder.name} holds {len(loose)} file(s) that are neither {intake.platform.title}'s "
                         f"nor a student's folder or zip: {shown}; move them out (or into a student's folder) and "
                         "grade again")
    taken = {e.id for e in intake.entries}
    for e in extra:
        ident, n = e.id, 1
        while ident in taken:
            n += 1
            ident = f"{e.id}~{n}"
        taken.add(ident)
        intake.entries.append(dataclasses.replace(e, id=ident, collides_with=e.id if ident != e.id else ""))
    intake.entries.sort(key=lambda e: e.id)
    shown = ", ".join(staging.printable(e.path.name) for e in extra[:5]) + (" ..." if len(extra) > 5 else "")
    intake.warnings.append(f"graded as plain folders, not as {intake.platform.title}'s (their names are not in its "
                           f"layout): {shown}; their grades are in gradebook.csv only: enter them in "
                           f"{intake.platform.title} by hand")
    return intake


def stage(lab, entry: staging.Entry | Path, dest: Path, stub_bytes: dict[str, bytes] | None = None
          ) -> staging.Staged:
    """One entry's declared files in ``dest``, as ``grade`` and the Gradescope runner stage them:
    the lab's student files (an untouched stub passed over when the student left one beside their
    work), the notebooks a lab with questions marked by hand reads the answers from, and the
    predictions file of a lab that asks for one."""
    from autograder.core import stubs
    from autograder.grading import predictions

    m = lab.manifest
    if stub_bytes is None:
        stub_bytes = {name: text.encode() for name, text in stubs.texts(lab).items()}
    # predictions.json is data: one too large is counted not readable, never a problem (predictions_report)
    return staging.stage(entry, m.student_files, dest, stubs=stub_bytes, optional=m.notebooks if m.manual else (),
                         data=(predictions.FILE,) if m.predictions else ())


@contextlib.contextmanager
def unpacked(path: Path) -> Iterator[tuple[Path, list[str]]]:
    """``path`` as a folder of submissions, and what could not be unpacked (sentences).

    A folder is itself.  A zip (a platform's download, as it is) is unpacked into a
    private folder that lasts as long as the ``with``: regular files only, names
    made safe (no absolute path, no ``..``; backslashes read as folders; a name
    without the zip's UTF-8 flag read as UTF-8 when it is, as Canvas and Moodle
    write them), at most :data:`MAX_EXPORT_MEMBER_BYTES` a member.  When all it
    holds is one folder that is itself an export (a download zipped again), that
    folder is the one read.  Each file gets its entry's time in the zip as its
    modification time (UTC taken for the zip's zone-less time: these times are only
    compared with each other, ``staging.upload_order``), and :func:`times_in` says
    so of the folder while the ``with`` lasts."""
    path = Path(path)
    if path.is_dir() or not path.is_file():
        yield path, []
        return
    with run_folder("export") as tmp:
        root = tmp / "export"
        root.mkdir()
        skipped = _unzip(path, root)
        inner = [p for p in root.iterdir() if not p.name.startswith(".") and p.name != "__MACOSX"]
        if len(inner) == 1 and inner[0].is_dir() and detect(root).name == "folder" \
                and detect(inner[0]).name != "folder":
            root = inner[0]
        _UNPACKED.add(root.resolve())
        try:
            yield root, skipped
        finally:
            _UNPACKED.discard(root.resolve())


_UNPACKED: set[Path] = set()  # the folders unpacked() made from a download zip, while they last


def times_in(folder: Path) -> str:
    """What the files' times of a download in ``folder`` are: ``staging.DOWNLOAD`` (a zip
    :func:`unpacked` unpacked here: the download's own entry times) or ``staging.FOLDER`` (a
    folder the instructor unpacked: times as their unzip tool kept them, or the copy's)."""
    folder = Path(folder).resolve()
    return staging.DOWNLOAD if any(folder == r or r in folder.parents for r in _UNPACKED) else staging.FOLDER


def _member_name(info: zipfile.ZipInfo) -> str:
    name = info.filename
    if not info.flag_bits & 0x800:  # no UTF-8 flag: zipfile read cp437; a UTF-8 name is read as one
        with contextlib.suppress(UnicodeError):
            name = name.encode("cp437").decode("utf-8")
    return name.replace("\\", "/")


def _unzip(path: Path, root: Path) -> list[str]:
    """Unpack ``path`` into ``root`` safely; what was left out, said for the instructor."""
    skipped, total = [], 0
    try:
        z = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ValueError(f"{path.name} is not a zip file this command can read ({exc})") from None
    with z:
        for n, info in enumerate(z.infolist()):
            if n >= MAX_EXPORT_MEMBERS:
                skipped.append(f"{path.name} holds more than {MAX_EXPORT_MEMBERS} files: the rest were not read")
                break
            name = _member_name(info)
            parts = [p for p in PurePosixPath(name).parts if p not in ("", "/", ".")]
            kind = stat.S_IFMT(info.external_attr >> 16)
            if info.is_dir() or name.endswith("/") or not parts:
                continue
            if ".." in parts or (kind and kind != stat.S_IFREG):
                skipped.append(f"{staging.printable(name)}: not a plain file inside the download, not read")
                continue
            if info.file_size > MAX_EXPORT_MEMBER_BYTES or total + info.file_size > MAX_EXPORT_BYTES:
                skipped.append(f"{staging.printable(name)}: larger than {MAX_EXPORT_MEMBER_BYTES >> 20} MiB, "
                               "not read")
                continue
            dest = root.joinpath(*parts)
            try:
                dest.parent.mkdir(parents=True, exist_ok=True)
                with z.open(info) as src, open(dest, "xb") as out:
                    copied = _copy(src, out, MAX_EXPORT_MEMBER_BYTES)
                total += copied
                with contextlib.suppress(ValueError, OverflowError, OSError):  # the upload's time, as the zip says
                    at = calendar.timegm((*info.date_time, 0, 0, 0))
                    os.utime(dest, (at, at))
                if copied > MAX_EXPORT_MEMBER_BYTES:
                    dest.unlink()
                    skipped.append(f"{staging.printable(name)}: larger than {MAX_EXPORT_MEMBER_BYTES >> 20} MiB, "
                                   "not read")
            except (OSError, zipfile.BadZipFile, EOFError, RuntimeError, ValueError) as exc:
                with contextlib.suppress(OSError):
                    if dest.is_file():
                        dest.unlink()
                skipped.append(f"{staging.printable(name)}: could not be unpacked ({staging.describe(exc)})")
    return skipped


def _copy(src, out, limit: int) -> int:
    """Copy at most ``limit + 1`` bytes (one more says the member lied about its size)."""
    copied = 0
    while copied <= limit:
        chunk = src.read(min(1 << 20, limit + 1 - copied))
        if not chunk:
            break
        out.write(chunk)
        copied += len(chunk)
    return copied


def top_names(folder: Path) -> list[os.DirEntry]:
    """The top-level entries of an export folder, by name, hidden ones left out."""
    with os.scandir(folder) as it:
        return sorted((e for e in it if not e.name.startswith(".") and e.name != "__MACOSX"), key=lambda e: e.name)

