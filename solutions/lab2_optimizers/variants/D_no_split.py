# --- variant D_no_split: the whole big batch through the model at once ---
# The gradient is exactly the big-batch gradient (it *is* the big batch), so only
# the model's own forward log shows that nothing was accumulated.
def accumulate_and_step(*, config, state_dict, batches, micro_batch_size, lr):
    model = lab2_models.build_model(config)
    model.load_state_dict(state_dict)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    grads = []
    for batch in batches:
        opt.zero_grad(set_to_none=True)
        lab2_models.loss_fn(model, batch).backward()  # BUG: B examples in one forward; memory never drops
        grads.append({name: p.grad.detach().clone() for name, p in model.named_parameters()})
        opt.step()
    return {"grads": grads, "params": {name: p.detach().clone() for name, p in model.named_parameters()},
            "forward_log": model.forward_log}
