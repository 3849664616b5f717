"""Forward plus backward: each matmul costs 2x backward, a step 3x forward (§1 Training Systems
Fundamentals, §3.1 Neural network computation).

Ground truth from torch's own counter is in test_flop_counter.py.
"""

import pytest

from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_fields, assert_keys, assert_scalar

pytestmark = pytest.mark.question("forward_backward")

LAYER_KEYS = ("qkv", "scores", "attn_v", "out_proj", "mlp", "total")
STEP_KEYS = ("forward", "backward", "total", "attention_quadratic")
XL = dict(B=32, S=1024, d=1600, h=25)
XL_CASE = N_("GPT-2 XL, B=32, S=1024, d=1600, h=25, 48 layers")
XL_LAYER_CASE = N_("GPT-2 XL layer, B=32, S=1024, d=1600, h=25")


def random_config(rng) -> dict:
    h = int(rng.choice([1, 2, 3, 4, 8]))
    return dict(B=int(rng.integers(1, 9)), S=int(rng.integers(1, 600)), d=h * int(rng.choice([8, 16, 24, 64])), h=h)


def test_gpt2_xl_step_reproduces_chapter(student, reference, exact_ints):
    step = student.step_flops(**XL, n_layers=48)
    assert_keys(step, STEP_KEYS, what="step_flops", case=_(XL_CASE))
    exact_ints(step, what="step_flops", case=_(XL_CASE))
    # docs/chapter.md, Lab 1: 48 x 3 x 2228 GFLOP = 320.8 TFLOP; its attention S^2 part is 30.9 TFLOP
    for key, tflop in {"forward": 106.9, "backward": 213.9, "total": 320.8, "attention_quadratic": 30.9}.items():
        assert_scalar(step[key] / 1e12, tflop, what=_("step_flops[{key!r}] in TFLOP").format(key=key),
                      case=_(XL_CASE), rtol=1e-3)
    assert_scalar(step["total"], 3 * step["forward"], what="step_flops['total'] / 3", case=_(XL_CASE), rtol=1e-12)
    assert_fields(step, reference.step_flops(**XL, n_layers=48), keys=STEP_KEYS, what="step_flops", case=_(XL_CASE),
                  rtol=1e-12)
    layer = student.layer_backward_flops(**XL)
    assert_keys(layer, LAYER_KEYS, what="layer_backward_flops", case=_(XL_LAYER_CASE))
    exact_ints(layer, what="layer_backward_flops", case=_(XL_LAYER_CASE))
    assert_fields(layer, reference.layer_backward_flops(**XL), keys=LAYER_KEYS, what="layer_backward_flops",
                  case=_(XL_LAYER_CASE), rtol=1e-12)


def test_random_configs_match_reference(student, reference, rng, exact_ints):
    for trial in range(1, 9):
        cfg = random_config(rng)
        n_layers = int(rng.integers(1, 49))
        layer, step = student.layer_backward_flops(**cfg), student.step_flops(**cfg, n_layers=n_layers)
        case = _("random config {trial} of 8").format(trial=trial)  # never its drawn B, S, d, h
        step_case = _("random config {trial} of 8, random n_layers").format(trial=trial)
        assert_keys(layer, LAYER_KEYS, what="layer_backward_flops", case=case)
        exact_ints(layer, what="layer_backward_flops", case=case)
        assert_fields(layer, reference.layer_backward_flops(**cfg), keys=LAYER_KEYS, what="layer_backward_flops",
                      case=case, rtol=1e-12)
        assert_keys(step, STEP_KEYS, what="step_flops", case=step_case)
        exact_ints(step, what="step_flops", case=step_case)
        assert_fields(step, reference.step_flops(**cfg, n_layers=n_layers), keys=STEP_KEYS, what="step_flops",
                      case=step_case, rtol=1e-12)
