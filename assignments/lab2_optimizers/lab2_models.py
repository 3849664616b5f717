"""A tiny seeded classifier and its data, shared by the lab and its tests.

This file is shipped with the lab and is never taken from a submission: your
code imports it (``import lab2_models``) and the grader uses the very same
copy to compute the answers it checks you against.

A *config* is a plain dict (it crosses the grading boundary as data)::

    {"d_in": 8, "d_hidden": 16, "n_classes": 4, "seed": 0, "dtype": "float32"}

* ``d_in``, ``d_hidden``, ``n_classes``: the MLP is
  ``fc2(tanh(fc1(x)))`` with ``fc1: d_in -> d_hidden`` and
  ``fc2: d_hidden -> n_classes`` (both with bias).  Its parameters are, in
  this order, ``fc1.weight (d_hidden, d_in)``, ``fc1.bias (d_hidden,)``,
  ``fc2.weight (n_classes, d_hidden)``, ``fc2.bias (n_classes,)``.
* ``seed``: the initial weights depend only on it (the global torch RNG is
  neither used nor changed).
* ``dtype``: ``"float32"`` or ``"float64"`` for parameters and inputs.

Every model records its forward calls.  ``model.forward_log`` is a list with
one entry per call of ``model(x)`` (so per ``loss_fn(model, batch)``), in
order: ``{"examples": n, "digest": d, "backward": seen}``, where
``n = x.shape[0]`` is the number of examples the model saw at once,
``d = batch_digest(x)`` fingerprints exactly which inputs they were, and
``seen`` says whether a gradient flowed back through this forward's output
(``backward()`` or ``torch.autograd.grad`` on a loss built from it) *before
the model's next forward*: True if so, False if not (yet).  Accumulation
back-propagates each micro-batch before the next one goes in, so only one
micro-batch's activations are alive at a time; summing the k losses and
calling ``backward()`` once gives the same gradient but keeps all k graphs,
and every entry but the last says False.  The log is plain data (ints,
strings and booleans), so a function can return it to the grader as it is.
The grader recomputes the digests of the micro-batches it expects from the
batches it passed in, so the log shows how the data went through the model;
nothing else about the model changes.
"""

from __future__ import annotations

import functools
import hashlib
import math

import torch
import torch.nn.functional as F
from torch import nn

DEFAULT_CONFIG = {"d_in": 8, "d_hidden": 16, "n_classes": 4, "seed": 0, "dtype": "float32"}

_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def _dtype(config: dict) -> torch.dtype:
    name = config.get("dtype", "float32")
    assert name in _DTYPES, f"config['dtype'] must be one of {sorted(_DTYPES)}, got {name!r}"
    return _DTYPES[name]


class MLP(nn.Module):
    def __init__(self, d_in: int, d_hidden: int, n_classes: int):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, n_classes)
        self.forward_log: list[dict] = []  # one {"examples", "digest", "backward"} per forward call

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (N, d_in) -> (N, n_classes) logits
        entry = {"examples": int(x.shape[0]) if x.dim() > 1 else 1, "digest": batch_digest(x), "backward": False}
        self.forward_log.append(entry)
        out = self.fc2(torch.tanh(self.fc1(x)))
        if out.requires_grad:  # fires for backward() and autograd.grad alike, inside torch.func.grad too
            try:
                out.register_hook(functools.partial(_backward_seen, self.forward_log, entry))
            except RuntimeError:  # a transform that takes no hooks: the entry stays False
                pass
        return out


def _backward_seen(log: list, entry: dict, grad: torch.Tensor) -> None:
    """A gradient reached a forward's output: it counts only while that forward is still the latest."""
    if log and log[-1] is entry:
        entry["backward"] = True


def batch_digest(x: torch.Tensor) -> str:
    """A fingerprint of the inputs ``x``: the SHA-256 of their dtype, shape and values.

    Equal for equal inputs however they were sliced or copied (the values
    are read in row-major order); different for other rows, another order or
    another count.  Inputs seen inside ``torch.func.grad`` (or ``vjp``) are
    read through the transform's wrapper; inside ``vmap`` the model sees one
    example of many at a time, which has no digest of its own: ``""``.
    """
    values = _values(x)
    if values is None:
        return ""
    h = hashlib.sha256(f"{x.dtype}{tuple(x.shape)}".encode())
    h.update(values)
    return h.hexdigest()


def _values(x: torch.Tensor) -> bytes | None:
    """The bytes of ``x``, unwrapped from torch.func's autograd levels (torch 2.13's functorch API)."""
    try:
        return x.detach().cpu().contiguous().numpy().tobytes()
    except RuntimeError:  # a functorch wrapper has no storage of its own
        pass
    functorch = torch._C._functorch
    with torch._C._DisableFuncTorch():
        while functorch.is_functorch_wrapped_tensor(x):
            if functorch.is_batchedtensor(x):  # vmap: x is one slice of a batch
                return None
            x = functorch.get_unwrapped(x)
        return x.detach().cpu().contiguous().numpy().tobytes()


def build_model(config: dict) -> MLP:
    """A fresh MLP whose weights depend only on ``config`` (seeded, deterministic)."""
    model = MLP(config["d_in"], config["d_hidden"], config["n_classes"])
    g = torch.Generator().manual_seed(int(config["seed"]))
    with torch.no_grad():
        for layer in (model.fc1, model.fc2):
            # nn.Linear's default range U(-1/sqrt(fan_in), 1/sqrt(fan_in)), drawn from our own generator
            bound = 1.0 / math.sqrt(layer.in_features)
            for p in (layer.weight, layer.bias):
                p.copy_((torch.rand(p.shape, generator=g, dtype=torch.float64) * 2 - 1) * bound)
    return model.to(_dtype(config))


def make_batch(config: dict, n: int, seed: int) -> dict[str, torch.Tensor]:
    """``n`` labelled examples: ``{"x": (n, d_in) float, "y": (n,) int64}``.

    Inputs are standard normal; labels come from a fixed random linear
    teacher (seeded by ``config["seed"]``) plus noise, so they carry signal.
    """
    g = torch.Generator().manual_seed(int(seed))
    teacher = torch.Generator().manual_seed(10_007 + int(config["seed"]))
    W = torch.randn(config["d_in"], config["n_classes"], generator=teacher, dtype=torch.float64)
    x = torch.randn(n, config["d_in"], generator=g, dtype=torch.float64)
    logits = x @ W + torch.randn(n, config["n_classes"], generator=g, dtype=torch.float64)
    return {"x": x.to(_dtype(config)), "y": logits.argmax(dim=1)}


def loss_fn(model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Mean cross-entropy over the examples of ``batch`` (a scalar tensor)."""
    return F.cross_entropy(model(batch["x"]), batch["y"], reduction="mean")
