"""Lab 4, part 2, another idiom: FlashAttention-1's loop order.

The reference walks query blocks outside and K/V blocks inside (as
FlashAttention-2 does). Here the outer loop is over K/V blocks and the
running max m, normaliser l and unnormalised output acc are kept for all S
query rows at once (O(S·d) memory); the inner loop visits every query block
against the current K/V block. Only one block×block tile of scores exists
at a time.
"""

from __future__ import annotations

import math

import numpy as np


def attention_score_bytes(*, S: int, block_size: int, bytes_per_element: int) -> dict:
    """Bytes of the full S×S score matrix and of one block×block tile."""
    full = S
    full *= S
    return {"full_bytes": full * bytes_per_element, "tile_bytes": block_size ** 2 * bytes_per_element}


def attention_hbm_bytes(*, S: int, d: int, block_size: int, n_heads: int = 1, bytes_per_element: int = 4) -> dict:
    """Counted by walking the kernels and the documented loop (query blocks outer), one head, then scaled."""
    kernels = [(2 * S * d, S * S), (S * S, S * S), (S * S + S * d, S * d)]  # (reads, writes): QKᵀ, softmax, P·V
    standard = 0
    for reads, writes in kernels:
        standard += reads + writes
    tiled = 0
    for i0 in range(0, S, block_size):
        rows = min(block_size, S - i0)
        tiled += 2 * rows * d  # the query block read once, its output rows written once
        for j0 in range(0, S, block_size):
            tiled += 2 * min(block_size, S - j0) * d  # a K block and a V block
    scale = n_heads * bytes_per_element
    scores = S * S * scale
    qkv = 3 * S * d * scale
    return {"score_bytes": scores, "qkv_bytes": qkv, "footprint_ratio": scores / qkv,
            "standard_traffic_bytes": standard * scale, "tiled_traffic_bytes": tiled * scale,
            "traffic_ratio": standard / tiled}


def standard_attention(*, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False) -> np.ndarray:
    """softmax(QKᵀ/√d)·V with the (..., S, S) matrix, stable softmax, via einsum."""
    S, d = q.shape[-2], q.shape[-1]
    scores = np.einsum("...id,...jd->...ij", q, k) / q.dtype.type(math.sqrt(d))
    if causal:
        above = np.triu_indices(S, 1)  # (i, j) with j > i: the future
        scores[..., above[0], above[1]] = -np.inf
    scores -= np.max(scores, axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= np.sum(scores, axis=-1, keepdims=True)
    return np.einsum("...ij,...jd->...id", scores, v)


def naive_attention(*, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False) -> np.ndarray:
    """The unstable softmax on purpose: exp of the raw scores, in place, via einsum; no max subtracted."""
    S, d = q.shape[-2], q.shape[-1]
    scores = np.einsum("...id,...jd->...ij", q, k) / q.dtype.type(math.sqrt(d))
    if causal:
        above = np.triu_indices(S, 1)
        scores[..., above[0], above[1]] = -np.inf
    np.exp(scores, out=scores)
    scores /= np.sum(scores, axis=-1, keepdims=True)
    return np.einsum("...ij,...jd->...id", scores, v)


def tiled_attention(*, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False,
                    block_size: int = 128) -> np.ndarray:
    """softmax(QKᵀ/√d)·V with an online softmax; K/V blocks outside, query blocks inside."""
    if q.shape != k.shape or k.shape != v.shape:
        raise ValueError(f"q, k, v shapes differ: {q.shape}, {k.shape}, {v.shape}")
    if block_size < 1:
        raise ValueError("block_size must be positive")
    S, d = q.shape[-2:]
    dt = q.dtype
    qs = q * dt.type(1.0 / math.sqrt(d))  # (..., S, d): scaled once
    m = np.full(q.shape[:-1] + (1,), -np.inf, dtype=dt)  # running max, every query row
    l = np.zeros(q.shape[:-1] + (1,), dtype=dt)  # running normaliser
    acc = np.zeros(q.shape, dtype=dt)  # running unnormalised output
    rows = np.arange(S)
    for j0 in range(0, S, block_size):
        j1 = min(S, j0 + block_size)
        kt = np.swapaxes(k[..., j0:j1, :], -1, -2)  # (..., d, Bk)
        vj = v[..., j0:j1, :]
        # causal: query rows before j0 see nothing of this block; the query block at j0 is the first to look
        for i0 in range(j0 if causal else 0, S, block_size):
            i1 = min(S, i0 + block_size)
            s = qs[..., i0:i1, :] @ kt  # (..., Bq, Bk)
            if causal and j1 - 1 > i0:  # part of the tile lies above the diagonal
                s = np.where(rows[i0:i1, None] >= rows[None, j0:j1], s, -np.inf)
            m_old = m[..., i0:i1, :]
            m_new = np.maximum(m_old, s.max(axis=-1, keepdims=True))
            # Block 0 comes first and key 0 is visible to every row, so m_new is finite here.
            scale_old = np.exp(m_old - m_new)
            p = np.exp(s - m_new)
            l[..., i0:i1, :] = scale_old * l[..., i0:i1, :] + p.sum(axis=-1, keepdims=True)
            acc[..., i0:i1, :] = scale_old * acc[..., i0:i1, :] + p @ vj
            m[..., i0:i1, :] = m_new
    return acc / l
