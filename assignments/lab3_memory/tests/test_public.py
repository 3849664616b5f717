"""Lab 3 public tests: quick checks of your memory.py against stored answers.

Run them with `autograder check lab3` (or `pytest assignments/lab3_memory`).
More tests, on other models and inputs, run at grading.
"""

import pytest

from autograder.core.i18n import _

GPT = {"kind": "gpt"}  # the default tiny GPT of lab3_models (2 layers, d=32, tied head)


@pytest.mark.question("four_terms")
def test_four_terms_tiny_gpt(student, snapshot):
    got = student.measure_four_terms(config=GPT, batch_size=4, optimizer={"name": "adam", "lr": 1e-3})
    snapshot.check("four_terms_tiny_gpt", got, what="measure_four_terms", case=_("tiny GPT, B=4, adam"), rtol=0.0)


@pytest.mark.question("activation_hooks")
def test_hook_counts_tiny_gpt(student, snapshot):
    got = student.activation_hook_counts(config=GPT, batch_size=4)
    snapshot.check("hook_counts_tiny_gpt", got, what="activation_hook_counts", case=_("tiny GPT, B=4"), rtol=0.0)


@pytest.mark.question("bytes_per_param")
def test_sixteen_bytes_per_parameter(student, snapshot):
    got = {
        "breakdown": student.bytes_per_parameter(scheme="mixed_adam"),
        "7B": student.model_state_bytes(n_params=7_000_000_000, scheme="mixed_adam"),
        "20B": student.model_state_bytes(n_params=20_000_000_000, scheme="mixed_adam"),
        "175B": student.model_state_bytes(n_params=175_000_000_000, scheme="mixed_adam"),
    }
    snapshot.check("sixteen_bytes", got, what=_("mixed-precision Adam"), case="7B, 20B, 175B", rtol=0.0)


@pytest.mark.question("recipes")
def test_chapter_7b_recipe(student, snapshot):
    # the chapter's 7B example: FP16 weights and gradients, FP32 Adam m and v, no master copy
    recipe = {"weights": "float16", "gradients": "float16", "master": None,
              "optimizer_states": 2, "optimizer_dtype": "float32"}
    got = student.recipe_bytes(recipe=recipe, n_params=7_000_000_000)
    snapshot.check("chapter_7b_recipe", got, what="recipe_bytes",
                   case=_("7B, FP16 weights and gradients, FP32 Adam moments, no master copy"), rtol=0.0)


@pytest.mark.question("activation_formula")
def test_gpt2_xl_activations(student, snapshot):
    xl = dict(s=1024, b=8, h=1600, a=25)
    got = {
        "per_layer": student.activation_bytes(**xl, n_layers=1, recompute="none"),
        "all_48": student.activation_bytes(**xl, n_layers=48, recompute="none"),
        "selective_48": student.activation_bytes(**xl, n_layers=48, recompute="selective"),
        "full_48": student.activation_bytes(**xl, n_layers=48, recompute="full"),
    }
    snapshot.check("gpt2_xl_activations", got, what="activation_bytes", case="GPT-2 XL, b=8", rtol=0.0)


@pytest.mark.question("number_formats")
def test_format_ranges(student, snapshot):
    snapshot.check("format_ranges", student.format_ranges(), what="format_ranges", rtol=1e-9)


@pytest.mark.question("checkpointing")
def test_sqrt_rule_48_layers(student, snapshot):
    got = {**student.checkpoint_units(n_layers=48, n_checkpoints=7),
           "best_k": student.best_checkpoint_count(n_layers=48)}
    snapshot.check("sqrt_rule_48", got, what=_("the √N rule"), case="N=48, k=7", rtol=1e-9)


@pytest.mark.question("v100")
def test_v100_walkthrough(student, snapshot):
    got = student.v100_walkthrough(n_params=1_500_000_000, n_layers=48, s=1024, b=4, h=1600, a=25,
                                   checkpoint_every=4, capacity_bytes=32 * 2**30)
    snapshot.check("v100_walkthrough", got, what="v100_walkthrough", case="GPT-2 XL, B=4, V100 32 GiB", rtol=1e-9)


# the break-it pair: one hidden layer, biases frozen, updates far below half the FP16 spacing of the weights
TOGGLE = {"kind": "mlp", "n_layers": 1, "init_std": 0.3, "act": "relu",
          "frozen": ["inp.bias", "blocks.0.fc.bias", "out.bias"]}


@pytest.mark.question("fp16_toggle")
def test_fp16_toggle_stalls(student):
    losses = student.train_fp16_toggle(config=TOGGLE, batch_size=32, lr=1e-5, steps=20)
    assert len(losses) == 20, _("train_fp16_toggle: one loss per step (20 steps)")
    assert abs(losses[0] - losses[-1]) < 2e-4, _(
        "train_fp16_toggle (B=32, lr=1e-5, 20 steps): the loss moved; done wholly in FP16 it should stall")


@pytest.mark.question("fp16_master")
def test_fp16_master_falls(student):
    losses = student.train_fp16_master(config=TOGGLE, batch_size=32, lr=1e-5, steps=20, loss_scale=1024.0)
    assert len(losses) == 20, _("train_fp16_master: one loss per step (20 steps)")
    assert losses[0] - losses[-1] > 1e-3, _(
        "train_fp16_master (B=32, lr=1e-5, 20 steps, loss_scale=2^10): the loss should fall")
