"""Forward FLOPs of one GPT-2 layer, matmul by matmul (§3.1.2 Matrix operations).

Ground truth from torch's own counter is in test_flop_counter.py.
"""

import pytest

from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_fields, assert_keys, assert_scalar
from autograder.labkit.messages import fixed_case

pytestmark = pytest.mark.question("forward_flops")

KEYS = ("qkv", "scores", "attn_v", "out_proj", "mlp", "total")
XL = dict(B=32, S=1024, d=1600, h=25)
XL_CASE = N_("GPT-2 XL layer, B=32, S=1024, d=1600, h=25")
# docs/chapter.md, Lab 1: the chapter's numbers, in GFLOP
CHAPTER_GFLOP = {"qkv": 503.3, "scores": 107.4, "attn_v": 107.4, "out_proj": 167.8, "mlp": 1342.2, "total": 2228.0}


def random_config(rng) -> dict:
    h = int(rng.choice([1, 2, 3, 4, 8]))
    return dict(B=int(rng.integers(1, 9)), S=int(rng.integers(1, 600)), d=h * int(rng.choice([8, 16, 24, 64])), h=h)


EMPTY = {(0, 5, 7): N_("an empty product, m = 0"), (3, 0, 4): N_("an empty product, k = 0"),
         (6, 2, 0): N_("an empty product, n = 0")}


def test_matmul_flops_is_two_per_multiply_accumulate(student, rng, exact_ints):
    shapes = [tuple(int(v) for v in rng.integers(1, 700, size=3)) for _trial in range(6)]
    cases = [(shape, _("random product {i} of 6").format(i=i)) for i, shape in enumerate(shapes, start=1)]
    cases += [(shape, _(label)) for shape, label in EMPTY.items()]  # an empty product costs nothing
    for (m, k, n), case in cases:
        with fixed_case((m, k, n) in EMPTY):  # the same on every submission: no direction
            got = student.matmul_flops(m=m, k=k, n=n)
            exact_ints(got, what="matmul_flops", case=case)
            assert_scalar(got, 2 * m * k * n, what="matmul_flops", case=case, rtol=1e-12)


def test_gpt2_xl_layer_reproduces_chapter(student, reference, exact_ints):
    got = student.layer_matmul_flops(**XL)
    assert_keys(got, KEYS, what="layer_matmul_flops", case=_(XL_CASE))
    exact_ints(got, what="layer_matmul_flops", case=_(XL_CASE))
    for key, gflop in CHAPTER_GFLOP.items():
        assert_scalar(got[key] / 1e9, gflop, what=_("layer_matmul_flops[{key!r}] in GFLOP").format(key=key),
                      case=_(XL_CASE), rtol=1e-3)
    assert_fields(got, reference.layer_matmul_flops(**XL), keys=KEYS, what="layer_matmul_flops", case=_(XL_CASE),
                  rtol=1e-12)


def test_random_configs_match_reference(student, reference, rng, exact_ints):
    for trial in range(1, 9):
        cfg = random_config(rng)
        case = _("random config {trial} of 8").format(trial=trial)  # never its drawn B, S, d, h
        got = student.layer_matmul_flops(**cfg)
        assert_keys(got, KEYS, what="layer_matmul_flops", case=case)
        exact_ints(got, what="layer_matmul_flops", case=case)
        assert_fields(got, reference.layer_matmul_flops(**cfg), keys=KEYS, what="layer_matmul_flops", case=case,
                      rtol=1e-12)
