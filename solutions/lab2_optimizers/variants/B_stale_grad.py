

# --- variant B_stale_grad: zero_grad() once, before the loop, instead of once per step ---
def accumulate_and_step(*, config, state_dict, batches, micro_batch_size, lr):
    model = lab2_models.build_model(config)
    model.load_state_dict(state_dict)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    opt.zero_grad(set_to_none=True)  # BUG: only here, so step 2 also applies what is left from step 1
    grads = []
    for batch in batches:
        B = len(batch["y"])
        for micro in split_batch(batch=batch, micro_batch_size=micro_batch_size):
            (lab2_models.loss_fn(model, micro) * (len(micro["y"]) / B)).backward()
        grads.append({name: p.grad.detach().clone() for name, p in model.named_parameters()})
        opt.step()
    return {"grads": grads, "params": {name: p.detach().clone() for name, p in model.named_parameters()},
            "forward_log": model.forward_log}
