"""Lab 3, break it on purpose: "mixed precision as a toggle" (§8 Fallacies and Pitfalls).

The student writes the broken training step (the whole step in FP16: no FP32 master copy, no loss
scaling) and the fixed one (an FP32 master copy and loss scaling).  Each is checked by its symptom on a
model and run the test chooses: the broken run's loss stalls, because every update is below half the FP16
spacing next to its weight and rounds away; the fixed run's loss falls.  A "broken" step that is
accidentally right (it keeps an FP32 copy) loses fp16_toggle; a fixed step that forgets the master copy
loses fp16_master.  The ground truth is the test's own FP32-master run, never the reference module.
"""

import math

import pytest
import torch

from autograder.core.i18n import N_, _
from autograder.labkit import messages as M
from autograder.labkit.assertions import assert_equal, assert_scalar

# one hidden layer, weights of std 0.3, biases frozen (a bias starts at 0, where no update rounds away):
# lr x grad stays below half the FP16 spacing of every weight, while 20 updates add up in FP32
CONFIG = {"kind": "mlp", "n_layers": 1, "init_std": 0.3, "act": "relu",
          "frozen": ["inp.bias", "blocks.0.fc.bias", "out.bias"]}
RUN = dict(batch_size=64, lr=1e-5, steps=20)
SCALE = 2.0**10
CASE = N_("a one-layer ReLU MLP, biases frozen, B=64, lr=1e-5, 20 steps")

FELL = N_("{what}{case}: the loss fell by {drop} over the run; done wholly in FP16, every update of this run "
          "is below half the FP16 spacing next to its weight and should round away, so the loss should stall. "
          "Keep no FP32 copy of the weights: update the FP16 parameters themselves")
STALLED = N_("{what}{case}: the loss did not fall; the updates of this run are too small to change an FP16 "
             "weight, so they must be added to an FP32 master copy, which is then copied into the FP16 model")


def _truth(models):
    """The initial FP16 loss and the loss drop of an FP32-master run (the test's own)."""
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
    return losses[0], losses[0] - losses[-1]


def _losses(got, what, case):
    ok = isinstance(got, (list, tuple)) and len(got) == RUN["steps"] and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in got)
    assert_equal(ok, True, what=_("{what}: a list of {n} finite float losses, one per step").format(
        what=what, n=RUN["steps"]), case=case)
    return [float(v) for v in got]


@pytest.mark.question("fp16_toggle")
def test_toggle_stalls(student, lab3):
    case, what = _(CASE), "train_fp16_toggle"
    first, drop = _truth(lab3.models)
    losses = _losses(student.train_fp16_toggle(config=CONFIG, **RUN), what, case)
    assert_scalar(losses[0], first, what=_("{what}: the first loss (before any update)").format(what=what),
                  case=case, rtol=1e-3)
    fell = losses[0] - losses[-1]
    if abs(fell) > 0.05 * drop:  # the master run's drop is ~2000x the stalled one's
        raise AssertionError(M.say(FELL, what=what, case=M.case_suffix(case), drop=f"{fell:.2g}"))


@pytest.mark.question("fp16_master")
def test_master_copy_and_scaling_fall(student, lab3):
    case, what = _(CASE), "train_fp16_master"
    first, drop = _truth(lab3.models)
    for scale in (1.0, SCALE):
        scase = f"{case}, loss_scale={'2^10' if scale == SCALE else '1'}"
        losses = _losses(student.train_fp16_master(config=CONFIG, loss_scale=scale, **RUN), what, scase)
        assert_scalar(losses[0], first, what=_("{what}: the first loss (before any update)").format(what=what),
                      case=scase, rtol=1e-3)
        if losses[0] - losses[-1] < 0.5 * drop:
            raise AssertionError(M.say(STALLED, what=what, case=M.case_suffix(scase)))
