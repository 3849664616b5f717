"""Find submissions in a folder and stage each one's declared files.

A submissions folder holds one entry per student, in any of the layouts
learning platforms export (``docs/intake.md``):

* a folder or a ``.zip`` (Gradescope, a hand-made batch); the submission id is
  its name without ``.zip``, as plain text (bytes that are not UTF-8 and
  control characters are written as escapes), made unique with ``~2``, ``~3``
  when two entries give one id (``alice/`` and ``alice.zip``: never merged);
* a folder holding zips (Moodle's "download all": ``<name>_<id>_assignsubmission_file_/lab.zip``):
  the zips inside a folder are searched too, one level deep (a zip inside a
  zip is not opened);
* flat files named ``<name>[_LATE]_<userid>_<submissionid>_<file>`` (Canvas),
  grouped into one entry per student, ``<name>_<userid>``; a resubmitted file
  carries a suffix (``optimizers-1.py``) and the highest one is the latest.

A declared file is found by its name anywhere inside the entry (so an extra
top folder, as a zip tool makes, does no harm).  When several files could be
it, :func:`choose` takes the most plausible by one rule, and the feedback
names the one graded and the ones ignored.  Only declared files are staged:
a student's ``conftest.py`` or ``sitecustomize.py`` never reaches the grader
or the worker.

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

from autograder.calls.limits import MAX_FILE_BYTES  # noqa: F401  (staging.MAX_FILE_BYTES: its limit)
from autograder.core.files import text_bytes
from autograder.core.i18n import _

MAX_DEPTH = 64  # folders nested deeper than this inside an entry are not searched
MAX_ENTRIES = 10_000  # files and folders (or zip members) looked at per entry
MAX_PROBLEMS = 5  # problems kept from one walk; the rest are counted
MAX_ID_BYTES = 200  # a longer id is cut and given a hash, so results/<id>.json can be written
IGNORED_PARTS = {"__MACOSX", "__pycache__", ".ipynb_checkpoints"}


@dataclass(frozen=True)
class Entry:
    id: str
    path: Path  # the folder or zip; for flat files, the first of them
    files: tuple[Path, ...] = ()  # flat files (Canvas), when the entry is a group of them
    collides_with: str = ""  # the id another entry had first: two entries gave this one name
    late: bool = False  # the platform marked it late (Canvas's LATE)
    canvas_user: str = ""  # Canvas's user id, from its file names (the grade import matches on it)


@dataclass
class Staged:
    directory: Path
    problems: list[str] = field(default_factory=list)
    sha256: str = ""
    notes: list[str] = field(default_factory=list)  # which file was graded where there was a choice
    # ``optional`` files found (a notebook with written answers): read, never given to the grader
    # nor hashed (the tests' score does not depend on them)
    extra: dict[str, bytes] = field(default_factory=dict)

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


CANVAS_NAME = re.compile(r"^(?P<student>[^_/]+?)(?P<late>_LATE)?_(?P<user>\d+)_(?P<sub>\d+)_(?P<file>.+)$")
RESUBMITTED = re.compile(r"^(?P<stem>.+?)-(?P<n>\d+)(?P<ext>\.[^.]+)$")  # optimizers-1.py: Canvas's resubmission


def original_name(name: str) -> tuple[str, int]:
    """A Canvas file's name as the student uploaded it, and its resubmission number (0: the first)."""
    m = CANVAS_NAME.match(name)
    base = m["file"] if m else name
    r = RESUBMITTED.match(base)
    return (r["stem"] + r["ext"], int(r["n"])) if r else (base, 0)


def discover(folder: Path) -> list[Entry]:
    """One entry per student folder, zip, or group of Canvas flat files, sorted by name.

    Ids are unique: an id that two entries would share gets ``~2``, ``~3`` on
    the later ones, which record ``collides_with`` (the CLI and the summary
    warn: two entries are never merged into one)."""
    entries, taken = [], {}
    groups: dict[str, list[Path]] = {}
    late: set[str] = set()
    users: dict[str, str] = {}  # group key -> Canvas user id
    with os.scandir(folder) as it:
        items = sorted(it, key=lambda e: e.name)
    for e in items:
        if e.name.startswith("."):
            continue
        try:
            is_dir = e.is_dir(follow_symlinks=False)
            is_file = not is_dir and e.is_file(follow_symlinks=False)
        except OSError:  # cannot even stat it: staging says why
            is_dir, is_file = False, e.name.endswith(".zip")
        canvas = CANVAS_NAME.match(e.name) if is_file and not e.name.endswith(".zip") else None
        if canvas:  # flat files: grouped by student below
            key = f"{canvas['student']}_{canvas['user']}"
            groups.setdefault(key, []).append(Path(e.path))
            users[key] = canvas["user"]
            late |= {entry_id(key)} if canvas["late"] else set()  # by id, as the entries below
            continue
        if not (is_dir or (is_file and e.name.endswith(".zip"))):
            continue
        entries.append((entry_id(e.name[:-4] if not is_dir else e.name), Path(e.path), ()))
    entries += [(entry_id(key), paths[0], tuple(paths)) for key, paths in groups.items()]
    user_of = {entry_id(key): u for key, u in users.items()}
    out = []
    for base, path, files in sorted(entries, key=lambda t: (t[0], os.fsencode(t[1].name))):
        ident, n = base, 1
        while ident in taken:  # "alice/" and "alice.zip"; "bad\xff" and a folder named "bad\\xff"
            n += 1
            ident = f"{base}~{n}"
        taken[ident] = path
        out.append(Entry(ident, path, files, collides_with=base if ident != base else "",
                         late=base in late and bool(files), canvas_user=user_of.get(base, "") if files else ""))
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


def _zip_tree(infos: Iterable[zipfile.ZipInfo], max_depth: int | None = None,
              max_entries: int | None = None) -> tuple[Tree, dict[str, zipfile.ZipInfo]]:
    """A zip's listing under the same rules as :func:`walk` (its names are never paths here)."""
    max_depth = MAX_DEPTH if max_depth is None else max_depth
    max_entries = MAX_ENTRIES if max_entries is None else max_entries
    tree, by_name = Tree(), {}
    for n, info in enumerate(infos):
        if n >= max_entries:
            tree.problem(_("the submission holds more than {count} files and folders; "
                           "only the first {count} were searched").format(count=max_entries))
            break
        if info.is_dir():
            continue
        parts = PurePosixPath(info.filename).parts
        if IGNORED_PARTS.intersection(parts):
            continue
        if len(parts) - 1 > max_depth:
            tree.problem(_("folders nested more than {depth} levels deep were not searched").format(depth=max_depth))
            continue
        kind = stat.S_IFMT(info.external_attr >> 16)
        if kind and kind != stat.S_IFREG:  # a link, pipe or device (0: a zip tool that keeps no modes)
            tree.other.add(info.filename)
            continue
        tree.files[info.filename] = info.file_size
        by_name[info.filename] = info
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
    revision: int = 0  # Canvas's resubmission number: higher is later
    name: str = ""  # the file name it stands for (default: the last part of ``where``)

    def __post_init__(self):
        self.name = self.name or PurePosixPath(self.where).name


def _parts(where: str) -> tuple[str, ...]:
    return PurePosixPath(where).parts


def choose(candidates: list[Candidate], data: dict[str, bytes], stub: bytes | None) -> Candidate:
    """The most plausible of several files for one declared name, by this rule, in order:

    1. not an untouched copy of the stub (when the stub is known);
    2. the shallowest (fewest folders, a zip counting as one);
    3. not inside a folder named like a draft (``draft``, ``old``, ``backup``,
       ``copy``, ``archive``, ``tmp``, ``test``, ... : :data:`DRAFT_WORDS`);
    4. the latest Canvas resubmission (``optimizers-2.py`` over ``optimizers.py``);
    5. the first by name.

    It reads only names and contents, never times, so the same submission
    always gives the same choice.  ``data`` holds what could be read of each."""
    def key(c: Candidate):
        folders = [p.lower() for p in _parts(c.where)[:-1]]  # a flat file has none
        is_stub = stub is not None and data.get(c.where) == stub
        draft = any(p in DRAFT_WORDS or p.rstrip("0123456789_- ") in DRAFT_WORDS for p in folders)
        return (is_stub, len(_parts(c.where)), draft, -c.revision, c.where)
    return min(candidates, key=key)


def stage(source: Path | Entry, files: tuple[str, ...], dest: Path, *,
          stubs: dict[str, bytes] | None = None, optional: tuple[str, ...] = ()) -> Staged:
    """Copy the declared ``files`` of one submission into ``dest`` (flat).

    ``source`` is an entry of :func:`discover` or the path of a folder or zip.
    ``stubs`` (file name -> the stub's bytes) lets :func:`choose` pass over an
    untouched stub when the student left one beside their work.  ``optional``
    files are chosen by the same rule into ``extra`` (a missing one is no
    problem).  Never raises for a bad submission: whatever went wrong is in
    ``problems`` and the files it kept from being staged are missing."""
    entry = source if isinstance(source, Entry) else None
    path = entry.path if entry else Path(source)
    st = Staged(dest)
    try:
        dest.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as stack:
            if entry and entry.files:
                tree, found = Tree(), _flat_candidates(entry.files)
            elif path.is_dir():
                tree, found = _dir_candidates(path, stack)
            elif path.name.endswith(".zip") or zipfile.is_zipfile(path):
                tree, found = _zip_candidates(stack.enter_context(zipfile.ZipFile(path)), "")
            else:
                raise Unreadable(_("{name} is neither a folder nor a zip file").format(name=printable(path.name)))
            _take(tree, found, files, st, stubs or {})
            _take(tree, found, optional, st, stubs or {}, required=False)
    except Unreadable as exc:
        st.problems.append(str(exc))
    except Exception as exc:  # noqa: BLE001  (anything at all: this entry's problem, not the batch's)
        st.problems.append(_("could not read {name}: {error}").format(name=printable(path.name),
                                                                      error=describe(exc)))
    h = hashlib.sha256()
    for f in files:
        p = dest / f
        h.update(f.encode() + b"\0" + (p.read_bytes() if p.is_file() else b"<missing>") + b"\0")
    for problem in st.problems:  # a different problem is a different submission (a rerun regrades it)
        h.update(text_bytes(problem) + b"\0")
    st.sha256 = h.hexdigest()
    return st


def _flat_candidates(paths: tuple[Path, ...]) -> list[Candidate]:
    out = []
    for p in paths:
        name, revision = original_name(p.name)
        try:
            size = p.lstat().st_size
        except OSError:
            size = 0
        out.append(Candidate(printable(p.name), size, lambda p=p: _read_regular(p), revision, name=name))
    return out


def _dir_candidates(root: Path, stack: contextlib.ExitStack) -> tuple[Tree, list[Candidate]]:
    """The folder's files, and the members of the zips in it (Moodle), one level deep."""
    tree = walk(root)
    found = [Candidate(name, size, lambda name=name: _read_regular(root / name)) for name, size in tree.files.items()
             if not name.endswith(".zip")]
    for name in sorted(n for n in tree.files if n.endswith(".zip")):
        try:
            fd = os.open(root / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            f = stack.enter_context(os.fdopen(fd, "rb"))
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                continue
            z = stack.enter_context(zipfile.ZipFile(f))
            inner, members = _zip_candidates(z, name + "/")
        except Exception as exc:  # noqa: BLE001  (one bad zip in the folder: said, the rest still searched)
            tree.problem(_("could not read {name}: {error}").format(name=printable(name), error=describe(exc)))
            continue
        for p in inner.problems:
            tree.problem(p)
        tree.other |= {name + "/" + o for o in inner.other}
        found += members
    return tree, found


def _zip_candidates(z: zipfile.ZipFile, prefix: str) -> tuple[Tree, list[Candidate]]:
    tree, infos = _zip_tree(z.infolist())

    def read(info: zipfile.ZipInfo) -> bytes:
        if info.flag_bits & 0x1:
            raise Unreadable(_("it is encrypted with a password"))
        with z.open(info) as src:  # bounded read: a zip bomb stops here
            return src.read(MAX_FILE_BYTES + 1)

    found = [Candidate(prefix + name, size, lambda info=infos[name]: read(info)) for name, size in tree.files.items()]
    tree.other = {prefix + o for o in tree.other}
    return tree, found


def _take(tree: Tree, found: list[Candidate], files, st: Staged, stubs: dict[str, bytes],
          required: bool = True) -> None:
    """Stage each declared file from the candidates ``found`` (see :func:`choose`).

    ``required=False``: the files are optional (into ``st.extra``): a missing one is
    no problem, but one that is there and cannot be taken (too large, unreadable) is
    (a notebook's written answers are marked by hand: the gradebook must say why none are)."""
    problems = st.problems
    first = len(problems)
    for f in files:
        matches = sorted((c for c in found if c.name == f
                          and not IGNORED_PARTS.intersection(_parts(c.where))), key=lambda c: c.where)
        if not matches and not required:
            continue
        if not matches:
            if any(PurePosixPath(o).name == f for o in tree.other):
                st.problems.append(_("file {file} is not a regular file (a link, pipe or device), so it was not read")
                                   .format(file=f))
            else:
                st.problems.append(_("file {file} is missing from the submission").format(file=f))
            continue
        matches = matches[:MAX_CANDIDATES]
        data, failures = {}, {}
        for c in matches if len(matches) > 1 else ():  # only a choice needs every candidate's contents
            try:
                data[c.where] = c.read() if c.size <= MAX_FILE_BYTES else b""
            except Exception as exc:  # noqa: BLE001
                failures[c.where] = exc
        best = choose(matches, data, stubs.get(f)) if len(matches) > 1 else matches[0]
        if len(matches) > 1:
            st.notes.append(_("{file}: graded {graded}; ignored {ignored}").format(
                file=f, graded=printable(best.where), ignored=", ".join(printable(c.where) for c in matches
                                                                      if c is not best)))
        if best.size > MAX_FILE_BYTES:
            problems.append(_("file {file} is larger than {mib} MiB").format(file=f, mib=MAX_FILE_BYTES // 2**20))
            continue
        try:
            if best.where in failures:
                raise failures[best.where]
            content = data[best.where] if best.where in data else best.read()
        except Exception as exc:  # noqa: BLE001  (a damaged member, an unreadable file: that file is missing)
            problems.append(_("could not read {file} from {name}: {error}")
                            .format(file=printable(best.where), name=printable(f), error=describe(exc)))
            continue
        if len(content) > MAX_FILE_BYTES:
            problems.append(_("file {file} is larger than {mib} MiB").format(file=f, mib=MAX_FILE_BYTES // 2**20))
            continue
        if required:
            (st.directory / f).write_bytes(content)
        else:
            st.extra[f] = content
    if required and len(st.problems) > first:  # something is missing: say first what kept it from being found
        st.problems[first:first] = tree.all_problems()


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
