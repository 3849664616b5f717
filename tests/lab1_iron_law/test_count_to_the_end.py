"""Count to the end: the non-matmul work of a layer, and the matmul share (section 3)."""

import pytest

from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_close, assert_keys, assert_scalar

pytestmark = pytest.mark.question("count_to_the_end")

KEYS = ("softmax", "layernorm", "gelu", "residual", "bias", "total")
XL = dict(B=32, S=1024, d=1600, h=25)
XL_CASE = N_("GPT-2 XL layer, B=32, S=1024, d=1600, h=25")


def configs(rng, n=6):
    """GPT-2 XL, GPT-2 small, then random small ones (with uneven head counts)."""
    yield XL
    yield dict(B=4, S=256, d=768, h=12)
    for _trial in range(n):
        h = int(rng.choice([1, 2, 3, 4, 8]))
        yield dict(B=int(rng.integers(1, 9)), S=int(rng.integers(1, 600)), d=h * int(rng.choice([8, 16, 24, 64])), h=h)


def case_of(cfg) -> str:
    return ", ".join(f"{k}={v}" for k, v in cfg.items())


def test_elementwise_flops_match_reference(student, reference, rng, exact_ints):
    for cfg in configs(rng):
        got, want = student.elementwise_flops(**cfg), reference.elementwise_flops(**cfg)
        assert_keys(got, KEYS, what="elementwise_flops", case=case_of(cfg))
        exact_ints(got, what="elementwise_flops", case=case_of(cfg))
        for key in KEYS:
            assert_scalar(got[key], want[key], what=f"elementwise_flops[{key!r}]", case=case_of(cfg), rtol=1e-12)


def test_matmuls_are_over_98_percent(student, reference, rng):
    # a fraction near 1 is off by a tiny factor, so report the absolute error instead
    frac = student.matmul_fraction(**XL)
    assert_close(frac, reference.matmul_fraction(**XL), what="matmul_fraction", case=_(XL_CASE), rtol=1e-9)
    assert frac > 0.98, _("matmul_fraction for GPT-2 XL should be above 0.98")
    for cfg in configs(rng):
        assert_close(student.matmul_fraction(**cfg), reference.matmul_fraction(**cfg),
                     what="matmul_fraction", case=case_of(cfg), rtol=1e-9)
