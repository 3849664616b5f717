

# -- negative variant "hooks_left_on": a global hook never removed -------------------------
# Leaf outputs are counted with the global register_module_forward_hook into module-level
# totals, reset at the start of each call; the hook's handle is dropped, never removed. The
# first call in a process is right; every later call has one more hook installed, so its
# leaf outputs count once per call made so far.
_LEAF_IDS: set[int] = set()
_LEAF_OUTPUT_BYTES = [0]


def _count_leaf_output(module, inputs, output):
    if id(module) in _LEAF_IDS:
        outs = output if isinstance(output, (tuple, list)) else (output,)
        _LEAF_OUTPUT_BYTES[0] += sum(_nbytes(t) for t in outs if torch.is_tensor(t))


def activation_hook_counts(*, config: dict, batch_size: int) -> dict:
    model = build_model(config)
    batch = make_batch(config, batch_size, seed=0)
    _LEAF_IDS.clear()
    _LEAF_IDS.update(id(m) for m in model.modules() if not list(m.children()))
    _LEAF_OUTPUT_BYTES[0] = 0
    torch.nn.modules.module.register_module_forward_hook(_count_leaf_output)  # BUG: never removed
    saved, calls, param_calls, _ = _saved_tensors(model, lambda: forward_loss(model, batch))
    return {"saved_bytes": saved, "saved_tensors": calls,
            "parameter_saves": param_calls, "module_output_bytes": _LEAF_OUTPUT_BYTES[0]}
