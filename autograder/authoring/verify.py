"""Proving a lab's tests have power: judge each verify candidate's grade.

The reference must score full marks, the untouched stub 0, each negative
variant must lose exactly the questions lab.toml declares, and no others, and
each correct alternative (``solutions/<lab>/alternatives/<name>/``) full marks.
Every candidate is graded exactly as a student's submission would be, in one
batch (``grade_batch``, shared with ``autograder mutants``).
"""

from __future__ import annotations

import contextlib
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder.authoring import candidates
from autograder.core import stubs
from autograder.core import labs
from autograder.core.results import PASSED, SubmissionResult
from autograder.grading import runner
from autograder.grading.pool import GraderPool


def _code(files: dict[str, str]) -> dict[str, str]:
    return {name: stubs.unmarked(text) for name, text in files.items()}


def judge(lab: labs.Lab, cand: candidates.Candidate, res: SubmissionResult) -> list[str]:
    """What is wrong with this candidate's result (empty when as expected)."""
    problems = [e for e in res.errors if e.startswith("lab misconfigured")]
    if cand.is_alternative:
        missing = candidates.missing_files(lab, cand)
        if missing:
            problems.append("lacks " + ", ".join(missing) + " (an alternative is a full copy of the student files)")
        elif _code(candidates.sources(lab, cand)) == _code(candidates.sources(lab, candidates.all_candidates(lab)[0])):
            problems.append("is the reference itself, not an alternative")
    for q in res.questions(lab.manifest):
        if q.manual:  # marked by hand: no test can have power over it
            continue
        if not q.total:
            problems.append(f"question {q.id} has no tests")
            continue
        lost = not q.full
        if q.id in cand.expect_lost and not lost:
            problems.append(f"should lose {q.id} but kept it")
        if q.id not in cand.expect_lost and lost:
            problems.append(f"should keep {q.id} but lost it")
    if cand.id == candidates.STUB and res.score != 0:
        problems.append(f"stub scores {res.score:g}, not 0")
    return problems


def explain(lab: labs.Lab, cand: candidates.Candidate, res: SubmissionResult) -> list[str]:
    """For a candidate not as expected: each failed test of a question it should have
    kept, with the first line of its feedback, so a flaky timing case can be told
    from a real regression without regrading."""
    lines = list(res.errors)
    for t in res.tests:
        if t.status != PASSED and t.question not in cand.expect_lost:
            first = next(iter(t.feedback.strip().splitlines()), t.status)
            lines.append(f"{t.name}: {first}")
    return lines


def grade_sources(lab: labs.Lab, sub_id: str, sources: dict[str, str], sandbox: bool,
                  pool: GraderPool | None = None, cache: Path | None = None) -> SubmissionResult:
    """Grade one set of student files (name -> text) exactly as a student's submission
    (``cache``: the batch's shared answers, ``labkit/batch_cache.py``)."""
    with tempfile.TemporaryDirectory(prefix=f"ironlaw-verify-{lab.short}-") as tmp:
        code = candidates.write_sources(sources, Path(tmp) / "code")
        return runner.grade_staged(lab, code, sub_id, sandbox=sandbox, pool=pool, batch_cache=cache)


def grade_batch(items: list[tuple[labs.Lab, str, dict[str, str]]], *, jobs: int,
                sandbox: bool) -> list[SubmissionResult]:
    """Grade (lab, id, sources) items in one batch, ``jobs`` at a time, as ``grade`` does:
    when sandboxed, each lab's items with a zygote of their own (the lab's preload list, as
    ``grade`` starts it) and a pool of warm graders.  Results in input order."""
    results: list[SubmissionResult | None] = [None] * len(items)
    by_lab: dict[labs.Lab, list[int]] = {}
    for i, (lab, *_rest) in enumerate(items):
        by_lab.setdefault(lab, []).append(i)
    # no seed salt here, so every candidate meets the same hidden inputs: their answers are shared
    with tempfile.TemporaryDirectory(prefix="ironlaw-verify-answers-") as cache_dir:
        cache = Path(cache_dir)
        for lab, indices in by_lab.items():
            with contextlib.ExitStack() as stack:
                pool = None
                if sandbox:
                    from autograder.sandbox.backend import shared_zygote

                    stack.enter_context(shared_zygote(for_labs=[lab.manifest]))
                    pool = GraderPool(str(lab.root), jobs, runner.grader_env(lab))
                    stack.callback(pool.close)
                with ThreadPoolExecutor(max_workers=jobs) as threads:
                    for i, res in zip(indices, threads.map(
                            lambda i: grade_sources(*items[i], sandbox, pool, cache), indices)):
                        results[i] = res
    return results
