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
one rule, and the feedback names the one graded and the ones ignored.  Only
declared files are staged: a student's ``conftest.py`` or ``sitecustomize.py``
never reaches the grader or the worker.

Entries are untrusted.  :func:`walk` is the one way a submission tree is
read: breadth first and iterative, bounded in depth and in entries, never
following a link and never opening anything but a regular file.  Whatever
goes wrong while staging one entry (a damaged zip, an unreadable folder, a
name that is not UTF-8) becomes that entry's problem, never the batch's.
"""

from __future__ import annotations

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
from pathlib import Path, PurePosixPath

from autograder.core.limits import MAX_FILE_BYTES  # noqa: F401  (staging.MAX_FILE_BYTES: its limit)
from autograder.core.files import text_bytes
from autograder.core.i18n import N_, _

MAX_DEPTH = 64  # folders nested deeper than this inside an entry are not searched
MAX_ENTRIES = 10_000  # files and folders (or zip members) looked at per entry
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
    then says whenever it decides a choice."""
    path: Path
    label: str = ""
    name: str = ""
    order: int = 0
    renamed: re.Pattern | None = None
    renamed_is_order: bool = False
    order_note: str = ""


@dataclass(frozen=True)
class Entry:
    id: str
    path: Path  # the folder or file it is known by (its first upload)
    sources: tuple[Source, ...] = ()  # every upload of it (none: ``path`` is the only one)
    collides_with: str = ""  # the id another entry had first: two entries gave this one name
    notes: tuple[str, ...] = ()  # what its platform says of it (two folders merged into one)

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


class Unreadable(Exception):
    """A file that is not read on purpose; its message is already the student's."""


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


def unique(found: Iterable[tuple[str, Path]] | Iterable[tuple[str, Path, tuple[Source, ...], tuple[str, ...]]]
           ) -> list[Entry]:
    """Entries from (id, path[, sources, notes]), sorted by id then by the path's bytes; an id
    given twice gets ``~2``, ``~3`` on the later ones (and ``collides_with``)."""
    rows = [(t + ((), ()))[:4] for t in found]
    out, taken = [], set()
    for base, path, sources, notes in sorted(rows, key=lambda t: (t[0], os.fsencode(t[1].name))):
        ident, n = base, 1
        while ident in taken:  # "alice/" and "alice.zip"; "bad\xff" and a folder named "bad\\xff"
            n += 1
            ident = f"{base}~{n}"
        taken.add(ident)
        out.append(Entry(ident, path, tuple(sources), collides_with=base if ident != base else "", notes=tuple(notes)))
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

    def __post_init__(self):
        self.names = self.names or frozenset({PurePosixPath(self.where).name})


def _parts(where: str) -> tuple[str, ...]:
    return PurePosixPath(where).parts


def choose(candidates: list[Candidate], data: dict[int, bytes], stub: bytes | None) -> Candidate:
    """The most plausible of several files for one declared name, by this rule, in order:

    1. not an untouched copy of the stub (when the stub is known);
    2. the latest upload, by the platform's order (Canvas's file ids, which it gives
       in upload order; Moodle's " (1)" renaming, a guess the feedback says is one);
       the same for every file of a plain folder or zip;
    3. the shallowest (fewest folders, a zip counting as one);
    4. not inside a folder named like a draft (``draft``, ``old``, ``backup``,
       ``copy``, ``archive``, ``tmp``, ``test``, ... : :data:`DRAFT_WORDS`);
    5. the first by name.

    It reads only names, contents and the platform's own order, never file times
    (which copying or unzipping changes), so the same submission always gives the
    same choice.  ``data`` holds what could be read of each, by its index."""
    return min(candidates, key=lambda c: _rank(c, data.get(candidates.index(c)), stub))


def _rank(c: Candidate, content: bytes | None, stub: bytes | None) -> tuple:
    folders = [p.lower() for p in _parts(c.where)[:-1]]  # a flat file has none
    draft = any(p in DRAFT_WORDS or p.rstrip("0123456789_- ") in DRAFT_WORDS for p in folders)
    return (stub is not None and content == stub, -c.order, len(_parts(c.where)), draft, c.where)


def stage(source: Path | Entry, files: tuple[str, ...], dest: Path, *,
          stubs: dict[str, bytes] | None = None, optional: tuple[str, ...] = ()) -> Staged:
    """Copy the declared ``files`` of one submission into ``dest`` (flat).

    ``source`` is an :class:`Entry` (every upload of one student) or the path of a
    folder or zip.  ``stubs`` (file name -> the stub's bytes) lets :func:`choose`
    pass over an untouched stub when the student left one beside their work.
    ``optional`` files are chosen by the same rule into ``extra`` (a missing one is
    no problem).  Never raises for a bad submission: whatever went wrong is in
    ``problems`` and the files it kept from being staged are missing; an upload that
    could not be opened is named as such, never taken for a missing file."""
    entry = source if isinstance(source, Entry) else Entry("", Path(source))
    st = Staged(dest, notes=list(entry.notes))
    try:
        dest.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as stack:
            tree, found, failed = Tree(), [], []  # failed: the uploads that could not be opened
            for src in entry.uploads():
                _source_candidates(src, stack, tree, found, failed)
            missing = _take(tree, found, files, st, stubs or {})
            _take(tree, found, optional, st, stubs or {}, required=False)
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
            _zip_candidates(stack.enter_context(zipfile.ZipFile(f)), src, src.label, shown, tree, found)
        except Exception as exc:  # noqa: BLE001  (a damaged zip: named as such)
            _failed(tree, failed, _("could not read {name}: {error}").format(name=printable(shown),
                                                                             error=describe(exc)))
    elif kind:
        _failed(tree, failed, not_opened(shown, kind))
    else:
        size = len(head) if len(head) < 512 else os.lstat(path).st_size
        names, n = _names(src.name or path.name, src)
        found.append(Candidate(src.label or printable(path.name), size, lambda: _read_regular(path),
                               n if n is not None and src.renamed_is_order else src.order, names, src))


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
        names, n = _names(PurePosixPath(name).name, src) if "/" not in name else (frozenset(), None)
        order = n if (n is not None and src.renamed_is_order) else src.order
        if not is_archive_name(name):
            tree.files[prefix + name] = size
            found.append(Candidate(prefix + name, size, lambda name=name: _read_regular(root / name), order,
                                   names, src))
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
            z = stack.enter_context(zipfile.ZipFile(f))
            inner = Source(root / name, prefix + name, order=order, order_note=src.order_note if n is not None else "",
                           renamed_is_order=src.renamed_is_order and n is not None)
            _zip_candidates(z, inner, prefix + name, prefix + name, tree, found)
        except Exception as exc:  # noqa: BLE001  (one bad zip in the folder: said, the rest still searched)
            _failed(tree, failed, _("could not read {name}: {error}").format(name=printable(prefix + name),
                                                                             error=describe(exc)))


def _zip_candidates(z: zipfile.ZipFile, src: Source, label: str, shown: str, tree: Tree,
                    found: list[Candidate]) -> None:
    """The zip's members as candidates, under ``label/`` ("" : their own names); ``shown``: the zip's name."""
    inner, infos = _zip_tree(z.infolist(), label=shown)
    prefix = label + "/" if label else ""
    tree.merge(Tree(other={prefix + o for o in inner.other}, problems=inner.problems, dropped=inner.dropped,
                    unreadable=inner.unreadable, notes=inner.notes))

    def read(info: zipfile.ZipInfo) -> bytes:
        if info.flag_bits & 0x1:
            raise Unreadable(_("it is encrypted with a password"))
        with z.open(info) as src_:  # bounded read: a zip bomb stops here
            return src_.read(MAX_FILE_BYTES + 1)

    for name, size in inner.files.items():
        tree.files[prefix + name] = size
        found.append(Candidate(prefix + name, size, lambda info=infos[name]: read(info), src.order, source=src))


def _take(tree: Tree, found: list[Candidate], files, st: Staged, stubs: dict[str, bytes],
          required: bool = True) -> list[str]:
    """Stage each declared file from the candidates ``found`` (see :func:`choose`); the ones
    that could not be staged.

    ``required=False``: the files are optional (into ``st.extra``): a missing one is
    no problem, but one that is there and cannot be taken (too large, unreadable) is
    (a notebook's written answers are marked by hand: the gradebook must say why none are)."""
    problems = st.problems
    first = len(problems)
    not_staged = []
    for f in files:
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
            guessed = best.source.order_note if best.source and best.source.renamed_is_order else ""
            stub = stubs.get(f)
            if guessed and any(c.order != best.order and _rank(c, data.get(i), stub)[0] == _rank(best, data.get(at),
                                                                                                stub)[0]
                               for i, c in enumerate(matches)):
                st.notes.append(_(guessed).format(file=f, graded=printable(best.where)))
        if best.size > MAX_FILE_BYTES:
            not_staged.append(f)
            problems.append(_("file {file} is larger than {mib} MiB").format(file=f, mib=MAX_FILE_BYTES // 2**20))
            continue
        try:
            if at in failures:
                raise failures[at]
            content = data[at] if at in data else best.read()
        except Exception as exc:  # noqa: BLE001  (a damaged member, an unreadable file: that file is missing)
            not_staged.append(f)
            problems.append(_("could not read {file} from {name}: {error}")
                            .format(file=printable(best.where), name=printable(f), error=describe(exc)))
            continue
        if len(content) > MAX_FILE_BYTES:
            not_staged.append(f)
            problems.append(_("file {file} is larger than {mib} MiB").format(file=f, mib=MAX_FILE_BYTES // 2**20))
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
