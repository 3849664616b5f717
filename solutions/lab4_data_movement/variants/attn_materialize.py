

# Variant: right values, wrong memory. It builds the whole (..., S, S) score
# matrix, exactly what tiling exists to avoid; only the measured peak
# memory can tell it apart.
def tiled_attention(*, q, k, v, causal=False, block_size=128):
    return standard_attention(q=q, k=k, v=v, causal=causal)
