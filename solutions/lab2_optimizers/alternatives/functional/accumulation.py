"""Lab 2, part 2, a correct alternative: ``torch.tensor_split`` at the
contract's cut points, every micro-batch's weight computed up front, each
micro-batch's gradient from ``torch.func.grad`` over ``functional_call``
(summed into ``p.grad`` before the step), and ``model.zero_grad()`` instead
of the optimizer's in the broken versions.
"""

from __future__ import annotations

import torch

import lab2_models


def split_batch(*, batch, micro_batch_size):
    assert micro_batch_size >= 1, f"micro_batch_size must be >= 1, got {micro_batch_size}"
    cuts = list(range(micro_batch_size, len(batch["y"]), micro_batch_size))  # b, 2b, ...: only the last is short
    columns = {key: torch.tensor_split(v, cuts) for key, v in batch.items()}
    return [{key: columns[key][j] for key in batch} for j in range(len(cuts) + 1)]


def accumulate_and_step(*, config, state_dict, batches, micro_batch_size, lr):
    model = lab2_models.build_model(config)
    model.load_state_dict(state_dict)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.0, weight_decay=0.0)

    def micro_loss(params, micro):  # the model as a pure function of its parameters
        return lab2_models.loss_fn(lambda x: torch.func.functional_call(model, params, (x,)), micro)

    def one_step(batch):
        micros = split_batch(batch=batch, micro_batch_size=micro_batch_size)
        weights = [len(m["y"]) / len(batch["y"]) for m in micros]  # b_j / B, summing to 1
        params = {n: p.detach() for n, p in model.named_parameters()}
        total = {n: torch.zeros_like(p) for n, p in params.items()}
        for weight, micro in zip(weights, micros):
            for n, g in torch.func.grad(micro_loss)(params, micro).items():  # this micro-batch's graph only
                total[n] += weight * g
        for n, p in model.named_parameters():
            p.grad = total[n]
        recorded = {n: g.clone() for n, g in total.items()}
        opt.step()
        return recorded

    grads = [one_step(batch) for batch in batches]
    return {"grads": grads, "params": {n: t.detach().clone() for n, t in model.state_dict().items()},
            "forward_log": model.forward_log}


def _run(config, state_dict, batches, micro_batch_size, lr, step_grad):
    model = lab2_models.build_model(config)
    model.load_state_dict(state_dict)
    opt = torch.optim.SGD(model.parameters(), lr=lr)

    def one_step(batch):
        model.zero_grad(set_to_none=True)
        step_grad(model, batch)
        recorded = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        opt.step()
        return recorded

    grads = [one_step(batch) for batch in batches]
    return {"grads": grads, "params": {n: t.detach().clone() for n, t in model.state_dict().items()},
            "forward_log": model.forward_log}


def accumulate_without_scaling(*, config, state_dict, batches, micro_batch_size, lr):
    def unscaled(model, batch):
        for micro in split_batch(batch=batch, micro_batch_size=micro_batch_size):
            lab2_models.loss_fn(model, micro).backward()  # the bug on purpose: no b_j / B
    return _run(config, state_dict, batches, micro_batch_size, lr, unscaled)


def accumulate_with_zero_grad_inside(*, config, state_dict, batches, micro_batch_size, lr):
    def cleared_each_time(model, batch):
        for micro in split_batch(batch=batch, micro_batch_size=micro_batch_size):
            model.zero_grad(set_to_none=False)  # the bug on purpose: clears what came before
            lab2_models.loss_fn(model, micro).mul(len(micro["y"]) / len(batch["y"])).backward()
    return _run(config, state_dict, batches, micro_batch_size, lr, cleared_each_time)
