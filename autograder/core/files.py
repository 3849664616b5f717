"""Plain filesystem and process-environment helpers, one copy each.

Every file the engine writes for a reader (a gradebook, a zip, a feedback
file) is written beside its final name and moved into place, so a reader
(or a crash) never sees half of it; zips are byte-reproducible; the
folders and files that never ship (caches, otter's local log) are named once.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
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
# never shipped in a bundle or a zip: caches, and otter's pickle log of a local grader.check run
SKIPPED_PARTS = frozenset({"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".OTTER_LOG"})
SKIPPED_SUFFIXES = (".pyc",)


def atomic_write(path: Path, content: str | bytes) -> None:
    """Write ``content`` (text as UTF-8) beside ``path`` and move it into place: a reader,
    or a process killed while writing, never leaves half a file there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    tmp.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    os.replace(tmp, path)


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
