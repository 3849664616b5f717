"""Every message a student reads from a test, as a template.

Tests import these so the wording is tested too.  Each is marked for the
catalog (``N_``) and translated where it is used: :func:`say`.  Templates
never take an expected value: only shapes, directions, errors and ratios at
two significant figures (:func:`sig2`), and cases named by label and size.
Text that a student's code controls goes through :func:`student_text`
before it reaches a hidden test's feedback (``docs/feedback.md``).

In a *fixed case* (a hidden test whose inputs do not follow the submission,
or a ``with fixed_case():`` block) no message says which way a value is off
or by how much: :func:`say` turns every template of :data:`SIZED` into
"wrong value" and a hint.  Otherwise resubmitting with a constant answer
bisects the expected value (issue 27).
"""

import contextlib
import contextvars
import dataclasses
import math
import numbers
import re

from autograder.core import chapter
from autograder.core.i18n import N_, _, in_language

WRONG_TYPE = N_("{what}{case}: expected {expected_type}, got {got_type}")
# shapes are never printed: a hidden case's shape is made of its drawn (or hidden) sizes
WRONG_NDIM = N_("{what}{case}: {got} dimension(s), expected {expected}")
WRONG_SIZE_AT = N_("{what}{case}: the size along axis {axis} is not the expected one")
NOT_SINGLE_NUMBER = N_("{what}{case}: an array where a single number is expected")
NOT_FINITE = N_("{what}{case}: contains {count} NaN or inf value(s), first at index {index}")
# which way and roughly how far (``direction``): never the size of the error, which with the
# student's own value would give the expected value away
NOT_CLOSE = N_("{what}{case}: {direction} at index {index} (rtol={rtol:g}, atol={atol:g})")
# a 0-d value (one number) has no index to name ("at index ()" said nothing);
# exact integers say only TOO_LARGE or TOO_SMALL
NOT_FINITE_NUMBER = N_("{what}{case}: NaN or inf where a finite number is expected")
NOT_CLOSE_NUMBER = N_("{what}{case}: {direction} (rtol={rtol:g}, atol={atol:g})")
LARGER_BY = N_("too large, about {ratio}× the expected value")
SMALLER_BY = N_("too small, about {ratio}× the expected value")
LARGER = N_("too large")
SMALLER = N_("too small")
WRONG_SIGN = N_("wrong sign")
# exact integers: the size of the error would give the expected value away, the direction does not
NOT_CLOSE_TOO_LARGE = N_("{what}{case}: too large at index {index}")
NOT_CLOSE_TOO_SMALL = N_("{what}{case}: too small at index {index}")
SCALAR_OFF = N_("{what}{case}: off by a factor of {ratio} (rtol={rtol:g})")
SCALAR_NEAR = N_("{what}{case}: {direction} (rtol={rtol:g})")
SLIGHTLY_LARGE = N_("slightly too large (within 5%)")
SLIGHTLY_SMALL = N_("slightly too small (within 5%)")
SCALAR_SIGN = N_("{what}{case}: wrong sign or zero where a nonzero value is expected")
RATIO_SYMPTOM = N_("{what}{case}: it is {ratio}× {reference_name}")
# a ratio this machine measured (resident memory moves by a few percent from run to run): its
# power of two (at_least), so that grading the same code again says the same
RATIO_AT_LEAST = N_("{what}{case}: it is at least {ratio}× {reference_name}")
MISSING_KEYS = N_("{what}{case}: missing keys {keys}")
EXTRA_KEYS = N_("{what}{case}: unexpected keys {keys}")
NOT_EQUAL = N_("{what}{case}: wrong value")
TOO_LARGE = N_("{what}{case}: too large")
TOO_SMALL = N_("{what}{case}: too small")
CASE = N_(" (case: {case})")
SEE_SECTION = N_("Read in the chapter: {pointers}.")
BARE_ASSERT = N_("a check in {test} failed")
SNAPSHOT_MISSING = N_("snapshot {name} is missing; an instructor must run `autograder snapshots {lab}`")
EXACT_INT = N_("an exact int (a count: integer arithmetic, // and never /)")
NUMBERS_OR_ARRAY = N_("numbers or an array")
# a test whose details (traceback, output) an earlier test in the same feedback shows already
SAME_DETAILS = N_("{message} (details as for {test} above)")
# a fixed case (inputs the same on every submission): which quantity, which case, never which way
FIXED_WRONG = N_("{what}{case}: wrong value ({hint})")
FIXED_WRONG_AT = N_("{what}{case}: wrong value at index {index} ({hint})")
FIXED_HINT = N_("this case is the same on every submission, so its feedback never says which way a value is off: "
                "work it out by hand from the docstring")
FIXED_HINT_SECTION = N_("this case is the same on every submission, so its feedback never says which way a value "
                        "is off: work it out by hand from the docstring and the chapter ({pointers})")

NEAR = 0.05  # a ratio within 5% of 1 is said in words
TEXT_LIMIT = 300  # characters of student text in one message


def at_least(ratio: float) -> int:
    """The largest power of two not above ``ratio`` (1 below 2): a measured ratio for
    :data:`RATIO_AT_LEAST`, which noise moves only where it crosses a power of two."""
    return 2 ** max(0, math.floor(math.log2(ratio))) if math.isfinite(ratio) and ratio >= 1 else 1


def sig2(x) -> str:
    """``x`` at two significant figures: 4.0, 0.50, 12, 1200, 1.2e+04, 3.1e-02, written with
    the student's decimal mark (Vietnamese: 0,50; ``i18n.in_language``, CLDR's rules).

    Never more than two decimals: below 0.1 and from 10,000 on, in exponent form."""
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    r = float(f"{x:.1e}")  # rounds 9.96 to 10, not 9.9
    e = math.floor(math.log10(abs(r)))
    return in_language(f"{r:.{max(0, 1 - e)}f}" if -1 <= e < 4 else f"{r:.1e}")


class _Sig2(float):
    """A float that prints at two significant figures unless a format spec says otherwise."""

    def __format__(self, spec: str) -> str:
        return sig2(self) if not spec else in_language(float(self).__format__(spec))

    __str__ = __repr__ = lambda self: sig2(self)


def _fields(fields: dict) -> dict:
    # a float given to a plain ``{placeholder}`` prints at 2 significant figures, never in full
    return {k: _Sig2(v) if isinstance(v, numbers.Real) and not isinstance(v, numbers.Integral) else v
            for k, v in fields.items()}


# -- fixed cases ---------------------------------------------------------------------
# Templates that say which way a value is off, or by how much.  In a fixed case each one
# becomes "wrong value" (at its index, if it names one) and a hint; a lab registers its
# own such templates with :func:`sized`.
SIZED = {NOT_CLOSE, NOT_CLOSE_NUMBER, NOT_CLOSE_TOO_LARGE, NOT_CLOSE_TOO_SMALL, SCALAR_OFF, SCALAR_NEAR, SCALAR_SIGN,
         RATIO_SYMPTOM, RATIO_AT_LEAST, TOO_LARGE, TOO_SMALL}


def sized(template: str) -> str:
    """Register a lab's own template that tells a direction or a size (an error, a ratio);
    returns it.  It takes ``{what}`` and ``{case}`` like the shared ones."""
    SIZED.add(template)
    return template


@dataclasses.dataclass(frozen=True)
class Feedback:
    """What the test that is running allows its messages to say (set by the plugin)."""

    fixed: bool = False  # inputs the same on every submission: no direction, no size
    sections: tuple[str, ...] = ()  # the question's chapter section titles, for the hint


_FEEDBACK = contextvars.ContextVar("ironlaw_feedback", default=Feedback())


@contextlib.contextmanager
def feedback_context(*, fixed: bool, sections: tuple[str, ...] = ()):
    """The plugin's: one hidden test's rules for its messages, while it runs."""
    token = _FEEDBACK.set(Feedback(fixed=fixed, sections=tuple(sections)))
    try:
        yield
    finally:
        _FEEDBACK.reset(token)


@contextlib.contextmanager
def fixed_case(fixed: bool = True):
    """``with fixed_case():`` around the checks of a case whose inputs do not come from
    the ``rng``/``seed`` fixtures (a chapter's worked example) inside a test that draws
    its other cases: its messages then say no direction, as in a test marked
    ``fixed_case``.  ``fixed_case(False)`` changes nothing (``fixed_case(cfg == XL)``)."""
    token = _FEEDBACK.set(dataclasses.replace(_FEEDBACK.get(), fixed=True)) if fixed else None
    try:
        yield
    finally:
        if token is not None:
            _FEEDBACK.reset(token)


def in_fixed_case() -> bool:
    return _FEEDBACK.get().fixed


def fixed_hint() -> str:
    sections = _FEEDBACK.get().sections
    if not sections:
        return _(FIXED_HINT)
    return _(FIXED_HINT_SECTION).format(pointers=pointers(sections))


def say(template: str, **fields) -> str:
    """``template`` in the student's language, filled in.  In a fixed case a template of
    :data:`SIZED` says only "wrong value" (at its index) and :func:`fixed_hint`."""
    if template in SIZED and in_fixed_case():
        keep = {k: fields[k] for k in ("what", "case", "index") if k in fields}
        fixed = FIXED_WRONG_AT if "index" in fields else FIXED_WRONG
        return _(fixed).format(**keep, hint=fixed_hint())
    return _(template).format(**_fields(fields))


def near_words(larger: bool) -> str:
    return _(SLIGHTLY_LARGE if larger else SLIGHTLY_SMALL)


def direction(actual: float, expected: float) -> str:
    """Which way ``actual`` is off and roughly how far, in words: "too large, about
    2.0× the expected value", "slightly too small (within 5%)", "wrong sign".
    Only for a template of :data:`SIZED`, which a fixed case does not print."""
    if expected == 0 or actual == 0:
        return _(LARGER if actual > expected else SMALLER)
    if (actual > 0) != (expected > 0):
        return _(WRONG_SIGN)
    r = actual / expected
    larger = abs(actual) > abs(expected)
    if abs(r - 1) <= NEAR:
        return near_words(larger)
    return say(LARGER_BY if larger else SMALLER_BY, ratio=r)


def case_suffix(case: str) -> str:
    return say(CASE, case=case) if case else ""


def pointers(titles) -> str:
    """"§3.2 Optimization Algorithms; §4.4 Parameter Updates and Optimizers": the sections
    titled ``titles`` in the chapter's outline (``core/chapter.py``), in the student's language."""
    outline = chapter.load()
    return "; ".join(chapter.pointer(outline.by_title(t), _) for t in titles)


def section_hint(titles) -> str:
    """"Read in the chapter: §5 Identifying Bottlenecks." for a question's section titles."""
    return say(SEE_SECTION, pointers=pointers(titles))


# -- student text ---------------------------------------------------------------
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|(?<!\d)\.\d+(?:[eE][-+]?\d+)?")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _round_token(tok: str) -> str:
    try:
        value = float(tok)
    except ValueError:
        return tok
    if tok.isdigit():  # an integer keeps integer form: 347 -> 350, 12345 -> 12000
        if not math.isfinite(value):  # more digits than a float holds (a student's 400-digit text): its size
            return f"{tok[0]}.{tok[1]}e+{len(tok) - 1}"
        n = int(tok)
        if n < 100:
            return tok
        r = int(float(f"{n:.1e}"))
        return str(r) if r < 10**6 else f"{float(r):.1e}"
    return sig2(value)


def student_text(text, limit: int = TEXT_LIMIT, keep=()) -> str:
    """Text a student's code controls, made safe for a hidden test's feedback.

    At most ``limit`` characters (a longer text ends in "…"), control
    characters removed, and every number rounded to two significant
    figures, so neither an argument nor an expected value can be read back
    at full precision.  Numbers in ``keep`` (the lab's own limits, e.g.
    ``"3072"``) stay as they are.
    """
    s = _CONTROL.sub("", str(text)[: 8 * limit + 64])
    kept = set(keep)
    s = _NUMBER.sub(lambda m: m.group() if m.group() in kept else _round_token(m.group()), s)
    return s if len(s) <= limit else s[: limit - 1] + "…"


# -- one submission's feedback ----------------------------------------------------
def details_once(feedbacks: list[tuple[str, str]]) -> list[str]:
    """Each ``(test name, feedback)``'s feedback, given in the order the student reads
    them, where details that an earlier test showed already (the lines after the first:
    a traceback, what the code printed) become a pointer to that test
    (:data:`SAME_DETAILS`). A file that does not import fails every test that needs it
    with the same traceback: it is read once, not once per test."""
    first_with: dict[tuple[str, ...], str] = {}
    out = []
    for name, feedback in feedbacks:
        message, *rest = feedback.splitlines() or [""]
        details = tuple(line for line in rest if line.strip())
        earlier = first_with.setdefault(details, name) if details else name
        out.append(feedback if earlier == name else say(SAME_DETAILS, message=message, test=earlier))
    return out
