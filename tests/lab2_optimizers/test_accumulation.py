"""Hidden tests, Lab 2: gradient accumulation (the project's flagship negative tests).

Ground truth is computed here on the trusted ``lab2_models``: the gradient of
the mean loss over the *whole* big batch, and plain SGD on it, step after
step.  The messages name the symptom of each known bug without revealing a
value:

* no division by k (the chapter's bug A) -> "it is 4.0x the big-batch gradient" (ratio, 2 significant figures);
* no zero_grad() between two steps (stale gradients, the chapter's bug B, §3.2.4 Framework optimizer
  interface and scheduling) -> "step 1 matches but step 2 does not: ... stale";
* zero_grad() inside the micro-batch loop (the other misplacement, not in the chapter) -> "it equals only the
  last micro-batch's gradient";
* unweighted mean with a short last micro-batch -> "the plain average of the
  micro-batch means";
* no split at all -> "the model saw 12 examples at once: split the batch";
* the k losses summed and back-propagated once -> "no gradient flowed back
  through forward 1 ... before the next forward".

The last two cannot be seen in the numbers (both give exactly the big-batch
gradient), so they are observed by the trusted model itself: ``lab2_models``
records every forward (how many examples, a digest of which, and whether a
gradient came back through it before the next forward), the student returns
that log as ``"forward_log"``, and the test compares it with the
micro-batches it computes from the batches it passed in (``docs/lab2.md``).
"""

import numpy as np
import pytest
import torch

from autograder.labkit import messages as M
from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_close, assert_keys, assert_scalar, ratio

# Lab-specific symptoms, in the style of autograder.labkit.messages (no expected values).
STEP_SYMPTOM = N_("{what}{case}: step 1 matches but step {step} does not")
STALE_SYMPTOM = N_("{what}{case}: step 1 matches but step {step} does not: it equals this step's gradient plus "
                   "the previous step's, a stale gradient from the previous step (where is zero_grad()?)")
TOO_MANY_AT_ONCE = N_("{what}{case}: the model saw {n} examples at once: split the batch "
                      "(at most {b} examples per forward)")
FORWARD_COUNT = N_("{what}{case}: the model ran {got} forward(s); one per micro-batch is {want}")
FORWARD_SIZE = N_("{what}{case}: forward {index} saw {got} examples, but micro-batch {micro} of step {step} "
                  "has {want}")
# issue 27: in a drawn case the counts above would give drawn inputs away (micro_batch_size, the batch, k x steps)
TOO_MANY_AT_ONCE_DRAWN = N_("{what}{case}: the model saw more examples at once than micro_batch_size: split the batch")
FORWARD_COUNT_DRAWN = N_("{what}{case}: the model ran another number of forwards than one per micro-batch")
FORWARD_SIZE_DRAWN = N_("{what}{case}: forward {index} saw another number of examples than micro-batch {micro} of "
                        "step {step} has")
BACKWARD_LATE = N_("{what}{case}: no gradient flowed back through forward {index} (micro-batch {micro} of step "
                   "{step}) before the next forward: call backward() on each micro-batch's loss before the next "
                   "micro-batch goes in; summing the losses and calling backward() once keeps every micro-batch's "
                   "activations alive at once, so nothing is saved")
FORWARD_DATA = N_("{what}{case}: forward {index} did not see the examples of micro-batch {micro} of step {step}: "
                  "keep the examples in order, one forward per micro-batch")
LAST_ONLY_SYMPTOM = N_("{what}{case}: it equals only the last micro-batch's gradient, scaled by its share of the "
                       "examples: the gradients were cleared between micro-batches (zero_grad() inside the "
                       "micro-batch loop?); clear them once per big batch")
UNWEIGHTED_SYMPTOM = N_("{what}{case}: it equals the plain average of the micro-batch means, which gives the "
                        "short last micro-batch too much weight; weight each micro-batch by its size")

RTOL, ATOL = 1e-9, 1e-12  # float64 model: only summation order differs
NAMES = ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")


def make_case(models, *, seed: int, B: int, steps: int, d_hidden: int = 16):
    """A config, initial parameters from *another* seed (so loading them matters), and big batches."""
    config = {**models.DEFAULT_CONFIG, "d_hidden": d_hidden, "seed": seed, "dtype": "float64"}
    state_dict = models.build_model({**config, "seed": seed + 1}).state_dict()
    batches = [models.make_batch(config, n=B, seed=seed * 100 + t) for t in range(steps)]
    return config, state_dict, batches


def big_batch_truth(models, config, state_dict, batches, lr):
    """Plain SGD on the full-batch mean loss: the gradient of each step, the final parameters."""
    model = models.build_model(config)
    model.load_state_dict(state_dict)
    grads = []
    for batch in batches:
        model.zero_grad(set_to_none=True)
        models.loss_fn(model, batch).backward()  # the whole big batch at once
        grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
    return grads, {n: p.detach().clone() for n, p in model.named_parameters()}


def unweighted_mean_gradient(models, config, state_dict, batch, b):
    """What averaging the micro-batch means with weight 1/k gives (for the symptom only)."""
    model = models.build_model(config)
    model.load_state_dict(state_dict)
    B = len(batch["y"])
    chunks = [{k: v[i : i + b] for k, v in batch.items()} for i in range(0, B, b)]
    for chunk in chunks:
        (models.loss_fn(model, chunk) / len(chunks)).backward()
    return {n: p.grad.detach().clone() for n, p in model.named_parameters()}


def last_micro_batch_gradient(models, config, state_dict, batches, b):
    """What clearing before every micro-batch leaves of the first step (for the symptom only)."""
    grads, _params = trusted_accumulation(models, config, state_dict, batches[:1], b, lr=0.1, scale=True,
                                          zero_inside=True)
    return grads[0]


def expected_forwards(models, batches, b) -> list[tuple[int, int, int, str]]:
    """(step, micro-batch, examples, digest) of every forward the contract implies, in order."""
    out = []
    for t, batch in enumerate(batches, start=1):
        x = batch["x"]
        for j, i in enumerate(range(0, len(x), b)):
            out.append((t, j, len(x[i : i + b]), models.batch_digest(x[i : i + b])))
    return out


def check_forward_log(models, log, batches, b, *, case: str):
    """The trusted model's record of what went through it: one forward per micro-batch, in order."""
    what = "forward_log"
    sfx = M.case_suffix(case)
    if not isinstance(log, (list, tuple)):
        raise AssertionError(M.say(M.WRONG_TYPE, what=what, case=sfx, expected_type=_("a list (model.forward_log)"),
                                   got_type=M.student_text(type(log).__name__, limit=60)))
    for entry in log:
        assert_keys(entry, ("examples", "digest", "backward"), what=_("an entry of forward_log"), case=case)
    sizes = [entry["examples"] for entry in log]
    for n in sizes:
        if not isinstance(n, int) or isinstance(n, bool):
            raise AssertionError(M.say(M.WRONG_TYPE, what=_("an entry of forward_log"), case=sfx,
                                       expected_type=_("an int number of examples"),
                                       got_type=M.student_text(type(n).__name__, limit=60)))
    counts = M.in_fixed_case()  # issue 27: only where the inputs are the same on every submission
    if sizes and max(sizes) > b:  # the symptom first: this is what accumulation exists to avoid
        raise AssertionError(M.say(TOO_MANY_AT_ONCE if counts else TOO_MANY_AT_ONCE_DRAWN,
                                   what=_("the model's forward log"), case=sfx, n=max(sizes), b=b))
    want = expected_forwards(models, batches, b)
    if len(log) != len(want):
        raise AssertionError(M.say(FORWARD_COUNT if counts else FORWARD_COUNT_DRAWN, what=_("the model's forward log"),
                                   case=sfx, got=len(log), want=len(want)))
    for index, (entry, (step, micro, n, digest)) in enumerate(zip(log, want), start=1):
        if entry["examples"] != n:
            raise AssertionError(M.say(FORWARD_SIZE if counts else FORWARD_SIZE_DRAWN, what=_("the model's forward log"),
                                       case=sfx, index=index, got=entry["examples"], micro=micro, step=step, want=n))
        if entry["digest"] != digest:
            raise AssertionError(M.say(FORWARD_DATA, what=_("the model's forward log"), case=sfx, index=index,
                                       micro=micro, step=step))
        if entry["backward"] is not True:  # the point of accumulating: one micro-batch's graph alive at a time
            raise AssertionError(M.say(BACKWARD_LATE, what=_("the model's forward log"), case=sfx, index=index,
                                       micro=micro, step=step))


def run_student(student, config, state_dict, batches, b, lr, *, models, case: str = ""):
    out = student.accumulate_and_step(config=config, state_dict=state_dict, batches=batches, micro_batch_size=b, lr=lr)
    assert_keys(out, ("grads", "params", "forward_log"), what=_("accumulate_and_step result"), case=case)
    assert_scalar(len(out["grads"]), len(batches), what=_("number of recorded gradients (one per step)"), case=case,
                  rtol=0)
    assert_keys(out["params"], NAMES, what="params", case=case)
    for t, g in enumerate(out["grads"], start=1):
        assert_keys(g, NAMES, what=_("gradient of step {step}").format(step=t), case=case)
    check_forward_log(models, out["forward_log"], batches, b, case=case)
    return out


def _close(a, e) -> bool:
    a, e = np.asarray(a, dtype=np.float64), np.asarray(e, dtype=np.float64)
    return a.shape == e.shape and bool(np.allclose(a, e, rtol=RTOL, atol=ATOL))


def check_big_batch_gradient(got: dict, want: dict, *, case: str, last_only: dict | None = None):
    """Each parameter's gradient; a scaled copy of the right one is reported as a ratio, and the last
    micro-batch's share alone (``last_only``, when given) as gradients cleared inside the loop."""
    for name in NAMES:
        a, e = got[name], want[name]
        what = _("gradient of {name}").format(name=name)
        if np.shape(a) == tuple(e.shape) and not _close(a, e):
            if last_only is not None and _close(a, last_only[name]):
                raise AssertionError(M.say(LAST_ONLY_SYMPTOM, what=what, case=M.case_suffix(case)))
            flat_a, flat_e = np.asarray(a, dtype=np.float64).ravel(), e.double().numpy().ravel()
            cos = flat_a @ flat_e / (np.linalg.norm(flat_a) * np.linalg.norm(flat_e) + 1e-300)
            if cos > 1 - 1e-9:  # the right direction, the wrong size: a missing or extra factor
                raise AssertionError(M.say(M.RATIO_SYMPTOM,
                    what=what, case=M.case_suffix(case), ratio=ratio(a, e), reference_name=_("the big-batch gradient")))
        assert_close(a, e, what=what, case=case, rtol=RTOL, atol=ATOL)


# -- accumulation: equal micro-batches --------------------------------------------------
@pytest.mark.question("accumulation", points=2)
def test_first_step_gradient_is_big_batch_gradient(student, models):
    """k equal micro-batches give exactly the gradient of the big batch's mean loss."""
    for B, b in ((12, 3), (16, 4), (6, 2), (8, 8)):
        config, state_dict, batches = make_case(models, seed=B + b, B=B, steps=1)
        want, _params = big_batch_truth(models, config, state_dict, batches, lr=0.1)
        case = _("micro-batch {b}, k={k}").format(b=b, k=B // b)
        out = run_student(student, config, state_dict, batches, b, lr=0.1, models=models, case=case)
        check_big_batch_gradient(out["grads"][0], want[0], case=case,
                                 last_only=last_micro_batch_gradient(models, config, state_dict, batches, b))


def check_every_step(got_grads: list, want_grads: list, *, case: str):
    """Step 1 as above; at a later step, tell a stale gradient from any other divergence."""
    check_big_batch_gradient(got_grads[0], want_grads[0], case=case)
    for t in range(1, len(want_grads)):
        for name in NAMES:
            a, e = got_grads[t][name], want_grads[t][name]
            if _close(a, e):
                continue
            # stale: what was left in .grad by the previous step, plus this step's own gradient
            stale = _close(np.asarray(a, dtype=np.float64) - e.double().numpy(), got_grads[t - 1][name])
            template = STALE_SYMPTOM if stale else STEP_SYMPTOM
            raise AssertionError(M.say(template, what=_("gradient of {name}").format(name=name),
                                       case=M.case_suffix(case), step=t + 1))


@pytest.mark.question("accumulation")
def test_every_step_gradient_is_big_batch_gradient(student, models):
    """Over 3 optimizer steps, each step's gradient is its own big batch's, nothing carried over."""
    B, b, steps, lr = 12, 4, 3, 0.5
    config, state_dict, batches = make_case(models, seed=3, B=B, steps=steps)
    want, _params = big_batch_truth(models, config, state_dict, batches, lr)
    case = _("micro-batch {b}, k={k}, {steps} steps").format(b=b, k=B // b, steps=steps)
    out = run_student(student, config, state_dict, batches, b, lr, models=models, case=case)
    check_every_step(out["grads"], want, case=case)


@pytest.mark.question("accumulation")
def test_parameters_after_several_steps(student, models):
    """After 4 SGD steps with accumulation, the parameters equal big-batch SGD's."""
    B, b, steps, lr = 15, 5, 4, 0.5
    config, state_dict, batches = make_case(models, seed=11, B=B, steps=steps, d_hidden=12)
    _grads, want = big_batch_truth(models, config, state_dict, batches, lr)
    case = _("micro-batch {b}, k={k}, {steps} steps").format(b=b, k=B // b, steps=steps)
    out = run_student(student, config, state_dict, batches, b, lr, models=models, case=case)
    for name in NAMES:
        assert_close(out["params"][name], want[name],
                     what=_("{name} after {steps} optimizer steps").format(name=name, steps=steps),
                     case=case, rtol=RTOL, atol=ATOL)


@pytest.mark.question("accumulation")
def test_float32_config_comes_back_in_float32(student, models):
    """The contract's "detached copies in the config's dtype": a float32 model returns float32 gradients and
    parameters (close to big-batch SGD's, at float32's precision)."""
    B, b, steps, lr = 8, 4, 2, 0.5
    config, state_dict, batches = make_case(models, seed=17, B=B, steps=steps)
    config = {**config, "dtype": "float32"}
    state_dict = {n: t.float() for n, t in state_dict.items()}
    batches = [{"x": batch["x"].float(), "y": batch["y"]} for batch in batches]
    grads, params = big_batch_truth(models, config, state_dict, batches, lr)
    case = _("a float32 config, micro-batch {b}, k={k}, {steps} steps").format(b=b, k=B // b, steps=steps)
    out = run_student(student, config, state_dict, batches, b, lr, models=models, case=case)
    returned = [(_("gradient of {name}").format(name=n), g[n]) for g in out["grads"] for n in NAMES]
    returned += [(_("{name} after the last step").format(name=n), out["params"][n]) for n in NAMES]
    for what, value in returned:
        kind = str(getattr(value, "dtype", type(value).__name__)).removeprefix("torch.")
        if kind != "float32":
            raise AssertionError(M.say(M.WRONG_TYPE, what=what, case=M.case_suffix(case),
                                       expected_type=_("float32 (the config's dtype)"),
                                       got_type=M.student_text(kind, limit=40)))
    for t, g in enumerate(out["grads"]):
        for name in NAMES:
            assert_close(g[name], grads[t][name], what=_("gradient of {name}").format(name=name), case=case,
                         rtol=1e-4, atol=1e-6)


@pytest.mark.question("accumulation")
def test_random_cases_match_reference(student, reference, models, rng):
    """Seeded random sizes, seeds and learning rate (equal micro-batches), vs the reference."""
    b, k, steps = int(rng.integers(1, 6)), int(rng.integers(2, 5)), int(rng.integers(2, 4))
    lr = float(rng.uniform(0.05, 1.0))
    config, state_dict, batches = make_case(models, seed=int(rng.integers(0, 10_000)), B=b * k, steps=steps,
                                            d_hidden=int(rng.integers(4, 20)))
    want = reference.accumulate_and_step(config=config, state_dict=state_dict, batches=batches, micro_batch_size=b, lr=lr)
    case = _("a random micro-batch size, k and number of steps, a random learning rate")  # issue 27: never drawn values
    out = run_student(student, config, state_dict, batches, b, lr, models=models, case=case)
    check_every_step(out["grads"], want["grads"], case=case)
    for name in NAMES:
        assert_close(out["params"][name], want["params"][name],
                     what=_("{name} after the last step").format(name=name), case=case, rtol=RTOL, atol=ATOL)


# -- accumulation_uneven: a short last micro-batch ------------------------------------------
# micro-batch sizes 4,4,2 / 3,3,1 / 5,4 / 4,4,1 (equal chunking gives 3,3,3 for the last)
UNEVEN = ((10, 4), (7, 3), (9, 5), (9, 4))


def sizes(B: int, b: int) -> list[int]:
    return [min(b, B - i) for i in range(0, B, b)]


@pytest.mark.question("accumulation_uneven")
def test_short_last_micro_batch_gradient(student, models):
    """With a short last micro-batch, samples must be weighted by count, not micro-batches by 1/k."""
    for B, b in UNEVEN:
        config, state_dict, batches = make_case(models, seed=B * b, B=B, steps=1)
        want, _params = big_batch_truth(models, config, state_dict, batches, lr=0.1)
        case = _("batch {B}, micro-batch {b}, sizes {sizes}").format(B=B, b=b, sizes=sizes(B, b))
        out = run_student(student, config, state_dict, batches, b, lr=0.1, models=models, case=case)
        unweighted = unweighted_mean_gradient(models, config, state_dict, batches[0], b)
        for name in NAMES:
            a = out["grads"][0][name]
            if not _close(a, want[0][name]) and _close(a, unweighted[name]):
                raise AssertionError(M.say(UNWEIGHTED_SYMPTOM, what=_("gradient of {name}").format(name=name),
                                           case=M.case_suffix(case)))
        check_big_batch_gradient(out["grads"][0], want[0], case=case,
                                 last_only=last_micro_batch_gradient(models, config, state_dict, batches, b))


@pytest.mark.question("accumulation_uneven")
def test_short_last_micro_batch_parameters(student, models):
    """One optimizer step with micro-batches 3, 3, 3, 1: the parameters equal big-batch SGD's."""
    B, b, lr = 10, 3, 0.5
    config, state_dict, batches = make_case(models, seed=5, B=B, steps=1)
    _grads, want = big_batch_truth(models, config, state_dict, batches, lr)
    case = _("batch {B}, micro-batch {b}, sizes {sizes}").format(B=B, b=b, sizes=sizes(B, b))
    out = run_student(student, config, state_dict, batches, b, lr, models=models, case=case)
    for name in NAMES:
        assert_close(out["params"][name], want[name], what=_("{name} after one step").format(name=name), case=case,
                     rtol=RTOL, atol=ATOL)


@pytest.mark.question("accumulation_uneven")
def test_split_batch(student, models, rng):
    """Consecutive micro-batches, in order, only the last one shorter.

    9 by 4, 16 by 5 and 6 by 4 are where equal chunking (``torch.chunk``,
    ``np.array_split`` into ceil(B/b) parts) differs from the contract; 10 by 4
    is where only ``np.array_split`` does."""
    config = dict(models.DEFAULT_CONFIG)
    cases = [((B, b), _("batch {B}, micro-batch {b}").format(B=B, b=b), True)
             for B, b in ((10, 4), (8, 8), (5, 7), (9, 4), (16, 5), (6, 4))]
    cases.append(((int(rng.integers(1, 30)), int(rng.integers(1, 8))), _("a random batch and micro-batch size"), False))
    for (B, b), case, fixed in cases:  # issue 27: the fixed ones say no direction; the drawn one, no drawn value
        batch = models.make_batch(config, n=B, seed=B)
        got = student.split_batch(batch=batch, micro_batch_size=b)
        with M.fixed_case(fixed):
            assert_scalar(len(got), len(sizes(B, b)), what=_("number of micro-batches"), case=case, rtol=0)
            for j, micro in enumerate(got):
                start = j * b
                assert_keys(micro, ("x", "y"), what=_("micro-batch {index}").format(index=j), case=case)
                for key in ("x", "y"):
                    assert_close(micro[key], batch[key][start : start + b], rtol=0, case=case,
                                 what=_("micro-batch {index} [{key}]").format(index=j, key=repr(key)))


# -- Break it on purpose: the student's own broken versions show exactly their symptom -------------------------
# The truth is this file's own loop on the trusted model, with the one switch each bug flips; the correct
# function's side (no symptom) is the tests above: A_no_scale, B_stale_grad and H_zero_grad_inside lose
# "accumulation".  accumulate_with_zero_grad_inside is the misplacement the chapter does not describe; the
# chapter's bug (B), stale gradients, is "broken another way" here (zero_inside_never_cleared).
NOT_BROKEN = N_("{what}{case}: it is the correct accumulated gradient: this function must show the bug, not fix it")
NOT_THIS_BUG = N_("{what}{case}: it is neither the correct gradient nor the one this bug gives ({symptom})")
NO_SCALING = N_("the sum of the micro-batch gradients, k times the big-batch gradient")
ZERO_INSIDE = N_("only the last micro-batch's gradient, scaled by its share of the examples")

# (B, micro-batch size, steps): k = 4, 3, 2 and 5; 3 steps where later steps start from the broken parameters
BREAK_CASES = ((12, 3, 3), (12, 4, 2), (10, 5, 2), (10, 2, 1))
BREAK_UNEVEN = ((10, 4, 2), (7, 3, 2))  # sizes 4, 4, 2 and 3, 3, 1: the last one is short


def trusted_accumulation(models, config, state_dict, batches, b, lr, *, scale: bool, zero_inside: bool):
    """SGD with accumulation on the trusted model; each bug flips one switch. (grads per step, final params)."""
    model = models.build_model(config)
    model.load_state_dict(state_dict)
    grads = []
    for batch in batches:
        model.zero_grad(set_to_none=True)
        B = len(batch["y"])
        for i in range(0, B, b):
            micro = {key: v[i : i + b] for key, v in batch.items()}
            if zero_inside:
                model.zero_grad(set_to_none=True)
            loss = models.loss_fn(model, micro)
            (loss * (len(micro["y"]) / B) if scale else loss).backward()
        grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
    return grads, {n: p.detach().clone() for n, p in model.named_parameters()}


def check_broken(student, models, fn_name: str, *, scale: bool, zero_inside: bool, symptom: str, cases):
    lr = 0.5
    for B, b, steps in cases:
        config, state_dict, batches = make_case(models, seed=7 * B + b, B=B, steps=steps)
        case = _("batch {B}, micro-batch {b}, {steps} step(s)").format(B=B, b=b, steps=steps)
        out = getattr(student, fn_name)(config=config, state_dict=state_dict, batches=batches, micro_batch_size=b,
                                        lr=lr)
        assert_keys(out, ("grads", "params", "forward_log"), what=_("{name} result").format(name=fn_name), case=case)
        assert_scalar(len(out["grads"]), steps, what=_("number of recorded gradients (one per step)"), case=case,
                      rtol=0)
        check_forward_log(models, out["forward_log"], batches, b, case=case)
        want, params = trusted_accumulation(models, config, state_dict, batches, b, lr, scale=scale,
                                            zero_inside=zero_inside)
        # the correct step from the same parameters the broken run had reached: "accidentally right" is named
        for t in range(steps):
            before = state_dict if t == 0 else _params_before(models, config, state_dict, batches, b, lr, t,
                                                               scale=scale, zero_inside=zero_inside)
            right, _p = big_batch_truth(models, config, before, batches[t : t + 1], lr)
            what = _("gradient of step {step}").format(step=t + 1)
            assert_keys(out["grads"][t], NAMES, what=what, case=case)
            if all(_close(out["grads"][t][n], want[t][n]) for n in NAMES):
                continue
            sfx = M.case_suffix(case)
            if all(_close(out["grads"][t][n], right[0][n]) for n in NAMES):
                raise AssertionError(M.say(NOT_BROKEN, what=what, case=sfx))
            raise AssertionError(M.say(NOT_THIS_BUG, what=what, case=sfx, symptom=_(symptom)))
        assert_keys(out["params"], NAMES, what="params", case=case)
        for name in NAMES:
            assert_close(out["params"][name], params[name], what=_("{name} after the last step").format(name=name),
                         case=case, rtol=RTOL, atol=ATOL)


def _params_before(models, config, state_dict, batches, b, lr, t, *, scale, zero_inside):
    """The parameters the broken run holds before step t + 1 (after its first t steps)."""
    _g, params = trusted_accumulation(models, config, state_dict, batches[:t], b, lr, scale=scale,
                                      zero_inside=zero_inside)
    return params


@pytest.mark.question("break_no_scaling")
def test_without_scaling_is_k_times_the_gradient(student, models):
    """accumulate_without_scaling: each step's gradient is the sum of the micro-batch means (k x the big batch)."""
    check_broken(student, models, "accumulate_without_scaling", scale=False, zero_inside=False, symptom=NO_SCALING,
                 cases=BREAK_CASES)


@pytest.mark.question("break_zero_grad_inside")
def test_zero_grad_inside_keeps_only_the_last_micro_batch(student, models):
    """accumulate_with_zero_grad_inside: only the last micro-batch's (weighted) gradient survives, every step."""
    check_broken(student, models, "accumulate_with_zero_grad_inside", scale=True, zero_inside=True,
                 symptom=ZERO_INSIDE, cases=BREAK_CASES + BREAK_UNEVEN)
