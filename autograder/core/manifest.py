"""The lab manifest, ``assignments/<lab>/lab.toml``, as frozen dataclasses.

One manifest is the single source of truth for a lab: which files a student
hands in, which questions exist and what they are worth, the limits a call
runs under, and which negative variants must lose which questions.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
# a question's ``details``: when its hidden tests' feedback is shown ("after_due_date": results.json
# marks them so, and grade's feedback shows only their points until ``grade --after-due``)
DETAILS = ("always", "after_due_date")
ALL = "all"  # a variant that must lose every question (e.g. a syntax error)


class ManifestError(ValueError):
    """The lab.toml is malformed; the message names the field."""


@dataclass(frozen=True)
class Question:
    id: str
    title: str
    points: float
    section: str = ""  # chapter section that explains it, for hints
    details: str = "always"  # one of DETAILS


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 10.0  # per call into student code (and per test)
    memory_mb: int = 3072  # address-space cap of the sandboxed worker
    cpu_s: int = 120  # CPU-time cap of one worker
    test_timeout_s: float = 120.0  # one whole test, all its calls together
    submission_timeout_s: float = 600.0  # all of one submission's calls (and spawns) together
    grader_memory_mb: int = 8192  # address-space cap of a grader process (the tests, the reference)


@dataclass(frozen=True)
class Variant:
    """A negative variant: the reference with one file's functions overridden.

    The overlay file is appended to ``base``'s copy of ``file``; Python's
    late binding of globals makes the appended definitions win everywhere.
    """

    id: str
    description: str
    file: str
    patch: str  # path relative to solutions/<lab>/
    loses: tuple[str, ...]  # question ids, or (ALL,)
    base: str = "reference"  # or "stub"


@dataclass(frozen=True)
class Manifest:
    name: str  # folder name, e.g. "lab2_optimizers"
    title: str
    student_files: tuple[str, ...]
    questions: tuple[Question, ...]
    limits: Limits = Limits()
    support_files: tuple[str, ...] = ()  # shipped helpers, never taken from a submission
    variants: tuple[Variant, ...] = ()
    visibility: str = "visible"  # default for hidden tests
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def max_score(self) -> float:
        return sum(q.points for q in self.questions)

    def question(self, qid: str) -> Question:
        for q in self.questions:
            if q.id == qid:
                return q
        raise KeyError(f"{self.name}: no question {qid!r} in lab.toml")

    def lost_by(self, variant: Variant) -> frozenset[str]:
        if variant.loses == (ALL,):
            return frozenset(q.id for q in self.questions)
        return frozenset(variant.loses)


def _require(table: dict, key: str, where: str):
    if key not in table:
        raise ManifestError(f"{where}: missing required key {key!r}")
    return table[key]


def _details(q: dict, where: str) -> str:
    value = q.get("details", "always")
    if value not in DETAILS:
        raise ManifestError(f"{where}: question {q.get('id', '?')!r}: key 'details' must be one of "
                            f"{', '.join(map(repr, DETAILS))}, not {value!r}")
    return value


def parse(data: dict, name: str) -> Manifest:
    where = f"{name}/lab.toml"
    questions = tuple(
        Question(
            id=_require(q, "id", f"{where} [[questions]]"),
            title=_require(q, "title", f"{where} [[questions]]"),
            points=float(_require(q, "points", f"{where} [[questions]]")),
            section=str(q.get("section", "")),
            details=_details(q, where),
        )
        for q in _require(data, "questions", where)
    )
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        raise ManifestError(f"{where}: duplicate question ids in {ids}")
    variants = tuple(
        Variant(
            id=_require(v, "id", f"{where} [[variants]]"),
            description=v.get("description", ""),
            file=_require(v, "file", f"{where} [[variants]]"),
            patch=_require(v, "patch", f"{where} [[variants]]"),
            loses=tuple(_require(v, "loses", f"{where} [[variants]]")),
            base=v.get("base", "reference"),
        )
        for v in data.get("variants", ())
    )
    student_files = tuple(_require(data, "student_files", where))
    for v in variants:
        unknown = set(v.loses) - set(ids) - {ALL}
        if unknown:
            raise ManifestError(f"{where}: variant {v.id} loses unknown questions {sorted(unknown)}")
        if v.file not in student_files:
            raise ManifestError(f"{where}: variant {v.id} patches {v.file}, not a student file")
        if v.base not in ("reference", "stub"):
            raise ManifestError(f"{where}: variant {v.id} base must be 'reference' or 'stub'")
    visibility = data.get("visibility", "visible")
    if visibility not in VISIBILITIES:
        raise ManifestError(f"{where}: visibility must be one of {VISIBILITIES}")
    known = {"title", "student_files", "support_files", "questions", "limits", "variants", "visibility"}
    return Manifest(
        name=name,
        title=_require(data, "title", where),
        student_files=student_files,
        questions=questions,
        limits=Limits(**data.get("limits", {})),
        support_files=tuple(data.get("support_files", ())),
        variants=variants,
        visibility=visibility,
        extra={k: v for k, v in data.items() if k not in known},
    )


def load(path: Path) -> Manifest:
    with open(path, "rb") as f:
        return parse(tomllib.load(f), path.parent.name)
