"""Where a lab's parts live, and how a short name ("lab2") finds a lab.

Layout (``docs/AUTHORING.md``)::

    assignments/<lab>/lab.toml, stubs, notebook, tests/ (public) + snapshots
    solutions/<lab>/      reference modules (same file names) + variants/
    tests/<lab>/          hidden tests
    examples/<short>/     demo submissions
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from autograder.core import chapter, manifest as _manifest
from autograder.core.files import ROOT_ENV, find_root  # noqa: F401  (labs.find_root: the usual spelling)

@dataclass(frozen=True)
class Lab:
    root: Path
    name: str  # e.g. "lab2_optimizers"

    @property
    def short(self) -> str:  # "lab2"
        return self.name.split("_", 1)[0]

    @property
    def assignment_dir(self) -> Path:
        return self.root / "assignments" / self.name

    @property
    def solution_dir(self) -> Path:
        return self.root / "solutions" / self.name

    @property
    def hidden_tests_dir(self) -> Path:
        return self.root / "tests" / self.name

    @property
    def public_tests_dir(self) -> Path:
        return self.assignment_dir / "tests"

    @property
    def snapshot_dir(self) -> Path:
        return self.public_tests_dir / "snapshots"

    @property
    def examples_dir(self) -> Path:
        return self.root / "examples" / self.short

    @property
    def has_solutions(self) -> bool:
        return self.solution_dir.is_dir()

    @cached_property
    def manifest(self) -> _manifest.Manifest:
        m = _manifest.load(self.assignment_dir / "lab.toml")
        outline = chapter.load(self.root)
        for q in m.questions:
            for title in q.sections:
                try:
                    outline.by_title(title)
                except chapter.ChapterError as exc:
                    raise _manifest.ManifestError(f"{self.name}/lab.toml: question {q.id!r}: {exc}") from None
        return m


def all_labs(root: Path | None = None) -> list[Lab]:
    root = root or find_root()
    return [Lab(root, p.parent.name) for p in sorted((root / "assignments").glob("*/lab.toml"))]


def get(name: str, root: Path | None = None) -> Lab:
    """Find a lab by its folder name or its short name ("lab2")."""
    labs = all_labs(root)
    for lab in labs:
        if name in (lab.name, lab.short):
            return lab
    raise KeyError(f"no lab {name!r}; known: {', '.join(l.name for l in labs)}")


def lab_of_test(path: Path, root: Path | None = None) -> Lab | None:
    """The lab a test file belongs to, or None for framework tests."""
    path = path.resolve()
    for lab in all_labs(root):
        for d in (lab.hidden_tests_dir, lab.public_tests_dir):
            if d.resolve() in path.parents:
                return lab
    return None
