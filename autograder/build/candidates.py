"""The submissions a lab ships with: reference, stub, negative variants and
correct alternatives.

``verify`` grades every candidate; ``examples`` writes the first three as
demo zips (:func:`all_candidates`).  A variant is its base copy of one file
with the patch text appended.  An alternative
(``solutions/<lab>/alternatives/<name>/``) is a full copy of the student
files, correct but written differently from the reference: it must get full
marks, or the tests demand more than the docstrings promise.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.core.files import write_zip
from autograder.core.labs import Lab
from autograder.core.manifest import Variant

REFERENCE, STUB = "reference", "stub"
ALTERNATIVES = "alternatives"  # solutions/<lab>/alternatives/<name>/: candidate id "alternatives/<name>"


@dataclass(frozen=True)
class Candidate:
    id: str
    expect_lost: frozenset[str]  # questions it must lose (all others kept)
    variant: Variant | None = None
    source_dir: Path | None = None  # an alternative's folder

    @property
    def is_alternative(self) -> bool:
        return self.source_dir is not None


def all_candidates(lab: Lab) -> list[Candidate]:
    """Reference, stub and negative variants: the demo submissions."""
    m = lab.manifest
    everything = frozenset(q.id for q in m.questions)
    out = [Candidate(REFERENCE, frozenset()), Candidate(STUB, everything)]
    out += [Candidate(v.id, m.lost_by(v), v) for v in m.variants]
    return out


def alternatives(lab: Lab) -> list[Candidate]:
    """Each folder of ``solutions/<lab>/alternatives/``, by name: it must lose nothing."""
    folder = lab.solution_dir / ALTERNATIVES
    if not folder.is_dir():
        return []
    dirs = sorted(d for d in folder.iterdir() if d.is_dir() and not d.name.startswith((".", "_")))
    return [Candidate(f"{ALTERNATIVES}/{d.name}", frozenset(), source_dir=d) for d in dirs]


def verify_candidates(lab: Lab) -> list[Candidate]:
    """Everything ``verify`` grades: the demo submissions, then the alternatives."""
    return all_candidates(lab) + alternatives(lab)


def missing_files(lab: Lab, cand: Candidate) -> list[str]:
    """Student files an alternative lacks (an alternative is a full copy)."""
    if cand.source_dir is None:
        return []
    return [f for f in lab.manifest.student_files if not (cand.source_dir / f).is_file()]


def sources(lab: Lab, cand: Candidate) -> dict[str, str]:
    """File name -> source text for a candidate."""
    m = lab.manifest
    base_dir = {REFERENCE: lab.solution_dir, STUB: lab.assignment_dir}
    if cand.source_dir is not None:  # an alternative: what it has (verify reports what it lacks)
        return {f: (cand.source_dir / f).read_text() for f in m.student_files if (cand.source_dir / f).is_file()}
    if cand.variant is None:
        return {f: (base_dir[cand.id] / f).read_text() for f in m.student_files}
    v = cand.variant
    texts = {f: (base_dir[v.base] / f).read_text() for f in m.student_files}
    patch = (lab.solution_dir / v.patch).read_text()
    texts[v.file] = f"{texts[v.file].rstrip()}\n\n\n# --- negative variant {v.id}: {v.description} ---\n{patch}"
    return texts


def write_sources(files: dict[str, str], dest: Path) -> Path:
    """Student files (name -> text) into the folder ``dest``, as staging would leave them."""
    dest.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (dest / name).write_text(text)
    return dest


def zip_candidate(lab: Lab, cand: Candidate, dest: Path) -> Path:
    """A zip as a student would upload: files inside a top folder."""
    return write_zip(dest, sources(lab, cand), folder=cand.id)
