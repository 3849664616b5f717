"""Assertions for lab tests, with messages that name the symptom.

Each helper states the quantity (``what``), the input (``case``), and what
is wrong (shape, worst error and where, a ratio), never the expected value.
"""

from __future__ import annotations

import math

import numpy as np

from autograder import messages as M


def _as_array(x, what: str, case: str) -> np.ndarray:
    if hasattr(x, "detach"):  # a torch tensor
        x = x.detach().float().numpy() if str(x.dtype) == "torch.bfloat16" else x.detach().numpy()
    try:
        arr = np.asarray(x)
    except Exception:
        arr = None
    if arr is None or arr.dtype.kind not in "biuf":
        raise AssertionError(M.say(M.WRONG_TYPE,
            what=what, case=M.case_suffix(case), expected_type=M.say(M.NUMBERS_OR_ARRAY), got_type=type(x).__name__))
    return arr


def assert_close(actual, expected, *, what: str, case: str = "", rtol: float = 1e-6, atol: float = 0.0) -> None:
    """Element-wise ``|a - e| <= atol + rtol * |e|`` with a symptom message."""
    e = _as_array(expected, "reference " + what, case)
    a = _as_array(actual, what, case)
    sfx = M.case_suffix(case)
    if a.shape != e.shape:
        raise AssertionError(M.say(M.WRONG_SHAPE, what=what, case=sfx, got=a.shape, expected=e.shape))
    a = a.astype(np.float64)
    e = e.astype(np.float64)
    bad = ~np.isfinite(a) & np.isfinite(e)
    if bad.any():
        idx = np.unravel_index(np.argmax(bad), a.shape) if a.shape else ()
        raise AssertionError(M.say(M.NOT_FINITE, what=what, case=sfx, count=int(bad.sum()), index=_fmt_index(idx)))
    err = np.abs(a - e)
    allowed = atol + rtol * np.abs(e)
    over = np.where(np.isfinite(e), err - allowed, 0.0)
    if (over > 0).any():
        flat = int(np.argmax(over))
        idx = np.unravel_index(flat, a.shape) if a.shape else ()
        raise AssertionError(M.say(M.NOT_CLOSE,
            what=what, case=sfx, err=float(err.reshape(-1)[flat]), index=_fmt_index(idx), rtol=rtol, atol=atol))


def assert_scalar(actual, expected, *, what: str, case: str = "", rtol: float = 1e-6, atol: float = 0.0) -> None:
    """A single number; on failure say by what factor it is off."""
    a = _as_array(actual, what, case)
    sfx = M.case_suffix(case)
    if a.size != 1:
        raise AssertionError(M.say(M.WRONG_SHAPE, what=what, case=sfx, got=a.shape, expected=M.say(M.SINGLE_NUMBER)))
    a, e = float(a.reshape(())), float(expected)
    if not math.isfinite(a):
        raise AssertionError(M.say(M.NOT_FINITE, what=what, case=sfx, count=1, index="()"))
    if abs(a - e) <= atol + rtol * abs(e):
        return
    if e == 0:  # no ratio to give
        raise AssertionError(M.say(M.NOT_EQUAL, what=what, case=sfx))
    if a == 0 or (a > 0) != (e > 0):
        raise AssertionError(M.say(M.SCALAR_SIGN, what=what, case=sfx))
    raise AssertionError(M.say(M.SCALAR_OFF, what=what, case=sfx, ratio=_fmt_ratio(a / e), rtol=rtol))


def _fmt_ratio(r: float) -> str:
    """Enough digits that a ratio near 1 does not print as "1"."""
    digits = 3 if abs(r - 1) >= 0.01 else min(12, 2 - math.floor(math.log10(abs(r - 1))))
    return f"{r:.{digits}g}"


def assert_equal(actual, expected, *, what: str, case: str = "") -> None:
    """Exact equality (integers, strings, booleans): say only that it differs."""
    if actual != expected:
        raise AssertionError(M.say(M.NOT_EQUAL, what=what, case=M.case_suffix(case)))


def assert_keys(actual, expected_keys, *, what: str, case: str = "") -> None:
    """A dict with exactly these keys (names of the missing and extra ones)."""
    sfx = M.case_suffix(case)
    if not isinstance(actual, dict):
        raise AssertionError(M.say(M.WRONG_TYPE, what=what, case=sfx, expected_type="dict", got_type=type(actual).__name__))
    missing = sorted(set(expected_keys) - set(actual))
    extra = sorted(set(actual) - set(expected_keys))
    if missing:
        raise AssertionError(M.say(M.MISSING_KEYS, what=what, case=sfx, keys=missing))
    if extra:
        raise AssertionError(M.say(M.EXTRA_KEYS, what=what, case=sfx, keys=extra))


def assert_fields(actual, expected: dict, *, what: str, case: str = "", keys=None, rtol: float = 1e-9) -> None:
    """A result dict field by field: exactly ``keys`` (default: ``expected``'s),
    strings equal, numbers within ``rtol``; each message names the field."""
    keys = tuple(expected) if keys is None else keys
    assert_keys(actual, keys, what=what, case=case)
    for key in keys:
        e, field = expected[key], f"{what}[{key!r}]"
        if isinstance(e, str):
            assert_equal(actual[key], e, what=field, case=case)
        else:
            assert_scalar(actual[key], e, what=field, case=case, rtol=rtol)


def ratio(actual, expected) -> float:
    """‖actual‖ / ‖expected‖ (the symptom "4.00× the big-batch gradient")."""
    a = _as_array(actual, "value", "").astype(np.float64).ravel()
    e = _as_array(expected, "value", "").astype(np.float64).ravel()
    en = float(np.linalg.norm(e))
    return float(np.linalg.norm(a)) / en if en else math.inf


def _fmt_index(idx) -> str:
    return "(" + ", ".join(str(int(i)) for i in idx) + ("," if len(idx) == 1 else "") + ")"
