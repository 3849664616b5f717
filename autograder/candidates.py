"""The submissions a lab ships with: reference, stub and negative variants.

``verify`` grades every candidate; ``examples`` writes them as demo zips.
A variant is its base copy of one file with the patch text appended.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder import submissions
from autograder.labs import Lab
from autograder.manifest import Variant

REFERENCE, STUB = "reference", "stub"


@dataclass(frozen=True)
class Candidate:
    id: str
    expect_lost: frozenset[str]  # questions it must lose (all others kept)
    variant: Variant | None = None


def all_candidates(lab: Lab) -> list[Candidate]:
    m = lab.manifest
    everything = frozenset(q.id for q in m.questions)
    out = [Candidate(REFERENCE, frozenset()), Candidate(STUB, everything)]
    out += [Candidate(v.id, m.lost_by(v), v) for v in m.variants]
    return out


def sources(lab: Lab, cand: Candidate) -> dict[str, str]:
    """File name -> source text for a candidate."""
    m = lab.manifest
    base_dir = {REFERENCE: lab.solution_dir, STUB: lab.assignment_dir}
    if cand.variant is None:
        return {f: (base_dir[cand.id] / f).read_text() for f in m.student_files}
    v = cand.variant
    texts = {f: (base_dir[v.base] / f).read_text() for f in m.student_files}
    patch = (lab.solution_dir / v.patch).read_text()
    texts[v.file] = f"{texts[v.file].rstrip()}\n\n\n# --- negative variant {v.id}: {v.description} ---\n{patch}"
    return texts


def write_dir(lab: Lab, cand: Candidate, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for name, text in sources(lab, cand).items():
        (dest / name).write_text(text)
    return dest


def write_zip(lab: Lab, cand: Candidate, dest: Path) -> Path:
    """A zip as a student would upload: files inside a top folder."""
    return submissions.write_zip(dest, sources(lab, cand), folder=cand.id)
