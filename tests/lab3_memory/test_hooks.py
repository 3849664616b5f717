"""Lab 3, activations counted two ways: saved-tensor hooks and forward hooks.

Each test calls activation_hook_counts several times in one worker: a case,
the same case again at once, fresh models, and the first case once more,
each call against the ground truth. Every call builds its own model, so a
hook that an earlier call left installed (a global module hook) fires
again in a later call and counts there too; a hook left on the model an
earlier call built fires no more, so the shipped ``lab3_models.build_model``
(the copy the student's code imports) remembers the hook tables of the last
model each function built and raises ``HooksLeftError`` in the next call
when one still holds a hook (issue 35: the docstring's "remove every hook
before returning"). The shared-block models
(lab3_models' "shared_blocks": one block in every layer) run the same
modules several times in one forward: their outputs count at every call.

The saved-tensor test starts with a fixed case, the default GPT at B=1
(FIXED_B1): at B=1 the attention's q/k reshapes are views at an offset into
one storage, and inputs and targets share one token storage, so a count
that tells storages apart by ``t.data_ptr()`` or sums a view's own bytes is
off there on every submission (at B >= 2 those views are copies).
"""

import pytest

from autograder.core.i18n import _
from autograder.labkit.assertions import assert_keys
from autograder.labkit.messages import fixed_case

pytestmark = pytest.mark.question("activation_hooks")

KEYS = ["saved_bytes", "saved_tensors", "parameter_saves", "module_output_bytes"]
FIXED_B1 = ({"kind": "gpt"}, 1)  # the same for everyone: its label names B=1


def calls(lab3, rng, configs):
    """(config, B, case) for every call: the first config twice in a row, the others once, then the
    first once more; a repeated call's case says which call of that case it is. B is drawn: the case
    says "a random batch size", never which."""
    cases = [(cfg, int(rng.integers(1, 5))) for cfg in configs]
    made: dict[int, int] = {}
    for i in [0, 0, *range(1, len(cases)), 0]:
        cfg, B = cases[i]
        made[i] = made.get(i, 0) + 1
        case = lab3.describe(cfg, B=B, drawn=("B",))
        if made[i] > 1:
            case = _("{case}, call {n} of the same case").format(case=case, n=made[i])
        yield cfg, B, case


def _check_saved(student, lab3, cfg, B, case):
    got = student.activation_hook_counts(config=cfg, batch_size=B)
    assert_keys(got, KEYS, what=_("activation_hook_counts result"), case=case)
    want = lab3.truth.hook_counts(cfg, B)
    lab3.assert_exact_int(got["saved_tensors"], want["saved_tensors"], what=_("number of pack calls"), case=case)
    lab3.assert_exact_int(got["parameter_saves"], want["parameter_saves"],
                          what=_("pack calls on parameter storages"), case=case)
    lab3.assert_exact_int(got["saved_bytes"], want["saved_bytes"],
                          what=_("saved bytes (distinct non-parameter storages)"), case=case)


def test_saved_tensor_counts_match_hooks(student, lab3, rng):
    cfg, B = FIXED_B1
    with fixed_case():  # issue 27: the same on every submission, so no direction
        _check_saved(student, lab3, cfg, B, lab3.describe(cfg, B=B))
    configs = [{"kind": "gpt"}, {"kind": "gpt", "tie_weights": False, "n_layers": 1}, lab3.random_mlp(rng),
               {"kind": "gpt", "shared_blocks": True, "n_layers": 3}, lab3.random_mlp(rng, shared_blocks=True)]
    for cfg, B, case in calls(lab3, rng, configs):
        _check_saved(student, lab3, cfg, B, case)


def test_module_output_bytes_match_leaf_forward_hooks(student, lab3, rng):
    configs = [{"kind": "gpt"}, lab3.random_gpt(rng), lab3.random_mlp(rng),
               lab3.random_gpt(rng, shared_blocks=True, n_layers=int(rng.integers(2, 4))),
               lab3.random_mlp(rng, shared_blocks=True)]
    for cfg, B, case in calls(lab3, rng, configs):
        got = student.activation_hook_counts(config=cfg, batch_size=B)
        assert_keys(got, KEYS, what=_("activation_hook_counts result"), case=case)
        want = lab3.truth.hook_counts(cfg, B)
        lab3.assert_exact_int(got["module_output_bytes"], want["module_output_bytes"],
                          what=_("leaf-module output bytes"), case=case)


def test_hook_counts_random_configs_match_reference(student, reference, lab3, rng):
    for cfg in (lab3.random_gpt(rng, dtype="bfloat16"), lab3.random_gpt(rng), lab3.random_mlp(rng)):
        B = int(rng.integers(1, 5))
        case = lab3.describe(cfg, B=B, drawn=("B",))
        got = student.activation_hook_counts(config=cfg, batch_size=B)
        want = reference.activation_hook_counts(config=cfg, batch_size=B)
        assert_keys(got, KEYS, what=_("activation_hook_counts result"), case=case)
        for k in KEYS:
            lab3.assert_exact_int(got[k], want[k], what=k, case=case)
