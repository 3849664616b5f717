"""Lab 3, GPT-2 XL on a 32 GiB V100: 95.7 GB, 59.9 GB, 33.0 GB against 34.4 GB."""

import pytest

from autograder.core.i18n import _
from autograder.labkit.assertions import assert_equal, assert_keys, assert_scalar

pytestmark = pytest.mark.question("v100")

STEPS = ["fp32_baseline", "mixed_precision", "checkpointed"]
XL = dict(n_params=1_500_000_000, n_layers=48, s=1024, b=4, h=1600, a=25, checkpoint_every=4)
V100 = 32 * 2**30  # 34.4 GB


def _check_shape(got, case):
    assert_keys(got, STEPS + ["fits"], what=_("v100_walkthrough result"), case=case)
    assert_keys(got["fits"], STEPS, what=_("v100_walkthrough result['fits']"), case=case)


def _totals(n_params, n_layers, s, b, h, a, checkpoint_every):
    """The three totals, computed here: 16 bytes/parameter either way, Korthikanti's activations."""
    acts = n_layers * (34 * s * b * h + 5 * a * s * s * b)
    return {"fp32_baseline": 16 * n_params + 2 * acts, "mixed_precision": 16 * n_params + acts,
            "checkpointed": 16 * n_params + acts / checkpoint_every}


def test_walkthrough_worked_numbers(student):
    case = "GPT-2 XL, B=4, S=1024, V100 32 GiB"
    got = student.v100_walkthrough(**XL, capacity_bytes=V100)
    _check_shape(got, case)
    for step, gb in zip(STEPS, (95.7, 59.9, 33.0)):
        assert_scalar(got[step], gb * 1e9, what=_("memory at step {step}").format(step=step), case=case, rtol=1.5e-3)
    for step, fits in zip(STEPS, (False, False, True)):
        assert_equal(got["fits"][step], fits, what=f"fits[{step!r}]", case=case)
    # a bigger card (80 GB): now the mixed-precision step fits too, the FP32 one still does not
    got = student.v100_walkthrough(**XL, capacity_bytes=80e9)
    for step, fits in zip(STEPS, (False, True, True)):
        assert_equal(got["fits"][step], fits, what=f"fits[{step!r}]", case=_("GPT-2 XL on an 80 GB card"))
    # a card exactly as large as a step's total: it fits (total <= capacity); one byte less and it does not.
    # GPT-2 XL's totals are whole numbers of bytes (k = 4 divides the activations), exact as floats.
    want = _totals(**XL)
    for step in ("mixed_precision", "checkpointed"):
        for capacity, fits in ((want[step], True), (want[step] - 1, False)):
            case = (_("a card of exactly the {step} total") if fits
                    else _("a card one byte smaller than the {step} total")).format(step=step)
            got = student.v100_walkthrough(**XL, capacity_bytes=float(capacity))
            _check_shape(got, case)
            assert_equal(got["fits"][step], fits, what=f"fits[{step!r}]", case=case)
    # a toy model whose activations do not divide by k: the checkpointed step keeps the fraction of a byte
    for k in (2, 3, 4):
        toy = dict(n_params=1, n_layers=1, s=1, b=1, h=1, a=1, checkpoint_every=k)
        case = _("toy model: 1 parameter, s=b=h=a=1, checkpoint every {k}").format(k=k)
        got = student.v100_walkthrough(**toy, capacity_bytes=1e9)
        _check_shape(got, case)
        for step, total in _totals(**toy).items():
            assert_scalar(got[step], total, what=_("memory at step {step}").format(step=step), case=case, rtol=1e-12)


def test_walkthrough_random_models_match_reference(student, reference, rng):
    for trial in range(1, 5):
        a = int(rng.choice([8, 12, 16, 25, 32]))
        kw = dict(n_params=int(rng.integers(10**8, 2 * 10**10)), n_layers=int(rng.integers(6, 97)), s=int(rng.choice([512, 1024, 2048])),
                  b=int(rng.integers(1, 17)), h=a * int(rng.choice([64, 128])), a=a,
                  checkpoint_every=int(rng.integers(1, 9)), capacity_bytes=float(rng.uniform(1e10, 2e11)))
        # named by number, never by a drawn size (docs/feedback.md)
        case = _("random model {trial} of 4").format(trial=trial)
        got, want = student.v100_walkthrough(**kw), reference.v100_walkthrough(**kw)
        _check_shape(got, case)
        for step in STEPS:
            assert_scalar(got[step], want[step], what=_("memory at step {step}").format(step=step), case=case,
                          rtol=1e-9)
            assert_equal(got["fits"][step], want["fits"][step], what=f"fits[{step!r}]", case=case)
