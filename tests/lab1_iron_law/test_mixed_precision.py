"""Mixed precision and the iron law (§6.3.2 Mixed-precision benefits, §6.3.3 Mixed-precision
hardware support, §8 Fallacies and Pitfalls).

Ground truth: the closed forms (Amdahl's law, its inverse, the iron law) and the
chapter's numbers: the A100's FP16/BF16 peak is 16x its FP32 peak (312 against
19.5 TFLOP/s), an H100's FP8 about 2x its FP16 (1,979 against 989), a V100's
FP16 Tensor Cores about 8x its FP32 (125 against 15.7), and the V100's GPT-2
throughput rises from about 90 to 220 samples/s (2.4x): far below the peak
ratio, which is what Amdahl's law explains.  The fraction the 2.4x implies
(0.676) is the lab's derivation, not a number the chapter prints.

Fixed cases say no direction in their messages; drawn cases are named by number.
"""

import pytest

from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_fields, assert_keys, assert_scalar
from autograder.labkit.messages import fixed_case

pytestmark = pytest.mark.question("mixed_precision")

RUN_KEYS = ("fp32_days", "mixed_days", "speedup", "mixed_efficiency", "fp32_cost", "mixed_cost")
A100_RATIO = 312 / 19.5  # FP16/BF16 Tensor Cores over FP32 CUDA cores: 16
H100_FP8_RATIO = 1979 / 989  # FP8 over FP16/BF16 Tensor Cores: about 2
V100_RATIO = 125 / 15.7  # FP16 Tensor Cores over FP32: about 8
V100_SPEEDUP = 220 / 90  # GPT-2 samples/s, mixed precision over FP32: about 2.4
V100_CASE = N_("the chapter's V100: 90 and 220 samples/s, 125 and 15.7 TFLOP/s")
DAY_S, HOUR_S = 86400.0, 3600.0


def amdahl(f: float, r: float) -> float:
    return 1.0 / ((1.0 - f) + f / r)


def test_amdahl_speedup(student, rng):
    for f, r, label in ((0.0, A100_RATIO, N_("nothing on Tensor Cores, A100")),
                        (1.0, A100_RATIO, N_("the whole step on Tensor Cores, A100 (the 16x peak ratio)")),
                        (1.0, H100_FP8_RATIO, N_("the whole step on Tensor Cores, H100 FP8 against FP16")),
                        (0.5, A100_RATIO, N_("half the FP32 step on Tensor Cores, A100"))):
        with fixed_case():
            assert_scalar(student.mixed_precision_speedup(tensor_core_fraction=f, peak_ratio=r), amdahl(f, r),
                          what="mixed_precision_speedup", case=_(label), rtol=1e-12)
    for i in range(1, 7):
        f, r = float(rng.uniform(0.0, 1.0)), float(rng.uniform(1.5, 32.0))
        assert_scalar(student.mixed_precision_speedup(tensor_core_fraction=f, peak_ratio=r), amdahl(f, r),
                      what="mixed_precision_speedup", case=_("random step {i} of 6").format(i=i), rtol=1e-12)


def test_v100_speedup_implies_a_fraction(student, reference, rng):
    f = student.implied_tensor_core_fraction(speedup=V100_SPEEDUP, peak_ratio=V100_RATIO)
    with fixed_case():
        # the lab's derivation from the chapter's numbers: (1 - 90/220) / (1 - 15.7/125) = 0.676
        assert_scalar(f, 0.676, what="implied_tensor_core_fraction", case=_(V100_CASE), rtol=1e-3)
        assert_scalar(f, (1 - 1 / V100_SPEEDUP) / (1 - 1 / V100_RATIO), what="implied_tensor_core_fraction",
                      case=_(V100_CASE), rtol=1e-12)
        # and back: Amdahl at that fraction gives the chapter's 2.4x
        assert_scalar(student.mixed_precision_speedup(tensor_core_fraction=f, peak_ratio=V100_RATIO), V100_SPEEDUP,
                      what=_("mixed_precision_speedup at the implied fraction"), case=_(V100_CASE), rtol=1e-9)
    for i in range(1, 6):
        f, r = float(rng.uniform(0.05, 0.99)), float(rng.uniform(1.5, 32.0))
        case = _("random speed-up {i} of 5").format(i=i)
        got = student.implied_tensor_core_fraction(speedup=amdahl(f, r), peak_ratio=r)
        assert_scalar(got, f, what="implied_tensor_core_fraction", case=case, rtol=1e-9)
        assert_scalar(got, reference.implied_tensor_core_fraction(speedup=amdahl(f, r), peak_ratio=r),
                      what="implied_tensor_core_fraction", case=case, rtol=1e-9)


def check_run(got, kw: dict, *, case: str):
    """Every field against the iron law and Amdahl, written out here."""
    assert_keys(got, RUN_KEYS, what="mixed_precision_run", case=case)
    fp32_s = kw["flops"] / (kw["n_gpus"] * kw["fp32_peak_flop_per_s"] * kw["fp32_efficiency"])
    s = amdahl(kw["tensor_core_fraction"], kw["peak_ratio"])
    want = {"fp32_days": fp32_s / DAY_S, "mixed_days": fp32_s / s / DAY_S, "speedup": s,
            "mixed_efficiency": kw["fp32_efficiency"] * s / kw["peak_ratio"],
            "fp32_cost": kw["n_gpus"] * fp32_s / HOUR_S * kw["usd_per_gpu_hour"],
            "mixed_cost": kw["n_gpus"] * fp32_s / s / HOUR_S * kw["usd_per_gpu_hour"]}
    assert_fields(got, want, keys=RUN_KEYS, what="mixed_precision_run", case=case, rtol=1e-9)
    # the iron law with the new peak and the new efficiency gives the mixed time
    mixed_s = kw["flops"] / (kw["n_gpus"] * kw["peak_ratio"] * kw["fp32_peak_flop_per_s"] * got["mixed_efficiency"])
    assert_scalar(mixed_s / DAY_S, got["mixed_days"], what=_("the iron law at mixed_efficiency, in days"), case=case,
                  rtol=1e-9)


def test_run_by_the_iron_law(student, reference, rng):
    # the chapter's 32 V100s, two weeks and $50,000 in FP32 (§6.3.2 Mixed-precision benefits); the FP32
    # efficiency (0.5) is the lab's
    f = reference.implied_tensor_core_fraction(speedup=V100_SPEEDUP, peak_ratio=V100_RATIO)
    v100 = dict(flops=32 * 15.7e12 * 0.5 * 14 * DAY_S, n_gpus=32, fp32_peak_flop_per_s=15.7e12, fp32_efficiency=0.5,
                peak_ratio=V100_RATIO, tensor_core_fraction=f, usd_per_gpu_hour=50_000 / (32 * 14 * 24))
    case = _("the chapter's 32 V100s, two weeks and $50,000 in FP32, at the implied fraction")
    got = student.mixed_precision_run(**v100)
    with fixed_case():
        check_run(got, v100, case=case)
        assert_scalar(got["fp32_days"], 14.0, what="mixed_precision_run['fp32_days']", case=case, rtol=1e-9)
        assert_scalar(got["fp32_cost"], 50_000.0, what="mixed_precision_run['fp32_cost']", case=case, rtol=1e-9)
        assert_scalar(got["speedup"], V100_SPEEDUP, what="mixed_precision_run['speedup']", case=case, rtol=1e-9)
    for i in range(1, 5):
        kw = dict(flops=float(10 ** rng.uniform(20, 24)), n_gpus=int(rng.choice([1, 8, 32, 256, 1024])),
                  fp32_peak_flop_per_s=float(rng.choice([15.7e12, 19.5e12, 67e12])),
                  fp32_efficiency=float(rng.uniform(0.2, 0.7)), peak_ratio=float(rng.uniform(1.5, 16.0)),
                  tensor_core_fraction=float(rng.uniform(0.1, 0.95)), usd_per_gpu_hour=float(rng.uniform(1.0, 5.0)))
        case = _("random run {i} of 4").format(i=i)
        got = student.mixed_precision_run(**kw)
        check_run(got, kw, case=case)
        assert_fields(got, reference.mixed_precision_run(**kw), keys=RUN_KEYS, what="mixed_precision_run", case=case)
