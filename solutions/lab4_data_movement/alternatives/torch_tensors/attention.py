"""Lab 4, part 2, another idiom: torch tensors.

The arrays are viewed as torch tensors (``torch.from_numpy``, no copy);
the tiled version walks query blocks outside and K/V blocks inside with
torch ops, in q's dtype, and hands a numpy array back.
"""

from __future__ import annotations

import math

import numpy as np
import torch


def _t(x: np.ndarray) -> torch.Tensor:
    x = np.asarray(x)
    if not x.flags.writeable:  # torch.from_numpy warns on read-only memory; a copy costs O(S·d)
        x = x.copy()
    return torch.from_numpy(x)


def attention_score_bytes(*, S: int, block_size: int, bytes_per_element: int) -> dict:
    """Bytes of the full S×S score matrix and of one block×block tile."""
    return dict(full_bytes=int(S) * int(S) * int(bytes_per_element),
                tile_bytes=int(block_size) * int(block_size) * int(bytes_per_element))


def attention_hbm_bytes(*, S: int, d: int, block_size: int, n_heads: int = 1, bytes_per_element: int = 4) -> dict:
    """Element counts as a numpy vector (int64), per head, times heads × bytes."""
    n_q = math.ceil(S / block_size)
    elements = np.array([S * S, 3 * S * d, 4 * S * S + 4 * S * d, 2 * S * d * (1 + n_q)], dtype=np.int64)
    scores, qkv, standard, tiled = (int(x) for x in elements * (n_heads * bytes_per_element))
    return {"score_bytes": scores, "qkv_bytes": qkv, "footprint_ratio": scores / qkv,
            "standard_traffic_bytes": standard, "tiled_traffic_bytes": tiled, "traffic_ratio": standard / tiled}


def standard_attention(*, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False) -> np.ndarray:
    """torch.softmax(QKᵀ/√d)·V with the full (..., S, S) matrix (torch's softmax is stable)."""
    tq, tk, tv = _t(q), _t(k), _t(v)
    S, d = tq.shape[-2:]
    scores = tq @ tk.transpose(-1, -2) / math.sqrt(d)
    if causal:
        future = torch.ones(S, S, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ tv).numpy()


def naive_attention(*, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False) -> np.ndarray:
    """torch.exp of the raw scores, normalised after the product with V: no max subtracted, on purpose."""
    tq, tk, tv = _t(q), _t(k), _t(v)
    S, d = tq.shape[-2:]
    scores = tq @ tk.transpose(-1, -2) / math.sqrt(d)
    if causal:
        scores = scores.masked_fill(torch.ones(S, S, dtype=torch.bool).triu(1), float("-inf"))
    e = torch.exp(scores)
    return ((e @ tv) / e.sum(dim=-1, keepdim=True)).numpy()


def tiled_attention(*, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False,
                    block_size: int = 128) -> np.ndarray:
    """Online softmax over K/V blocks for each query block, in torch."""
    if not (q.shape == k.shape == v.shape):
        raise ValueError(f"q, k, v shapes differ: {q.shape}, {k.shape}, {v.shape}")
    if block_size < 1:
        raise ValueError("block_size must be positive")
    tq, tk, tv = _t(q), _t(k), _t(v)
    S, d = tq.shape[-2:]
    scale = 1.0 / math.sqrt(d)
    out = torch.empty_like(tq)
    with torch.no_grad():
        for i0 in range(0, S, block_size):
            i1 = min(i0 + block_size, S)
            qb = tq[..., i0:i1, :] * scale
            m = torch.full((*qb.shape[:-1], 1), float("-inf"), dtype=tq.dtype)
            l = torch.zeros_like(m)
            acc = torch.zeros_like(qb)
            stop = i1 if causal else S
            for j0 in range(0, stop, block_size):
                j1 = min(j0 + block_size, S)
                s = qb @ tk[..., j0:j1, :].transpose(-1, -2)
                if causal and j1 - 1 > i0:
                    rows = torch.arange(i0, i1).unsqueeze(1)
                    cols = torch.arange(j0, j1).unsqueeze(0)
                    s = s.masked_fill(cols > rows, float("-inf"))
                m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                alpha = torch.exp(m - m_new)
                p = torch.exp(s - m_new)
                l = l * alpha + p.sum(dim=-1, keepdim=True)
                acc = acc * alpha + p @ tv[..., j0:j1, :]
                m = m_new
            out[..., i0:i1, :] = acc / l
    return out.numpy()
