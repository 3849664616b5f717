

# Variant: walks over K/V in whole blocks only, so when block_size does not
# divide S the last, shorter block of keys is never seen.
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
        for jb in range(S // B):  # BUG: drops the last partial block of keys
            j0, j1 = jb * B, (jb + 1) * B
            if causal and j0 >= i1:
                break
            s = q_blk @ np.swapaxes(k[..., j0:j1, :], -1, -2)
            if causal and j1 > i0 + 1:
                visible = np.arange(i0, i1)[:, None] >= np.arange(j0, j1)[None, :]
                s = np.where(visible, s, -np.inf)
            m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
            alpha = np.exp(m - m_new)
            p = np.exp(s - m_new)
            l = alpha * l + p.sum(axis=-1, keepdims=True)
            acc = alpha * acc + p @ v[..., j0:j1, :]
            m = m_new
        out[..., i0:i1, :] = acc / l
    return out
