"""Independent ground truth: torch.utils.flop_counter.FlopCounterMode on a real GPT-2 block.

Attention is written as explicit matmuls: on CPU the counter counts zero for
F.scaled_dot_product_attention (docs/chapter.md, Lab 1).  The counter counts only
matmuls (mm, bmm, addmm), at 2 FLOPs per multiply-accumulate, so it checks the
student's per-matmul counts directly.  The GPT-2 small case runs on the meta
device: the counter needs shapes, not values, and a meta run costs nothing.
"""

import math

import pytest
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_keys, assert_scalar, grader_check
from autograder.labkit.batch_cache import batch_constant
from autograder.labkit.messages import fixed_case

MATMULS = ("qkv", "scores", "attn_v", "out_proj", "mlp")
KEYS = MATMULS + ("total",)
GPT2_SMALL = dict(B=4, S=256, d=768, h=12)
GPT2_SMALL_FORWARD = 15_300_820_992  # docs/chapter.md, Lab 1: what the counter reports
GPT2_SMALL_CASE = N_("GPT-2 small block, B=4, S=256, d=768, h=12")


class Scores(nn.Module):
    def forward(self, q, k):  # (B, h, S, d_head) x 2 -> (B, h, S, S)
        return q @ k.transpose(-2, -1)


class AttnV(nn.Module):
    def forward(self, att, v):  # (B, h, S, S), (B, h, S, d_head) -> (B, h, S, d_head)
        return att @ v


class Block(nn.Module):
    """A GPT-2 block (pre-LayerNorm, tanh GELU) with explicit-matmul attention."""

    def __init__(self, d: int, h: int):
        super().__init__()
        self.d, self.h = d, h
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.scores, self.attn_v = Scores(), AttnV()
        self.out_proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))

    def forward(self, x):  # (B, S, d)
        B, S, d = x.shape
        h = self.h
        q, k, v = self.qkv(self.ln_1(x)).split(d, dim=-1)
        q, k, v = (t.view(B, S, h, d // h).transpose(1, 2) for t in (q, k, v))  # (B, h, S, d_head)
        mask = torch.ones(S, S, dtype=torch.bool, device=x.device).tril()
        att = (self.scores(q, k) / math.sqrt(d // h)).masked_fill(~mask, float("-inf")).softmax(-1)
        y = self.attn_v(att, v).transpose(1, 2).reshape(B, S, d)
        x = x + self.out_proj(y)
        return x + self.mlp(self.ln_2(x))


def counted(fn) -> tuple[int, object]:
    with FlopCounterMode(display=False) as counter:
        out = fn()
    return counter.get_total_flops(), out


@batch_constant  # GPT-2 small is every submission's case; the random blocks follow the seed
def torch_counts(B: int, S: int, d: int, h: int, device: str) -> tuple[dict, dict]:
    """(forward, backward) FLOPs per matmul stage and for the whole block, as torch counts them."""
    torch.manual_seed(0)
    block = Block(d, h).to(device)
    dh = d // h

    def leaf(*shape):
        return torch.randn(*shape, device=device, requires_grad=True)

    stage_inputs = {
        "qkv": (leaf(B, S, d),),
        "scores": (leaf(B, h, S, dh), leaf(B, h, S, dh)),
        "attn_v": (leaf(B, h, S, S), leaf(B, h, S, dh)),
        "out_proj": (leaf(B, S, d),),
        "mlp": (leaf(B, S, d),),
    }
    fwd, bwd = {}, {}
    for name, args in stage_inputs.items():
        module = getattr(block, name)
        fwd[name], out = counted(lambda: module(*args))
        # backward: the gradient of every input and every weight, as in training
        bwd[name], _grads = counted(
            lambda: torch.autograd.grad(out, [*args, *module.parameters()], torch.ones_like(out)))
    x = leaf(B, S, d)
    fwd["total"], out = counted(lambda: block(x))
    bwd["total"], _grads = counted(lambda: torch.autograd.grad(out, [x, *block.parameters()], torch.ones_like(out)))
    grader_check(sum(fwd[k] for k in MATMULS) == fwd["total"],
                 _("grader bug: forward stages do not add up to the block"))
    grader_check(sum(bwd[k] for k in MATMULS) == bwd["total"],
                 _("grader bug: backward stages do not add up to the block"))
    return fwd, bwd


def cases(rng):
    """(config, device, case): GPT-2 small on the meta device (the same on every submission: its
    messages say no direction), then random small blocks run for real on the CPU, named by number."""
    yield GPT2_SMALL, "meta", _(GPT2_SMALL_CASE)
    for trial in range(1, 4):
        h = int(rng.choice([1, 2, 4]))
        cfg = dict(B=int(rng.integers(1, 4)), S=int(rng.integers(2, 48)), d=h * int(rng.choice([8, 16])), h=h)
        yield cfg, "cpu", _("random block {trial} of 3").format(trial=trial)


def check_against(got, truth, *, what, case):
    assert_keys(got, KEYS, what=what, case=case)
    for key in KEYS:
        assert_scalar(got[key], truth[key], what=_("{what}[{key!r}] against torch's FlopCounterMode").format(
            what=what, key=key), case=case, rtol=1e-12)


@pytest.mark.question("forward_flops", points=2)
def test_forward_counts_match_flop_counter(student, rng):
    for cfg, device, case in cases(rng):
        fwd, _bwd = torch_counts(**cfg, device=device)
        if cfg == GPT2_SMALL:
            grader_check(fwd["total"] == GPT2_SMALL_FORWARD,
                         _("grader bug: the counter disagrees with the chapter's figure"))
        with fixed_case(cfg == GPT2_SMALL):
            check_against(student.layer_matmul_flops(**cfg), fwd, what="layer_matmul_flops", case=case)


@pytest.mark.question("forward_backward", points=2)
def test_backward_counts_match_flop_counter(student, rng):
    for cfg, device, case in cases(rng):
        fwd, bwd = torch_counts(**cfg, device=device)
        if cfg == GPT2_SMALL:
            grader_check(fwd["total"] + bwd["total"] == 3 * GPT2_SMALL_FORWARD,
                         _("grader bug: counter is not 3x forward"))
        with fixed_case(cfg == GPT2_SMALL):
            check_against(student.layer_backward_flops(**cfg), bwd, what="layer_backward_flops", case=case)
