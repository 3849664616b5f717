"""A student function that changes its inputs in place fails, in both seams (issue 13).

Each call gets a fresh copy of its arguments, so the change never reaches the
grader; it is reported all the same, naming the argument: changing one's
inputs is a bug the labs teach against. Arrays and tensors are compared
bitwise, nested lists and dicts item by item.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from autograder.calls import errors, loader, seam

CODE = '''
import numpy as np
import torch


def add(a, b):
    a += b                      # in place: the caller's a is gone
    return a


def scale_first(a, b):
    out = np.asarray(a, dtype=np.float64) * 2
    a[0] = a[0]                 # writes, but the same bits: not a change
    return out


def sort_list(xs):
    xs.sort()
    return xs


def nested(state, lr):
    state["m"][1] = -0.0        # -0.0 has other bits than 0.0
    return lr


def both(a, b):
    a[...] = 0
    b.append(1)
    return 0.0


def tensor_inplace(t):
    t.mul_(2)
    return t.sum().item()


def bf16_inplace(t):
    t.add_(1)
    return 1.0


def self_loop(xs):
    xs.append(xs)               # a cycle: the walk must still end
    return 1.0


def positional(a, b):
    a.fill(7)
    return 1.0


def pure(a, b):
    return np.asarray(a) + np.asarray(b)


def raises_after_change(a, b):
    a[0] = 99
    raise ValueError("boom")
'''


def _cases(torch):
    return [
        ("add", (), {"a": np.ones(3), "b": np.ones(3)}, "add() modified its argument a in place"),
        ("sort_list", (), {"xs": [3, 1, 2]}, "sort_list() modified its argument xs in place"),
        ("nested", (), {"state": {"m": [1.0, 0.0]}, "lr": 0.1}, "nested() modified its argument state in place"),
        ("both", (), {"a": np.ones(2), "b": []}, "both() modified its arguments a, b in place"),
        ("tensor_inplace", (), {"t": torch.ones(4)}, "tensor_inplace() modified its argument t in place"),
        ("bf16_inplace", (), {"t": torch.ones(4, dtype=torch.bfloat16)}, "bf16_inplace() modified its argument t"),
        ("self_loop", (), {"xs": [1, 2]}, "self_loop() modified its argument xs in place"),
        ("positional", (np.ones(2),), {"b": 1}, "positional() modified its argument a in place"),
    ]


def _check(backend):
    import torch

    for name, args, kwargs, message in _cases(torch):
        sent = {k: (v.clone() if torch.is_tensor(v) else v) for k, v in kwargs.items()}
        with pytest.raises(errors.StudentCodeError) as info:
            backend.call(name, args, kwargs)
        assert info.value.kind == loader.MODIFIED_ARGUMENT, (name, info.value.kind, str(info.value))
        assert message in str(info.value) and "return new values instead" in str(info.value), str(info.value)
        for k, v in sent.items():  # the grader's own values were never touched
            assert loader.fingerprint(kwargs[k]) == loader.fingerprint(v)
    got, _ = backend.call("scale_first", (), {"a": np.arange(3.0), "b": 0})
    assert np.array_equal(got, [0.0, 2.0, 4.0])
    got, _ = backend.call("pure", (), {"a": [1.0], "b": np.ones(1)})
    assert np.array_equal(got, [2.0])
    with pytest.raises(errors.StudentCodeError) as info:  # the exception is the news, not the change
        backend.call("raises_after_change", (), {"a": np.ones(2), "b": 0})
    assert info.value.kind == errors.EXCEPTION and "boom" in str(info.value)


def test_in_process(tmp_path):
    (tmp_path / "toy.py").write_text(CODE)
    backend = seam.InProcess(tmp_path, ("toy.py",))
    _check(backend)
    with pytest.raises(errors.StudentCodeError, match=r"add\(\) modified its argument a"):
        backend.call("add", (), {"a": np.ones(3), "b": np.ones(3)}, measure=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="the full sandbox needs root (as on CI and Gradescope)")
def test_sandboxed(toy_lab, tmp_path):
    from autograder.sandbox.backend import SandboxBackend

    (tmp_path / "toy.py").write_text(CODE)
    backend = SandboxBackend(tmp_path, toy_lab.manifest, toy_lab.assignment_dir)
    try:
        _check(backend)
    finally:
        backend.close()


def test_in_vietnamese(tmp_path):
    from autograder.core import i18n

    (tmp_path / "toy.py").write_text(CODE)
    with i18n.language("vi"), pytest.raises(errors.StudentCodeError) as info:
        seam.InProcess(tmp_path, ("toy.py",)).call("add", (), {"a": np.ones(3), "b": np.ones(3)})
    assert "add()" in str(info.value) and " a " in str(info.value) and "modified" not in str(info.value)


def test_fingerprint_is_bitwise_and_structural():
    import torch

    fp = loader.fingerprint
    assert fp(np.zeros(3)) == fp(np.zeros(3))
    assert fp(np.zeros(3)) != fp(-np.zeros(3))  # same values, other bits
    assert fp(np.zeros(3)) != fp(np.zeros(3, dtype=np.float32))
    assert fp(np.zeros((2, 3))) != fp(np.zeros((3, 2)))
    assert fp(np.full(2, np.nan)) == fp(np.full(2, np.nan))  # NaN equals itself bitwise
    assert fp([1, 2]) != fp((1, 2)) and fp([1]) != fp([1.0]) and fp([True]) != fp([1])
    assert fp({"a": [np.ones(2)]}) != fp({"a": [np.ones(2), 0]})
    assert fp(torch.ones(2)) != fp(np.ones(2, dtype=np.float32))
    assert fp(torch.ones(2, dtype=torch.bfloat16)) != fp(torch.ones(2, dtype=torch.float16))
    strided = np.arange(12.0).reshape(3, 4)[:, ::2]
    assert fp(strided) == fp(np.ascontiguousarray(strided))
