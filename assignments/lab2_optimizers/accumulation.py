"""Lab 2, part 2: gradient accumulation.

Your task: implement every function below that raises NotImplementedError.
The docstrings are the contract: the grader relies on exactly the conventions
they state, and calls every function with keyword arguments.

Chapter sections 6 (optimizing the training pipeline) and 8 (pitfalls).

A batch of B examples that does not fit in memory is processed as k
micro-batches of at most b examples each.  Each micro-batch's backward adds
its gradient into ``p.grad``; after the last one the optimizer steps.  For
the result to be the big-batch gradient of the mean loss,

    grad = (1/B) * sum over all B examples of grad(loss_i)
         = sum_j (b_j / B) * grad(mean loss of micro-batch j),

so each micro-batch's mean loss is scaled by b_j / B before backward (that
is 1/k when all micro-batches have the same size).  Batches are dicts
``{"x": (B, d_in) float tensor, "y": (B,) int64 tensor}`` as made by
``lab2_models.make_batch``.

Tóm tắt (tiếng Việt): cài đặt mọi hàm đang raise NotImplementedError. Batch B
mẫu được xử lý thành k micro-batch tối đa b mẫu; mất mát trung bình của
micro-batch j được nhân với b_j / B (= 1/k khi bằng nhau) trước backward. Batch
là dict ``{"x": (B, d_in) float tensor, "y": (B,) int64 tensor}``.
"""

from __future__ import annotations

import torch

import lab2_models


def split_batch(*, batch: dict[str, torch.Tensor], micro_batch_size: int) -> list[dict[str, torch.Tensor]]:
    """Split a batch into consecutive micro-batches of ``micro_batch_size`` examples.

    Examples stay in order: micro-batch j holds examples
    ``j*b ... min((j+1)*b, B) - 1``, so only the last one may be shorter.
    Each micro-batch is a dict with the same keys as ``batch``.
    Returns k = ceil(B / b) micro-batches.

    Tóm tắt (tiếng Việt): chia batch thành k = ceil(B / b) micro-batch liên
    tiếp, giữ nguyên thứ tự, chỉ micro-batch cuối có thể ngắn hơn; mỗi
    micro-batch là dict cùng khoá với ``batch``.
    """
    raise NotImplementedError


def accumulate_and_step(
    *,
    config: dict,  # a lab2_models config
    state_dict: dict[str, torch.Tensor],  # initial parameters, keys "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"
    batches: list[dict[str, torch.Tensor]],  # one big batch per optimizer step
    micro_batch_size: int,
    lr: float,
) -> dict:
    """Train with gradient accumulation: one SGD step per big batch.

    Build the model with ``lab2_models.build_model(config)``, load
    ``state_dict`` into it, and make ``torch.optim.SGD(model.parameters(),
    lr=lr)`` (no momentum, no weight decay).  Then for each big batch in
    ``batches``, in order (``len(batches)`` optimizer steps in all):

    1. split it with ``split_batch`` into micro-batches of
       ``micro_batch_size`` examples (the last may be shorter);
    2. for each micro-batch: compute ``lab2_models.loss_fn(model, micro)``
       (the mean over its examples), scale it so that the accumulated
       gradient is the mean over *all* examples of the big batch, and call
       ``backward()`` once; never put the whole big batch through the model;
    3. record the accumulated gradient (the values of every ``p.grad``);
    4. take one optimizer step.

    No gradient may leak from one big batch into the next.

    Returns ``{"grads": [dict name -> tensor, one per step],
    "params": dict name -> tensor}``: ``grads[t]`` is the gradient that step
    t applied (keys and shapes as in ``state_dict``), ``params`` are the
    parameters after the last step.  Tensors are detached copies in the
    config's dtype.

    Tóm tắt (tiếng Việt): SGD(lr) thuần; với mỗi batch lớn: ``split_batch``, mỗi
    micro-batch backward một lần với mất mát nhân b_j / B, ghi gradient tích luỹ,
    bước một lần; gradient không rò sang batch sau. Trả về ``"grads"`` (dict mỗi
    bước) và ``"params"``: bản sao detach, theo dtype của config.
    """
    raise NotImplementedError
