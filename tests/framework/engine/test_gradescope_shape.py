"""The Gradescope shape: what a worker can reach, and one submission's time (issue 27, section 4).

Without namespaces (Gradescope gives root no CAP_SYS_ADMIN) only permissions
keep a worker's uid out of the secrets: the zygote asks the kernel, from a
child that dropped to an unprivileged uid as a worker does, and refuses to run
workers while that uid can read or change any of them.  The list is completed
by the zygote from the engine it imports itself (on Gradescope the grader runs
the zip's copy and the zygote the venv's), and holds the batch's output and
submissions folders.

Every submission has a time budget (``Limits.submission_timeout_s``, by default
``BUDGET_CALLS`` times the per-call limit): a submission whose every call
sleeps to the limit, or forever, is graded within it, scoring 0 on the tests
after it with a message that says so, never a grader failure.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from autograder.batch import gradescope_run
from autograder.calls import errors
from autograder.cli import main
from autograder.core import files, labs, manifest
from autograder.grading import runner
from autograder.sandbox import backend, layers, secret_paths, zygote

REPO = Path(__file__).resolve().parents[3]
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="dropping to another uid needs root (as on Gradescope)")


@contextlib.contextmanager
def world_reachable_folder():
    """A new folder others may enter (pytest's own are below a mode-700 one), removed after."""
    base = Path(tempfile.mkdtemp(prefix="ironlaw-test-shape-", dir="/tmp"))
    try:
        base.chmod(0o755)
        yield base
    finally:
        files.remove_tree(base)


def _tree(base: Path, name: str, mode: int, file_mode: int = 0o644) -> Path:
    d = base / name
    d.mkdir()
    (d / "secret.py").write_text("ANSWER = 42\n")
    (d / "secret.py").chmod(file_mode)
    d.chmod(mode)
    return d


# -- what a worker can reach ----------------------------------------------------------
@needs_root
def test_the_probe_asks_the_kernel_as_an_unprivileged_uid():
    with world_reachable_folder() as base:
        open_ = _tree(base, "open", 0o755)
        closed = _tree(base, "closed", 0o700)
        traverse = _tree(base, "traverse", 0o711)  # not listable, but its file is readable by name
        private_file = _tree(base, "private_file", 0o711, 0o600)
        inside = _tree(base, "inside", 0o755, 0o600)
        (inside / "drop").mkdir(mode=0o777)  # a folder below where another uid may write
        (inside / "drop").chmod(0o777)
        engine = _tree(base, "engine", 0o755)
        read, changed = zygote.exposed(layers, [str(p) for p in (open_, closed, traverse, private_file, inside)],
                                       [str(engine)])
        # a mode-700 folder, and a file nobody else may read in a folder nobody else may list, are safe
        assert read == sorted(map(str, (open_, traverse, inside))) and changed == []
        (inside / "drop").chmod(0o700)
        (inside / "secret.py").chmod(0o644)
        inside.chmod(0o700)
        (closed / "secret.py").chmod(0o777)  # below a closed folder: out of reach all the same
        assert zygote.exposed(layers, [str(inside), str(closed)], []) == ([], [])
        (engine / "secret.py").chmod(0o666)  # the engine the workers import, changeable by them
        assert zygote.exposed(layers, [], [str(engine)]) == ([], [str(engine)])


def test_the_zygote_adds_the_secrets_of_the_engine_it_imports():
    """Started as the zygote is (``python -I``, from /, no project around): its list holds
    ``solutions/`` and ``tests/`` beside the engine it imports, whatever the grader said."""
    env = {k: v for k, v in os.environ.items() if k not in ("IRONLAW_ROOT", "PYTHONPATH")}
    code = "import json; from autograder.sandbox import zygote; print(json.dumps(zygote.secrets(['/given'])))"
    out = subprocess.run([sys.executable, "-I", "-c", code], cwd="/", env=env, capture_output=True, text=True,
                         timeout=120, check=True).stdout
    import autograder

    engine_root = Path(autograder.__file__).resolve().parents[1]
    want = {str(engine_root / d) for d in secret_paths.SECRET_FOLDERS if (engine_root / d).is_dir()}
    assert want and want | {"/given"} == set(json.loads(out))


@needs_root
def test_a_batch_folder_others_can_reach_stops_the_workers(toy_root, tmp_path, monkeypatch):
    """Without namespaces, a batch's output (or submissions) folder that another uid can
    read is a secret exposed: the workers refuse, naming it, and the score is pending."""
    monkeypatch.setenv(layers.NO_NAMESPACES_ENV, "1")
    monkeypatch.setattr(backend, "secret_list", lambda: [])  # the grader knows of nothing else here
    backend.stop_zygote()
    lab = labs.get("labx", toy_root)
    with world_reachable_folder() as base:
        out = _tree(base, "out", 0o755)
        with backend.shared_zygote(hide=[out]):
            sandbox = backend.SandboxBackend(toy_root / "solutions" / "labx_toy", lab.manifest, lab.assignment_dir)
            try:
                with pytest.raises(errors.StudentCodeError) as err:
                    sandbox.call("add", (), {"a": [1.0], "b": [2.0]})
            finally:
                sandbox.close()
                backend.stop_zygote()
    assert err.value.kind == errors.GRADER and str(out) in str(err.value) and "chmod 700" in str(err.value)


# -- one submission's time ------------------------------------------------------------------
NEAR = '''import time


def add(a, b):
    time.sleep({sleep})
    return [x + y for x, y in zip(a, b)]


def norm(x):
    time.sleep({sleep})
    return sum(v * v for v in x) ** 0.5
'''
MANY_CALLS = '''import pytest


@pytest.mark.question("norm", points=0)
def test_many_calls(student):
    for n in range(20):
        student.norm(x=[3.0, 4.0 + n])
'''


def test_the_budget_is_derived_from_the_lab_and_bounds_the_grader():
    lim = manifest.Limits(timeout_s=4)
    assert lim.submission_timeout_s == manifest.BUDGET_CALLS * 4
    assert lim.grader_timeout_s == lim.submission_timeout_s + manifest.GRADER_ALLOWANCE_S
    assert manifest.Limits(timeout_s=4, submission_timeout_s=7).submission_timeout_s == 7
    for lab in labs.all_labs(REPO):  # every lab says its budget; the Gradescope runner uses the same
        assert "submission_timeout_s" in (lab.assignment_dir / "lab.toml").read_text(), lab.name
        assert gradescope_run.timeout(lab) == min(gradescope_run.DEFAULT_TIMEOUT_S, lab.manifest.limits.grader_timeout_s)


def test_a_pooled_grader_that_overran_gets_no_second_run(toy_lab, monkeypatch):
    class Overran:
        def run(self, args, timeout_s):
            time.sleep(timeout_s)
            return None  # what GraderPool.run says of a grader it killed at the deadline

    def fresh(*a, **k):
        raise AssertionError("a fresh grader after the deadline doubles the submission's time")

    monkeypatch.setattr(runner.subprocess, "run", fresh)
    code, log = runner.run_grader_process(toy_lab, [], timeout_s=0.3, pool=Overran())
    assert code == -9 and "timed out" in log  # and `fresh` was never called


@needs_root
def test_every_call_slow_is_graded_within_the_budget(toy_root, tmp_path):
    """The toy lab sets no budget: it is BUDGET_CALLS x its 1.5 s limit, 9 s.  ``near`` sleeps
    1.2 s in every call (25 of them: 30 s of calls, none over the limit); ``forever`` never returns."""
    lab_toml = toy_root / "assignments" / "labx_toy" / "lab.toml"
    lab_toml.write_text(lab_toml.read_text().replace("timeout_s = 3\n", "timeout_s = 1.5\n", 1))
    (toy_root / "tests" / "labx_toy" / "test_many_calls.py").write_text(MANY_CALLS)
    lab = labs.get("labx", toy_root)
    budget = lab.manifest.limits.submission_timeout_s  # BUDGET_CALLS x 1.5 s
    subs, out = tmp_path / "subs", tmp_path / "out"
    (subs / "near").mkdir(parents=True)
    (subs / "near" / "toy.py").write_text(NEAR.format(sleep=1.2))
    (subs / "forever").mkdir()
    (subs / "forever" / "toy.py").write_text(NEAR.format(sleep=10**6))
    assert main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "2"]) == 0  # no grader failure
    rows = {r["submission"]: r for r in csv.DictReader(open(out / "gradebook.csv", encoding="utf-8-sig"))}
    for sub in ("near", "forever"):
        raw = json.loads((out / "raw" / f"{sub}.json").read_text())
        assert not raw["grader_error"] and float(rows[sub]["score"]) < 5, sub
        # within the grader's own limit (the budget and GRADER_ALLOWANCE_S), not killed at it; how much
        # less is the machine's load, no verdict: the budget's message below says it ended the calls
        assert raw["duration_s"] < lab.manifest.limits.grader_timeout_s, (sub, raw["duration_s"])
    assert rows["forever"]["score"] == "0"
    fb = (out / "feedback" / "near.md").read_text()
    assert f"the submission's total time limit of {budget:g} s is used up" in fb
