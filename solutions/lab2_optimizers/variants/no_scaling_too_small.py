

# --- variant no_scaling_too_small: each micro-batch loss divided by k twice, k times too small ---
def accumulate_without_scaling(*, config, state_dict, batches, micro_batch_size, lr):
    model = lab2_models.build_model(config)
    model.load_state_dict(state_dict)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    grads = []
    for batch in batches:
        opt.zero_grad(set_to_none=True)
        micros = split_batch(batch=batch, micro_batch_size=micro_batch_size)
        for micro in micros:
            (lab2_models.loss_fn(model, micro) / len(micros) ** 2).backward()  # BUG: the other way, k x too small
        grads.append({name: p.grad.detach().clone() for name, p in model.named_parameters()})
        opt.step()
    return {"grads": grads, "params": {name: p.detach().clone() for name, p in model.named_parameters()},
            "forward_log": model.forward_log}
