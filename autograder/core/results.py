"""The results model: small dataclasses, ``to_dict``/``from_dict``, no pickle.

A test is all-or-nothing; a question's score is the sum of its tests; a
submission's score is the sum of its questions.

Every file that holds a result is written and read here, so its bytes are
decided in one place:

- ``SubmissionResult.to_json``/``from_json``: raw/<id>.json, and the report
  a grader process writes (``--results-json``, a result without its
  submission's name, which ``from_json`` is then told);
- ``gradescope_json`` and ``gradescope_text``: results.json, Gradescope's
  schema, the only view a student reads (never ``instructor_note``).

The gradebook row is a view of a result, not a file of it:
``autograder.batch.gradebook.row``.

A result read back (``from_dict``: a grader's report, raw/) holds valid text
only: what a student's code put in a message that UTF-8 cannot encode (a
lone surrogate) becomes its backslash escape there (``files.valid_text``),
so no console, file or library downstream meets it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from autograder.core.files import valid_text
from autograder.core.i18n import N_, _

PASSED, FAILED = "passed", "failed"
PENDING = N_("The grader failed on this submission, not because of your code: the score below is pending "
             "until your instructor regrades it.")
AFTER_DUE_DATE = "after_due_date"  # a question's ``details`` in lab.toml, and Gradescope's visibility
MANUAL = "manual"  # a TestResult's kind when it is a mark given by hand (autograder.batch.manual), not a test
NOT_MARKED = N_("{points:g} points are marked by hand and not marked yet: they are pending, not lost.")


@dataclass
class TestResult:
    nodeid: str
    name: str
    question: str
    max_points: float
    points: float
    status: str  # PASSED or FAILED (an error or a skip counts as failed)
    visibility: str
    feedback: str = ""
    kind: str = ""  # StudentCodeError kind when the student's code failed
    duration_s: float = 0.0
    public: bool = False
    # For instructors only (raw/<id>.json): what a hidden test's feedback leaves out, such as what
    # the student's code printed.  Never in results.json nor in the feedback a student reads.
    instructor_note: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TestResult":
        return cls(**{k: _text(d[k]) for k in cls.__dataclass_fields__ if k in d})


@dataclass
class QuestionScore:
    id: str
    title: str
    points: float
    max_points: float
    total: int  # its tests with a result (a mark, for a manual question); 0: the grader could not run them
    sections: tuple[str, ...] = ()  # chapter section titles
    manual: bool = False  # marked by hand; ``total == 0``: not marked yet

    @property
    def pending(self) -> bool:
        """Marked by hand and not marked yet: neither full marks nor lost."""
        return self.manual and not self.total

    @property
    def full(self) -> bool:
        return self.points >= self.max_points - 1e-9


@dataclass
class SubmissionResult:
    submission: str
    lab: str
    tests: list[TestResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # problems outside any test
    isolation: dict = field(default_factory=dict)  # which sandbox layers were active
    duration_s: float = 0.0
    sha256: str = ""
    lang: str = "en"  # the language of its messages (autograder.core.i18n)
    notes: list[str] = field(default_factory=list)  # not problems: which file was graded where there was a choice
    grader_error: str = ""  # the engine failed on this submission: its score is pending, not a grade

    @property
    def score(self) -> float:
        return round(sum(t.points for t in self.tests), 6)

    def questions(self, manifest) -> list[QuestionScore]:
        out = []
        for q in manifest.questions:
            ts = [t for t in self.tests if t.question == q.id]
            out.append(QuestionScore(
                id=q.id, title=q.title, sections=q.sections,
                points=round(sum(t.points for t in ts), 6), max_points=q.points,
                total=len(ts), manual=q.manual,
            ))
        return out

    def pending_points(self, manifest) -> float:
        """The points of the questions marked by hand that have no mark yet."""
        return sum(q.max_points for q in self.questions(manifest) if q.pending)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["score"] = self.score
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "SubmissionResult":
        return cls(
            submission=_text(d["submission"]), lab=d["lab"],
            tests=[TestResult.from_dict(t) for t in d.get("tests", [])],
            errors=[_text(e) for e in d.get("errors", [])], isolation=dict(d.get("isolation", {})),
            duration_s=float(d.get("duration_s", 0.0)), sha256=d.get("sha256", ""),
            lang=d.get("lang", "en"), notes=[_text(n) for n in d.get("notes", [])],
            grader_error=_text(str(d.get("grader_error", ""))),
        )

    def to_json(self) -> str:
        """raw/<id>.json: everything, ``instructor_note`` included (for instructors only)."""
        return json.dumps(self.to_dict())

    @staticmethod
    def report_json(tests: list[TestResult], isolation: dict) -> str:
        """What one grader process knows of a result (its ``--results-json``): the rest
        (``submission``, ``lab``, ...) is its caller's, given to :meth:`from_json`."""
        return json.dumps({"tests": [t.to_dict() for t in tests], "isolation": isolation})

    @classmethod
    def from_json(cls, text: str, **known) -> "SubmissionResult":
        """The inverse of ``to_json``.  ``known`` fills the keys the text lacks: a
        grader process reports only its tests and isolation (``--results-json``),
        and its caller knows the submission and the lab.  Raises ValueError or
        KeyError on a torn or foreign file."""
        d = json.loads(text)
        if not isinstance(d, dict):
            raise ValueError("a result is a JSON object")
        return cls.from_dict({**known, **d})


def _text(value):
    """A string as valid text (``files.valid_text``); anything else as it is."""
    return valid_text(value) if isinstance(value, str) else value


def details_withheld(t: TestResult, manifest) -> bool:
    """A hidden test of a question whose details come after the due date (lab.toml ``details``)."""
    return not t.public and manifest.question(t.question).details == AFTER_DUE_DATE


def gradescope_visibility(t: TestResult, manifest) -> str:
    """The test's visibility; ``after_due_date`` where its question's details wait for the due date
    (a stricter one, ``hidden`` or ``after_published``, is kept)."""
    return AFTER_DUE_DATE if details_withheld(t, manifest) and t.visibility == "visible" else t.visibility


def gradescope_json(result: SubmissionResult, manifest) -> dict:
    """Gradescope's results.json for one submission (one entry per test).

    Tests come question by question in ``lab.toml``'s order, numbered
    ``<question>.<test>`` (``2.3``: the third test of the second question).
    Only what a student may read goes in: never ``instructor_note``."""
    order = {q.id: n for n, q in enumerate(manifest.questions, 1)}
    tests, within = [], {}
    for t in sorted(result.tests, key=lambda t: (order.get(t.question, len(order) + 1), t.nodeid)):
        q = manifest.question(t.question)
        within[t.question] = within.get(t.question, 0) + 1
        tests.append({
            "score": t.points,
            "max_score": t.max_points,
            "status": t.status,
            "name": f"{_(q.title)}: {t.name}",
            "number": f"{order.get(t.question, len(order) + 1)}.{within[t.question]}",
            "output": t.feedback,
            "output_format": "text",
            "visibility": gradescope_visibility(t, manifest),
            "tags": [t.question],
        })
    lines = [f"{_(manifest.title)}: {result.score:g} / {manifest.max_score:g}"]
    if result.pending_points(manifest):  # on Gradescope, its own manual grading adds them
        lines.append(_(NOT_MARKED).format(points=result.pending_points(manifest)))
    if result.grader_error:
        lines.insert(0, _(PENDING))
    lines += [_("Problem: {problem}").format(problem=e) for e in result.errors]
    return {
        "score": result.score,
        "execution_time": round(result.duration_s, 3),
        "output": "\n".join(lines),
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"lab": result.lab, "isolation": result.isolation, "sha256": result.sha256,
                       "lang": result.lang},
    }


def gradescope_text(payload: dict) -> str:
    """The bytes of a results.json: ``gradescope_json``'s, or the engine's own
    failure report (``autograder.batch.gradescope_run.crash_json``)."""
    return json.dumps(payload, indent=1)
