"""pytest plugin: points, questions, the ``student`` seam, results.

Layout follows pytest-timeout: help texts, options, markers, hooks, then
settings resolution.  Loaded through the ``pytest11`` entry point, so a plain
``pytest`` in the repository grades the reference with the hidden tests.

A lab test file is one under ``tests/<lab>/`` (hidden) or
``assignments/<lab>/tests/`` (public).  Every such test must carry
``@pytest.mark.question("id", points=1)``; anything else is a usage error.
"""

from __future__ import annotations

import os
import re
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.calls import errors, seam
from autograder.core import labs, results
from autograder.core.files import atomic_write
from autograder.core.manifest import VISIBILITIES
from autograder.labkit import batch_cache, messages
from autograder.core.i18n import _
from autograder.labkit.snapshot import Snapshot

# -- help texts (each written once, used by option and ini) ----------------
SUBMISSION_HELP = "folder with the student files to test (default: the reference, else the assignment folder)"
SANDBOX_HELP = "run student code in a sandboxed worker process (grading mode)"
RESULTS_HELP = "write per-test results as JSON to this path"
UPDATE_HELP = "rewrite public-test snapshots from the code under test (the reference)"
QUESTION_HELP = "question(id, points=1, visibility=None): the lab question a test scores for"
SEED_SALT_HELP = ("mixed into the seeds of hidden tests (grading passes the submission's sha256), "
                  "so their inputs change with each submission; default: none, today's seeds")
BATCH_CACHE_HELP = ("a folder the graders of one batch share for the answers that are the same for every "
                    "submission (the reference's, the tests' ground truth: labkit/batch_cache.py); "
                    "default: kept in this run's memory only")
FIXED_SEED_HELP = "fixed_seed: this hidden test's seed ignores --seed-salt (its inputs never change)"
FIXED_CASE_HELP = ("fixed_case: this hidden test's inputs are the same on every submission (a chapter's worked "
                   "example): its messages never say which way a value is off. Implied for a hidden test that uses "
                   "neither the seed nor the rng fixture, or is marked fixed_seed")
SUITE_WORKERS_HELP = ("processes that run a plain pytest of the project's own suite (pytest-xdist, whole files per "
                      "process): a number, or auto (one per core); 0: this process. Never a grading run's")

SUBMISSION_ENV = "IRONLAW_SUBMISSION"
SANDBOX_ENV = "IRONLAW_SANDBOX"
SEED_SALT_ENV = "IRONLAW_SEED_SALT"
DEFAULT_POINTS = 1.0

STATE = pytest.StashKey["State"]()
ITEM = pytest.StashKey["ItemInfo"]()


# -- options and markers ----------------------------------------------------
def pytest_addoption(parser):
    group = parser.getgroup("autograder")
    group.addoption("--submission", dest="ag_submission", default=None, help=SUBMISSION_HELP)
    group.addoption("--sandbox", dest="ag_sandbox", action="store_true", default=None, help=SANDBOX_HELP)
    group.addoption("--results-json", dest="ag_results", default=None, help=RESULTS_HELP)
    group.addoption("--update-snapshots", dest="ag_update", action="store_true", default=False, help=UPDATE_HELP)
    group.addoption("--seed-salt", dest="ag_seed_salt", default=None, help=SEED_SALT_HELP)
    group.addoption("--batch-cache", dest="ag_batch_cache", default=None, help=BATCH_CACHE_HELP)
    parser.addini("autograder_sandbox", SANDBOX_HELP, type="bool", default=False)
    parser.addini("autograder_suite_workers", SUITE_WORKERS_HELP, default="0")


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config):
    """A plain ``pytest`` of the project spreads its test files over pytest-xdist's processes
    (``autograder_suite_workers`` in the ini file).  A wrapper, so that it runs before xdist
    reads its options whatever order the two plugins were loaded in (``python -m pytest``
    loads this one first).  Left alone: a run that chose ``-n`` itself, an xdist worker, a
    machine without xdist, and every run that grades or checks a submission
    (``--submission``, ``--sandbox``, ``--results-json``): those are one submission's tests
    in one grader process."""
    _spread_the_suite(config)
    return (yield)


def _spread_the_suite(config) -> None:
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return
    if config.option.numprocesses is not None or config.getoption("collectonly"):
        return
    s = resolve_settings(config)
    if s.submission or s.sandbox or s.results_json or s.update_snapshots:
        return
    workers = str(config.getini("autograder_suite_workers")).strip()
    if workers not in ("auto", "logical") and not (workers.isdigit() and int(workers) > 0):
        if workers != "0":
            raise pytest.UsageError(f"autograder_suite_workers must be a number or auto, not {workers!r}")
        return
    config.option.numprocesses = workers if not workers.isdigit() else int(workers)
    if config.option.dist == "no":
        config.option.dist = "loadfile"  # a file's tests share its module state (and its fixtures)
        # files go out in the order collected, not xdist's most-tests-first: a suite orders its long
        # files first (tests/framework/conftest.py), so no worker is left running one while the others idle
        config.option.loadscopereorder = False


THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def pytest_configure(config):
    # one BLAS/OpenMP thread, as in graders and workers; set before torch is imported
    for v in THREAD_VARS:
        os.environ.setdefault(v, "1")
    config.addinivalue_line("markers", QUESTION_HELP)
    config.addinivalue_line("markers", FIXED_SEED_HELP)
    config.addinivalue_line("markers", FIXED_CASE_HELP)
    config.stash[STATE] = State(settings=resolve_settings(config))
    batch_cache.open_session(config.getoption("ag_batch_cache"))


def pytest_unconfigure(config):
    batch_cache.close_session()


# -- settings resolution: command line > environment > ini > default ---------
@dataclass(frozen=True)
class Settings:
    submission: Path | None
    sandbox: bool
    results_json: Path | None
    update_snapshots: bool
    seed_salt: str = ""  # "" keeps every test's seed as it was without grading


def resolve_settings(config) -> Settings:
    sub = config.getoption("ag_submission") or os.environ.get(SUBMISSION_ENV)
    sandbox = config.getoption("ag_sandbox")
    if sandbox is None:
        env = os.environ.get(SANDBOX_ENV)
        sandbox = env.lower() in ("1", "true", "yes") if env else config.getini("autograder_sandbox")
    res = config.getoption("ag_results")
    salt = config.getoption("ag_seed_salt")
    if salt is None:
        salt = os.environ.get(SEED_SALT_ENV, "")
    return Settings(
        submission=Path(sub).resolve() if sub else None,
        sandbox=bool(sandbox),
        results_json=Path(res) if res else None,
        update_snapshots=config.getoption("ag_update"),
        seed_salt=salt,
    )


@dataclass
class ItemInfo:
    lab: labs.Lab
    question: str
    points: float
    visibility: str
    public: bool
    fixed: bool = False  # hidden, with inputs the same on every submission: no direction in its messages


class State:
    """Per-session state: code backends by (lab, which) and collected results."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.backends: dict[tuple[str, str], seam.Backend] = {}
        self.results: list[results.TestResult] = []
        self.isolation: dict = {}

    def code(self, lab: labs.Lab, which: str) -> seam.CodeProxy:
        key = (lab.name, which)
        if key not in self.backends:
            self.backends[key] = self._make_backend(lab, which)
        return seam.CodeProxy(self.backends[key])

    def _make_backend(self, lab: labs.Lab, which: str) -> seam.Backend:
        _one_torch_thread()
        m = lab.manifest
        support = (lab.assignment_dir, m.support_files)
        if which == "reference":  # its answers are the batch's (labkit/batch_cache.py)
            return batch_cache.CachedBackend(
                seam.InProcess(lab.solution_dir, m.student_files, *support, label="reference"),
                batch_cache.current().store(lab))
        s = self.settings
        code_dir = s.submission or (lab.solution_dir if lab.has_solutions else lab.assignment_dir)
        if s.sandbox:
            from autograder.sandbox.backend import SandboxBackend  # only grading mode needs it

            return SandboxBackend(code_dir, m, lab.assignment_dir)
        return seam.InProcess(code_dir, m.student_files, *support, label="student (in-process)")

    def close(self):
        for (_key, which), b in self.backends.items():
            if which == "student":
                self.isolation.update(getattr(b, "isolation", None) or {"sandbox": False})
            b.close()
        self.backends.clear()
        if self.settings.sandbox:
            from autograder.sandbox.backend import stop_zygote

            stop_zygote()


def _one_torch_thread() -> None:
    """Tiny models on a busy 2-core machine are 10-100x slower with two threads;
    graders and workers run with one, so local runs do too.  Only a torch already
    imported is set: one imported later reads OMP_NUM_THREADS, which pytest_configure
    set to 1 (and a lab whose tests never import torch does not pay for it)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


# -- collection: every lab test belongs to a question ------------------------
# Markers are checked as pytest-timeout checks its own: a keyword or value the plugin
# does not know is a usage error, never ignored (``visibility="hiden"`` would otherwise
# publish a hidden test's feedback under the lab's default).
QUESTION_KEYWORDS = ("points", "visibility")


class MarkerError(ValueError):
    """A marker the plugin cannot use; the message names what is wrong with it."""


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def parse_question(marker) -> tuple[str, float, str | None]:
    """(question id, points, visibility or None) of a ``question`` marker, or MarkerError."""
    unknown = [k for k in marker.kwargs if k not in QUESTION_KEYWORDS]
    if unknown:
        raise MarkerError(f"unknown keyword {unknown[0]!r} (known: {', '.join(QUESTION_KEYWORDS)})")
    if len(marker.args) != 1:
        raise MarkerError(f"takes one positional argument, the question id, not {len(marker.args)}")
    qid = marker.args[0]
    if not isinstance(qid, str):
        raise MarkerError(f"the question id must be a string, not {type(qid).__name__} {qid!r}")
    points = marker.kwargs.get("points", DEFAULT_POINTS)
    if not _is_number(points) or not points >= 0:
        raise MarkerError(f"keyword 'points' must be a number of at least 0, not {points!r}")
    visibility = marker.kwargs.get("visibility")
    if visibility is not None and visibility not in VISIBILITIES:
        raise MarkerError(f"keyword 'visibility' must be one of {', '.join(VISIBILITIES)}, not {visibility!r}")
    return qid, float(points), visibility


def parse_no_arguments(marker) -> None:
    if marker.args or marker.kwargs:
        given = [*map(repr, marker.args), *(f"{k}={v!r}" for k, v in marker.kwargs.items())]
        raise MarkerError(f"takes no arguments, not {', '.join(given)}")


MARKER_PARSERS = {"question": parse_question, "fixed_seed": parse_no_arguments, "fixed_case": parse_no_arguments}


def _marker_problems(item) -> list[str]:
    problems = []
    for name, parse in MARKER_PARSERS.items():
        for marker in item.iter_markers(name):
            try:
                parse(marker)
            except MarkerError as exc:
                problems.append(f"{item.nodeid}: @pytest.mark.{name}: {exc}")
    return problems


def pytest_collection_modifyitems(config, items):
    problems = []
    files: dict = {}  # a test file's (lab, public?), worked out once: resolving paths was most of this hook
    for item in items:
        bad = _marker_problems(item)
        if bad:
            problems += bad
            continue
        if item.path not in files:
            lab = labs.lab_of_test(Path(item.path))
            public = lab is not None and lab.public_tests_dir.resolve() in Path(item.path).resolve().parents
            files[item.path] = lab, public
        lab, public = files[item.path]
        if lab is None:
            continue
        m = lab.manifest
        marker = item.get_closest_marker("question")
        if marker is None:
            problems.append(f"{item.nodeid}: no @pytest.mark.question(...) marker")
            continue
        qid, points, visibility = parse_question(marker)
        if qid not in {q.id for q in m.questions}:
            problems.append(f"{item.nodeid}: unknown question {qid!r} (not in {lab.name}/lab.toml)")
            continue
        if m.question(qid).manual:
            problems.append(f"{item.nodeid}: question {qid!r} is marked by hand (manual = true): no test scores it")
            continue
        visibility = "visible" if public else (visibility or m.visibility)
        item.stash[ITEM] = ItemInfo(lab, qid, points, visibility, public, fixed=not public and fixed_inputs(item))
        item.add_marker(pytest.mark.timeout(m.limits.test_timeout_s))
    if problems:
        raise pytest.UsageError("test markers the autograder cannot use:\n  " + "\n  ".join(problems))


DRAWING_FIXTURES = ("seed", "rng")


def fixed_inputs(item) -> bool:
    """Whether a hidden test's inputs are the same on every submission: it is marked
    ``fixed_case`` or ``fixed_seed``, or it draws nothing from the per-submission seed (no
    ``seed``/``rng`` among its fixtures).  Resubmitting against such a test with a constant
    answer would bisect the expected value from any message that says which way it is off,
    so its messages say none (``messages.say``; docs/feedback.md)."""
    if item.get_closest_marker("fixed_case") or item.get_closest_marker("fixed_seed"):
        return True
    return not set(DRAWING_FIXTURES) & set(getattr(item, "fixturenames", ()))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A lab test runs under its feedback rules: a fixed case's messages say no direction."""
    info = item.stash.get(ITEM, None)
    if info is None:
        return (yield)
    with messages.feedback_context(fixed=info.fixed, sections=info.lab.manifest.question(info.question).sections):
        return (yield)


# -- fixtures ----------------------------------------------------------------
def _info(request) -> ItemInfo:
    info = request.node.stash.get(ITEM, None)
    if info is None:
        raise pytest.UsageError(f"{request.node.nodeid} is not a lab test; it cannot use lab fixtures")
    return info


@pytest.fixture
def lab(request) -> labs.Lab:
    return _info(request).lab


@pytest.fixture
def student(request) -> seam.CodeProxy:
    """The code under test, reached only through the seam."""
    return request.config.stash[STATE].code(_info(request).lab, "student")


@pytest.fixture
def reference(request) -> seam.CodeProxy:
    """The reference solution (hidden tests only; it runs in the trusted grader)."""
    info = _info(request)
    if info.public:
        raise pytest.UsageError("public tests compare with snapshots, never with the reference")
    return request.config.stash[STATE].code(info.lab, "reference")


@pytest.fixture
def snapshot(request) -> Snapshot:
    info = _info(request)
    st = request.config.stash[STATE]
    return Snapshot(info.lab.snapshot_dir, info.lab.short, st.settings.update_snapshots)


def seed_for(nodeid: str, salt: str = "") -> int:
    """crc32 of a test's node id, mixed with ``salt`` when there is one."""
    return zlib.crc32((f"{nodeid}\0{salt}" if salt else nodeid).encode()) & 0x7FFFFFFF


@pytest.fixture
def seed(request) -> int:
    """A seed of this test's own, stable across runs and machines.

    A hidden test's seed also mixes in ``--seed-salt`` (grading passes the
    submission's sha256): its inputs change with every different submission,
    so the feedback of one cannot be replayed in the next, and the same
    files always meet the same inputs.  Public tests, tests marked
    ``fixed_seed`` and runs without a salt keep the plain seed.
    """
    info = request.node.stash.get(ITEM, None)
    salted = info is not None and not info.public and request.node.get_closest_marker("fixed_seed") is None
    return seed_for(request.node.nodeid, request.config.stash[STATE].settings.seed_salt if salted else "")


@pytest.fixture
def rng(seed):
    import numpy as np

    return np.random.default_rng(seed)


# -- reporting ----------------------------------------------------------------
def feedback_for(excinfo, test_name: str, *, public: bool = True, limits=None) -> tuple[str, str, str]:
    """(message, kind, instructor note) for a failure, without the test's expected values.

    A public test's inputs are public: its feedback shows the student's
    message, traceback and output as they are.  A hidden test's shows the
    student's own text only through :func:`messages.student_text` (numbers
    at two significant figures, bounded) and never what the code printed;
    that, and the text as it was, go to the instructor note (raw results
    only).  ``limits``: the lab's, whose numbers stay exact in messages.
    """
    exc = excinfo.value
    if isinstance(exc, errors.StudentCodeError):
        if public:
            text = exc.message + (_section(_("Your code's traceback:"), exc.traceback) if exc.traceback else "")
            if exc.output:
                text += _section(_("Your code printed (last lines):"), exc.output[-1500:])
            return text, exc.kind, ""
        keep = _exact_numbers(limits)
        text = messages.student_text(exc.message, keep=keep)
        tb = safe_traceback(exc.traceback, keep)
        text += _section(_("Your code's traceback:"), tb) if tb else ""
        return text, exc.kind, _instructor_note(exc.message, exc.traceback, exc.output)
    if isinstance(exc, errors.GraderError):  # the engine's failure: said as such, never blamed on the code
        return _("the grader failed, not your code; this test's score is pending"), errors.GRADER, str(exc)[:4000]
    if isinstance(exc, AssertionError):
        msg = str(exc).split("\nassert ", 1)[0].strip()
        if not msg or msg.startswith("assert "):  # a bare assert would print values
            msg = messages.say(messages.BARE_ASSERT, test=test_name)
        return msg, "", ""
    if excinfo.typename == "Failed" and "Timeout" in str(exc):
        return _("timed out: {detail}").format(detail=str(exc).strip().splitlines()[0]), errors.TIMEOUT, ""
    error = f"{excinfo.typename}: {str(exc)[:300]}"  # e.g. float() of the student's text: their text
    if public:
        return _("the test could not use your result: {error}").format(error=error), "", ""
    return (_("the test could not use your result: {error}").format(
        error=messages.student_text(error, keep=_exact_numbers(limits))), "", _instructor_note(str(exc)[:4000]))


def _section(title: str, body: str) -> str:
    return f"\n\n{title}\n{body}"


def _exact_numbers(limits) -> tuple[str, ...]:
    """The lab's limits as messages print them ("timed out after 10 s", "at most 3072 MiB")."""
    if limits is None:
        return ()
    return (f"{limits.timeout_s:g}", f"{limits.test_timeout_s:g}", str(limits.memory_mb), str(limits.cpu_s))


_FRAME = re.compile(r'  File "[^"\n]*", line \d+(, in [^\n]*)?')
# a recursion's frames, said once (traceback's own words): the count is the code's own number
_REPEATED = re.compile(r"  \[Previous line repeated \d+ more times?\]")


def safe_traceback(tb: str, keep=()) -> str:
    """A traceback for a hidden test's feedback: its frames (file, line, the
    student's source line) as they are, a recursion's repeat count rounded;
    everything after them (the exception message, which may hold the inputs) as
    :func:`messages.student_text`."""
    lines = tb.rstrip("\n").splitlines()
    shown, i = [], 0
    while i < len(lines):
        if _REPEATED.fullmatch(lines[i]):  # frames go on after it: their line numbers stay exact
            shown.append(messages.student_text(lines[i], keep=keep))
            i += 1
            continue
        if not _FRAME.fullmatch(lines[i]):
            break
        shown.append(lines[i])
        i += 1
        while i < len(lines) and lines[i].startswith("    "):  # source line, carets
            shown.append(lines[i])
            i += 1
    rest = "\n".join(lines[i:])
    return "\n".join(shown + ([messages.student_text(rest, keep=keep)] if rest else []))


NOTE_LIMIT = 16_000


def _instructor_note(message: str, traceback: str = "", output: str = "") -> str:
    """What a hidden test's feedback leaves out, as it was: for the instructor only
    (raw/<id>.json), never in results.json or the feedback a student reads."""
    parts = [f"message: {message}"]
    if traceback:
        parts.append(f"traceback:\n{traceback}")
    if output:
        parts.append(f"output (last lines):\n{output}")
    return "\n\n".join(parts)[-NOTE_LIMIT:]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    info = item.stash.get(ITEM, None)
    if info is None:
        return report
    done = (call.when == "call") or (report.failed and call.when == "setup") or report.skipped
    if not done or any(r.nodeid == item.nodeid for r in item.config.stash[STATE].results):
        return report
    feedback, kind, note = "", "", ""
    if call.excinfo is not None and not report.skipped:
        feedback, kind, note = feedback_for(call.excinfo, item.name, public=info.public,
                                            limits=info.lab.manifest.limits)
    elif report.skipped:
        feedback = "skipped"
    passed = report.passed and call.when == "call"
    item.config.stash[STATE].results.append(results.TestResult(
        nodeid=item.nodeid, name=item.name, question=info.question,
        max_points=info.points, points=info.points if passed else 0.0,
        status=results.PASSED if passed else results.FAILED, visibility=info.visibility,
        feedback=feedback, kind=kind, duration_s=round(call.duration, 4), public=info.public,
        instructor_note=note,
    ))
    return report


def pytest_sessionfinish(session):
    st = session.config.stash.get(STATE, None)
    if st is None:
        return
    st.close()
    if st.settings.results_json:
        atomic_write(st.settings.results_json, results.SubmissionResult.report_json(st.results, st.isolation))


def collected_results(config) -> list[results.TestResult]:
    """Results of this session so far (for the CLI's in-process runs)."""
    return list(config.stash[STATE].results)
