"""Find submissions in a folder and stage each one's declared files.

A submissions folder holds one entry per student: a folder or a ``.zip``.
The submission id is the entry's name without ``.zip`` (as plain text: bytes
that are not UTF-8 and control characters are written as escapes).  A
declared file is found by its name anywhere inside the entry (so an extra top
folder, as a zip tool makes, does no harm); the shallowest match wins.  Only
declared files are staged: a student's ``conftest.py`` or ``sitecustomize.py``
never reaches the grader or the worker.

Entries are untrusted.  :func:`walk` is the one way a submission tree is
read: breadth first and iterative, bounded in depth and in entries, never
following a link and never opening anything but a regular file.  Whatever
goes wrong while staging one entry (a damaged zip, an unreadable folder, a
name that is not UTF-8) becomes that entry's problem, never the batch's.
"""

from __future__ import annotations

import hashlib
import os
import stat
import unicodedata
import zipfile
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from autograder.calls.limits import MAX_FILE_BYTES  # noqa: F401  (staging.MAX_FILE_BYTES: its limit)
from autograder.core.i18n import _

MAX_DEPTH = 64  # folders nested deeper than this inside an entry are not searched
MAX_ENTRIES = 10_000  # files and folders (or zip members) looked at per entry
MAX_PROBLEMS = 5  # problems kept from one walk; the rest are counted
MAX_ID_BYTES = 200  # a longer id is cut and given a hash, so results/<id>.json can be written
IGNORED_PARTS = {"__MACOSX", "__pycache__", ".ipynb_checkpoints"}


@dataclass(frozen=True)
class Entry:
    id: str
    path: Path


@dataclass
class Staged:
    directory: Path
    problems: list[str] = field(default_factory=list)
    sha256: str = ""


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
    """``name`` as one line of valid UTF-8: undecodable bytes and control characters as escapes."""
    text = os.fsencode(name).decode("utf-8", "backslashreplace")
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


def discover(folder: Path) -> list[Entry]:
    """One entry per student folder or zip, sorted by name; ids are unique."""
    entries, taken = [], set()
    with os.scandir(folder) as it:
        items = sorted(it, key=lambda e: e.name)
    for e in items:
        if e.name.startswith("."):
            continue
        try:
            is_dir = e.is_dir(follow_symlinks=False)
            is_zip = not is_dir and e.is_file() and e.name.endswith(".zip")
        except OSError:  # cannot even stat it: staging says why
            is_dir, is_zip = False, e.name.endswith(".zip")
        if not (is_dir or is_zip):
            continue
        base = entry_id(e.name[:-4] if is_zip else e.name)
        ident, n = base, 1
        while ident in taken:  # "alice/" and "alice.zip"; "bad\xff" and a folder named "bad\\xff"
            n += 1
            ident = f"{base}~{n}"
        taken.add(ident)
        entries.append(Entry(ident, Path(e.path)))
    return entries


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


def _depth_key(name: str):
    parts = PurePosixPath(name).parts
    return (len(parts), name)


def _pick(names: Iterable[str], wanted: str) -> str | None:
    matches = [n for n in names if PurePosixPath(n).name == wanted
               and not IGNORED_PARTS.intersection(PurePosixPath(n).parts)]
    return min(matches, key=_depth_key) if matches else None


def stage(entry_path: Path, files: tuple[str, ...], dest: Path) -> Staged:
    """Copy the declared ``files`` of one submission into ``dest`` (flat).

    Never raises for a bad submission: whatever went wrong is in ``problems``
    and the files it kept from being staged are missing."""
    st = Staged(dest)
    try:
        dest.mkdir(parents=True, exist_ok=True)
        if entry_path.is_dir():
            _stage_dir(entry_path, files, st)
        elif entry_path.name.endswith(".zip") or zipfile.is_zipfile(entry_path):
            _stage_zip(entry_path, files, st)
        else:
            st.problems.append(_("{name} is neither a folder nor a zip file").format(name=printable(entry_path.name)))
    except Exception as exc:  # noqa: BLE001  (anything at all: this entry's problem, not the batch's)
        st.problems.append(_("could not read {name}: {error}").format(name=printable(entry_path.name),
                                                                      error=describe(exc)))
    h = hashlib.sha256()
    for f in files:
        p = dest / f
        h.update(f.encode() + b"\0" + (p.read_bytes() if p.is_file() else b"<missing>") + b"\0")
    for problem in st.problems:  # a different problem is a different submission (a rerun regrades it)
        h.update(problem.encode() + b"\0")
    st.sha256 = h.hexdigest()
    return st


def _take(tree: Tree, files, st: Staged, read: Callable[[str], bytes], where: str) -> None:
    """Stage each declared file from ``tree``; ``read(name)`` reads at most MAX_FILE_BYTES + 1 bytes."""
    first = len(st.problems)
    for f in files:
        name = _pick(tree.files, f)
        if name is None:
            if _pick(tree.other, f) is not None:
                st.problems.append(_("file {file} is not a regular file (a link, pipe or device), so it was not read")
                                   .format(file=f))
            else:
                st.problems.append(_("file {file} is missing from the submission").format(file=f))
            continue
        if tree.files[name] > MAX_FILE_BYTES:
            st.problems.append(_("file {file} is larger than {mib} MiB").format(file=f, mib=MAX_FILE_BYTES // 2**20))
            continue
        try:
            data = read(name)
        except Exception as exc:  # noqa: BLE001  (a damaged member, an unreadable file: that file is missing)
            st.problems.append(_("could not read {file} from {name}: {error}")
                               .format(file=printable(name), name=printable(where), error=describe(exc)))
            continue
        if len(data) > MAX_FILE_BYTES:
            st.problems.append(_("file {file} is larger than {mib} MiB").format(file=f, mib=MAX_FILE_BYTES // 2**20))
            continue
        (st.directory / f).write_bytes(data)
    if len(st.problems) > first:  # something is missing: say first what kept it from being found
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


def _stage_dir(root: Path, files, st: Staged) -> None:
    _take(walk(root), files, st, lambda name: _read_regular(root / name), root.name)


def _stage_zip(path: Path, files, st: Staged) -> None:
    with zipfile.ZipFile(path) as z:
        tree, infos = _zip_tree(z.infolist())

        def read(name: str) -> bytes:
            if infos[name].flag_bits & 0x1:
                raise Unreadable(_("it is encrypted with a password"))
            with z.open(infos[name]) as src:  # bounded read: a zip bomb stops here
                return src.read(MAX_FILE_BYTES + 1)

        _take(tree, files, st, read, path.name)
