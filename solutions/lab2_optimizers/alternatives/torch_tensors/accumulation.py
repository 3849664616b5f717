"""Lab 2, part 2, a correct alternative: ``torch.split`` for the micro-batches,
``torch.autograd.grad`` instead of ``backward()``, the accumulated gradient
kept in a dict and written into ``p.grad`` just before the step.
"""

from __future__ import annotations

import torch

import lab2_models


def split_batch(*, batch, micro_batch_size):
    assert micro_batch_size >= 1, f"micro_batch_size must be >= 1, got {micro_batch_size}"
    parts = {key: torch.split(v, micro_batch_size) for key, v in batch.items()}  # b, b, ..., the rest
    return [dict(zip(parts, values)) for values in zip(*parts.values())]


def accumulate_and_step(*, config, state_dict, batches, micro_batch_size, lr):
    model = lab2_models.build_model(config)
    model.load_state_dict(state_dict)
    names, params = zip(*model.named_parameters())
    opt = torch.optim.SGD(params, lr=lr)
    grads = []
    for batch in batches:
        total = len(batch["y"])
        acc = None
        for micro in split_batch(batch=batch, micro_batch_size=micro_batch_size):
            loss = lab2_models.loss_fn(model, micro) * (len(micro["y"]) / total)
            parts = torch.autograd.grad(loss, params)
            acc = list(parts) if acc is None else [a + g for a, g in zip(acc, parts)]
        for p, g in zip(params, acc):
            p.grad = g  # fresh each step: nothing carried over
        grads.append({n: g.detach().clone() for n, g in zip(names, acc)})
        opt.step()
    return {"grads": grads, "params": {n: p.detach().clone() for n, p in zip(names, params)},
            "forward_log": model.forward_log}


def _broken(config, state_dict, batches, micro_batch_size, lr, combine):
    model = lab2_models.build_model(config)
    model.load_state_dict(state_dict)
    names, params = zip(*model.named_parameters())
    opt = torch.optim.SGD(params, lr=lr)
    grads = []
    for batch in batches:
        total = len(batch["y"])
        acc = None
        for micro in split_batch(batch=batch, micro_batch_size=micro_batch_size):
            acc = combine(acc, micro, total, model, params)
        for p, g in zip(params, acc):
            p.grad = g
        grads.append({n: g.detach().clone() for n, g in zip(names, acc)})
        opt.step()
    return {"grads": grads, "params": {n: p.detach().clone() for n, p in zip(names, params)},
            "forward_log": model.forward_log}


def accumulate_without_scaling(*, config, state_dict, batches, micro_batch_size, lr):
    def add_unscaled(acc, micro, total, model, params):
        parts = torch.autograd.grad(lab2_models.loss_fn(model, micro), params)
        return list(parts) if acc is None else [a + g for a, g in zip(acc, parts)]
    return _broken(config, state_dict, batches, micro_batch_size, lr, add_unscaled)


def accumulate_with_zero_grad_inside(*, config, state_dict, batches, micro_batch_size, lr):
    def keep_latest(acc, micro, total, model, params):  # what was accumulated is dropped each time
        return list(torch.autograd.grad(lab2_models.loss_fn(model, micro) * (len(micro["y"]) / total), params))
    return _broken(config, state_dict, batches, micro_batch_size, lr, keep_latest)
