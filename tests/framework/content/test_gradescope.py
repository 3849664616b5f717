"""`autograder gradescope`: the zip's contents, then Gradescope simulated in a temporary root.

The zip is unpacked to ``<tmp>/source`` and ``run_autograder`` runs with
$AUTOGRADER_ROOT=<tmp>, as Gradescope runs it in /autograder.  setup.sh is
NOT executed here (it apt-installs Python 3.11 and builds a venv as root on
Ubuntu): $IRONLAW_PYTHON points run_autograder at this venv's Python, which
already has everything setup.sh installs.  The runs that matter most use the
Gradescope shape (no namespaces, as without CAP_SYS_ADMIN), where only the
uid drop and file modes keep the worker out of the reference.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from autograder.authoring import gradescope_zip
from autograder.core import labs
from autograder.cli import main
from autograder.sandbox import layers

LAB = labs.get("lab2")
REPO = Path(__file__).resolve().parents[3]
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the full sandbox needs root (as on CI and Gradescope)")


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gradescope") / "lab2-autograder.zip"
    assert main(["gradescope", "lab2", "--out", str(out)]) == 0
    return out


def test_zip_contents(autograder_zip, tmp_path):
    with zipfile.ZipFile(autograder_zip) as z:
        modes = {i.filename: stat.S_IMODE(i.external_attr >> 16) for i in z.infolist()}
    names = set(modes)
    assert modes["setup.sh"] == modes["run_autograder"] == 0o755
    assert {"pyproject.toml", "requirements.lock", "autograder/batch/gradescope_run.py", "autograder/sandbox/worker.py",
            "assignments/lab2_optimizers/lab.toml", "assignments/lab2_optimizers/lab2_models.py",
            "solutions/lab2_optimizers/optimizers.py", "tests/lab2_optimizers/conftest.py"} <= names
    assert {n for n in names if n.startswith("tests/lab2_optimizers/test_")} == \
        {f"tests/lab2_optimizers/{p.name}" for p in LAB.hidden_tests_dir.glob("test_*.py")}
    assert any(n.startswith("assignments/lab2_optimizers/tests/snapshots/") for n in names)
    assert not [n for n in names if "/variants/" in n or "__pycache__" in n or n.endswith(".pyc")]
    assert {n.split("/")[1] for n in names if n.startswith(("assignments/", "solutions/", "tests/"))
            and n.count("/") >= 2} == {LAB.name}, "one lab only"
    assert {"assignments/course.toml", "assignments/chapter.toml"} <= names  # the course's settings, beside the one lab folder
    again = tmp_path / "again.zip"
    assert main(["gradescope", "lab2", "--out", str(again)]) == 0
    assert again.read_bytes() == autograder_zip.read_bytes(), "the zip must be reproducible"


def _gradescope(autograder_zip: Path, root: Path, files: dict[str, str], *, namespaces: bool,
                closed=contextlib.nullcontext) -> dict:
    """Lay out /autograder under ``root``, run run_autograder, return results.json; without
    namespaces, within ``closed()`` (the ``checkout_closed`` fixture), where it needs this
    checkout's secret folders closed."""
    gradescope_zip.lay_out(autograder_zip, root, files, upload="my lab2")  # found by name anywhere inside
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "IRONLAW_PYTHON": sys.executable}
    env.pop(labs.ROOT_ENV, None)  # the engine must find the lab in source/ by itself
    if not namespaces:
        env[layers.NO_NAMESPACES_ENV] = "1"
    cmd = [str(root / "source" / "run_autograder")]
    if namespaces or layers.zygote_can_drop_uid():
        proc = subprocess.run(cmd, env=env, cwd="/", capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    else:  # this Python lies under a mode-700 home: make it reachable, as setup.sh's install is
        with closed():  # the engine's checkout at mode 700, as setup.sh leaves Gradescope's source/
            assert _run_with_reachable_python(cmd, env, root / "log.txt") == 0, (root / "log.txt").read_text()[-3000:]
    return json.loads((root / "results" / "results.json").read_text())


def _run_with_reachable_python(cmd: list[str], env: dict, log: Path) -> int:
    """Run ``cmd`` in a forked child whose own mount namespace makes this Python
    reachable by an unprivileged uid (layers.make_python_reachable)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            layers.make_python_reachable()
            with open(log, "w") as f:
                code = subprocess.run(cmd, env=env, cwd="/", stdout=f, stderr=subprocess.STDOUT,
                                      timeout=600).returncode
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _lab_files(folder: Path) -> dict[str, str]:
    return {f: (folder / f).read_text() for f in LAB.manifest.student_files}


@needs_root
def test_reference_full_marks_in_gradescope_shape(autograder_zip, tmp_path, checkout_closed):
    res = _gradescope(autograder_zip, tmp_path / "autograder", _lab_files(LAB.solution_dir), namespaces=False,
                      closed=checkout_closed)
    # every tested point; the reflections (marked by hand) are pending and no predictions.json is uploaded here
    assert res["score"] == sum(q.points for q in LAB.manifest.tested), res["output"]
    # every test passes; the one row that does not is the predictions' participation point: no
    # predictions.json in this upload (the reflections, marked by hand, are not rows until marked)
    failed = [t["name"] for t in res["tests"] if t["status"] != "passed"]
    assert res["tests"] and failed == [f"{LAB.manifest.question('predictions').title}: a complete set of predictions"]
    scored = [t for t in res["tests"] if t.get("max_score")]
    assert sum(t["score"] for t in scored) == res["score"]
    iso = res["extra_data"]["isolation"]
    assert iso["sandbox"] and not iso["mount_namespace"] and iso["privileges"] == "own unprivileged uid"
    assert iso["seccomp"] and iso["rlimits"]


@pytest.fixture
def open_tmp():
    """A world-traversable temporary folder, as / is above /autograder
    (pytest's own tmp_path sits in a 700 folder that would hide it anyway)."""
    d = Path(tempfile.mkdtemp(prefix="ironlaw-gs-test-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@needs_root
def test_stub_that_tries_to_read_the_reference_scores_zero(autograder_zip, open_tmp, checkout_closed):
    """Without namespaces, the 700 modes run_autograder sets are all that hide source/."""
    root = open_tmp / "autograder"
    files = {}
    for name, text in _lab_files(LAB.assignment_dir).items():
        ref = root / "source" / "solutions" / LAB.name / name  # where run_autograder's reference lies
        files[name] = text + (f"\n\ntry:  # load the reference over the stub\n"
                              f"    exec(open({str(ref)!r}).read())\nexcept OSError:\n    pass\n")
    res = _gradescope(autograder_zip, root, files, namespaces=False, closed=checkout_closed)
    assert (root / "source" / "solutions" / LAB.name / "optimizers.py").is_file()  # the path was right
    assert res["score"] == 0, "the worker read the reference from the autograder's source folder"
    assert not res["extra_data"]["isolation"]["mount_namespace"]
    assert stat.S_IMODE((root / "source").stat().st_mode) == 0o700


@needs_root
def test_empty_submission(autograder_zip, tmp_path):
    root = tmp_path / "autograder"
    res = _gradescope(autograder_zip, root, {}, namespaces=True)
    assert res["score"] == 0 and res["tests"]
    assert "file optimizers.py is missing from the submission" in res["output"]
    iso = res["extra_data"]["isolation"]
    if iso.get("mount_namespace"):  # the worker's root is the allow-list: /autograder is not in it
        assert iso["filesystem"] == "allow-list" and iso["privileges"] == "own unprivileged uid"


@needs_root
def test_feedback_language_chosen_when_the_zip_is_built(tmp_path):
    """`autograder gradescope --lang vi`: the students read Vietnamese feedback."""
    vi_zip = tmp_path / "lab2-vi.zip"
    assert main(["gradescope", "lab2", "--out", str(vi_zip), "--lang", "vi"]) == 0
    with zipfile.ZipFile(vi_zip) as z:
        assert z.read("feedback-language.txt") == b"vi\n"
    res = _gradescope(vi_zip, tmp_path / "autograder", {}, namespaces=True)
    assert "bài nộp thiếu tệp optimizers.py" in res["output"] and res["extra_data"]["lang"] == "vi"
    assert any("chưa được cài đặt" in t["output"] or "thiếu tệp" in t["output"] for t in res["tests"])


def test_engine_failure_still_writes_results(tmp_path, monkeypatch):
    """No lab in source/ (a broken upload): a results.json with the reason, the score
    said to be pending, and exit 1, so that Gradescope flags the run for the instructor."""
    from autograder.batch import gradescope_run

    (tmp_path / "source").mkdir()
    assert gradescope_run.run(tmp_path) == 1
    res = json.loads((tmp_path / "results" / "results.json").read_text())
    assert res["score"] == 0 and res["tests"] == [] and "pending" in res["output"]
    assert "could not grade" in res["output"] and "exactly one lab" in res["extra_data"]["grader_error"]


def test_a_sandbox_that_cannot_start_is_a_pending_score_and_exit_1(tmp_path, monkeypatch):
    """The engine's own failure inside the tests (here: no sandbox can start) is never
    the student's zero: each test says the grader failed, the result carries grader_error,
    and the run exits 1."""
    from autograder.calls import errors
    from autograder.core import labs, results
    from autograder.grading import runner

    lab = labs.get("lab2")
    t = results.TestResult(nodeid="n", name="t", question="update_rules", max_points=7, points=0, status="failed",
                           visibility="visible", feedback="the grader failed, not your code; this test's score is "
                           "pending", kind=errors.GRADER, instructor_note="sandbox setup failed: no report")
    def grader(lab, args, **kw):  # the grader process's report: one test, failed by the engine
        path = Path(args[args.index("--results-json") + 1])
        path.write_text(results.SubmissionResult.report_json([t], {}))
        return 1, ""

    monkeypatch.setattr(runner, "run_grader_process", grader)
    res = runner.grade_staged(lab, tmp_path, "s", sandbox=False)
    assert res.grader_error == "sandbox setup failed: no report"
    assert any("score is pending" in e for e in res.errors)
    payload = results.gradescope_json(res, lab.manifest)
    assert payload["output"].startswith("The grader failed on this submission")
