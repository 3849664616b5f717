"""Small seeded PyTorch models for Lab 3 (shipped with the lab; do not edit).

Student functions take a plain config dict, never a model object.  This
module turns the dict into a model, a batch and an optimizer, the same way
for the student, the reference and the tests, so every byte count is
measured on identical tensors.

Two model kinds:

* ``{"kind": "gpt", "vocab": 64, "seq_len": 16, "d_model": 32, "n_heads": 4,
  "n_layers": 2, "tie_weights": True, "seed": 0}``: a tiny GPT-2 (pre-LN
  blocks, causal attention written out so the S×S scores are real tensors,
  GELU MLP of width 4·d, token + position embeddings, LM head tied to the
  token embedding when ``tie_weights`` is true).  The batch is ``(B, S)``
  token ids and next-token targets; the loss is mean cross-entropy.
* ``{"kind": "mlp", "d_in": 16, "d_model": 32, "n_layers": 4,
  "n_classes": 10, "init_std": 0.02, "act": "gelu", "seed": 0}``: a stack
  of ``Linear → GELU`` blocks (``"act": "relu"``: ``Linear → ReLU``)
  between an input and an output layer.  With a small ``init_std`` its
  gradients shrink layer by layer (useful for FP16 underflow).  The batch
  is ``(B, d_in)`` inputs and class targets.

Some gradients are exactly zero, not merely small: the embedding row of a
token that is not in the batch (untied GPT), the weights into and out of a
ReLU unit that is inactive on every example of the batch, every weight of an
MLP with ``init_std = 0``.

Optional keys for both kinds: ``"dtype"`` (``"float32"`` default, or
``"bfloat16"``), ``"frozen"`` (a list of parameter-name prefixes whose
parameters get ``requires_grad=False``, e.g. ``["tok_emb"]``) and
``"shared_blocks"`` (``False`` default; ``True``: one block shared by every
layer, as in ALBERT: ``model.blocks`` holds the same module ``n_layers``
times, so the forward pass calls that block, and each module inside it,
``n_layers`` times, while ``model.modules()`` and ``model.parameters()``
yield each once).

Every model has the same three-part forward, which checkpointing needs::

    h = model.embed(x)            # before the blocks
    for block in model.blocks:    # an nn.ModuleList
        h = block(h)
    loss = model.head_loss(h, y)  # after the blocks, including the loss

``forward_loss(model, batch)`` runs exactly that.

Hooks left behind are caught: when a function builds a model again,
``build_model`` raises ``HooksLeftError`` if the model that the same function
built last still has a module hook registered on it (forward, forward pre-,
backward or backward pre-hook).  A function that registers hooks removes
them before it returns (``handle.remove()``); a notebook cell's own
top-level code is not checked.
"""

from __future__ import annotations

import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.core.i18n import N_, _

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}

GPT_DEFAULTS = {"vocab": 64, "seq_len": 16, "d_model": 32, "n_heads": 4, "n_layers": 2,
                "tie_weights": True, "seed": 0, "dtype": "float32", "frozen": [], "shared_blocks": False}
MLP_DEFAULTS = {"d_in": 16, "d_model": 32, "n_layers": 4, "n_classes": 10, "init_std": 0.02, "act": "gelu",
                "seed": 0, "dtype": "float32", "frozen": [], "shared_blocks": False}
ACTIVATIONS = {"gelu": nn.GELU, "relu": nn.ReLU}


def _blocks(make, cfg: dict) -> nn.ModuleList:
    """``n_layers`` blocks; with ``shared_blocks``, one block listed ``n_layers`` times."""
    if cfg["shared_blocks"]:
        return nn.ModuleList([make()] * cfg["n_layers"])  # one module (and its weights) in every layer
    return nn.ModuleList(make() for _ in range(cfg["n_layers"]))


# -- the tiny GPT ---------------------------------------------------------------
class CausalSelfAttention(nn.Module):
    def __init__(self, d: int, n_heads: int):
        super().__init__()
        assert d % n_heads == 0, f"d_model={d} must be divisible by n_heads={n_heads}"
        self.n_heads = n_heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        B, S, d = x.shape
        a = self.n_heads
        q, k, v = self.qkv(x).split(d, dim=2)                       # each (B, S, d)
        q = q.view(B, S, a, d // a).transpose(1, 2)                  # (B, a, S, d/a)
        k = k.view(B, S, a, d // a).transpose(1, 2)
        v = v.view(B, S, a, d // a).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // a)      # (B, a, S, S)
        mask = torch.ones(S, S, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
        att = F.softmax(scores, dim=-1)                               # (B, a, S, S)
        y = (att @ v).transpose(1, 2).reshape(B, S, d)               # (B, S, d)
        return self.proj(y)


class MLP(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.fc = nn.Linear(d, 4 * d)
        self.act = nn.GELU()
        self.proj = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.proj(self.act(self.fc(x)))


class Block(nn.Module):
    def __init__(self, d: int, n_heads: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, n_heads)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = MLP(d)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, cfg: dict):
        super().__init__()
        d = cfg["d_model"]
        self.tok_emb = nn.Embedding(cfg["vocab"], d)
        self.pos_emb = nn.Embedding(cfg["seq_len"], d)
        self.blocks = _blocks(lambda: Block(d, cfg["n_heads"]), cfg)
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, cfg["vocab"], bias=False)
        for m in self.modules():  # GPT-2 initialisation
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)
        if cfg["tie_weights"]:
            self.head.weight = self.tok_emb.weight  # one tensor, two uses (as in GPT-2)

    def embed(self, idx):
        S = idx.shape[1]
        pos = torch.arange(S, device=idx.device)
        return self.tok_emb(idx) + self.pos_emb(pos)                # (B, S, d)

    def head_loss(self, h, targets):
        logits = self.head(self.ln_f(h))                              # (B, S, vocab)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))


# -- the deep MLP ---------------------------------------------------------------
class MLPBlock(nn.Module):
    def __init__(self, d: int, act: str = "gelu"):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.act = ACTIVATIONS[act]()

    def forward(self, x):
        return self.act(self.fc(x))


class DeepMLP(nn.Module):
    def __init__(self, cfg: dict):
        super().__init__()
        d = cfg["d_model"]
        self.inp = nn.Linear(cfg["d_in"], d)
        self.blocks = _blocks(lambda: MLPBlock(d, cfg["act"]), cfg)
        self.out = nn.Linear(d, cfg["n_classes"])
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=cfg["init_std"])
                nn.init.zeros_(m.bias)

    def embed(self, x):
        return self.inp(x)

    def head_loss(self, h, targets):
        return F.cross_entropy(self.out(h).float(), targets)


# -- the public helpers -----------------------------------------------------------
def full_config(config: dict) -> dict:
    """``config`` with every default filled in (raises on unknown keys)."""
    kind = config.get("kind")
    defaults = {"gpt": GPT_DEFAULTS, "mlp": MLP_DEFAULTS}.get(kind)
    assert defaults is not None, f"config['kind'] must be 'gpt' or 'mlp', got {kind!r}"
    unknown = set(config) - set(defaults) - {"kind"}
    assert not unknown, f"unknown config keys {sorted(unknown)} for kind {kind!r}"
    assert config.get("dtype", "float32") in DTYPES, f"dtype must be one of {sorted(DTYPES)}"
    assert config.get("act", "gelu") in ACTIVATIONS, f"act must be one of {sorted(ACTIVATIONS)}"
    return {"kind": kind, **defaults, **config}


class HooksLeftError(RuntimeError):
    """build_model found hooks left on the model that the same function built before (module docstring)."""

    LEFT = N_("the model that the previous call of {function}() built still has module hooks registered on it: "
              "remove every hook you register (handle.remove(), also when the forward pass raises) before the "
              "function returns")


# The module-level hook dicts of torch.nn.Module: a registered hook is an entry until its handle removes it.
HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
# A function that built a model (its file, first line, name) -> the hook dicts of every module of the last
# model it built.  The dicts, not the model: a dropped model's hooks are still counted, with no garbage
# collection to wait for, so the check is the same on every run.
_BUILT_BY: dict[tuple, list] = {}


def _hooks_left(site: tuple) -> int:
    return sum(len(d) for d in _BUILT_BY.pop(site, ()))


def build_model(config: dict) -> nn.Module:
    """A freshly initialised model, identical for identical configs (seeded).

    Raises ``HooksLeftError`` when the model that the calling function built
    last still has module hooks registered on it (module docstring)."""
    caller = sys._getframe(1).f_code
    site = None if caller.co_name == "<module>" else (caller.co_filename, caller.co_firstlineno, caller.co_name)
    if site is not None and _hooks_left(site):
        raise HooksLeftError(_(HooksLeftError.LEFT).format(function=caller.co_name))
    cfg = full_config(config)
    gen_state = torch.random.get_rng_state()
    torch.manual_seed(cfg["seed"])
    try:
        model = TinyGPT(cfg) if cfg["kind"] == "gpt" else DeepMLP(cfg)
    finally:
        torch.random.set_rng_state(gen_state)  # do not disturb the caller's RNG
    model = model.to(DTYPES[cfg["dtype"]])
    for name, p in model.named_parameters():
        if any(name.startswith(prefix) for prefix in cfg["frozen"]):
            p.requires_grad_(False)
    if site is not None:
        _BUILT_BY[site] = [getattr(m, name) for m in model.modules() for name in HOOK_DICTS]
    return model


def make_batch(config: dict, batch_size: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """A seeded batch ``(inputs, targets)`` for the model ``config`` describes."""
    cfg = full_config(config)
    g = torch.Generator().manual_seed(seed)
    if cfg["kind"] == "gpt":
        tokens = torch.randint(0, cfg["vocab"], (batch_size, cfg["seq_len"] + 1), generator=g)
        return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()   # (B, S), (B, S)
    x = torch.randn(batch_size, cfg["d_in"], generator=g).to(DTYPES[cfg["dtype"]])
    y = torch.randint(0, cfg["n_classes"], (batch_size,), generator=g)
    return x, y                                                            # (B, d_in), (B,)


def forward_loss(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """The scalar training loss: embed, every block in order, head and loss."""
    x, y = batch
    h = model.embed(x)
    for block in model.blocks:
        h = block(h)
    return model.head_loss(h, y)


def build_optimizer(model: nn.Module, config: dict) -> torch.optim.Optimizer:
    """A torch optimizer over the parameters that require gradients.

    ``config``: ``{"name": "sgd" | "momentum" | "adam" | "adamw", "lr": 1e-3}``
    (``"momentum"`` is SGD with momentum 0.9).
    """
    name, lr = config["name"], float(config.get("lr", 1e-3))
    params = [p for p in model.parameters() if p.requires_grad]
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr)
    if name == "momentum":
        return torch.optim.SGD(params, lr=lr, momentum=0.9)
    if name == "adam":
        return torch.optim.Adam(params, lr=lr)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    raise ValueError(f"optimizer name must be sgd, momentum, adam or adamw, got {name!r}")
