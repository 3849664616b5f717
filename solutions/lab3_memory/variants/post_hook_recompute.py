

# -- negative variant "post_hook_recompute": counting forwards with post-hooks ------
# Non-reentrant checkpointing stops the recompute once the last saved tensor is
# rebuilt, so the block's forward never returns and a post-hook never fires.
def measure_checkpointing(*, config: dict, batch_size: int, segment_size: int) -> dict:
    model = build_model(config)
    x, y = make_batch(config, batch_size, seed=0)
    blocks = list(model.blocks)
    calls = [0] * len(blocks)

    def count(i):
        def post_hook(module, inputs, output):
            calls[i] += 1
        return post_hook

    handles = [blk.register_forward_hook(count(i)) for i, blk in enumerate(blocks)]

    def forward():
        h = model.embed(x)
        if segment_size == 0:
            h = _run_blocks(blocks, h)
        else:
            for start in range(0, len(blocks), segment_size):
                h = checkpoint(_run_blocks, blocks[start:start + segment_size], h, use_reentrant=False)
        return model.head_loss(h, y)

    try:
        saved, _, _, loss = _saved_tensors(model, forward)
        loss.backward()
    finally:
        for hd in handles:
            hd.remove()
    grad_sq = sum(float(p.grad.double().pow(2).sum()) for p in model.parameters() if p.grad is not None)
    return {"saved_bytes": saved, "forward_calls": calls, "loss": float(loss.detach()),
            "grad_norm": math.sqrt(grad_sq)}
