# -- negative variant "zeros_as_underflow": every FP16 zero counted as underflow ------
# A gradient that is exactly 0 in FP32 (an untied embedding row of a token not in
# the batch, a dead ReLU unit) is 0 in FP16 too, but nothing was lost in the cast.
def fp16_gradient_underflow(*, config: dict, batch_size: int, loss_scale: float = 1.0) -> dict:
    model = build_model(config)
    loss = forward_loss(model, make_batch(config, batch_size, seed=0))
    (loss * loss_scale).backward()

    totals = {"n_nonzero": 0, "n_underflow": 0, "n_overflow": 0}
    by_param = {}
    for name, p in model.named_parameters():
        if p.grad is None:
            continue
        g16 = p.grad.to(torch.float16)
        nonzero = int((p.grad != 0).sum())
        under = int((g16 == 0).sum())  # the exact zeros too
        totals["n_nonzero"] += nonzero
        totals["n_underflow"] += under
        totals["n_overflow"] += int(torch.isinf(g16).sum())
        by_param[name] = under / nonzero if nonzero else 0.0
    n = totals["n_nonzero"]
    return {**totals, "underflow_fraction": totals["n_underflow"] / n if n else 0.0,
            "underflow_by_parameter": by_param}
