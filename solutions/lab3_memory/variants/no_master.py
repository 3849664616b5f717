

# -- negative variant "no_master": the 12-byte rule ---------------------------------
# Mixed-precision Adam without the FP32 master copy: 2 + 2 + 4 + 4 = 12 (the recipe of the
# chapter's 7B example), where the "mixed_adam" scheme's docstring keeps the master (16).
# Without masters, FP16 weights swallow small updates (see lost_updates).
def bytes_per_parameter(*, scheme: str) -> dict:
    fp16, fp32 = 2, 4
    table = {
        "mixed_adam": dict(weights=fp16, gradients=fp16, master=0, adam_m=fp32, adam_v=fp32),
        "fp32_adam": dict(weights=fp32, gradients=fp32, master=0, adam_m=fp32, adam_v=fp32),
        "mixed_adam_fp32_grads": dict(weights=fp16, gradients=fp32, master=0, adam_m=fp32, adam_v=fp32),
    }
    parts = table[scheme]
    return {**parts, "total": sum(parts.values())}
