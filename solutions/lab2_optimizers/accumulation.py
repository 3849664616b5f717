"""Lab 2, part 2: gradient accumulation.

Your task: implement every function below that raises NotImplementedError.
The docstrings are the contract: the grader relies on exactly the conventions
they state, and calls every function with keyword arguments.

Chapter: §6.5.1.1 Gradient accumulation (the equivalence and the loss
divided by k), §6.5.3 Memory and computational benefits (GPT-2's
accumulation loop, ``no_sync()``), §6.5.4 Practical considerations (divide
the loss by k, or sum and divide the learning rate by k) and §3.2.4
Framework optimizer interface and scheduling (``zero_grad()`` and stale
gradients).

A batch of B examples that does not fit in memory is processed as k
micro-batches of at most b examples each.  Each micro-batch's backward adds
its gradient into ``p.grad``; after the last one the optimizer steps.

Why 1/k: ``lab2_models.loss_fn`` is a *mean* over its examples, and so is
the big-batch loss the accumulation must reproduce.  With k micro-batches
of b examples (B = k·b), the mean over all B examples is the mean of the k
micro-batch means (the chapter's equation):

    grad = (1/B) * sum over all B examples of grad(loss_i)
         = (1/k) * sum_j grad(mean loss of micro-batch j),

so each micro-batch's mean loss is divided by k before ``backward()``, and
the learning rate stays the one the big batch would use (§6.5.4 Practical
considerations).  Summing the micro-batch means without the 1/k gives k
times the gradient.  A sum is right in three cases:

* the chapter's other convention (§6.5.4 Practical considerations): sum the
  k micro-batch gradients and divide the learning rate by k.  Plain SGD then
  takes the same step, but the accumulated gradient is k times the mean; this
  function keeps ``lr`` and reports the gradient, so it divides the loss;
* a loss that is a *sum* over examples (``reduction="sum"``): the
  accumulated sum is then exactly the big batch's summed loss, with no
  scaling at all (and a learning rate meant for a summed loss);
* a weighted sum, when the micro-batches are unequal.  With a short last
  micro-batch of b_j < b examples, 1/k over-weights it; the mean over all
  examples weights each micro-batch by its share of the examples:

    grad = sum_j (b_j / B) * grad(mean loss of micro-batch j),

so each micro-batch's mean loss is scaled by b_j / B (which is 1/k when all
sizes are equal).  The chapter's equation assumes equal micro-batches
(B = k·b) and a consistently averaged loss; the unequal case is this lab's
own step from it.  Batches are dicts ``{"x": (B, d_in) float tensor, "y":
(B,) int64 tensor}`` as made by ``lab2_models.make_batch``.

Tóm tắt (tiếng Việt): cài đặt mọi hàm đang raise NotImplementedError. Batch B
mẫu được xử lý thành k micro-batch tối đa b mẫu. Vì mất mát là trung bình theo
mẫu, trung bình trên cả B = k·b mẫu bằng trung bình của k giá trị trung bình
micro-batch: chia mất mát của mỗi micro-batch cho k, giữ nguyên tốc độ học.
Cộng dồn mà không chia thì gradient lớn gấp k lần. Tổng đúng trong ba trường
hợp: chia tốc độ học cho k thay vì chia mất mát (quy ước còn lại của chương;
gradient khi đó gấp k lần trung bình, nên hàm này chia mất mát); mất mát là tổng
theo mẫu (``reduction="sum"``); và tổng có trọng số khi các micro-batch không bằng
nhau: mất mát trung bình của micro-batch j được nhân với b_j / B (= 1/k khi bằng
nhau) trước backward. Batch là dict
``{"x": (B, d_in) float tensor, "y": (B,) int64 tensor}``.
"""

from __future__ import annotations

import torch

import lab2_models


def split_batch(*, batch: dict[str, torch.Tensor], micro_batch_size: int) -> list[dict[str, torch.Tensor]]:
    """Split a batch into consecutive micro-batches of ``micro_batch_size`` examples.

    Examples stay in order: micro-batch j holds examples
    ``j*b ... min((j+1)*b, B) - 1``, so only the last one may be shorter.
    Each micro-batch is a dict with the same keys as ``batch``.
    Returns k = ceil(B / b) micro-batches.  This is not equal chunking:
    ``torch.chunk`` and ``np.array_split`` cut k near-equal parts, so for
    B = 9, b = 4 they give sizes 3, 3, 3 where this contract gives 4, 4, 1.

    Tóm tắt (tiếng Việt): chia batch thành k = ceil(B / b) micro-batch liên
    tiếp, giữ nguyên thứ tự, chỉ micro-batch cuối có thể ngắn hơn; mỗi
    micro-batch là dict cùng khoá với ``batch``. Đây không phải chia đều:
    với B = 9, b = 4, ``torch.chunk`` và ``np.array_split`` cho 3, 3, 3, còn
    hợp đồng này cho 4, 4, 1.
    """
    ### BEGIN SOLUTION
    assert micro_batch_size >= 1, f"micro_batch_size must be >= 1, got {micro_batch_size}"
    B = len(batch["y"])
    return [{key: v[i : i + micro_batch_size] for key, v in batch.items()} for i in range(0, B, micro_batch_size)]
    ### END SOLUTION


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
    2. for each micro-batch, in order: compute
       ``lab2_models.loss_fn(model, micro)`` (the mean over its examples;
       this is the model's one forward for that micro-batch), scale it so
       that the accumulated gradient is the mean over *all* examples of the
       big batch, and call ``backward()`` once, before the next
       micro-batch's forward (so only one micro-batch's activations are
       alive at a time); never put the whole big batch through the model,
       and never sum the k losses to call ``backward()`` once;
    3. record the accumulated gradient (the values of every ``p.grad``);
    4. take one optimizer step.

    Each big batch's gradient starts from zero: clear the gradients once per
    big batch (``zero_grad()`` marks the boundary between one update and the
    next, §3.2.4 Framework optimizer interface and scheduling).  Misplaced,
    the clear breaks the step either way: done only once, before the loop
    over big batches, the previous step's gradient leaks into the next
    (stale gradients, the chapter's bug (B)); done between two micro-batches
    of one big batch, only the last micro-batch's gradient is left (the
    other misplacement, which the chapter does not describe).  The
    arguments are not modified.

    Returns ``{"grads": [dict name -> tensor, one per step],
    "params": dict name -> tensor, "forward_log": list}``: ``grads[t]`` is
    the gradient that step t applied (keys and shapes as in
    ``state_dict``), ``params`` are the parameters after the last step.
    Tensors are detached copies in the config's dtype.  ``forward_log`` is
    the model's own ``model.forward_log`` after the last step, returned as
    it is (``lab2_models`` records every forward: how many examples, a
    digest of which, and whether a gradient came back through it before the
    next forward).

    What the grader checks: the gradient of every step and the final
    parameters against big-batch SGD on the trusted ``lab2_models``
    (float64, rtol 1e-9), and the forward log against the micro-batches it
    expects: exactly one forward per micro-batch, in order, each with that
    micro-batch's examples and back-propagated before the next forward,
    ``len(batches) * k`` entries in all.  A forward of more than
    ``micro_batch_size`` examples, or a backward that waits for a later
    micro-batch, loses the question even when the gradient is right.  One
    case runs in float32 and checks the returned dtype.  Each call has the lab's 30 s limit
    (``lab.toml`` ``timeout_s``); the grader's cases take milliseconds.

    Tóm tắt (tiếng Việt): SGD(lr) thuần; với mỗi batch lớn: ``split_batch``, mỗi
    micro-batch đi qua mô hình đúng một lần (lượt xuôi) và backward một lần với
    mất mát nhân b_j / B, trước lượt xuôi của micro-batch kế tiếp (không cộng
    dồn k mất mát rồi mới backward một lần), ghi gradient tích luỹ, bước một lần; gradient không rò
    sang batch sau; không bao giờ đưa cả batch lớn qua mô hình. Trả về
    ``"grads"`` (dict mỗi bước), ``"params"`` (bản sao detach, theo dtype của
    config) và ``"forward_log"``: ``model.forward_log`` nguyên vẹn. Bộ chấm
    so gradient và tham số với SGD trên batch lớn, và so nhật ký lượt xuôi với
    các micro-batch nó mong đợi: một lượt xuôi cho mỗi micro-batch, đúng thứ
    tự, đúng các mẫu, đã backward trước lượt xuôi kế tiếp; một lượt xuôi nhiều
    hơn ``micro_batch_size`` mẫu, hoặc một backward chờ micro-batch sau, làm mất
    điểm câu hỏi dù gradient đúng. Một trường hợp chạy float32 và kiểm tra dtype
    trả về. Mỗi lần gọi có giới hạn 30 s. Gradient của mỗi batch lớn bắt đầu
    từ 0: xoá gradient một lần cho mỗi batch lớn; chỉ xoá một lần trước vòng lặp thì
    gradient cũ rò sang bước sau (lỗi (B) của chương,
    §3.2.4 Framework optimizer interface and scheduling); xoá giữa hai
    micro-batch thì chỉ còn micro-batch cuối (cách đặt sai còn lại, chương
    sách không mô tả).
    """
    ### BEGIN SOLUTION
    model = lab2_models.build_model(config)
    model.load_state_dict(state_dict)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    grads = []
    for batch in batches:
        opt.zero_grad(set_to_none=True)  # start every big batch from zero: no stale gradient
        B = len(batch["y"])
        for micro in split_batch(batch=batch, micro_batch_size=micro_batch_size):
            b = len(micro["y"])
            # weight by the count b/B, not 1/k: a short last micro-batch must count less
            (lab2_models.loss_fn(model, micro) * (b / B)).backward()
        grads.append({name: p.grad.detach().clone() for name, p in model.named_parameters()})
        opt.step()
    return {"grads": grads, "params": {name: p.detach().clone() for name, p in model.named_parameters()},
            "forward_log": model.forward_log}  # recorded by the shipped model, not by this code
    ### END SOLUTION


# -- Break it on purpose: the chapter's bug (A) and the other misplaced zero_grad(), written by you ------------
# Each takes the arguments of accumulate_and_step and returns the same dict; each differs from it in ONE place.


def accumulate_without_scaling(
    *,
    config: dict,
    state_dict: dict[str, torch.Tensor],
    batches: list[dict[str, torch.Tensor]],
    micro_batch_size: int,
    lr: float,
) -> dict:
    """Bug (A) on purpose: ``accumulate_and_step`` without the scaling of the loss.

    Everything as in ``accumulate_and_step`` (same arguments, same steps, same
    returned dict, one forward per micro-batch, each back-propagated before
    the next forward, the gradients cleared once per big batch), except one
    thing: each micro-batch's mean loss goes to
    ``backward()`` as it is, not multiplied by b_j / B.  So the recorded
    gradient is the sum of the k micro-batch gradients:

        grads[t] = sum_j grad(mean loss of micro-batch j),

    with k micro-batches of equal size exactly k times the big-batch
    gradient (§6.5.4 Practical considerations), and the SGD step k times
    too long.

    What the grader checks: on batches and micro-batch sizes it chooses
    (equal micro-batches, several steps), every step's gradient is k times
    the big-batch gradient at that step's parameters (rtol 1e-9), the
    parameters follow those steps, and the forward log is one forward per
    micro-batch, each back-propagated before the next forward, as for
    ``accumulate_and_step``.  A version that is
    accidentally right (divides by k) or wrong another way (k times too
    small, say) loses the question.

    Tóm tắt (tiếng Việt): lỗi (A), viết có chủ ý: giống hệt
    ``accumulate_and_step`` trừ một điểm: mất mát trung bình của mỗi micro-batch
    được backward nguyên vẹn, không nhân với b_j / B. Gradient ghi lại là tổng
    k gradient micro-batch, tức gấp đúng k lần gradient của batch lớn khi các
    micro-batch bằng nhau. Bộ chấm kiểm tra đúng triệu chứng này ở mọi bước;
    một phiên bản vô tình đúng (có chia cho k) hoặc sai theo kiểu khác (nhỏ đi
    k lần chẳng hạn) mất điểm câu hỏi.
    """
    ### BEGIN SOLUTION
    return _accumulate(config, state_dict, batches, micro_batch_size, lr, scale=False, zero_inside=False)
    ### END SOLUTION


def accumulate_with_zero_grad_inside(
    *,
    config: dict,
    state_dict: dict[str, torch.Tensor],
    batches: list[dict[str, torch.Tensor]],
    micro_batch_size: int,
    lr: float,
) -> dict:
    """The other misplaced ``zero_grad()`` on purpose: inside the micro-batch loop.

    Not the chapter's bug (B): the chapter (§3.2.4 Framework optimizer
    interface and scheduling) warns about a ``zero_grad()`` missing between
    two optimizer steps, so stale gradients leak into the next step, and the
    tests of ``accumulate_and_step`` look for that.  This is the opposite
    misplacement, which the chapter does not describe (its accumulation
    listing, §6.5.3 Memory and computational benefits, clears once before
    its micro-batches): cleared too often instead of too seldom.

    Everything as in ``accumulate_and_step`` (same arguments, same steps, same
    returned dict, one forward per micro-batch, each micro-batch's mean loss
    multiplied by b_j / B and back-propagated before the next forward),
    except one thing: the
    gradients are cleared (``optimizer.zero_grad()``) before *every*
    micro-batch's backward instead of once per big batch.  Each clear throws
    away what the micro-batches before it added, so only the last
    micro-batch's gradient survives:

        grads[t] = (b_last / B) * grad(mean loss of the last micro-batch),

    and the step ignores every other example of the big batch.

    What the grader checks: on batches and micro-batch sizes it chooses
    (several steps), every step's gradient is exactly that (rtol 1e-9) at
    that step's parameters, the parameters follow those steps, and the
    forward log is one forward per micro-batch, each back-propagated before
    the next forward.  A version that is
    accidentally right (clears once per big batch) or wrong another way
    (never clears, so gradients leak from step to step: the chapter's bug
    (B); keeps the first micro-batch instead of the last) loses the question.

    Tóm tắt (tiếng Việt): cách đặt sai ``zero_grad()`` còn lại, viết có chủ ý
    (không phải lỗi (B) của chương: chương cảnh báo việc thiếu ``zero_grad()``
    giữa hai bước, làm gradient cũ rò sang bước sau; đây là chiều ngược lại, xoá
    quá thường xuyên, chương sách không mô tả): giống hệt
    ``accumulate_and_step`` (mất mát nhân b_j / B) trừ một điểm: gọi
    ``zero_grad()`` trước backward của *mỗi* micro-batch thay vì một lần cho mỗi
    batch lớn. Chỉ gradient của micro-batch cuối còn lại:
    (b_cuối / B) * gradient của mất mát trung bình micro-batch cuối. Bộ chấm
    kiểm tra đúng điều này ở mọi bước; phiên bản vô tình đúng, hoặc sai theo
    kiểu khác (không bao giờ xoá: lỗi (B) của chương; giữ micro-batch đầu), mất
    điểm câu hỏi.
    """
    ### BEGIN SOLUTION
    return _accumulate(config, state_dict, batches, micro_batch_size, lr, scale=True, zero_inside=True)
    ### END SOLUTION


### BEGIN SOLUTION NO PROMPT
def _accumulate(config, state_dict, batches, micro_batch_size, lr, *, scale: bool, zero_inside: bool) -> dict:
    """The accumulation loop with the two switches the broken versions flip."""
    model = lab2_models.build_model(config)
    model.load_state_dict(state_dict)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    grads = []
    for batch in batches:
        opt.zero_grad(set_to_none=True)
        B = len(batch["y"])
        for micro in split_batch(batch=batch, micro_batch_size=micro_batch_size):
            if zero_inside:
                opt.zero_grad(set_to_none=True)  # the bug: what the earlier micro-batches added is gone
            loss = lab2_models.loss_fn(model, micro)
            (loss * (len(micro["y"]) / B) if scale else loss).backward()
        grads.append({name: p.grad.detach().clone() for name, p in model.named_parameters()})
        opt.step()
    return {"grads": grads, "params": {name: p.detach().clone() for name, p in model.named_parameters()},
            "forward_log": model.forward_log}
### END SOLUTION
