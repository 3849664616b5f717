"""The lab manifest, ``assignments/<lab>/lab.toml``, as frozen dataclasses.

One manifest is the single source of truth for a lab: which files a student
hands in, which questions exist and what they are worth, the limits a call
runs under, and which negative variants must lose which questions.

Strict: an unknown key or a value of the wrong type, in any table, is a
:class:`ManifestError` that names the key, its table and the file.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

from autograder.core.limits import MAX_FILES, MAX_NAME_BYTES
from autograder.core.i18n import N_

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
# a question's ``details``: when its hidden tests' feedback is shown ("after_due_date": results.json
# marks them so, and grade's feedback shows only their points until ``grade --after-due``)
DETAILS = ("always", "after_due_date")
ALL = "all"  # a variant that must lose every question (e.g. a syntax error)
PREDICTION_KINDS = ("number", "choice")
# the question [predictions_policy] points adds: a complete set of predictions (docs/predictions.md)
PARTICIPATION = "predictions"
PARTICIPATION_TITLE = N_("Predictions made before measuring")


class ManifestError(ValueError):
    """The lab.toml is malformed; the message names the field."""


@dataclass(frozen=True)
class Question:
    id: str
    title: str
    points: float
    sections: tuple[str, ...] = ()  # titles of the chapter sections that teach it (assignments/chapter.toml)
    details: str = "always"  # one of DETAILS
    # marked by hand (a written answer in the notebook): no test scores it; its points come from
    # ``grade --manual`` (autograder.batch.manual), and until then they are pending, never a 0
    manual: bool = False
    rubric: str = ""  # for the marker of a manual question (printed above the answers to mark)
    # the participation points of [predictions_policy] (PARTICIPATION): no test scores it either (so it is
    # ``manual``), but the batch gives its points from the predictions.json handed in, never a TA
    participation: bool = False


@dataclass(frozen=True)
class Prediction:
    """A ``[[predictions]]`` table: a guess the notebook asks for before a measurement
    (``docs/predictions.md``).  Never graded for being right."""

    id: str
    prompt: str  # English; the lab's catalog translates it
    kind: str  # one of PREDICTION_KINDS
    unit: str = ""  # a symbol or unit, shown as written ("x", "GB", "%")
    low: float | None = None  # a number's allowed range
    high: float | None = None
    choices: tuple[str, ...] = ()  # a choice's options, English (translated by the lab's catalog)
    truth: float | str | None = None  # fixed true value; None: the student's own measurement is the truth
    question: str = ""  # the question whose measurement it precedes (for the instructor's summary)
    reflection: str = ""  # a manual question: its answer cell tagged answer:<reflection>/<id> holds the reflection
    # regular expressions for the rules that give the truth away ("1/√B"): no cell before the notebook's
    # predict cell may state them (authoring/asked_first.py)
    reveals: tuple[str, ...] = ()

    @property
    def texts(self) -> tuple[str, ...]:
        """What a student reads of it, to translate: the prompt and the choices."""
        return (self.prompt, *self.choices)


BUDGET_CALLS = 6  # a lab.toml without submission_timeout_s: six calls at the per-call limit
GRADER_ALLOWANCE_S = 60.0  # a grader's own work beyond the student's budget (start, collection, the tests)


@dataclass(frozen=True)
class Limits:
    """lab.toml's ``[limits]``.

    ``submission_timeout_s`` is one submission's time budget: all of its worker
    spawns and calls together, on the wall clock from its first worker's start
    to the end of its tests (the tests' own work between calls counts too;
    each call's own ``timeout_s`` runs on the worker's clock, which a busy
    machine does not use up: ``sandbox/clock.py``).  Once it is used
    up every further call fails at once, and those tests score 0 with a message
    that says the submission's total time limit was used up (never a grader
    failure, never a pending score).  A lab that does not set it gets
    ``BUDGET_CALLS`` x ``timeout_s``.  Size it at 10 times or more the
    reference's whole grading time (``duration_s`` in raw/<id>.json of a batch
    that grades the reference), so an honest submission never meets it.

    The grader process of one submission is killed at :attr:`grader_timeout_s`
    (the budget plus ``GRADER_ALLOWANCE_S``), by ``grade`` and on Gradescope
    alike: only the engine's own hang gets there (a grader failure, pending).
    """
    timeout_s: float = 10.0  # per call into student code (and per test)
    memory_mb: int = 3072  # address-space cap of the sandboxed worker
    cpu_s: int = 120  # CPU-time cap of one worker
    test_timeout_s: float = 120.0  # one whole test, all its calls together
    submission_timeout_s: float | None = None  # the budget (see above); None: BUDGET_CALLS x timeout_s
    grader_memory_mb: int = 8192  # address-space cap of a grader process (the tests, the reference)
    # parallel graders per core when a batch does not say (--jobs): 2 for a lab whose tests mostly
    # wait by design (lab 4's loader sleeps), so another submission's tests use the idle core
    graders_per_core: int = 1

    def __post_init__(self):
        if self.submission_timeout_s is None:
            object.__setattr__(self, "submission_timeout_s", BUDGET_CALLS * self.timeout_s)

    @property
    def grader_timeout_s(self) -> float:
        """The wall-clock limit of one submission's grader process."""
        return self.submission_timeout_s + GRADER_ALLOWANCE_S


@dataclass(frozen=True)
class Edit:
    """Replace the one place ``base``'s copy of the file holds ``replace`` by ``by``."""

    replace: str
    by: str


@dataclass(frozen=True)
class Variant:
    """A negative variant: ``base``'s copy of one file, changed in one of two ways.

    * ``patch``: an overlay file appended to it; Python's late binding of
      globals makes the appended definitions win everywhere (a mistake that
      rewrites whole functions);
    * ``edits``: text replacements, each of a passage that occurs exactly once
      (a mistake of a line or two, written as the change itself, so that the
      variant cannot drift from the reference: an edit that no longer applies
      is an error).
    """

    id: str
    description: str
    file: str
    loses: tuple[str, ...]  # question ids, or (ALL,)
    patch: str = ""  # path relative to solutions/<lab>/
    edits: tuple[Edit, ...] = ()
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
    predictions: tuple[Prediction, ...] = ()
    # [sandbox] preload: the modules the zygote imports for this lab's student code, in place of the
    # course file's list (None: the course's); what this lab's code never imports only makes every
    # worker's fork and exit dearer (lab 4: numpy, no torch)
    preload: tuple[str, ...] | None = None

    @property
    def max_score(self) -> float:
        return sum(q.points for q in self.questions)

    @property
    def tested(self) -> tuple[Question, ...]:
        """The questions the tests score (every one but those marked by hand)."""
        return tuple(q for q in self.questions if not q.manual)

    @property
    def manual(self) -> tuple[Question, ...]:
        """The questions a TA marks (the participation question is the batch's to give)."""
        return tuple(q for q in self.questions if q.manual and not q.participation)

    @property
    def participation(self) -> Question | None:
        """The question of the predictions' participation points, when ``[predictions_policy]`` gives any."""
        return next((q for q in self.questions if q.participation), None)

    def prediction(self, pid: str) -> Prediction:
        for p in self.predictions:
            if p.id == pid:
                return p
        raise KeyError(f"{self.name}: no prediction {pid!r} in lab.toml")

    @property
    def notebooks(self) -> tuple[str, ...]:
        """The lab's notebooks, in each language: a hand-in may hold one (its written answers)."""
        return (f"{self.name}.ipynb", f"{self.name}.vi.ipynb")

    def question(self, qid: str) -> Question:
        for q in self.questions:
            if q.id == qid:
                return q
        raise KeyError(f"{self.name}: no question {qid!r} in lab.toml")

    def lost_by(self, variant: Variant) -> frozenset[str]:
        if variant.loses == (ALL,):
            return frozenset(q.id for q in self.tested)
        return frozenset(variant.loses)


# -- the schema: every table's keys and their types ---------------------------------------
# Strict, as pytest-timeout validates its marker: a typo ("timeot_s") would otherwise be ignored
# and the lab would run under the default limit without anyone noticing.
@dataclass(frozen=True)
class _Type:
    name: str  # as a message says it: "a string", "a list of strings"
    ok: Callable[[object], bool]


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _str_list(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _table_list(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, dict) for x in v)


STR = _Type("a string", lambda v: isinstance(v, str))
BOOL = _Type("true or false", lambda v: isinstance(v, bool))
NUMBER = _Type("a number", _number)
INT = _Type("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool))
STR_LIST = _Type("a list of strings", _str_list)
STR_OR_LIST = _Type("a string or a list of strings", lambda v: isinstance(v, str) or _str_list(v))
TABLE = _Type("a table", lambda v: isinstance(v, dict))
TABLE_LIST = _Type("an array of tables", _table_list)

TOP = {"title": STR, "student_files": STR_LIST, "support_files": STR_LIST, "visibility": STR,
       "limits": TABLE, "questions": TABLE_LIST, "variants": TABLE_LIST, "predictions": TABLE_LIST,
       "predictions_policy": TABLE, "sandbox": TABLE}
LIMITS = {f.name: (INT if f.type == "int" else NUMBER) for f in fields(Limits)}
QUESTION = {"id": STR, "title": STR, "points": NUMBER, "section": STR_OR_LIST, "details": STR, "manual": BOOL,
            "rubric": STR}
VARIANT = {"id": STR, "description": STR, "file": STR, "patch": STR, "edits": TABLE_LIST, "loses": STR_LIST,
           "base": STR}
EDIT = {"replace": STR, "by": STR}
NUMBER_OR_STR = _Type("a number or a string", lambda v: _number(v) or isinstance(v, str))
PREDICTION = {"id": STR, "prompt": STR, "kind": STR, "unit": STR, "low": NUMBER, "high": NUMBER,
              "choices": STR_LIST, "truth": NUMBER_OR_STR, "question": STR, "reflection": STR, "reveals": STR_LIST}
PREDICTIONS_POLICY = {"points": NUMBER}
SANDBOX = {"preload": STR_LIST}
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")  # a dotted module name
_PLAIN_ID = re.compile(r"[A-Za-z0-9_.-]+")  # a prediction id: a JSON key and part of a cell tag (answer:<q>/<id>)


def _check(table: dict, schema: dict[str, _Type], where: str, label: str) -> dict:
    """``table`` itself, once every key is known to ``schema`` and of its type."""
    for key in table:
        if key not in schema:
            raise ManifestError(f'{where}: unknown key "{key}" in {label}; known: {", ".join(schema)}')
    for key, kind in schema.items():
        if key in table and not kind.ok(table[key]):
            value = table[key]
            raise ManifestError(f'{where}: key "{key}" in {label} must be {kind.name}, '
                                f'not {type(value).__name__} {value!r:.60}')
    return table


def _label(array: str, i: int, table: dict) -> str:
    """``[[questions]] #2 (id "trajectories")``: which table of an array, as an author finds it."""
    ident = table.get("id")
    return f"[[{array}]] #{i + 1}" + (f' (id "{ident}")' if isinstance(ident, str) else "")


def _require(table: dict, key: str, where: str):
    if key not in table:
        raise ManifestError(f"{where}: missing required key {key!r}")
    return table[key]


def _sections(value: str | list[str]) -> tuple[str, ...]:
    """``section = "Data Pipeline"`` or a list of titles; ``core/labs.py`` checks them against the outline."""
    return (value,) if isinstance(value, str) else tuple(value)


def _details(q: dict, where: str) -> str:
    value = q.get("details", "always")
    if value not in DETAILS:
        raise ManifestError(f"{where}: question {q.get('id', '?')!r}: key 'details' must be one of "
                            f"{', '.join(map(repr, DETAILS))}, not {value!r}")
    return value


def _limits(table: dict, where: str) -> Limits:
    _check(table, LIMITS, where, "[limits]")
    for key, value in table.items():
        if value <= 0:
            raise ManifestError(f'{where}: key "{key}" in [limits] must be positive, not {value!r}')
    return Limits(**table)


def _file_names(names: list[str], key: str, where: str) -> tuple[str, ...]:
    for n in names:
        if not n or "/" in n or "\\" in n or n in (".", "..") or len(n.encode()) > MAX_NAME_BYTES:
            raise ManifestError(f'{where}: key "{key}" must list plain file names, not {n!r}')
    return tuple(names)


def _edits(v: dict, where: str, i: int) -> tuple[Edit, ...]:
    """A variant's edits, once it is known to have ``patch`` or ``edits``, not both."""
    label = _label("variants", i, v)
    if ("patch" in v) == ("edits" in v):
        raise ManifestError(f"{where}: {label} needs exactly one of the keys 'patch' and 'edits'")
    edits = []
    for j, e in enumerate(v.get("edits", ())):
        _check(e, EDIT, where, f"{label} edit #{j + 1}")
        edits.append(Edit(_require(e, "replace", f"{where} {label} edit #{j + 1}"),
                          _require(e, "by", f"{where} {label} edit #{j + 1}")))
    if "edits" in v and not edits:
        raise ManifestError(f"{where}: {label} has an empty 'edits' list")
    return tuple(edits)


def parse(data: dict, name: str) -> Manifest:
    where = f"{name}/lab.toml"
    _check(data, TOP, where, "the top level")
    question_tables = [_check(q, QUESTION, where, _label("questions", i, q))
                       for i, q in enumerate(_require(data, "questions", where))]
    questions = tuple(
        Question(
            id=_require(q, "id", f"{where} [[questions]]"),
            title=_require(q, "title", f"{where} [[questions]]"),
            points=float(_require(q, "points", f"{where} [[questions]]")),
            sections=_sections(q.get("section", ())),
            details=_details(q, where),
            manual=q.get("manual", False),
            rubric=q.get("rubric", ""),
        )
        for q in question_tables
    )
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        raise ManifestError(f"{where}: duplicate question ids in {ids}")
    variant_tables = [_check(v, VARIANT, where, _label("variants", i, v))
                      for i, v in enumerate(data.get("variants", ()))]
    variants = tuple(
        Variant(
            id=_require(v, "id", f"{where} [[variants]]"),
            description=v.get("description", ""),
            file=_require(v, "file", f"{where} [[variants]]"),
            patch=v.get("patch", ""),
            edits=_edits(v, where, i),
            loses=tuple(_require(v, "loses", f"{where} [[variants]]")),
            base=v.get("base", "reference"),
        )
        for i, v in enumerate(variant_tables)
    )
    student_files = _file_names(_require(data, "student_files", where), "student_files", where)
    support_files = _file_names(data.get("support_files", []), "support_files", where)
    if len(student_files) + len(support_files) > MAX_FILES:
        raise ManifestError(f"{where}: at most {MAX_FILES} student and support files together, "
                            f"not {len(student_files) + len(support_files)}")
    for v in variants:
        unknown = set(v.loses) - set(ids) - {ALL}
        if unknown:
            raise ManifestError(f"{where}: variant {v.id} loses unknown questions {sorted(unknown)}")
        by_hand = sorted(set(v.loses) & {q.id for q in questions if q.manual})
        if by_hand:  # no test scores them, so no variant can be seen to lose them
            raise ManifestError(f"{where}: variant {v.id} loses {by_hand}, marked by hand (manual = true)")
        if v.file not in student_files:
            raise ManifestError(f"{where}: variant {v.id} patches {v.file}, not a student file")
        if v.base not in ("reference", "stub"):
            raise ManifestError(f"{where}: variant {v.id} base must be 'reference' or 'stub'")
    visibility = data.get("visibility", "visible")
    if visibility not in VISIBILITIES:
        raise ManifestError(f"{where}: visibility must be one of {VISIBILITIES}")
    predictions = _predictions(data.get("predictions", ()), questions, where)
    policy = _check(data.get("predictions_policy", {}), PREDICTIONS_POLICY, where, "[predictions_policy]")
    points = policy.get("points", 0)
    if not math.isfinite(points) or points < 0:
        raise ManifestError(f'{where}: key "points" in [predictions_policy] must be 0 or more, not {points!r}')
    if points and not predictions:
        raise ManifestError(f"{where}: [predictions_policy] gives points, but the lab declares no [[predictions]]")
    if points:
        if PARTICIPATION in ids:
            raise ManifestError(f"{where}: question id {PARTICIPATION!r} is taken by [predictions_policy]'s points")
        questions += (Question(id=PARTICIPATION, title=PARTICIPATION_TITLE, points=float(points), manual=True,
                               participation=True),)
    sandbox = _check(data.get("sandbox", {}), SANDBOX, where, "[sandbox]")
    preload = sandbox.get("preload")
    if preload is not None and not all(_MODULE.fullmatch(m) for m in preload):
        raise ManifestError(f'{where}: key "preload" in [sandbox] must list module names, not {preload!r}')
    return Manifest(
        name=name,
        title=_require(data, "title", where),
        student_files=student_files,
        questions=questions,
        limits=_limits(data.get("limits", {}), where),
        support_files=support_files,
        variants=variants,
        visibility=visibility,
        predictions=predictions,
        preload=None if preload is None else tuple(preload),
    )


def _predictions(tables: list[dict], questions: tuple[Question, ...], where: str) -> tuple[Prediction, ...]:
    """The ``[[predictions]]`` tables, each checked against its kind and the lab's questions."""
    out = []
    by_id = {q.id: q for q in questions}
    for i, t in enumerate(tables):
        label = _label("predictions", i, t)
        _check(t, PREDICTION, where, label)
        here = f"{where}: {label}"
        pid, kind = _require(t, "id", here), _require(t, "kind", here)
        if not _PLAIN_ID.fullmatch(pid):
            raise ManifestError(f"{here}: id must be letters, digits, '_', '.' or '-', not {pid!r}")
        if kind not in PREDICTION_KINDS:
            raise ManifestError(f"{here}: kind must be one of {', '.join(map(repr, PREDICTION_KINDS))}, not {kind!r}")
        truth = t.get("truth")
        if kind == "number":
            if "choices" in t:
                raise ManifestError(f'{here}: key "choices" is for kind = "choice"')
            low, high = _require(t, "low", here), _require(t, "high", here)
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise ManifestError(f"{here}: low must be below high, both finite (not {low!r}, {high!r})")
            if truth is not None and not (_number(truth) and math.isfinite(truth)):
                raise ManifestError(f"{here}: truth of a number must be a finite number, not {truth!r}")
            choices = ()
        else:
            if "low" in t or "high" in t:
                raise ManifestError(f'{here}: keys "low" and "high" are for kind = "number"')
            choices = tuple(_require(t, "choices", here))
            if len(choices) < 2 or len(set(choices)) != len(choices) or not all(c.strip() for c in choices):
                raise ManifestError(f"{here}: choices must be two or more different, non-empty strings")
            if truth is not None and truth not in choices:
                raise ManifestError(f"{here}: truth {truth!r} is not one of its choices")
            low = high = None
        question, reflection = t.get("question", ""), t.get("reflection", "")
        if question and question not in by_id:
            raise ManifestError(f"{here}: question {question!r} is not in [[questions]]")
        if reflection and not (reflection in by_id and by_id[reflection].manual):
            raise ManifestError(f"{here}: reflection {reflection!r} must name a question with manual = true")
        reveals = tuple(t.get("reveals", ()))
        for rule in reveals:
            try:
                matches_nothing = re.compile(rule, re.IGNORECASE).fullmatch("") is None
            except re.error as e:
                raise ManifestError(f"{here}: reveals {rule!r} is not a regular expression ({e})") from None
            if not matches_nothing:
                raise ManifestError(f"{here}: reveals {rule!r} matches an empty text, so it would match anywhere")
        if reveals and truth is None:
            raise ManifestError(f'{here}: key "reveals" needs a fixed truth (without one, nothing is revealed early)')
        out.append(Prediction(id=pid, prompt=_require(t, "prompt", here), kind=kind, unit=t.get("unit", ""),
                              low=None if low is None else float(low), high=None if high is None else float(high),
                              choices=choices, truth=float(truth) if _number(truth) else truth,
                              question=question, reflection=reflection, reveals=reveals))
    ids = [p.id for p in out]
    if len(set(ids)) != len(ids):
        raise ManifestError(f"{where}: duplicate prediction ids in {ids}")
    return tuple(out)


_loaded: dict[tuple, Manifest] = {}  # a warm grader reads each lab.toml once, not once per test


def load(path: Path) -> Manifest:
    st = os.stat(path)
    key = (os.path.realpath(path), st.st_mtime_ns, st.st_size)  # an edited file is read again
    if key not in _loaded:
        with open(path, "rb") as f:
            try:
                data = tomllib.load(f)
            except tomllib.TOMLDecodeError as exc:
                raise ManifestError(f"{path.parent.name}/lab.toml: {exc}") from None
        _loaded[key] = parse(data, path.parent.name)  # frozen: safe to share
    return _loaded[key]
