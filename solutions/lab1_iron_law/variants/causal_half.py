def layer_matmul_flops(B: int, S: int, d: int, h: int) -> dict:
    # BUG: halves the attention products for the causal mask; the lab counts the full S x S matrix
    d_head = d // h
    tokens = B * S
    counts = {
        "qkv": matmul_flops(tokens, d, 3 * d),
        "scores": B * h * matmul_flops(S, d_head, S) // 2,
        "attn_v": B * h * matmul_flops(S, S, d_head) // 2,
        "out_proj": matmul_flops(tokens, d, d),
        "mlp": matmul_flops(tokens, d, 4 * d) + matmul_flops(tokens, 4 * d, d),
    }
    counts["total"] = sum(counts.values())
    return counts
