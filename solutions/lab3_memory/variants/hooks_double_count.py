

# -- negative variant "hooks_double_count": forward hooks on every module -----------
# A container (Block, attention, MLP) returns the very tensor its last child
# returned, so hooking model.modules() instead of the leaves counts it twice.
def activation_hook_counts(*, config: dict, batch_size: int) -> dict:
    model = build_model(config)
    batch = make_batch(config, batch_size, seed=0)
    out_bytes = [0]

    def on_output(module, inputs, output):
        outs = output if isinstance(output, (tuple, list)) else (output,)
        out_bytes[0] += sum(_nbytes(t) for t in outs if torch.is_tensor(t))

    handles = [m.register_forward_hook(on_output) for m in model.modules()]  # not only the leaves
    try:
        saved, calls, param_calls, _ = _saved_tensors(model, lambda: forward_loss(model, batch))
    finally:
        for h in handles:
            h.remove()
    return {"saved_bytes": saved, "saved_tensors": calls,
            "parameter_saves": param_calls, "module_output_bytes": out_bytes[0]}
