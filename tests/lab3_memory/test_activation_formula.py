"""Lab 3, activations per transformer layer: s·b·h·(34 + 5·a·s/h)."""

import pytest
import torch

from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_keys, assert_scalar
from autograder.labkit.messages import fixed_case

pytestmark = pytest.mark.question("activation_formula")

XL = dict(s=1024, b=8, h=1600, a=25)  # GPT-2 XL at micro-batch 8
# drawn cases, named by number and by what was drawn, never by a drawn value (docs/feedback.md)
RANDOM_SBA = N_("random s, b and a, case {trial} of 4")
RANDOM_LAYERS = N_("random s, b, h, a, n_layers and recompute, case {trial} of 6")
# exactly 108,960,000 bytes per layer, where the float form s·b·h·(34 + 5·a·s/h) gives 108959999.99999999:
# int() of it truncates to one byte short (the docstring: compute in integers, so it is exact)
NEAR_INTEGER = dict(s=1000, b=1, h=1440, a=12)


def test_attention_score_bytes_match_real_tensors(student, lab3, rng):
    for trial in range(1, 5):
        s, b, a = int(rng.integers(2, 65)), int(rng.integers(1, 9)), int(rng.integers(1, 17))
        case = _(RANDOM_SBA).format(trial=trial)
        got = student.attention_score_bytes(s=s, b=b, a=a)
        assert_keys(got, ["scores", "softmax", "dropout_mask"], what=_("attention_score_bytes result"), case=case)
        fp16 = torch.empty(b, a, s, s, dtype=torch.float16)   # QKᵀ scores and softmax output
        mask = torch.empty(b, a, s, s, dtype=torch.uint8)     # dropout mask, 1 byte
        lab3.assert_exact_int(got["scores"], fp16.nbytes, what=_("QKᵀ score bytes"), case=case)
        lab3.assert_exact_int(got["softmax"], fp16.nbytes, what=_("softmax output bytes"), case=case)
        lab3.assert_exact_int(got["dropout_mask"], mask.nbytes, what=_("dropout mask bytes"), case=case)


def test_gpt2_xl_table_and_recomputation(student, lab3):
    s, b, h, a = XL["s"], XL["b"], XL["h"], XL["a"]
    per_layer = student.activation_bytes(**XL, n_layers=1, recompute="none")
    lab3.assert_exact_int(per_layer, 34 * s * b * h + 5 * a * s * s * b, what=_("activation bytes per layer"),
                      case="GPT-2 XL, b=8")
    assert_scalar(per_layer, 1.494e9, what=_("activation bytes per layer"), case="GPT-2 XL, b=8", rtol=1e-3)
    total = student.activation_bytes(**XL, n_layers=48, recompute="none")
    assert_scalar(total, 71.7e9, what=_("activation bytes for 48 layers"), case="GPT-2 XL, b=8", rtol=1e-3)
    lab3.assert_exact_int(student.activation_bytes(**XL, n_layers=48, recompute="selective"), 48 * 34 * s * b * h,
                      what=_("activation bytes with selective recomputation"), case=_("GPT-2 XL, b=8, 48 layers"))
    lab3.assert_exact_int(student.activation_bytes(**XL, n_layers=48, recompute="full"), 48 * 2 * s * b * h,
                      what=_("activation bytes with full recomputation"), case=_("GPT-2 XL, b=8, 48 layers"))


def test_random_shapes_match_reference(student, reference, lab3, rng):
    s, b, h, a = NEAR_INTEGER["s"], NEAR_INTEGER["b"], NEAR_INTEGER["h"], NEAR_INTEGER["a"]
    with fixed_case():  # issue 27: the same on every submission, so no direction
        for n_layers in (1, 3):
            lab3.assert_exact_int(student.activation_bytes(**NEAR_INTEGER, n_layers=n_layers, recompute="none"),
                                  n_layers * (34 * s * b * h + 5 * a * s * s * b), what=_("activation bytes"),
                                  case=f"s={s}, b={b}, h={h}, a={a}, n_layers={n_layers}")
    for trial in range(1, 7):
        a = int(rng.integers(1, 33))
        kw = dict(s=int(rng.integers(16, 4097)), b=int(rng.integers(1, 33)), h=a * int(rng.integers(8, 129)), a=a,
                  n_layers=int(rng.integers(1, 97)), recompute=str(rng.choice(["none", "selective", "full"])))
        case = _(RANDOM_LAYERS).format(trial=trial)
        lab3.assert_exact_int(student.activation_bytes(**kw), reference.activation_bytes(**kw),
                          what=_("activation bytes"), case=case)
    # the defaults: one layer, no recompute
    a = int(rng.integers(1, 33))
    s, b, h = int(rng.integers(16, 4097)), int(rng.integers(1, 33)), a * int(rng.integers(8, 129))
    lab3.assert_exact_int(student.activation_bytes(s=s, b=b, h=h, a=a), 34 * s * b * h + 5 * a * s * s * b,
                          what=_("activation bytes with the defaults (n_layers=1, recompute='none')"),
                          case=_("random s, b, h and a"))
