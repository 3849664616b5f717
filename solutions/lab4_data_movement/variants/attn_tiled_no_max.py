

# Variant: tiled attention without a running max. It sums exp(s) and
# exp(s)·v block by block, which is exact on paper and overflows as soon
# as a score passes 88 (float32) or 709 (float64).
def tiled_attention(*, q, k, v, causal=False, block_size=128):
    *lead, S, d = q.shape
    B = block_size
    scale = 1.0 / math.sqrt(d)
    out = np.empty_like(q)
    for i0 in range(0, S, B):
        i1 = min(i0 + B, S)
        q_blk = q[..., i0:i1, :] * scale
        l = np.zeros((*lead, i1 - i0, 1), dtype=q.dtype)
        acc = np.zeros((*lead, i1 - i0, d), dtype=q.dtype)
        for j0 in range(0, i1 if causal else S, B):
            j1 = min(j0 + B, S)
            s = q_blk @ np.swapaxes(k[..., j0:j1, :], -1, -2)
            if causal and j1 > i0 + 1:
                visible = np.arange(i0, i1)[:, None] >= np.arange(j0, j1)[None, :]
                s = np.where(visible, s, -np.inf)
            p = np.exp(s)  # BUG: no running max to subtract
            l = l + p.sum(axis=-1, keepdims=True)
            acc = acc + p @ v[..., j0:j1, :]
        out[..., i0:i1, :] = acc / l
    return out
