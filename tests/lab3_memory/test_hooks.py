"""Lab 3, activations counted two ways: saved-tensor hooks and forward hooks."""

import pytest

from autograder.core.i18n import _
from autograder.labkit.assertions import assert_keys

pytestmark = pytest.mark.question("activation_hooks")

KEYS = ["saved_bytes", "saved_tensors", "parameter_saves", "module_output_bytes"]


def test_saved_tensor_counts_match_hooks(student, lab3, rng):
    for cfg in ({"kind": "gpt"}, {"kind": "gpt", "tie_weights": False, "n_layers": 1}, lab3.random_mlp(rng)):
        B = int(rng.integers(1, 5))
        case = lab3.describe(cfg, B=B)
        got = student.activation_hook_counts(config=cfg, batch_size=B)
        assert_keys(got, KEYS, what=_("activation_hook_counts result"), case=case)
        want = lab3.truth.hook_counts(cfg, B)
        lab3.assert_exact_int(got["saved_tensors"], want["saved_tensors"], what=_("number of pack calls"), case=case)
        lab3.assert_exact_int(got["parameter_saves"], want["parameter_saves"],
                          what=_("pack calls on parameter storages"), case=case)
        lab3.assert_exact_int(got["saved_bytes"], want["saved_bytes"],
                          what=_("saved bytes (distinct non-parameter storages)"), case=case)


def test_module_output_bytes_match_leaf_forward_hooks(student, lab3, rng):
    for cfg in ({"kind": "gpt"}, lab3.random_gpt(rng), lab3.random_mlp(rng)):
        B = int(rng.integers(1, 5))
        case = lab3.describe(cfg, B=B)
        got = student.activation_hook_counts(config=cfg, batch_size=B)
        assert_keys(got, KEYS, what=_("activation_hook_counts result"), case=case)
        want = lab3.truth.hook_counts(cfg, B)
        lab3.assert_exact_int(got["module_output_bytes"], want["module_output_bytes"],
                          what=_("leaf-module output bytes"), case=case)


def test_hook_counts_random_configs_match_reference(student, reference, lab3, rng):
    for cfg in (lab3.random_gpt(rng, dtype="bfloat16"), lab3.random_gpt(rng), lab3.random_mlp(rng)):
        B = int(rng.integers(1, 5))
        case = lab3.describe(cfg, B=B)
        got = student.activation_hook_counts(config=cfg, batch_size=B)
        want = reference.activation_hook_counts(config=cfg, batch_size=B)
        assert_keys(got, KEYS, what=_("activation_hook_counts result"), case=case)
        for k in KEYS:
            lab3.assert_exact_int(got[k], want[k], what=k, case=case)
