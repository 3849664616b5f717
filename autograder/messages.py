"""Every message a student reads from a test, as a template.

Tests import these so the wording is tested too.  Each is marked for the
catalog (``N_``) and translated where it is used: :func:`say`.  Templates
never take an expected value: only shapes, errors, ratios and cases.
"""

from autograder.i18n import N_, _

WRONG_TYPE = N_("{what}{case}: expected {expected_type}, got {got_type}")
WRONG_SHAPE = N_("{what}{case}: shape {got}, expected shape {expected}")
NOT_FINITE = N_("{what}{case}: contains {count} NaN or inf value(s), first at index {index}")
NOT_CLOSE = N_("{what}{case}: max abs error {err:.3g} at index {index} (rtol={rtol:g}, atol={atol:g})")
SCALAR_OFF = N_("{what}{case}: off by a factor of {ratio} (rtol={rtol:g})")
SCALAR_SIGN = N_("{what}{case}: wrong sign or zero where a nonzero value is expected")
RATIO_SYMPTOM = N_("{what}{case}: it is {ratio:.2f}× {reference_name}")
MISSING_KEYS = N_("{what}{case}: missing keys {keys}")
EXTRA_KEYS = N_("{what}{case}: unexpected keys {keys}")
NOT_EQUAL = N_("{what}{case}: wrong value")
CASE = N_(" (case: {case})")
SEE_SECTION = N_("See chapter section {section} ({title}).")
BARE_ASSERT = N_("a check in {test} failed")
SNAPSHOT_MISSING = N_("snapshot {name} is missing; an instructor must run `autograder snapshots {lab}`")
NUMBERS_OR_ARRAY = N_("numbers or an array")
SINGLE_NUMBER = N_("() (a single number)")

# Chapter sections (LABS.md): hints point students to the one that explains.
SECTIONS = {
    "1": N_("Purpose"),
    "2": N_("Training systems fundamentals and the iron law"),
    "3": N_("Mathematical foundations"),
    "4": N_("Training pipeline architecture"),
    "5": N_("Identifying bottlenecks"),
    "6": N_("Optimizing the training pipeline"),
    "7": N_("Scaling training systems"),
    "8": N_("Fallacies and pitfalls"),
    "9": N_("Summary"),
}


def say(template: str, **fields) -> str:
    """``template`` in the student's language, filled in."""
    return _(template).format(**fields)


def case_suffix(case: str) -> str:
    return say(CASE, case=case) if case else ""


def section_hint(section: str) -> str:
    return say(SEE_SECTION, section=section, title=_(SECTIONS[section]) if section in SECTIONS else "")
