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
