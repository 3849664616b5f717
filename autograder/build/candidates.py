"""The submissions a lab ships with: reference, stub, negative variants and
correct alternatives.

``verify`` grades every candidate; ``examples`` writes the first three as
demo zips (:func:`all_candidates`).  A variant is its base copy of one file
with the patch text appended or its edits made (:func:`apply`).  An alternative
(``solutions/<lab>/alternatives/<name>/``) is a full copy of the student
files, correct but written differently from the reference: it must get full
marks, or the tests demand more than the docstrings promise.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.batch import manual
from autograder.core.files import write_zip
from autograder.core.labs import Lab
from autograder.build import stubs
from autograder.core.manifest import Variant

REFERENCE, STUB = "reference", "stub"
ALTERNATIVES = "alternatives"  # solutions/<lab>/alternatives/<name>/: candidate id "alternatives/<name>"
ANSWERS = "answers"  # solutions/<lab>/answers/<question>.md: a model answer to a question marked by hand


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
    everything = frozenset(q.id for q in m.tested)
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
    if cand.source_dir is not None:  # an alternative: what it has (verify reports what it lacks)
        return {f: (cand.source_dir / f).read_text() for f in m.student_files if (cand.source_dir / f).is_file()}
    if cand.variant is None:
        return _base(lab, cand.id)
    v = cand.variant
    texts = _base(lab, v.base)
    texts[v.file] = apply(lab, v, texts[v.file])
    return texts


class VariantError(ValueError):
    """A variant that no longer applies to its base; the message names the lab, variant and edit."""


def apply(lab: Lab, v: Variant, text: str) -> str:
    """``text`` (the base's copy of ``v.file``) with the variant's patch appended or its edits made."""
    if v.patch:
        patch = (lab.solution_dir / v.patch).read_text()
        return f"{text.rstrip()}\n\n\n# --- negative variant {v.id}: {v.description} ---\n{patch}"
    for n, e in enumerate(v.edits, 1):
        found = text.count(e.replace)
        if found != 1:
            raise VariantError(f"{lab.name}/lab.toml: variant {v.id}, edit #{n}: the text to replace occurs "
                               f"{found} times in {v.base}'s {v.file}, not once (has the reference changed?)")
        text = text.replace(e.replace, e.by)
    return text


def _base(lab: Lab, which: str) -> dict[str, str]:
    """The reference's files, or the stubs generated from them (never a stub file on disk, which may be stale)."""
    if which == STUB:
        return stubs.texts(lab)
    return {f: (lab.solution_dir / f).read_text() for f in lab.manifest.student_files}


def write_sources(files: dict[str, str], dest: Path) -> Path:
    """Student files (name -> text) into the folder ``dest``, as staging would leave them."""
    dest.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (dest / name).write_text(text)
    return dest


def notebook(lab: Lab, cand: Candidate) -> dict[str, bytes]:
    """The notebook a demo submission hands in, for a lab with questions marked by hand
    (``docs/manual.md``): the reference's English notebook with the model answers of
    ``solutions/<lab>/answers/<question>.md``, the stub's as handed out; the variants hand
    in none, as a student who uploads only the code."""
    m = lab.manifest
    name = m.notebooks[0]
    if not m.manual or cand.id not in (REFERENCE, STUB) or not (lab.assignment_dir / name).is_file():
        return {}
    data = (lab.assignment_dir / name).read_bytes()
    if cand.id == REFERENCE:
        given = {q.id: p.read_text() for q in m.manual if (p := lab.solution_dir / ANSWERS / f"{q.id}.md").is_file()}
        data = manual.fill(data, given)
    return {name: data}


def zip_candidate(lab: Lab, cand: Candidate, dest: Path) -> Path:
    """A zip as a student would upload: files inside a top folder."""
    files: dict[str, str | bytes] = {**sources(lab, cand), **notebook(lab, cand)}
    return write_zip(dest, files, folder=cand.id)
