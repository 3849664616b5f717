"""Lab 3, break it on purpose: "mixed precision as a toggle" (§8 Fallacies and Pitfalls).

The student writes the broken training step (the whole step in FP16: no FP32 master copy, no loss
scaling) and the fixed one (an FP32 master copy and loss scaling).  Each is checked by its symptom on a
model and run the test chooses: the broken run's loss stalls, because every update is below half the FP16
spacing next to its weight and rounds away; the fixed run's loss falls.  A "broken" step that is
accidentally right (it keeps an FP32 copy) loses fp16_toggle; a fixed step that forgets the master copy
loses fp16_master.  The ground truth is the test's own FP32-master run, never the reference module.

train_fp16_master's run is also compared step by step with that run (to within TRAJECTORY_ATOL, as its docstring
says): no gradient of this case underflows or overflows in FP16, so scaling by a power of two and
unscaling are exact, and every correct order of the update (unscale then lr, lr / loss_scale at once,
``add_(alpha=-lr)``, torch.optim.SGD on the masters) gives the run bit for bit.  A step that updates the
master with the still-scaled gradient moves 2^10 times too far at loss_scale=2^10 (its two runs differ);
one that records the loss after the update is one step ahead.  Whether the unscaling happens in FP32 is
not observable here: in this case the FP16 gradient divided by 2^10 loses nothing either.

The stalled case alone cannot tell a pure-FP16 run from one whose updates never land at all: an update
that rebinds a name (``p = p - lr * p.grad``) never changes the model, and a run in BF16 stalls the same
way.  So train_fp16_toggle also runs a case where FP16 updates do land (LANDING: lr=1e-2, the same model),
compared step by step with the test's own pure-FP16 run of the docstring's recipe, to within
LANDING_ATOL (the docstring's 0.01): every correct idiom of the in-place FP16 update (``p -= lr * p.grad``,
``p.add_(p.grad, alpha=-lr)``, torch.optim.SGD on the FP16 parameters) stays within 1e-3 of it over the
run, a BF16 run leaves it by about 0.14, and a run that never updates by the whole drop (about 1.5).
"""

import math

import pytest
import torch

from autograder.core.i18n import N_, _
from autograder.labkit import messages as M
from autograder.labkit.assertions import assert_close, assert_equal, assert_scalar

# one hidden layer, weights of std 0.3, biases frozen (a bias starts at 0, where no update rounds away):
# lr x grad stays below half the FP16 spacing of its weight for all but a few weights near 0 (6 of 1,856 at the
# first step; the notebook prints the share), while 20 updates add up in FP32
CONFIG = {"kind": "mlp", "n_layers": 1, "init_std": 0.3, "act": "relu",
          "frozen": ["inp.bias", "blocks.0.fc.bias", "out.bias"]}
RUN = dict(batch_size=64, lr=1e-5, steps=20)
SCALE = 2.0**10
# per-step tolerance against the test's own FP32-master run (the docstring's 1e-5): ~0.5% of its drop;
# every correct order of the update matches it exactly, a run one step ahead is off by up to ~6e-4
TRAJECTORY_ATOL = 1e-5
CASE = N_("a one-layer ReLU MLP, biases frozen, B=64, lr=1e-5, 20 steps")

FELL = N_("{what}{case}: the loss fell by {drop} over the run; done wholly in FP16, every update of this run "
          "is below half the FP16 spacing next to its weight and should round away, so the loss should stall. "
          "Keep no FP32 copy of the weights: update the FP16 parameters themselves")
SCALE_CHANGES = N_("{what}{case}: the losses differ from those of your own run at loss_scale=1; in this case "
                   "no gradient underflows or overflows, so scaling the loss by a power of two and dividing the "
                   "gradient by the same scale before the update must give the same run: is the gradient "
                   "unscaled (divided by loss_scale) before it updates the master?")
# where FP16 updates land: lr x grad is well above half the FP16 spacing of most weights
LANDING = dict(batch_size=64, lr=1e-2, steps=20)
LANDING_ATOL = 1e-2
LANDING_CASE = N_("a one-layer ReLU MLP, biases frozen, B=64, lr=1e-2, 20 steps: updates large enough to change "
                  "FP16 weights")
NEVER_LANDS = N_("{what}{case}: the loss did not fall, though in this case the FP16 updates are large enough to "
                 "change the weights; the update must change the model's own FP16 parameters in place "
                 "(p -= lr * p.grad under torch.no_grad()): p = p - lr * p.grad only rebinds a name")
OFF_FP16_RUN = N_("{what}{case}: at some step the loss is more than 0.01 away from the test's own run of the "
                  "docstring's recipe; is every floating tensor in torch.float16 (model.half(), the inputs "
                  "cast to torch.float16: not bfloat16, not float32), and is every step's update p -= lr * p.grad "
                  "on the FP16 parameters, with no scaling and no FP32 copy, each loss recorded before its step's "
                  "update?")
STALLED = N_("{what}{case}: the loss did not fall; the updates of this run are too small to change an FP16 "
             "weight, so they must be added to an FP32 master copy, which is then copied into the FP16 model")


def _truth(models):
    """The losses of an FP32-master run (the test's own), one per step, each before its update."""
    model = models.build_model(CONFIG)
    params = [p for p in model.parameters() if p.requires_grad]
    masters = [p.detach().clone() for p in params]
    model = model.half()
    x, y = models.make_batch(CONFIG, RUN["batch_size"], seed=0)
    batch = (x.half(), y)
    losses = []
    for _step in range(RUN["steps"]):
        loss = models.forward_loss(model, batch)
        losses.append(float(loss.detach()))
        loss.backward()
        with torch.no_grad():
            for p, m in zip(params, masters):
                m -= RUN["lr"] * p.grad.float()
                p.copy_(m)
                p.grad = None
    return losses


def _fp16_truth(models, run: dict):
    """The losses of a pure-FP16 run (the test's own, the docstring's recipe), one per step, each before its
    update: the model in FP16 with no FP32 copy, ``p -= lr * p.grad`` in place."""
    model = models.build_model(CONFIG).half()
    params = [p for p in model.parameters() if p.requires_grad]
    x, y = models.make_batch(CONFIG, run["batch_size"], seed=0)
    batch = (x.half(), y)
    losses = []
    for _step in range(run["steps"]):
        loss = models.forward_loss(model, batch)
        losses.append(float(loss.detach()))
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= run["lr"] * p.grad
                p.grad = None
    return losses


def _losses(got, what, case, steps=RUN["steps"]):
    ok = isinstance(got, (list, tuple)) and len(got) == steps and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in got)
    assert_equal(ok, True, what=_("{what}: a list of {n} finite float losses, one per step").format(
        what=what, n=steps), case=case)
    return [float(v) for v in got]


@pytest.mark.question("fp16_toggle")
def test_toggle_stalls_and_lands_in_fp16(student, lab3):
    """Where every update is below half an FP16 spacing the loss stalls; where updates land, the run is the
    test's own pure-FP16 run, step by step (a rebinding update or a BF16 run stalls in the first case too)."""
    case, what = _(CASE), "train_fp16_toggle"
    truth = _truth(lab3.models)
    first, drop = truth[0], truth[0] - truth[-1]
    losses = _losses(student.train_fp16_toggle(config=CONFIG, **RUN), what, case)
    assert_scalar(losses[0], first, what=_("{what}: the first loss (before any update)").format(what=what),
                  case=case, rtol=1e-3)
    fell = losses[0] - losses[-1]
    if abs(fell) > 0.05 * drop:  # the master run's drop is ~2000x the stalled one's
        raise AssertionError(M.say(FELL, what=what, case=M.case_suffix(case), drop=f"{fell:.2g}"))

    case = _(LANDING_CASE)
    truth = _fp16_truth(lab3.models, LANDING)
    losses = _losses(student.train_fp16_toggle(config=CONFIG, **LANDING), what, case, LANDING["steps"])
    if losses[0] - losses[-1] < 0.5 * (truth[0] - truth[-1]):
        raise AssertionError(M.say(NEVER_LANDS, what=what, case=M.case_suffix(case)))
    if max(abs(a - b) for a, b in zip(losses, truth)) > LANDING_ATOL:  # no value of the run in the message
        raise AssertionError(M.say(OFF_FP16_RUN, what=what, case=M.case_suffix(case)))


@pytest.mark.question("fp16_master")
def test_master_copy_and_scaling_fall(student, lab3):
    case, what = _(CASE), "train_fp16_master"
    truth = _truth(lab3.models)
    first, drop = truth[0], truth[0] - truth[-1]
    unscaled = None  # the student's own run at loss_scale=1
    for scale in (1.0, SCALE):
        scase = f"{case}, loss_scale={'2^10' if scale == SCALE else '1'}"
        losses = _losses(student.train_fp16_master(config=CONFIG, loss_scale=scale, **RUN), what, scase)
        # the same FP16 model and batch before any update: any correct run gives this loss exactly
        assert_scalar(losses[0], first, what=_("{what}: the first loss (before any update)").format(what=what),
                      case=scase, rtol=1e-6)
        if losses[0] - losses[-1] < 0.5 * drop:
            raise AssertionError(M.say(STALLED, what=what, case=M.case_suffix(scase)))
        if unscaled is None:
            unscaled = losses
        elif max(abs(a - b) for a, b in zip(losses, unscaled)) > TRAJECTORY_ATOL:
            # the student's two runs against each other: no hidden value in this message
            raise AssertionError(M.say(SCALE_CHANGES, what=what, case=M.case_suffix(scase)))
        assert_close(losses, truth, what=_("{what}: the loss at each step, against the test's own run with an "
                                           "FP32 master copy").format(what=what),
                     case=scase, rtol=0.0, atol=TRAJECTORY_ATOL)
