"""Assertions for lab tests, with messages that name the symptom.

Each helper states the quantity (``what``), the input (``case``), and what
is wrong (shape, the worst element and which way it is off, a ratio), never the
expected value.  Numbers keep two significant figures, a ratio within 5% of 1
is said in words, and an error in exact integers says only which way it is
off (``docs/feedback.md``).  In a fixed case (``messages.fixed_case``) no
message says which way or how far: only which quantity, case and element.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from autograder.calls import errors
from autograder.core.i18n import _
from autograder.labkit import messages as M


def _as_array(x, what: str, case: str) -> np.ndarray:
    if hasattr(x, "detach"):  # a torch tensor
        x = x.detach().float().numpy() if str(x.dtype) == "torch.bfloat16" else x.detach().numpy()
    try:
        arr = np.asarray(x)
    except Exception:
        arr = None
    if arr is None or arr.dtype.kind not in "biuf":
        raise AssertionError(M.say(M.WRONG_TYPE,
            what=what, case=M.case_suffix(case), expected_type=M.say(M.NUMBERS_OR_ARRAY), got_type=_type_name(x)))
    return arr


def _type_name(x) -> str:
    """A type's name is the student's text (a class can be named anything)."""
    return M.student_text(type(x).__name__, limit=60)


def _integral(e: np.ndarray, rtol: float, atol: float) -> bool:
    """Exact integers: an integer dtype, or an exact check (rtol = atol = 0) of whole numbers."""
    if e.dtype.kind in "biu":
        return True
    if rtol or atol:
        return False
    finite = e[np.isfinite(e)]
    return bool(np.all(finite == np.round(finite)))


def assert_close(actual, expected, *, what: str, case: str = "", rtol: float = 1e-6, atol: float = 0.0) -> None:
    """Element-wise ``|a - e| <= atol + rtol * |e|`` with a symptom message."""
    e = _as_array(expected, "reference " + what, case)
    a = _as_array(actual, what, case)
    sfx = M.case_suffix(case)
    if a.ndim != e.ndim:
        raise AssertionError(M.say(M.WRONG_NDIM, what=what, case=sfx, got=a.ndim, expected=e.ndim))
    if a.shape != e.shape:
        axis = next(i for i, (x, y) in enumerate(zip(a.shape, e.shape)) if x != y)
        raise AssertionError(M.say(M.WRONG_SIZE_AT, what=what, case=sfx, axis=axis))
    integral = _integral(e, rtol, atol)
    a = a.astype(np.float64)
    e = e.astype(np.float64)
    bad = ~np.isfinite(a) & np.isfinite(e)
    if bad.any():
        if not a.shape:
            raise AssertionError(M.say(M.NOT_FINITE_NUMBER, what=what, case=sfx))
        idx = np.unravel_index(np.argmax(bad), a.shape)
        raise AssertionError(M.say(M.NOT_FINITE, what=what, case=sfx, count=int(bad.sum()), index=_fmt_index(idx)))
    err = np.abs(a - e)
    allowed = atol + rtol * np.abs(e)
    over = np.where(np.isfinite(e), err - allowed, 0.0)
    if (over > 0).any():
        # the worst element; in a fixed case the first one that fails: which element is worst
        # compares the errors, and a student who picks the values reads a direction from that
        flat = int(np.argmax(over > 0)) if M.in_fixed_case() else int(np.argmax(over))
        got, want = float(a.reshape(-1)[flat]), float(e.reshape(-1)[flat])
        if not a.shape:  # one number: nothing to point at
            if integral:
                raise AssertionError(M.say(M.TOO_LARGE if got > want else M.TOO_SMALL, what=what, case=sfx))
            raise AssertionError(M.say(M.NOT_CLOSE_NUMBER, what=what, case=sfx, direction=M.direction(got, want),
                                       rtol=rtol, atol=atol))
        idx = np.unravel_index(flat, a.shape)
        if integral:  # the size of the error would give the expected integer away
            raise AssertionError(M.say(M.NOT_CLOSE_TOO_LARGE if got > want else M.NOT_CLOSE_TOO_SMALL,
                                       what=what, case=sfx, index=_fmt_index(idx)))
        raise AssertionError(M.say(M.NOT_CLOSE, what=what, case=sfx, direction=M.direction(got, want),
                                   index=_fmt_index(idx), rtol=rtol, atol=atol))


def assert_scalar(actual, expected, *, what: str, case: str = "", rtol: float = 1e-6, atol: float = 0.0) -> None:
    """A single number; on failure say by what factor it is off."""
    a = _as_array(actual, what, case)
    sfx = M.case_suffix(case)
    if a.size != 1:
        raise AssertionError(M.say(M.NOT_SINGLE_NUMBER, what=what, case=sfx))
    a, e = float(a.reshape(())), float(expected)
    if not math.isfinite(a):
        raise AssertionError(M.say(M.NOT_FINITE_NUMBER, what=what, case=sfx))
    if abs(a - e) <= atol + rtol * abs(e):
        return
    if e == 0:  # no ratio to give: only the direction
        raise AssertionError(M.say(M.TOO_LARGE if a > e else M.TOO_SMALL, what=what, case=sfx))
    if a == 0 or (a > 0) != (e > 0):
        raise AssertionError(M.say(M.SCALAR_SIGN, what=what, case=sfx))
    r = a / e
    if abs(r - 1) <= M.NEAR:  # "off by a factor of 1.0" would say nothing; 12 digits would say too much
        raise AssertionError(M.say(M.SCALAR_NEAR, what=what, case=sfx, direction=_fmt_ratio(r, a > e), rtol=rtol))
    raise AssertionError(M.say(M.SCALAR_OFF, what=what, case=sfx, ratio=_fmt_ratio(r), rtol=rtol))


def _fmt_ratio(r: float, larger: bool | None = None) -> str:
    """A ratio at two significant figures ("4.0", "0.50"); within 5% of 1, in words
    ("slightly too large (within 5%)"): ``larger`` says which way (default: r > 1)."""
    if math.isfinite(r) and abs(r - 1) <= M.NEAR:
        return M.near_words(r > 1 if larger is None else larger)
    return M.sig2(r)


def _is_number(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def assert_equal(actual, expected, *, what: str, case: str = "") -> None:
    """Exact equality (integers, strings, booleans).  Numbers: say which way
    they are off ("too large"), never by how much; anything else: "wrong value"."""
    if actual != expected:
        sfx = M.case_suffix(case)
        if _is_number(actual) and _is_number(expected) and (actual > expected or actual < expected):
            raise AssertionError(M.say(M.TOO_LARGE if actual > expected else M.TOO_SMALL, what=what, case=sfx))
        raise AssertionError(M.say(M.NOT_EQUAL, what=what, case=sfx))


def assert_int(values, *, what: str, case: str = "") -> None:
    """Every count in ``values`` (a number, a list or tuple, or a dict of them)
    is a Python ``int``: not a float, even an integral one, and not a bool.
    Counts (FLOPs, bytes, calls) are exact ints in every lab's contract."""
    items = values.items() if isinstance(values, dict) else (
        enumerate(values) if isinstance(values, (list, tuple)) else [(None, values)])
    for key, v in items:
        if type(v) is not int:
            name = what if key is None else f"{what}[{M.student_text(repr(key), limit=60)}]"
            raise AssertionError(M.say(M.WRONG_TYPE, what=name, case=M.case_suffix(case), expected_type=_(M.EXACT_INT),
                                       got_type=M.student_text(type(v).__name__, limit=60)))


def assert_keys(actual, expected_keys, *, what: str, case: str = "") -> None:
    """A dict with exactly these keys (names of the missing and extra ones)."""
    sfx = M.case_suffix(case)
    if not isinstance(actual, dict):
        raise AssertionError(M.say(M.WRONG_TYPE, what=what, case=sfx, expected_type="dict", got_type=_type_name(actual)))
    expected_keys = list(expected_keys)
    missing = sorted((k for k in expected_keys if k not in actual), key=repr)
    extra = sorted((k for k in actual if k not in expected_keys), key=repr)
    if missing:
        raise AssertionError(M.say(M.MISSING_KEYS, what=what, case=sfx, keys=_fmt_keys(missing)))
    if extra:  # the student's keys: any text, e.g. {repr(args): 1}
        raise AssertionError(M.say(M.EXTRA_KEYS, what=what, case=sfx, keys=M.student_text(_fmt_keys(extra), limit=200)))


def _fmt_keys(keys: list) -> str:
    return "[" + ", ".join(repr(k) for k in keys) + "]"


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
    """‖actual‖ / ‖expected‖ (the symptom "4.0× the big-batch gradient": format it with ``M.sig2``)."""
    a = _as_array(actual, "value", "").astype(np.float64).ravel()
    e = _as_array(expected, "value", "").astype(np.float64).ravel()
    en = float(np.linalg.norm(e))
    return float(np.linalg.norm(a)) / en if en else math.inf


def _fmt_index(idx) -> str:
    return "(" + ", ".join(str(int(i)) for i in idx) + ("," if len(idx) == 1 else "") + ")"


def grader_check(ok, message: str) -> None:
    """A check of the grader's own work, not of the submission: the reference against the test's model,
    a case the test built.  When it fails the grader is wrong, so it raises ``errors.GraderError``: the
    test's score is pending and the run is flagged for the instructor (``docs/feedback.md``, "A grader
    failure is never a student's zero"), never a 0 charged to the student.  ``message`` goes to the
    instructor's note only."""
    if not ok:
        raise errors.GraderError(message)
