"""Lab 3, the four terms measured on a real model (weights, gradients,
optimizer state, activations), checked against torch itself."""

import pytest

from autograder.core.i18n import _
from autograder.labkit.assertions import assert_keys
from autograder.labkit.messages import fixed_case

pytestmark = pytest.mark.question("four_terms")

KEYS = ["weights", "gradients", "optimizer_state", "activations", "total"]
ADAM = {"name": "adam", "lr": 1e-3}


def test_weights_count_each_parameter_once(student, lab3, rng):
    configs = [{"kind": "gpt", "tie_weights": True}, {"kind": "gpt", "tie_weights": False},
               {"kind": "gpt", "dtype": "bfloat16"}, {"kind": "mlp"}, lab3.random_gpt(rng, tie_weights=True),
               {"kind": "gpt", "frozen": ["tok_emb", "blocks.0"]},  # frozen parameters are weights too
               lab3.random_mlp(rng, frozen=["inp", "blocks"])]
    for cfg in configs:
        case = lab3.describe(cfg, B=2)
        got = student.measure_four_terms(config=cfg, batch_size=2, optimizer=ADAM)
        assert_keys(got, KEYS, what=_("measure_four_terms result"), case=case)
        want = lab3.truth.four_terms(cfg, 2, ADAM)
        with fixed_case(not lab3.is_drawn(cfg)):  # issue 27: a fixed config, no direction
            lab3.assert_exact_int(got["weights"], want["weights"], what=_("weight bytes (each parameter once)"),
                                  case=case)


def test_gradients_only_for_trainable_parameters(student, lab3, rng):
    configs = [{"kind": "gpt"}, {"kind": "gpt", "frozen": ["tok_emb"]},
               {"kind": "gpt", "tie_weights": False, "frozen": ["pos_emb", "blocks.0"]},
               lab3.random_mlp(rng, frozen=["inp", "blocks.1"])]
    for cfg in configs:
        case = lab3.describe(cfg, B=3)
        got = student.measure_four_terms(config=cfg, batch_size=3, optimizer=ADAM)
        want = lab3.truth.four_terms(cfg, 3, ADAM)
        with fixed_case(not lab3.is_drawn(cfg)):  # issue 27: a fixed config, no direction
            lab3.assert_exact_int(got["gradients"], want["gradients"], what=_("gradient bytes after backward"),
                                  case=case)


def test_optimizer_state_matches_torch_optim(student, lab3, rng):
    cases = [({"kind": "gpt"}, {"name": "sgd", "lr": 0.1}),
             ({"kind": "gpt"}, {"name": "momentum", "lr": 0.1}),
             ({"kind": "gpt"}, {"name": "adam", "lr": 1e-3}),
             ({"kind": "gpt", "frozen": ["tok_emb"]}, {"name": "adamw", "lr": 1e-3}),
             ({"kind": "gpt", "dtype": "bfloat16"}, {"name": "adam", "lr": 1e-3}),
             (lab3.random_mlp(rng), {"name": "momentum", "lr": 0.05})]
    for cfg, opt in cases:
        case = lab3.describe(cfg, B=2, optimizer=opt["name"])
        got = student.measure_four_terms(config=cfg, batch_size=2, optimizer=opt)
        want = lab3.truth.four_terms(cfg, 2, opt)
        with fixed_case(not lab3.is_drawn(cfg)):  # issue 27: a fixed config, no direction
            lab3.assert_exact_int(got["optimizer_state"], want["optimizer_state"],
                                  what=_("optimizer state bytes after one step (without 'step')"), case=case)


def _check_activations(student, lab3, cfg, B, case):
    got = student.measure_four_terms(config=cfg, batch_size=B, optimizer=ADAM)
    assert_keys(got, KEYS, what=_("measure_four_terms result"), case=case)
    lab3.assert_exact_int(got["activations"], lab3.truth.four_terms(cfg, B, ADAM)["activations"],
                          what=_("activation bytes (distinct saved storages, no parameters)"), case=case)


def test_activations_are_saved_tensor_bytes(student, lab3, rng):
    # fixed first: the default GPT at B=1, where the q/k views sit at an offset in one storage and inputs and
    # targets share one token storage (a count by t.data_ptr() or by a view's own bytes is off there)
    cfg = {"kind": "gpt"}
    with fixed_case():  # issue 27: the same on every submission, so no direction
        _check_activations(student, lab3, cfg, 1, lab3.describe(cfg, B=1))
    configs = [{"kind": "gpt"}, lab3.random_gpt(rng), lab3.random_mlp(rng)]
    for cfg in configs:
        B = int(rng.integers(1, 5))
        _check_activations(student, lab3, cfg, B, lab3.describe(cfg, B=B, drawn=("B",)))


def test_four_terms_random_configs_match_reference(student, reference, lab3, rng):
    opts = ["sgd", "momentum", "adam", "adamw"]
    for cfg in (lab3.random_gpt(rng), lab3.random_mlp(rng, dtype="bfloat16")):
        opt = {"name": str(rng.choice(opts)), "lr": 1e-3}
        B = int(rng.integers(1, 5))
        case = lab3.describe(cfg, B=B, optimizer=opt["name"], drawn=("B", "optimizer"))
        got = student.measure_four_terms(config=cfg, batch_size=B, optimizer=opt)
        want = reference.measure_four_terms(config=cfg, batch_size=B, optimizer=opt)
        assert_keys(got, KEYS, what=_("measure_four_terms result"), case=case)
        for k in KEYS:
            lab3.assert_exact_int(got[k], want[k], what=_("{key} bytes").format(key=k), case=case)
