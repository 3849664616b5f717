

# Variant: forgets to rescale the running output when the running max grows.
# The normaliser l is still rescaled, so l and acc disagree after a block
# raises the max.
def tiled_attention(*, q, k, v, causal=False, block_size=128):
    *lead, S, d = q.shape
    B = block_size
    scale = 1.0 / math.sqrt(d)
    out = np.empty_like(q)
    for i0 in range(0, S, B):
        i1 = min(i0 + B, S)
        q_blk = q[..., i0:i1, :] * scale
        m = np.full((*lead, i1 - i0, 1), -np.inf, dtype=q.dtype)
        l = np.zeros((*lead, i1 - i0, 1), dtype=q.dtype)
        acc = np.zeros((*lead, i1 - i0, d), dtype=q.dtype)
        for j0 in range(0, i1 if causal else S, B):
            j1 = min(j0 + B, S)
            s = q_blk @ np.swapaxes(k[..., j0:j1, :], -1, -2)
            if causal and j1 > i0 + 1:
                visible = np.arange(i0, i1)[:, None] >= np.arange(j0, j1)[None, :]
                s = np.where(visible, s, -np.inf)
            m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
            alpha = np.exp(m - m_new)
            p = np.exp(s - m_new)
            l = alpha * l + p.sum(axis=-1, keepdims=True)
            acc = acc + p @ v[..., j0:j1, :]  # BUG: acc is not multiplied by alpha
            m = m_new
        out[..., i0:i1, :] = acc / l
    return out
