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
# # Lab 1: the iron law
#
# *Machine Learning Systems*, Volume I, Chapter 8 ("Model Training"), sections 1 to 7.
#
# How long does training take? The chapter's answer is the **iron law of training time**:
#
# $$T_\text{train} = \frac{O}{R_\text{peak} \cdot \eta}$$
#
# where $O$ is the number of floating-point operations (FLOPs), $R_\text{peak}$ the peak rate of the hardware
# (FLOP/s) and $\eta$ the fraction of that peak you actually reach. In this lab you
#
# 1. count $O$ for a GPT-2 layer, matmul by matmul, then **everything else**, then the backward pass;
# 2. check your counts against PyTorch's own FLOP counter;
# 3. measure $\eta$ on this CPU (and on a simulated device, as the grader does), for matmuls of growing batch size;
# 4. turn the law into calculators: training time, MFU, the rent-or-buy decision and the energy bill.
#
# You write the functions in `flops.py` and `costs.py` (this folder). Each one raises `NotImplementedError` until
# you do; its docstring says exactly what to compute, with which conventions. Run the cells below as you go.
# The whole notebook runs in well under a minute on a laptop CPU.

# %% [markdown] tags=["vi"]
# # Lab 1: định luật sắt
#
# *Machine Learning Systems*, Tập I, Chương 8 ("Huấn luyện mô hình", *Model Training*), mục 1 đến 7.
#
# Huấn luyện mất bao lâu? Câu trả lời của chương là **định luật sắt của thời gian huấn luyện**:
#
# $$T_\text{train} = \frac{O}{R_\text{peak} \cdot \eta}$$
#
# trong đó $O$ là số phép toán dấu phẩy động (FLOP), $R_\text{peak}$ là thông lượng đỉnh của phần cứng
# (FLOP/s) và $\eta$ là tỉ lệ của mức đỉnh đó mà bạn thực sự đạt được. Trong bài lab này, bạn sẽ
#
# 1. đếm $O$ cho một lớp GPT-2: lần lượt từng phép nhân ma trận (matmul), rồi **mọi phần còn lại**, rồi đến lượt ngược;
# 2. đối chiếu số đếm của mình với bộ đếm FLOP của chính PyTorch;
# 3. đo $\eta$ trên CPU này (và trên một thiết bị mô phỏng, như bộ chấm), với các phép nhân ma trận có kích thước batch tăng dần;
# 4. biến định luật thành các công cụ tính: thời gian huấn luyện, MFU, quyết định thuê hay mua cụm và hoá đơn năng lượng.
#
# Bạn viết các hàm trong `flops.py` và `costs.py` (ở thư mục này). Mỗi hàm báo lỗi `NotImplementedError` cho đến khi
# bạn viết xong; docstring của hàm nói chính xác cần tính gì, theo quy ước nào. Hãy chạy các ô bên dưới trong lúc làm bài.
# Toàn bộ sổ tay thực hành chạy chưa đến 1 phút trên CPU của một máy tính xách tay.

# %% [markdown] tags=["en"]
# ### Setup, and checking as you go
#
# The next cell finds this lab's files (also when the notebook was opened somewhere else, e.g. on Colab) and starts
# [otter-grader](https://otter-grader.readthedocs.io)'s checker. After each exercise a cell `grader.check("...")`
# runs that question's **public tests** on your files in this folder and shows what failed: the same tests as
# `autograder check lab1`, one question at a time.

# %% [markdown] tags=["vi"]
# ### Thiết lập, và kiểm tra trong lúc làm bài
#
# Ô tiếp theo tìm các tệp của bài lab này (kể cả khi sổ tay được mở ở nơi khác, ví dụ trên Colab) và khởi động
# bộ kiểm tra của [otter-grader](https://otter-grader.readthedocs.io). Sau mỗi bài tập, một ô `grader.check("...")`
# chạy các **bài kiểm thử công khai** (public tests) của câu hỏi đó trên các tệp của bạn trong thư mục này và cho biết
# những gì chưa đạt: cùng các bài kiểm thử như `autograder check lab1`, nhưng từng câu hỏi một.
#
# Các thông báo do `grader.check` in ra bằng tiếng Việt ở mọi nơi (Jupyter, VS Code, Colab): ô thiết lập của sổ tay
# này (`*.vi.ipynb`) tự đặt ngôn ngữ của nó.

# %% tags=["setup"]
LAB, MODULE = "lab1_iron_law", "flops"

# %%
import os

# Time one CPU core, as the grader does: several threads waiting for each other make timings jump on a
# busy machine.  This must happen before torch is first imported (restart the kernel if it already was).
os.environ.setdefault("OMP_NUM_THREADS", "1")

import matplotlib.pyplot as plt
import torch

import costs
import flops
from autograder.grading.notebook_text import num, show, tr  # what the cells print and plot, in the notebook's language

XL = dict(B=32, S=1024, d=1600, h=25)  # GPT-2 XL: d_model 1600, 25 heads; 32 sequences of 1024 tokens
SMALL = dict(B=4, S=256, d=768, h=12)  # GPT-2 small

# %% [markdown] tags=["en"]
# ## 1. Count the matmuls of one layer (section 3)
#
# A product $(m, k) @ (k, n)$ computes $m \cdot n$ dot products of length $k$: $k$ multiplies and $k$ adds each,
# so **$2mkn$ FLOPs**. A GPT-2 layer has five groups of matmuls: the Q, K, V projections, the attention scores
# $QK^T$, attention $\times V$, the output projection and the two MLP matmuls. Attention counts the full
# $S \times S$ score matrix: the causal mask hides half of it, but the hardware computes it anyway.
#
# Write `matmul_flops` and `layer_matmul_flops`. For GPT-2 XL the chapter gives
# 503.3 / 107.4 / 107.4 / 167.8 / 1342.2 GFLOP, 2228.0 in all.

# %% [markdown] tags=["vi"]
# ## 1. Đếm các phép nhân ma trận của một lớp (mục 3)
#
# Tích $(m, k) @ (k, n)$ tính $m \cdot n$ tích vô hướng có độ dài $k$, mỗi tích gồm $k$ phép nhân và $k$ phép cộng,
# nên tốn **$2mkn$ FLOP**. Một lớp GPT-2 có năm nhóm phép nhân ma trận: các phép chiếu Q, K, V, điểm attention
# $QK^T$, attention $\times V$, phép chiếu đầu ra và hai phép nhân ma trận của MLP. Phần attention được đếm với toàn bộ
# ma trận điểm attention $S \times S$: mặt nạ nhân quả (causal mask) che đi một nửa, nhưng phần cứng vẫn tính cả ma trận.
#
# Hãy viết `matmul_flops` và `layer_matmul_flops`. Với GPT-2 XL, chương sách cho
# 503,3 / 107,4 / 107,4 / 167,8 / 1342,2 GFLOP, tổng cộng 2228,0.

# %%
print(tr("(64, 32) @ (32, 16): {count} FLOPs").format(count=num(flops.matmul_flops(m=64, k=32, n=16))))

layer = flops.layer_matmul_flops(**XL)
for name, count in layer.items():
    print(f"{name:>9}: {num(count / 1e9, '8.1f')} GFLOP")

parts = [k for k in layer if k != "total"]
plt.figure(figsize=(6, 3))
plt.barh(parts, [layer[k] / 1e9 for k in parts])
plt.xlabel(tr("GFLOP (forward pass, one layer)"))
plt.title(tr("A GPT-2 XL layer, B=32, S=1024"))
plt.tight_layout()
show()

# %%
grader.check("forward_flops")

# %% [markdown] tags=["en"]
# ## 2. Count to the end (section 3)
#
# Matmuls are not the only work. Softmax, LayerNorm, GELU, the residual adds and the biases all cost FLOPs too.
# `elementwise_flops` counts them with the per-element costs fixed in `flops.py` (`SOFTMAX_FLOPS_PER_SCORE` and
# friends). `matmul_fraction` then says what share of the layer is matmuls. The chapter's claim: more than 98%.
#
# The only non-matmul term that grows like the attention matmuls is the softmax: both scale with $S^2$.
# The plot shows how the matmul share changes with the sequence length.

# %% [markdown] tags=["vi"]
# ## 2. Đếm đến cùng (mục 3)
#
# Phép nhân ma trận không phải là toàn bộ công việc. Softmax, LayerNorm, GELU, các phép cộng phần dư (residual) và các bias
# cũng tốn FLOP. `elementwise_flops` đếm chúng theo chi phí trên mỗi phần tử đã được cố định trong `flops.py`
# (`SOFTMAX_FLOPS_PER_SCORE` và các hằng số cùng loại). Sau đó `matmul_fraction` cho biết phép nhân ma trận chiếm bao nhiêu
# phần của lớp. Khẳng định của chương: hơn 98%.
#
# Trong các số hạng không phải phép nhân ma trận, chỉ có softmax tăng giống các phép nhân ma trận của attention: cả hai
# tỉ lệ với $S^2$. Biểu đồ cho thấy tỉ trọng của phép nhân ma trận thay đổi thế nào theo độ dài chuỗi.

# %%
other = flops.elementwise_flops(**XL)
for name, count in other.items():
    print(f"{name:>9}: {num(count / 1e9, '7.2f')} GFLOP")
print(tr("matmul share, GPT-2 XL: {share}").format(share=num(flops.matmul_fraction(**XL), 4)))

seq = [64, 128, 256, 512, 1024, 2048, 4096, 8192]
plt.figure(figsize=(6, 3))
for name, cfg in (("GPT-2 XL", XL), ("GPT-2 small", SMALL)):
    plt.plot(seq, [100 * flops.matmul_fraction(**{**cfg, "S": s}) for s in seq], "o-", label=name)
plt.axhline(98, color="gray", ls="--", lw=1)
plt.xscale("log", base=2)
plt.xlabel(tr("sequence length S"))
plt.ylabel(tr("matmul share of the FLOPs (%)"))
plt.legend()
plt.tight_layout()
show()

# %%
grader.check("count_to_the_end")

# %% [markdown] tags=["en"]
# ## 3. Forward plus backward (section 3)
#
# The backward pass of $Y = A W$ needs two products as big as the forward one: $dA = dY\,W^T$ for the layer
# below and $dW = A^T dY$ for the weight. So backward is about $2\times$ forward, and a training step
# $3\times$ forward. For GPT-2 XL (48 layers) a step is $48 \times 3 \times 2228$ GFLOP $= 320.8$ TFLOP.
#
# The popular shortcut $6 \cdot P \cdot \text{tokens}$ (`costs.training_flops`) gives 294.9 TFLOP instead. Where does the
# gap come from? `step_flops` also returns the part due to the attention products, which multiply two activations,
# have no parameters, and so are invisible to a rule based on $P$.

# %% [markdown] tags=["vi"]
# ## 3. Lượt xuôi cộng lượt ngược (mục 3)
#
# Lượt ngược của $Y = A W$ cần hai tích lớn bằng tích ở lượt xuôi: $dA = dY\,W^T$ cho lớp bên dưới
# và $dW = A^T dY$ cho trọng số. Vì vậy lượt ngược tốn khoảng $2\times$ lượt xuôi, và một bước huấn luyện tốn
# $3\times$ lượt xuôi. Với GPT-2 XL (48 lớp), một bước là $48 \times 3 \times 2228$ GFLOP $= 320{,}8$ TFLOP.
#
# Công thức tắt phổ biến $6 \cdot P \cdot \text{tokens}$ (`costs.training_flops`) lại cho 294,9 TFLOP. Chênh lệch này
# từ đâu mà có? `step_flops` cũng trả về phần do các tích attention gây ra: các tích này nhân hai giá trị kích hoạt với
# nhau, không có tham số, nên một quy tắc dựa trên $P$ không thấy được chúng.

# %%
step = flops.step_flops(**XL, n_layers=48)
rule = costs.training_flops(n_params=1.5e9, n_tokens=XL["B"] * XL["S"])
for name, count in step.items():
    print(f"{name:>20}: {num(count / 1e12, '6.1f')} TFLOP")
print(f"{'6 * P * tokens':>20}: {num(rule / 1e12, '6.1f')} TFLOP")

seq = [256, 512, 1024, 2048, 4096, 8192]
counted = [flops.step_flops(**{**XL, "S": s}, n_layers=48)["total"] / (XL["B"] * s) for s in seq]
plt.figure(figsize=(6, 3))
plt.plot(seq, [c / 1e9 for c in counted], "o-", label=tr("counted (step_flops)"))
plt.plot(seq, [6 * 1.5e9 / 1e9] * len(seq), "--", label="6 * P")
plt.xscale("log", base=2)
plt.xlabel(tr("sequence length S"))
plt.ylabel(tr("GFLOP per token per step"))
plt.legend()
plt.tight_layout()
show()

# %%
grader.check("forward_backward")

# %% [markdown] tags=["en"]
# ## 4. Check your counts against PyTorch (section 3)
#
# `torch.utils.flop_counter.FlopCounterMode` counts the FLOPs of every matmul PyTorch runs (2 per
# multiply-accumulate, biases not included). Here it runs on a small real block. Attention is written as explicit
# matmuls: on a CPU the counter counts **zero** for `F.scaled_dot_product_attention`.
# The hidden tests run this kind of check, on other shapes, for every matmul and for the backward pass.

# %% [markdown] tags=["vi"]
# ## 4. Đối chiếu số đếm của bạn với PyTorch (mục 3)
#
# `torch.utils.flop_counter.FlopCounterMode` đếm FLOP của mọi phép nhân ma trận mà PyTorch chạy (2 FLOP cho mỗi
# phép nhân-cộng (multiply-accumulate), không tính bias). Ở đây nó chạy trên một khối (block) thật, cỡ nhỏ. Attention được
# viết thành các phép nhân ma trận tường minh: trên CPU, bộ đếm cho ra **0** FLOP với `F.scaled_dot_product_attention`.
# Các bài kiểm thử ẩn chạy kiểu đối chiếu này, trên các kích thước khác, cho mọi phép nhân ma trận và cho cả lượt ngược.

# %%
import math

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

B, S, d, h = 2, 128, 256, 4
qkv, out_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))
ln_1, ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)


def block(x):  # (B, S, d)
    q, k, v = qkv(ln_1(x)).split(d, dim=-1)
    q, k, v = (t.view(B, S, h, d // h).transpose(1, 2) for t in (q, k, v))  # (B, h, S, d_head)
    att = (q @ k.transpose(-2, -1) / math.sqrt(d // h)).softmax(-1)  # (B, h, S, S)
    x = x + out_proj((att @ v).transpose(1, 2).reshape(B, S, d))
    return x + mlp(ln_2(x))


x = torch.randn(B, S, d, requires_grad=True)
with FlopCounterMode(display=False) as counter:
    y = block(x)
forward = counter.get_total_flops()
with FlopCounterMode(display=False) as counter:
    y.sum().backward()
backward = counter.get_total_flops()
mine = flops.layer_matmul_flops(B=B, S=S, d=d, h=h)["total"], flops.layer_backward_flops(B=B, S=S, d=d, h=h)["total"]
print(tr("forward pass: torch {counted}, yours {mine}").format(counted=num(forward), mine=num(mine[0])))
print(tr("backward pass: torch {counted}, yours {mine}").format(counted=num(backward), mine=num(mine[1])))

# %% [markdown] tags=["en"]
# ## 5. Measure utilization on this CPU (section 5)
#
# Counting gives $O$; now measure $\eta$. `measure_peak_flop_per_s` times a large square matmul and keeps the
# best rate: our stand-in for $R_\text{peak}$. `measure_matmul_throughput` times one linear layer $X W$ with
# $X$ of shape $(b, d)$ for growing batch sizes $b$ and reports the FLOP rate and the utilization.
#
# Both functions do their work through a **device** from `lab1_device.py` (shipped with the lab): by default this
# CPU, where `device.matmul(X, W)` is `X @ W` and `device.clock()` is `time.perf_counter()`. Small batches spend
# most of their time on per-call overhead and on reading the weight matrix, so they reach a small fraction of
# peak; utilization rises with the batch and levels off. This notebook runs PyTorch on one thread, as the
# grader does (see the cell that sets `OMP_NUM_THREADS`).

# %% [markdown] tags=["vi"]
# ## 5. Đo mức sử dụng trên CPU này (mục 5)
#
# Phép đếm cho ta $O$; giờ hãy đo $\eta$. `measure_peak_flop_per_s` đo thời gian một phép nhân ma trận vuông lớn và giữ
# lại tốc độ tốt nhất: đó là giá trị chúng ta dùng thay cho $R_\text{peak}$. `measure_matmul_throughput` đo thời gian một
# lớp tuyến tính $X W$, với $X$ có dạng $(b, d)$, cho các kích thước batch $b$ tăng dần, và báo cáo tốc độ FLOP cùng mức sử dụng.
#
# Cả hai hàm làm mọi việc thông qua một **thiết bị** (device) của `lab1_device.py` (đi kèm bài lab): mặc định là CPU
# này, nơi `device.matmul(X, W)` là `X @ W` và `device.clock()` là `time.perf_counter()`. Batch nhỏ tốn phần lớn thời
# gian cho chi phí cố định của mỗi lần gọi và cho việc đọc ma trận trọng số, nên chỉ đạt một phần nhỏ của mức đỉnh; mức
# sử dụng tăng theo batch rồi chững lại. Sổ tay này chạy PyTorch trên một luồng, giống như bộ chấm (xem ô code đặt
# `OMP_NUM_THREADS`).

# %%
torch.set_num_threads(1)  # one core (see the cell that sets OMP_NUM_THREADS)
peak = flops.measure_peak_flop_per_s()
print(tr("peak of a 512 x 512 matmul on one core: {rate} GFLOP/s").format(rate=num(peak / 1e9, 1)))

batches = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
sweep = flops.measure_matmul_throughput(batch_sizes=batches, d_in=256, d_out=256, repeats=9)
for b, rate, u in zip(sweep["batch_sizes"], sweep["flop_per_s"], sweep["utilization"]):
    print(tr("batch {b}: {rate} GFLOP/s, utilization {u}").format(b=num(b, "4d"), rate=num(rate / 1e9, "6.1f"),
                                                                 u=num(u, 2)))

# %% [markdown] tags=["en"]
# ### How the grader sees it: a simulated device
#
# Real timings change from run to run and from machine to machine, so a grade cannot depend on them. The grader
# runs your two functions on **simulated devices** instead: `device={"kind": "simulated", ...}` (a plain dict)
# gives a device that computes nothing and moves its own clock by a model of each product. Every call pays a fixed
# overhead, the rate grows with the size of the product, the first product of each shape pays a one-time warm-up
# cost, a product right after one of its own shape finds warm caches and runs faster, making an operand with
# `randn` takes time too, and a deterministic "noise" makes repeated calls differ, so that the best, the median and
# the mean of repeated timings are three different numbers (the model is in `lab1_device.py`'s docstring). The same
# code always gives the same times there, and the hidden tests compare yours with the reference solution's on the
# same devices. That only works if you follow the docstrings' protocol exactly: the operands made first, one
# untimed warm-up per shape, `device.clock()` around each single `device.matmul`, rounds that interleave the batch
# sizes, the median for the sweep, the best for the peak, and torch's thread setting left alone (`flops.py` never
# calls `torch.set_num_threads`: a simulated device raises `ThreadSettingError` if it does).

# %% [markdown] tags=["vi"]
# ### Bộ chấm nhìn thấy gì: một thiết bị mô phỏng
#
# Thời gian đo thật thay đổi giữa các lần chạy và giữa các máy, nên điểm số không thể phụ thuộc vào nó. Thay vào đó,
# bộ chấm chạy hai hàm của bạn trên các **thiết bị mô phỏng**: `device={"kind": "simulated", ...}` (một dict thông
# thường) cho một thiết bị không tính gì cả mà chỉ tăng đồng hồ riêng của nó theo một mô hình của từng tích. Mỗi lần gọi
# tốn một chi phí cố định, tốc độ tăng theo kích thước của tích, tích đầu tiên của mỗi kích thước tốn thêm một chi phí
# khởi động một lần, một tích ngay sau một tích cùng kích thước gặp bộ nhớ đệm còn nóng nên chạy nhanh hơn, tạo toán hạng
# bằng `randn` cũng tốn thời gian, và một "nhiễu" tất định làm các lần gọi lặp lại khác nhau, để lần tốt nhất, trung vị
# và trung bình của các lần đo lặp lại là ba con số khác nhau (mô hình nằm trong docstring của `lab1_device.py`). Ở đó
# cùng một đoạn code luôn cho cùng thời gian, và các bài kiểm thử ẩn so sánh kết quả của bạn với lời giải tham chiếu trên
# cùng các thiết bị. Điều đó chỉ đúng khi bạn làm đúng quy trình trong docstring: tạo toán hạng trước, mỗi kích thước một
# lần khởi động không bấm giờ, `device.clock()` quanh từng lần gọi `device.matmul`, các vòng xen kẽ các batch, trung vị
# cho phép quét, lần tốt nhất cho mức đỉnh, và không đổi thiết lập luồng của torch (`flops.py` không bao giờ gọi
# `torch.set_num_threads`: thiết bị mô phỏng báo `ThreadSettingError` nếu có).

# %%
SIMULATED = {"kind": "simulated", "seed": 0}  # lab1_device.SIMULATED gives the other settings
simulated = flops.measure_matmul_throughput(batch_sizes=batches, d_in=256, d_out=256, repeats=9, device=SIMULATED)
again = flops.measure_matmul_throughput(batch_sizes=batches, d_in=256, d_out=256, repeats=9, device=SIMULATED)
same = simulated["seconds"] == again["seconds"]
print(tr("same times on a second run: {same}").format(same=tr("yes") if same else tr("no")))

plt.figure(figsize=(6, 3))
plt.plot(sweep["batch_sizes"], sweep["utilization"], "o-", label=tr("this CPU (measured)"))
plt.plot(simulated["batch_sizes"], simulated["utilization"], "s--", label=tr("simulated device"))
plt.xscale("log", base=2)
plt.ylim(0, 1.1)
plt.xlabel(tr("batch size b  (X is b x 256, W is 256 x 256)"))
plt.ylabel(tr("utilization (fraction of peak)"))
plt.title(tr("One linear layer"))
plt.legend()
plt.tight_layout()
show()

# %%
grader.check("throughput")

# %% [markdown] tags=["en"]
# ## 6. The iron law and MFU (section 2)
#
# `iron_law_time_s` is the law itself, in its general form $D/BW + O/(R_\text{peak}\,\eta) + \text{latency}$.
# **Model FLOPs utilization** (MFU) is the useful rate ($6 \cdot P$ FLOPs per token) over the peak rate.
# The chapter's example: a 7B model, 1024 tokens per step, 1.2 s per step on one A100 (312 TFLOP/s): MFU 0.115.
# Production runs reach 30 to 50%.

# %% [markdown] tags=["vi"]
# ## 6. Định luật sắt và MFU (mục 2)
#
# `iron_law_time_s` chính là định luật, ở dạng tổng quát $D/BW + O/(R_\text{peak}\,\eta) + \text{latency}$.
# **Mức sử dụng FLOP của mô hình** (model FLOPs utilization, MFU) là tốc độ hữu ích ($6 \cdot P$ FLOP cho mỗi token) chia
# cho thông lượng đỉnh. Ví dụ của chương: một mô hình 7B, 1024 token mỗi bước, 1,2 s mỗi bước trên một A100 (312 TFLOP/s):
# MFU 0,115. Các lần chạy thực tế trong sản xuất đạt 30 đến 50%.

# %%
mfu = costs.model_flops_utilization(n_params=7e9, tokens_per_step=1024, step_time_s=1.2,
                                    peak_flop_per_s=312e12, n_devices=1)
print(tr("MFU of the 7B example: {mfu}").format(mfu=num(mfu, 3)))

O = costs.training_flops(n_params=70e9, n_tokens=2e12)  # Llama 2 70B
print(tr("Llama 2 70B: {count} FLOPs").format(count=num(O, ".2e")))
etas = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
days = [costs.iron_law_time_s(flops=O, peak_flop_per_s=1024 * 989e12, efficiency=e) / 86400 for e in etas]
plt.figure(figsize=(6, 3))
plt.plot(etas, days, "o-")
plt.xlabel("MFU")
plt.ylabel(tr("days on 1024 H100"))
plt.title(tr("Training time of Llama 2 70B by the iron law"))
plt.tight_layout()
show()

# %%
grader.check("iron_law_mfu")

# %% [markdown] tags=["en"]
# ## 7. Rent or buy? (section 7)
#
# Llama 2 70B takes $6 \times 70\text{e}9 \times 2\text{e}12 = 8.4\text{e}23$ FLOPs. On 1024 H100s at MFU 0.5 that is
# 19.2 days, or 471,857 GPU-hours: about \$1.42M to rent at \$3 per GPU-hour, against \$30.72M to buy the GPUs.
# Buying pays off only after 21.7 such runs.
#
# Reality check: the Llama 2 paper reports 1,720,320 A100 GPU-hours for 70B. `implied_mfu` says what MFU that
# means.

# %% [markdown] tags=["vi"]
# ## 7. Thuê hay mua cụm? (mục 7)
#
# Llama 2 70B cần $6 \times 70\text{e}9 \times 2\text{e}12 = 8{,}4\text{e}23$ FLOP. Trên 1024 GPU H100 với MFU 0,5, việc đó
# mất 19,2 ngày, tức 471.857 giờ-GPU: khoảng 1,42 triệu USD nếu thuê với giá 3 USD mỗi giờ-GPU, so với 30,72 triệu USD để
# mua số GPU đó. Mua chỉ có lợi sau 21,7 lần chạy như vậy.
#
# Đối chiếu với thực tế: bài báo Llama 2 báo cáo 1.720.320 giờ-GPU A100 cho bản 70B. `implied_mfu` cho biết con số đó
# tương ứng với MFU bao nhiêu.

# %%
run = costs.rent_vs_buy(n_params=70e9, n_tokens=2e12, n_gpus=1024, peak_flop_per_s=989e12, mfu=0.5,
                       rent_per_gpu_hour=3.0, gpu_price=30_000.0)
for name, value in run.items():
    print(f"{name:>15}: {num(value, ',.4g')}")
implied = costs.implied_mfu(n_params=70e9, n_tokens=2e12, gpu_hours=1_720_320, peak_flop_per_s=312e12)
print(tr("implied MFU of the Llama 2 70B run: {mfu}").format(mfu=num(implied, 3)))

runs = list(range(0, 41))
plt.figure(figsize=(6, 3))
plt.plot(runs, [n * run["rent_cost"] / 1e6 for n in runs], label=tr("rent"))
plt.plot(runs, [run["buy_cost"] / 1e6 for n in runs], label=tr("buy (GPUs only)"))
plt.axvline(run["breakeven_runs"], color="gray", ls="--", lw=1)
plt.xlabel(tr("number of training runs"))
plt.ylabel(tr("cumulative cost ($M)"))
plt.title(tr("Llama 2 70B on 1024 H100"))
plt.legend()
plt.tight_layout()
show()

# %% [markdown] tags=["en"]
# ## 8. The energy bill (section 7)
#
# Energy is GPUs $\times$ hours $\times$ watts, plus the host machines, times the facility's PUE. The chapter's case:
# a 7B model on $10^{12}$ tokens, 1024 A100s at MFU 0.5 take 73.0 h; 1024 GPUs at 400 W and 128 hosts at 200 W draw
# 435.2 kW, for 31,784 kWh. Doubling the utilization halves the time, and so the energy.

# %% [markdown] tags=["vi"]
# ## 8. Hoá đơn năng lượng (mục 7)
#
# Năng lượng bằng số GPU $\times$ số giờ $\times$ công suất (W), cộng thêm các máy chủ (host), rồi nhân với hệ số PUE của
# trung tâm dữ liệu. Trường hợp của chương: một mô hình 7B trên $10^{12}$ token, 1024 A100 với MFU 0,5 mất 73,0 h;
# 1024 GPU ở 400 W và 128 máy chủ ở 200 W tiêu thụ 435,2 kW, tổng cộng 31.784 kWh. Tăng gấp đôi mức sử dụng thì thời
# gian giảm một nửa, và năng lượng cũng vậy.

# %%
case = dict(n_params=7e9, n_tokens=1e12, n_gpus=1024, peak_flop_per_s=312e12, gpu_watts=400.0,
            n_hosts=128, host_watts=200.0, pue=1.0)
for mfu in (0.3, 0.5, 0.6):
    e = costs.training_energy(**case, mfu=mfu)
    print(f"MFU {num(mfu, 1)}: {num(e['hours'], '6.1f')} h, {num(e['power_kw'], 1)} kW, "
          f"{num(e['energy_kwh'], '9,.0f')} kWh")

# %%
mfus = [0.2, 0.3, 0.4, 0.5, 0.6]
plt.figure(figsize=(6, 3))
plt.plot(mfus, [costs.training_energy(**case, mfu=m)["energy_kwh"] / 1e3 for m in mfus], "o-")
plt.xlabel("MFU")
plt.ylabel(tr("energy (MWh)"))
plt.title(tr("7B on 1e12 tokens, 1024 A100 + 128 hosts"))
plt.tight_layout()
show()

# %%
grader.check("rent_and_energy")

# %% [markdown] tags=["en"]
# ## 9. Your recommendation (marked by hand, 2 points)
#
# A university lab trains one 70B-class model a year and otherwise fine-tunes small models. Should it rent or buy
# 1024 H100s? Answer in the cell below, in three to five sentences: argue from your own numbers (the break-even
# number of runs, the implied MFU of the reality check, the energy bill), and name one cost that `rent_vs_buy`
# leaves out and which way it moves the answer. No test checks this cell: a TA reads it, so keep it in this
# notebook (`autograder submit lab1` puts the notebook in your zip).

# %% [markdown] tags=["vi"]
# ## 9. Khuyến nghị của bạn (chấm tay, 2 điểm)
#
# Một phòng thí nghiệm ở trường đại học huấn luyện mỗi năm một mô hình cỡ 70B, còn lại chỉ tinh chỉnh (fine-tune) các
# mô hình nhỏ. Phòng nên thuê hay mua 1024 GPU H100? Trả lời trong ô bên dưới, từ ba đến năm câu: lập luận bằng chính
# các con số của bạn (số lần chạy hoà vốn, MFU suy ra từ phần đối chiếu thực tế, hoá đơn năng lượng), và nêu một chi
# phí mà `rent_vs_buy` bỏ qua cùng với việc nó đẩy câu trả lời về phía nào. Không bài kiểm thử nào chấm ô này: trợ
# giảng sẽ đọc nó, nên hãy giữ nó trong sổ tay này (`autograder submit lab1` đưa sổ tay vào tệp zip của bạn).

# %% [markdown] tags=["en", "answer:rent_or_buy_memo"]
# *Your answer here.*

# %% [markdown] tags=["vi", "answer:rent_or_buy_memo"]
# *Câu trả lời của bạn ở đây.*

# %% [markdown] tags=["en"]
# ## How to check and submit
#
# Run the public tests on your files from a terminal, in the lab bundle's root folder:
#
# ```
# autograder check lab1
# ```
#
# They compare a few of your results with stored answers. At grading, **hidden tests** run as well: on other shapes
# and inputs, against the reference solution, against PyTorch's `FlopCounterMode`, and on other simulated devices.
#
# In this notebook, the `grader.check("...")` cells run the same public tests one question at a time; `grader.check_all()` runs them all.
#
# Build the zip to upload with
#
# ```
# autograder submit lab1
# ```
#
# It holds `flops.py` and `costs.py` (with their hashes), nothing else.

# %% [markdown] tags=["vi"]
# ## Cách kiểm tra và nộp bài
#
# Chạy các bài kiểm thử công khai trên các tệp của bạn từ terminal, trong thư mục gốc của bộ bài lab:
#
# ```
# autograder check lab1
# ```
#
# Chúng so sánh một vài kết quả của bạn với đáp án đã lưu. Khi chấm điểm, các **bài kiểm thử ẩn** cũng được chạy: trên
# các kích thước và đầu vào khác, so với lời giải tham chiếu, so với `FlopCounterMode` của PyTorch, và trên các thiết bị
# mô phỏng khác.
#
# Trong sổ tay này, các ô `grader.check("...")` chạy cùng các bài kiểm thử công khai đó, từng câu hỏi một;
# `grader.check_all()` chạy tất cả.
#
# Tạo tệp zip để nộp bằng
#
# ```
# autograder submit lab1
# ```
#
# Tệp zip chứa `flops.py` và `costs.py` (kèm mã băm của chúng), không gì khác.
