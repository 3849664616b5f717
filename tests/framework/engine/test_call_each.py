"""``student.fn.each([...])``: many small calls in one round trip, graded as if made one by one.

A ring test calls a rank's step hundreds of times, and a sandboxed round
trip costs more than such a call; ``each`` sends a step's calls together.
It must not change what a test sees: the same values, in order, each taken
as its call returned; the first failure raises as it would alone, and the
calls after it are not made. In-process it is the plain loop.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

from autograder.calls import errors, seam
from autograder.sandbox.backend import SandboxBackend

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the full sandbox needs root (as on CI and Gradescope)")

CODE = '''
import time
import numpy as np

_made = []
_shared = np.zeros(3)


def scaled(x, k):
    _made.append(k)
    return {"k": k, "y": np.asarray(x) * k}


def fails_at(k, bad):
    _made.append(k)
    if k == bad:
        raise ValueError(f"no {k}")
    return k


def made():
    return list(_made)


def in_place(k):
    _shared[:] = k  # the same array every call: a later call changes what an earlier one returned
    return _shared


def nap(s):
    time.sleep(s)
    return s
'''


@pytest.fixture(params=["in-process", "sandbox"])
def proxy(request, toy_lab, tmp_path):
    (tmp_path / "toy.py").write_text(CODE)
    if request.param == "sandbox":
        if os.geteuid() != 0:
            pytest.skip("the full sandbox needs root (as on CI and Gradescope)")
        backend = SandboxBackend(tmp_path, toy_lab.manifest, toy_lab.assignment_dir)
    else:
        backend = seam.InProcess(tmp_path, ("toy.py",))
    yield seam.CodeProxy(backend)
    backend.close()


def test_each_gives_what_the_calls_give_one_by_one(proxy):
    calls = [{"x": np.arange(3.0), "k": k} for k in range(4)]
    got = proxy.scaled.each(calls)
    assert [g["k"] for g in got] == [0, 1, 2, 3]
    for g, c in zip(got, calls):
        np.testing.assert_array_equal(g["y"], c["x"] * c["k"])
    assert proxy.made() == [0, 1, 2, 3] and proxy.scaled.each([]) == []


def test_the_first_failure_raises_as_alone_and_stops_the_rest(proxy):
    with pytest.raises(errors.StudentCodeError) as alone:
        proxy.fails_at(k=2, bad=2)
    with pytest.raises(errors.StudentCodeError) as together:
        proxy.fails_at.each([{"k": k, "bad": 2} for k in (0, 1, 2, 3, 4)])
    assert together.value.kind == alone.value.kind == errors.EXCEPTION
    assert together.value.message == alone.value.message == "fails_at() raised ValueError: no 2"
    assert proxy.made() == [2, 0, 1, 2]  # 3 and 4 never ran


def test_each_value_is_taken_as_its_call_returned(proxy):
    got = proxy.in_place.each([{"k": k} for k in (1, 2, 3)])
    assert [g.tolist() for g in got] == [[1.0] * 3, [2.0] * 3, [3.0] * 3]


@needs_root
def test_calls_made_together_share_their_time_limits(toy_lab, tmp_path):
    (tmp_path / "toy.py").write_text(CODE)
    m = toy_lab.manifest
    m = dataclasses.replace(m, limits=dataclasses.replace(m.limits, timeout_s=1))
    b = SandboxBackend(tmp_path, m, toy_lab.assignment_dir)
    try:
        nap = seam.CodeProxy(b).nap
        assert nap.each([{"s": 0.6}] * 3) == [0.6] * 3  # 1.8 s for three calls of 1 s each
        with pytest.raises(errors.StudentCodeError) as info:
            nap.each([{"s": 1.2}] * 3)
        assert info.value.kind == errors.TIMEOUT
        assert info.value.message == "3 calls of nap() made together did not finish within 3 s (1 s a call)"
    finally:
        b.close()
