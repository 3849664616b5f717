"""Lab 3, FP32 / FP16 / BF16: ranges from torch.finfo, gradient underflow in
FP16 and how loss scaling restores it, and updates lost without FP32 masters."""

import math

import numpy as np
import pytest
import torch

from autograder.labkit import messages as M
from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_close, assert_equal, assert_keys, assert_scalar

pytestmark = pytest.mark.question("number_formats")

FORMATS = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
RANGE_KEYS = ["max", "min_normal", "min_subnormal", "eps", "mantissa_bits", "exponent_bits"]
UNDERFLOW_KEYS = ["n_nonzero", "n_underflow", "n_overflow", "underflow_fraction", "underflow_by_parameter"]
BITS = {"float32": (23, 8), "float16": (10, 5), "bfloat16": (7, 8)}  # (mantissa, exponent), IEEE / Brain float

# Symptoms, in the style of autograder.labkit.messages: what the result equals, and what to do instead.
ZEROS_AS_UNDERFLOW = N_("{what}{case}: it equals what counting the gradients that are exactly 0 in FP32 gives; "
                        "an exact zero is not underflow: count only the elements with g != 0 whose FP16 value is 0")
ZEROS_IN_FRACTION = N_("{what}{case}: it equals the parameter's underflowed count over all of its elements, the "
                       "exact zeros included; divide by the elements with g != 0 only")
ZEROS_AS_NONZERO = N_("{what}{case}: it equals the number of all gradient elements, the exact zeros included; "
                      "count only the elements with g != 0")


def test_ranges_match_finfo_and_rounding(student, lab3):
    got = student.format_ranges()
    assert_keys(got, list(FORMATS), what=_("format_ranges result"))
    for name, dt in FORMATS.items():
        r = got[name]
        assert_keys(r, RANGE_KEYS, what=f"format_ranges()[{name!r}]")
        f = torch.finfo(dt)
        for key, want in (("max", f.max), ("min_normal", f.tiny), ("eps", f.eps)):
            assert_scalar(r[key], want, what=f"{name} {key}", case=_("from torch.finfo"), rtol=1e-12)
        # the smallest subnormal is representable, and half of it rounds to 0 (ground truth: torch casts)
        sub = float(r["min_subnormal"])
        ok = torch.tensor(sub, dtype=dt).item() == sub and sub > 0 and torch.tensor(sub / 2, dtype=dt).item() == 0
        assert_equal(ok, True, what=_("{name} min_subnormal (half of it must round to 0 in {name})").format(name=name))
        lab3.assert_exact_int(r["mantissa_bits"], BITS[name][0], what=_("{name} mantissa bits").format(name=name))
        lab3.assert_exact_int(r["exponent_bits"], BITS[name][1], what=_("{name} exponent bits").format(name=name))
    # known values: the chapter's (§6.3 Mixed-precision training: 65,504, 6.1e-5, toward 6e-8, FP32's range for
    # BF16) and the formats' own (eps, which the chapter gives only as "3-4 decimal digits")
    fp16, bf16 = got["float16"], got["bfloat16"]
    for what, val, want in (("float16 max", fp16["max"], 65504), ("float16 min_normal", fp16["min_normal"], 6.10e-5),
                            ("float16 min_subnormal", fp16["min_subnormal"], 5.96e-8),
                            ("float16 eps", fp16["eps"], 9.77e-4), ("bfloat16 eps", bf16["eps"], 7.81e-3),
                            ("bfloat16 max", bf16["max"], 3.39e38),
                            (_("bfloat16 min_normal (same range as float32)"), bf16["min_normal"], got["float32"]["min_normal"])):
        assert_scalar(val, want, what=what, case=_("a known value of the format"), rtol=2e-3)


def _check_underflow(lab3, got, want, case):
    assert_keys(got, UNDERFLOW_KEYS, what=_("fp16_gradient_underflow result"), case=case)
    # counts may differ by a few borderline elements between machines' matmul kernels
    tol = max(3, 0.002 * want["n_nonzero"])
    for k in ("n_nonzero", "n_underflow", "n_overflow"):
        lab3.assert_int_type(got[k], what=k, case=case)
        # a model with many exact zeros (untied embedding rows, dead ReLU units): say what the count includes
        zeros = want["n_zero"]
        for key, template in (("n_nonzero", ZEROS_AS_NONZERO), ("n_underflow", ZEROS_AS_UNDERFLOW)):
            if k == key and zeros > 2 * tol and abs(got[k] - (want[k] + zeros)) <= tol:
                raise AssertionError(M.say(template, what=k, case=M.case_suffix(case)))
        assert_scalar(got[k], want[k], what=k, case=case, atol=tol, rtol=0.0)
    assert_scalar(got["underflow_fraction"], want["underflow_fraction"], what=_("underflow fraction"), case=case,
                  atol=2e-3, rtol=0.0)
    per = got["underflow_by_parameter"]
    assert_keys(per, list(want["underflow_by_parameter"]), what="underflow_by_parameter", case=case)
    for name, frac in want["underflow_by_parameter"].items():
        what = _("underflow fraction of {name}").format(name=name)
        # a parameter with exact zeros (dead ReLU units): say so when the fraction is the one over numel
        under, numel = want["counts_by_parameter"][name]
        over_numel = under / numel
        if abs(frac - over_numel) > 0.02 and isinstance(per[name], (int, float)) and \
                abs(per[name] - over_numel) <= 0.005:
            raise AssertionError(M.say(ZEROS_IN_FRACTION, what=what, case=M.case_suffix(case)))
        assert_scalar(per[name], frac, what=what, case=case, atol=0.02, rtol=0.0)


# a ReLU MLP at B=2: 27% to 46% of its hidden units are dead on the batch (their gradients exactly 0), and at
# init_std 0.02 over five layers a third to a half of every weight's nonzero gradients underflow: each hidden or
# output weight's fraction over the nonzero elements is 0.13 to 0.34 from the one over all its elements.
# d=48: no config in this test draws 48 (vocab 32/50/64, widths 8 to 32, B 8 to 32), so the fixed label holds
# no number the test drew
DEAD_RELU = ({"kind": "mlp", "act": "relu", "n_layers": 5, "d_model": 48, "init_std": 0.02}, 2)


def test_fp16_underflow_matches_real_gradients(student, lab3, rng):
    """Real gradients, and gradients that are exactly 0 in FP32, which are not underflow: an untied GPT's
    embedding rows of tokens absent from the batch (vocab 64 > B·S tokens), a ReLU MLP's units dead on the
    whole batch, an MLP whose weights are all 0 (every count exact there, the fractions 0.0)."""
    configs = [({"kind": "mlp"}, int(rng.integers(8, 33))),
               (lab3.random_mlp(rng, init_std=0.02), int(rng.integers(8, 33))),
               ({"kind": "gpt"}, int(rng.integers(8, 33))),
               (lab3.random_gpt(rng, tie_weights=False, vocab=64), int(rng.integers(1, 3))),
               (lab3.random_mlp(rng, act="relu"), int(rng.integers(1, 5)))]
    cfg, B = DEAD_RELU
    with M.fixed_case():  # issue 27: the same on every submission, so no direction
        case = lab3.describe(cfg, B=B, loss_scale=1)
        got = student.fp16_gradient_underflow(config=cfg, batch_size=B, loss_scale=1.0)
        _check_underflow(lab3, got, lab3.truth.underflow(cfg, B, 1.0), case)
    for cfg, B in configs:
        case = lab3.describe(cfg, B=B, loss_scale=1, drawn=("B",))
        got = student.fp16_gradient_underflow(config=cfg, batch_size=B, loss_scale=1.0)
        _check_underflow(lab3, got, lab3.truth.underflow(cfg, B, 1.0), case)
    # loss_scale defaults to 1
    cfg, B = configs[-1]
    got = student.fp16_gradient_underflow(config=cfg, batch_size=B)
    _check_underflow(lab3, got, lab3.truth.underflow(cfg, B, 1.0),
                     lab3.describe(cfg, B=B, drawn=("B",)) + _(", default loss_scale"))
    # every weight 0: only the output bias gets a gradient; nothing at all once the output layer is frozen
    cfg, B = _all_zero_mlp(lab3, rng)
    for c in (cfg, {**cfg, "frozen": ["out"]}):
        _check_exact(lab3, student, c, B, 1.0, "1")


def _all_zero_mlp(lab3, rng):
    """An MLP with every weight 0. B is not a multiple of the number of classes, so each class's output-bias
    gradient, 1/C − (its share of the batch), is nonzero and far from FP16's limits: every count is exact."""
    n_classes = int(rng.choice([5, 10]))
    B = int(rng.choice([7, 9, 11, 13, 17, 19, 21, 23]))
    return lab3.random_mlp(rng, init_std=0.0, n_classes=n_classes), B


def _check_exact(lab3, student, cfg, B, scale, label):
    case = lab3.describe(cfg, B=B, loss_scale=label, drawn=("B",))  # B from _all_zero_mlp
    got = student.fp16_gradient_underflow(config=cfg, batch_size=B, loss_scale=scale)
    want = lab3.truth.underflow(cfg, B, scale)
    _check_underflow(lab3, got, want, case)
    for k in ("n_nonzero", "n_underflow", "n_overflow"):
        lab3.assert_exact_int(got[k], want[k], what=k, case=case)
    assert_scalar(got["underflow_fraction"], want["underflow_fraction"], what=_("underflow fraction"),
                  case=case, rtol=0.0, atol=0.0)
    for name, frac in want["underflow_by_parameter"].items():
        assert_scalar(got["underflow_by_parameter"][name], frac,
                      what=_("underflow fraction of {name}").format(name=name), case=case, rtol=0.0, atol=0.0)


def test_loss_scaling_restores_gradients(student, lab3, rng):
    cfg = lab3.random_mlp(rng, init_std=0.02, n_layers=4)
    B = 32
    plain = student.fp16_gradient_underflow(config=cfg, batch_size=B, loss_scale=1.0)
    for scale in (2.0**15, 2.0**24):
        case = lab3.describe(cfg, B=B, loss_scale=f"2^{int(math.log2(scale))}")
        got = student.fp16_gradient_underflow(config=cfg, batch_size=B, loss_scale=scale)
        _check_underflow(lab3, got, lab3.truth.underflow(cfg, B, scale), case)
    # the trend: 2^15 brings back (nearly) every flushed gradient, without overflow
    scaled = student.fp16_gradient_underflow(config=cfg, batch_size=B, loss_scale=2.0**15)
    restored = scaled["underflow_fraction"] <= 0.1 * plain["underflow_fraction"] and scaled["n_overflow"] == 0
    assert_equal(restored, True, what=_("loss scale 2^15: underflow fraction should drop tenfold, no overflow"),
                 case=lab3.describe(cfg, B=B))
    # too large a scale overflows: with every weight 0, exactly the output-bias gradients become inf at 2^30
    cfg, B = _all_zero_mlp(lab3, rng)
    _check_exact(lab3, student, cfg, B, 2.0**30, "2^30")


def _half_step_case(rng, n):
    sign = rng.choice([-1.0, 1.0], n)
    w = sign * 2.0 ** rng.integers(-3, 4, n)
    return w, w * 2.0**-11 * rng.uniform(0.55, 0.95, n)  # same sign as w: the update moves away from 0


def test_lost_updates_match_torch(student, lab3, rng):
    def truth(w, u):
        w, u = torch.from_numpy(w), torch.from_numpy(u)
        out = {}
        for name, dt in FORMATS.items():
            a, b = w.to(dt), u.to(dt)
            out[name] = float(((u != 0) & (a + b == a)).sum()) / max(1, int((u != 0).sum()))
        return out

    n = 2000
    cases = {
        "w~N(0, 0.02), lr*g ~ 2.5e-4 * N(0, 1e-2)": (rng.normal(0, 0.02, n), 2.5e-4 * rng.normal(0, 1e-2, n)),
        "w~U(0.5, 2), lr*g ~ N(0, 1e-3)": (rng.uniform(0.5, 2, n), rng.normal(0, 1e-3, n)),
        # the lab's example, not the chapter's: lr = 2.5e-4 (§6.3.2 Mixed-precision benefits) times a gradient of 1e-2, on weights of 1
        _("w=1, lr*g=2.5e-6 (the lab's example)"): (np.ones(64), np.full(64, 2.5e-4 * 1e-2)),
        _("half the updates are 0"): (rng.normal(0, 1, (20, 30)), np.where(rng.random((20, 30)) < 0.5, 0.0, 1e-4)),
        _("every update is 0"): (rng.normal(0, 1, n), np.zeros(n)),
        # nonzero as given, 0 once cast to FP16: they count, and are lost
        _("updates below FP16's smallest subnormal"): (rng.normal(0, 1, n),
                                                       rng.choice([-1, 1], n) * rng.uniform(1e-9, 2e-8, n)),
        # just under half an FP16 step above w: w + u rounds back to w; w - u would not (the step below is half)
        _("w = ±2^k, u just under half an FP16 step"): _half_step_case(rng, n),
    }
    for case, (w, u) in cases.items():
        w, u = w.astype(np.float32), u.astype(np.float32)
        got = student.lost_updates(weights=w, updates=u)
        assert_keys(got, list(FORMATS), what=_("lost_updates result"), case=case)
        want = truth(w, u)
        for name in FORMATS:
            assert_scalar(got[name], want[name], what=_("fraction of updates lost in {name}").format(name=name),
                          case=case, atol=2e-3, rtol=0.0)
    got = student.lost_updates(weights=np.ones(8, np.float32), updates=np.full(8, 2.5e-6, np.float32))
    assert_close([got["float16"], got["float32"]], [1.0, 0.0], what=_("lost fraction [float16, float32]"),
                 case=_("w=1, update 2.5e-6"), atol=0.0)
