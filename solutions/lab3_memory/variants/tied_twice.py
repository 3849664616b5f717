

# -- negative variant "tied_twice": weights summed over state_dict() ----------------
# state_dict() lists a tied weight under both names (tok_emb.weight, head.weight).
def measure_four_terms(*, config: dict, batch_size: int, optimizer: dict) -> dict:
    model = build_model(config)
    opt = build_optimizer(model, optimizer)
    batch = make_batch(config, batch_size, seed=0)

    weights = sum(_nbytes(t) for t in model.state_dict().values())
    activations, _, _, loss = _saved_tensors(model, lambda: forward_loss(model, batch))
    loss.backward()
    gradients = sum(_nbytes(p.grad) for p in model.parameters() if p.grad is not None)
    opt.step()
    state = sum(_nbytes(v) for s in opt.state.values() for k, v in s.items()
                if k != "step" and torch.is_tensor(v))
    return {"weights": weights, "gradients": gradients, "optimizer_state": state,
            "activations": activations, "total": weights + gradients + state + activations}
