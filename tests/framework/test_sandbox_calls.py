"""Limits of a sandboxed call that cannot be stretched or gamed (issue 12, findings 6 and 9).

The submission's total time budget ends every later call at once.

A measured call runs in a fresh worker that may start no thread or process,
and its peak counts from before the worker imported any student file: a
buffer kept from a warm-up call or made at import time still counts, and
the work cannot move to a child process nobody measures.
"""

from __future__ import annotations

import dataclasses
import os
import time

import pytest

from autograder.calls import errors
from autograder.sandbox.backend import SandboxBackend

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the full sandbox needs root (as on CI and Gradescope)")
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


def test_honest_allocation_is_counted(backend):
    assert _peak(backend, "honest") >= 60 * MIB


def test_a_buffer_kept_from_the_warm_up_still_counts(backend):
    assert _peak(backend, "reuse") >= 60 * MIB


def test_a_buffer_made_at_import_still_counts(backend):
    assert _peak(backend, "imported", warm=False) >= 44 * MIB


def test_a_measured_call_cannot_move_work_to_a_child(backend):
    backend.call("in_child", (), {"n": 1})  # unmeasured: processes are allowed
    if not backend.isolation.get("process_group"):
        pytest.skip("no writable pids cgroup here: children of a measured call are not stopped")
    with pytest.raises(errors.StudentCodeError) as info:
        backend.call("in_child", (), {"n": 64}, measure=True)
    assert "Resource temporarily unavailable" in str(info.value) or "BlockingIOError" in str(info.value)


def test_a_small_call_measures_small(backend):
    # The baseline: what the fresh worker holds before student code; the module itself
    # (48 MiB at import) counts, a call that allocates nothing adds nothing beyond it.
    assert _peak(backend, "tiny", n=1) < 60 * MIB


def test_the_submission_budget_ends_every_later_call(toy_lab, tmp_path):
    (tmp_path / "toy.py").write_text(CODE)
    m = toy_lab.manifest
    m = dataclasses.replace(m, limits=dataclasses.replace(m.limits, timeout_s=3, submission_timeout_s=2.5))
    b = SandboxBackend(tmp_path, m, toy_lab.assignment_dir)
    try:
        t0 = time.monotonic()
        b.call("nap", (), {"n": 1.0})  # within both limits
        with pytest.raises(errors.StudentCodeError, match="total time limit of 2.5 s"):
            b.call("nap", (), {"n": 2.0})  # within its own 3 s, past the budget
        with pytest.raises(errors.StudentCodeError, match="total time limit"):
            b.call("tiny", (), {"n": 1})  # nothing runs any more
        assert time.monotonic() - t0 < 5
    finally:
        b.close()
