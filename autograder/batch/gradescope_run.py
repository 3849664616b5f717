"""Gradescope's side of ``autograder gradescope``: one submission -> results.json.

Gradescope unpacks the autograder zip to ``/autograder/source`` (a project
root holding exactly one lab), puts the student's upload in
``/autograder/submission`` and reads ``/autograder/results/results.json``.
``run_autograder`` calls ``python -m autograder.batch.gradescope_run``; $AUTOGRADER_ROOT
moves ``/autograder`` so a test can lay the tree out in a temporary folder.

Grading is the engine's, unchanged: files are staged exactly as ``grade``
stages them (``autograder.batch.platforms.stage``: an untouched stub left
beside the student's work is passed over, and the note that says which copy
was graded reaches the output, as in ``grade``'s feedback), graded sandboxed by ``runner.grade_staged`` and written by
``results.gradescope_json`` and ``results.gradescope_text``, as ``grade``
writes its results/<id>.json.  A valid results.json is written whatever
happens: without one Gradescope shows the student a bare "autograder
failed", with no score and no reason.
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from pathlib import Path

from autograder.batch import gradebook, platforms, predictions_report
from autograder.core.files import atomic_write, run_folder
from autograder.core import i18n, labs, results, untrusted
from autograder.grading import predictions, runner, staging
from autograder.core.i18n import _

ROOT_ENV = "AUTOGRADER_ROOT"
DEFAULT_ROOT = "/autograder"
TIMEOUT_ENV = "IRONLAW_GRADESCOPE_TIMEOUT_S"
# The grader process's limit is the lab's (manifest.Limits.grader_timeout_s: its budget for the
# student's code plus the grader's own allowance), as in `grade`; never above this, below
# Gradescope's default 10-minute limit, so a runaway suite still ends in a results.json that
# says so instead of a killed container with none.  $IRONLAW_GRADESCOPE_TIMEOUT_S replaces both.
DEFAULT_TIMEOUT_S = 540.0
SUBMISSION_ID = "submission"
LANG_FILE = "feedback-language.txt"  # written by `autograder gradescope --lang`


def the_lab(source: Path) -> labs.Lab:
    found = labs.all_labs(source)
    if len(found) != 1:
        raise RuntimeError(f"the autograder must hold exactly one lab under {source / 'assignments'}, "
                           f"found {len(found)}")
    return found[0]


def protect(*dirs: Path) -> None:
    """Mode 700 as root.  Gradescope gives no CAP_SYS_ADMIN, so no mount
    namespace hides anything: file modes are what keep the worker's dropped
    uid out of the reference, the hidden tests and the results.  setup.sh does
    this at build time; results/ may only appear at run time, hence again."""
    if os.geteuid() != 0:
        return
    for d in dirs:
        if d.is_dir():
            d.chmod(0o700)


def timeout(lab: labs.Lab) -> float:
    """The grader process's wall-clock limit: $IRONLAW_GRADESCOPE_TIMEOUT_S, else the lab's (capped)."""
    return float(os.environ.get(TIMEOUT_ENV) or min(DEFAULT_TIMEOUT_S, lab.manifest.limits.grader_timeout_s))


def grade(root: Path, timeout_s: float | None = None) -> dict:
    from autograder.sandbox.backend import shared_zygote  # imports nothing heavy until grading

    lab = the_lab(root / "source")
    m = lab.manifest
    timeout_s = timeout_s or timeout(lab)
    # hide=[root]: with namespaces (e.g. a local dry run) the worker sees none of
    # /autograder; without them the zygote refuses while another uid could reach it.
    # The lab root itself is always hidden by the sandbox.  run_folder: everything
    # this run puts in the temporary folder, gone with it.
    with run_folder("gradescope") as tmp, shared_zygote(hide=[root], for_labs=[m]):
        code = Path(tempfile.mkdtemp(dir=tmp, prefix="code-"))
        staged, handed = None, predictions_report.Handed(None)
        try:  # stage() reports a bad upload as a problem; anything else still grades, as files missing
            # as `grade` stages it (an untouched stub left beside the work passed over; predictions.json:
            # data for the participation points, never given to the grader), within one entry's CPU budget
            with untrusted.budget():
                staged = platforms.stage(lab, root / "submission", code)
                if m.participation:
                    handed = predictions_report.read(staged.extra.get(predictions.FILE), m,
                                                     unread=staged.unread.get(predictions.FILE, ""))
        except Exception as exc:  # noqa: BLE001
            code.mkdir(exist_ok=True)
            problem = _("could not read {name}: {error}").format(name=SUBMISSION_ID, error=staging.describe(exc))
            staged = staged or staging.Staged(code)
            staged.problems.append(problem)
            handed = handed if handed.records is not None else predictions_report.Handed(None, staging.describe(exc))
        res = runner.grade_staged(lab, staged.directory, SUBMISSION_ID, sandbox=True,
                                  problems=staged.problems, notes=staged.notes, sha256=staged.sha256,
                                  timeout_s=timeout_s)
    if m.participation:
        res = predictions_report.apply(res, m, handed)
    payload = results.gradescope_json(res, m)
    if res.notes:  # which file was graded where there was a choice, as `grade`'s feedback says
        payload["output"] += "".join("\n" + _("Note: {note}").format(note=n) for n in res.notes)
    if res.grader_error:  # run() exits non-zero: Gradescope flags the run for the instructor
        payload["extra_data"]["grader_error"] = res.grader_error[-4000:]
    return payload


def feedback_language(source: Path) -> str | None:
    """The language the instructor chose when building the zip (None: the default order)."""
    try:
        return (source / LANG_FILE).read_text().strip() or None
    except OSError:
        return None


def crash_json(detail: str) -> dict:
    """Gradescope's schema when the engine itself failed: no test ran, score 0."""
    return {
        "score": 0.0,
        "output": "The autograder could not grade this submission (an error in the grader, not "
                  "necessarily in your code). Your score is pending: tell your instructor.",
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [],
        "extra_data": {"grader_error": detail[-4000:]},
    }


def run(root: Path) -> int:
    """Grade ``root/submission`` into ``root/results/results.json``; 0 once it is written."""
    results_dir = root / "results"
    try:
        results_dir.mkdir(parents=True, exist_ok=True)
        protect(root, root / "source", results_dir)
        with i18n.language(feedback_language(root / "source")):
            payload = grade(root)
    except BaseException:  # even SystemExit from deep inside: the student still gets a result
        payload = crash_json(traceback.format_exc())
    try:
        atomic_write(results_dir / "results.json", results.gradescope_text(payload))
    except OSError as exc:
        print(f"autograder: could not write results.json: {exc}", file=sys.stderr)
        return 1
    print(payload["output"])  # instructors see stdout on Gradescope; students do not
    if "grader_error" in payload.get("extra_data", {}):
        print("autograder: the grader failed (see extra_data.grader_error); exiting 1 so that "
              "Gradescope flags this run", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    return run(Path(os.environ.get(ROOT_ENV) or DEFAULT_ROOT))


if __name__ == "__main__":
    sys.exit(main())
