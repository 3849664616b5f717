"""Lab 3, bytes per parameter built from a recipe (which copies, in which dtype).

The chapter's totals each assume a recipe of their own: GPT-2 1.5B at 24 GB
in FP32 (4 + 4 + 8) and in mixed precision with FP32 master weights
(2 + 2 + 4 + 8), both 16 B/param (§3.2.3 Optimization algorithm system
implications); 7B at 84 GB, FP16 weights and gradients with FP32 Adam
moments and no master copy, 12 B/param (§1 Training Systems Fundamentals,
§4.3.2 Memory management); 20B at 200 GB, FP16 weights and FP32 Adam state
with no gradients counted, 10 B/param (§8 Fallacies and Pitfalls).  The
ground truth here is torch's element sizes and the chapter's own totals,
never the reference.
"""

import pytest
import torch

from autograder.core.i18n import N_, _
from autograder.labkit import messages as M
from autograder.labkit.assertions import assert_keys, assert_scalar

pytestmark = pytest.mark.question("recipes")

PARTS = ["weights", "gradients", "master", "optimizer"]
KEYS = PARTS + ["per_param", "total_bytes", "total_gb"]
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def recipe(w, g, m, n, dt) -> dict:
    """Working weights, gradients, master copy (dtype names or None), optimizer state tensors and their dtype."""
    return dict(weights=w, gradients=g, master=m, optimizer_states=n, optimizer_dtype=dt)


# the chapter's recipes, by what each keeps (labels are fixed text: the same for everyone)
FP32_ADAM = recipe("float32", "float32", None, 2, "float32")
MIXED_MASTER = recipe("float16", "float16", "float32", 2, "float32")
CHAPTER_7B = recipe("float16", "float16", None, 2, "float32")
WEIGHTS_AND_OPTIMIZER = recipe("float16", None, None, 2, "float32")
RECIPES = {
    N_("FP32 Adam"): (FP32_ADAM, 16),
    N_("mixed-precision Adam with an FP32 master copy"): (MIXED_MASTER, 16),
    N_("FP16 weights and gradients, FP32 Adam moments, no master copy"): (CHAPTER_7B, 12),
    N_("FP16 weights and FP32 Adam moments only"): (WEIGHTS_AND_OPTIMIZER, 10),
}
# (recipe label, parameters, the chapter's total in decimal GB)
CHAPTER_TOTALS = [
    (N_("FP32 Adam"), 1_500_000_000, 24),  # GPT-2, §3.2.3 Optimization algorithm system implications
    (N_("mixed-precision Adam with an FP32 master copy"), 1_500_000_000, 24),  # GPT-2, §6.3.2 Mixed-precision benefits
    (N_("FP16 weights and gradients, FP32 Adam moments, no master copy"), 7_000_000_000, 84),  # §4.3.2 Memory management
    (N_("FP16 weights and FP32 Adam moments only"), 20_000_000_000, 200),  # §8 Fallacies and Pitfalls
]


def _size(dtype) -> int:
    return 0 if dtype is None else torch.empty(0, dtype=DTYPES[dtype]).element_size()


def truth(r: dict) -> dict:
    """Bytes per parameter of each part, from torch's element sizes."""
    return {"weights": _size(r["weights"]), "gradients": _size(r["gradients"]), "master": _size(r["master"]),
            "optimizer": r["optimizer_states"] * (_size(r["optimizer_dtype"]) if r["optimizer_states"] else 0)}


def _check(lab3, got, r, n, case, *, with_total_gb=True):
    assert_keys(got, KEYS, what=_("recipe_bytes result"), case=case)
    parts = truth(r)
    for k in PARTS:
        lab3.assert_exact_int(got[k], parts[k], what=_("{part} bytes per parameter").format(part=k), case=case)
    per_param = sum(parts.values())
    lab3.assert_exact_int(got["per_param"], per_param, what=_("bytes per parameter, all parts"), case=case)
    lab3.assert_exact_int(got["total_bytes"], n * per_param, what=_("model state bytes"), case=case)
    if with_total_gb:
        assert_scalar(got["total_gb"], n * per_param / 1e9, what=_("model state in GB (10^9 bytes)"), case=case,
                      rtol=1e-12)


def test_chapter_recipes_part_by_part(student, lab3):
    """Each of the four recipes, part by part, against torch's element sizes and its bytes per parameter."""
    with M.fixed_case():  # the same on every submission, so no direction
        for label, (r, per_param) in RECIPES.items():
            case = _(label)
            got = student.recipe_bytes(recipe=r, n_params=1)
            _check(lab3, got, r, 1, case)
            lab3.assert_exact_int(got["per_param"], per_param, what=_("bytes per parameter, all parts"), case=case)


def test_chapter_totals(student, lab3):
    """The chapter's worked totals, each with the recipe it assumes: 24, 24, 84 and 200 GB."""
    with M.fixed_case():
        for label, n, gb in CHAPTER_TOTALS:
            r = RECIPES[label][0]
            case = _("{recipe}, P={billions}B").format(recipe=_(label), billions=f"{n / 1e9:g}")
            got = student.recipe_bytes(recipe=r, n_params=n)
            _check(lab3, got, r, n, case)
            lab3.assert_exact_int(got["total_bytes"], gb * 10**9, what=_("model state bytes"), case=case)
            assert_scalar(got["total_gb"], gb, what=_("model state in GB (10^9 bytes)"), case=case, rtol=1e-12)


def test_random_recipes(student, lab3, rng):
    """Drawn recipes (every dtype, copies kept or not, 0 to 2 optimizer states) and parameter counts."""
    names = list(DTYPES)
    for trial in range(1, 9):
        states = int(rng.integers(0, 3))
        r = recipe(str(rng.choice(names)),
                   None if rng.random() < 0.3 else str(rng.choice(names)),
                   None if rng.random() < 0.5 else str(rng.choice(names)),
                   states,
                   None if states == 0 and rng.random() < 0.5 else str(rng.choice(names)))
        n = int(rng.integers(1, 10**12))
        # named by number, never by the drawn recipe or count (docs/feedback.md)
        case = _("a random recipe and parameter count, case {trial} of 8").format(trial=trial)
        _check(lab3, student.recipe_bytes(recipe=r, n_params=n), r, n, case)
