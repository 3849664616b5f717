# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown] tags=["en"]
# # Lab 3: Training memory (bộ nhớ huấn luyện)
#
# *Machine Learning Systems*, Vol. I, Ch. 8 "Model Training". This notebook (sổ tay thực hành) runs on a CPU in under a minute.
#
# Training memory has **four terms (bốn số hạng)**:
#
# $$\text{memory} = \text{weights} + \text{gradients} + \text{optimizer state} + \text{activations}$$
#
# You will:
# 1. measure the four terms on a real (tiny) PyTorch model, and count activations with two kinds of hooks;
# 2. derive the **16 bytes per parameter** of mixed-precision Adam (112 GB at 7B parameters);
# 3. use the per-layer activation formula $s\,b\,h\,(34 + 5\,a\,s/h)$;
# 4. read FP32 / FP16 / BF16 from `torch.finfo`, watch gradients underflow in FP16 and loss scaling bring them back;
# 5. measure activation checkpointing (lưu điểm) with `torch.utils.checkpoint`;
# 6. fit GPT-2 XL on a 32 GiB V100.
#
# Your code goes in **`memory.py`**; each function's docstring is the contract (units, what to count, return keys).
# `lab3_models.py` is shipped: it builds the small seeded models from a plain config dict. **GB means 10⁹ bytes** throughout; a V100's 32 GiB is 34.4 GB.

# %% [markdown] tags=["vi"]
# # Lab 3: Bộ nhớ huấn luyện (training memory)
#
# *Machine Learning Systems*, Tập I, Chương 8 "Model Training" (huấn luyện mô hình). Sổ tay thực hành này chạy trên CPU, dưới 1 phút.
#
# Bộ nhớ huấn luyện gồm **bốn số hạng** (trọng số, gradient, trạng thái bộ tối ưu, giá trị kích hoạt):
#
# $$\text{memory} = \text{weights} + \text{gradients} + \text{optimizer state} + \text{activations}$$
#
# Bạn sẽ:
# 1. đo bốn số hạng trên một mô hình PyTorch thật (dù rất nhỏ), và đếm giá trị kích hoạt bằng hai loại hook;
# 2. suy ra **16 byte mỗi tham số** của Adam với độ chính xác hỗn hợp (112 GB với 7B tham số);
# 3. dùng công thức giá trị kích hoạt cho mỗi lớp $s\,b\,h\,(34 + 5\,a\,s/h)$;
# 4. đọc FP32 / FP16 / BF16 từ `torch.finfo`, xem gradient bị tràn dưới (underflow) trong FP16 và phép nhân tỉ lệ mất mát (loss scaling) đưa chúng trở lại;
# 5. đo lưu điểm giá trị kích hoạt (activation checkpointing) bằng `torch.utils.checkpoint`;
# 6. đưa GPT-2 XL vừa vào một V100 32 GiB.
#
# Mã của bạn nằm trong **`memory.py`**; docstring của mỗi hàm là hợp đồng chấm điểm (đơn vị, đếm những gì, các khoá trả về).
# `lab3_models.py` được cung cấp sẵn: nó dựng các mô hình nhỏ với seed cố định từ một dict cấu hình đơn giản. Trong cả bài, **GB nghĩa là 10⁹ byte**; 32 GiB của một V100 là 34,4 GB.

# %% [markdown] tags=["en"]
# ### Setup, and checking as you go
#
# The next cell finds this lab's files (also when the notebook was opened somewhere else, e.g. on Colab) and starts
# [otter-grader](https://otter-grader.readthedocs.io)'s checker. After each exercise a cell `grader.check("...")`
# runs that question's **public tests** on your files in this folder and shows what failed: the same tests as
# `autograder check lab3`, one question at a time.

# %% [markdown] tags=["vi"]
# ### Thiết lập, và kiểm tra trong lúc làm
#
# Ô tiếp theo tìm các tệp của bài lab này (kể cả khi sổ tay được mở ở nơi khác, ví dụ trên Colab) và khởi động
# bộ kiểm tra của [otter-grader](https://otter-grader.readthedocs.io). Sau mỗi bài tập, một ô `grader.check("...")`
# chạy các **bài kiểm thử công khai** (public tests) của câu hỏi đó trên các tệp của bạn trong thư mục này và cho biết
# phần nào chưa đạt: cùng các bài kiểm thử như `autograder check lab3`, mỗi lần một câu hỏi.
# Các thông báo do `grader.check` in ra bằng tiếng Việt ở mọi nơi (Jupyter, VS Code, Colab): ô thiết lập của sổ tay
# này (`*.vi.ipynb`) tự đặt ngôn ngữ của nó.

# %% tags=["setup"]
LAB, MODULE = "lab3_memory", "memory"

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

import lab3_models
import memory
from autograder.grading.notebook_text import num, nums, show, tr  # what the cells print and plot, in the notebook's language

GB = 1e9
print(tr("the tiny GPT's defaults: {config}").format(config=lab3_models.GPT_DEFAULTS))
TERM = {"weights": tr("weights"), "gradients": tr("gradients"), "optimizer_state": tr("optimizer state"),
        "activations": tr("activations")}  # the four terms, as the plots name them

# %% [markdown] tags=["en"]
# ## 1. The four terms, measured
#
# `measure_four_terms` builds the model from a config, runs one forward pass to the loss, one backward and one optimizer step, and reports bytes:
#
# * **weights**: every parameter once (the tiny GPT ties its LM head to the token embedding, as GPT-2 does: one tensor, counted once);
# * **gradients**: every `p.grad` after backward (frozen parameters have none);
# * **optimizer state**: what `torch.optim` keeps after one step (Adam: m and v; the scalar `step` counter is left out);
# * **activations**: what autograd saved for backward during the forward pass, counted with `torch.autograd.graph.saved_tensors_hooks`.

# %% [markdown] tags=["vi"]
# ## 1. Bốn số hạng, đo thực tế
#
# `measure_four_terms` dựng mô hình từ một cấu hình, chạy một lượt xuôi tới giá trị mất mát, một lượt ngược và một bước của bộ tối ưu, rồi báo cáo số byte:
#
# * **trọng số** (weights): mỗi tham số một lần (GPT nhỏ dùng chung (tie) trọng số của đầu LM với embedding token, như GPT-2: một tensor, đếm một lần);
# * **gradient**: mọi `p.grad` sau lượt ngược (tham số bị đóng băng không có gradient);
# * **trạng thái bộ tối ưu** (optimizer state): những gì `torch.optim` giữ lại sau một bước (Adam: m và v; bộ đếm vô hướng `step` không được tính);
# * **giá trị kích hoạt** (activations): những gì autograd lưu cho lượt ngược trong lượt xuôi, đếm bằng `torch.autograd.graph.saved_tensors_hooks`.

# %%
adam = {"name": "adam", "lr": 1e-3}
terms = memory.measure_four_terms(config={"kind": "gpt"}, batch_size=4, optimizer=adam)
for k, v in terms.items():
    print(f"{k:>16}: {num(v / 1024, '8.1f')} KiB")

for name in ("sgd", "momentum", "adam"):
    t = memory.measure_four_terms(config={"kind": "gpt"}, batch_size=4, optimizer={"name": name, "lr": 1e-3})
    print(tr("{optimizer}: optimizer state = {ratio} x weights").format(
        optimizer=f"{name:>8}", ratio=num(t["optimizer_state"] / t["weights"], 0)))

# %% [markdown] tags=["en"]
# A stacked bar of the four terms for tiny GPTs of growing width. Weights, gradients and Adam state grow with the parameter count (×1, ×1, ×2); activations grow with batch × sequence × width, and the attention part with the sequence squared.

# %% [markdown] tags=["vi"]
# Biểu đồ cột chồng của bốn số hạng cho các GPT nhỏ có độ rộng tăng dần. Trọng số, gradient và trạng thái Adam tăng theo số tham số (×1, ×1, ×2); giá trị kích hoạt tăng theo batch × độ dài chuỗi × độ rộng, và phần attention tăng theo bình phương độ dài chuỗi.

# %%
widths = [16, 32, 64, 128]
parts = ["weights", "gradients", "optimizer_state", "activations"]
rows = [memory.measure_four_terms(config={"kind": "gpt", "d_model": d}, batch_size=8, optimizer=adam) for d in widths]

fig, ax = plt.subplots(figsize=(7, 4))
bottom = np.zeros(len(widths))
for p in parts:
    vals = np.array([r[p] for r in rows]) / 2**20
    ax.bar([f"d={d}" for d in widths], vals, bottom=bottom, label=TERM[p])
    bottom += vals
ax.set_ylabel("MiB (FP32, Adam, B=8, S=16)")
ax.set_title(tr("The four terms, measured on tiny GPTs"))
ax.legend()
show()

# %%
grader.check("four_terms")

# %% [markdown] tags=["en"]
# ### Two ways to count activations
#
# * `saved_tensors_hooks(pack, unpack)` sees **exactly** the tensors autograd keeps for backward: layer inputs, the softmax output, GELU inputs, the loss's log-probabilities, index tensors and masks. Parameters are saved too (a `Linear` needs its weight to compute the input gradient) but they are weights, not activations, so they are left out; several saves can share one storage (a view, or one tensor saved by two ops), and that memory is held only once.
# * Forward hooks on the leaf modules see **module outputs**. They miss what is saved *inside* functional code (the attention scores and softmax of the attention layer, the loss), and they count outputs that nobody saves.

# %% [markdown] tags=["vi"]
# ### Hai cách đếm giá trị kích hoạt
#
# * `saved_tensors_hooks(pack, unpack)` thấy **chính xác** các tensor mà autograd giữ lại cho lượt ngược: đầu vào của các lớp, đầu ra softmax, đầu vào GELU, log-xác suất của hàm mất mát, các tensor chỉ số và mặt nạ (mask). Tham số cũng được lưu (một `Linear` cần trọng số của nó để tính gradient theo đầu vào) nhưng chúng là trọng số, không phải giá trị kích hoạt, nên bị loại ra; nhiều lần lưu có thể dùng chung một vùng lưu trữ (storage) (một view, hoặc một tensor được hai phép toán cùng lưu), và vùng nhớ đó chỉ bị chiếm một lần.
# * Forward hook trên các module lá thấy **đầu ra của module**. Chúng bỏ sót những gì được lưu *bên trong* mã dạng hàm (functional) (điểm attention và softmax của lớp attention, hàm mất mát), và lại đếm cả những đầu ra không ai lưu.

# %%
counts = memory.activation_hook_counts(config={"kind": "gpt"}, batch_size=4)
for k, v in counts.items():
    print(f"{k:>20}: {num(v)}")
print(tr("module outputs / saved tensors = {ratio}").format(
    ratio=num(counts["module_output_bytes"] / counts["saved_bytes"], 2)))

# %%
grader.check("activation_hooks")

# %% [markdown] tags=["en"]
# ## 2. Sixteen bytes per parameter
#
# Mixed-precision Adam keeps, per parameter: FP16 weights (2) + FP16 gradients (2) + an FP32 master copy (4) + Adam m (4) + Adam v (4) = **16 bytes**. All-FP32 Adam is 4 + 4 + 8 = 16 too. (Megatron-LM keeps FP32 gradients: 18. Dropping the master copy gives 12, and loses small updates, as Part 4 shows.) Activations are not in the 16: they depend on the batch.

# %% [markdown] tags=["vi"]
# ## 2. Mười sáu byte mỗi tham số
#
# Adam với độ chính xác hỗn hợp giữ, cho mỗi tham số: trọng số FP16 (2) + gradient FP16 (2) + một bản sao chính (master copy) FP32 (4) + Adam m (4) + Adam v (4) = **16 byte**. Adam hoàn toàn FP32 cũng là 4 + 4 + 8 = 16. (Megatron-LM giữ gradient ở FP32: 18. Bỏ bản sao chính thì còn 12, nhưng mất các cập nhật nhỏ, như Phần 4 cho thấy.) Giá trị kích hoạt không nằm trong con số 16: chúng phụ thuộc vào batch.

# %%
for scheme in ("mixed_adam", "fp32_adam", "mixed_adam_fp32_grads"):
    print(f"{scheme:>22}:", memory.bytes_per_parameter(scheme=scheme))

for P in (7e9, 20e9, 175e9):
    b = memory.model_state_bytes(n_params=int(P), scheme="mixed_adam")
    print(tr("{billions}B parameters -> {gb} GB").format(billions=num(P / 1e9, "5.0f"), gb=num(b / GB, "7,.0f")))

# %%
grader.check("bytes_per_param")

# %% [markdown] tags=["en"]
# ## 3. Activations per transformer layer (giá trị kích hoạt)
#
# Korthikanti et al. count, per layer in FP16 bytes: $s\,b\,h\,(34 + 5\,a\,s/h) = 34\,sbh + 5\,a\,s^2 b$.
# The 5 is the attention score matrix (ma trận điểm attention): 2 bytes for the $QK^T$ scores, 2 for the softmax output, 1 for the dropout mask, each $b \times a \times s \times s$.
# **Selective recomputation** re-derives those and keeps $34\,sbh$; **full recomputation** keeps only the layer input, $2\,sbh$.

# %% [markdown] tags=["vi"]
# ## 3. Giá trị kích hoạt của mỗi lớp transformer
#
# Korthikanti và cộng sự đếm, cho mỗi lớp, theo byte FP16: $s\,b\,h\,(34 + 5\,a\,s/h) = 34\,sbh + 5\,a\,s^2 b$.
# Số 5 là ma trận điểm attention (attention score matrix): 2 byte cho điểm $QK^T$, 2 cho đầu ra softmax, 1 cho mặt nạ dropout, mỗi tensor có kích thước $b \times a \times s \times s$.
# **Tính lại có chọn lọc** (selective recomputation) tính lại các tensor đó và giữ $34\,sbh$; **tính lại toàn bộ** (full recomputation) chỉ giữ đầu vào của lớp, $2\,sbh$.

# %%
xl = dict(s=1024, b=8, h=1600, a=25)  # GPT-2 XL, micro-batch 8
print("; ".join(f"{k}: {num(v / GB, 3)} GB" for k, v in memory.attention_score_bytes(s=1024, b=8, a=25).items()))
for mode in ("none", "selective", "full"):
    one = memory.activation_bytes(**xl, n_layers=1, recompute=mode)
    all48 = memory.activation_bytes(**xl, n_layers=48, recompute=mode)
    print(tr("{mode}: {layer} GB per layer, {model} GB for 48 layers").format(
        mode=f"{mode:>9}", layer=num(one / GB, "6.3f"), model=num(all48 / GB, "6.1f")))

# %%
seqs = [256, 512, 1024, 2048, 4096]
linear = [memory.activation_bytes(s=s, b=8, h=1600, a=25, recompute="selective") / GB for s in seqs]
total = [memory.activation_bytes(s=s, b=8, h=1600, a=25) / GB for s in seqs]
fig, ax = plt.subplots(figsize=(7, 4))
ax.bar([str(s) for s in seqs], linear, label=tr("34·s·b·h (linear in s)"))
ax.bar([str(s) for s in seqs], np.subtract(total, linear), bottom=linear, label=tr("5·a·s²·b (attention, quadratic)"))
ax.set_xlabel(tr("sequence length s")); ax.set_ylabel(tr("GB per layer (GPT-2 XL, b=8)"))
ax.legend(); show()

# %% [markdown] tags=["en"]
# The same four terms at real scale: GPT-2 small, medium, large and XL with mixed-precision Adam, micro-batch 8, sequence 1024. Weights are 2 bytes/parameter, gradients 2, optimizer state (master + m + v) 12.

# %% [markdown] tags=["vi"]
# Cũng bốn số hạng đó ở quy mô thật: GPT-2 small, medium, large và XL với Adam độ chính xác hỗn hợp, micro-batch 8, độ dài chuỗi 1024. Trọng số 2 byte/tham số, gradient 2, trạng thái bộ tối ưu (bản sao chính + m + v) 12.

# %%
gpt2 = {  # name: (parameters, layers, d_model, heads)
    "small": (124e6, 12, 768, 12), "medium": (355e6, 24, 1024, 16),
    "large": (774e6, 36, 1280, 20), "XL": (1.5e9, 48, 1600, 25)}
bpp = memory.bytes_per_parameter(scheme="mixed_adam")
stack = {"weights": [], "gradients": [], "optimizer_state": [], "activations": []}
for P, L, h, a in gpt2.values():
    stack["weights"].append(P * bpp["weights"] / GB)
    stack["gradients"].append(P * bpp["gradients"] / GB)
    stack["optimizer_state"].append(P * (bpp["master"] + bpp["adam_m"] + bpp["adam_v"]) / GB)
    stack["activations"].append(memory.activation_bytes(s=1024, b=8, h=h, a=a, n_layers=L) / GB)
fig, ax = plt.subplots(figsize=(7, 4))
bottom = np.zeros(len(gpt2))
for name, vals in stack.items():
    ax.bar(list(gpt2), vals, bottom=bottom, label=TERM[name])
    bottom += np.array(vals)
ax.set_ylabel("GB"); ax.set_title(tr("The four terms of GPT-2's training memory (b=8, s=1024)"))
ax.legend(); show()

# %%
grader.check("activation_formula")

# %% [markdown] tags=["en"]
# ## 4. Number formats: FP32, FP16, BF16
#
# FP16 has 5 exponent bits: its largest value is 65504, normal numbers stop at 6.1e-5, and anything below half the smallest subnormal (6e-8 / 2) rounds to 0. BF16 keeps FP32's 8 exponent bits (same range) but only 7 mantissa bits (eps 7.8e-3).

# %% [markdown] tags=["vi"]
# ## 4. Định dạng số: FP32, FP16, BF16
#
# FP16 có 5 bit số mũ: giá trị lớn nhất là 65504, các số chuẩn (normal) dừng ở 6,1e-5, và mọi giá trị nhỏ hơn một nửa số dưới chuẩn (subnormal) nhỏ nhất (6e-8 / 2) đều bị làm tròn về 0. BF16 giữ 8 bit số mũ của FP32 (cùng phạm vi) nhưng chỉ có 7 bit phần định trị (mantissa) (eps 7,8e-3).

# %%
ranges = memory.format_ranges()
columns = {"max": tr("largest"), "min_normal": tr("smallest normal"), "min_subnormal": tr("smallest subnormal"),
           "eps": "eps"}
width = {key: max(10, len(head)) for key, head in columns.items()}
print(" " * 9, *(f"{head:>{width[key]}}" for key, head in columns.items()), " " + tr("bits (exponent, mantissa)"))
for name, r in ranges.items():
    print(f"{name:>9}", *(f"{num(r[key], '.3g'):>{width[key]}}" for key in columns),
          f" ({r['exponent_bits']}, {r['mantissa_bits']})")

# %% [markdown] tags=["en"]
# Real gradients of a deep MLP with small initial weights shrink layer by layer. Cast to FP16, many of them flush to zero. **Loss scaling** multiplies the loss (and so every gradient) by $2^k$ before backward, which lifts them back into FP16's range; too large a scale overflows to inf instead.

# %% [markdown] tags=["vi"]
# Gradient thật của một MLP sâu với trọng số khởi tạo nhỏ co lại dần qua từng lớp. Khi ép sang FP16, nhiều gradient bị làm tròn về 0. **Nhân tỉ lệ mất mát** (loss scaling) nhân giá trị mất mát (và do đó mọi gradient) với $2^k$ trước lượt ngược, đưa chúng trở lại phạm vi của FP16; hệ số quá lớn thì ngược lại gây tràn trên (overflow) thành inf.

# %%
mlp = {"kind": "mlp"}
scales = [2.0**k for k in (0, 4, 8, 12, 15, 20, 24)]
res = [memory.fp16_gradient_underflow(config=mlp, batch_size=32, loss_scale=s) for s in scales]
for s, r in zip(scales, res):
    print(tr("scale 2^{k}: {underflow} underflow, {overflow} overflow").format(
        k=f"{int(math.log2(s)):<2}", underflow=num(r["underflow_fraction"], "6.1%"), overflow=num(r["n_overflow"])))

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
ax1.plot([math.log2(s) for s in scales], [r["underflow_fraction"] for r in res], "o-")
ax1.set_xlabel(tr("log2(loss scale)")); ax1.set_ylabel(tr("fraction of gradients lost in FP16"))
ax1b = ax1.twinx()
ax1b.plot([math.log2(s) for s in scales], [r["n_overflow"] for r in res], "rs--")
ax1b.set_ylabel(tr("gradients overflowing to inf"), color="r")
by = res[0]["underflow_by_parameter"]
ax2.barh(list(by), list(by.values()))
ax2.invert_yaxis(); ax2.set_xlabel(tr("fraction lost, loss scale 1"))
plt.tight_layout(); show()

# %% [markdown] tags=["en"]
# Why master weights stay FP32: an Adam-sized update, lr × grad = 2.5e-4 × 1e-2, added to a weight near 1 is smaller than half of FP16's spacing there (≈ 4.9e-4), so the sum rounds back to the old weight.

# %% [markdown] tags=["vi"]
# Vì sao trọng số chính (master weights) giữ ở FP32: một cập nhật cỡ Adam, lr × grad = 2,5e-4 × 1e-2, cộng vào một trọng số gần 1 thì nhỏ hơn một nửa khoảng cách giữa hai số FP16 liền kề ở đó (≈ 4,9e-4), nên tổng bị làm tròn về đúng trọng số cũ.

# %%
rng = np.random.default_rng(0)
w = rng.normal(0, 0.02, 10_000).astype(np.float32)
u = (2.5e-4 * rng.normal(0, 1e-2, 10_000)).astype(np.float32)
for case, lost in ((f"w ~ N{nums((0, 0.02), brackets='()')}", memory.lost_updates(weights=w, updates=u)),
                   ("w = 1", memory.lost_updates(weights=np.ones(4, np.float32), updates=np.full(4, 2.5e-6, np.float32)))):
    print(tr("{case}: updates lost in {formats}").format(
        case=f"{case:<15}", formats="; ".join(f"{fmt} {num(share, '.1%')}" for fmt, share in lost.items())))

# %%
grader.check("number_formats")

# %% [markdown] tags=["en"]
# ## 5. Checkpointing (lưu điểm) and recompute (tính lại)
#
# Keeping $k$ checkpoints among $N$ layers stores about $k + N/k$ layer-activations, for roughly one extra forward pass (+33% compute). The best $k$ is near $\sqrt N$: 48 layers with 7 checkpoints keep 13.9 units, a 71% saving.

# %% [markdown] tags=["vi"]
# ## 5. Lưu điểm (checkpointing) và tính lại (recompute)
#
# Giữ $k$ điểm lưu trong $N$ lớp thì phải lưu khoảng $k + N/k$ đơn vị giá trị kích hoạt của một lớp, với giá khoảng một lượt xuôi thêm (+33% tính toán). $k$ tốt nhất nằm gần $\sqrt N$: 48 lớp với 7 điểm lưu giữ 13,9 đơn vị, tiết kiệm 71%.

# %%
N = 48
ks = np.arange(1, N + 1)
units = [memory.checkpoint_units(n_layers=N, n_checkpoints=int(k))["units"] for k in ks]
best = memory.best_checkpoint_count(n_layers=N)
kept = memory.checkpoint_units(n_layers=N, n_checkpoints=best)
print(tr("best k = {k}: {units} units kept, a saving of {saving}").format(
    k=best, units=num(kept["units"], 1), saving=num(kept["saving"], ".1%")))
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(ks, units); ax.axhline(N, ls=":", c="gray", label=tr("no checkpointing"))
ax.plot([best], [units[best - 1]], "ro", label=f"k={best}")
ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))  # k counts checkpoints: whole numbers
ax.set_xlabel(tr("checkpoints k")); ax.set_ylabel(tr("layer-activations kept")); ax.legend(); show()

# %% [markdown] tags=["en"]
# Now for real, with `torch.utils.checkpoint` on a 4-block tiny GPT. Each segment of blocks keeps only its input; in backward its forward runs again. A forward **pre**-hook counts the re-runs (non-reentrant checkpointing stops a recompute as soon as it has rebuilt what backward needs, so the forward may never return).

# %% [markdown] tags=["vi"]
# Giờ làm thật, với `torch.utils.checkpoint` trên một GPT nhỏ 4 khối. Mỗi đoạn (segment) gồm các khối chỉ giữ đầu vào của nó; trong lượt ngược, lượt xuôi của đoạn đó chạy lại. Một forward **pre**-hook đếm số lần chạy lại (lưu điểm kiểu non-reentrant dừng việc tính lại ngay khi đã dựng lại xong những gì lượt ngược cần, nên lượt xuôi có thể không bao giờ trả về).

# %%
cfg = {"kind": "gpt", "n_layers": 4, "d_model": 64}
segs = [0, 1, 2, 4]
ck = {k: memory.measure_checkpointing(config=cfg, batch_size=8, segment_size=k) for k in segs}
for k, r in ck.items():
    print(tr("segment_size={k}: saved {saved} KiB, forward calls {calls}, loss {loss}, gradient norm {norm}").format(
        k=k, saved=num(r["saved_bytes"] / 1024, "7,.1f"), calls=nums(r["forward_calls"]), loss=num(r["loss"], 4),
        norm=num(r["grad_norm"], 6)))
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.bar([(tr("no checkpointing") if k == 0 else tr("every {k}").format(k=k)) for k in segs],
       [ck[k]["saved_bytes"] / 1024 for k in segs])
ax.set_xlabel(tr("checkpoint segments")); ax.set_ylabel(tr("saved activations (KiB)")); show()

# %%
grader.check("checkpointing")

# %% [markdown] tags=["en"]
# ## 6. GPT-2 XL on a V100
#
# GPT-2 XL (1.5e9 parameters, 48 layers) with micro-batch 4 and sequence 1024 on a 32 GiB = 34.4 GB V100:
#
# | Step | Memory | Fits? |
# |---|---|---|
# | FP32 baseline | 95.7 GB | no |
# | mixed precision | 59.9 GB | no |
# | + checkpoint every 4 layers | 33.0 GB | yes |

# %% [markdown] tags=["vi"]
# ## 6. GPT-2 XL trên một V100
#
# GPT-2 XL (1,5e9 tham số, 48 lớp) với micro-batch 4 và độ dài chuỗi 1024 trên một V100 32 GiB = 34,4 GB:
#
# | Bước | Bộ nhớ | Vừa không? |
# |---|---|---|
# | FP32 cơ sở (baseline) | 95,7 GB | không |
# | độ chính xác hỗn hợp | 59,9 GB | không |
# | + lưu điểm mỗi 4 lớp | 33,0 GB | có |

# %%
V100 = 32 * 2**30
walk = memory.v100_walkthrough(n_params=1_500_000_000, n_layers=48, s=1024, b=4, h=1600, a=25,
                               checkpoint_every=4, capacity_bytes=V100)
steps = ["fp32_baseline", "mixed_precision", "checkpointed"]
for s in steps:
    print(tr("{step}: {gb} GB, fits: {fits}").format(step=f"{s:>16}", gb=num(walk[s] / GB, "5.1f"),
                                                     fits=tr("yes") if walk["fits"][s] else tr("no")))

state = [memory.model_state_bytes(n_params=1_500_000_000, scheme=sc) / GB
         for sc in ("fp32_adam", "mixed_adam", "mixed_adam")]
acts = [walk[s] / GB - m for s, m in zip(steps, state)]
names = [tr("FP32 baseline"), tr("mixed precision"), tr("+ checkpoint every 4 layers")]  # the steps, as in the table above
fig, ax = plt.subplots(figsize=(7, 4))
ax.bar(names, state, label=tr("weights + gradients + optimizer state"))
ax.bar(names, acts, bottom=state, label=TERM["activations"])
ax.axhline(V100 / GB, c="r", ls="--", label=tr("V100 32 GiB = 34.4 GB"))
ax.set_ylabel("GB"); ax.set_title("GPT-2 XL, B=4, S=1024"); ax.legend(); show()

# %%
grader.check("v100")

# %% [markdown] tags=["en"]
# ## How to check and submit
#
# * Check your work: in a terminal, run `autograder check lab3`. It runs the public tests against your `memory.py` and prints points per question with hints. In this notebook, the `grader.check("...")` cells run the same public tests one question at a time; `grader.check_all()` runs them all.
# * The public tests are only a sample: more **hidden tests** run at grading, on other models, optimizers, batch sizes and shapes, and they compare with PyTorch itself (saved-tensor hooks, `torch.optim`, `torch.utils.checkpoint`). Follow the docstrings exactly.
# * Submit: `autograder submit lab3` builds the zip to upload (it holds `memory.py` only; `lab3_models.py` is supplied by the grader).

# %% [markdown] tags=["vi"]
# ## Cách kiểm tra và nộp bài
#
# * Kiểm tra bài làm: trong terminal, chạy `autograder check lab3`. Lệnh này chạy các bài kiểm thử công khai trên `memory.py` của bạn và in điểm từng câu hỏi kèm gợi ý. Trong sổ tay này, các ô `grader.check("...")` chạy cùng các bài kiểm thử công khai đó, mỗi lần một câu hỏi; `grader.check_all()` chạy tất cả.
# * Các bài kiểm thử công khai chỉ là một mẫu: khi chấm điểm còn nhiều **bài kiểm thử ẩn** (hidden tests) chạy thêm, trên các mô hình, bộ tối ưu, kích thước batch và shape khác, và chúng so sánh với chính PyTorch (saved-tensor hook, `torch.optim`, `torch.utils.checkpoint`). Hãy làm đúng theo docstring.
# * Nộp bài: `autograder submit lab3` tạo tệp zip để tải lên (chỉ chứa `memory.py`; `lab3_models.py` do bộ chấm cung cấp).
