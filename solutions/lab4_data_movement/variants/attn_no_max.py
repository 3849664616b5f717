

# Variant: the naive softmax. standard_attention exponentiates the raw
# scores without subtracting each row's max: right for small scores, inf/inf
# = NaN as soon as a score passes 88 (float32) or 709 (float64).
def standard_attention(*, q, k, v, causal=False):
    S, d = q.shape[-2:]
    scores = (q @ np.swapaxes(k, -1, -2)) * (1.0 / math.sqrt(d))
    if causal:
        scores = np.where(np.tri(S, dtype=bool), scores, -np.inf)
    p = np.exp(scores)  # BUG: no max subtraction
    return (p / p.sum(axis=-1, keepdims=True)) @ v
