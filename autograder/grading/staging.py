"""Find submissions in a folder and stage each one's declared files.

A submissions folder holds one entry per student.  :func:`discover` reads the
plain layout (a hand-made batch, Gradescope's export): a folder, a ``.zip``
or another archive per student; the submission id is its name without the
extension, as plain text (bytes that are not UTF-8 and control characters
are written as escapes), made unique with ``~2``, ``~3`` when two entries give
one id (``alice/`` and ``alice.zip``: never merged).  The learning platforms'
own layouts (Moodle's folders, Canvas's flat files) are read by
``autograder.batch.platforms``, which builds the same :class:`Entry`: one per
student, with every upload of theirs as a :class:`Source`.

What is in an entry is searched the same way whatever the platform: folders
are walked, the zips in them opened one level deep (a zip inside a zip is
named, never opened), a zip whose paths use Windows backslashes is read with
them as folders, and another kind of archive (RAR, 7z, tar, gzip) is named as
such, never taken for a missing file.  A declared file is found by its name
anywhere inside (so an extra top folder, as a zip tool makes, does no harm).
When several files could be it, :func:`choose` takes the most plausible by
one rule, and the feedback names the one graded and the ones ignored (and,
between a platform's uploads, which came last and what said so:
:func:`upload_order`).  Only
declared files are staged: a student's ``conftest.py`` or ``sitecustomize.py``
never reaches the grader or the worker.

Entries are untrusted.  :func:`walk` is the one way a submission tree is
read: breadth first and iterative, bounded in depth and in entries, never
following a link and never opening anything but a regular file.  Whatever
goes wrong while staging one entry (a damaged zip, an unreadable folder, a
name that is not UTF-8) becomes that entry's problem, never the batch's.
A zip is opened only when its end record lists at most
:data:`MAX_ZIP_MEMBERS` members (:func:`open_zip`: zipfile reads a whole
listing first).  Every loop over what an entry holds checks the entry's CPU budget
(``core.untrusted.check``: the batch reads each entry within
``untrusted.budget``), and nothing here runs a pattern over a name that is
not a file system's (at most 255 bytes).
"""

from __future__ import annotations

import calendar
import contextlib
import hashlib
import os
import re
import stat
import unicodedata
import zipfile
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

from autograder.core.limits import MAX_FILE_BYTES  # noqa: F401  (staging.MAX_FILE_BYTES: its limit)
from autograder.core import untrusted
from autograder.core.files import text_bytes
from autograder.core.i18n import N_, _
from autograder.core.untrusted import Unreadable  # noqa: F401  (staging.Unreadable: a file not read on purpose)

MAX_DEPTH = 64  # folders nested deeper than this inside an entry are not searched
MAX_ENTRIES = 10_000  # files and folders (or zip members) looked at per entry
# a zip listing more members than this is not opened: zipfile reads its whole listing first, about 1 KiB of
# memory and 6 us per member (a 100 MB zip of empty members: a million, 1 GiB, 6 s)
MAX_ZIP_MEMBERS = 100_000
MAX_PROBLEMS = 5  # problems kept from one walk; the rest are counted
MAX_ID_BYTES = 200  # a longer id is cut and given a hash, so results/<id>.json can be written
IGNORED_PARTS = {"__MACOSX", "__pycache__", ".ipynb_checkpoints"}


@dataclass(frozen=True)
class Source:
    """One upload of an entry, as its platform found it.

    ``path``: a folder, a zip, another archive or a plain file.  ``label``: how
    the student knows it, the start of every ``where`` found in it ("" for an
    entry's own folder or zip: the names inside it; a Canvas file: its name in the
    export).  ``name``: for a plain file, the name the student gave it ("" : its
    own).  ``order``: the platform's upload order, higher is later (Canvas's file
    id; 0 when none is known).  ``renamed``: how the platform renames an upload
    whose name is taken (groups ``stem``, ``n``, ``ext``: Canvas's ``x-1.py``,
    Moodle's ``x (1).py``); such a file also stands for ``stem + ext``, and with
    ``renamed_is_order`` its ``n`` is its order (Moodle: nothing better is known),
    which ``order_note`` (a message template with ``{file}`` and ``{graded}``)
    then says whenever it decides a choice.  ``times``: what the modification times
    of its files are (:data:`DOWNLOAD` or :data:`FOLDER`: the platform's upload times,
    read by :func:`upload_order`; "" : nothing, as for a plain folder, whose times the
    rule never reads)."""
    path: Path
    label: str = ""
    name: str = ""
    order: int = 0
    renamed: re.Pattern | None = None
    renamed_is_order: bool = False
    order_note: str = ""
    times: str = ""


@dataclass(frozen=True)
class Entry:
    id: str
    path: Path  # the folder or file it is known by (its first upload)
    sources: tuple[Source, ...] = ()  # every upload of it (none: ``path`` is the only one)
    collides_with: str = ""  # the id another entry had first: two entries gave this one name
    notes: tuple[str, ...] = ()  # what its platform says of it (two folders merged into one)
    # what its platform's names put in doubt (whose upload it is): its row's problems, said to the student too
    problems: tuple[str, ...] = ()

    def uploads(self) -> tuple[Source, ...]:
        return self.sources or (Source(self.path),)


@dataclass
class Staged:
    directory: Path
    problems: list[str] = field(default_factory=list)
    sha256: str = ""
    notes: list[str] = field(default_factory=list)  # which file was graded where there was a choice
    # ``optional`` files found (a notebook with written answers): read, never given to the grader
    # nor hashed (the tests' score does not depend on them)
    extra: dict[str, bytes] = field(default_factory=dict)
    found: list[str] = field(default_factory=list)  # the declared files staged (none: nothing gradable)
    # ``data`` files there that could not be taken (too large, unreadable) -> why: their reader says what it costs
    unread: dict[str, str] = field(default_factory=dict)

    def add_problems(self, problems: list[str]) -> None:
        """Problems found once staged (a notebook that is no notebook): this entry's, and in its
        hash like staging's own (a different problem is a different submission: a rerun regrades)."""
        if problems:
            self.problems += problems
            h = hashlib.sha256(self.sha256.encode())
            for problem in problems:
                h.update(text_bytes(problem) + b"\0")
            self.sha256 = h.hexdigest()


@dataclass
class Tree:
    """What :func:`walk` (or a zip's listing) found: regular files and their sizes,
    other things (links, pipes, devices) by name, and what could not be searched."""
    files: dict[str, int] = field(default_factory=dict)  # relative POSIX name -> size in bytes
    other: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)
    dropped: int = 0  # problems beyond MAX_PROBLEMS
    unreadable: list[str] = field(default_factory=list)  # archives that could not be opened, said as such
    notes: list[str] = field(default_factory=list)  # how something was read (a zip's backslashes)

    def problem(self, text: str) -> None:
        if text in self.problems:
            return
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)
        else:
            self.dropped += 1

    def all_problems(self) -> list[str]:
        more = [_("... and {count} more problems like these").format(count=self.dropped)] if self.dropped else []
        return self.problems + more

    def archive(self, text: str) -> None:
        """An archive that could not be opened: a problem, and the reason any file is not found."""
        self.problem(text)
        if text not in self.unreadable:
            self.unreadable.append(text)

    def merge(self, other: Tree) -> None:
        self.files.update(other.files)
        self.other |= other.other
        for p in other.problems:
            self.problem(p)
        self.dropped += other.dropped
        self.unreadable += [u for u in other.unreadable if u not in self.unreadable]
        self.notes += [n for n in other.notes if n not in self.notes]


def printable(name: str, limit: int = 120) -> str:
    """``name`` as one line of valid UTF-8: undecodable bytes and control characters as escapes.

    ``name`` may be a file name (its undecodable bytes as ``os.fsdecode``'s surrogates) or any
    student text (an exception's message), whose lone surrogates no file system name holds."""
    try:
        raw = os.fsencode(name)
    except UnicodeEncodeError:  # a surrogate that is no escaped byte ("\ud800"): as its escape
        raw = name.encode("utf-8", "backslashreplace")
    text = raw.decode("utf-8", "backslashreplace")
    text = "".join(c if unicodedata.category(c)[0] != "C" else c.encode("unicode_escape").decode("ascii")
                   for c in text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def describe(exc: BaseException) -> str:
    """One line that says what went wrong, without the grader's own paths."""
    import zlib

    if isinstance(exc, Unreadable):
        return str(exc)
    if isinstance(exc, RecursionError):
        return _("folders are nested too deep")
    if isinstance(exc, UnicodeError):
        return _("a file name is not valid UTF-8")
    if isinstance(exc, (zipfile.BadZipFile, zlib.error, EOFError)):
        return _("the zip file is damaged or incomplete ({detail})").format(detail=printable(str(exc), 80))
    if isinstance(exc, PermissionError):
        return _("permission denied")
    if isinstance(exc, OSError) and exc.strerror:
        return printable(exc.strerror, 80)
    return printable(f"{type(exc).__name__}: {exc}", 160)


def entry_id(name: str) -> str:
    """The id of an entry named ``name`` (``.zip`` already removed): text any file and CSV can hold."""
    text = printable(name, limit=10**6)
    if len(text.encode()) > MAX_ID_BYTES:
        digest = hashlib.sha256(os.fsencode(name)).hexdigest()[:10]
        text = text.encode()[:MAX_ID_BYTES - 11].decode("utf-8", "ignore") + "~" + digest
    return text


# Archives by their first bytes (``b"ustar"`` lies at byte 257 of a tar): only zips are opened.
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
ARCHIVE_MAGIC = (  # (first bytes, what the student is told it is)
    (b"Rar!\x1a\x07", N_("a RAR archive")),
    (b"7z\xbc\xaf\x27\x1c", N_("a 7z archive")),
    (b"\x1f\x8b", N_("a gzip (.gz, .tgz) archive")),
    (b"BZh", N_("a bzip2 archive")),
    (b"\xfd7zXZ\x00", N_("an xz archive")),
    (b"\x28\xb5\x2f\xfd", N_("a zstd archive")),
)
ARCHIVE_SUFFIXES = (".zip", ".rar", ".7z", ".tar", ".gz", ".tgz", ".bz2", ".tbz2", ".xz", ".txz", ".zst")


def is_archive_name(name: str) -> bool:
    """Named like an archive (``lab2.zip``, ``lab2.tar.gz``): what a folder's walk looks into."""
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def archive_kind(head: bytes) -> str:
    """``"zip"``, the (untranslated) name of another archive format, or ``""``: from a file's first 512 bytes."""
    if head.startswith(ZIP_MAGIC):
        return "zip"
    for magic, kind in ARCHIVE_MAGIC:
        if head.startswith(magic):
            return kind
    return N_("a tar archive") if head[257:262] == b"ustar" else ""


def not_opened(name: str, kind: str) -> str:
    """The problem of an archive the grader does not open, named as such."""
    return _("{name} is {kind}, which the grader does not open: hand in a .zip file").format(
        name=printable(name), kind=_(kind))


def discover(folder: Path) -> list[Entry]:
    """One entry per student folder, zip or other archive of ``folder``, sorted by name (the plain layout).

    Ids are unique: an id that two entries would share gets ``~2``, ``~3`` on
    the later ones, which record ``collides_with`` (the CLI and the summary
    warn: two entries are never merged into one)."""
    found = []
    with os.scandir(folder) as it:
        items = sorted(it, key=lambda e: e.name)
    for e in items:
        if e.name.startswith("."):
            continue
        try:
            is_dir = e.is_dir(follow_symlinks=False)
        except OSError:  # cannot even stat it: staging says why
            is_dir = False
        if is_dir:
            found.append((entry_id(e.name), Path(e.path)))
        elif is_archive_name(e.name):  # a RAR is an entry too: its row says it cannot be opened
            stem = e.name[:-len(next(x for x in (".tar.gz", ".tar.bz2", ".tar.xz", *ARCHIVE_SUFFIXES)
                                     if e.name.lower().endswith(x)))]
            found.append((entry_id(stem), Path(e.path)))
    return unique(found)


def same_id(ident: str) -> str:
    """What two ids a person (or a file system) cannot tell apart share: the same text after Unicode's
    NFC normalisation ("Ánh" typed precomposed or decomposed) and case folding (feedback/Alice.md and
    feedback/alice.md are one file on a case-insensitive disk)."""
    return unicodedata.normalize("NFC", ident).casefold()


def unique(found: Iterable[tuple]) -> list[Entry]:
    """Entries from (id, path[, sources, notes[, problems]]), sorted by id then by the path's bytes;
    an id given twice, or one that :func:`same_id` cannot tell from an earlier one, gets ``~2``,
    ``~3`` on the later ones (and ``collides_with``)."""
    rows = [(t + ((), (), ()))[:5] for t in found]
    out, taken = [], set()
    for base, path, sources, notes, problems in sorted(rows, key=lambda t: (t[0], os.fsencode(t[1].name))):
        ident, n = base, 1
        while same_id(ident) in taken:  # "alice/" and "alice.zip"; "bad\xff" and a folder named "bad\\xff"
            n += 1
            ident = f"{base}~{n}"
        taken.add(same_id(ident))
        out.append(Entry(ident, path, tuple(sources), collides_with=base if ident != base else "", notes=tuple(notes),
                         problems=tuple(problems)))
    return out


def walk(root: Path, *, max_depth: int | None = None, max_entries: int | None = None) -> Tree:
    """Every regular file under ``root``, breadth first, without recursion.

    Links are never followed (a link, pipe or device is listed in ``other``,
    never opened), folders nested deeper than ``max_depth`` are not entered,
    and the walk stops after ``max_entries`` files and folders.  What could
    not be searched is in ``problems``; nothing here raises for a bad tree.
    """
    max_depth = MAX_DEPTH if max_depth is None else max_depth
    max_entries = MAX_ENTRIES if max_entries is None else max_entries
    tree = Tree()
    queue: deque[tuple[str, str, int]] = deque([(os.fspath(root), "", 0)])
    seen = 0
    while queue:
        folder, rel, depth = queue.popleft()
        try:
            with os.scandir(folder) as it:
                for e in it:
                    seen += 1
                    untrusted.check()
                    if seen > max_entries:
                        tree.problem(_("the submission holds more than {count} files and folders; "
                                       "only the first {count} were searched").format(count=max_entries))
                        return tree
                    name = rel + e.name
                    try:
                        if e.is_dir(follow_symlinks=False):
                            if e.name in IGNORED_PARTS:
                                continue
                            if depth + 1 > max_depth:
                                tree.problem(_("folders nested more than {depth} levels deep were not searched")
                                             .format(depth=max_depth))
                                continue
                            queue.append((e.path, name + "/", depth + 1))
                        elif e.is_file(follow_symlinks=False):
                            tree.files[name] = e.stat(follow_symlinks=False).st_size
                        else:
                            tree.other.add(name)
                    except OSError as exc:
                        tree.problem(_("could not read {name}: {error}")
                                     .format(name=printable(name), error=describe(exc)))
        except OSError as exc:
            tree.problem(_("could not read folder {name}: {error}")
                         .format(name=printable(rel.rstrip("/") or "."), error=describe(exc)))
    return tree


def _zip_tree(infos: Iterable[zipfile.ZipInfo], max_depth: int | None = None, max_entries: int | None = None,
              label: str = "") -> tuple[Tree, dict[str, zipfile.ZipInfo]]:
    """A zip's listing under the same rules as :func:`walk` (its names are never paths here).

    A name written with backslashes (``lab2\\optimizers.py``: old Windows tools, against
    the zip format's rule of ``/``) is read with them as folders, and a note says so.
    A zip or another archive inside is listed as a problem: it is never opened.
    ``label`` names the zip in those sentences."""
    max_depth = MAX_DEPTH if max_depth is None else max_depth
    max_entries = MAX_ENTRIES if max_entries is None else max_entries
    tree, by_name = Tree(), {}
    for n, info in enumerate(infos):
        untrusted.check()
        if n >= max_entries:
            tree.problem(_("the submission holds more than {count} files and folders; "
                           "only the first {count} were searched").format(count=max_entries))
            break
        name = info.filename
        if "\\" in name:
            name = name.replace("\\", "/")
            note = _("{zip} writes its folders with backslashes (\\), as some Windows tools do: "
                     "they were read as folders").format(zip=printable(label))
            if note not in tree.notes:
                tree.notes.append(note)
        if info.is_dir() or name.endswith("/"):
            continue
        parts = PurePosixPath(name).parts
        if IGNORED_PARTS.intersection(parts):
            continue
        if len(parts) - 1 > max_depth:
            tree.problem(_("folders nested more than {depth} levels deep were not searched").format(depth=max_depth))
            continue
        kind = stat.S_IFMT(info.external_attr >> 16)
        if kind and kind != stat.S_IFREG:  # a link, pipe or device (0: a zip tool that keeps no modes)
            tree.other.add(name)
            continue
        if is_archive_name(name):
            tree.archive(_("{name} is an archive inside a zip, which the grader does not open: put all the "
                           "files in one zip").format(name=printable(f"{label}/{name}" if label else name)))
        tree.files[name] = info.file_size
        by_name[name] = info
    return tree, by_name


MAX_CANDIDATES = 20  # files of one declared name compared per entry (the rest are ignored, and said so)
DRAFT_WORDS = frozenset({"draft", "drafts", "old", "backup", "backups", "bak", "copy", "archive", "previous",
                         "prev", "tmp", "temp", "scratch", "test", "tests", "unused", "trash"})


@dataclass
class Candidate:
    """One place a declared file could come from: ``where`` is how the student knows it."""
    where: str  # "final/optimizers.py", "lab2.zip/optimizers.py", "smith_12_34_optimizers-1.py"
    size: int
    read: Callable[[], bytes]  # at most MAX_FILE_BYTES + 1 bytes
    order: int = 0  # the platform's upload order (Source.order): higher is later
    names: frozenset[str] = frozenset()  # the file names it stands for (default: the last part of ``where``)
    source: Source | None = None  # the upload it is in
    # where its platform's uploads are timed (Source.times): the upload it is in, as the student knows it,
    # and when it was made, per source of time (DOWNLOAD or FOLDER; STUDENT: its zip's own entry), in seconds
    upload: str = ""
    stamp: dict[str, float] = field(default_factory=dict)

    def __post_init__(self):
        self.names = self.names or frozenset({PurePosixPath(self.where).name})


# The sources of an upload's time, most trusted first (upload_order)
DOWNLOAD = "download"  # the entry time the platform wrote in its own download zip (unpacked here, times kept)
FOLDER = "folder"  # a file's modification time in a download the instructor unpacked (times kept or not)
STUDENT = "student"  # the time inside the student's own zip: their machine's clock, which they can set
# times closer than this order nothing: a zip's times have 2 s steps; a folder copied or unpacked without its
# times gets times seconds apart in copying order, never a minute (an upload again is minutes later, or more)
TIME_GAP = {DOWNLOAD: 0.0, FOLDER: 60.0, STUDENT: 0.0}
ORDER = "order"  # what decided, besides the times: the platform's numbering (Source.order, its renaming)
TIME_NOTES = {
    DOWNLOAD: N_("{file}: {graded} was graded as the latest upload, by the upload times in the platform's "
                 "download ({when}; ignored: {ignored})."),
    FOLDER: N_("{file}: {graded} was graded as the latest upload, by the files' times in the unpacked download "
               "({when}; ignored: {ignored})."),
    STUDENT: N_("{file}: the platform's download does not say which upload came last; {graded} was graded as the "
                "latest by the times inside the zips ({when}; ignored: {ignored}), which are the student's own "
                "clock. Check by hand if it matters."),
}
NO_ORDER = N_("{file}: the platform's download does not say which of these uploads came last ({uploads}); "
              "{graded} was graded by where it lies (the shallowest, then the first by name). Check by hand which one "
              "the student meant.")


@dataclass(frozen=True)
class Later:
    """How late one candidate's upload came, by each source of time (higher: later; equal: no order)."""
    platform: int = 0
    student: int = 0


def upload_order(candidates: list[Candidate]) -> tuple[list[Later], str]:
    """The order of the uploads ``candidates`` are in (one per candidate), and the platform's source
    of time that gave it ("" : none), for :func:`choose`'s rule 2.

    The platform's time decides first: :data:`DOWNLOAD`, the entry times of the platform's own
    download zip (Moodle writes each uploaded file's time there; ``platforms.unpacked`` keeps
    them as the files' times), else :data:`FOLDER`, the files' times in a download the instructor
    unpacked.  A folder copied or unpacked without its times has times seconds apart, in copying
    order: times closer than :data:`TIME_GAP` order nothing.  Then the platform's numbering
    (``Candidate.order``: Moodle's " (1)"), then :data:`STUDENT`, the times inside the student's
    own zips (forgeable: the row says so).  A source orders only when every upload in the choice
    has a time from it; files of one upload are never ordered by time (the old rule decides).
    Times are compared only with each other, never taken for the hand-in time."""
    uploads = {c.upload for c in candidates}
    if len(uploads) < 2 or "" in uploads:
        return [Later()] * len(candidates), ""
    kinds = {k for c in candidates for k in c.stamp if k != STUDENT}
    kind = kinds.pop() if len(kinds) == 1 else ""
    platform = _ranks([c.stamp.get(kind) for c in candidates], TIME_GAP.get(kind, 0.0)) if kind else None
    student = _ranks([c.stamp.get(STUDENT) for c in candidates], TIME_GAP[STUDENT])
    platform = platform or [0] * len(candidates)
    student = student or [0] * len(candidates)
    return [Later(p, q) for p, q in zip(platform, student)], kind if len(set(platform)) > 1 else ""


def _ranks(times: list[float | None], gap: float) -> list[int] | None:
    """Each time's rank, times within ``gap`` of the one before them sharing one (None: one is unknown)."""
    if any(t is None for t in times):
        return None
    rank, ranks, last = 0, {}, None
    for t in sorted(set(times)):
        if last is not None and t - last > gap:
            rank += 1
        ranks[t], last = rank, t
    return [ranks[t] for t in times]


def _stamp(src: Source, path: Path, member: zipfile.ZipInfo | None = None, at: dict | None = None) -> dict:
    """An upload's times where its platform's are known (``src.times``): its file's modification
    time, and a zip member's own (the student's clock); ``at``: the upload's, already read."""
    if not src.times:
        return {}
    stamp = dict(at) if at is not None else {}
    if at is None:
        with contextlib.suppress(OSError):
            stamp[src.times] = os.lstat(path).st_mtime
    if member is not None:
        with contextlib.suppress(ValueError, OverflowError):
            stamp[STUDENT] = calendar.timegm((*member.date_time, 0, 0, 0))
    return stamp


def _when(t: float | None) -> str:
    return "?" if t is None else datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _parts(where: str) -> tuple[str, ...]:
    return PurePosixPath(where).parts


def choose(candidates: list[Candidate], data: dict[int, bytes], stub: bytes | None) -> Candidate:
    """The most plausible of several files for one declared name, by this rule, in order:

    1. not an untouched copy of the stub (when the stub is known);
    2. the latest upload, by :func:`upload_order`: the platform's upload times
       (Moodle's, from its download), then its numbering (Canvas's file ids, which it
       gives in upload order; Moodle's " (1)" renaming, a guess the feedback says is
       one), then the times inside the student's zips (said to be the student's);
       nothing for the files of a plain folder or zip;
    3. the shallowest (fewest folders, a zip counting as one);
    4. not inside a folder named like a draft (``draft``, ``old``, ``backup``,
       ``copy``, ``archive``, ``tmp``, ``test``, ... : :data:`DRAFT_WORDS`);
    5. the first by name.

    It reads names, contents, the platform's own order and the platform's upload
    times, never a plain folder's file times (which copying or unzipping changes),
    so the same submission always gives the same choice.  ``data`` holds what could
    be read of each, by its index."""
    later, _kind = upload_order(candidates)
    return min(candidates, key=lambda c: _rank(c, data.get(candidates.index(c)), stub,
                                               later[candidates.index(c)]))


def _rank(c: Candidate, content: bytes | None, stub: bytes | None, later: Later = Later()) -> tuple:
    folders = [p.lower() for p in _parts(c.where)[:-1]]  # a flat file has none
    draft = any(p in DRAFT_WORDS or p.rstrip("0123456789_- ") in DRAFT_WORDS for p in folders)
    return (stub is not None and content == stub, -later.platform, -c.order, -later.student,
            len(_parts(c.where)), draft, c.where)


# what each place of _rank's tuple is, for the row's note on what decided a choice
_RANK_PLACES = ("stub", "platform", ORDER, STUDENT, "depth", "draft", "name")


def decided(f: str, candidates: list[Candidate], best: Candidate, data: dict[int, bytes], stub: bytes | None) -> str:
    """A sentence for the row (the student's language) on how ``best``, graded as the declared file
    ``f``, was told from the other uploads in the choice, where its platform's uploads are timed:
    which source of :func:`upload_order` decided, or that none could ("" : nothing to say: one
    upload, the stub decided, or a platform whose numbering is its order, as Canvas's)."""
    later, kind = upload_order(candidates)
    at = candidates.index(best)
    mine = _rank(best, data.get(at), stub, later[at])
    rivals = [i for i, c in enumerate(candidates) if c.upload != best.upload
              and _rank(c, data.get(i), stub, later[i])[0] == mine[0]]
    if not best.upload or not rivals:
        return ""
    place = max(next(k for k, (a, b) in enumerate(zip(mine, _rank(candidates[i], data.get(i), stub, later[i])))
                     if a != b) for i in rivals)
    what = _RANK_PLACES[place]
    ignored = ", ".join(f"{printable(candidates[i].where)} {_when(candidates[i].stamp.get(kind or STUDENT))}"
                        for i in rivals)
    if what == "platform":
        return _(TIME_NOTES[kind]).format(file=f, graded=printable(best.where), when=_when(best.stamp.get(kind)),
                                          ignored=ignored)
    if what == ORDER:
        note = best.source.order_note if best.source and best.source.renamed_is_order else ""
        return _(note).format(file=f, graded=printable(best.where)) if note else ""
    if what == STUDENT:
        return _(TIME_NOTES[STUDENT]).format(file=f, graded=printable(best.where), when=_when(best.stamp.get(STUDENT)),
                                             ignored=ignored)
    uploads = ", ".join(printable(u) for u in sorted({best.upload, *(candidates[i].upload for i in rivals)}))
    return _(NO_ORDER).format(file=f, uploads=uploads, graded=printable(best.where))


def stage(source: Path | Entry, files: tuple[str, ...], dest: Path, *,
          stubs: dict[str, bytes] | None = None, optional: tuple[str, ...] = (),
          data: tuple[str, ...] = ()) -> Staged:
    """Copy the declared ``files`` of one submission into ``dest`` (flat).

    ``source`` is an :class:`Entry` (every upload of one student) or the path of a
    folder or zip.  ``stubs`` (file name -> the stub's bytes) lets :func:`choose`
    pass over an untouched stub when the student left one beside their work.
    ``optional`` files are chosen by the same rule into ``extra`` (a missing one is
    no problem); so are ``data`` files (``predictions.json``), read only by a reader of
    their own: one that is there but cannot be taken goes into ``unread`` with why,
    never into ``problems`` (its reader says what that costs).  Never raises for a bad
    submission: whatever went wrong is in ``problems`` and the files it kept from being
    staged are missing; an upload that could not be opened is named as such, never taken
    for a missing file."""
    entry = source if isinstance(source, Entry) else Entry("", Path(source))
    st = Staged(dest, problems=list(entry.problems), notes=list(entry.notes))
    try:
        dest.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as stack:
            tree, found, failed = Tree(), [], []  # failed: the uploads that could not be opened
            for src in entry.uploads():
                _source_candidates(src, stack, tree, found, failed)
            missing = _take(tree, found, files, st, stubs or {})
            _take(tree, found, optional, st, stubs or {}, required=False)
            _take(tree, found, data, st, stubs or {}, required=False, quiet=True)
            if not missing:  # an upload that could not be opened, beside one that was graded: said all the same
                st.notes += [f for f in failed if f not in st.notes]
            st.notes += [n for n in tree.notes if n not in st.notes]
    except Exception as exc:  # noqa: BLE001  (anything at all: this entry's problem, not the batch's)
        st.problems.append(_("could not read {name}: {error}").format(name=printable(entry.path.name),
                                                                      error=describe(exc)))
    h = hashlib.sha256()
    for f in files:
        p = dest / f
        h.update(f.encode() + b"\0" + (p.read_bytes() if p.is_file() else b"<missing>") + b"\0")
    for problem in st.problems:  # a different problem is a different submission (a rerun regrades it)
        h.update(text_bytes(problem) + b"\0")
    st.sha256 = h.hexdigest()
    return st


def open_zip(f) -> zipfile.ZipFile:
    """The zip in the open file ``f``, once its end record (zip64's too, read by zipfile's own
    reader of it) says it lists at most :data:`MAX_ZIP_MEMBERS` members; else :class:`Unreadable`."""
    end = zipfile._EndRecData(f)  # noqa: SLF001  (what ZipFile reads first; a damaged zip: ZipFile says so)
    listed = end[zipfile._ECD_ENTRIES_TOTAL] if end else 0  # noqa: SLF001
    if listed > MAX_ZIP_MEMBERS:
        raise Unreadable(_("it lists {count} files, more than the {limit} a zip handed in may hold, so it was "
                           "not opened").format(count=listed, limit=MAX_ZIP_MEMBERS))
    return zipfile.ZipFile(f)


def _head(path: Path) -> bytes:
    """The first 512 bytes of a regular file (never a link, pipe or device)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Unreadable(_("not a regular file"))
        return os.pread(fd, 512, 0)
    finally:
        os.close(fd)


def _failed(tree: Tree, failed: list[str], text: str) -> None:
    tree.archive(text)
    failed.append(text)


def _source_candidates(src: Source, stack: contextlib.ExitStack, tree: Tree, found: list[Candidate],
                       failed: list[str]) -> None:
    """What one upload holds: a folder's files (and its zips' members, one level deep), a zip's
    members, or a plain file; an archive that is not a zip is a problem that names it (and is
    added to ``failed``, as is an upload that could not be read at all)."""
    path = src.path
    shown = src.label or path.name
    try:
        is_dir = stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError as exc:
        _failed(tree, failed, _("could not read {name}: {error}").format(name=printable(shown), error=describe(exc)))
        return
    if is_dir:
        _dir_candidates(src, stack, tree, found, failed)
        return
    try:
        head = _head(path)
    except Exception as exc:  # noqa: BLE001  (a link, a device, an unreadable file: this upload's problem)
        _failed(tree, failed, _("could not read {name}: {error}").format(name=printable(shown), error=describe(exc)))
        return
    kind = archive_kind(head)
    if kind == "zip" or (not kind and path.name.lower().endswith(".zip")):
        try:
            f = stack.enter_context(os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK), "rb"))
            _zip_candidates(stack.enter_context(open_zip(f)), src, src.label, shown, tree, found,
                            upload=shown if src.times else "", at=_stamp(src, path))
        except Exception as exc:  # noqa: BLE001  (a damaged zip: named as such)
            _failed(tree, failed, _("could not read {name}: {error}").format(name=printable(shown),
                                                                             error=describe(exc)))
    elif kind:
        _failed(tree, failed, not_opened(shown, kind))
    else:
        size = len(head) if len(head) < 512 else os.lstat(path).st_size
        names, n = _names(src.name or path.name, src)
        found.append(Candidate(src.label or printable(path.name), size, lambda: _read_regular(path),
                               n if n is not None and src.renamed_is_order else src.order, names, src,
                               upload=src.label or printable(path.name) if src.times else "",
                               stamp=_stamp(src, path)))


def _names(name: str, src: Source) -> tuple[frozenset[str], int | None]:
    """The names a file of ``src`` stands for, and the upload order its renaming gives (None: none)."""
    m = src.renamed.match(name) if src.renamed else None
    if not m:
        return frozenset({name}), None
    return frozenset({name, m["stem"] + m["ext"]}), int(m["n"])


def _dir_candidates(src: Source, stack: contextlib.ExitStack, tree: Tree, found: list[Candidate],
                    failed: list[str]) -> None:
    """The folder's files, and the members of the zips in it, one level deep (Moodle's folders)."""
    root, prefix = src.path, src.label + "/" if src.label else ""
    walked = walk(root)
    tree.merge(Tree(other={prefix + o for o in walked.other}, problems=walked.problems, dropped=walked.dropped))
    for name, size in walked.files.items():
        untrusted.check()
        names, n = _names(PurePosixPath(name).name, src) if "/" not in name else (frozenset(), None)
        order = n if (n is not None and src.renamed_is_order) else src.order
        if not is_archive_name(name):
            tree.files[prefix + name] = size
            found.append(Candidate(prefix + name, size, lambda name=name: _read_regular(root / name), order,
                                   names, src, upload=prefix + name if src.times else "",
                                   stamp=_stamp(src, root / name)))
            continue
        try:  # an archive in the folder: a zip is opened (one level), another kind named
            kind = archive_kind(_head(root / name))
            if kind and kind != "zip":
                _failed(tree, failed, not_opened(prefix + name, kind))
                continue
            fd = os.open(root / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            f = stack.enter_context(os.fdopen(fd, "rb"))
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                continue
            z = stack.enter_context(open_zip(f))
            inner = Source(root / name, prefix + name, order=order, order_note=src.order_note if n is not None else "",
                           renamed_is_order=src.renamed_is_order and n is not None, times=src.times)
            _zip_candidates(z, inner, prefix + name, prefix + name, tree, found,
                            upload=prefix + name if src.times else "", at=_stamp(src, root / name))
        except Exception as exc:  # noqa: BLE001  (one bad zip in the folder: said, the rest still searched)
            _failed(tree, failed, _("could not read {name}: {error}").format(name=printable(prefix + name),
                                                                             error=describe(exc)))


def _zip_candidates(z: zipfile.ZipFile, src: Source, label: str, shown: str, tree: Tree,
                    found: list[Candidate], upload: str = "", at: dict | None = None) -> None:
    """The zip's members as candidates, under ``label/`` ("" : their own names); ``shown``: the zip's name;
    ``upload`` and ``at``: the upload the zip is and its times, where its platform's are known."""
    inner, infos = _zip_tree(z.infolist(), label=shown)
    prefix = label + "/" if label else ""
    tree.merge(Tree(other={prefix + o for o in inner.other}, problems=inner.problems, dropped=inner.dropped,
                    unreadable=inner.unreadable, notes=inner.notes))

    def read(info: zipfile.ZipInfo) -> bytes:
        if info.flag_bits & 0x1:
            raise Unreadable(_("it is encrypted with a password"))
        with z.open(info) as src_:  # bounded read: a zip bomb stops here
            return src_.read(MAX_FILE_BYTES + 1)

    # the student's time of the whole zip (its newest member): members of one upload are never ordered by time
    newest = max(infos.values(), key=lambda i: i.date_time, default=None)
    stamp = _stamp(src, src.path, newest, at or {}) if upload else {}
    for name, size in inner.files.items():
        tree.files[prefix + name] = size
        found.append(Candidate(prefix + name, size, lambda info=infos[name]: read(info), src.order, source=src,
                               upload=upload, stamp=stamp))


def _take(tree: Tree, found: list[Candidate], files, st: Staged, stubs: dict[str, bytes],
          required: bool = True, quiet: bool = False) -> list[str]:
    """Stage each declared file from the candidates ``found`` (see :func:`choose`); the ones
    that could not be staged.

    ``required=False``: the files are optional (into ``st.extra``): a missing one is
    no problem, but one that is there and cannot be taken (too large, unreadable) is
    (a notebook's written answers are marked by hand: the gradebook must say why none are);
    with ``quiet`` (data files) it goes into ``st.unread`` with why instead."""
    problems = st.problems
    first = len(problems)
    not_staged = []

    def refuse(f: str, problem: str, why: str) -> None:
        not_staged.append(f)
        if quiet:
            st.unread[f] = why
        else:
            problems.append(problem)

    too_large = _(untrusted.TOO_LARGE).format(mib=MAX_FILE_BYTES // 2**20)
    for f in files:
        untrusted.check()
        matches = sorted((c for c in found if f in c.names
                          and not IGNORED_PARTS.intersection(_parts(c.where))), key=lambda c: c.where)
        if not matches and not required:
            continue
        if not matches:
            not_staged.append(f)
            if any(PurePosixPath(o).name == f for o in tree.other):
                st.problems.append(_("file {file} is not a regular file (a link, pipe or device), so it was not read")
                                   .format(file=f))
            elif tree.unreadable:  # an archive could not be opened: that is the reason, not a missing file
                st.problems.append(_("file {file} was not found in the part of the submission that could be read")
                                   .format(file=f))
            else:
                st.problems.append(_("file {file} is missing from the submission").format(file=f))
            continue
        matches = matches[:MAX_CANDIDATES]
        data, failures = {}, {}
        for i, c in enumerate(matches if len(matches) > 1 else ()):  # only a choice needs every candidate's contents
            untrusted.check()
            try:
                data[i] = c.read() if c.size <= MAX_FILE_BYTES else b""
            except Exception as exc:  # noqa: BLE001
                failures[i] = exc
        best = choose(matches, data, stubs.get(f)) if len(matches) > 1 else matches[0]
        at = matches.index(best)
        if len(matches) > 1:
            st.notes.append(_("{file}: graded {graded}; ignored {ignored}").format(
                file=f, graded=printable(best.where), ignored=", ".join(printable(c.where) for c in matches
                                                                      if c is not best)))
            why = decided(f, matches, best, data, stubs.get(f))  # which upload came last, and who says so
            if why:
                st.notes.append(why)
        if best.size > MAX_FILE_BYTES:
            refuse(f, _("file {file} is larger than {mib} MiB").format(file=f, mib=MAX_FILE_BYTES // 2**20), too_large)
            continue
        try:
            if at in failures:
                raise failures[at]
            content = data[at] if at in data else best.read()
        except Exception as exc:  # noqa: BLE001  (a damaged member, an unreadable file: that file is missing)
            refuse(f, _("could not read {file} from {name}: {error}")
                   .format(file=printable(best.where), name=printable(f), error=describe(exc)), describe(exc))
            continue
        if len(content) > MAX_FILE_BYTES:
            refuse(f, _("file {file} is larger than {mib} MiB").format(file=f, mib=MAX_FILE_BYTES // 2**20), too_large)
            continue
        if required:
            (st.directory / f).write_bytes(content)
            st.found.append(f)
        else:
            st.extra[f] = content
    if required and len(st.problems) > first:  # something is missing: say first what kept it from being found
        st.problems[first:first] = tree.all_problems()
    return not_staged


def _read_regular(path: Path) -> bytes:
    """At most MAX_FILE_BYTES + 1 bytes of a regular file; never a link, pipe or device."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Unreadable(_("not a regular file"))
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
