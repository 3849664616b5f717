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

import tomllib
from dataclasses import dataclass
from pathlib import Path

from autograder.batch import manual
from autograder.core.files import write_zip
from autograder.core.labs import Lab
from autograder.core import stubs
from autograder.core.manifest import Variant
from autograder.grading import predictions

REFERENCE, STUB = "reference", "stub"
ALTERNATIVES = "alternatives"  # solutions/<lab>/alternatives/<name>/: candidate id "alternatives/<name>"
ANSWERS = "answers"  # solutions/<lab>/answers/<question>.md: a model answer to a question marked by hand
DEMO_PREDICTIONS = "demo_predictions.toml"  # solutions/<lab>/: what each demo submission predicted


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


def demo_predictions(lab: Lab, cand: Candidate) -> dict[str, bytes]:
    """The ``predictions.json`` a demo submission hands in (``docs/predictions.md``), from
    ``solutions/<lab>/demo_predictions.toml``::

        [measured]                  # the result the notebook showed, where lab.toml fixes no truth
        step_multiple = 3.02
        [guesses.reference]         # a candidate's guesses: prediction id -> value (a choice's English)
        step_multiple = 3
        [guesses.A_no_scale]
        step_multiple = 1.5

    Every declared prediction is listed and its measurement run, as in the notebook: the ones a
    candidate guessed, each guessed first; the others unanswered.  Fixed times, so the zip stays
    byte-reproducible.  A candidate the file does not list hands in none (a student who uploads
    only the code); a key or value the lab does not declare is a ValueError naming it."""
    path = lab.solution_dir / DEMO_PREDICTIONS
    m = lab.manifest
    if not m.predictions or not path.is_file():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    where = f"{lab.name}/{DEMO_PREDICTIONS}"
    if set(data) - {"measured", "guesses"}:
        raise ValueError(f"{where}: only [measured] and [guesses.<candidate>] tables, not {sorted(set(data))}")
    guesses = data.get("guesses", {}).get(cand.id)
    if guesses is None:
        return {}
    measured = data.get("measured", {})
    declared = {p.id: p for p in m.predictions}
    for pid in set(guesses) | set(measured):
        if pid not in declared:
            raise ValueError(f"{where}: no prediction {pid!r} in {lab.name}/lab.toml")
    records = {}
    for n, p in enumerate(m.predictions):
        r = predictions.Record()
        try:
            if p.id in guesses:
                r.value, r.at = predictions.check_value(p, guesses[p.id]), f"2026-01-01T00:00:00.{2 * n:06d}Z"
            result = measured.get(p.id, p.truth)
            if result is not None:
                r.locked_at = f"2026-01-01T00:00:00.{2 * n + 1:06d}Z"
                r.measured = predictions.check_measured(p, result)
        except ValueError as exc:
            raise ValueError(f"{where}: {p.id}: {exc}") from None
        records[p.id] = r
    return {predictions.FILE: predictions.dumps(records, lab.name).encode()}


def zip_candidate(lab: Lab, cand: Candidate, dest: Path) -> Path:
    """A zip as a student would upload: files inside a top folder (with its notebook and its
    predictions, where the lab has them)."""
    files: dict[str, str | bytes] = {**sources(lab, cand), **notebook(lab, cand), **demo_predictions(lab, cand)}
    return write_zip(dest, files, folder=cand.id)
