"""``student.fn.each([...])`` and ``.chain([...])``: many small calls in one round trip, graded as if made one by one.

A ring test calls a rank's step hundreds of times, and a sandboxed round
trip costs more than such a call; ``each`` sends a step's calls together.
It must not change what a test sees: the same values, in order, each taken
as its call returned; the first failure raises as it would alone, and the
calls after it are not made. In-process it is the plain loop.

``chain`` is the loop of dependent calls (an optimizer's steps, fed the
(params, state) the step before returned): one message, one reply per call,
each call within its own time limit and fed a fresh copy, so a test sees
the same values and errors as from the loop.
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


def _proxies(request, toy_lab, tmp_path, code: str):
    """``code`` as toy.py, called in process or sandboxed (``request.param``)."""
    (tmp_path / "toy.py").write_text(code)
    if request.param == "sandbox":
        if os.geteuid() != 0:
            pytest.skip("the full sandbox needs root (as on CI and Gradescope)")
        backend = SandboxBackend(tmp_path, toy_lab.manifest, toy_lab.assignment_dir)
    else:
        backend = seam.InProcess(tmp_path, ("toy.py",))
    yield seam.CodeProxy(backend)
    backend.close()


@pytest.fixture(params=["in-process", "sandbox"])
def proxy(request, toy_lab, tmp_path):
    yield from _proxies(request, toy_lab, tmp_path, CODE)


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


def _one_second_backend(toy_lab, tmp_path, code: str) -> SandboxBackend:
    """``code`` as toy.py in a sandbox whose calls have a 1 s limit each."""
    (tmp_path / "toy.py").write_text(code)
    m = toy_lab.manifest
    m = dataclasses.replace(m, limits=dataclasses.replace(m.limits, timeout_s=1))
    return SandboxBackend(tmp_path, m, toy_lab.assignment_dir)


@needs_root
def test_calls_made_together_share_their_time_limits(toy_lab, tmp_path):
    b = _one_second_backend(toy_lab, tmp_path, CODE)
    try:
        nap = seam.CodeProxy(b).nap
        assert nap.each([{"s": 0.6}] * 3) == [0.6] * 3  # 1.8 s for three calls of 1 s each
        with pytest.raises(errors.StudentCodeError) as info:
            nap.each([{"s": 1.2}] * 3)
        assert info.value.kind == errors.TIMEOUT
        assert info.value.message == "3 calls of nap() made together did not finish within 3 s (1 s a call)"
    finally:
        b.close()


# -- chain: dependent calls, each fed what the one before returned ---------------------------
CHAIN = '''
import time

_made = []


def step(x, state, k):
    _made.append(k)
    return x + k, {"n": state.get("n", 0) + 1}


def grows(x, state, k, bad):
    _made.append(k)
    if k == bad:
        return (x,)  # not an (x, state) pair: the chain ends here
    return x + 1, state


def listed(x, state, k):
    _made.append(k)
    return [x + k, state]  # a list, not a tuple: a loop would unpack it and go on


def fails(x, state, k, bad):
    _made.append(k)
    if k == bad:
        raise ValueError(f"no {k}")
    return x, state


def keeps(x, state, k):
    _made.append(k)
    state["seen"] = k  # changes its own input: a bug, caught as it would be alone
    return x, state


def made():
    return list(_made)


def nap(x, state, k, s):
    time.sleep(s)
    return x, state
'''


@pytest.fixture(params=["in-process", "sandbox"])
def chained(request, toy_lab, tmp_path):
    yield from _proxies(request, toy_lab, tmp_path, CHAIN)


def _calls(n: int, **extra) -> list[dict]:
    calls = [{"k": k, **extra} for k in range(1, n + 1)]
    calls[0].update(x=np.zeros(2), state={})
    return calls


def test_chain_gives_what_the_calls_give_one_by_one(chained):
    got = chained.step.chain(_calls(4), carry=("x", "state"))
    x, state, want = np.zeros(2), {}, []
    for k in range(1, 5):
        x, state = chained.step(x=x, state=state, k=k)
        want.append((x, state))
    assert [type(g) for g in got] == [tuple] * 4
    for (gx, gs), (wx, ws) in zip(got, want):
        np.testing.assert_array_equal(gx, wx)
        assert gs == ws
    assert chained.made() == [1, 2, 3, 4] * 2 and chained.step.chain([], carry=("x", "state")) == []


def test_a_value_that_cannot_feed_the_next_call_ends_the_chain(chained):
    got = chained.grows.chain(_calls(5, bad=3), carry=("x", "state"))
    assert len(got) == 3 and len(got[-1]) == 1  # the test reads it as it would have alone
    assert chained.made() == [1, 2, 3]  # 4 and 5 never ran
    assert chained.grows(x=1.0, state={}, k=0, bad=9) == (2.0, {})  # the worker still answers


def test_a_list_of_as_many_items_feeds_the_next_call_as_a_loop_unpacks_it(chained):
    got = chained.listed.chain(_calls(3), carry=("x", "state"))
    assert [g[0].tolist() for g in got] == [[1.0, 1.0], [3.0, 3.0], [6.0, 6.0]]
    assert chained.made() == [1, 2, 3]


def test_the_first_failure_in_a_chain_raises_as_alone(chained):
    with pytest.raises(errors.StudentCodeError) as alone:
        chained.fails(x=0.0, state={}, k=2, bad=2)
    with pytest.raises(errors.StudentCodeError) as together:
        chained.fails.chain(_calls(4, bad=2), carry=("x", "state"))
    assert together.value.kind == alone.value.kind == errors.EXCEPTION
    assert together.value.message == alone.value.message == "fails() raised ValueError: no 2"
    assert chained.made() == [2, 1, 2]
    with pytest.raises(errors.StudentCodeError) as changed:  # each call is fed a copy, checked as alone
        chained.keeps.chain(_calls(2), carry=("x", "state"))
    assert "state" in changed.value.message


@needs_root
def test_each_call_of_a_chain_keeps_its_own_time_limit(toy_lab, tmp_path):
    b = _one_second_backend(toy_lab, tmp_path, CHAIN)
    try:
        nap = seam.CodeProxy(b).nap
        assert len(nap.chain(_calls(3, s=0.6), carry=("x", "state"))) == 3  # 1.8 s, no call over 1 s
        calls = _calls(3, s=0.1)
        calls[1]["s"] = 5.0  # the second call never ends in time: cut off at its own limit, as alone
        with pytest.raises(errors.StudentCodeError) as info:
            nap.chain(calls, carry=("x", "state"))
        assert info.value.kind == errors.TIMEOUT and info.value.message == "nap() timed out after 1 s"
    finally:
        b.close()
