def layer_matmul_flops(B: int, S: int, d: int, h: int) -> dict:
    d_head = d / h  # BUG: true division: d_head, and every count made from it, is a float, not an exact int
    tokens = B * S
    counts = {
        "qkv": matmul_flops(tokens, d, 3 * d),
        "scores": B * h * matmul_flops(S, d_head, S),
        "attn_v": B * h * matmul_flops(S, S, d_head),
        "out_proj": matmul_flops(tokens, d, d),
        "mlp": matmul_flops(tokens, d, 4 * d) + matmul_flops(tokens, 4 * d, d),
    }
    counts["total"] = sum(counts.values())
    return counts
