

# -- negative variant "no_attention_term": the older chapter revision ---------------
# Per layer 34·s·b·h only: the 5·a·s²·b bytes of the S×S attention tensors are lost.
def activation_bytes(*, s: int, b: int, h: int, a: int, n_layers: int = 1,
                     recompute: str = "none") -> int:
    per_layer = {"none": 34 * s * b * h, "selective": 34 * s * b * h, "full": 2 * s * b * h}
    return n_layers * per_layer[recompute]
