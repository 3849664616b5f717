"""Find submissions in a folder and stage each one's declared files; write one.

A submissions folder holds one entry per student: a folder or a ``.zip``.
The submission id is the entry's name without ``.zip``.  A declared file is
found by its name anywhere inside the entry (so an extra top folder, as a
zip tool makes, does no harm); the shallowest match wins.  Only declared
files are staged: a student's ``conftest.py`` or ``sitecustomize.py`` never
reaches the grader or the worker.  :func:`write_zip` makes the zips that
``autograder submit`` and ``autograder examples`` produce.
"""

from __future__ import annotations

import hashlib
import shutil
import stat
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from autograder.i18n import _

MAX_FILE_BYTES = 2 * 2**20  # a student source file larger than this is refused
IGNORED_PARTS = {"__MACOSX", "__pycache__", ".ipynb_checkpoints"}
ZIP_DATE = (2026, 1, 1, 0, 0, 0)  # fixed, so the same files always give the same zip bytes


@dataclass(frozen=True)
class Entry:
    id: str
    path: Path


@dataclass
class Staged:
    directory: Path
    found: dict[str, str] = field(default_factory=dict)  # file -> where it came from
    problems: list[str] = field(default_factory=list)
    sha256: str = ""


def discover(folder: Path) -> list[Entry]:
    """One entry per student folder or zip, sorted by id."""
    entries = []
    for p in sorted(Path(folder).iterdir()):
        if p.name.startswith("."):
            continue
        if p.is_dir() and not p.is_symlink():
            entries.append(Entry(p.name, p))
        elif p.is_file() and p.suffix == ".zip":
            entries.append(Entry(p.stem, p))
    return entries


def _depth_key(name: str):
    parts = PurePosixPath(name).parts
    return (len(parts), name)


def _pick(names: list[str], wanted: str) -> str | None:
    matches = [n for n in names if PurePosixPath(n).name == wanted
               and not IGNORED_PARTS.intersection(PurePosixPath(n).parts)]
    return min(matches, key=_depth_key) if matches else None


def stage(entry_path: Path, files: tuple[str, ...], dest: Path) -> Staged:
    """Copy the declared ``files`` of one submission into ``dest`` (flat)."""
    dest.mkdir(parents=True, exist_ok=True)
    st = Staged(dest)
    if zipfile.is_zipfile(entry_path):
        _stage_zip(entry_path, files, st)
    elif entry_path.is_dir():
        _stage_dir(entry_path, files, st)
    else:
        st.problems.append(_("{name} is neither a folder nor a zip file").format(name=entry_path.name))
    h = hashlib.sha256()
    for f in files:
        p = dest / f
        h.update(f.encode() + b"\0" + (p.read_bytes() if p.exists() else b"<missing>") + b"\0")
    st.sha256 = h.hexdigest()
    return st


def _stage_dir(root: Path, files, st: Staged) -> None:
    names = [str(p.relative_to(root).as_posix()) for p in root.rglob("*")
             if p.is_file() and not p.is_symlink()]
    for f in files:
        name = _pick(names, f)
        if name is None:
            st.problems.append(_("file {file} is missing from the submission").format(file=f))
            continue
        src = root / name
        if src.stat().st_size > MAX_FILE_BYTES:
            st.problems.append(_("file {file} is larger than {mib} MiB").format(file=f, mib=MAX_FILE_BYTES // 2**20))
            continue
        shutil.copyfile(src, st.directory / f)
        st.found[f] = name


def _stage_zip(path: Path, files, st: Staged) -> None:
    try:
        with zipfile.ZipFile(path) as z:
            infos = {i.filename: i for i in z.infolist()
                     if not i.is_dir() and not stat.S_ISLNK(i.external_attr >> 16)}
            for f in files:
                name = _pick(list(infos), f)
                if name is None:
                    st.problems.append(_("file {file} is missing from the submission").format(file=f))
                    continue
                if infos[name].file_size > MAX_FILE_BYTES:
                    st.problems.append(_("file {file} is larger than {mib} MiB").format(file=f, mib=MAX_FILE_BYTES // 2**20))
                    continue
                with z.open(infos[name]) as src:  # bounded read: a zip bomb stops here
                    data = src.read(MAX_FILE_BYTES + 1)
                if len(data) > MAX_FILE_BYTES:
                    st.problems.append(_("file {file} is larger than {mib} MiB").format(file=f, mib=MAX_FILE_BYTES // 2**20))
                    continue
                (st.directory / f).write_bytes(data)
                st.found[f] = name
    except (zipfile.BadZipFile, OSError, RuntimeError) as exc:
        st.problems.append(_("could not read {name}: {error}").format(name=path.name, error=exc))


def write_zip(dest: Path, files: Mapping[str, str | bytes], folder: str = "",
              executable: frozenset[str] = frozenset()) -> Path:
    """Write ``files`` (name -> content) as a zip, inside ``folder`` when given.

    Names in sorted order, fixed dates and modes (755 for names in
    ``executable``, else 644): the same content gives the
    same bytes.  Written beside ``dest`` and moved into place, so a reader
    never sees half a zip.
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
