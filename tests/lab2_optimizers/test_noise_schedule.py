"""Hidden tests, Lab 2: gradient noise (1/sqrt(B)) and GPT-2 XL's schedule and clipping.

Gradient noise has an exact ground truth: with batches drawn with replacement
from a pool, Var(mean of B per-example gradients) = Var(per-example)/B, so the
test computes every per-example gradient of the pool itself and predicts the
student's measured std within sampling error.
"""

import numpy as np
import pytest
import torch

from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_close, assert_keys, assert_scalar
from autograder.labkit.messages import fixed_case

NOISE_KEYS = ("std", "slope", "intercept")


# the docstring's NOISE_CONFIG, restated here: the grader never reads the student's constants
NOISE_CONFIG = {"d_in": 8, "d_hidden": 16, "n_classes": 4, "seed": 0, "dtype": "float64"}


def per_example_variance(models, config: dict, pool_size: int, seed: int) -> float:
    """Trace of the covariance of one example's gradient over the pool (ddof=0)."""
    model = models.build_model(config)
    pool = models.make_batch(config, n=pool_size, seed=seed)
    rows = []
    for i in range(pool_size):
        model.zero_grad(set_to_none=True)
        models.loss_fn(model, {"x": pool["x"][i : i + 1], "y": pool["y"][i : i + 1]}).backward()
        rows.append(torch.cat([p.grad.reshape(-1) for p in model.parameters()]))
    G = torch.stack(rows).double().numpy()  # (pool_size, P)
    return float(G.var(axis=0).sum())


# -- gradient_noise ----------------------------------------------------------------
@pytest.mark.question("gradient_noise")
def test_noise_replays_reference(student, reference, models, rng):
    """The experiment as the docstring fixes it, at a seeded small size, vs the reference."""
    kwargs = dict(config=dict(NOISE_CONFIG), batch_sizes=[2, 8, 32], trials=20, pool_size=64, seed=int(rng.integers(0, 2**31)))
    want = reference.gradient_noise(**kwargs)
    got = student.gradient_noise(**kwargs)
    case = _("batch sizes {batch_sizes}, 20 trials, pool 64, a random seed").format(batch_sizes=kwargs["batch_sizes"])
    assert_keys(got, NOISE_KEYS, what=_("gradient_noise result"), case=case)
    assert_close(got["std"], want["std"], what=_("noise std"), case=case, rtol=1e-6)
    assert_scalar(got["slope"], want["slope"], what="slope", case=case, rtol=1e-6)
    assert_scalar(got["intercept"], want["intercept"], what="intercept", case=case, rtol=1e-6, atol=1e-9)


@pytest.mark.question("gradient_noise", points=2)
def test_noise_follows_one_over_sqrt_b(student, models):
    """std(B) is sigma/sqrt(B) within sampling error, and the fitted slope is -0.5 +- 0.1."""
    config, pool_size, seed, batch_sizes = dict(NOISE_CONFIG), 256, 7, [2, 4, 8, 16, 32, 64]
    got = student.gradient_noise(config=config, batch_sizes=batch_sizes, trials=100, pool_size=pool_size, seed=seed)
    case = _("batch sizes {batch_sizes}, 100 trials, pool {pool_size}").format(batch_sizes=batch_sizes, pool_size=pool_size)
    assert_keys(got, NOISE_KEYS, what=_("gradient_noise result"), case=case)
    sigma2 = per_example_variance(models, config, pool_size, seed)
    theory = np.sqrt(sigma2 / np.array(batch_sizes, dtype=np.float64))
    # 100 trials estimate a std to a few percent; 25% separates 1/sqrt(B) from 1/B or sqrt(k)x slips
    assert_close(got["std"], theory, what=_("noise std vs sigma/sqrt(B)"), case=case, rtol=0.25)
    assert_scalar(got["slope"], -0.5, what=_("log-log slope"), case=case, atol=0.1, rtol=0)
    slope, intercept = np.polyfit(np.log(batch_sizes), np.log(np.asarray(got["std"], dtype=np.float64)), 1)
    assert_scalar(got["slope"], slope, what=_("slope of your own std values"), case=case, rtol=1e-6)
    assert_scalar(got["intercept"], intercept, what=_("intercept of your own std values"), case=case, rtol=1e-6, atol=1e-9)


# -- schedule ----------------------------------------------------------------------
@pytest.mark.question("schedule")
def test_schedule_worked_points(student):
    """GPT-2 XL: 0 at step 0, 1.25e-4 at 250, 2.5e-4 at 500, 1.25e-4 at 25,250, the floor at 50,000 and after."""
    steps = np.array([0, 250, 500, 25_250, 50_000, 60_000])
    got = student.lr_schedule(steps=steps)
    assert_close(got, [0.0, 1.25e-4, 2.5e-4, 1.25e-4, 0.0, 0.0], what=_("learning rate"),
                 case=_("defaults (floor 0), steps 0, 250, 500, 25,250, 50,000, 60,000"), rtol=1e-9, atol=1e-15)
    got = student.lr_schedule(steps=steps, min_lr=2.5e-5)
    assert_close(got, [0.0, 1.25e-4, 2.5e-4, 1.375e-4, 2.5e-5, 2.5e-5], what=_("learning rate"),
                 case=_("floor 2.5e-5, steps 0, 250, 500, 25,250, 50,000, 60,000"), rtol=1e-9, atol=1e-15)


@pytest.mark.question("schedule")
def test_schedule_many_steps_match_reference(student, reference, rng):
    """Every 97th step of GPT-2 XL's run and beyond, then seeded random schedules."""
    steps = np.arange(0, 52_000, 97)
    with fixed_case():  # issue 27: the same on every submission, so no direction
        assert_close(student.lr_schedule(steps=steps), reference.lr_schedule(steps=steps), what=_("learning rate"),
                     case=_("GPT-2 XL defaults, every 97th step up to 52,000"), rtol=1e-9, atol=1e-15)
    for draw in range(1, 4):
        warmup = int(rng.integers(1, 100))
        kw = dict(peak_lr=float(10 ** rng.uniform(-5, -2)), warmup_steps=warmup,
                  total_steps=warmup + int(rng.integers(10, 1000)), min_lr=float(rng.choice([0.0, 1e-6])))
        steps = np.sort(rng.integers(0, kw["total_steps"] + 50, size=64))
        assert_close(student.lr_schedule(steps=steps, **kw), reference.lr_schedule(steps=steps, **kw),
                     what=_("learning rate"), case=_("random schedule {draw} of 3, 64 random steps").format(draw=draw),
                     rtol=1e-9, atol=1e-15)


@pytest.mark.question("schedule")
def test_clip_grad_norm_matches_torch(student, rng):
    """Global-norm clipping (GPT-2 XL clips at 1.0) against torch.nn.utils.clip_grad_norm_."""
    shapes = [(4, 3), (3,), (2, 2, 2)]
    labels = {1.0: N_("3 arrays, entries about 1 (clipped)"), 0.01: N_("3 arrays, small entries (not clipped)"),
              3.0: N_("3 arrays, large entries, a small max_norm (clipped)")}
    for scale, max_norm in ((1.0, 1.0), (0.01, 1.0), (3.0, 0.5)):
        grads = [scale * rng.normal(size=s) for s in shapes]
        ts = [torch.zeros(s, dtype=torch.float64, requires_grad=True) for s in shapes]
        for t, g in zip(ts, grads):
            t.grad = torch.tensor(g)
        total = float(torch.nn.utils.clip_grad_norm_(ts, max_norm))
        got = student.clip_grad_norm(grads=grads, max_norm=max_norm)
        case = _(labels[scale])
        assert_keys(got, ("grads", "total_norm"), what=_("clip_grad_norm result"), case=case)
        assert_scalar(got["total_norm"], total, what=_("total_norm (before clipping)"), case=case, rtol=1e-9)
        assert_scalar(len(got["grads"]), len(ts), what=_("number of clipped arrays"), case=case, rtol=0)
        for i, t in enumerate(ts):
            assert_close(got["grads"][i], t.grad.numpy(), what=_("clipped gradient {index}").format(index=i), case=case,
                         rtol=1e-9, atol=1e-15)
    # worked number: a gradient of norm 5 clipped to norm 1 is scaled by 1/(5 + 1e-6)
    got = student.clip_grad_norm(grads=[np.array([3.0, 4.0])], max_norm=1.0)
    with fixed_case():  # issue 27: the same on every submission, so no direction
        assert_close(got["grads"][0], np.array([3.0, 4.0]) / (5.0 + 1e-6), what=_("clipped gradient"),
                     case="[3, 4], max_norm 1", rtol=1e-12)
        assert_scalar(got["total_norm"], 5.0, what="total_norm", case="[3, 4], max_norm 1", rtol=1e-12)
