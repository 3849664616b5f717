"""Public tests for Lab 2: quick checks against stored snapshots.

Run them with ``autograder check lab2``.  They use fixed inputs; the hidden
tests, run at grading, use fresh seeded inputs, compare with ``torch.optim``
and check the gradient-accumulation pitfalls in more cases.
"""

import numpy as np
import pytest
import torch

from autograder.core.i18n import _

INPUTS = np.random.default_rng(2024)
PARAMS0 = INPUTS.normal(size=(3, 2))
GRADS = [INPUTS.normal(size=(3, 2)) for _step in range(5)]


def run_rule(student, fn_name: str, hp: dict, zero_grads: bool = False) -> np.ndarray:
    params, state = PARAMS0, {}
    for g in GRADS:
        g = np.zeros_like(g) if zero_grads else g
        params, state = getattr(student, fn_name)(params=params, grads=g, state=state, **hp)
    return params


@pytest.mark.question("update_rules")
def test_update_rules_five_steps(student, snapshot):
    got = {
        "sgd": run_rule(student, "sgd_step", {"lr": 0.1}),
        "momentum": run_rule(student, "sgd_step", {"lr": 0.1, "momentum": 0.9}),
        "rmsprop": run_rule(student, "rmsprop_step", {"lr": 0.01}),
        "adam": run_rule(student, "adam_step", {"lr": 0.01}),
    }
    snapshot.check("update_rules", got, what=_("parameters after 5 steps"), case=_("fixed 3x2 problem"), rtol=1e-6, atol=1e-12)


@pytest.mark.question("trajectories")
def test_momentum_trajectory_on_quadratic(student, snapshot):
    path = student.trajectory(surface="quadratic", optimizer="momentum", start=(-2.0, 1.0), steps=20, hparams={"lr": 0.02})
    snapshot.check("trajectory", {"path": path}, what=_("momentum trajectory"),
                   case=_("quadratic, start (-2, 1), lr 0.02"), rtol=1e-6, atol=1e-12)


@pytest.mark.question("optimizer_state")
def test_adam_footprint(student, snapshot):
    config = {"d_in": 8, "d_hidden": 16, "n_classes": 4, "seed": 0, "dtype": "float32"}
    got = student.optimizer_state_footprint(config=config, optimizer="adam", hparams={})
    numbers = {k: got[k] for k in ("param_elements", "param_bytes", "state_elements", "state_bytes", "multiple")}
    snapshot.check("optimizer_state", numbers, what=_("Adam footprint"), case=_("default config"), rtol=1e-12)


@pytest.mark.question("gradient_noise")
def test_small_noise_experiment(student, snapshot):
    config = {"d_in": 8, "d_hidden": 16, "n_classes": 4, "seed": 0, "dtype": "float64"}
    got = student.gradient_noise(config=config, batch_sizes=[2, 8, 32], trials=10, pool_size=64, seed=0)
    snapshot.check("gradient_noise", {"std": got["std"], "slope": got["slope"]}, what=_("gradient noise"),
                   case=_("batch sizes [2, 8, 32], 10 trials, pool 64, seed 0"), rtol=1e-6)


@pytest.mark.question("schedule")
def test_schedule_at_a_few_steps(student, snapshot):
    steps = np.array([0, 100, 499, 500, 1000, 10_000, 49_999])
    snapshot.check("schedule", {"lr": student.lr_schedule(steps=steps)}, what=_("learning rate"),
                   case=_("GPT-2 XL defaults, steps 0, 100, 499, 500, 1000, 10,000, 49,999"), rtol=1e-9, atol=1e-15)


@pytest.mark.question("adamw")
def test_adamw_five_steps(student, snapshot):
    got = {"adamw": run_rule(student, "adamw_step", {"lr": 0.01, "weight_decay": 0.1}),
           "decay_only": run_rule(student, "adamw_step", {"lr": 0.01, "weight_decay": 0.1}, zero_grads=True)}
    snapshot.check("adamw", got, what=_("AdamW parameters after 5 steps"), case=_("fixed 3x2 problem"),
                   rtol=1e-6, atol=1e-12)


@pytest.mark.question("lr_scaling")
def test_linear_scaling_and_warmup(student, snapshot):
    rates = {f"batch {b}": student.linear_scaling_rule(base_lr=0.1, base_batch=512, new_batch=b) for b in (256, 1024, 4096)}
    schedule = student.scaled_lr_schedule(steps=np.array([0, 100, 250, 499, 500, 1000, 5000]), base_lr=0.1,
                                          base_batch=512, new_batch=4096, warmup_steps=500, total_steps=5000)
    snapshot.check("lr_scaling", {**rates, "schedule": schedule}, what=_("linear scaling"),
                   case=_("base 0.1 at batch 512; batch 4,096 warmed up over 500 steps"), rtol=1e-9, atol=1e-15)
    if student.linear_scaling_rule(base_lr=0.1, base_batch=512, new_batch=16_384) is not None:
        raise AssertionError(_("linear_scaling_rule: batch 16,384 is beyond the default critical batch (8,192), "
                               "where the rule does not hold: return None"))


def forward_examples(out: dict) -> list[int]:
    """How many examples each forward of the model saw, from the log the shipped model keeps."""
    return [entry["examples"] for entry in out["forward_log"]]


def backward_in_time(out: dict) -> list[bool]:
    """Per forward: did its gradient come back before the next forward (one micro-batch alive at a time)?"""
    return [entry.get("backward") is True for entry in out["forward_log"]]


TINY_MLP = {"d_in": 4, "d_hidden": 6, "n_classes": 3, "seed": 0, "dtype": "float64"}
TINY_SHAPES = {"fc1.weight": (6, 4), "fc1.bias": (6,), "fc2.weight": (3, 6), "fc2.bias": (3,)}


def tiny_state_dict(g: torch.Generator) -> dict:
    """Initial parameters of TINY_MLP, drawn from ``g``."""
    return {name: 0.5 * torch.randn(shape, generator=g, dtype=torch.float64) for name, shape in TINY_SHAPES.items()}


def tiny_batch(g: torch.Generator, n: int) -> dict:
    """``n`` examples for TINY_MLP, drawn from ``g``."""
    return {"x": torch.randn(n, 4, generator=g, dtype=torch.float64), "y": torch.randint(0, 3, (n,), generator=g)}


@pytest.mark.question("accumulation")
def test_accumulation_two_steps(student, snapshot):
    g = torch.Generator().manual_seed(0)
    state_dict = tiny_state_dict(g)
    batches = [tiny_batch(g, 8) for _step in range(2)]
    out = student.accumulate_and_step(config=TINY_MLP, state_dict=state_dict, batches=batches, micro_batch_size=2,
                                      lr=0.5)
    got = {"step1_grad": out["grads"][0], "step2_grad": out["grads"][1], "params": out["params"],
           "forward_examples": forward_examples(out), "backward_before_next_forward": backward_in_time(out)}
    snapshot.check("accumulation", got, what=_("accumulation"), case=_("batch 8, micro-batch 2, 2 steps"),
                   rtol=1e-9, atol=1e-12)


@pytest.mark.question("accumulation_uneven")
def test_accumulation_short_last_micro_batch(student, snapshot):
    g = torch.Generator().manual_seed(1)
    state_dict = tiny_state_dict(g)
    out = student.accumulate_and_step(config=TINY_MLP, state_dict=state_dict, batches=[tiny_batch(g, 10)],
                                      micro_batch_size=4, lr=0.5)
    got = {"grad": out["grads"][0], "params": out["params"], "forward_examples": forward_examples(out),
           "backward_before_next_forward": backward_in_time(out)}
    snapshot.check("accumulation_uneven", got, what=_("accumulation"),
                   case=_("batch 10, micro-batch 4 (sizes 4, 4, 2), 1 step"), rtol=1e-9, atol=1e-12)


@pytest.mark.question("break_no_scaling")
def test_accumulation_without_scaling(student, snapshot):
    g = torch.Generator().manual_seed(2)
    state_dict = tiny_state_dict(g)
    out = student.accumulate_without_scaling(config=TINY_MLP, state_dict=state_dict, batches=[tiny_batch(g, 8)],
                                             micro_batch_size=2, lr=0.5)
    got = {"grad": out["grads"][0], "params": out["params"], "forward_examples": forward_examples(out),
           "backward_before_next_forward": backward_in_time(out)}
    snapshot.check("break_no_scaling", got, what=_("accumulate_without_scaling"),
                   case=_("batch 8, micro-batch 2, 1 step"), rtol=1e-9, atol=1e-12)


@pytest.mark.question("break_zero_grad_inside")
def test_accumulation_with_zero_grad_inside(student, snapshot):
    g = torch.Generator().manual_seed(3)
    state_dict = tiny_state_dict(g)
    out = student.accumulate_with_zero_grad_inside(config=TINY_MLP, state_dict=state_dict,
                                                   batches=[tiny_batch(g, 8)], micro_batch_size=2, lr=0.5)
    got = {"grad": out["grads"][0], "params": out["params"], "forward_examples": forward_examples(out),
           "backward_before_next_forward": backward_in_time(out)}
    snapshot.check("break_zero_grad_inside", got, what=_("accumulate_with_zero_grad_inside"),
                   case=_("batch 8, micro-batch 2, 1 step"), rtol=1e-9, atol=1e-12)
