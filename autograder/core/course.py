"""The course file, ``assignments/course.toml``: content that belongs to this
course, not to the engine (what the sandbox preloads for student code, the student bundle's README and the
address its zip is downloaded from).

Strict, like ``lab.toml``: an unknown key or a wrong type is a
:class:`CourseError` that names the key and the file.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from autograder.core.files import find_root, read_toml

FILE = "course.toml"  # in assignments/
_SCHEMA = {  # table -> key -> type
    "sandbox": {"preload": list},
    "bundle": {"readme": str, "url": str},
}
OPTIONAL = {("bundle", "url"): ""}  # (table, key) -> its value when the file leaves it out


class CourseError(ValueError):
    pass


@dataclass(frozen=True)
class Course:
    preload: tuple[str, ...]  # modules the zygote imports before any worker starts
    readme: str  # the bundle's README; "{rows}" becomes one table row per lab
    bundle_url: str = ""  # where the notebooks' first cell downloads the bundle zip from ("": nowhere)


def parse(data: dict, where: str) -> Course:
    unknown = sorted(set(data) - set(_SCHEMA))
    if unknown:
        raise CourseError(f"{where}: unknown table(s) {unknown}; known: {sorted(_SCHEMA)}")
    for table, keys in _SCHEMA.items():
        got = data.get(table)
        if not isinstance(got, dict):
            raise CourseError(f"{where}: missing table [{table}]")
        for key in sorted(set(got) - set(keys)):
            raise CourseError(f"{where}: unknown key {key!r} in [{table}]; known: {sorted(keys)}")
        for key, kind in keys.items():
            if not isinstance(got.get(key, OPTIONAL.get((table, key))), kind):
                raise CourseError(f"{where}: [{table}] {key} must be a {kind.__name__}")
    preload = data["sandbox"]["preload"]
    if not all(isinstance(m, str) and m for m in preload):
        raise CourseError(f"{where}: [sandbox] preload must list module names")
    return Course(preload=tuple(preload), readme=data["bundle"]["readme"],
                  bundle_url=data["bundle"].get("url", OPTIONAL[("bundle", "url")]).strip())


@functools.lru_cache(maxsize=4)
def _load(path: str) -> Course:
    return parse(read_toml(Path(path), CourseError), path)


def load(root: Path | None = None) -> Course:
    """The course of the project at ``root`` (default: ``find_root()``)."""
    return _load(str((root or find_root()) / "assignments" / FILE))
