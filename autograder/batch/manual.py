"""Questions marked by hand: the marks a TA gives, and the answers to mark.

A question with ``manual = true`` in lab.toml is a written answer in the
lab's notebook; no test scores it.  Its answer is a cell tagged
``answer:<question id>``, or several cells, each a named part of it, tagged
``answer:<question id>/<part>`` (the reflection after each prediction:
``answer:reflections/<prediction id>``, ``docs/predictions.md``).  ``grade``
takes the notebook a submission holds (``Manifest.notebooks``: either
language), copies those cells into ``manual/<question id>.md``, one section
per submission and, within it, one per part, for a TA to read question by
question; a part whose cell is empty or as handed out is written there as
missing, counted in the summary and said in the student's feedback
(:func:`missing_notes`).  It writes ``manual/marks-template.csv``: one row
per submission and manual question, its marks so far filled in.  Each
submission's answers are kept in ``manual/answers/<id>.json`` (so that
``--only`` leaves the others').  An answer is never scored for its content
by the engine: a TA marks it, and until then its points are pending.

The marks file (``grade --manual FILE``) is a CSV in UTF-8 (a BOM, as
Excel writes it, is fine; ``;`` as the separator too) with the header
``submission,question,points`` and an optional ``comment``:

- ``submission`` is the id of the gradebook's first column;
- ``points`` is a number from 0 to the question's points (``1,5`` is 1.5),
  or empty: not marked yet (pending, never a 0);
- ``comment`` goes to the student's feedback, as written.

One row per submission and question.  A row for a question that is not
manual, or a mark out of range, stops the run (one line, naming the file
and line); a row for a submission the batch does not hold is a warning.
The marks read are kept as ``manual/marks.csv``, so a later run without
``--manual`` (a regrade with ``--only``) keeps them.

A mark becomes a result like a test's (kind ``results.MANUAL``), so the
score, the gradebook, the feedback and the exports need nothing of their
own; raw/<id>.json keeps only what the tests gave, and the marks are
applied again on every run.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from autograder.batch import predictions_report
from autograder.batch.feedback import code, fenced, inline
from autograder.batch import record
from autograder.batch.gradebook import BOM, cell_text, text_cell
from autograder.core import results, untrusted
from autograder.core.files import atomic_write, valid_text
from autograder.core.i18n import N_, _
from autograder.core.manifest import Manifest

FOLDER = "manual"
KEPT = "marks.csv"  # the marks of the last --manual, in out/manual/
TEMPLATE = "marks-template.csv"
ANSWERS = "answers"  # out/manual/answers/<id>.json: each submission's answers, as extracted
NOTEBOOKS = "notebooks"  # out/manual/notebooks/<id>/<file>: the notebooks handed in (the marking page)
COLUMNS = ("submission", "question", "points", "comment")
ANSWER_TAG = "answer:"  # a notebook cell tagged "answer:<question id>" holds that question's answer
PART = "/"  # "answer:<question id>/<part>": one named part of it
MISSING = N_("Your answer to \"{question}\"{part} is missing: its cell is empty or as handed out. Your marker "
             "reads only what the notebook you hand in holds.")


@dataclass(frozen=True)
class Mark:
    points: float
    comment: str = ""
    marker: str = ""  # who gave it (the marks file's ``marker`` column, or ``grade --marker``): batch/record.py


Marks = dict[tuple[str, str], Mark]  # (submission, question id) -> its mark


def read_marks(path: Path, manifest: Manifest, removals: set[tuple[str, str]] | None = None) -> Marks:
    """The marks in ``path`` (see the module docstring).  Raises ValueError naming the
    file and line for what cannot be a mark; an empty ``points`` cell is no mark.  With
    ``removals``, a ``points`` cell ``remove`` adds its (submission, question) there: the
    record's mark is taken away (``record.merge_marks``); without it, it is not a number."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the marks: {exc}") from None
    first = text.split("\n", 1)[0]
    # a spreadsheet set to a language whose decimal mark is a comma (Vietnamese) saves with ";"
    reader = csv.DictReader(io.StringIO(text), delimiter=";" if ";" in first and "," not in first else ",")
    header = [h.strip() for h in reader.fieldnames or ()]
    missing = [c for c in COLUMNS[:3] if c not in header]
    if missing:
        raise ValueError(f"{path}: the header must name {', '.join(COLUMNS[:3])} (and optionally comment); "
                         f"missing {', '.join(missing)}")
    by_id = {q.id: q for q in manifest.questions}
    marks: Marks = {}
    for n, raw in enumerate(reader, start=2):
        row = {(k or "").strip(): _text((v or "").strip()) for k, v in raw.items() if isinstance(v, str)}
        sub, qid, points = row.get("submission", ""), row.get("question", ""), row.get("points", "")
        where = f"{path}:{n}"
        if not sub and not qid and not points:
            continue  # a blank line
        q = by_id.get(qid)
        if q is None:
            raise ValueError(f"{where}: no question {qid!r} in {manifest.name}/lab.toml")
        if q.participation:
            raise ValueError(f"{where}: question {qid!r} is the predictions' participation points, "
                             "given from the predictions.json handed in, not by hand")
        if not q.manual:
            raise ValueError(f"{where}: question {qid!r} is scored by its tests, not by hand (manual = true)")
        if not sub:
            raise ValueError(f"{where}: no submission")
        if (sub, qid) in marks:
            raise ValueError(f"{where}: a second mark for {sub!r}, question {qid!r}")
        if not points:
            continue  # not marked yet
        if removals is not None and points.strip().lower() == record.REMOVE:
            removals.add((sub, qid))
            continue
        try:
            value = float(points.replace(",", "."))  # "1,5" as a Vietnamese spreadsheet writes it
        except ValueError:
            raise ValueError(f"{where}: points {points!r} is not a number") from None
        if not 0 <= value <= q.points:
            raise ValueError(f"{where}: points {points!r} is outside 0 to {q.points:g} for question {qid!r}")
        marks[(sub, qid)] = Mark(value, row.get("comment", ""), row.get("marker", ""))
    return marks


def marks_csv(rows: list[tuple[str, str, Mark | None]]) -> str:
    """A marks file of ``(submission, question, mark or None)`` rows, as :func:`read_marks` reads it."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for sub, qid, mark in rows:
        # a submission's id is the student's (a folder name): no formula may run in the TA's spreadsheet
        w.writerow([text_cell(sub), qid, f"{mark.points:g}" if mark else "", text_cell(mark.comment) if mark else ""])
    return BOM + buf.getvalue()


def _text(cell: str) -> str:
    """The text a :func:`text_cell` holds: its ``'`` before a formula character taken off again."""
    return cell_text(cell)


def apply(res: results.SubmissionResult, manifest: Manifest, marks: Marks) -> results.SubmissionResult:
    """``res`` with a result for each manual question its marks hold (any earlier marks replaced)."""
    given = []
    for q in manifest.manual:
        mark = marks.get((res.submission, q.id))
        if mark is None:
            continue
        given.append(results.TestResult(
            nodeid=f"{results.MANUAL}::{q.id}", name=_("marked by hand"), question=q.id, max_points=q.points,
            points=mark.points, status=results.PASSED if mark.points >= q.points else results.FAILED,
            visibility="visible", feedback=mark.comment, kind=results.MANUAL))
    tests = [t for t in res.tests if t.kind != results.MANUAL] + given
    return dataclasses.replace(res, tests=tests)


MAX_NESTING = 100  # a notebook nests about 6 deep: deeper is refused (core.untrusted.load_json)


def answers(notebook: bytes) -> dict[str, list[str]]:
    """Question id -> the sources of the notebook's cells tagged ``answer:<id>`` (or one of its
    parts, ``answer:<id>/<part>``), in order (:func:`answer_cells`)."""
    out: dict[str, list[str]] = {}
    for qid, _part, text in answer_cells(notebook):
        out.setdefault(qid, []).append(text)
    return out


def split_tag(rest: str) -> tuple[str, str]:
    """``"reflections/step"`` -> ``("reflections", "step")``; ``"memo"`` -> ``("memo", "")``."""
    qid, _sep, part = rest.partition(PART)
    return qid, part


def answer_cells(notebook: bytes) -> list[tuple[str, str, str]]:
    """``(question id, part, source)`` of each cell tagged ``answer:<id>[/<part>]``, in order
    (part ``""`` for a cell of the whole question).

    The notebook is the student's: anything but a notebook's JSON (a JSON list,
    a string, nesting deeper than :data:`MAX_NESTING`, bytes that are not UTF-8,
    more than a handed-in file's size) gives ValueError, read in time linear in
    its size (``core.untrusted.load_json``); the texts returned are valid text
    (``files.valid_text``: a ``"\\ud800"`` escaped)."""
    try:
        nb = untrusted.load_json(notebook, max_depth=MAX_NESTING)
    except untrusted.OverBudget:
        raise  # the entry's time ran out: not the notebook's fault, and said as such
    except untrusted.Unreadable as exc:
        raise ValueError(_("it is not a notebook ({error})").format(error=exc)) from None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise ValueError(_("it is not a notebook ({error})").format(error=_("no list of cells")))
    out: list[tuple[str, str, str]] = []
    for cell in cells:
        untrusted.check()  # a million cells cost their loop, within the entry's budget
        if not isinstance(cell, dict):
            continue
        tags = (cell.get("metadata") or {}).get("tags") if isinstance(cell.get("metadata"), dict) else None
        source = cell.get("source", "")
        text = "".join(s for s in source if isinstance(s, str)) if isinstance(source, list) else str(source)
        for tag in tags if isinstance(tags, list) else ():
            if isinstance(tag, str) and tag.startswith(ANSWER_TAG):
                out.append((*split_tag(valid_text(tag[len(ANSWER_TAG):])), valid_text(text)))
    return out


def fill(notebook: bytes, given: dict[str, str]) -> bytes:
    """``notebook`` with each cell tagged ``answer:<id>`` holding ``given[id]`` (a demo
    submission's answers: ``autograder.authoring.candidates.notebook``); a part's cell
    (``answer:<id>/<part>``) holds ``given["<id>/<part>"]``, else ``given[id]``."""
    nb = json.loads(notebook)
    for cell in nb["cells"]:
        for tag in cell.get("metadata", {}).get("tags", []):
            if not tag.startswith(ANSWER_TAG):
                continue
            rest = tag[len(ANSWER_TAG):]
            key = rest if rest in given else split_tag(rest)[0]
            if key in given:
                cell["source"] = given[key].strip()
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode()


def expected_parts(lab_dir: Path, manifest: Manifest) -> dict[str, list[str]]:
    """Question id -> the parts its answer has in the lab's own notebooks, as handed out, in
    order (``[""]``: one answer, as for a question whose notebook has no part or no cell)."""
    out: dict[str, list[str]] = {q.id: [] for q in manifest.manual}
    for name in manifest.notebooks:
        path = lab_dir / name
        if path.is_file():
            for qid, part, _text in answer_cells(path.read_bytes()):
                if qid in out and part not in out[qid]:
                    out[qid].append(part)
    return {qid: [p for p in parts if p] or [""] for qid, parts in out.items()}


def blank_answers(lab_dir: Path, manifest: Manifest) -> set[str]:
    """The answer cells of the lab's own notebooks, as handed out: an answer equal to one is no answer."""
    out: set[str] = set()
    for name in manifest.notebooks:
        path = lab_dir / name
        if path.is_file():
            for texts in answers(path.read_bytes()).values():
                out.update(t.strip() for t in texts)
    return out


def extract(out: Path, manifest: Manifest, lab_dir: Path, notebooks: dict[str, dict[str, bytes]],
            blank: set[str] | None = None) -> dict[str, list[str]]:
    """``manual/answers/<id>.json`` for each submission staged now (``notebooks``: its
    notebooks, file name -> bytes): per manual question, ``[notebook, text]`` pairs,
    and what kept a notebook from being read.  Kept per submission, so that a run
    with ``--only`` leaves the others' answers as they were.  ``blank``: the lab's
    :func:`blank_answers`, when the caller has them already.

    Returns, per submission, its problems: each notebook handed in that could not be
    read (its answers cannot be marked: the gradebook and the feedback say why)."""
    blank = blank_answers(lab_dir, manifest) if blank is None else blank
    parts = expected_parts(lab_dir, manifest)
    problems: dict[str, list[str]] = {}
    for sub, files in notebooks.items():
        files = {n: d for n, d in files.items() if n in manifest.notebooks}  # a hand-in's other data (predictions.json)
        # the notebooks as handed in, for the marking page (names from lab.toml, never the student's)
        shutil.rmtree(out / FOLDER / NOTEBOOKS / sub, ignore_errors=True)  # a regrade's hand-in replaces the last
        for name, data in files.items():
            atomic_write(out / FOLDER / NOTEBOOKS / sub / name, data)
        found: dict[str, list[list[str]]] = {q.id: [] for q in manifest.manual}
        unread = []
        for name, data in sorted(files.items()):
            try:
                cells = answer_cells(data)
            except ValueError as exc:
                unread.append(f"{name}: {exc}")
                problems.setdefault(sub, []).append(
                    _("notebook {file} was not read, so its written answers cannot be marked: {problem}")
                    .format(file=name, problem=exc))
                continue
            for qid, part, text in cells:
                if qid in found and text.strip() and text.strip() not in blank:
                    found[qid].append([name, part, text])
        # a part is answered by a cell of that part (or, for a question of one answer, any of its cells)
        missing = {qid: [p for p in parts[qid] if not any(a[1] == p or not p for a in found[qid])]
                   for qid in found}
        record = {"notebooks": sorted(files), "answers": found, "missing": missing, "unread": unread}
        atomic_write(out / FOLDER / ANSWERS / f"{sub}.json", json.dumps(record, ensure_ascii=False))
    return problems


def _record(out: Path, sub: str) -> dict:
    try:
        record = json.loads((out / FOLDER / ANSWERS / f"{sub}.json").read_text())
        return record if isinstance(record, dict) else {}
    except (OSError, ValueError):
        return {}  # never extracted (graded before the lab had manual questions): no answer


def _answers(record: dict, qid: str) -> list[tuple[str, str, str]]:
    """``(notebook, part, text)`` of a record's answers to ``qid`` (a record written before answers
    had parts holds ``[notebook, text]`` pairs)."""
    given = record.get("answers", {}).get(qid, []) if isinstance(record.get("answers"), dict) else []
    return [(a[0], a[1], a[2]) if len(a) == 3 else (a[0], "", a[-1]) for a in given
            if isinstance(a, list) and len(a) in (2, 3) and all(isinstance(x, str) for x in a)]


def missing(record: dict, qid: str) -> list[str]:
    """The parts of ``qid`` a record says are missing (``""``: the whole answer)."""
    parts = (record.get("missing") or {}).get(qid) if isinstance(record.get("missing"), dict) else None
    if isinstance(parts, list):
        return [p for p in parts if isinstance(p, str)]
    return [] if _answers(record, qid) else [""]  # a record from before parts were named


def answers_markdown(question, records: dict[str, dict], context: dict[tuple[str, str], str] | None = None) -> str:
    """``manual/<question>.md``: each submission's answer to ``question`` (``records``:
    submission -> its :func:`extract` record), part by part where it has named parts.
    The answers are the students' text: fenced, so none can add a heading or HTML of
    its own.  ``context``: (submission, part) -> a line of ours shown above that part
    (a reflection's prediction and result: ``predictions_report.context``)."""
    context = context or {}
    lines = [f"# {question.title} (`{question.id}`, {question.points:g} points)", "",
             *([f"Rubric: {question.rubric}", ""] if question.rubric else []),
             f"Give the marks in `{TEMPLATE}` (a copy), then `autograder grade ... --manual FILE`.", ""]
    for sub in sorted(records):
        record = records[sub]
        lines += [f"## {inline(sub)}", ""]
        lines += [f"> notebook not read: {inline(u)}" for u in record.get("unread", ())]
        given, absent = _answers(record, question.id), missing(record, question.id)
        if not record.get("notebooks"):
            lines += ["_no notebook handed in_", ""]
            continue
        parts = list(dict.fromkeys([p for _n, p, _t in given] + absent))
        for part in parts:
            if part:
                lines += [f"### {code(part)}", ""]
            if (sub, part) in context:
                lines += [context[(sub, part)], ""]
            if part in absent:
                lines += ["_missing: the answer cell is empty or as handed out_" if part else
                          "_no answer: the answer cells are empty or as handed out_", ""]
            for notebook, _part, text in (a for a in given if a[1] == part):
                lines += [f"From {code(notebook)}:", "", *fenced(text.splitlines() or [""]), ""]
        lines.append("")
    return "\n".join(lines)


def write_marking(out: Path, manifest: Manifest, submissions: list[str], marks: Marks) -> None:
    """What a TA marks from: ``manual/<question>.md`` per manual question, and
    ``manual/marks-template.csv`` (every submission and manual question, the marks so far)."""
    records = {s: _record(out, s) for s in submissions}
    for q in manifest.manual:
        context = predictions_report.context(out, manifest, q.id, submissions)
        atomic_write(out / FOLDER / f"{q.id}.md", answers_markdown(q, records, context))
    rows = [(s, q.id, marks.get((s, q.id))) for s in sorted(submissions) for q in manifest.manual]
    atomic_write(out / FOLDER / TEMPLATE, marks_csv(rows))


def missing_notes(out: Path, res: results.SubmissionResult, manifest: Manifest) -> results.SubmissionResult:
    """``res`` with a note per answer its notebook left empty (as :func:`extract` found it), for
    the student's feedback: missing, never scored by the engine (a TA marks what is there)."""
    if not manifest.manual:
        return res
    record = _record(out, res.submission)
    if not record.get("notebooks"):
        return res  # no notebook at all: the feedback's pending questions say enough
    notes = []
    for q in manifest.manual:
        for part in missing(record, q.id):
            label = _part_label(manifest, part)
            notes.append(_(MISSING).format(question=_(q.title), part=f" ({label})" if label else ""))
    return dataclasses.replace(res, notes=[*res.notes, *notes]) if notes else res


def _part_label(manifest: Manifest, part: str) -> str:
    """A part as the student knows it: a prediction's prompt (a reflection), else its name."""
    try:
        return _(manifest.prediction(part).prompt)
    except KeyError:
        return part


def missing_count(out: Path, manifest: Manifest, submissions: list[str]) -> dict[str, int]:
    """Question id -> how many answers (parts) are missing over ``submissions``, notebooks handed in or not."""
    counts = {q.id: 0 for q in manifest.manual}
    for s in submissions:
        record = _record(out, s)
        for q in manifest.manual:
            counts[q.id] += len(missing(record, q.id))
    return counts


def summary(out: Path, manifest: Manifest, submissions: list[str]) -> str:
    """summary.md's part on written answers left empty (each named in ``manual/<question>.md``)."""
    if not manifest.manual:
        return ""
    counts = missing_count(out, manifest, submissions)
    return "\n".join(["", "## Written answers (marked by hand)", "",
                      "| question | answers missing (empty, as handed out, or no notebook) |", "|---|---|",
                      *(f"| {q.title} (`{q.id}`) | {counts[q.id]} |" for q in manifest.manual), ""]) + "\n"


def unknown(marks: Marks, submissions: set[str]) -> list[str]:
    """A warning per submission the marks name that the batch does not hold (a typo, a renamed folder)."""
    return [f"the manual marks name {s!r}, which is not a submission of this batch: its marks are not used"
            for s in sorted({s for s, _q in marks} - submissions)]


def keep(out: Path, marks: Marks) -> None:
    """``manual/marks.csv``: the marks read now, for the runs that come without ``--manual``."""
    atomic_write(out / FOLDER / KEPT, marks_csv([(s, q, m) for (s, q), m in sorted(marks.items())]))


def kept(out: Path, manifest: Manifest) -> Marks:
    """The marks kept in ``out``: the record's (``record.read_marks``), else, for a folder graded
    before the record kept marks, ``manual/marks.csv``.  ValueError for a mark this lab.toml
    cannot take (its question is gone or no longer manual, or out of range)."""
    if not record.has_marks(out):
        path = out / FOLDER / KEPT
        return read_marks(path, manifest) if path.is_file() else {}
    by_id = {q.id: q for q in manifest.questions}
    marks: Marks = {}
    for (sub, qid), e in record.read_marks(out).items():
        q = by_id.get(qid)
        if q is None or not q.manual or q.participation or not 0 <= e.points <= q.points:
            raise ValueError(f"{record.FOLDER}/{record.MARKS}: the mark of {sub!r} for {qid!r} "
                             f"({e.points:g}) does not fit {manifest.name}/lab.toml")
        marks[(sub, qid)] = Mark(e.points, e.comment, e.marker)
    return marks


def entries(marks: Marks, at: str) -> dict[tuple[str, str], record.Entry]:
    """Marks read from a file as the record keeps them (each with its marker, given ``at``)."""
    return {k: record.Entry(m.points, m.comment, m.marker, at) for k, m in marks.items()}


NO_NOTEBOOK = N_("no notebook handed in")
NO_ANSWER = N_("no answer handed in")


def absent(out: Path, manifest: Manifest, submission: str) -> dict[str, str]:
    """The manual questions ``submission`` handed in nothing for -> why (:data:`NO_NOTEBOOK` or
    :data:`NO_ANSWER`, untranslated): no notebook at all, or every part of its answer missing."""
    if not manifest.manual:
        return {}
    rec = _record(out, submission)
    if not rec.get("notebooks"):
        return {q.id: NO_NOTEBOOK for q in manifest.manual}
    return {q.id: NO_ANSWER for q in manifest.manual if not _answers(rec, q.id)}


def closing(out: Path, manifest: Manifest, submissions: list[str], marks: Marks) -> Marks:
    """``--close-marking``: a 0 for each manual question a submission handed in nothing for and
    that has no mark yet, its reason (translated now) as the comment."""
    closed: Marks = {}
    for sub in sorted(submissions):
        for qid, why in absent(out, manifest, sub).items():
            if (sub, qid) not in marks:
                closed[(sub, qid)] = Mark(0.0, _(why), CLOSED_BY)
    return closed


CLOSED_BY = "close-marking"  # the marker of a 0 given by --close-marking
