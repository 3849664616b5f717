

# --- variant zero_inside_never_cleared: no zero_grad() at all, gradients leak from step to step ---
def accumulate_with_zero_grad_inside(*, config, state_dict, batches, micro_batch_size, lr):
    model = lab2_models.build_model(config)
    model.load_state_dict(state_dict)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    grads = []
    for batch in batches:
        B = len(batch["y"])
        for micro in split_batch(batch=batch, micro_batch_size=micro_batch_size):
            (lab2_models.loss_fn(model, micro) * (len(micro["y"]) / B)).backward()  # BUG: never cleared
        grads.append({name: p.grad.detach().clone() for name, p in model.named_parameters()})
        opt.step()
    return {"grads": grads, "params": {name: p.detach().clone() for name, p in model.named_parameters()},
            "forward_log": model.forward_log}
