"""Lab 3, FP32 / FP16 / BF16: ranges from torch.finfo, gradient underflow in
FP16 and how loss scaling restores it, and updates lost without FP32 masters."""

import math

import numpy as np
import pytest
import torch

from autograder.i18n import _
from autograder.testing import assert_close, assert_equal, assert_keys, assert_scalar

pytestmark = pytest.mark.question("number_formats")

FORMATS = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
RANGE_KEYS = ["max", "min_normal", "min_subnormal", "eps", "mantissa_bits", "exponent_bits"]
UNDERFLOW_KEYS = ["n_nonzero", "n_underflow", "n_overflow", "underflow_fraction", "underflow_by_parameter"]
BITS = {"float32": (23, 8), "float16": (10, 5), "bfloat16": (7, 8)}  # (mantissa, exponent), IEEE / Brain float


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
    # the chapter's numbers
    fp16, bf16 = got["float16"], got["bfloat16"]
    for what, val, want in (("float16 max", fp16["max"], 65504), ("float16 min_normal", fp16["min_normal"], 6.10e-5),
                            ("float16 min_subnormal", fp16["min_subnormal"], 5.96e-8),
                            ("float16 eps", fp16["eps"], 9.77e-4), ("bfloat16 eps", bf16["eps"], 7.81e-3),
                            ("bfloat16 max", bf16["max"], 3.39e38),
                            (_("bfloat16 min_normal (same range as float32)"), bf16["min_normal"], got["float32"]["min_normal"])):
        assert_scalar(val, want, what=what, case=_("chapter value"), rtol=2e-3)


def _check_underflow(lab3, got, want, case):
    assert_keys(got, UNDERFLOW_KEYS, what=_("fp16_gradient_underflow result"), case=case)
    # counts may differ by a few borderline elements between machines' matmul kernels
    for k in ("n_nonzero", "n_underflow", "n_overflow"):
        lab3.assert_int_type(got[k], what=k, case=case)
        tol = max(3, 0.002 * want["n_nonzero"])
        assert_scalar(got[k], want[k], what=k, case=case, atol=tol, rtol=0.0)
    assert_scalar(got["underflow_fraction"], want["underflow_fraction"], what=_("underflow fraction"), case=case,
                  atol=2e-3, rtol=0.0)
    per = got["underflow_by_parameter"]
    assert_keys(per, list(want["underflow_by_parameter"]), what="underflow_by_parameter", case=case)
    for name, frac in want["underflow_by_parameter"].items():
        assert_scalar(per[name], frac, what=_("underflow fraction of {name}").format(name=name), case=case,
                      atol=0.02, rtol=0.0)


def test_fp16_underflow_matches_real_gradients(student, lab3, rng):
    configs = [{"kind": "mlp"}, lab3.random_mlp(rng, init_std=0.02), {"kind": "gpt"}]
    for cfg in configs:
        B = int(rng.integers(8, 33))
        case = lab3.describe(cfg, B=B, loss_scale=1)
        got = student.fp16_gradient_underflow(config=cfg, batch_size=B, loss_scale=1.0)
        _check_underflow(lab3, got, lab3.truth.underflow(cfg, B, 1.0), case)


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
        _("w=1, lr*g=2.5e-6 (chapter)"): (np.ones(64), np.full(64, 2.5e-4 * 1e-2)),
        _("half the updates are 0"): (rng.normal(0, 1, (20, 30)), np.where(rng.random((20, 30)) < 0.5, 0.0, 1e-4)),
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
