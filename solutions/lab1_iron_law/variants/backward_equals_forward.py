def layer_backward_flops(B: int, S: int, d: int, h: int) -> dict:
    # BUG: only one product per matmul backward (the weight gradient is forgotten)
    return dict(layer_matmul_flops(B, S, d, h))
