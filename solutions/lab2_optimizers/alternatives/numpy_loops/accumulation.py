"""Lab 2, part 2, a correct alternative: a while loop with ``narrow`` for the
micro-batches, the *summed* loss of each micro-batch back-propagated, and the
accumulated gradient divided by B once, just before the step.
"""

from __future__ import annotations

import torch

import lab2_models


def split_batch(*, batch, micro_batch_size):
    assert micro_batch_size >= 1, f"micro_batch_size must be >= 1, got {micro_batch_size}"
    total = batch["y"].shape[0]
    out, start = [], 0
    while start < total:
        length = min(micro_batch_size, total - start)
        out.append({key: v.narrow(0, start, length) for key, v in batch.items()})
        start += length
    return out


def accumulate_and_step(*, config, state_dict, batches, micro_batch_size, lr):
    model = lab2_models.build_model(config)
    model.load_state_dict(state_dict)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    grads = []
    for batch in batches:
        model.zero_grad(set_to_none=False)  # zeros in place, once per optimizer step
        total = batch["y"].shape[0]
        for micro in split_batch(batch=batch, micro_batch_size=micro_batch_size):
            # sum over the micro-batch's examples = its mean times its size
            (lab2_models.loss_fn(model, micro) * micro["y"].shape[0]).backward()
        with torch.no_grad():
            for p in model.parameters():
                p.grad /= total  # the sum over all B examples, divided once: the big-batch mean
        grads.append({name: p.grad.clone() for name, p in model.named_parameters()})
        opt.step()
    state = {name: p.detach().clone() for name, p in model.named_parameters()}
    return {"grads": grads, "params": state, "forward_log": list(model.forward_log)}


def accumulate_without_scaling(*, config, state_dict, batches, micro_batch_size, lr):
    model = lab2_models.build_model(config)
    model.load_state_dict(state_dict)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    grads = []
    for batch in batches:
        model.zero_grad(set_to_none=False)
        for micro in split_batch(batch=batch, micro_batch_size=micro_batch_size):
            lab2_models.loss_fn(model, micro).backward()  # each micro-batch mean counts fully
        grads.append({name: p.grad.clone() for name, p in model.named_parameters()})
        opt.step()
    state = {name: p.detach().clone() for name, p in model.named_parameters()}
    return {"grads": grads, "params": state, "forward_log": list(model.forward_log)}


def accumulate_with_zero_grad_inside(*, config, state_dict, batches, micro_batch_size, lr):
    model = lab2_models.build_model(config)
    model.load_state_dict(state_dict)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    grads = []
    for batch in batches:
        total = batch["y"].shape[0]
        for micro in split_batch(batch=batch, micro_batch_size=micro_batch_size):
            opt.zero_grad()  # inside the loop: only the last micro-batch survives
            (lab2_models.loss_fn(model, micro) * (micro["y"].shape[0] / total)).backward()
        grads.append({name: p.grad.clone() for name, p in model.named_parameters()})
        opt.step()
    state = {name: p.detach().clone() for name, p in model.named_parameters()}
    return {"grads": grads, "params": state, "forward_log": list(model.forward_log)}
