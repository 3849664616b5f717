"""Grade one staged submission: the lab's tests in a separate grader process.

The grader process is trusted (it loads the reference and the hidden
tests); in sandbox mode it reaches the student's code only through workers
(``autograder.sandbox``).  Whatever happens to it, this function returns a
complete :class:`SubmissionResult`: a crash or time-out becomes an error
with every question at zero, never an exception that stops a batch.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.calls import errors
from autograder.core import i18n, results
from autograder.core.files import TEXT_ERRORS, owned_name
from autograder.grading.pool import MEMORY_ENV, GraderPool, memory_limit
from autograder.grading import pytest_here
from autograder.core.i18n import _
from autograder.core.labs import Lab

GRADER_ENV = {  # one thread each: --jobs N processes share the cores; pytest loads only the named plugins
    "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
    "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", **pytest_here.NO_AUTOLOAD,
}


def test_paths(lab: Lab, public_only: bool = False) -> list[Path]:
    dirs = (lab.public_tests_dir,) if public_only else (lab.public_tests_dir, lab.hidden_tests_dir)
    return [p for p in dirs if p.is_dir()]


def pytest_args(lab: Lab, staged: Path, out_json: Path, *, sandbox: bool, public_only: bool,
                seed_salt: str = "", batch_cache: Path | None = None) -> list[str]:
    """``seed_salt``: mixed into the hidden tests' seeds (plugin ``--seed-salt``); "" keeps the plain seeds.
    ``batch_cache``: the batch's folder of answers shared by its graders (``labkit/batch_cache.py``)."""
    args = [*map(str, test_paths(lab, public_only)), "--submission", str(staged), "--results-json", str(out_json),
            *pytest_here.plugins(), *pytest_here.LEAN, "-q", "--no-header", "-rN", "--tb=no", "--rootdir", str(lab.root)]
    # on the command line, not in the environment: one pooled grader serves many submissions
    return (args + (["--sandbox"] if sandbox else []) + (["--seed-salt", seed_salt] if seed_salt else [])
            + (["--batch-cache", str(batch_cache)] if batch_cache else []))


def grader_env(lab: Lab) -> dict[str, str]:
    return {**GRADER_ENV, "IRONLAW_ROOT": str(lab.root), i18n.ENV: i18n.current(),
            MEMORY_ENV: str(lab.manifest.limits.grader_memory_mb)}


def run_grader_process(lab: Lab, args: list[str], *, timeout_s: float, pool: GraderPool | None = None) -> tuple[int, str]:
    """In a warm pooled grader when given one, else in a fresh process; ``timeout_s`` bounds
    both together (a pooled grader that overran it is not given a fresh one to overrun again)."""
    end = time.monotonic() + timeout_s
    if pool is not None:
        code = pool.run(args, timeout_s)
        if code is not None:
            return code, ""
    left = end - time.monotonic()
    if left <= 0:
        return -9, f"grading timed out after {timeout_s:.0f} s (the submission's grader_timeout_s)"
    env = {**os.environ, **grader_env(lab)}
    env.pop("IRONLAW_SUBMISSION", None)
    env.pop("IRONLAW_SEED_SALT", None)  # the salt is the submission's, given in args
    try:  # the grader's output may echo a student's bytes: escaped, never a decoding error
        proc = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=lab.root, env=env,
                              capture_output=True, text=True, errors=TEXT_ERRORS, timeout=left,
                              start_new_session=True, preexec_fn=lambda: memory_limit(env.get(MEMORY_ENV)))
        return proc.returncode, (proc.stdout + proc.stderr)[-4000:]
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"")[-2000:]
        return -9, f"grading timed out after {timeout_s:.0f} s (the submission's grader_timeout_s)\n{out!r}"


def grade_staged(lab: Lab, staged: Path, submission_id: str, *, sandbox: bool = True,
                 problems: list[str] | None = None, notes: list[str] | None = None, sha256: str = "",
                 timeout_s: float | None = None, public_only: bool = False,
                 pool: GraderPool | None = None, seed_salt: str | None = None,
                 batch_cache: Path | None = None) -> results.SubmissionResult:
    """``seed_salt`` (default: ``sha256``, the staged files' hash) varies the hidden
    tests' inputs from one submission to the next; the same files get the same ones.
    ``batch_cache``: a folder of the batch (in its private temporary directory) where its
    graders keep the answers that are the same for every submission."""
    m = lab.manifest
    seed_salt = sha256 if seed_salt is None else seed_salt
    # the sandbox stops student code at submission_timeout_s (its budget); the rest is the grader's
    # own work: past grader_timeout_s the engine itself hangs (manifest.Limits)
    timeout_s = timeout_s or m.limits.grader_timeout_s
    t0 = time.perf_counter()
    res = results.SubmissionResult(submission=submission_id, lab=lab.name, sha256=sha256,
                                   errors=list(problems or []), notes=list(notes or []), lang=i18n.current())
    # named for this process: one a killed run leaves is swept by the next (files.sweep_stale)
    with tempfile.TemporaryDirectory(prefix=owned_name("grade")) as tmp:
        out = Path(tmp) / "results.json"
        args = pytest_args(lab, staged, out, sandbox=sandbox, public_only=public_only, seed_salt=seed_salt,
                           batch_cache=batch_cache)
        code, log = run_grader_process(lab, args, timeout_s=timeout_s, pool=pool if sandbox else None)
        if out.exists():  # the grader's report: its tests and isolation, decoded as any result is
            report = results.SubmissionResult.from_json(out.read_text(), submission=submission_id, lab=lab.name)
            res.tests, res.isolation = report.tests, report.isolation
        if code not in (0, 1) or not res.tests:  # 0 all passed, 1 some failed
            res.errors.append(_("the grader stopped abnormally (exit {code}); every test without a result scores 0")
                              .format(code=code))
            res.errors.append(_("grader log tail:") + " " + log[-1500:])
            res.grader_error = f"grader process exit {code}: {log[-1500:]}"
    engine = [t for t in res.tests if t.kind == errors.GRADER]
    if engine and not res.grader_error:  # every such test is the engine's failure: say what, once
        res.grader_error = engine[0].instructor_note or engine[0].feedback
        res.errors.append(_("the grader failed on {count} test(s), not because of the code: the score is pending")
                          .format(count=len(engine)))
    res.errors += [p for p in file_problems(res.tests) if p not in res.errors]
    if not public_only:
        res.errors += check_points(lab, res)
    res.duration_s = time.perf_counter() - t0
    return res


def file_problems(tests: list[results.TestResult]) -> list[str]:
    """One problem per student file that did not import, from its tests' feedback (a public
    test's first: it may show more), so the summary and the CLI name it; its tests score 0,
    the other files' tests keep their points."""
    out: dict[str, str] = {}
    for t in sorted(tests, key=lambda t: not t.public):
        if t.kind == errors.IMPORT and t.feedback:
            first = t.feedback.splitlines()[0]
            out.setdefault(re.sub(r"\d+", "#", first), first)  # one per file, whatever line it names
    return list(out.values())


def check_points(lab: Lab, res: results.SubmissionResult) -> list[str]:
    """The manifest's question points must equal the sum of its tests' points."""
    if not res.tests:
        return []
    problems = []
    for q in res.questions(lab.manifest):
        if q.manual:  # no test scores it (the plugin refuses one that tries)
            continue
        tests_max = sum(t.max_points for t in res.tests if t.question == q.id)
        if abs(tests_max - q.max_points) > 1e-9:
            problems.append(f"lab misconfigured: question {q.id} is worth {q.max_points:g} "
                            f"in lab.toml but its tests add up to {tests_max:g}")
    return problems
