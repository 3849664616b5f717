"""Hidden tests, Lab 2: optimizer state memory, by rule and on real torch optimizers.

Ground truth is a real ``torch.optim`` optimizer built and stepped here, on the
trusted copy of ``lab2_models``; the chapter's rule (SGD 1x, momentum 2x,
RMSprop 2x, Adam 3x; Adam state for 100M FP32 parameters = 800 MB) is checked
on top.
"""

import pytest
import torch

from autograder.core.i18n import _
from autograder.labkit.assertions import assert_equal, assert_keys, assert_scalar, grader_check
from autograder.labkit.messages import fixed_case

FOOTPRINT_KEYS = ("param_elements", "param_bytes", "state_elements", "state_bytes", "state_keys", "multiple")
RULE_MULTIPLE = {"sgd": 1, "momentum": 2, "rmsprop": 2, "adam": 3}  # docs/chapter.md, Lab 2
TORCH_CLASS = {"sgd": torch.optim.SGD, "momentum": torch.optim.SGD, "rmsprop": torch.optim.RMSprop, "adam": torch.optim.Adam}


def torch_footprint(models, config: dict, optimizer: str, hparams: dict) -> dict:
    """Build, step once, count: the ground truth, independent of the student."""
    model = models.build_model(config)
    hp = dict(hparams)
    if optimizer == "momentum":
        hp.setdefault("momentum", 0.9)
    opt = TORCH_CLASS[optimizer](model.parameters(), **hp)
    models.loss_fn(model, models.make_batch(config, n=8, seed=0)).backward()
    opt.step()
    params = list(model.parameters())
    per_element = [v for p in params for v in opt.state[p].values() if torch.is_tensor(v) and v.shape == p.shape]
    param_bytes = sum(p.numel() * p.element_size() for p in params)
    state_bytes = sum(v.numel() * v.element_size() for v in per_element)
    return {
        "param_elements": sum(p.numel() for p in params),
        "param_bytes": param_bytes,
        "state_elements": sum(v.numel() for v in per_element),
        "state_bytes": state_bytes,
        "state_keys": sorted({k for p in params for k in opt.state[p]}),
        "multiple": (param_bytes + state_bytes) / param_bytes,
    }


def check_count(got, want: int, *, what: str, case: str):
    """An exact count; when it is off, say by what factor (2x: counted something twice)."""
    if want == 0:  # a ratio to 0 means nothing; say only that it should be none
        assert_equal(got, 0, what=_("{what} (there is none)").format(what=what), case=case)
    else:
        assert_scalar(got, want, what=what, case=case, rtol=0)


def check_footprint(got: dict, want: dict, case: str):
    assert_keys(got, FOOTPRINT_KEYS, what=_("footprint"), case=case)
    for key in ("param_elements", "param_bytes", "state_elements", "state_bytes"):
        check_count(got[key], want[key], what=key, case=case)
    # names of missing or extra keys help (they are torch's documented names); then the order
    assert_keys(dict.fromkeys(got["state_keys"]), want["state_keys"], what="state_keys", case=case)
    assert_equal(list(got["state_keys"]), want["state_keys"], what=_("state_keys (sorted, each once)"), case=case)
    assert_scalar(got["multiple"], want["multiple"], what="multiple", case=case, rtol=1e-9)


@pytest.mark.question("optimizer_state")
def test_footprint_matches_torch_and_rule(student, models):
    """Each optimizer with default options: torch's state, and the 1x/2x/2x/3x rule."""
    config = dict(models.DEFAULT_CONFIG)
    for optimizer, multiple in RULE_MULTIPLE.items():
        want = torch_footprint(models, config, optimizer, {})
        grader_check(want["multiple"] == multiple, "grader self-check: torch no longer follows the rule")
        got = student.optimizer_state_footprint(config=config, optimizer=optimizer, hparams={})
        check_footprint(got, want, case=_("{optimizer}, default options").format(optimizer=optimizer))


@pytest.mark.question("optimizer_state")
def test_footprint_options_and_dtype(student, models, rng):
    """Options that add state (amsgrad, centered + momentum), float64 bytes, other sizes."""
    d_hidden = int(rng.integers(5, 40))
    cases = (
        ({"dtype": "float64"}, "adam", {}),
        ({"dtype": "float64", "d_hidden": d_hidden}, "momentum", {"momentum": 0.5}),
        ({"d_hidden": d_hidden}, "adam", {"amsgrad": True}),
        ({"d_in": 5, "n_classes": 3}, "rmsprop", {"centered": True, "momentum": 0.9}),
        ({}, "sgd", {"lr": 0.5, "weight_decay": 0.1}),
    )
    for overrides, optimizer, hparams in cases:
        config = {**models.DEFAULT_CONFIG, **overrides}
        want = torch_footprint(models, config, optimizer, hparams)
        got = student.optimizer_state_footprint(config=config, optimizer=optimizer, hparams=hparams)
        # named by the options and settings that change, not their values; issue 27: a case without a drawn
        # d_hidden is the same on every submission, so no direction
        with fixed_case("d_hidden" not in overrides):
            check_footprint(got, want, case=_("{optimizer}, options {options}, config changes {changes}").format(
            optimizer=optimizer, options=", ".join(hparams) or "-", changes=", ".join(overrides) or "-"))


@pytest.mark.question("optimizer_state")
def test_memory_rule_worked_numbers(student, reference, rng):
    """The chapter's numbers (Adam, 100M FP32: 800 MB of state) and seeded random sizes."""
    got = student.optimizer_memory(num_params=100_000_000, optimizer="adam", bytes_per_value=4)
    with fixed_case():  # issue 27: the chapter's numbers and the rule, the same on every submission: no direction
        assert_keys(got, ("param_bytes", "state_bytes", "total_bytes", "multiple"), what="optimizer_memory",
                    case=_("Adam, 100M params, FP32"))
        assert_scalar(got["state_bytes"], 800e6, what=_("Adam state bytes"), case=_("100M params, FP32"), rtol=0)
        assert_scalar(got["total_bytes"], 1.2e9, what=_("Adam total bytes"), case=_("100M params, FP32"), rtol=0)
        for optimizer, multiple in RULE_MULTIPLE.items():
            got = student.optimizer_memory(num_params=1000, optimizer=optimizer, bytes_per_value=4)
            assert_scalar(got["multiple"], multiple, what=_("memory multiple"), case=optimizer, rtol=0)
    for optimizer in RULE_MULTIPLE:
        n, nbytes = int(rng.integers(1, 10**9)), int(rng.choice([2, 4, 8]))
        want = reference.optimizer_memory(num_params=n, optimizer=optimizer, bytes_per_value=nbytes)
        got = student.optimizer_memory(num_params=n, optimizer=optimizer, bytes_per_value=nbytes)
        for key, value in want.items():
            check_count(got[key], value, what=key,  # issue 27: never the drawn size or bytes
                        case=_("{optimizer}, a random number of parameters and bytes each").format(optimizer=optimizer))
