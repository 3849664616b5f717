"""Lab 4, part 2, another idiom: one query row at a time, a running log-sum-exp.

For every query row the K/V blocks are visited in order, and the row keeps
a running log-sum-exp lse = log Σ exp(s) and the already normalised output
o = Σ softmax-so-far · v (the FlashAttention-1 paper's form) instead of m, l
and an unnormalised accumulator. A new block with log-sum-exp b gives
lse' = lse + log1p(exp(b − lse)) (or b + log1p(exp(lse − b))), and
o' = exp(lse − lse')·o + exp(b − lse')·o_b. Every exp has an argument ≤ 0,
so nothing overflows. Numpy works on one row against one block (vectorised
over the block's keys), well inside the time limit.
"""

from __future__ import annotations

import math

import numpy as np


def attention_score_bytes(*, S: int, block_size: int, bytes_per_element: int) -> dict:
    """Bytes of the full S×S score matrix and of one block×block tile."""
    sizes = {"full_bytes": (S, S), "tile_bytes": (block_size, block_size)}
    return {key: math.prod(shape) * bytes_per_element for key, shape in sizes.items()}


def attention_hbm_bytes(*, S: int, d: int, block_size: int, n_heads: int = 1, bytes_per_element: int = 4) -> dict:
    """Per-tensor sizes, summed: the S×S matrices twice each (written, read back); K and V once per query block."""
    square, thin = S * S, S * d
    query_blocks = -(-S // block_size)
    per_head = {
        "score_bytes": square,
        "qkv_bytes": 3 * thin,
        "standard_traffic_bytes": 2 * thin + 2 * square + 2 * square + thin + thin,  # QKᵀ, softmax, P·V
        "tiled_traffic_bytes": thin + query_blocks * 2 * thin + thin,
    }
    out = {key: n * n_heads * bytes_per_element for key, n in per_head.items()}
    out["footprint_ratio"] = per_head["score_bytes"] / per_head["qkv_bytes"]
    out["traffic_ratio"] = per_head["standard_traffic_bytes"] / per_head["tiled_traffic_bytes"]
    return out


def _softmax_rows(scores: np.ndarray) -> np.ndarray:
    shifted = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(shifted)
    return w / w.sum(axis=-1, keepdims=True)


def standard_attention(*, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False) -> np.ndarray:
    """The full (..., S, S) matrix; the causal mask from np.tril."""
    S, d = q.shape[-2:]
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) / math.sqrt(d)
    if causal:
        scores = np.where(np.tril(np.ones((S, S), dtype=bool)), scores, -np.inf)
    return np.matmul(_softmax_rows(scores), v).astype(q.dtype, copy=False)


def _merge(lse, o, b, o_b):
    """Combine two normalised partial softmaxes of one row given their log-sum-exps."""
    hi, lo = (lse, b) if lse >= b else (b, lse)
    new = hi + math.log1p(math.exp(lo - hi))
    return new, math.exp(lse - new) * o + math.exp(b - new) * o_b


def naive_attention(*, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False) -> np.ndarray:
    """The unstable softmax on purpose: exp of the raw scores; the mask from np.tril."""
    S, d = q.shape[-2:]
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) / math.sqrt(d)
    if causal:
        scores = np.where(np.tril(np.ones((S, S), dtype=bool)), scores, -np.inf)
    w = np.exp(scores)
    return np.matmul(w / w.sum(axis=-1, keepdims=True), v).astype(q.dtype, copy=False)


def tiled_attention(*, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False,
                    block_size: int = 128) -> np.ndarray:
    """Online softmax per query row over K/V blocks, in log-sum-exp form."""
    if len({q.shape, k.shape, v.shape}) > 1:
        raise ValueError(f"q, k, v shapes differ: {q.shape}, {k.shape}, {v.shape}")
    if not block_size >= 1:
        raise ValueError("block_size must be positive")
    *lead_shape, S, d = q.shape
    dt = q.dtype
    scale = dt.type(1.0 / math.sqrt(d))
    out = np.empty_like(q)
    for lead in np.ndindex(*lead_shape):  # () once when q is (S, d)
        qh, kh, vh, oh = q[lead], k[lead], v[lead], out[lead]
        for i in range(S):
            qi = qh[i] * scale  # (d,)
            n_keys = i + 1 if causal else S
            lse, o = -math.inf, np.zeros(d, dtype=dt)
            for j0 in range(0, n_keys, block_size):
                j1 = min(j0 + block_size, n_keys)
                s = kh[j0:j1] @ qi  # (Bk,): this row's scores against the block's keys
                top = s.max()
                w = np.exp(s - top)
                total = w.sum()
                b = float(top) + math.log(float(total))  # the block's log-sum-exp
                o_b = (w / total) @ vh[j0:j1]  # the block's own softmax · V
                if lse == -math.inf:
                    lse, o = b, o_b
                else:
                    lse, o = _merge(lse, o, b, o_b)
            oh[i] = o
    return out
