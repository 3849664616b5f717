def matmul_flops(m: int, k: int, n: int) -> int:
    # BUG: one FLOP per multiply-accumulate; the add is forgotten
    return m * k * n
