"""Lab 3, bytes per parameter of three Adam schemes and their totals at 7B, 20B and 175B.

112 GB, 320 GB and 2.8 TB are the lab's numbers at 16 B/param (mixed precision
with an FP32 master copy).  The chapter's own 7B and 20B totals (84 GB, 200 GB)
assume other recipes, 12 and 10 B/param: test_recipes.py grades those."""

import pytest
import torch

from autograder.core.i18n import _
from autograder.labkit.assertions import assert_keys
from autograder.labkit.messages import fixed_case

pytestmark = pytest.mark.question("bytes_per_param")

PARTS = ["weights", "gradients", "master", "adam_m", "adam_v"]


def _size(dtype) -> int:
    return torch.empty(0, dtype=dtype).element_size()


def test_breakdown_matches_dtype_sizes(student, lab3):
    fp16, fp32 = _size(torch.float16), _size(torch.float32)  # ground truth from torch
    expected = {
        "mixed_adam": dict(weights=fp16, gradients=fp16, master=fp32, adam_m=fp32, adam_v=fp32),
        "fp32_adam": dict(weights=fp32, gradients=fp32, master=0, adam_m=fp32, adam_v=fp32),
        "mixed_adam_fp32_grads": dict(weights=fp16, gradients=fp32, master=fp32, adam_m=fp32, adam_v=fp32),
    }
    for scheme, parts in expected.items():
        case = f"scheme={scheme}"
        got = student.bytes_per_parameter(scheme=scheme)
        assert_keys(got, PARTS + ["total"], what=_("bytes_per_parameter result"), case=case)
        for k in PARTS:
            lab3.assert_exact_int(got[k], parts[k], what=_("{part} bytes per parameter").format(part=k), case=case)
        lab3.assert_exact_int(got["total"], sum(parts.values()), what=_("total bytes per parameter"), case=case)


def test_model_state_worked_numbers_and_random(student, reference, lab3, rng):
    # the lab's numbers at 16 bytes/parameter (not the chapter's 84 GB and 200 GB: test_recipes.py)
    for n, total in ((7_000_000_000, 112 * 10**9), (20_000_000_000, 320 * 10**9), (175_000_000_000, 2_800 * 10**9)):
        with fixed_case():  # issue 27: the same on every submission, so no direction
            lab3.assert_exact_int(student.model_state_bytes(n_params=n, scheme="mixed_adam"), total,
                                  what=_("model state bytes (mixed-precision Adam)"), case=f"P={n / 1e9:g}B")
    for trial in range(1, 7):
        n = int(rng.integers(1, 10**12))
        scheme = str(rng.choice(["mixed_adam", "fp32_adam", "mixed_adam_fp32_grads"]))
        # named by number, never by the drawn count or scheme (docs/feedback.md)
        case = _("a random parameter count and scheme, case {trial} of 6").format(trial=trial)
        lab3.assert_exact_int(student.model_state_bytes(n_params=n, scheme=scheme),
                          reference.model_state_bytes(n_params=n, scheme=scheme),
                          what=_("model state bytes"), case=case)
