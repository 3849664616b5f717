"""Limits of a sandboxed call that cannot be stretched or gamed (issue 12, findings 6 and 9).

The submission's total time budget ends every later call at once.

Every legal submission reaches the worker: the zygote's request limit is
derived from staging's file limit. A spawn that fails is tried once, and
every later call fails at once with the same error.

A measured call runs in a fresh worker that may start no thread or process,
and its peak counts from before the worker imported any student file: a
buffer kept from a warm-up call or made at import time still counts, and
the work cannot move to a child process nobody measures.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from pathlib import Path

import pytest

from autograder.calls import errors
from autograder.core.files import write_zip
from autograder.grading import staging
from autograder.sandbox import backend as sandbox_backend, channel
from autograder.sandbox.backend import SandboxBackend

pytest_plugins = ["pytester"]

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the full sandbox needs root (as on CI and Gradescope)")
MIB = 2**20

CODE = '''
import os
import numpy as np

AT_IMPORT = np.ones(48 * 2**20 // 8) if os.environ.get("NEVER") is None else None
_kept = []


def honest(n):
    return float(np.ones(n * 2**20 // 8).sum())


def reuse(n):
    if not _kept:  # the warm-up call
        _kept.append(np.ones(n * 2**20 // 8))
    _kept[0][:] = 2.0  # the measured call allocates nothing new
    return float(_kept[0].sum())


def imported(n):
    AT_IMPORT[:] = 3.0
    return float(AT_IMPORT.sum())


def in_child(n):
    pid = os.fork()
    if pid == 0:
        np.ones(n * 2**20 // 8).sum()
        os._exit(0)
    os.waitpid(pid, 0)
    return 1.0


def tiny(n):
    return float(n)


def nap(n):
    import time
    time.sleep(n)
    return 0.0


def devices(n):
    with open(os.devnull, "w") as sink:  # a correct way to silence output
        print("quiet", file=sink)
    with open("/dev/urandom", "rb") as r, open("/dev/zero", "rb") as z:  # how torch seeds itself
        return float(len(r.read(n)) + len(z.read(n)))
'''


@pytest.fixture
def backend(toy_lab, tmp_path):
    (tmp_path / "toy.py").write_text(CODE)
    b = SandboxBackend(tmp_path, toy_lab.manifest, toy_lab.assignment_dir)
    yield b
    b.close()


def _peak(backend, name, n=64, warm=True):
    if warm:
        backend.call(name, (), {"n": n})
    _value, m = backend.call(name, (), {"n": n}, measure=True)
    assert m.method == "rss"
    return m.peak_bytes


@needs_root
def test_honest_allocation_is_counted(backend):
    assert _peak(backend, "honest") >= 60 * MIB


@needs_root
def test_a_buffer_kept_from_the_warm_up_still_counts(backend):
    assert _peak(backend, "reuse") >= 60 * MIB


@needs_root
def test_a_buffer_made_at_import_still_counts(backend):
    assert _peak(backend, "imported", warm=False) >= 44 * MIB


@needs_root
def test_a_measured_call_cannot_move_work_to_a_child(backend):
    backend.call("in_child", (), {"n": 1})  # unmeasured: processes are allowed
    if not backend.isolation.get("process_group"):
        pytest.skip("no writable pids cgroup here: children of a measured call are not stopped")
    with pytest.raises(errors.StudentCodeError) as info:
        backend.call("in_child", (), {"n": 64}, measure=True)
    assert "Resource temporarily unavailable" in str(info.value) or "BlockingIOError" in str(info.value)


@needs_root
def test_a_small_call_measures_small(backend):
    # The baseline: what the fresh worker holds before student code; the module itself
    # (48 MiB at import) counts, a call that allocates nothing adds nothing beyond it.
    assert _peak(backend, "tiny", n=1) < 60 * MIB


@needs_root
def test_the_workers_minimal_dev_works(backend):
    """The root's /dev files are read-only mounts, not nodev ones: opening /dev/null once
    failed with "Permission denied", and so did a torch imported by a worker (the course's
    zygote preloads it; the toy's does not)."""
    assert backend.call("devices", (), {"n": 8})[0] == 16.0


@needs_root
def test_the_submission_budget_ends_every_later_call(toy_lab, tmp_path):
    (tmp_path / "toy.py").write_text(CODE)
    m = toy_lab.manifest
    # the budget is on the wall clock: the first call has all of its 4 s, however busy the machine
    m = dataclasses.replace(m, limits=dataclasses.replace(m.limits, timeout_s=10, submission_timeout_s=4))
    b = SandboxBackend(tmp_path, m, toy_lab.assignment_dir)
    try:
        assert b.call("tiny", (), {"n": 1})[0] == 1.0  # within both limits
        with pytest.raises(errors.StudentCodeError, match="total time limit of 4 s"):
            b.call("nap", (), {"n": 8.0})  # within its own 10 s, past the budget: cut at the budget
        with pytest.raises(errors.StudentCodeError, match="total time limit"):
            b.call("tiny", (), {"n": 1})  # nothing runs any more
    finally:
        b.close()


# -- every legal submission reaches the worker ----------------------------------------------
def test_the_request_limit_covers_the_largest_legal_spawn_request():
    from autograder.core.limits import MAX_FILES, MAX_NAME_BYTES

    # every file at staging's maximum, names of the longest, all escaped, and a long work folder
    name = "\u00e9" * (MAX_NAME_BYTES // 2)
    files = {f"{name}{i}"[-MAX_NAME_BYTES // 2:]: "A" * channel.base64_size(staging.MAX_FILE_BYTES)
             for i in range(MAX_FILES)}
    req = {"op": "spawn", "files": files, "student_files": list(files), "support_files": [],
           "lang": "vi", "limits": {"memory_mb": 3072, "cpu_s": 120, "fsize_mb": 64, "work_mb": 256, "nproc": 64},
           "work": "/" + "\u00e9" * 2000}
    import json

    assert len(json.dumps(req).encode()) <= channel.REQUEST_LIMIT
    assert channel.CONTROL_LIMIT < channel.REQUEST_LIMIT < 32 * MIB


TOY = (Path(__file__).resolve().parents[1] / "fixtures" / "toyroot" / "solutions" / "labx_toy" / "toy.py").read_text()


def _big_but_legal() -> str:
    """The reference plus a comment and a string constant: 1.9 MiB of valid Python."""
    pad = staging.MAX_FILE_BYTES - len(TOY) - 100 * 1024
    line = "# " + "x" * 98 + "\n"
    return TOY + line * (pad // 2 // len(line)) + f"PADDING = {'y' * (pad // 2)!r}\n"


@needs_root
def test_a_file_just_under_the_staging_limit_grades_through_the_sandbox(toy_lab, tmp_path):
    text = _big_but_legal()
    assert 1.9 * MIB < len(text.encode()) <= staging.MAX_FILE_BYTES
    write_zip(tmp_path / "alice.zip", {"toy.py": text}, folder="alice")
    st = staging.stage(tmp_path / "alice.zip", toy_lab.manifest.student_files, tmp_path / "staged")
    assert not st.problems, st.problems
    b = SandboxBackend(tmp_path / "staged", toy_lab.manifest, toy_lab.assignment_dir)
    try:
        assert b.call("norm", (), {"x": [3.0, 4.0]})[0] == 5.0
        assert list(b.call("add", (), {"a": [1.0], "b": [2.0]})[0]) == [3.0]
        assert b.isolation["sandbox"]
    finally:
        b.close()


def test_a_file_over_the_limit_is_refused_once_without_a_spawn(toy_lab, tmp_path, monkeypatch):
    """`check --sandbox` reads a student's folder as it is: an oversized file is named, never sent."""
    (tmp_path / "toy.py").write_text("#" * (staging.MAX_FILE_BYTES + 1))
    monkeypatch.setattr(sandbox_backend, "zygote", lambda manifest=None: pytest.fail("no spawn may be tried"))
    b = SandboxBackend(tmp_path, toy_lab.manifest, toy_lab.assignment_dir)
    for _test in range(2):
        with pytest.raises(errors.StudentCodeError, match="^file toy.py is larger than 2 MiB$") as exc:
            b.call("norm", (), {"x": [1.0]})
        assert exc.value.kind == errors.MISSING_FILE
    b.close()


# -- a failed spawn is tried once -----------------------------------------------------------
class _FailingZygote:
    def __init__(self, exc: Exception):
        self.exc, self.requests = exc, 0

    def request(self, req, timeout=10.0):
        self.requests += 1
        raise self.exc


@pytest.mark.parametrize("exc, cause", [
    (BrokenPipeError(32, "Broken pipe"), "BrokenPipeError: Broken pipe"),
    (sandbox_backend.SandboxUnavailable("sandbox setup failed: Refused: make them mode 700"),
     "sandbox setup failed: Refused: make them mode 700"),
    (KeyError("pid"), "KeyError"),
])
def test_a_failed_spawn_is_tried_once_and_reported_on_every_call(toy_lab, tmp_path, monkeypatch, exc, cause):
    (tmp_path / "toy.py").write_text(TOY)
    z = _FailingZygote(exc)
    monkeypatch.setattr(sandbox_backend, "zygote", lambda manifest=None: z)
    b = SandboxBackend(tmp_path, toy_lab.manifest, toy_lab.assignment_dir)
    seen = []
    for name, kwargs in (("norm", {"x": [1.0]}), ("add", {"a": [1.0], "b": [1.0]}), ("norm", {"x": [2.0]})):
        t0 = time.monotonic()
        with pytest.raises(errors.StudentCodeError) as info:
            b.call(name, (), kwargs)
        # at once, never after a wait for a worker (a margin no load reaches: it takes milliseconds)
        assert time.monotonic() - t0 < sandbox_backend.SPAWN_TIMEOUT_S / 2
        seen.append((info.value.kind, str(info.value)))
    assert z.requests == 1
    assert seen == [(errors.GRADER, f"the grader could not start a sandbox for your code ({cause}): the grader's "
                                    "failure, not your code's; this test's score is pending")] * 3
    assert b.work is None and b.conn is None  # the failed spawn left no folder or socket behind
    b.close()


def test_a_failed_spawn_fails_every_test_of_the_run(toy, monkeypatch):
    """Through the plugin: one spawn tried, every test of the submission told the same."""
    import json

    z = _FailingZygote(BrokenPipeError(32, "Broken pipe"))
    monkeypatch.setattr(sandbox_backend, "zygote", lambda manifest=None: z)
    out = toy.path / "r.json"
    toy.runpytest_inprocess("-p", "no:cacheprovider", "--sandbox", "--results-json", str(out), "tests")
    tests = json.loads(out.read_text())["tests"]
    assert len(tests) == 4 and z.requests == 1
    assert {(t["status"], t["kind"]) for t in tests} == {("failed", errors.GRADER)}
    assert all("could not start a sandbox for your code (BrokenPipeError" in t["feedback"] for t in tests)


@pytest.fixture
def toy(pytester, monkeypatch):
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "toyroot", pytester.path, dirs_exist_ok=True)
    monkeypatch.setenv("IRONLAW_ROOT", str(pytester.path))
    return pytester
