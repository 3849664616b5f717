"""Plain filesystem and process-environment helpers, one copy each.

Every file the engine writes for a reader (a gradebook, a zip, a feedback
file) is written beside its final name and moved into place, so a reader
(or a crash) never sees half of it; zips are byte-reproducible; the
folders and files that never ship (caches, otter's local log) are named once.

Text is encoded in one place, :func:`text_bytes`: a student's string may
hold what UTF-8 cannot encode (a lone surrogate from a notebook's
``"\\ud800"``, a file name's undecodable byte), and it is written as a
backslash escape, never an error that stops a batch.

What a run keeps in the temporary folder lives in one private folder of its
own (:func:`run_folder`), removed when the run ends, on Ctrl-C or SIGTERM too;
one killed outright is swept by the next run (:func:`sweep_stale`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import stat
import tempfile
import threading
import tomllib
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT_ENV = "IRONLAW_ROOT"


def find_root(start: Path | None = None) -> Path:
    """The project (or student bundle) root: the folder holding ``assignments/``.

    Order: $IRONLAW_ROOT, then the current folder and its parents, then the
    folder above this package (an editable install in the repository).
    """
    if os.environ.get(ROOT_ENV):
        return Path(os.environ[ROOT_ENV]).resolve()
    here = (start or Path.cwd()).resolve()
    for p in (here, *here.parents):
        if (p / "assignments").is_dir():
            return p
    pkg_parent = Path(__file__).resolve().parents[2]
    if (pkg_parent / "assignments").is_dir():
        return pkg_parent
    raise FileNotFoundError("no assignments/ folder here or above; set IRONLAW_ROOT")


ZIP_DATE = (2026, 1, 1, 0, 0, 0)  # fixed, so the same files always give the same zip bytes
# never shipped in a bundle or a zip: caches, otter's pickle log of a local grader.check run, and what a
# notebook run in the lab's folder writes of its predictions (grading/predictions.py: a student's own)
SKIPPED_PARTS = frozenset({"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".OTTER_LOG",
                           "predictions.json", "predictions-unreadable"})
SKIPPED_SUFFIXES = (".pyc",)


TEXT_ERRORS = "backslashreplace"  # what UTF-8 cannot encode becomes "\\ud800": still valid JSON, CSV, Markdown


def text_bytes(text: str) -> bytes:
    """``text`` as UTF-8, whatever it holds: a lone surrogate (a student's string, an
    undecodable name) is written as its backslash escape.  Every text file the engine
    writes is encoded here."""
    return text.encode("utf-8", TEXT_ERRORS)


def valid_text(text: str) -> str:
    """``text`` with what UTF-8 cannot encode as backslash escapes (:func:`text_bytes`'s
    rule), for text handed to what encodes strictly (a console, a library)."""
    return text_bytes(text).decode("utf-8")


def atomic_write(path: Path, content: str | bytes) -> None:
    """Write ``content`` (text as UTF-8, :func:`text_bytes`) beside ``path`` and move it into
    place: a reader, or a process killed while writing, never leaves half a file there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    tmp.write_bytes(content if isinstance(content, bytes) else text_bytes(content))
    os.replace(tmp, path)


def append_text(path: Path, text: str) -> None:
    """Append ``text`` in one ``write`` (a killed writer leaves whole lines), encoded as :func:`text_bytes`."""
    with open(path, "ab") as f:
        f.write(text_bytes(text))


def write_zip(dest: Path, files: Mapping[str, str | bytes], folder: str = "",
              executable: frozenset[str] = frozenset()) -> Path:
    """Write ``files`` (name -> content) as a zip, inside ``folder`` when given.

    Names in sorted order, fixed dates and modes (755 for names in
    ``executable``, else 644): the same content gives the same bytes.
    Written beside ``dest`` and moved into place, so a reader never sees
    half a zip.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in sorted(files.items()):
            info = zipfile.ZipInfo(f"{folder}/{name}" if folder else name, date_time=ZIP_DATE)
            info.external_attr = (0o755 if name in executable else 0o644) << 16
            z.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
    shutil.move(tmp, dest)
    return dest


def is_within(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def shipped_files(folder: Path, base: Path, skip: tuple[Path, ...] = ()) -> dict[str, Path]:
    """Every regular file under ``folder`` that may ship (no caches, no links,
    nothing under ``skip``), named by its path relative to ``base``, sorted."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(base)
        if (p.is_file() and not p.is_symlink() and p.suffix not in SKIPPED_SUFFIXES
                and not SKIPPED_PARTS.intersection(rel.parts) and not any(is_within(p, s) for s in skip)):
            out[rel.as_posix()] = p
    return out


def _set_environ(values: Mapping[str, str | None]) -> None:
    """``os.environ`` takes these values (None: unset)."""
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@contextlib.contextmanager
def scoped_environ(**values: str | None) -> Iterator[None]:
    """Within the block, ``os.environ`` has these values (None: unset); the
    previous ones come back afterwards.  Child processes started inside see them."""
    saved = {k: os.environ.get(k) for k in values}
    try:
        _set_environ(values)
        yield
    finally:
        _set_environ(saved)


# -- what a run keeps in the temporary folder ------------------------------------------
# ironlaw-<what>-<pid>.<start>-<random>: the process that made it, and when that process
# started (a pid is reused; its start time, in clock ticks since boot, is not)
_OWNED = re.compile(r"^ironlaw-[\w.-]*?-(?P<pid>\d+)\.(?P<start>\d+)-[\w]+(\.txt)?$", re.ASCII)


def _start_time(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def owner_tag() -> str:
    """``<pid>.<start time>`` of this process: what :func:`sweep_stale` reads back."""
    return f"{os.getpid()}.{_start_time(os.getpid()) or 0}"


def owned_name(what: str) -> str:
    """The prefix of a temporary file or folder this process owns (``tempfile``'s ``prefix``)."""
    return f"ironlaw-{what}-{owner_tag()}-"


def _alive(pid: int, start: int) -> bool:
    now = _start_time(pid)
    if now is None:  # no /proc entry: gone (or no /proc at all: then ask the kernel)
        if os.path.isdir("/proc/self"):
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True
        return True
    return start in (0, now)


def remove_tree(path: str | os.PathLike) -> None:
    """Remove a file or a folder tree, whatever it holds: links are removed, never followed;
    modes that keep even its owner out are changed; any depth (no recursion).  What cannot
    be removed is left."""
    path = os.fsencode(path)
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
            return
    except OSError:
        return
    try:
        shutil.rmtree(path)
        return
    except (OSError, RecursionError):
        pass  # too deep for rmtree, or a folder its owner cannot list: the long way
    order, todo = [], [path]
    while todo:
        d = todo.pop()
        order.append(d)
        with contextlib.suppress(OSError):
            os.chmod(d, 0o700)
            with os.scandir(d) as it:
                for e in it:
                    if e.is_dir(follow_symlinks=False):
                        todo.append(e.path)
                    else:
                        with contextlib.suppress(OSError):
                            os.unlink(e.path)
    for d in reversed(order):
        with contextlib.suppress(OSError):
            os.rmdir(d)


def sweep_stale(folder: str | os.PathLike | None = None) -> list[str]:
    """Remove what runs killed outright (SIGKILL, a lost machine) left in ``folder`` (the
    temporary folder): only entries named by :func:`owned_name`, owned by this uid, whose
    process is gone.  Returns their names."""
    folder = os.fspath(folder or tempfile.gettempdir())
    gone = []
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        return gone
    for e in entries:
        m = _OWNED.match(e.name)
        try:
            if not m or e.stat(follow_symlinks=False).st_uid != os.geteuid() or e.is_symlink():
                continue
        except OSError:
            continue
        if not _alive(int(m["pid"]), int(m["start"])):
            remove_tree(e.path)
            gone.append(e.name)
    return gone


@contextlib.contextmanager
def run_folder(what: str) -> Iterator[Path]:
    """A private folder for everything a run puts in the temporary folder, and the
    temporary folder of this process and of the processes it starts while it lasts
    (``tempfile.tempdir`` and ``$TMPDIR``: graders, the zygote, their folders).

    Mode 711: a worker's own folder (a dropped uid's, without namespaces) can lie
    inside, while no other uid can list it; everything in it is made by ``mkdtemp``
    (mode 700).  Removed at the end, whatever ends the run: an exception, Ctrl-C,
    or SIGTERM (raised here, in the main thread, and remembered: :func:`stop_requested`).  Runs killed
    outright are swept first (:func:`sweep_stale`)."""
    sweep_stale()
    path = Path(tempfile.mkdtemp(prefix=owned_name(what)))
    os.chmod(path, 0o711)
    saved_tempdir = tempfile.tempdir
    restore_signals = _stop_on_signals()
    try:
        with scoped_environ(TMPDIR=str(path)):
            tempfile.tempdir = str(path)
            try:
                yield path
            finally:
                tempfile.tempdir = saved_tempdir
    finally:
        remove_tree(path)
        restore_signals()


# the SIGINT or SIGTERM that came while the main thread's run folders lasted, and how many are open
# (an export's unpacked folder holds the batch's: what comes in the inner one is the outer one's too)
_STOP: dict[str, int | None] = {"signum": None, "open": 0}


def stopped_by() -> int | None:
    """The SIGINT or SIGTERM that came while this run folder lasted, if one did."""
    return _STOP["signum"]


def stop_requested() -> None:
    """Raise what the run's SIGINT (KeyboardInterrupt) or SIGTERM (SystemExit) raised, if one came.

    The handler raises at once, in the main thread; but an exception raised while that thread
    runs a finalizer (an object's ``__del__``) is printed and dropped, and a batch that lost its
    Ctrl-C that way would grade every submission.  The signal is remembered too: a loop asks
    here between submissions, and a grading thread before it starts one."""
    signum = stopped_by()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    if signum is not None:
        raise SystemExit(128 + signum)


def _stop_on_signals():
    """Until the returned function is called: SIGTERM raises SystemExit and SIGINT
    KeyboardInterrupt (so ``finally`` blocks run), each remembered for :func:`stop_requested`.
    A SIGINT this process was started ignoring (a shell script's background job) stays ignored.
    Only in the main thread, where Python runs signal handlers; the outermost run forgets the
    signal when it ends."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def stop(signum, frame):
        _STOP["signum"] = signum
        stop_requested()

    signals = [signal.SIGTERM] + ([signal.SIGINT] if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN else [])
    try:
        before = {s: signal.signal(s, stop) for s in signals}
    except ValueError:  # not the main interpreter
        return lambda: None
    _STOP["open"] += 1

    def restore():
        for s, h in before.items():
            signal.signal(s, h)
        _STOP["open"] -= 1
        if not _STOP["open"]:
            _STOP["signum"] = None  # what came was this run's

    return restore


def read_toml(path: Path, error: type[Exception]) -> dict:
    """A TOML file's tables; an unreadable or invalid file is ``error("<path>: <why>")``."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise error(f"{path}: {exc}") from None
