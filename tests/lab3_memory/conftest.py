"""Lab 3 hidden tests: the trusted side's own ground truth.

Everything here runs in the grader, never in student code.  Models come from
the shipped ``lab3_models.py`` in the assignment folder (loaded by path, never
from a submission), so the student, the reference and these checks measure
the very same seeded tensors.  The ground truth is computed with torch itself
(saved-tensor hooks, forward hooks, torch.optim, torch.utils.checkpoint),
independently of the reference module.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch
from torch.utils.checkpoint import checkpoint

from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_equal, assert_int, assert_scalar
from autograder.labkit.batch_cache import batch_constant
from autograder.labkit.support import trusted_support

# -- assertions -------------------------------------------------------------------------
SMALL_INT = 1000  # below this, two significant figures of a ratio pin the expected integer down


def assert_exact_int(actual, expected: int, *, what: str, case: str = "") -> None:
    """An exact integer (a byte count, a call count).

    The symptom is the ratio at two significant figures ("off by a factor
    of 2.0": counted twice), or, within 5%, only the direction ("slightly too
    large (within 5%)": e.g. 4 bytes of Adam's step counter for each of 28
    parameter tensors), never the size of the error: that would give the
    expected integer away.  A small expected integer (a call count, a count
    of 10 overflowing gradients) gets only the direction ("too large"): the
    student's own value over a two-figure ratio would be the expected one.
    """
    assert_int(actual, what=what, case=case)
    if abs(expected) < SMALL_INT:
        assert_equal(actual, expected, what=what, case=case)
    assert_scalar(actual, expected, what=what, case=case, rtol=0.0)


# an extra a test drew from its rng: named by what it is, never by its value (docs/feedback.md)
DRAWN_WORDS = {"B": N_("a random batch size"), "optimizer": N_("a random optimizer")}


def is_drawn(cfg: dict) -> bool:
    """A config made by random_gpt/random_mlp (which give each a seed): its inputs follow the submission."""
    return "seed" in cfg


def describe(cfg: dict, *, drawn=(), **extra) -> str:
    """A short case string: 'gpt d=32 L=2 a=4 S=16 tied, B=4', 'a random MLP, relu, a random batch size'.

    A fixed config is named by its sizes (the same for everyone); a drawn one
    (:func:`is_drawn`) only by what the test chose for it (a dtype, frozen
    parts, an activation, all weights 0, shared blocks), never by a value it
    drew: not a size, a seed or whether it ties its weights. An ``extra``
    named in ``drawn`` ("B", "optimizer") says only that it is random
    (docs/feedback.md, "Labels, not arguments")."""
    gpt = cfg["kind"] == "gpt"
    if is_drawn(cfg):
        s = _("a random GPT") if gpt else _("a random MLP")
    elif gpt:
        tied = _("tied") if cfg.get("tie_weights", True) else _("untied")
        s = f"gpt d={cfg.get('d_model', 32)} L={cfg.get('n_layers', 2)} a={cfg.get('n_heads', 4)} " \
            f"S={cfg.get('seq_len', 16)} {tied}"
    else:
        s = f"mlp d={cfg.get('d_model', 32)} L={cfg.get('n_layers', 4)}"
    chosen = []  # what the test chose, whether it drew the rest or not
    if not gpt and cfg.get("act", "gelu") != "gelu":
        chosen.append(cfg["act"])
    if not gpt and cfg.get("init_std") == 0:
        chosen.append(_("all weights 0"))
    if cfg.get("shared_blocks"):
        chosen.append(_("one block shared by every layer"))
    if cfg.get("dtype", "float32") != "float32":
        chosen.append(cfg["dtype"])
    if cfg.get("frozen"):
        chosen.append(f"frozen={cfg['frozen']}")
    s = (", " if is_drawn(cfg) else " ").join([s, *chosen])
    return ", ".join([s] + [_(DRAWN_WORDS[k]) if k in drawn else f"{k}={v}" for k, v in extra.items()])


# -- random configurations ----------------------------------------------------------------
def random_gpt(rng, **over) -> dict:
    d = int(rng.choice([16, 24, 32]))
    cfg = {"kind": "gpt", "vocab": int(rng.choice([32, 50, 64])), "seq_len": int(rng.choice([8, 12, 16])),
           "d_model": d, "n_heads": int(rng.choice([2, 4])), "n_layers": int(rng.integers(1, 4)),
           "tie_weights": bool(rng.integers(0, 2)), "seed": int(rng.integers(0, 10_000))}
    return {**cfg, **over}


def random_mlp(rng, **over) -> dict:
    cfg = {"kind": "mlp", "d_in": int(rng.choice([8, 16])), "d_model": int(rng.choice([16, 32])),
           "n_layers": int(rng.integers(2, 6)), "n_classes": int(rng.choice([5, 10])),
           "init_std": float(rng.choice([0.02, 0.05])), "seed": int(rng.integers(0, 10_000))}
    return {**cfg, **over}


# -- ground truth, computed here with torch ----------------------------------------------------
def nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def saved_tensors(model, run, skip=()):
    """(distinct non-parameter storage bytes, pack calls, parameter pack calls, run()); the
    storages whose data pointers are in ``skip`` are left out of the bytes too."""
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: dict[int, int] = {}
    n = {"all": 0, "param": 0}

    def pack(t):
        n["all"] += 1
        ptr = t.untyped_storage().data_ptr()
        if ptr in params:
            n["param"] += 1
        elif ptr not in skip:
            seen[ptr] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = run()
    return sum(seen.values()), n["all"], n["param"], out


def make_truth(models):
    """The ground truth, each a function of its arguments alone (``models`` is the shipped
    support module): computed once per batch for a case every submission meets."""
    @batch_constant
    def hook_counts(cfg, B):
        model = models.build_model(cfg)
        batch = models.make_batch(cfg, B, seed=0)
        total = [0]

        def hook(mod, inp, out):
            outs = out if isinstance(out, (tuple, list)) else (out,)
            total[0] += sum(nbytes(t) for t in outs if torch.is_tensor(t))

        hs = [m.register_forward_hook(hook) for m in model.modules() if not list(m.children())]
        saved, calls, pcalls, _out = saved_tensors(model, lambda: models.forward_loss(model, batch))
        for h in hs:
            h.remove()
        return {"saved_bytes": saved, "saved_tensors": calls, "parameter_saves": pcalls,
                "module_output_bytes": total[0]}

    @batch_constant
    def four_terms(cfg, B, opt_cfg):
        model = models.build_model(cfg)
        opt = models.build_optimizer(model, opt_cfg)
        batch = models.make_batch(cfg, B, seed=0)
        weights = sum(nbytes(p) for p in model.parameters())
        acts, _calls, _pcalls, loss = saved_tensors(model, lambda: models.forward_loss(model, batch))
        loss.backward()
        grads = sum(nbytes(p.grad) for p in model.parameters() if p.grad is not None)
        opt.step()
        state = 0
        for p in model.parameters():
            for k, v in opt.state.get(p, {}).items():
                if k != "step" and torch.is_tensor(v):
                    state += nbytes(v)
        return {"weights": weights, "gradients": grads, "optimizer_state": state, "activations": acts,
                "total": weights + grads + state + acts}

    @batch_constant
    def underflow(cfg, B, scale):
        model = models.build_model(cfg)
        loss = models.forward_loss(model, models.make_batch(cfg, B, seed=0))
        (loss * scale).backward()
        # n_zero: elements exactly 0 in FP32 already (not underflow), for diagnosing a count that includes them
        # counts_by_parameter: [underflow, numel] of each parameter, for diagnosing a fraction over numel
        out = {"n_nonzero": 0, "n_underflow": 0, "n_overflow": 0, "underflow_by_parameter": {}, "n_zero": 0,
               "counts_by_parameter": {}}
        for name, p in model.named_parameters():
            if p.grad is None:
                continue
            g = p.grad
            h = g.half()
            nz, un = int((g != 0).sum()), int(((g != 0) & (h == 0)).sum())
            out["n_zero"] += int((g == 0).sum())
            out["n_nonzero"] += nz
            out["n_underflow"] += un
            out["n_overflow"] += int(torch.isinf(h).sum())
            out["underflow_by_parameter"][name] = un / nz if nz else 0.0
            out["counts_by_parameter"][name] = [un, g.numel()]
        out["underflow_fraction"] = out["n_underflow"] / out["n_nonzero"] if out["n_nonzero"] else 0.0
        return out

    @batch_constant
    def checkpointing(cfg, B, k):
        model = models.build_model(cfg)
        x, y = models.make_batch(cfg, B, seed=0)
        blocks = list(model.blocks)
        starts = [0] * len(blocks)
        hs = [b.register_forward_pre_hook(lambda m, i, j=j: starts.__setitem__(j, starts[j] + 1))
              for j, b in enumerate(blocks)]

        def seg(bs, h):
            for b in bs:
                h = b(h)
            return h

        kept = []  # each segment's input (the checkpoint) and its blocks

        def fwd():
            h = model.embed(x)
            if k == 0:
                h = seg(blocks, h)
            else:
                for s in range(0, len(blocks), k):
                    kept.append((h, blocks[s:s + k]))
                    h = checkpoint(seg, blocks[s:s + k], h, use_reentrant=False)
            return model.head_loss(h, y)

        saved, _calls, _pcalls, loss = saved_tensors(model, fwd)
        loss.backward()
        for h in hs:
            h.remove()
        gn = math.sqrt(sum(float(p.grad.double().pow(2).sum()) for p in model.parameters() if p.grad is not None))
        # one segment rebuilt: what it saves when run again from its input, the input itself left out
        inner = []
        for h, bs in kept:
            h_in = h.detach().requires_grad_()
            inner.append(saved_tensors(model, lambda h_in=h_in, bs=bs: seg(bs, h_in),
                                       skip={h_in.untyped_storage().data_ptr()})[0])
        segment = max(inner, default=0)
        return {"saved_bytes": saved, "segment_bytes": segment, "peak_bytes": saved + segment,
                "forward_calls": starts, "recompute_fraction": (sum(starts) - len(blocks)) / (3 * len(blocks)),
                "loss": float(loss.detach()), "grad_norm": gn}

    return SimpleNamespace(hook_counts=hook_counts, four_terms=four_terms, underflow=underflow,
                           checkpointing=checkpointing)


@pytest.fixture
def lab3(lab):
    """Helpers for the Lab 3 hidden tests (support module, ground truth, configs).

    The models are tiny: one intra-op thread is faster than two on a busy
    2-core machine (spinning OpenMP threads cost seconds), and it matches the
    sandboxed worker.  The previous setting is restored afterwards.
    """
    models = trusted_support(lab, "lab3_models.py")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield SimpleNamespace(models=models, truth=make_truth(models), assert_exact_int=assert_exact_int,
                           assert_int_type=assert_int,
                           describe=describe, is_drawn=is_drawn, random_gpt=random_gpt, random_mlp=random_mlp)
    torch.set_num_threads(threads)
