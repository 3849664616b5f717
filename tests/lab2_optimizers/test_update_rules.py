"""Hidden tests, Lab 2: update rules and AdamW against torch.optim, and 2-D trajectories.

Ground truth is ``torch.optim`` itself, replayed here on the same gradients
(float64), so a rule that merely agrees with the reference's mistakes would
still fail.  Parameters are checked after every step: the first failing step
is the symptom ("after step 1": the update formula; "after step 2": how the
state carries over).
"""

import numpy as np
import pytest
import torch

from autograder.labkit import messages as M
from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_close, assert_keys, assert_scalar, grader_check
from autograder.labkit.batch_cache import batch_constant

STEPS = 60
RTOL = 1e-6  # docs/chapter.md, Lab 2: "about 1e-6 relative over many steps"
ATOL = 1e-12

TORCH_OPTIM = {"sgd": torch.optim.SGD, "rmsprop": torch.optim.RMSprop, "adam": torch.optim.Adam,
               "adamw": torch.optim.AdamW}
STEP_FN = {"sgd": "sgd_step", "rmsprop": "rmsprop_step", "adam": "adam_step", "adamw": "adamw_step"}


def torch_replay(rule: str, params0: np.ndarray, grads: list[np.ndarray], hp: dict):
    """torch.optim on the same gradient sequence: params after each step, final state."""
    p = torch.tensor(params0, dtype=torch.float64, requires_grad=True)
    opt = TORCH_OPTIM[rule]([p], **hp)
    path = []
    for g in grads:
        p.grad = torch.tensor(g, dtype=torch.float64)
        opt.step()
        path.append(p.detach().numpy().copy())
    state = {k: (v.item() if v.ndim == 0 else v.numpy().copy()) for k, v in opt.state[p].items()}
    return path, state


def student_replay(code, rule: str, params0: np.ndarray, grads: list[np.ndarray], hp: dict):
    """The student's step on the gradient sequence, each step fed the (params, state) the one
    before returned (``chain``: the same calls as a loop here, in one round trip to the sandbox)."""
    calls = [dict(grads=g, **hp) for g in grads]
    calls[0].update(params=params0, state={})
    path, state = [], {}
    for out in getattr(code, STEP_FN[rule]).chain(calls, carry=("params", "state")):
        if not (isinstance(out, tuple) and len(out) == 2):
            raise AssertionError(M.say(M.WRONG_TYPE, what=_("{function}() return value").format(function=STEP_FN[rule]),
                                       case="", expected_type=_("a tuple (new_params, new_state)"),
                                       got_type=type(out).__name__))
        params, state = out
        path.append(params)
    return path, state


def check_path(got, want, *, rule: str, case: str):
    for t, (a, e) in enumerate(zip(got, want), start=1):
        assert_close(a, e, what=_("{rule} parameters after step {step}").format(rule=rule, step=t), case=case,
                     rtol=RTOL, atol=ATOL)


def check_state(got: dict, want: dict, *, case: str):
    """The optimizer state after the replay, key by key: a step count exactly, a buffer to the tolerance."""
    assert_keys(got, want.keys(), what=_("optimizer state"), case=case)
    for key, value in want.items():
        if np.ndim(value) == 0:
            assert_scalar(got[key], value, what=f"state[{key!r}]", case=case, rtol=0)
        else:
            assert_close(got[key], value, what=f"state[{key!r}]", case=case, rtol=RTOL, atol=ATOL)


def fmt(hp: dict) -> str:
    """Hyperparameters for a case string: their names, never their values (the case's inputs)."""
    return _("options {names}").format(names=", ".join(hp))


GRADIENT_SIZE = {1.0: N_("gradients of size about 1"), 1e-3: N_("small gradients (eps matters)")}


def problem(rng, shape=(4, 3), scale=1.0, steps=STEPS):
    return rng.normal(size=shape), [scale * rng.normal(size=shape) for _step in range(steps)]


def check_at_gradient_sizes(student, rng, rule: str, name: str, cases):
    """``rule`` against torch on a fresh problem per (gradient scale, hyperparameters) case."""
    for scale, hp in cases:
        params0, grads = problem(rng, scale=scale)
        want, _state = torch_replay(rule, params0, grads, hp)
        got, _state = student_replay(student, rule, params0, grads, hp)
        check_path(got, want, rule=name,
                   case=_("{steps} steps, {gradients}, {hparams}").format(steps=STEPS, gradients=_(GRADIENT_SIZE[scale]),
                                                                           hparams=fmt(hp)))


# -- update_rules ------------------------------------------------------------------
@pytest.mark.question("update_rules")
def test_sgd_plain_matches_torch(student, rng):
    """Plain SGD, with and without (coupled) weight decay."""
    params0, grads = problem(rng)
    for hp in ({"lr": 0.1}, {"lr": 0.05, "weight_decay": 0.1}):
        want, _state = torch_replay("sgd", params0, grads, hp)
        got, _state = student_replay(student, "sgd", params0, grads, hp)
        check_path(got, want, rule="SGD", case=_("{steps} steps, {hparams}").format(steps=STEPS, hparams=fmt(hp)))


@pytest.mark.question("update_rules")
def test_sgd_momentum_matches_torch(student, rng):
    """Momentum: the buffer starts at the first gradient, dampening 0."""
    params0, grads = problem(rng)
    for hp in ({"lr": 0.05, "momentum": 0.9}, {"lr": 0.01, "momentum": 0.5, "weight_decay": 0.05}):
        want, _state = torch_replay("sgd", params0, grads, hp)
        got, _state = student_replay(student, "sgd", params0, grads, hp)
        check_path(got, want, rule=_("SGD with momentum"),
                   case=_("{steps} steps, {hparams}").format(steps=STEPS, hparams=fmt(hp)))


@pytest.mark.question("update_rules")
def test_rmsprop_matches_torch(student, rng):
    """RMSprop: eps outside the square root (the second case makes eps matter)."""
    check_at_gradient_sizes(student, rng, "rmsprop", "RMSprop", (
        (1.0, {"lr": 0.01}),
        (1e-3, {"lr": 0.01, "alpha": 0.9, "eps": 1e-4, "weight_decay": 0.01}),
    ))


@pytest.mark.question("update_rules")
def test_adam_matches_torch(student, rng):
    """Adam: bias correction, and eps added after it (the second case makes eps matter)."""
    check_at_gradient_sizes(student, rng, "adam", "Adam", (
        (1.0, {"lr": 1e-2}),
        (1e-3, {"lr": 1e-2, "betas": (0.8, 0.99), "eps": 1e-3, "weight_decay": 0.01}),
    ))


@pytest.mark.question("update_rules")
def test_state_matches_torch_state(student, rng):
    """The returned state has torch's keys and values after many steps."""
    params0, grads = problem(rng, shape=(3, 5))
    cases = (
        ("sgd", {"lr": 0.1}),
        ("sgd", {"lr": 0.1, "momentum": 0.9}),
        ("rmsprop", {"lr": 0.01}),
        ("adam", {"lr": 0.01}),
    )
    for rule, hp in cases:
        _path, want = torch_replay(rule, params0, grads, hp)
        _path, got = student_replay(student, rule, params0, grads, hp)
        case = _("{rule}, {hparams}, after {steps} steps").format(rule=rule, hparams=fmt(hp), steps=STEPS)
        check_state(got, want, case=case)


@pytest.mark.question("update_rules")
def test_random_hyperparameters_match_reference(student, reference, rng):
    """Seeded random shapes and hyperparameters, compared with the reference."""
    shape = tuple(int(n) for n in rng.integers(1, 6, size=2))
    params0, grads = problem(rng, shape=shape, scale=float(10 ** rng.uniform(-3, 0)), steps=20)
    cases = (
        ("sgd", {"lr": float(rng.uniform(0.01, 0.2)), "momentum": float(rng.uniform(0.5, 0.95)),
                 "weight_decay": float(rng.uniform(0, 0.1))}),
        ("rmsprop", {"lr": float(rng.uniform(1e-3, 1e-1)), "alpha": float(rng.uniform(0.8, 0.999)),
                     "eps": float(10 ** rng.uniform(-8, -3))}),
        ("adam", {"lr": float(rng.uniform(1e-3, 1e-1)), "betas": (float(rng.uniform(0.8, 0.95)), float(rng.uniform(0.9, 0.9999))),
                  "eps": float(10 ** rng.uniform(-8, -3)), "weight_decay": float(rng.uniform(0, 0.1))}),
    )
    for rule, hp in cases:
        want, _state = student_replay(reference, rule, params0, grads, hp)
        got, _state = student_replay(student, rule, params0, grads, hp)
        # issue 27: a random shape, never its drawn size
        check_path(got, want, rule=rule, case=_("a random shape, 20 steps, random {hparams}").format(hparams=fmt(hp)))


# -- adamw ---------------------------------------------------------------------------
# AdamW removes lr * weight_decay of every parameter per step, outside the moments
# (torch.optim.AdamW).  The cases make each known mistake visible: the decay added to the
# gradient (L2, as Adam does it: any weight_decay > 0), the decay without lr (any lr != 1),
# and the decay applied to the updated parameters, which differs by lr^2 * weight_decay
# times the update per step: the strong-decay case makes that about 1e-3 per step.
ADAMW_CASES = (
    (1.0, {"lr": 1e-2}),  # torch's default weight_decay, 0.01 (the docstring's default)
    (1e-3, {"lr": 1e-2, "betas": (0.8, 0.99), "eps": 1e-3, "weight_decay": 0.1}),  # eps matters
    (1.0, {"lr": 0.05, "weight_decay": 0.5}),  # a strong decay: when it is applied shows
)


@pytest.mark.question("adamw", points=2)
def test_adamw_matches_torch(student, rng):
    """AdamW against torch.optim.AdamW on the same gradients, after every step, then random shapes and
    hyperparameters."""
    check_at_gradient_sizes(student, rng, "adamw", "AdamW", ADAMW_CASES)
    for draw in range(1, 3):
        shape = tuple(int(n) for n in rng.integers(1, 6, size=int(rng.integers(1, 4))))
        params0, grads = problem(rng, shape=shape, scale=float(10 ** rng.uniform(-3, 0)), steps=30)
        hp = {"lr": float(10 ** rng.uniform(-3, -1)), "betas": (float(rng.uniform(0.8, 0.95)), float(rng.uniform(0.9, 0.9999))),
              "eps": float(10 ** rng.uniform(-8, -4)), "weight_decay": float(rng.uniform(0.01, 1.0))}
        want, _state = torch_replay("adamw", params0, grads, hp)
        got, _state = student_replay(student, "adamw", params0, grads, hp)
        # issue 27: a random shape, never its drawn size
        check_path(got, want, rule="AdamW", case=_("random draw {draw} of 2: a random shape, 30 steps, random {hparams}")
                   .format(draw=draw, hparams=fmt(hp)))


@pytest.mark.question("adamw")
def test_adamw_decay_alone_is_the_same_fraction_everywhere(student, rng):
    """With zero gradients the Adam part of the step is 0 (both moments stay 0), so n steps multiply every
    parameter by (1 - lr * weight_decay)^n, however large or small it is: derived by hand, not from torch."""
    params0 = rng.normal(size=(3, 4)) * 10 ** rng.uniform(-2, 2, size=(3, 4))  # sizes over four decades
    lr, weight_decay, steps = 1e-2, 0.1, 20
    calls = [dict(grads=np.zeros_like(params0), lr=lr, weight_decay=weight_decay) for _step in range(steps)]
    calls[0].update(params=params0, state={})
    params, state = student.adamw_step.chain(calls, carry=("params", "state"))[-1]
    assert_close(params, params0 * (1 - lr * weight_decay) ** steps,
                 what=_("AdamW parameters after {steps} steps").format(steps=steps),
                 case=_("zero gradients, lr 1e-2, weight_decay 0.1: only the decay acts"), rtol=1e-12, atol=0)


@pytest.mark.question("adamw")
def test_adamw_state_is_adams(student, models, rng):
    """AdamW keeps Adam's state and nothing more: torch.optim.AdamW's keys and values, two arrays per
    parameter (the chapter: no extra memory, parameters plus state still 3x)."""
    model = models.build_model(dict(models.DEFAULT_CONFIG))
    opt = torch.optim.AdamW(model.parameters())
    models.loss_fn(model, models.make_batch(models.DEFAULT_CONFIG, n=8, seed=0)).backward()
    opt.step()
    per_element = sum(1 for p in model.parameters() for v in opt.state[p].values()
                      if torch.is_tensor(v) and v.shape == p.shape)
    grader_check(per_element == 2 * len(list(model.parameters())), "grader self-check: torch's AdamW keeps other state")
    params0, grads = problem(rng, shape=(3, 5))
    hp = {"lr": 0.01, "weight_decay": 0.1}
    _path, want = torch_replay("adamw", params0, grads, hp)
    _path, got = student_replay(student, "adamw", params0, grads, hp)
    case = _("AdamW, {hparams}, after {steps} steps").format(hparams=fmt(hp), steps=STEPS)
    check_state(got, want, case=case)


# -- trajectories --------------------------------------------------------------------
# A trajectory is a long chain of floating-point steps, and some chains amplify
# rounding: on Rosenbrock, RMSprop at lr 1e-2 bounces across the valley so that
# a gradient written as the expanded polynomial 400x^3 - 400xy + 2x - 2 (the
# same function as autograd's) ends up 0.04 away after 63 steps.  A student
# cannot be asked to match autograd's evaluation order bit for bit.  So:
#
# * the fixed cases are chosen where trajectories do not amplify rounding;
# * every comparison allows, on top of rtol/atol, FACTOR times the case's own
#   sensitivity: how far torch's own trajectory moves when every gradient and
#   every step is off by a few ulps (RUNS replays).  Where a case is calm this
#   adds nothing; where it is chaotic it stops the test from demanding bits;
# * a random start that turns out sensitive is drawn again (up to DRAWS times).
EPS = float(np.finfo(np.float64).eps)
ULPS, RUNS, FACTOR, DRAWS = 4, 6, 100, 10
TRAJ_RTOL, TRAJ_ATOL = 1e-6, 1e-9
# its error's size: said in a fixed case as "wrong value" only (issue 27: labkit.messages.sized)
TRAJ_NOT_CLOSE = M.sized(N_("{what}{case}: max abs error {err} after step {step} (rtol={rtol:g}, atol={atol:g}, "
                            "plus this case's own sensitivity to rounding)"))


def torch_surface(surface: str, p: torch.Tensor) -> torch.Tensor:
    x, y = p[..., 0], p[..., 1]
    if surface == "quadratic":
        return 0.5 * x**2 + 10 * y**2
    return (1 - x) ** 2 + 100 * (y - x**2) ** 2


def term_scale(surface: str, p: torch.Tensor) -> torch.Tensor:
    """The size of the terms each gradient component sums, so rounding of any way of writing it is a few ulps of this."""
    x, y = p.detach().abs().unbind(-1)  # p: (2,) or (runs, 2)
    if surface == "quadratic":
        return torch.stack([x, 20 * y], dim=-1)
    return torch.stack([400 * x**3 + 400 * x * y + 2 * x + 2, 200 * y + 200 * x**2], dim=-1)


TRAJECTORY_CASES = {  # (surface, optimizer): (start, hparams for torch and the student); none amplifies rounding
    ("quadratic", "sgd"): ((-2.0, 1.0), {"lr": 0.09}),
    ("quadratic", "momentum"): ((-2.0, 1.0), {"lr": 0.02}),
    ("quadratic", "rmsprop"): ((-2.0, 1.0), {"lr": 0.05}),
    ("quadratic", "adam"): ((-2.0, 1.0), {"lr": 0.1}),
    ("rosenbrock", "sgd"): ((-1.5, 2.0), {"lr": 1e-3}),
    ("rosenbrock", "momentum"): ((-1.5, 2.0), {"lr": 5e-4, "momentum": 0.95}),
    ("rosenbrock", "rmsprop"): ((-1.5, 2.0), {"lr": 3e-3}),  # lr 1e-2, alpha 0.9 is chaotic (see above)
    ("rosenbrock", "adam"): ((-1.5, 2.0), {"lr": 0.05, "betas": (0.9, 0.99)}),
}


@batch_constant  # the same for every submission where the start is (the notebook's cases)
def torch_trajectory(surface, optimizer, start, steps, hparams) -> tuple[np.ndarray, np.ndarray]:
    """torch.optim's path on autograd's gradients, (steps + 1, 2), and its sensitivity: how far
    that path moves under a few ulps of rounding, the largest move over RUNS replays, (steps + 1, 2)."""
    jitter = np.random.default_rng(0)  # the grader's own noise, the same for every submission
    paths = torch_paths(surface, optimizer, start, steps, hparams, jitter)
    return paths[0], np.abs(paths[1:] - paths[0]).max(axis=0)


def torch_paths(surface, optimizer, start, steps, hparams, jitter):
    """(1 + RUNS, steps + 1, 2): replays of torch.optim from ``start`` on autograd's gradients, as
    one (1 + RUNS, 2) parameter: the four optimizers act elementwise, so each row is a run of its
    own (bit for bit what it is replayed alone: checked for every case at 15 starts when this
    was written).  Row 0 is the path itself; in each of the RUNS others every gradient and every
    step is moved by up to ULPS ulps of its own size (``jitter``: a numpy Generator)."""
    hp = dict(hparams)
    if optimizer == "momentum":
        hp.setdefault("momentum", 0.9)
    p = torch.tensor([start] * (1 + RUNS), dtype=torch.float64, requires_grad=True)
    opt = TORCH_OPTIM["sgd" if optimizer == "momentum" else optimizer]([p], **hp)
    path = [p.detach().clone()]
    for _step in range(steps):
        opt.zero_grad()
        torch_surface(surface, p).sum().backward()  # rows are independent: each gets its own gradient
        u = torch.from_numpy(jitter.uniform(-1, 1, size=(2, RUNS, 2)))
        p.grad[1:] += ULPS * EPS * term_scale(surface, p[1:]) * u[0]  # row 0: untouched
        before = p.detach().clone()
        opt.step()
        with torch.no_grad():
            p[1:] += ULPS * EPS * (p[1:] - before[1:]).abs() * u[1]
        path.append(p.detach().clone())
    return torch.stack(path, dim=1).numpy()


def check_trajectory(got, want, spread, *, what: str, case: str):
    """Each point within rtol/atol plus FACTOR times the case's sensitivity; the first step that is not, reported."""
    a = np.asarray(got)
    if a.shape != want.shape or a.dtype.kind not in "biuf":  # the plain checks say what is wrong
        assert_close(got, want, what=what, case=case, rtol=TRAJ_RTOL, atol=TRAJ_ATOL)
    a = a.astype(np.float64)
    allowed = TRAJ_ATOL + TRAJ_RTOL * np.abs(want) + FACTOR * spread
    err = np.abs(a - want)
    bad = ~(err <= allowed)  # NaN counts as bad
    if bad.any():
        step = int(np.argmax(bad.any(axis=1)))
        if not np.isfinite(a[step]).all():
            assert_close(got, want, what=what, case=case, rtol=TRAJ_RTOL, atol=TRAJ_ATOL)
        raise AssertionError(M.say(TRAJ_NOT_CLOSE, what=what, case=M.case_suffix(case), err=M.sig2(err[step].max()),
                                   step=step, rtol=TRAJ_RTOL, atol=TRAJ_ATOL))


@pytest.mark.question("trajectories")
def test_loss_surface_matches_autograd(student, rng):
    """Loss and gradient at worked points and at a seeded (3, 4, 2) grid, vs torch autograd."""
    worked = {  # point: loss, from the formulas in the docstring
        ("quadratic", (0.0, 0.0)): 0.0,
        ("quadratic", (-2.0, 1.0)): 12.0,
        ("rosenbrock", (1.0, 1.0)): 0.0,
        ("rosenbrock", (-1.5, 2.0)): 12.5,
    }
    for index, ((surface, point), loss) in enumerate(worked.items(), start=1):
        got_loss, _grad = student.loss_surface(surface=surface, xy=np.array(point))
        with M.fixed_case():  # issue 27: the same on every submission, so no direction
            assert_scalar(got_loss, loss, what=_("{surface} loss").format(surface=surface),
                          case=_("worked point {index} of 4").format(index=index), atol=1e-12)
    xy = rng.uniform(-2, 2, size=(3, 4, 2))
    for surface in ("quadratic", "rosenbrock"):
        p = torch.tensor(xy, requires_grad=True)
        want_loss = torch_surface(surface, p)
        want_loss.sum().backward()
        got_loss, got_grad = student.loss_surface(surface=surface, xy=xy)
        assert_close(got_loss, want_loss.detach().numpy(), what=_("{surface} loss").format(surface=surface),
                     case=_("xy of shape (3, 4, 2)"), rtol=1e-12, atol=1e-12)
        assert_close(got_grad, p.grad.numpy(), what=_("{surface} gradient").format(surface=surface),
                     case=_("xy of shape (3, 4, 2)"), rtol=1e-10, atol=1e-12)


@pytest.mark.question("trajectories")
def test_trajectories_match_torch(student):
    """Every optimizer on both surfaces, 100 steps, against torch.optim on autograd gradients."""
    steps = 100
    for (surface, optimizer), (start, hp) in TRAJECTORY_CASES.items():
        want, spread = torch_trajectory(surface, optimizer, start, steps, hp)
        got = student.trajectory(surface=surface, optimizer=optimizer, start=start, steps=steps, hparams=hp)
        check_trajectory(got, want, spread,
                         what=_("{optimizer} trajectory on {surface}").format(optimizer=optimizer, surface=surface),
                         case=_("the notebook's start, {hparams}, {steps} steps").format(hparams=fmt(hp), steps=steps))


def calm_start(rng, surface, optimizer, steps, hp):
    """A random start whose trajectory does not amplify rounding (redrawn up to DRAWS times), and its spread."""
    for _draw in range(DRAWS):
        start = tuple(float(v) for v in rng.uniform(-1.2, 1.2, size=2))
        base, spread = torch_trajectory(surface, optimizer, start, steps, hp)
        if (FACTOR * spread <= TRAJ_ATOL + TRAJ_RTOL * np.abs(base)).all():
            break
    return start, spread  # the last draw, if none was calm: its spread then widens the tolerance


@pytest.mark.question("trajectories")
def test_trajectories_match_reference(student, reference, rng):
    """Seeded random starting points, compared with the reference."""
    steps = 50
    for (surface, optimizer), (_start, hp) in TRAJECTORY_CASES.items():
        start, spread = calm_start(rng, surface, optimizer, steps, hp)
        want = reference.trajectory(surface=surface, optimizer=optimizer, start=start, steps=steps, hparams=hp)
        got = student.trajectory(surface=surface, optimizer=optimizer, start=start, steps=steps, hparams=hp)
        check_trajectory(got, np.asarray(want, dtype=np.float64), spread,
                         what=_("{optimizer} trajectory on {surface}").format(optimizer=optimizer, surface=surface),
                         case=_("a random start, {hparams}, {steps} steps").format(hparams=fmt(hp), steps=steps))
