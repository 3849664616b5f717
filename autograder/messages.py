"""Every message a student reads from a test, as a template.

Tests import these so the wording is tested too; keeping them in one place
is what lets issue #9 route them through a translation catalog.  Templates
never take an expected value: only shapes, errors, ratios and cases.
"""

WRONG_TYPE = "{what}{case}: expected {expected_type}, got {got_type}"
WRONG_SHAPE = "{what}{case}: shape {got}, expected shape {expected}"
NOT_FINITE = "{what}{case}: contains {count} NaN or inf value(s), first at index {index}"
NOT_CLOSE = "{what}{case}: max abs error {err:.3g} at index {index} (rtol={rtol:g}, atol={atol:g})"
SCALAR_OFF = "{what}{case}: off by a factor of {ratio} (rtol={rtol:g})"
SCALAR_SIGN = "{what}{case}: wrong sign or zero where a nonzero value is expected"
RATIO_SYMPTOM = "{what}{case}: it is {ratio:.2f}× {reference_name}"
MISSING_KEYS = "{what}{case}: missing keys {keys}"
EXTRA_KEYS = "{what}{case}: unexpected keys {keys}"
NOT_EQUAL = "{what}{case}: wrong value"
SEE_SECTION = "See chapter section {section} ({title})."
BARE_ASSERT = "a check in {test} failed"
SNAPSHOT_MISSING = "snapshot {name} is missing; an instructor must run `autograder snapshots {lab}`"

# Chapter sections (LABS.md): hints point students to the one that explains.
SECTIONS = {
    "1": "Purpose",
    "2": "Training systems fundamentals and the iron law",
    "3": "Mathematical foundations",
    "4": "Training pipeline architecture",
    "5": "Identifying bottlenecks",
    "6": "Optimizing the training pipeline",
    "7": "Scaling training systems",
    "8": "Fallacies and pitfalls",
    "9": "Summary",
}


def case_suffix(case: str) -> str:
    return f" (case: {case})" if case else ""
