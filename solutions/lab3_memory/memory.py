"""Lab 3: training memory (your code: fill in every function).

Training memory = weights + gradients + optimizer state + activations
(the chapter's training memory equation, §3.3.2 Memory-computation
trade-offs).  This lab measures the four terms on a real (tiny) PyTorch
model, builds bytes per parameter from which copies a recipe keeps in which
dtype (the chapter's 16, 12 and 10 B/param examples), uses a per-layer
activation formula from Korthikanti et al. 2022 (beyond the chapter), reads
the number formats from ``torch.finfo``, measures checkpointing (the peak
during backward and the recomputed work), and ends with GPT-2 XL on a
32 GiB V100 (§6.7 GPT-2 optimization walkthrough).

The chapter: *Machine Learning Systems*, Vol. I, "Model Training"
(harvard-edge/cs249r_book, ``book/quarto/contents/vol1/training/training.qmd``
at commit 034a583b9b80f2d7a66ffbd307c8901346ef5594).  Each function's
docstring names the section that teaches it.

Units and conventions used everywhere in this file:

* A byte count is a Python ``int`` (exact), unless a docstring says float.
* GB means 10⁹ bytes (``GB = 1e9``); GiB means 2³⁰ bytes.  A V100 has
  32 GiB = 34.4 GB.
* Models, batches and optimizers are built only through the shipped
  ``lab3_models`` module from plain config dicts (see its docstring).  The
  batch is always ``make_batch(config, batch_size, seed=0)``.
* The bytes of a tensor ``t`` are ``t.numel() * t.element_size()``.
* A module hook you register is removed before your function returns
  (``handle.remove()``): when a function builds a model again while the
  last model it built still holds one, ``build_model`` raises
  ``HooksLeftError``.

Tóm tắt (tiếng Việt): bộ nhớ huấn luyện = trọng số + gradient + trạng thái bộ
tối ưu + giá trị kích hoạt (§3.3.2 Đánh đổi giữa bộ nhớ và tính toán
(Memory-computation trade-offs)).  Số byte là
``int`` (trừ khi docstring ghi float);
GB = 10⁹ byte, GiB = 2³⁰ byte; byte của tensor ``t`` là ``t.numel() *
t.element_size()``; batch luôn là ``make_batch(config, batch_size, seed=0)``;
hook module bạn đăng ký phải được gỡ trước khi hàm trả về (``build_model``
báo lỗi ``HooksLeftError`` nếu mô hình mà hàm tạo lần trước vẫn còn hook).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch.utils.checkpoint import checkpoint

from lab3_models import build_model, build_optimizer, forward_loss, make_batch

GB = 1e9  # bytes; the chapter's GB is decimal
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


### BEGIN SOLUTION NO PROMPT
def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def _saved_tensors(model: torch.nn.Module, run, known=frozenset()):
    """Call ``run()`` under saved-tensor hooks; count what autograd saves.

    Returns ``(saved_bytes, pack_calls, parameter_saves, result_of_run)``.
    Several saves can share one storage (a view, or one tensor saved by two
    ops), and the memory is held once, so bytes are summed over distinct
    storages.  A parameter's storage is already counted as a weight, and the
    storages in ``known`` (data pointers) elsewhere.
    """
    param_ptrs = {p.untyped_storage().data_ptr() for p in model.parameters()}
    storages: dict[int, int] = {}  # storage data_ptr -> storage bytes
    calls = {"all": 0, "param": 0}

    def pack(t):
        calls["all"] += 1
        ptr = t.untyped_storage().data_ptr()
        if ptr in param_ptrs:
            calls["param"] += 1
        elif ptr not in known:
            storages[ptr] = t.untyped_storage().nbytes()
        return t  # keep the tensor itself: we count, we do not offload

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = run()
    return sum(storages.values()), calls["all"], calls["param"], result
### END SOLUTION


# -- 1. The four terms, measured -------------------------------------------------------
def activation_hook_counts(*, config: dict, batch_size: int) -> dict:
    """Count activation memory two ways during one forward pass (to the loss).

    Chapter: §3.3.1 Activation memory requirements (what the forward pass
    must keep for the backward pass).

    Build the model with ``build_model(config)`` and the batch with
    ``make_batch(config, batch_size, seed=0)``; run ``forward_loss(model,
    batch)`` once (the forward pass includes the loss) with both kinds of
    hooks installed.

    1. ``torch.autograd.graph.saved_tensors_hooks(pack, unpack)``: ``pack``
       is called once for every tensor autograd saves for backward (let
       ``pack`` return the tensor itself and ``unpack`` return what it gets).
       - ``"saved_tensors"``: the number of ``pack`` calls (every call,
         parameters included).
       - ``"parameter_saves"``: the number of those calls whose tensor shares
         its storage with one of ``model.parameters()`` (compare
         ``t.untyped_storage().data_ptr()``; a ``weight.t()`` view counts).
       - ``"saved_bytes"``: the activation term.  Sum
         ``t.untyped_storage().nbytes()`` over the **distinct** storages
         (by ``data_ptr()``) that were packed, leaving out parameter
         storages (they are weights).  Integer index tensors, masks and the
         loss's own saved tensors count.
    2. ``register_forward_hook`` on every **leaf** module (a module with no
       children; each module once, even if it appears twice in the tree):
       - ``"module_output_bytes"``: the sum of ``numel() * element_size()``
         over every tensor each leaf module returns, once per call.  A
         module the forward pass calls several times (one block shared by
         every layer: ``lab3_models``' ``"shared_blocks"``) counts its
         output at every call, as its one hook fires at every call.

    Returns ``{"saved_bytes": int, "saved_tensors": int,
    "parameter_saves": int, "module_output_bytes": int}``.
    Remove every hook before returning (``handle.remove()``, also when the
    forward pass raises): the grader calls this function many times in one
    process, and a hook left installed (a global module hook, say) would
    fire again in later calls; one left on the model this call built makes
    the next call's ``build_model`` raise ``HooksLeftError``.

    Tóm tắt (tiếng Việt): chạy ``forward_loss`` một lần với hai loại hook.
    ``saved_tensors_hooks``: số lần ``pack``, số lần lưu tham số, và byte của
    các storage **khác nhau** không phải tham số (giá trị kích hoạt); forward
    hook trên mọi module lá (mỗi module một hook): tổng byte đầu ra, tính ở
    **mỗi lần gọi** (một khối dùng chung cho mọi lớp được tính mỗi lần nó
    chạy).  Gỡ mọi hook trước khi trả về: bộ chấm gọi hàm này nhiều lần
    trong cùng một tiến trình, và hook còn sót sẽ chạy lại ở các lần sau;
    hook còn sót trên mô hình mà lần gọi này tạo khiến ``build_model`` của
    lần gọi sau báo lỗi ``HooksLeftError``.
    """
    ### BEGIN SOLUTION
    model = build_model(config)
    batch = make_batch(config, batch_size, seed=0)
    leaves = [m for m in model.modules() if not list(m.children())]  # modules() yields each once
    out_bytes = [0]

    def on_output(module, inputs, output):
        outs = output if isinstance(output, (tuple, list)) else (output,)
        out_bytes[0] += sum(_nbytes(t) for t in outs if torch.is_tensor(t))

    handles = [m.register_forward_hook(on_output) for m in leaves]
    try:
        saved, calls, param_calls, _ = _saved_tensors(model, lambda: forward_loss(model, batch))
    finally:
        for h in handles:
            h.remove()
    return {"saved_bytes": saved, "saved_tensors": calls,
            "parameter_saves": param_calls, "module_output_bytes": out_bytes[0]}
    ### END SOLUTION


def measure_four_terms(*, config: dict, batch_size: int, optimizer: dict) -> dict:
    """The four terms of training memory, in bytes, for one training step.

    Chapter: §3.3 Backpropagation mechanics and §3.3.2 Memory-computation
    trade-offs (the four terms), §4.3.2 Memory management (a 7B model's
    estimate).

    Steps: ``model = build_model(config)``, ``opt = build_optimizer(model,
    optimizer)``, batch ``make_batch(config, batch_size, seed=0)``; one
    forward pass to the loss (``forward_loss``), ``loss.backward()``, one
    ``opt.step()``.

    - ``"weights"``: bytes of ``model.parameters()`` (each parameter once, so
      a tied embedding/head weight counts once; frozen parameters count).
    - ``"gradients"``: bytes of every ``p.grad`` that is not ``None`` after
      backward (frozen parameters have none).
    - ``"optimizer_state"``: after the step, bytes of every tensor value in
      ``opt.state[p]`` for every parameter, except the scalar ``"step"``
      counter (Adam's m and v, SGD's momentum buffer; plain SGD has none).
    - ``"activations"``: the bytes autograd saves during this forward pass,
      counted exactly as ``"saved_bytes"`` in :func:`activation_hook_counts`.
    - ``"total"``: the sum of the four.

    Returns ``{"weights", "gradients", "optimizer_state", "activations",
    "total"}``, all ``int``.

    Tóm tắt (tiếng Việt): sau một lượt xuôi, một lượt ngược và một
    ``opt.step()``, trả về byte (``int``) của trọng số (mỗi tham số một lần),
    gradient (``p.grad`` khác ``None``), trạng thái bộ tối ưu (trừ
    ``"step"``), giá trị kích hoạt (như ``"saved_bytes"``) và tổng.
    """
    ### BEGIN SOLUTION
    model = build_model(config)
    opt = build_optimizer(model, optimizer)
    batch = make_batch(config, batch_size, seed=0)

    weights = sum(_nbytes(p) for p in model.parameters())
    activations, _, _, loss = _saved_tensors(model, lambda: forward_loss(model, batch))
    loss.backward()
    gradients = sum(_nbytes(p.grad) for p in model.parameters() if p.grad is not None)
    opt.step()
    # "step" is a scalar counter per parameter tensor, not per-element state
    state = sum(_nbytes(v) for s in opt.state.values() for k, v in s.items()
                if k != "step" and torch.is_tensor(v))
    return {"weights": weights, "gradients": gradients, "optimizer_state": state,
            "activations": activations, "total": weights + gradients + state + activations}
    ### END SOLUTION


# -- 2. Bytes per parameter --------------------------------------------------------------
def bytes_per_parameter(*, scheme: str) -> dict:
    """Bytes each parameter costs in weights, gradients and optimizer state.

    Chapter: §3.2.3 Optimization algorithm system implications (GPT-2: FP32
    4 + 4 + 8, and mixed precision with FP32 master weights, both about
    24 GB), §6.3.2 Mixed-precision benefits (2 + 2 + 4 + 8), §8 Fallacies
    and Pitfalls ("12–16 bytes per parameter").  The chapter's 7B and 20B
    totals assume other recipes (12 and 10 B/param): see
    :func:`recipe_bytes`.

    ``scheme`` is one of:

    - ``"mixed_adam"``: mixed-precision Adam with an FP32 master copy (16):
      FP16 weights 2, FP16 gradients 2, FP32 master weights 4, Adam m 4,
      Adam v 4.
    - ``"fp32_adam"``: everything in FP32: weights 4, gradients 4, no master
      copy (0), m 4, v 4 (also 16).
    - ``"mixed_adam_fp32_grads"``: as ``"mixed_adam"`` but gradients kept in
      FP32 (4): 18.  Beyond the chapter: Megatron Core's distributed-optimizer
      documentation (NVIDIA) counts 18 B/param for 16-bit parameters with
      FP32 gradients.

    Returns ``{"weights", "gradients", "master", "adam_m", "adam_v",
    "total"}``, all ``int`` bytes per parameter (``"total"`` is their sum).
    Activations are not included: they scale with the batch, not with P.

    Tóm tắt (tiếng Việt): byte mỗi tham số (``int``) cho trọng số, gradient,
    bản sao chính FP32, Adam m, Adam v và tổng, theo ``scheme``: 16 với
    ``"mixed_adam"`` và ``"fp32_adam"``, 18 với ``"mixed_adam_fp32_grads"``
    (con số của Megatron Core, ngoài chương sách); không tính giá trị kích
    hoạt.
    """
    ### BEGIN SOLUTION
    fp16, fp32 = 2, 4
    table = {
        "mixed_adam": dict(weights=fp16, gradients=fp16, master=fp32, adam_m=fp32, adam_v=fp32),
        "fp32_adam": dict(weights=fp32, gradients=fp32, master=0, adam_m=fp32, adam_v=fp32),
        "mixed_adam_fp32_grads": dict(weights=fp16, gradients=fp32, master=fp32, adam_m=fp32, adam_v=fp32),
    }
    assert scheme in table, f"scheme must be one of {sorted(table)}, got {scheme!r}"
    parts = table[scheme]
    return {**parts, "total": sum(parts.values())}
    ### END SOLUTION


def model_state_bytes(*, n_params: int, scheme: str) -> int:
    """Bytes of weights + gradients + optimizer state for ``n_params``
    parameters under ``scheme`` (see :func:`bytes_per_parameter`): an ``int``.

    Example: 7e9 parameters with ``"mixed_adam"`` is 112 GB (112e9 bytes):
    the lab's number at 16 B/param.  The chapter's own 7B example is 84 GB,
    at 12 B/param (no master copy): :func:`recipe_bytes` builds both.

    Tóm tắt (tiếng Việt): ``n_params`` nhân tổng byte mỗi tham số của
    ``scheme`` (trọng số + gradient + trạng thái bộ tối ưu), một ``int``; 7e9
    tham số với ``"mixed_adam"`` là 112 GB (con số của bài lab, 16 B/tham số;
    ví dụ 7B của chương sách là 84 GB, 12 B/tham số).
    """
    ### BEGIN SOLUTION
    return int(n_params) * bytes_per_parameter(scheme=scheme)["total"]
    ### END SOLUTION


def recipe_bytes(*, recipe: dict, n_params: int) -> dict:
    """Model-state memory built from its parts: which copies a recipe keeps, in which dtype.

    Chapter: §1 Training Systems Fundamentals and §4.3.2 Memory management
    (7B: 14 + 14 + 56 = 84 GB), §3.2.3 Optimization algorithm system
    implications (GPT-2 1.5B: 24 GB in FP32, about 24 GB in mixed precision
    with master weights), §8 Fallacies and Pitfalls (20B: 40 GB of FP16
    parameters + 160 GB of optimizer state = 200 GB; "12–16 bytes per
    parameter").  Each total assumes its own recipe.

    ``recipe`` is a dict with exactly these keys:

    - ``"weights"``: the dtype of the working weights (the copy the forward
      pass reads): ``"float32"``, ``"float16"`` or ``"bfloat16"``;
    - ``"gradients"``: the gradients' dtype, or ``None`` when the recipe
      does not count gradients;
    - ``"master"``: the dtype of a separate master copy of the weights (the
      FP32 copy mixed precision updates), or ``None`` when there is none;
    - ``"optimizer_states"``: how many tensors of one element per parameter
      the optimizer keeps (an ``int``: Adam 2, its m and v; SGD with
      momentum 1; plain SGD 0);
    - ``"optimizer_dtype"``: the dtype of **each** of those tensors
      (``None`` is allowed when ``"optimizer_states"`` is 0).

    A dtype costs its ``torch`` element size per element: float32 4,
    float16 and bfloat16 2.

    Returns a dict:

    - ``"weights"``, ``"gradients"``, ``"master"``, ``"optimizer"``: bytes
      per parameter of each part (``int``; 0 for a copy the recipe does not
      keep; ``"optimizer"`` counts every one of its state tensors);
    - ``"per_param"``: their sum (``int``);
    - ``"total_bytes"``: ``n_params * per_param`` (``int``, exact);
    - ``"total_gb"``: ``total_bytes`` in decimal GB, ``total_bytes / 1e9``
      (``float``; the chapter's GB, not GiB).

    Activations are not included: they scale with the batch, not with P.

    Tóm tắt (tiếng Việt): từ một công thức (``recipe``: dtype của trọng số,
    của gradient hoặc ``None``, của bản sao chính hoặc ``None``, số tensor
    trạng thái của bộ tối ưu và dtype của **mỗi** tensor đó), trả về byte mỗi
    tham số của từng phần (``int``, 0 nếu không giữ), tổng mỗi tham số, tổng
    cho ``n_params`` tham số (``int``) và tổng theo GB thập phân (10⁹ byte,
    ``float``).  Ví dụ của chương sách: 24 GB (GPT-2, 16 B/tham số), 84 GB
    (7B, 12), 200 GB (20B, 10).
    """
    ### BEGIN SOLUTION
    def size(dtype) -> int:
        return DTYPES[dtype].itemsize if dtype is not None else 0  # torch's element size

    assert recipe["weights"] is not None, "a recipe always keeps the working weights"
    parts = {"weights": size(recipe["weights"]), "gradients": size(recipe["gradients"]),
             "master": size(recipe["master"]),
             # one tensor per state (Adam: m and v), each as long as the parameters
             "optimizer": int(recipe["optimizer_states"]) * size(recipe["optimizer_dtype"])}
    per_param = sum(parts.values())
    total = int(n_params) * per_param
    return {**parts, "per_param": per_param, "total_bytes": total, "total_gb": total / GB}
    ### END SOLUTION


# -- 3. Activations per transformer layer (Korthikanti et al. 2022) ----------------------
def attention_score_bytes(*, s: int, b: int, a: int) -> dict:
    """Bytes of the three (b, a, s, s) tensors behind the 5 in 5·a·s/h.

    Chapter: §3.3.1 Activation memory requirements itemises these three
    buffers per layer ("5 × N_heads × S² × B bytes").

    - ``"scores"``: the QKᵀ scores in FP16, 2 bytes per element.
    - ``"softmax"``: the softmax output in FP16, 2 bytes per element.
    - ``"dropout_mask"``: the attention-dropout mask, 1 byte per element.

    Each has b·a·s·s elements.  Returns the three as ``int`` bytes.

    Tóm tắt (tiếng Việt): byte (``int``) của ba tensor b·a·s·s phần tử của ma
    trận điểm attention: ``"scores"`` 2 byte/phần tử, ``"softmax"`` 2,
    ``"dropout_mask"`` 1.
    """
    ### BEGIN SOLUTION
    n = b * a * s * s  # one (b, a, s, s) tensor
    return {"scores": 2 * n, "softmax": 2 * n, "dropout_mask": 1 * n}
    ### END SOLUTION


def activation_bytes(*, s: int, b: int, h: int, a: int, n_layers: int = 1,
                     recompute: str = "none") -> int:
    """Activation bytes of ``n_layers`` transformer layers (FP16).

    Beyond the chapter: the formula is from Korthikanti et al.,
    "Reducing Activation Recomputation in Large Transformer Models"
    (arXiv:2205.05198, 2022), with its selective and full recomputation.
    The chapter (§3.3.1 Activation memory requirements) itemises a GPT-2
    layer as Q, K, V and output (4·s·b·h values), the FFN expansion
    (4·s·b·h values), the same 5·a·s²·b attention buffers and ~10 MB of
    layer-norm states: about 1.27 GB per layer at b = 8, 60.9 GB for 48
    layers; its 71.7 GB total (a library estimate) is this formula's.

    Per layer, with sequence s, micro-batch b, hidden size h and a heads:

    - ``recompute="none"``: s·b·h·(34 + 5·a·s/h) = 34·s·b·h + 5·a·s²·b
      (the second term is :func:`attention_score_bytes` summed);
    - ``"selective"`` (recompute only the attention scores): 34·s·b·h;
    - ``"full"`` (keep only each layer's input): 2·s·b·h.

    Returns the ``int`` total for ``n_layers`` layers (compute it in integers
    as written on the right, so it is exact).
    GPT-2 XL (s=1024, b=8, h=1600, a=25): 1.494 GB per layer, 71.7 GB for 48.

    Tóm tắt (tiếng Việt): byte giá trị kích hoạt FP16 của ``n_layers`` lớp,
    một ``int`` tính bằng số nguyên; mỗi lớp 34·s·b·h + 5·a·s²·b (``"none"``),
    34·s·b·h (``"selective"``) hoặc 2·s·b·h (``"full"``).  Công thức của
    Korthikanti và cộng sự (2022), ngoài chương sách.
    """
    ### BEGIN SOLUTION
    linear = 34 * s * b * h
    attention = sum(attention_score_bytes(s=s, b=b, a=a).values())  # 5·a·s²·b
    per_layer = {"none": linear + attention, "selective": linear, "full": 2 * s * b * h}
    assert recompute in per_layer, f"recompute must be one of {sorted(per_layer)}, got {recompute!r}"
    return n_layers * per_layer[recompute]
    ### END SOLUTION


# -- 4. Number formats -----------------------------------------------------------------------
def format_ranges() -> dict:
    """FP32, FP16 and BF16 read from ``torch.finfo``.

    Chapter: §6.3 Mixed-precision training (FP16: largest 65,504, smallest
    normal 6.1×10⁻⁵, subnormals toward 6×10⁻⁸; BF16: FP32's range with
    fewer mantissa bits).

    Returns ``{"float32": {...}, "float16": {...}, "bfloat16": {...}}``; each
    inner dict has:

    - ``"max"``: the largest finite value (``finfo.max``), float;
    - ``"min_normal"``: the smallest positive normal (``finfo.tiny``), float;
    - ``"min_subnormal"``: the smallest positive subnormal,
      ``finfo.tiny * finfo.eps``, float;
    - ``"eps"``: ``finfo.eps`` (the gap between 1 and the next value), float;
    - ``"mantissa_bits"``: stored fraction bits, −log2(eps), int;
    - ``"exponent_bits"``: ``finfo.bits − 1 − mantissa_bits``, int.

    Tóm tắt (tiếng Việt): với float32, float16 và bfloat16, đọc từ
    ``torch.finfo``: ``"max"``, ``"min_normal"``, ``"min_subnormal"``,
    ``"eps"`` (float), số bit phần định trị và số bit số mũ (int).
    """
    ### BEGIN SOLUTION
    out = {}
    for name in ("float32", "float16", "bfloat16"):
        f = torch.finfo(DTYPES[name])
        mantissa = int(round(-math.log2(f.eps)))
        out[name] = {"max": float(f.max), "min_normal": float(f.tiny),
                     "min_subnormal": float(f.tiny * f.eps), "eps": float(f.eps),
                     "mantissa_bits": mantissa, "exponent_bits": f.bits - 1 - mantissa}
    return out
    ### END SOLUTION


def fp16_gradient_underflow(*, config: dict, batch_size: int, loss_scale: float = 1.0) -> dict:
    """How many of a real model's gradients vanish when cast to FP16.

    Chapter: §6.3.1 Loss scaling (scale the loss, e.g. by 2¹⁰) and §6.3.2
    Mixed-precision benefits (a scale starting at 2¹⁵, typically 2⁸ to 2¹⁴).

    Build the FP32 model and batch (``seed=0``) from ``config``; compute
    ``loss = forward_loss(model, batch)`` and call ``(loss * loss_scale)
    .backward()`` (scale the loss before backward, as a loss scaler does;
    ``loss_scale`` is a power of two, so scaling is exact in FP32).  Then cast
    every gradient ``g`` (FP32) to ``torch.float16``:

    - ``"n_nonzero"``: elements with ``g != 0``;
    - ``"n_underflow"``: elements with ``g != 0`` whose FP16 value is 0;
    - ``"n_overflow"``: elements whose FP16 value is ±inf;
    - ``"underflow_fraction"``: ``n_underflow / n_nonzero`` (0.0 if none);
    - ``"underflow_by_parameter"``: ``{name: fraction}`` for every
      parameter with a gradient, names from ``model.named_parameters()``
      (a tied weight appears once), same definition of fraction (0.0 for
      a parameter whose gradient is all zeros).

    An element that is exactly 0 in FP32 is **not** underflow: it was 0
    before the cast, so nothing was lost.  It counts in neither
    ``n_nonzero`` nor ``n_underflow``.  Many models have such exact zeros
    (an untied GPT's embedding rows of tokens absent from the batch, a ReLU
    unit inactive on the whole batch: see ``lab3_models``).

    Counts are ``int``, fractions ``float``.  ``config`` must be FP32.

    Tóm tắt (tiếng Việt): lượt ngược trên ``loss * loss_scale`` (mô hình
    FP32), rồi ép mọi gradient sang FP16 và đếm phần tử khác 0, phần tử khác 0
    thành 0 (underflow), phần tử thành ±inf (overflow); tỉ lệ underflow chung
    và theo từng tham số.  Phần tử đã bằng đúng 0 trong FP32 **không** phải
    underflow (nó bằng 0 từ trước khi ép kiểu): không tính vào ``n_nonzero``
    lẫn ``n_underflow``.  Số đếm là ``int``, tỉ lệ là ``float``.
    """
    ### BEGIN SOLUTION
    model = build_model(config)
    assert next(model.parameters()).dtype == torch.float32, "fp16_gradient_underflow needs an FP32 model"
    loss = forward_loss(model, make_batch(config, batch_size, seed=0))
    (loss * loss_scale).backward()

    totals = {"n_nonzero": 0, "n_underflow": 0, "n_overflow": 0}
    by_param = {}
    for name, p in model.named_parameters():
        if p.grad is None:
            continue
        g = p.grad
        g16 = g.to(torch.float16)
        nonzero = int((g != 0).sum())
        under = int(((g != 0) & (g16 == 0)).sum())  # flushed: smaller than half the min subnormal
        totals["n_nonzero"] += nonzero
        totals["n_underflow"] += under
        totals["n_overflow"] += int(torch.isinf(g16).sum())  # larger than 65504
        by_param[name] = under / nonzero if nonzero else 0.0
    n = totals["n_nonzero"]
    return {**totals, "underflow_fraction": totals["n_underflow"] / n if n else 0.0,
            "underflow_by_parameter": by_param}
    ### END SOLUTION


def lost_updates(*,
                 weights: np.ndarray,  # (...) float32, any shape
                 updates: np.ndarray,  # same shape as weights, float32
                 ) -> dict:
    """Fraction of nonzero updates that leave the weight unchanged.

    ``weights`` and ``updates`` are float32 arrays of one shape (an update is
    lr × grad).  For each format ``dt`` in float32, float16 and bfloat16:
    cast both arrays to ``dt`` (torch), add them in ``dt``, and count the
    elements with ``updates != 0`` (as given) where ``w_dt + u_dt == w_dt``.

    Returns ``{"float32": float, "float16": float, "bfloat16": float}``, each
    the lost count divided by the number of nonzero updates (0.0 if none).
    This is why master weights stay in FP32 (§6.3.2 Mixed-precision benefits:
    "a small learning rate (2.5e-4) multiplied by an FP16 gradient can round
    to zero, but FP32 accumulation preserves these tiny updates").  An update
    is lost when it is below half the spacing of ``dt`` next to the weight:
    above w = 1 that spacing is ``finfo.eps`` (FP16 9.8e-4), so a positive
    update below eps/2 (FP16 4.9e-4) added to w = 1 rounds back to 1.

    Tóm tắt (tiếng Việt): với float32, float16 và bfloat16, ép cả hai mảng
    sang định dạng đó, cộng trong định dạng đó, và trả về tỉ lệ (``float``)
    các cập nhật khác 0 mà ``w_dt + u_dt == w_dt`` (0.0 nếu không có cập nhật
    khác 0).
    """
    ### BEGIN SOLUTION
    assert weights.shape == updates.shape, f"shapes differ: {weights.shape} vs {updates.shape}"
    w = torch.as_tensor(np.asarray(weights, dtype=np.float32))
    u = torch.as_tensor(np.asarray(updates, dtype=np.float32))
    moving = u != 0
    n = int(moving.sum())
    out = {}
    for name in ("float32", "float16", "bfloat16"):
        w_dt, u_dt = w.to(DTYPES[name]), u.to(DTYPES[name])
        lost = moving & (w_dt + u_dt == w_dt)
        out[name] = int(lost.sum()) / n if n else 0.0
    return out
    ### END SOLUTION


def _fp16_run(config: dict, batch_size: int):
    """The FP32 model and the batch (floating inputs in FP16) of a training run."""
    model = build_model(config)
    x, y = make_batch(config, batch_size, seed=0)
    return model, (x.half() if x.is_floating_point() else x, y)


def train_fp16_toggle(*, config: dict, batch_size: int, lr: float, steps: int) -> list:
    """Break it on purpose: mixed precision as a toggle, the whole step in FP16.

    Chapter: §8 Fallacies and Pitfalls ("mixed precision as a toggle") and
    §6.3.2 Mixed-precision benefits (the FP32 master copy keeps the small
    updates that FP16 rounds away).

    Build the model from ``config`` (``build_model``, FP32) and convert it to
    FP16 with ``model.half()``: from then on there is **no FP32 copy** of any
    weight.  The batch is ``make_batch(config, batch_size, seed=0)``, its
    floating inputs cast to ``torch.float16`` (targets unchanged).  Then
    ``steps`` times: ``loss = forward_loss(model, batch)``; record
    ``float(loss)``; ``loss.backward()`` (**no loss scaling**); plain SGD in
    FP16 on every parameter that has a gradient, ``p -= lr * p.grad`` (in
    place, under ``torch.no_grad()``); clear the gradients.

    Returns the ``steps`` losses (``float``), each measured before that
    step's update.  On a model whose weights are far larger than
    ``lr × grad`` the loss **stalls**: every update is below half the FP16
    spacing next to its weight, and ``w + u`` rounds back to ``w``.

    The grader also runs a case whose updates are large enough to change
    FP16 weights, and compares every step's loss with its own run of exactly
    this recipe, to within 0.01: the update must change the model's own
    FP16 parameters in place (``p = p - lr * p.grad`` only rebinds a name),
    and every floating tensor is ``torch.float16`` (not ``bfloat16``).

    Tóm tắt (tiếng Việt): cạm bẫy "độ chính xác hỗn hợp như một công tắc":
    chuyển mô hình sang FP16 (``model.half()``, không giữ bản FP32), đầu vào
    dạng số thực ép sang FP16; ``steps`` lần: tính loss, ghi ``float(loss)``,
    lượt ngược không nhân tỉ lệ, SGD trong FP16 ``p -= lr * p.grad`` cho mọi
    tham số có gradient, xoá gradient.  Trả về danh sách ``steps`` giá trị
    loss (``float``), mỗi giá trị đo trước cập nhật của bước đó.  Khi
    ``lr × grad`` quá nhỏ so với trọng số, loss đứng yên: cập nhật bị làm tròn
    mất.  Bộ chấm còn chạy một trường hợp có cập nhật đủ lớn để thay đổi trọng
    số FP16 và so loss của từng bước với lượt chạy của chính nó theo đúng
    cách này, sai lệch tối đa 0.01: cập nhật phải thay đổi tại chỗ chính các
    tham số FP16 của mô hình (``p = p - lr * p.grad`` chỉ gán lại một tên), và
    mọi tensor số thực là ``torch.float16`` (không phải ``bfloat16``).
    """
    ### BEGIN SOLUTION
    model, batch = _fp16_run(config, batch_size)
    model = model.half()
    params = [p for p in model.parameters() if p.requires_grad]
    losses = []
    for _ in range(steps):
        loss = forward_loss(model, batch)
        losses.append(float(loss.detach()))
        loss.backward()
        with torch.no_grad():
            for p in params:
                if p.grad is not None:
                    p -= lr * p.grad  # FP16 + FP16: an update under half a spacing rounds away
                    p.grad = None
    return losses
    ### END SOLUTION


def train_fp16_master(*, config: dict, batch_size: int, lr: float, steps: int, loss_scale: float) -> list:
    """The same training run done right: an FP32 master copy and loss scaling.

    Chapter: §6.3 Mixed-precision training, §6.3.1 Loss scaling and §6.3.2
    Mixed-precision benefits.

    Build the model from ``config`` (FP32) and keep an FP32 **master copy**
    of every parameter that requires a gradient (e.g. ``p.detach().clone()``)
    before converting the model to FP16 with ``model.half()``.  The batch is
    the one of :func:`train_fp16_toggle`.  Then ``steps`` times: ``loss =
    forward_loss(model, batch)`` (FP16 model); record ``float(loss)``;
    ``(loss * loss_scale).backward()``; for every parameter with a gradient,
    unscale the gradient **in FP32** (``p.grad.float() / loss_scale``),
    update the master, ``master -= lr * grad``, and copy the master back into
    the FP16 weight (``p.copy_(master)``); clear the gradients.
    ``loss_scale`` is a power of two, chosen so that nothing overflows.

    Returns the ``steps`` losses (``float``), each measured before that
    step's update.  On the same model where :func:`train_fp16_toggle`
    stalls, this loss falls: the small updates add up in FP32.

    The grader compares every step's loss with its own run of exactly this
    recipe, to within 1e-5.  In its case no gradient underflows or
    overflows in FP16, so scaling by a power of two and unscaling are exact:
    the losses are the same at every ``loss_scale``, and any order of the
    update (unscale then multiply by ``lr``, ``lr / loss_scale`` at once,
    ``master.add_(grad, alpha=-lr)``, ``torch.optim.SGD`` on the masters)
    gives the same run.

    Tóm tắt (tiếng Việt): cùng lượt huấn luyện, làm đúng: giữ bản sao chính
    FP32 của mọi tham số cần gradient trước ``model.half()``; mỗi bước: tính
    loss (ghi ``float(loss)``), lượt ngược trên ``loss * loss_scale``, chia
    gradient cho ``loss_scale`` trong FP32, cập nhật bản sao chính ``master -=
    lr * grad`` rồi chép vào trọng số FP16, xoá gradient.  Trả về ``steps``
    giá trị loss (``float``); loss giảm vì các cập nhật nhỏ cộng dồn trong FP32.
    Bộ chấm so loss của từng bước với lượt chạy của chính nó theo đúng cách
    này, sai lệch tối đa 1e-5; trong trường hợp của nó không gradient nào bị
    underflow hay overflow trong FP16, nên loss giống nhau với mọi
    ``loss_scale`` và mọi thứ tự cập nhật đúng cho cùng một lượt chạy.
    """
    ### BEGIN SOLUTION
    model, batch = _fp16_run(config, batch_size)
    params = [p for p in model.parameters() if p.requires_grad]
    masters = [p.detach().clone() for p in params]  # FP32, taken before the cast
    model = model.half()  # in place: params are now the FP16 working weights
    losses = []
    for _ in range(steps):
        loss = forward_loss(model, batch)
        losses.append(float(loss.detach()))
        (loss * loss_scale).backward()
        with torch.no_grad():
            for p, master in zip(params, masters):
                if p.grad is not None:
                    master -= lr * (p.grad.float() / loss_scale)  # unscaled and added in FP32
                    p.copy_(master)
                    p.grad = None
    return losses
    ### END SOLUTION


# -- 5. Checkpointing ----------------------------------------------------------------------
def checkpoint_units(*, n_layers: int, n_checkpoints: int) -> dict:
    """The chapter's checkpoint model: k checkpoints among N layers.

    Chapter: §6.5.2 Optimal checkpoint placement strategy (its table: memory
    k·A + (N_L/k)·A for k checkpoints of a network whose layers each hold A
    bytes of activations; k_opt = √N_L; 48 layers: √48 ≈ 7 checkpoints,
    ≈ 14·A, a 71% saving) and §3.3.2 Memory-computation trade-offs
    (O(N_L) → O(√N_L)).

    In units of one layer's activations A, the peak during backward is
    k + N/k: the k kept checkpoints, each counted as a whole layer, plus one
    segment of N/k layers rebuilt at once (storing every layer is N units).
    :func:`measure_checkpointing` measures that peak on a real model, where
    a checkpoint (a segment's input) is much smaller than a layer's
    activations.  This rule is not the ÷k of :func:`v100_walkthrough`: one
    checkpoint every 4 of 48 layers is k = 12 here, and keeps 12 + 4 = 16
    units (÷3, not ÷4).

    Returns ``{"units": k + N/k, "saving": 1 − units/N}`` (floats).
    48 layers with 7 checkpoints keep 13.9 units, a 71.1% saving.

    Tóm tắt (tiếng Việt): mô hình của chương sách (§6.5.2 Chiến lược đặt điểm
    lưu tối ưu (Optimal checkpoint placement strategy)): giữ k điểm lưu trong N lớp thì đỉnh bộ nhớ trong
    lượt ngược là k + N/k đơn vị (mỗi đơn vị là giá trị kích hoạt của một
    lớp): k điểm lưu cộng một đoạn N/k lớp được tính lại cùng lúc.  Trả về
    ``"units"`` và ``"saving"`` = 1 − units/N (float).  Không phải phép chia
    cho k của :func:`v100_walkthrough`.
    """
    ### BEGIN SOLUTION
    N, k = n_layers, n_checkpoints
    assert 1 <= k <= N, f"need 1 <= n_checkpoints <= n_layers, got k={k}, N={N}"
    units = k + N / k
    return {"units": units, "saving": 1 - units / N}
    ### END SOLUTION


def best_checkpoint_count(*, n_layers: int) -> int:
    """The integer k in 1..N that minimises k + N/k (the smaller k on a tie).

    Near √N (§6.5.2 Optimal checkpoint placement strategy); for N = 48 it
    is 7.

    Tóm tắt (tiếng Việt): số nguyên k trong 1..N làm k + N/k nhỏ nhất (bằng
    nhau thì lấy k nhỏ hơn); với N = 48 là 7.
    """
    ### BEGIN SOLUTION
    N = n_layers
    return min(range(1, N + 1), key=lambda k: (k + N / k, k))
    ### END SOLUTION


### BEGIN SOLUTION NO PROMPT
def _run_blocks(blocks, h):
    for block in blocks:
        h = block(h)
    return h


def _segment_bytes(model, segment, h) -> int:
    """What ``segment`` saves for backward when it runs again from its input ``h``, beyond ``h``."""
    h_in = h.detach().requires_grad_()  # shares h's storage: the checkpoint, counted already
    saved, _, _, _ = _saved_tensors(model, lambda: _run_blocks(segment, h_in),
                                    known={h_in.untyped_storage().data_ptr()})
    return saved
### END SOLUTION


def measure_checkpointing(*, config: dict, batch_size: int, segment_size: int) -> dict:
    """The peak during backward and the recomputed work, with torch.utils.checkpoint.

    Chapter: §6.5.1.2 Activation checkpointing (``torch.utils.checkpoint``;
    about 33% more compute), §6.5.2 Optimal checkpoint placement strategy
    (the memory to count: checkpoints plus one segment rebuilt).

    Build the model and batch (``seed=0``).  Run the forward pass as
    ``h = model.embed(x)``; the blocks; ``loss = model.head_loss(h, y)``:

    - ``segment_size == 0``: no checkpointing, blocks run one after another
      (exactly ``forward_loss``);
    - ``segment_size = k >= 1``: split ``model.blocks`` into consecutive
      segments of k blocks (the last may be shorter) and run **every**
      segment, the last one included, through
      ``torch.utils.checkpoint.checkpoint(fn, ..., use_reentrant=False)``.
      (``checkpoint_sequential`` leaves the last segment unchecked: do not
      use it.)

    Then ``loss.backward()``.

    - ``"saved_bytes"``: the activation bytes saved during the forward pass
      (hooks around all of it, ``embed`` to loss), counted exactly as
      ``"saved_bytes"`` in :func:`activation_hook_counts` (distinct
      non-parameter storages seen by ``saved_tensors_hooks``).  With
      checkpointing these hooks see each segment's input (the checkpoint,
      which ``checkpoint`` saves), but nothing saved inside a segment.  This
      is what the forward pass leaves behind, not the memory checkpointing
      needs: backward rebuilds a segment's activations before it can use
      them.
    - ``"segment_bytes"``: what one segment holds while backward rebuilds
      it.  For each segment, take its input ``h`` (the tensor the forward
      pass gave that segment), run the segment's blocks again **without**
      checkpointing on ``h.detach().requires_grad_()`` (it shares ``h``'s
      storage) under saved-tensor hooks, and count as ``"saved_bytes"``
      does, leaving out the input's own storage too (it is the checkpoint,
      already in ``"saved_bytes"``).  The largest over the segments; 0
      without checkpointing.  Run these after backward, with the pre-hooks
      below removed, so they add no forward calls.
    - ``"peak_bytes"``: ``saved_bytes + segment_bytes``, the peak during
      backward as the table of §6.5.2 Optimal checkpoint placement strategy
      counts it: every checkpoint kept, plus one segment rebuilt at once.  (The real peak can be a little lower:
      backward frees the head's tensors first, and each checkpoint once its
      segment is done.)  Without checkpointing it is ``saved_bytes``.
    - ``"forward_calls"``: a list of ``len(model.blocks)`` ints, one per
      block: how many times that block's forward **started** during
      forward + backward.
      Count with ``register_forward_pre_hook``: non-reentrant checkpointing
      stops a recomputation as soon as it has rebuilt the last saved tensor,
      so a forward (post) hook can miss the recompute.
    - ``"recompute_fraction"``: the block forwards run again in backward
      (the sum of ``"forward_calls"`` minus the number of blocks) divided by
      3 × the number of blocks: the extra work as a fraction of one step's
      block compute without checkpointing, counting a block's backward as
      two forwards (§1 Training Systems Fundamentals: a backward pass costs
      about twice the forward).  A float; 0.0 without checkpointing.
    - ``"loss"``: the loss, a float.
    - ``"grad_norm"``: the L2 norm of all parameter gradients together
      (√ of the sum of squares over every ``p.grad``), a float.

    Tóm tắt (tiếng Việt): với k = ``segment_size`` >= 1, chạy mọi đoạn k khối
    (cả đoạn cuối) qua ``checkpoint`` (``use_reentrant=False``), rồi lượt
    ngược.  Trả về ``"saved_bytes"`` (những gì lượt xuôi lưu lại: các điểm
    lưu), ``"segment_bytes"`` (lớn nhất, qua các đoạn, của những gì một đoạn
    lưu khi chạy lại không lưu điểm từ đầu vào của nó, trừ chính đầu vào),
    ``"peak_bytes"`` = tổng hai số trên (đỉnh trong lượt ngược),
    ``"forward_calls"`` (đếm bằng forward pre-hook), ``"recompute_fraction"``
    (số lượt xuôi khối chạy lại chia cho 3 × số khối), ``"loss"``,
    ``"grad_norm"`` (float).
    """
    ### BEGIN SOLUTION
    model = build_model(config)
    x, y = make_batch(config, batch_size, seed=0)
    blocks = list(model.blocks)
    calls = [0] * len(blocks)
    checkpoints = []  # (segment input, segment): what backward rebuilds each segment from

    def count(i):
        def pre_hook(module, inputs):
            calls[i] += 1
        return pre_hook

    handles = [blk.register_forward_pre_hook(count(i)) for i, blk in enumerate(blocks)]

    def forward():
        h = model.embed(x)
        if segment_size == 0:
            h = _run_blocks(blocks, h)
        else:
            for start in range(0, len(blocks), segment_size):
                segment = blocks[start:start + segment_size]
                checkpoints.append((h, segment))
                # only the segment's input is kept; its insides are rebuilt in backward
                h = checkpoint(_run_blocks, segment, h, use_reentrant=False)
        return model.head_loss(h, y)

    try:
        saved, _, _, loss = _saved_tensors(model, forward)
        loss.backward()
    finally:
        for hd in handles:
            hd.remove()
    grad_sq = sum(float(p.grad.double().pow(2).sum()) for p in model.parameters() if p.grad is not None)
    # backward holds every checkpoint and, while it rebuilds one, that segment's activations
    segment = max((_segment_bytes(model, seg, h) for h, seg in checkpoints), default=0)
    return {"saved_bytes": saved, "segment_bytes": segment, "peak_bytes": saved + segment,
            "forward_calls": calls, "recompute_fraction": (sum(calls) - len(blocks)) / (3 * len(blocks)),
            "loss": float(loss.detach()), "grad_norm": math.sqrt(grad_sq)}
    ### END SOLUTION


# -- 6. GPT-2 XL on a V100 ----------------------------------------------------------------
def v100_walkthrough(*, n_params: int, n_layers: int, s: int, b: int, h: int, a: int,
                     checkpoint_every: int, capacity_bytes: float) -> dict:
    """Three steps toward fitting a model on one GPU (bytes, as floats).

    - ``"fp32_baseline"``: ``model_state_bytes(scheme="fp32_adam")`` plus
      FP32 activations, taken as twice :func:`activation_bytes` (no
      recompute) for all ``n_layers`` (the chapter doubles the whole FP16
      count, §3.3.1 Activation memory requirements).
    - ``"mixed_precision"``: ``model_state_bytes(scheme="mixed_adam")`` plus
      the FP16 activations.
    - ``"checkpointed"``: the mixed-precision model state plus the FP16
      activations divided by ``checkpoint_every``.  This ÷k is the
      chapter's own assumption (§3.3.1 Activation memory requirements:
      checkpointing cuts activations by 75%; §6.3.2 Mixed-precision benefits
      divides them by 4; §6.7 GPT-2 optimization walkthrough: "checkpointing
      every four layers reduces activation storage by 4×"), not the k + N/k
      rule of
      :func:`checkpoint_units` (§6.5.2 Optimal checkpoint placement
      strategy), by which every 4 of 48 layers keeps 16 of 48 layers' worth,
      ÷3.
    - ``"fits"``: ``{step: total <= capacity_bytes}`` for the three steps (bool).

    Chapter: §6.3.2 Mixed-precision benefits and §6.7 GPT-2 optimization
    walkthrough.  GPT-2 XL (1.5e9 params, 48 layers, s=1024, b=4, h=1600,
    a=25, k=4) on a V100 (32 GiB = 34.4 GB): 95.7 GB, 59.9 GB, 33.0 GB; only
    the last fits.

    Tóm tắt (tiếng Việt): byte (float) của ba bước: FP32 (``"fp32_adam"`` +
    gấp đôi giá trị kích hoạt FP16), độ chính xác hỗn hợp (``"mixed_adam"`` +
    giá trị kích hoạt FP16), lưu điểm (như trên, giá trị kích hoạt chia cho
    ``checkpoint_every``: giả định của chương sách, không phải quy tắc
    k + N/k); ``"fits"``: tổng <= ``capacity_bytes`` ở mỗi bước.
    """
    ### BEGIN SOLUTION
    acts = activation_bytes(s=s, b=b, h=h, a=a, n_layers=n_layers, recompute="none")  # FP16
    steps = {
        "fp32_baseline": float(model_state_bytes(n_params=n_params, scheme="fp32_adam") + 2 * acts),
        "mixed_precision": float(model_state_bytes(n_params=n_params, scheme="mixed_adam") + acts),
        "checkpointed": model_state_bytes(n_params=n_params, scheme="mixed_adam") + acts / checkpoint_every,
    }
    return {**steps, "fits": {k: bool(v <= capacity_bytes) for k, v in steps.items()}}
    ### END SOLUTION
