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
# *Machine Learning Systems*, Volume I, Chapter 8 ("Model Training"): §2 Iron Law of Training Performance,
# §3 Mathematical Foundations, §4.4.2 Batch size and parameter updates, §5 Identifying Bottlenecks,
# §6.3 Mixed-precision training and §7.4 When to scale: The physical ceiling. Each part below names the section
# it follows; where the lab adds something the chapter does not say, or the chapter's own numbers disagree, the
# text says so.
#
# How long does training take? The chapter's answer is the **iron law of training performance**
# (§2 Iron Law of Training Performance):
#
# $$T_\text{train} = \frac{O}{R_\text{peak} \cdot \eta}$$
#
# where $O$ is the number of floating-point operations (FLOPs), $R_\text{peak}$ the peak rate of the hardware
# (FLOP/s) and $\eta$ the fraction of that peak you actually reach. In this lab you
#
# 1. count $O$ for a GPT-2 layer, matmul by matmul, then **everything else**, then the backward pass;
# 2. check your counts against PyTorch's own FLOP counter;
# 3. count the bytes each operation moves, and see on the roofline which operations can reach the peak at all;
# 4. measure $\eta$ on this CPU (and on a simulated device, as the grader does), for matmuls of growing batch size;
# 5. turn the law into calculators: training time, MFU, what mixed precision really buys, the rent-or-buy decision
#    and the energy bill.
#
# You write the functions in `flops.py` and `costs.py` (this folder). Each one raises `NotImplementedError` until
# you do; its docstring says exactly what to compute, with which conventions. Run the cells below as you go.
# The whole notebook runs in well under a minute on a laptop CPU.

# %% [markdown] tags=["vi"]
# # Lab 1: định luật sắt
#
# *Machine Learning Systems*, Tập I, Chương 8 ("Huấn luyện mô hình", *Model Training*):
# §2 Định luật sắt của hiệu năng huấn luyện (Iron Law of Training Performance),
# §3 Nền tảng toán học (Mathematical Foundations),
# §4.4.2 Kích thước batch và cập nhật tham số (Batch size and parameter updates),
# §5 Xác định điểm nghẽn (Identifying Bottlenecks),
# §6.3 Huấn luyện với độ chính xác hỗn hợp (Mixed-precision training) và
# §7.4 Khi nào cần mở rộng: giới hạn vật lý (When to scale: The physical ceiling). Mỗi phần bên dưới nêu mục của
# chương mà nó theo; chỗ nào bài lab thêm điều chương không nói, hoặc chính các con số của chương không khớp nhau, văn
# bản sẽ nói rõ.
#
# Huấn luyện mất bao lâu? Câu trả lời của chương là **định luật sắt của hiệu năng huấn luyện**
# (§2 Định luật sắt của hiệu năng huấn luyện (Iron Law of Training Performance)):
#
# $$T_\text{train} = \frac{O}{R_\text{peak} \cdot \eta}$$
#
# trong đó $O$ là số phép toán dấu phẩy động (FLOP), $R_\text{peak}$ là thông lượng đỉnh của phần cứng
# (FLOP/s) và $\eta$ là tỉ lệ của mức đỉnh đó mà bạn thực sự đạt được. Trong bài lab này, bạn sẽ
#
# 1. đếm $O$ cho một lớp GPT-2: lần lượt từng phép nhân ma trận (matmul), rồi **mọi phần còn lại**, rồi đến lượt ngược;
# 2. đối chiếu số đếm của mình với bộ đếm FLOP của chính PyTorch;
# 3. đếm số byte mỗi phép toán di chuyển, và xem trên roofline phép toán nào có thể đạt tới mức đỉnh;
# 4. đo $\eta$ trên CPU này (và trên một thiết bị mô phỏng, như bộ chấm), với các phép nhân ma trận có kích thước batch tăng dần;
# 5. biến định luật thành các công cụ tính: thời gian huấn luyện, MFU, điều độ chính xác hỗn hợp thực sự mang lại,
#    quyết định thuê hay mua cụm và hoá đơn năng lượng.
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

# tr: Time one CPU core, as the grader does: several threads waiting for each other make timings jump on a busy machine. This must happen before torch is first imported (restart the kernel if it already was).
os.environ.setdefault("OMP_NUM_THREADS", "1")

import matplotlib.pyplot as plt
import torch

import costs
import flops
from autograder.grading.notebook_text import num, show, tr  # tr: what the cells print and plot, in the notebook's language

XL = dict(B=32, S=1024, d=1600, h=25)  # tr: GPT-2 XL: d_model 1600, 25 heads; 32 sequences of 1024 tokens
SMALL = dict(B=4, S=256, d=768, h=12)  # tr: GPT-2 small

# %% [markdown] tags=["en"]
# ## 1. Count the matmuls of one layer (§3.1.2 Matrix operations)
#
# A product $(m, k) @ (k, n)$ computes $m \cdot n$ dot products of length $k$: $k$ multiplies and $k$ adds each,
# so **$2mkn$ FLOPs**. A GPT-2 layer has five groups of matmuls: the Q, K, V projections, the attention scores
# $QK^T$, attention $\times V$, the output projection and the two MLP matmuls. Attention counts the full
# $S \times S$ score matrix: the causal mask hides half of it, but the hardware computes it anyway.
#
# Write `matmul_flops` and `layer_matmul_flops`. For GPT-2 XL at $B = 32$, $S = 1024$ your counts should be
# 503.3 / 107.4 / 107.4 / 167.8 / 1342.2 GFLOP, 2228.0 in all. The chapter's callout "GPT-2 attention layer
# computation" works the same formulas and prints them rounded: about 503, 107 (215 for the pair of attention
# matmuls) and 168 billion FLOPs, the MLP as the formula $16 \cdot B \cdot S \cdot d^2$, about 2,228 GFLOP per layer.

# %% [markdown] tags=["vi"]
# ## 1. Đếm các phép nhân ma trận của một lớp (§3.1.2 Phép toán ma trận (Matrix operations))
#
# Tích $(m, k) @ (k, n)$ tính $m \cdot n$ tích vô hướng có độ dài $k$, mỗi tích gồm $k$ phép nhân và $k$ phép cộng,
# nên tốn **$2mkn$ FLOP**. Một lớp GPT-2 có năm nhóm phép nhân ma trận: các phép chiếu Q, K, V, điểm attention
# $QK^T$, attention $\times V$, phép chiếu đầu ra và hai phép nhân ma trận của MLP. Phần attention được đếm với toàn bộ
# ma trận điểm attention $S \times S$: mặt nạ nhân quả (causal mask) che đi một nửa, nhưng phần cứng vẫn tính cả ma trận.
#
# Hãy viết `matmul_flops` và `layer_matmul_flops`. Với GPT-2 XL ở $B = 32$, $S = 1024$, số đếm của bạn phải là
# 503,3 / 107,4 / 107,4 / 167,8 / 1342,2 GFLOP, tổng cộng 2228,0. Khung "GPT-2 attention layer computation" của chương
# dùng đúng các công thức này và in ra số đã làm tròn: khoảng 503, 107 (215 cho cặp phép nhân ma trận của attention) và
# 168 tỉ FLOP, phần MLP dưới dạng công thức $16 \cdot B \cdot S \cdot d^2$, khoảng 2.228 GFLOP cho mỗi lớp.

# %%
with skip_if_unwritten():
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
# ### Predict before you read on: the matmul share
#
# Part 2 counts everything else a layer does: softmax, LayerNorm, GELU, the residual adds, the biases. Before you
# count, guess: **what share of the FLOPs of one GPT-2 XL layer ($B = 32$, $S = 1024$) are matmuls?** A number in
# percent, from 0 to 100. Write it in place of `None` and run the cell. Your first answer is kept with its time in
# `predictions.json`; once the measurement has run, a change is recorded as a change and the prediction stays. Nothing
# here is graded for being right.

# %% [markdown] tags=["vi"]
# ### Dự đoán trước khi đọc tiếp: tỉ trọng của phép nhân ma trận
#
# Phần 2 đếm mọi việc khác mà một lớp làm: softmax, LayerNorm, GELU, các phép cộng phần dư, các bias. Trước khi đếm,
# hãy đoán: **phép nhân ma trận chiếm bao nhiêu phần trăm số FLOP của một lớp GPT-2 XL ($B = 32$, $S = 1024$)?** Một số
# tính bằng phần trăm, từ 0 đến 100. Viết nó thay cho `None` rồi chạy ô. Câu trả lời đầu tiên của bạn được giữ lại cùng
# thời điểm trong `predictions.json`; khi phép đo đã chạy, mỗi lần sửa được ghi lại là một lần sửa và dự đoán vẫn giữ
# nguyên. Không có gì ở đây được chấm theo đúng hay sai.

# %%
guess = None  # tr: your prediction, in %, from 0 to 100, in place of None
predict("matmul_share", guess)

# %% [markdown] tags=["en"]
# ## 2. Count to the end (§3.1.3 Matrix-vector and batched operations, §3.1.4 Activation functions)
#
# Matmuls are not the only work. Softmax, LayerNorm, GELU, the residual adds and the biases all cost FLOPs too.
# `elementwise_flops` counts them with the per-element costs fixed in `flops.py` (`SOFTMAX_FLOPS_PER_SCORE` and
# friends). `matmul_fraction` then says what share of the layer is matmuls. The chapter says only that matrix
# multiplications dominate training compute (§3.1.3 Matrix-vector and batched operations) and gives no share:
# **you measure it**. With the lab's per-element costs it comes out above 98% for GPT-2 XL (the 98% is the lab's
# threshold, not the chapter's).
#
# The only non-matmul term that grows like the attention matmuls is the softmax: both scale with $S^2$.
# The plot shows how the matmul share changes with the sequence length.

# %% [markdown] tags=["vi"]
# ## 2. Đếm đến cùng (§3.1.3 Phép toán ma trận–vectơ và theo batch (Matrix-vector and batched operations), §3.1.4 Hàm kích hoạt (Activation functions))
#
# Phép nhân ma trận không phải là toàn bộ công việc. Softmax, LayerNorm, GELU, các phép cộng phần dư (residual) và các
# bias cũng tốn FLOP. `elementwise_flops` đếm chúng theo chi phí trên mỗi phần tử đã được cố định trong `flops.py`
# (`SOFTMAX_FLOPS_PER_SCORE` và các hằng số cùng loại). Sau đó `matmul_fraction` cho biết phép nhân ma trận chiếm bao
# nhiêu phần của lớp. Chương chỉ nói rằng phép nhân ma trận chiếm phần lớn khối lượng tính toán của huấn luyện
# (§3.1.3 Phép toán ma trận–vectơ và theo batch (Matrix-vector and batched operations)) và không đưa ra tỉ lệ nào:
# **bạn tự đo tỉ lệ đó**. Với chi phí trên mỗi phần tử của bài lab, tỉ lệ này vượt 98% với GPT-2 XL (ngưỡng 98% là của
# bài lab, không phải của chương).
#
# Trong các số hạng không phải phép nhân ma trận, chỉ có softmax tăng giống các phép nhân ma trận của attention: cả hai
# tỉ lệ với $S^2$. Biểu đồ cho thấy tỉ trọng của phép nhân ma trận thay đổi thế nào theo độ dài chuỗi.

# %%
share = attempt(flops.matmul_fraction, **XL)  # tr: None while matmul_fraction is not written
reveal("matmul_share", 100 * share if share is not None else None)

with skip_if_unwritten():
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

# %% [markdown] tags=["en"]
# **Reflect** (one line, marked by hand with the other reflections): was your guess above or below the share you counted, and which non-matmul term would have to grow to change it?

# %% [markdown] tags=["vi"]
# **Suy ngẫm** (một dòng, chấm tay cùng các suy ngẫm khác): dự đoán của bạn cao hơn hay thấp hơn tỉ trọng bạn đếm được, và số hạng nào không phải phép nhân ma trận phải tăng lên thì tỉ trọng đó mới thay đổi?

# %% [markdown] tags=["en", "answer:reflections/matmul_share"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/matmul_share"]
# *Một dòng ở đây.*

# %%
grader.check("count_to_the_end")

# %% [markdown] tags=["en"]
# ### Predict before you read on: the cost of a training step
#
# Part 3 adds the backward pass. Guess first: **a training step (forward plus backward) costs how many times the
# FLOPs of the forward pass?** A number from 1 to 10 (the unit is "times", x).

# %% [markdown] tags=["vi"]
# ### Dự đoán trước khi đọc tiếp: chi phí của một bước huấn luyện
#
# Phần 3 thêm lượt ngược. Hãy đoán trước: **một bước huấn luyện (lượt xuôi cộng lượt ngược) tốn gấp bao nhiêu lần số
# FLOP của lượt xuôi?** Một số từ 1 đến 10 (đơn vị là "lần", x).

# %%
guess = None  # tr: your prediction, from 1 to 10 (times the forward pass), in place of None
predict("step_multiple", guess)

# %% [markdown] tags=["en"]
# ## 3. Forward plus backward (§1 Training Systems Fundamentals, §3.1.2 Matrix operations)
#
# The backward pass of $Y = A W$ needs two products as big as the forward one: $dA = dY\,W^T$ for the layer below and
# $dW = A^T dY$ for the weight. So backward is about $2\times$ forward (the chapter says so in
# §1 Training Systems Fundamentals), and a training step $3\times$ forward. For GPT-2 XL (48 layers) a step is
# $48 \times 3 \times 2228$ GFLOP $= 320.8$ TFLOP, the chapter's figure.
#
# The chapter also charges 6 FLOPs per parameter per token, $6 \cdot P \cdot \text{tokens}$ (`costs.training_flops`;
# §4.4.2 Batch size and parameter updates, "The utility bill", the one place it prints the factor). For the same step it
# gives 294.9 TFLOP. The chapter never compares the two counts: that comparison is this lab's. Where does the gap
# come from? `step_flops` also returns the part due to the attention products, which multiply two activations, have
# no parameters, and so are invisible to a rule based on $P$.

# %% [markdown] tags=["vi"]
# ## 3. Lượt xuôi cộng lượt ngược (§1 Nền tảng hệ thống huấn luyện (Training Systems Fundamentals), §3.1.2 Phép toán ma trận (Matrix operations))
#
# Lượt ngược của $Y = A W$ cần hai tích lớn bằng tích ở lượt xuôi: $dA = dY\,W^T$ cho lớp bên dưới và $dW = A^T dY$
# cho trọng số. Vì vậy lượt ngược tốn khoảng $2\times$ lượt xuôi (chương nói vậy ở
# §1 Nền tảng hệ thống huấn luyện (Training Systems Fundamentals)), và một bước huấn luyện tốn $3\times$ lượt xuôi.
# Với GPT-2 XL (48 lớp), một bước là $48 \times 3 \times 2228$ GFLOP $= 320{,}8$ TFLOP, đúng con số của chương.
#
# Chương cũng tính 6 FLOP cho mỗi tham số trên mỗi token, $6 \cdot P \cdot \text{tokens}$ (`costs.training_flops`;
# §4.4.2 Kích thước batch và cập nhật tham số (Batch size and parameter updates), khung "The utility bill", nơi duy
# nhất chương in hệ số này). Với cùng bước đó, quy tắc này cho 294,9 TFLOP. Chương không hề so
# sánh hai cách đếm: phép so sánh này là của bài lab. Chênh lệch từ đâu mà có? `step_flops` cũng trả về phần do các
# tích attention gây ra: các tích này nhân hai giá trị kích hoạt với nhau, không có tham số, nên một quy tắc dựa trên
# $P$ không thấy được chúng.

# %%
step = attempt(flops.step_flops, **XL, n_layers=48)  # tr: None while step_flops is not written
reveal("step_multiple", step["total"] / step["forward"] if step is not None else None)

with skip_if_unwritten():
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

# %% [markdown] tags=["en"]
# **Reflect** (one line, marked by hand with the other reflections): how far was your guess from the step you counted, and where does the backward pass's extra work come from?

# %% [markdown] tags=["vi"]
# **Suy ngẫm** (một dòng, chấm tay cùng các suy ngẫm khác): dự đoán của bạn cách bước bạn đếm được bao xa, và phần việc thêm của lượt ngược đến từ đâu?

# %% [markdown] tags=["en", "answer:reflections/step_multiple"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/step_multiple"]
# *Một dòng ở đây.*

# %%
grader.check("forward_backward")

# %% [markdown] tags=["en"]
# ## 4. Check your counts against PyTorch (the lab's ground truth for §3.1.2 Matrix operations)
#
# `torch.utils.flop_counter.FlopCounterMode` counts the FLOPs of every matmul PyTorch runs (2 per
# multiply-accumulate, biases not included). Here it runs on a small real block. Attention is written as explicit
# matmuls: on a CPU the counter counts **zero** for `F.scaled_dot_product_attention`.
# The hidden tests run this kind of check, on other shapes, for every matmul and for the backward pass.

# %% [markdown] tags=["vi"]
# ## 4. Đối chiếu số đếm của bạn với PyTorch (căn cứ đối chiếu của bài lab cho §3.1.2 Phép toán ma trận (Matrix operations))
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


def block(x):  # tr: x: (B, S, d)
    q, k, v = qkv(ln_1(x)).split(d, dim=-1)
    q, k, v = (t.view(B, S, h, d // h).transpose(1, 2) for t in (q, k, v))  # tr: (B, h, S, d_head)
    att = (q @ k.transpose(-2, -1) / math.sqrt(d // h)).softmax(-1)  # tr: (B, h, S, S)
    x = x + out_proj((att @ v).transpose(1, 2).reshape(B, S, d))
    return x + mlp(ln_2(x))


x = torch.randn(B, S, d, requires_grad=True)
with FlopCounterMode(display=False) as counter:
    y = block(x)
forward = counter.get_total_flops()
with FlopCounterMode(display=False) as counter:
    y.sum().backward()
backward = counter.get_total_flops()
with skip_if_unwritten():
    mine = flops.layer_matmul_flops(B=B, S=S, d=d, h=h)["total"], flops.layer_backward_flops(B=B, S=S, d=d, h=h)["total"]
    print(tr("forward pass: torch {counted}, yours {mine}").format(counted=num(forward), mine=num(mine[0])))
    print(tr("backward pass: torch {counted}, yours {mine}").format(counted=num(backward), mine=num(mine[1])))

# %% [markdown] tags=["en"]
# ## 5. Arithmetic intensity and the roofline (§3.4 Arithmetic intensity)
#
# FLOPs are half of the story: every operand has to come from main memory, which is much slower than the arithmetic.
# The **arithmetic intensity** of an operation is its FLOPs over the bytes it moves, in FLOP/byte. An accelerator's
# **ridge point** is its peak FLOP rate over its memory bandwidth. An operation below the ridge is **memory-bound**
# (the arithmetic units wait for data), one above it **compute-bound**; the rate it can reach is the lower of the two
# roofs, $\min(R_\text{peak},\ \text{intensity} \times \text{bandwidth})$.
#
# Write `matmul_intensity`, `elementwise_intensity`, `attention_scores_intensity`, `ridge_point` and `roofline`. Their
# docstrings fix what counts: every tensor read once and written once, bytes from the dtype's size, and the
# hardware in decimal units as datasheets print it (1 GB/s = $10^9$ bytes/s). Three checks against the chapter:
#
# - **The A100's ridge point.** 312 TFLOP/s (FP16/BF16 Tensor Cores) over 2,039 GB/s is about 153 FLOP/byte: the
#   figure and the prose of §3.4 Arithmetic intensity (the figure rounds the bandwidth to 2.04 TB/s: 153 too). The
#   section's footnote rounds the bandwidth to "roughly 2 TB/s" and gets "near 156" (and 78 for TF32's 156 TFLOP/s).
#   Same A100, two roundings of its bandwidth; every operation below lands in the same regime with either.
# - **Materialised attention.** For one head, $QK^T$ costs $2 S^2 d_\text{head}$ FLOPs, and the chapter counts the
#   $S \times S$ FP16 score matrix written once and read back once for the softmax, $4 S^2$ bytes: the intensity is
#   $d_\text{head}/2 = 32$ FLOP/byte for GPT-2 small, whatever $S$ is, well below the ridge. (Reading $Q$ and $K$
#   would add $4 S d_\text{head}$ bytes; the chapter leaves them out, and at $S = 1024$ they would lower 32 to about 30.)
# - **Element-wise operations.** The chapter's table gives 0.5 FLOP/byte for activation functions in FP16, about 10
#   for LayerNorm and about 5 for the attention softmax, and §3.1.4 Activation functions says one to three FLOPs per
#   byte; it does not say how it counted them. With the lab's per-element costs and one read and one write per
#   element, the tanh GELU is $9/4 = 2.25$ FLOP/byte in FP16, LayerNorm 1.75, a residual add 0.17. The numbers
#   differ; the verdict does not: all are far below the ridge.
#
# **Batch 1 against batch 32.** §3.4 Arithmetic intensity says that at batch 1 many operations are memory-bound and at
# batch 32 or more most matrix operations are compute-bound. What decides is the number of **rows** of the product
# (tokens, $B \times S$). One row through GPT-2 small's MLP, $(1, 768) @ (768, 3072)$, is a matrix-vector product at
# about 1 FLOP/byte in FP16: memory-bound on any accelerator. In FP32 on the A100's CUDA cores (19.5 TFLOP/s, ridge
# about 9.6) 32 rows are already compute-bound, as the chapter says; in FP16 on its Tensor Cores (ridge 153) 32 rows
# give about 30 FLOP/byte, still memory-bound, and it takes about 200 rows. The running example's 32 sequences of 1024
# tokens are 32,768 rows, far above the ridge. The next cell finds the crossing.

# %% [markdown] tags=["vi"]
# ## 5. Cường độ số học và roofline (§3.4 Cường độ số học (Arithmetic intensity))
#
# FLOP mới chỉ là một nửa câu chuyện: mọi toán hạng đều phải đến từ bộ nhớ chính, vốn chậm hơn nhiều so với phần tính
# toán. **Cường độ số học** (arithmetic intensity) của một phép toán là số FLOP của nó chia cho số byte nó di chuyển, đơn
# vị FLOP/byte. **Điểm gãy** (ridge point) của một bộ tăng tốc là thông lượng FLOP đỉnh chia cho băng thông bộ nhớ. Phép
# toán nằm dưới điểm gãy là **bị giới hạn bởi bộ nhớ** (memory-bound: các đơn vị tính toán phải chờ dữ liệu), nằm trên
# là **bị giới hạn bởi tính toán** (compute-bound); tốc độ nó đạt được là mái thấp hơn trong hai mái,
# $\min(R_\text{peak},\ \text{cường độ} \times \text{băng thông})$.
#
# Hãy viết `matmul_intensity`, `elementwise_intensity`, `attention_scores_intensity`, `ridge_point` và `roofline`.
# Docstring của chúng cố định những gì được đếm: mỗi tensor được đọc một lần và ghi một lần, số byte lấy từ kích thước
# của kiểu dữ liệu, và phần cứng tính theo đơn vị thập phân như trong bảng thông số (1 GB/s = $10^9$ byte/s). Ba điểm
# đối chiếu với chương:
#
# - **Điểm gãy của A100.** 312 TFLOP/s (Tensor Core FP16/BF16) chia cho 2.039 GB/s là khoảng 153 FLOP/byte: đúng như hình
#   và phần chữ của §3.4 Cường độ số học (Arithmetic intensity) (hình làm tròn băng thông thành 2,04 TB/s: cũng ra 153).
#   Chú thích cuối trang của mục này làm tròn băng thông thành "khoảng 2 TB/s" và được "gần 156" (và 78 với 156 TFLOP/s
#   của TF32). Cùng một A100, hai cách làm tròn băng thông; mọi phép toán bên dưới đều rơi vào cùng một vùng dù dùng
#   cách nào.
# - **Attention lưu ma trận điểm ra bộ nhớ.** Với một head, $QK^T$ tốn $2 S^2 d_\text{head}$ FLOP, và chương đếm ma trận
#   điểm FP16 $S \times S$ được ghi một lần rồi đọc lại một lần cho softmax, $4 S^2$ byte: cường độ là
#   $d_\text{head}/2 = 32$ FLOP/byte với GPT-2 small, bất kể $S$, thấp hơn hẳn điểm gãy. (Đọc $Q$ và $K$ sẽ thêm
#   $4 S d_\text{head}$ byte; chương bỏ qua phần này, và ở $S = 1024$ nó chỉ hạ 32 xuống khoảng 30.)
# - **Phép toán theo từng phần tử.** Bảng của chương ghi 0,5 FLOP/byte cho các hàm kích hoạt ở FP16, khoảng 10 cho
#   LayerNorm và khoảng 5 cho softmax của attention, còn §3.1.4 Hàm kích hoạt (Activation functions) nói từ một đến ba
#   FLOP mỗi byte; chương không nói đã đếm thế nào. Với chi phí trên mỗi phần tử của bài lab và một lần đọc, một lần ghi
#   cho mỗi phần tử, GELU dạng tanh là $9/4 = 2{,}25$ FLOP/byte ở FP16, LayerNorm 1,75, một phép cộng phần dư 0,17. Các con
#   số khác nhau; kết luận thì không: tất cả đều thấp hơn hẳn điểm gãy.
#
# **Batch 1 so với batch 32.** §3.4 Cường độ số học (Arithmetic intensity) nói rằng ở batch 1 nhiều phép toán bị giới
# hạn bởi bộ nhớ, còn ở batch từ 32 trở lên phần lớn các phép toán ma trận bị giới hạn bởi tính toán. Điều quyết định
# là số **hàng** của tích (số token, $B \times S$). Một hàng đi qua MLP của GPT-2 small, $(1, 768) @ (768, 3072)$, là
# một tích ma trận–vectơ, khoảng 1 FLOP/byte ở FP16: bị giới hạn bởi bộ nhớ trên mọi bộ tăng tốc. Ở FP32 trên các CUDA
# core của A100 (19,5 TFLOP/s, điểm gãy khoảng 9,6), 32 hàng đã bị giới hạn bởi tính toán, đúng như chương nói; ở FP16
# trên Tensor Core (điểm gãy 153), 32 hàng chỉ cho khoảng 30 FLOP/byte, vẫn bị giới hạn bởi bộ nhớ, và phải cần khoảng
# 200 hàng. 32 chuỗi 1024 token của ví dụ xuyên suốt là 32.768 hàng, cao hơn hẳn điểm gãy. Ô tiếp theo tìm điểm giao
# đó.

# %%
A100 = dict(peak_tflop_per_s=312.0, bandwidth_gb_per_s=2039.0)  # tr: FP16/BF16 Tensor Cores, HBM2e
REGIME = {"memory-bound": tr("memory-bound"), "compute-bound": tr("compute-bound")}
A100_FP32 = dict(peak_tflop_per_s=19.5, bandwidth_gb_per_s=2039.0)  # tr: the same A100's FP32 CUDA cores
with skip_if_unwritten():
    for label, hw in ((tr("A100, 312 TFLOP/s over 2,039 GB/s"), A100),
                      (tr("A100, the footnote's 2 TB/s"), dict(peak_tflop_per_s=312.0, bandwidth_gb_per_s=2000.0)),
                      (tr("A100 in TF32, 156 TFLOP/s over 2 TB/s"), dict(peak_tflop_per_s=156.0, bandwidth_gb_per_s=2000.0)),
                      (tr("A100's FP32 CUDA cores, 19.5 TFLOP/s"), A100_FP32)):
        print(tr("ridge point, {hw}: {ridge} FLOP/byte").format(hw=label, ridge=num(flops.ridge_point(**hw), 1)))

    xl_tokens = 32 * 1024  # tr: GPT-2 XL's running example: B = 32 sequences of S = 1024 tokens
    FP16 = 2  # tr: bytes per element
    d_xl, act = 1600, xl_tokens * 1600  # tr: GPT-2 XL: d_model, and the elements of one (B, S, d) activation
    ops = [
        (tr("tanh GELU, FP16"), flops.elementwise_intensity(
            n_elements=4 * act, flops_per_element=flops.GELU_FLOPS_PER_ELEMENT, n_inputs=1, bytes_per_element=FP16)),
        (tr("LayerNorm, FP16"), flops.elementwise_intensity(
            n_elements=act, flops_per_element=flops.LAYERNORM_FLOPS_PER_ELEMENT, n_inputs=1, bytes_per_element=FP16)),
        (tr("residual add, FP16"), flops.elementwise_intensity(
            n_elements=act, flops_per_element=flops.RESIDUAL_FLOPS_PER_ELEMENT, n_inputs=2, bytes_per_element=FP16)),
        (tr("attention scores, GPT-2 small, FP16"), flops.attention_scores_intensity(S=1024, d_head=64,
                                                                                    bytes_per_element=FP16)),
        (tr("GPT-2 small MLP, 1 row, FP16"), flops.matmul_intensity(m=1, k=768, n=3072, bytes_per_element=FP16)),
        (tr("GPT-2 small MLP, 32 rows, FP16"), flops.matmul_intensity(m=32, k=768, n=3072, bytes_per_element=FP16)),
        (tr("GPT-2 XL MLP, 32 x 1024 rows, FP16"), flops.matmul_intensity(m=xl_tokens, k=d_xl, n=4 * d_xl,
                                                                          bytes_per_element=FP16)),
    ]
    for label, op in ops:
        roof = flops.roofline(intensity=op["intensity"], **A100)
        print(tr("{op}: {ai} FLOP/byte, {regime} on an A100, at most {rate} TFLOP/s").format(
            op=label, ai=num(op["intensity"], 2), regime=REGIME[roof["regime"]],
            rate=num(roof["attainable_flop_per_s"] / 1e12, 1)))

    for label, hw, size in ((tr("FP16 on the Tensor Cores"), A100, FP16), (tr("FP32 on the CUDA cores"), A100_FP32, 4)):
        rows = next(m for m in range(1, 4097) if flops.roofline(
            intensity=flops.matmul_intensity(m=m, k=768, n=3072, bytes_per_element=size)["intensity"], **hw)["regime"]
            == "compute-bound")
        print(tr("GPT-2 small's MLP, {hw} of an A100: compute-bound from {rows} rows").format(hw=label, rows=num(rows)))

    xs = [10 ** (i / 20) for i in range(-30, 71)]  # tr: 0.03 to 3,162 FLOP/byte
    plt.figure(figsize=(6, 3.5))
    plt.plot(xs, [flops.roofline(intensity=x, **A100)["attainable_flop_per_s"] / 1e12 for x in xs], "k-",
             label=tr("A100 roofline (FP16/BF16)"))
    for (label, op), marker in zip(ops, "os^DvP*"):
        plt.plot(op["intensity"], flops.roofline(intensity=op["intensity"], **A100)["attainable_flop_per_s"] / 1e12,
                 marker, label=label)
    plt.axvline(flops.ridge_point(**A100), color="gray", ls="--", lw=1)
    plt.xscale("log")
    plt.yscale("log")
    plt.xlabel(tr("arithmetic intensity (FLOP/byte)"))
    plt.ylabel(tr("attainable TFLOP/s"))
    plt.legend(fontsize=6, loc="lower right")
    plt.tight_layout()
show()

# %%
grader.check("roofline")

# %% [markdown] tags=["en"]
# ## 6. Measure utilization on this CPU (§3.2.1.2 Mini-batch processing, §3.4 Arithmetic intensity)
#
# Counting gives $O$; now measure $\eta$. `measure_peak_flop_per_s` times a large square matmul and keeps the
# best rate: our stand-in for $R_\text{peak}$. `measure_matmul_throughput` times one linear layer $X W$ with
# $X$ of shape $(b, d)$ for growing batch sizes $b$ and reports the FLOP rate and the utilization.
#
# Both functions do their work through a **device** from `lab1_device.py` (shipped with the lab): by default this CPU,
# where `device.matmul(X, W)` is `X @ W` and `device.clock()` is `time.perf_counter()`. Small batches spend most of
# their time on per-call overhead and on reading the weight matrix, so they reach a small fraction of peak;
# utilization rises with the batch and levels off: the roofline of part 5, seen from the other side. The chapter's
# numbers for accelerators (over 90% at batch 256 or more, 60 to 70% at 16 to 32: §3.2.1.2 Mini-batch processing) are
# not this CPU's; the trend is what to look for. This notebook runs PyTorch on one thread, as the grader does (see the
# cell that sets `OMP_NUM_THREADS`).

# %% [markdown] tags=["vi"]
# ## 6. Đo mức sử dụng trên CPU này (§3.2.1.2 Xử lý mini-batch (Mini-batch processing), §3.4 Cường độ số học (Arithmetic intensity))
#
# Phép đếm cho ta $O$; giờ hãy đo $\eta$. `measure_peak_flop_per_s` đo thời gian một phép nhân ma trận vuông lớn và giữ
# lại tốc độ tốt nhất: đó là giá trị chúng ta dùng thay cho $R_\text{peak}$. `measure_matmul_throughput` đo thời gian một
# lớp tuyến tính $X W$, với $X$ có dạng $(b, d)$, cho các kích thước batch $b$ tăng dần, và báo cáo tốc độ FLOP cùng mức sử dụng.
#
# Cả hai hàm làm mọi việc thông qua một **thiết bị** (device) của `lab1_device.py` (đi kèm bài lab): mặc định là CPU
# này, nơi `device.matmul(X, W)` là `X @ W` và `device.clock()` là `time.perf_counter()`. Batch nhỏ tốn phần lớn thời
# gian cho chi phí cố định của mỗi lần gọi và cho việc đọc ma trận trọng số, nên chỉ đạt một phần nhỏ của mức đỉnh; mức
# sử dụng tăng theo batch rồi chững lại: đó là roofline của phần 5, nhìn từ phía bên kia. Các con số của chương cho bộ
# tăng tốc (trên 90% ở batch từ 256, 60 đến 70% ở batch 16 đến 32: §3.2.1.2 Xử lý mini-batch (Mini-batch processing))
# không phải của CPU này; điều cần xem là xu hướng. Sổ tay này chạy PyTorch trên một luồng, giống như bộ chấm (xem ô
# code đặt `OMP_NUM_THREADS`).

# %% [markdown] tags=["en"]
# **Predict first.** On this CPU, **the utilization of a matmul at batch 1 is what percentage of its utilization at
# batch 64?** A number in percent, from 0 to 100 (100: batch 1 does as well as batch 64). The truth is your own
# measurement, in the cell after this one.

# %% [markdown] tags=["vi"]
# **Hãy dự đoán trước.** Trên CPU này, **mức sử dụng của một phép nhân ma trận ở batch 1 bằng bao nhiêu phần trăm mức sử
# dụng của nó ở batch 64?** Một số tính bằng phần trăm, từ 0 đến 100 (100: batch 1 đạt ngang batch 64). Giá trị đúng là
# chính phép đo của bạn, ở ô ngay sau ô này.

# %%
guess = None  # tr: your prediction, in %, from 0 to 100, in place of None
predict("batch1_utilization", guess)

# %%
torch.set_num_threads(1)  # tr: one core (see the cell that sets OMP_NUM_THREADS)
batches = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
sweep = None  # tr: stays None while the measuring functions are not written
with skip_if_unwritten():
    peak = flops.measure_peak_flop_per_s()
    print(tr("peak of a 512 x 512 matmul on one core: {rate} GFLOP/s").format(rate=num(peak / 1e9, 1)))
    sweep = flops.measure_matmul_throughput(batch_sizes=batches, d_in=256, d_out=256, repeats=9)
    for b, rate, u in zip(sweep["batch_sizes"], sweep["flop_per_s"], sweep["utilization"]):
        print(tr("batch {b}: {rate} GFLOP/s, utilization {u}").format(b=num(b, "4d"), rate=num(rate / 1e9, "6.1f"),
                                                                     u=num(u, 2)))
u = sweep["utilization"] if sweep is not None else None
reveal("batch1_utilization", 100 * u[batches.index(1)] / u[batches.index(64)] if u is not None else None)

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
SIMULATED = {"kind": "simulated", "seed": 0}  # tr: lab1_device.SIMULATED gives the other settings
with skip_if_unwritten():
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

# %% [markdown] tags=["en"]
# **Reflect** (one line, marked by hand with the other reflections): how did batch 1 compare with your guess, and what does a call at batch 1 spend its time on?

# %% [markdown] tags=["vi"]
# **Suy ngẫm** (một dòng, chấm tay cùng các suy ngẫm khác): batch 1 so với dự đoán của bạn thế nào, và một lần gọi ở batch 1 tốn thời gian vào việc gì?

# %% [markdown] tags=["en", "answer:reflections/batch1_utilization"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/batch1_utilization"]
# *Một dòng ở đây.*

# %%
grader.check("throughput")

# %% [markdown] tags=["en"]
# ### Break it on purpose: a timing that forgets the warm-up
#
# The first product of a shape pays a one-time cost: memory to allocate, a kernel to choose, caches to fill (on the
# simulated device, `warmup_s` of `lab1_device.SIMULATED`). A timing that starts with that product measures the set-up
# along with the work. Write the mistake yourself: `time_without_warmup` times `repeats` products from the very first
# one, and `time_with_warmup`, beside it, runs one untimed product first. Both return the list of their times. The
# grader checks each one by its symptom on simulated devices: the first time of the broken one includes the first-call
# cost and its other times do not; no time of the right one includes it. A "broken" function that warms up after all,
# or that is broken in another way, loses its points, as does a right one that forgets the warm-up.
#
# Warming up a timing is beyond the chapter: its only warm-up is the learning rate's
# (§3.2.3 Optimization algorithm system implications), and §5 Identifying Bottlenecks says to measure before
# optimizing, not how to time. The practice is PyTorch's own: its timer, `torch.utils.benchmark.Timer`, runs warm-up
# calls before it times, because parts of PyTorch are set up lazily on first use, and it reports the median of
# repeated runs (PyTorch documentation, "Benchmark Utils - torch.utils.benchmark").
#
# The cell below runs both on the simulated device, and once on this CPU (a shape not used before, so its first
# product is a true first call). Look at the first time, at the mean and at the median: which one does a forgotten
# warm-up move, and by how much?

# %% [markdown] tags=["vi"]
# ### Cố ý làm sai: bấm giờ mà quên khởi động
#
# Tích đầu tiên của một kích thước tốn một chi phí một lần: cấp phát bộ nhớ, chọn kernel, nạp bộ nhớ đệm (trên thiết bị
# mô phỏng là `warmup_s` của `lab1_device.SIMULATED`). Một phép bấm giờ bắt đầu bằng tích đó đo cả phần chuẩn bị lẫn
# phần việc. Hãy tự viết lỗi đó: `time_without_warmup` bấm giờ `repeats` tích ngay từ tích đầu tiên, còn
# `time_with_warmup`, bên cạnh nó, chạy trước một tích không bấm giờ. Cả hai trả về danh sách thời gian đo được. Bộ chấm
# kiểm tra mỗi hàm qua triệu chứng của nó trên các thiết bị mô phỏng: lần đo đầu tiên của hàm sai gồm cả chi phí của lần
# gọi đầu tiên, các lần đo khác thì không; không lần đo nào của hàm đúng gồm chi phí đó. Một hàm "sai" mà rốt cuộc vẫn
# khởi động, hoặc sai theo kiểu khác, mất điểm, và một hàm đúng mà quên khởi động cũng vậy.
#
# Khởi động trước khi bấm giờ nằm ngoài chương: khởi động duy nhất của chương là khởi động tốc độ học
# (§3.2.3 Hệ quả hệ thống của thuật toán tối ưu (Optimization algorithm system implications)), còn
# §5 Xác định điểm nghẽn (Identifying Bottlenecks) bảo hãy đo trước khi tối ưu, chứ không nói cách bấm giờ. Cách làm
# này là của chính PyTorch: bộ bấm giờ
# `torch.utils.benchmark.Timer` chạy vài lần khởi động trước khi bấm giờ, vì một số phần của PyTorch chỉ được khởi tạo
# khi dùng lần đầu, và báo trung vị của các lần chạy lặp lại (tài liệu PyTorch, "Benchmark Utils -
# torch.utils.benchmark").
#
# Ô bên dưới chạy cả hai hàm trên thiết bị mô phỏng, và một lần trên CPU này (một kích thước chưa dùng trước đó, nên tích
# đầu tiên của nó đúng là lần gọi đầu tiên). Hãy nhìn lần đo đầu tiên, giá trị trung bình và trung vị: lỗi quên khởi
# động làm dịch chuyển giá trị nào, và bao nhiêu?

# %%
import statistics

with skip_if_unwritten():
    broken = flops.time_without_warmup(rows=64, d_in=256, d_out=256, repeats=5, device=SIMULATED)
    right = flops.time_with_warmup(rows=64, d_in=256, d_out=256, repeats=5, device=SIMULATED)
    for i, (b, r) in enumerate(zip(broken, right), start=1):
        print(tr("timed product {i}: without warm-up {b} ms, with warm-up {r} ms").format(
            i=i, b=num(b * 1e3, "7.3f"), r=num(r * 1e3, "7.3f")))
    for label, f in ((tr("mean"), statistics.mean), (tr("median"), statistics.median)):
        print(tr("{stat}: without warm-up {b} ms, with warm-up {r} ms").format(
            stat=label, b=num(f(broken) * 1e3, ".3f"), r=num(f(right) * 1e3, ".3f")))

    cpu = flops.time_without_warmup(rows=96, d_in=200, d_out=300, repeats=5)
    print(tr("this CPU, a new shape: first product {first} ms, median of the others {rest} ms").format(
        first=num(cpu[0] * 1e3, ".3f"), rest=num(statistics.median(cpu[1:]) * 1e3, ".3f")))

    plt.figure(figsize=(6, 3))
    ticks = range(1, len(broken) + 1)
    plt.bar([t - 0.2 for t in ticks], [b * 1e3 for b in broken], width=0.4, label=tr("without warm-up"))
    plt.bar([t + 0.2 for t in ticks], [r * 1e3 for r in right], width=0.4, label=tr("with warm-up"))
    plt.yscale("log")
    plt.xlabel(tr("timed product"))
    plt.ylabel(tr("ms (simulated device)"))
    plt.title(tr("The first call pays a one-time cost"))
    plt.legend()
    plt.tight_layout()
show()

# %%
grader.check("warmup")

# %% [markdown] tags=["en"]
# **Explain** (one line, marked by hand with the reflections): the sweep of part 6 reports the median of its repeats.
# Would the median alone have hidden a forgotten warm-up, and why is a warm-up still needed?

# %% [markdown] tags=["vi"]
# **Giải thích** (một dòng, chấm tay cùng các suy ngẫm): phép quét ở phần 6 báo cáo trung vị của các lần lặp. Chỉ riêng
# trung vị có che được lỗi quên khởi động không, và vì sao vẫn cần khởi động?

# %% [markdown] tags=["en", "answer:reflections/warmup"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/warmup"]
# *Một dòng ở đây.*

# %% [markdown] tags=["en"]
# ### Predict before you read on: MFU of a 7B model
#
# Part 7 turns the iron law's $\eta$ into a number you can measure on a training run. The chapter's example: a 7B
# model trains on 1024 tokens per step, 1.2 s per step, on one A100 (312 TFLOP/s). Guess first: **what is its model
# FLOPs utilization (MFU)?** A number in percent, from 0 to 100.

# %% [markdown] tags=["vi"]
# ### Dự đoán trước khi đọc tiếp: MFU của một mô hình 7B
#
# Phần 7 biến $\eta$ của định luật sắt thành một con số đo được trên một lần huấn luyện. Ví dụ của chương: một mô hình
# 7B huấn luyện với 1024 token mỗi bước, 1,2 s mỗi bước, trên một A100 (312 TFLOP/s). Hãy đoán trước: **mức sử dụng FLOP
# của mô hình (MFU) là bao nhiêu?** Một số tính bằng phần trăm, từ 0 đến 100.

# %%
guess = None  # tr: your prediction, in %, from 0 to 100, in place of None
predict("mfu_7b", guess)

# %% [markdown] tags=["en"]
# ## 7. The iron law and MFU (§2 Iron Law of Training Performance, §5 Identifying Bottlenecks)
#
# `iron_law_time_s` is the law itself, in its general form $D/BW + O/(R_\text{peak}\,\eta) + \text{latency}$
# (§2 Iron Law of Training Performance names the data and latency terms, then drops them when they overlap with
# compute). **Model FLOPs utilization** (MFU) is the useful rate ($6 \cdot P$ FLOPs per token) over the peak rate: the
# $\eta$ of the iron law made concrete (§5 Identifying Bottlenecks). The chapter's example: a 7B model, 1024 tokens
# per step, 1.2 s per step on one A100 (312 TFLOP/s). The chapter prints its MFU rounded, about 0.11 (11.5%); your
# function gives 0.115. Production runs reach 30 to 50% (PaLM reported 46.2%).

# %% [markdown] tags=["vi"]
# ## 7. Định luật sắt và MFU (§2 Định luật sắt của hiệu năng huấn luyện (Iron Law of Training Performance), §5 Xác định điểm nghẽn (Identifying Bottlenecks))
#
# `iron_law_time_s` chính là định luật, ở dạng tổng quát $D/BW + O/(R_\text{peak}\,\eta) + \text{latency}$
# (§2 Định luật sắt của hiệu năng huấn luyện (Iron Law of Training Performance) nêu các số hạng dữ liệu và độ trễ, rồi
# bỏ chúng đi khi chúng chồng lấp với tính toán). **Mức sử dụng FLOP của mô hình** (model FLOPs utilization, MFU) là
# tốc độ hữu ích ($6 \cdot P$ FLOP cho mỗi token) chia cho thông lượng đỉnh: chính là $\eta$ của định luật sắt được cụ
# thể hoá (§5 Xác định điểm nghẽn (Identifying Bottlenecks)). Ví dụ của chương: một mô hình 7B, 1024 token mỗi bước,
# 1,2 s mỗi bước trên một A100 (312 TFLOP/s). Chương in MFU đã làm tròn, khoảng 0,11 (11,5%); hàm của bạn cho 0,115.
# Các lần chạy thực tế trong sản xuất đạt 30 đến 50% (PaLM báo cáo 46,2%).

# %%
EXAMPLE_7B = dict(n_params=7e9, tokens_per_step=1024, step_time_s=1.2, peak_flop_per_s=312e12, n_devices=1)
mfu = attempt(costs.model_flops_utilization, **EXAMPLE_7B)  # tr: None while model_flops_utilization is not written
reveal("mfu_7b", 100 * mfu if mfu is not None else None)

with skip_if_unwritten():
    print(tr("MFU of the 7B example: {mfu}").format(mfu=num(costs.model_flops_utilization(**EXAMPLE_7B), 3)))

    O = costs.training_flops(n_params=70e9, n_tokens=2e12)  # tr: Llama 2 70B
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

# %% [markdown] tags=["en"]
# **Reflect** (one line, marked by hand with the other reflections): was your guess high or low, and which of the chapter's terms (the 6 FLOPs per parameter per token, the peak) did you misjudge?

# %% [markdown] tags=["vi"]
# **Suy ngẫm** (một dòng, chấm tay cùng các suy ngẫm khác): dự đoán của bạn cao hay thấp, và bạn đã đánh giá sai số hạng nào của chương (6 FLOP cho mỗi tham số trên mỗi token, hay mức đỉnh)?

# %% [markdown] tags=["en", "answer:reflections/mfu_7b"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/mfu_7b"]
# *Một dòng ở đây.*

# %%
grader.check("iron_law_mfu")

# %% [markdown] tags=["en"]
# ## 8. Mixed precision: a higher peak, a lower $\eta$ (§6.3.2 Mixed-precision benefits, §6.3.3 Mixed-precision hardware support)
#
# Lower precision is the chapter's lever on $R_\text{peak}$ (§2 Iron Law of Training Performance: Tensor Cores
# "operate at up to 16× higher FLOP/s"). The peaks, from §6.3.3 Mixed-precision hardware support: an A100 does
# 312 TFLOP/s in FP16 or BF16 on its Tensor Cores against 19.5 in FP32 on its CUDA cores, **16×**; an H100 does
# about **2×** more in FP8 than in FP16 (1,979 against 989 TFLOP/s); a V100 does 125 against 15.7, about **8×**
# (§3.1.2 Matrix operations). The same section warns that these are "hardware ceilings, not end-to-end training
# promises": the matmuls speed up, and "the rest of the step determines the realized speedup".
#
# The chapter's GPT-2 example shows how much (§6.3.2 Mixed-precision benefits): on V100s, about 90 samples/s in FP32
# and 220 in mixed precision, **2.4×**, where the peaks differ by 8×. (The 2.4× is also the fourth item of
# §8 Fallacies and Pitfalls: mixed precision is not a toggle.) **Amdahl's law** (G. Amdahl, 1967; the chapter
# invokes it in §5 Identifying Bottlenecks without the formula) says why. If a fraction $f$ of the FP32 step's time
# is work that runs $r$ times faster, and the rest does not speed up, the step becomes
#
# $$\text{speed-up} = \frac{1}{(1 - f) + f / r}$$
#
# times faster. Write `mixed_precision_speedup`, its inverse `implied_tensor_core_fraction`, and `mixed_precision_run`,
# which puts the speed-up into the iron law. Reading the V100's 2.4× backwards gives $f \approx 0.68$ (the lab's
# derivation, not a number the chapter prints): about a third of the FP32 step does not get faster at all. In
# iron-law terms the peak rises by $r$, but $\eta$, measured against the new peak, falls to $\eta \times 2.4 / 8$:
# the time falls by the speed-up, not by the peak ratio.
#
# **Where the chapter's numbers disagree, and which ones the lab uses.**
#
# - "2×" or "16×"? The checkpoint of §2 Iron Law of Training Performance ("Tensor Cores run 2× faster") and §9 Summary
#   ("about 2× throughput") say 2×, the precision table of §6.3 Mixed-precision training says 16×. Both hold, against
#   a different FP32: the A100's FP16 Tensor Cores are 2× its TF32 Tensor Cores (312 against 156 TFLOP/s, the footnote
#   of §3.4 Arithmetic intensity) and 16× its FP32 CUDA cores. The lab's `peak_ratio` is whichever ratio you give it.
# - The cost of the example: 32 V100s take two weeks and \$50,000 in FP32, 1.2 weeks and \$28,000 in mixed precision.
#   Two weeks over 1.2 is 1.67×, not the 2.4× of the throughput line (it is the ratio of
#   §6.8 Optimization impact summary's 14 against 8.4 days, which that table credits to the data pipeline and
#   utilization). At a fixed price per GPU-hour, cost follows time: 1.2 weeks would cost
#   \$30,000, and 2.4× faster \$20,455, what the next cell prints. The lab uses the 2.4×.
# - The samples/s are good only as a ratio: by the iron law, 90 samples/s of GPT-2 XL at 1024 tokens is
#   $90 \times 6 \times 1.5 \times 10^9 \times 1024 \approx 8.3 \times 10^{14}$ FLOP/s, more than even 32 V100s'
#   FP32 peak ($32 \times 15.7$ TFLOP/s $\approx 5.0 \times 10^{14}$).

# %% [markdown] tags=["vi"]
# ## 8. Độ chính xác hỗn hợp: đỉnh cao hơn, $\eta$ thấp hơn (§6.3.2 Lợi ích của độ chính xác hỗn hợp (Mixed-precision benefits), §6.3.3 Hỗ trợ phần cứng cho độ chính xác hỗn hợp (Mixed-precision hardware support))
#
# Độ chính xác thấp hơn là đòn bẩy của chương lên $R_\text{peak}$
# (§2 Định luật sắt của hiệu năng huấn luyện (Iron Law of Training Performance): Tensor Core "chạy nhanh hơn tới 16×
# về FLOP/s"). Các mức đỉnh, theo §6.3.3 Hỗ trợ phần cứng cho độ chính xác hỗn hợp (Mixed-precision hardware support):
# A100 đạt 312 TFLOP/s ở FP16 hoặc BF16 trên Tensor Core so với 19,5 ở FP32 trên CUDA core, **16×**; H100 ở FP8 nhanh
# hơn ở FP16 khoảng **2×** (1.979 so với 989 TFLOP/s); V100 đạt 125 so với 15,7, khoảng **8×**
# (§3.1.2 Phép toán ma trận (Matrix operations)). Cũng mục đó cảnh báo rằng đây là "trần phần cứng, không phải lời hứa
# cho toàn bộ quá trình huấn luyện": các phép nhân ma trận nhanh lên, còn "phần còn lại của bước quyết định mức tăng
# tốc thực tế".
#
# Ví dụ GPT-2 của chương cho thấy mức đó (§6.3.2 Lợi ích của độ chính xác hỗn hợp (Mixed-precision benefits)): trên V100,
# khoảng 90 mẫu/s ở FP32 và 220 ở độ chính xác hỗn hợp, **2,4×**, trong khi hai mức đỉnh chênh nhau 8×. (Con số 2,4×
# cũng là mục thứ tư của §8 Ngộ nhận và cạm bẫy (Fallacies and Pitfalls): độ chính xác hỗn hợp không phải một công tắc bật
# tắt.) **Định luật Amdahl** (G. Amdahl, 1967; chương nhắc đến nó ở §5 Xác định điểm nghẽn (Identifying Bottlenecks)
# nhưng không đưa công thức) giải thích vì sao. Nếu một tỉ lệ $f$ của thời gian bước FP32 là phần việc chạy nhanh hơn $r$
# lần, còn phần còn lại không nhanh lên, thì bước đó nhanh hơn
#
# $$\text{mức tăng tốc} = \frac{1}{(1 - f) + f / r}$$
#
# lần. Hãy viết `mixed_precision_speedup`, hàm ngược của nó `implied_tensor_core_fraction`, và `mixed_precision_run`,
# hàm đưa mức tăng tốc vào định luật sắt. Đọc ngược con số 2,4× của V100 cho $f \approx 0{,}68$ (suy luận của bài lab,
# chương không in con số này): khoảng một phần ba bước FP32 hoàn toàn không nhanh lên. Theo ngôn ngữ của định luật sắt,
# mức đỉnh tăng $r$ lần, nhưng $\eta$, đo so với mức đỉnh mới, giảm còn $\eta \times 2{,}4 / 8$: thời gian giảm theo mức
# tăng tốc, không theo tỉ số hai mức đỉnh.
#
# **Những chỗ các con số của chương không khớp nhau, và bài lab dùng con số nào.**
#
# - "2×" hay "16×"? Phần tự kiểm tra của §2 Định luật sắt của hiệu năng huấn luyện (Iron Law of Training Performance)
#   ("Tensor Core chạy nhanh gấp 2×") và §9 Tổng kết (Summary) ("khoảng 2× thông lượng") nói 2×, bảng độ chính xác của
#   §6.3 Huấn luyện với độ chính xác hỗn hợp (Mixed-precision training) nói 16×. Cả hai đều đúng, nhưng so với hai
#   loại FP32 khác nhau: Tensor Core FP16 của A100 nhanh gấp 2× Tensor Core TF32 của nó (312 so với 156 TFLOP/s, chú
#   thích cuối trang của §3.4 Cường độ số học (Arithmetic intensity)) và gấp 16× CUDA core FP32. `peak_ratio` của bài
#   lab là tỉ số nào bạn truyền vào.
# - Chi phí của ví dụ: 32 V100 mất hai tuần và 50.000 USD ở FP32, 1,2 tuần và 28.000 USD ở độ chính xác hỗn hợp. Hai
#   tuần chia 1,2 là 1,67×, không phải 2,4× của dòng thông lượng (đó là tỉ số 14 so với 8,4 ngày của
#   §6.8 Tổng kết tác động của tối ưu (Optimization impact summary), mà bảng ấy quy cho quy trình dữ liệu và mức sử
#   dụng). Với giá cố định mỗi giờ-GPU, chi phí đi theo thời gian: 1,2 tuần sẽ tốn 30.000 USD, còn nhanh hơn 2,4× thì
#   20.455 USD, đúng như ô tiếp theo in ra. Bài lab dùng con số 2,4×.
# - Số mẫu/s chỉ dùng được dưới dạng tỉ số: theo định luật sắt, 90 mẫu/s của GPT-2 XL với 1024 token là
#   $90 \times 6 \times 1{,}5 \times 10^9 \times 1024 \approx 8{,}3 \times 10^{14}$ FLOP/s, vượt cả mức đỉnh FP32 của
#   32 V100 ($32 \times 15{,}7$ TFLOP/s $\approx 5{,}0 \times 10^{14}$).

# %%
V100_RATIO, A100_RATIO = 125 / 15.7, 312 / 19.5  # tr: FP16 Tensor Cores over FP32: V100, A100
measured = 220 / 90  # tr: the chapter's V100: GPT-2 samples/s in mixed precision over FP32
with skip_if_unwritten():
    fraction = costs.implied_tensor_core_fraction(speedup=measured, peak_ratio=V100_RATIO)
    print(tr("V100: peak ratio {r}, measured speed-up {s}: {f} of the FP32 step ran on Tensor Cores").format(
        r=num(V100_RATIO, 2), s=num(measured, 2), f=num(fraction, 3)))
    on_a100 = costs.mixed_precision_speedup(tensor_core_fraction=fraction, peak_ratio=A100_RATIO)
    print(tr("the same step on an A100 (peak ratio {r}): {s} times as fast").format(r=num(A100_RATIO, 0),
                                                                                      s=num(on_a100, 2)))

    # tr: the chapter's 32 V100s, two weeks and $50,000 in FP32; the FP32 efficiency, 0.5, is the lab's (the chapter gives none)
    job = dict(flops=32 * 15.7e12 * 0.5 * 14 * 86400, n_gpus=32, fp32_peak_flop_per_s=15.7e12, fp32_efficiency=0.5,
               peak_ratio=V100_RATIO, tensor_core_fraction=fraction, usd_per_gpu_hour=50_000 / (32 * 14 * 24))
    for name, value in costs.mixed_precision_run(**job).items():
        print(f"{name:>17}: {num(value, ',.6g')}")

    fs = [i / 50 for i in range(51)]
    plt.figure(figsize=(6, 3))
    for label, r in ((tr("V100, peak ratio 8"), V100_RATIO), (tr("A100, peak ratio 16"), A100_RATIO)):
        plt.plot(fs, [costs.mixed_precision_speedup(tensor_core_fraction=x, peak_ratio=r) for x in fs], label=label)
    plt.plot([fraction], [measured], "ko", label=tr("the chapter's V100, 2.4x"))
    plt.yscale("log", base=2)
    plt.xlabel(tr("fraction of the FP32 step on Tensor Cores"))
    plt.ylabel(tr("step speed-up"))
    plt.title(tr("Amdahl's law: only the Tensor-Core work speeds up"))
    plt.legend()
    plt.tight_layout()
show()

# %%
grader.check("mixed_precision")

# %% [markdown] tags=["en"]
# ## 9. Rent or buy? (§4.4.2 Batch size and parameter updates)
#
# The chapter's callout "The utility bill" (at the end of §4.4.2 Batch size and parameter updates): Llama 2 70B takes
# $6 \times 70\text{e}9 \times 2\text{e}12 = 8.4\text{e}23$ FLOPs. On 1024 H100s (989 TFLOP/s each) at MFU 0.5 that
# is 19.2 days: about \$1.42M to rent at \$3 per GPU-hour, against \$30.7M to buy the GPUs at \$30,000 each. Buying
# pays off only after 21.7 such runs. (`rent_vs_buy` also returns the GPU-hours, 471,857, which the chapter does not
# print.)
#
# Reality check, beyond the chapter: Touvron et al. (2023), "Llama 2: Open Foundation and Fine-Tuned Chat Models",
# Table 2, report 1,720,320 A100-80GB GPU-hours for the 70B model. `implied_mfu` says what MFU that means.

# %% [markdown] tags=["vi"]
# ## 9. Thuê hay mua cụm? (§4.4.2 Kích thước batch và cập nhật tham số (Batch size and parameter updates))
#
# Khung "The utility bill" của chương (ở cuối
# §4.4.2 Kích thước batch và cập nhật tham số (Batch size and parameter updates)): Llama 2 70B cần
# $6 \times 70\text{e}9 \times 2\text{e}12 = 8{,}4\text{e}23$ FLOP. Trên 1024 GPU H100 (mỗi GPU 989 TFLOP/s) với MFU
# 0,5, việc đó mất 19,2 ngày: khoảng 1,42 triệu USD nếu thuê với giá 3 USD mỗi giờ-GPU, so với 30,7 triệu USD để mua
# số GPU đó với giá 30.000 USD mỗi GPU. Mua chỉ có lợi sau 21,7 lần chạy như vậy. (`rent_vs_buy` cũng trả về số
# giờ-GPU, 471.857, con số mà chương không in ra.)
#
# Đối chiếu với thực tế, ngoài phạm vi của chương: Touvron và cộng sự (2023), "Llama 2: Open Foundation and Fine-Tuned
# Chat Models", Bảng 2, báo cáo 1.720.320 giờ-GPU A100-80GB cho bản 70B. `implied_mfu` cho biết con số đó tương ứng với
# MFU bao nhiêu.

# %%
with skip_if_unwritten():
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
# ## 10. The energy bill (§7.4 When to scale: The physical ceiling)
#
# Energy is GPUs $\times$ hours $\times$ watts, plus the host machines, times the facility's PUE (the power usage
# effectiveness: the case of §7.4 When to scale: The physical ceiling leaves it out, so PUE 1 below;
# §6.8 Optimization impact summary multiplies its GPT-2 energy by it). The chapter's case, "The carbon footprint of
# training": a 7B model on $10^{12}$ tokens, 1024 A100s at MFU 0.5 take 73.0 h; 1024 GPUs at 400 W and 128 hosts at
# 200 W draw 435.2 kW, for 31,784 kWh. Doubling the utilization halves the time, and so the energy.

# %% [markdown] tags=["vi"]
# ## 10. Hoá đơn năng lượng (§7.4 Khi nào cần mở rộng: giới hạn vật lý (When to scale: The physical ceiling))
#
# Năng lượng bằng số GPU $\times$ số giờ $\times$ công suất (W), cộng thêm các máy chủ (host), rồi nhân với hệ số PUE
# của trung tâm dữ liệu (power usage effectiveness: trường hợp của
# §7.4 Khi nào cần mở rộng: giới hạn vật lý (When to scale: The physical ceiling) bỏ qua hệ số này, nên bên dưới PUE =
# 1; §6.8 Tổng kết tác động của tối ưu (Optimization impact summary) nhân năng lượng GPT-2 của nó với hệ số này).
# Trường hợp của chương, khung "The carbon footprint of training": một mô hình 7B trên $10^{12}$ token, 1024 A100 với
# MFU 0,5 mất 73,0 h; 1024 GPU ở 400 W và 128 máy chủ ở 200 W tiêu thụ 435,2 kW, tổng cộng 31.784 kWh. Tăng gấp đôi
# mức sử dụng thì thời gian giảm một nửa, và năng lượng cũng vậy.

# %%
case = dict(n_params=7e9, n_tokens=1e12, n_gpus=1024, peak_flop_per_s=312e12, gpu_watts=400.0,
            n_hosts=128, host_watts=200.0, pue=1.0)
with skip_if_unwritten():
    for mfu in (0.3, 0.5, 0.6):
        e = costs.training_energy(**case, mfu=mfu)
        print(f"MFU {num(mfu, 1)}: {num(e['hours'], '6.1f')} h, {num(e['power_kw'], 1)} kW, "
              f"{num(e['energy_kwh'], '9,.0f')} kWh")

# %%
mfus = [0.2, 0.3, 0.4, 0.5, 0.6]
with skip_if_unwritten():
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
# ## 11. Your recommendation (marked by hand, 2 points)
#
# A university lab trains one 70B-class model a year and otherwise fine-tunes small models. Should it rent or buy
# 1024 H100s? Answer in the cell below, in three to five sentences: argue from your own numbers (the break-even
# number of runs, the implied MFU of the reality check, the energy bill), and name one cost that `rent_vs_buy`
# leaves out and which way it moves the answer. No test checks this cell: a TA reads it, so keep it in this
# notebook (`autograder submit lab1` puts the notebook in your zip).

# %% [markdown] tags=["vi"]
# ## 11. Khuyến nghị của bạn (chấm tay, 2 điểm)
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
# It holds your lab files (`flops.py`, `costs.py`), this notebook with its outputs and your answers, your predictions
# (`predictions.json`) and `MANIFEST.json`, the size and SHA-256 hash of each file. The hand-in cell at the end of this
# notebook writes the same zip.

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
# Tệp zip chứa các tệp bài lab của bạn (`flops.py`, `costs.py`), sổ tay này cùng kết quả chạy và câu trả lời của bạn,
# các dự đoán của bạn (`predictions.json`) và `MANIFEST.json`, kích thước và mã băm SHA-256 của từng tệp. Ô nộp bài ở
# cuối sổ tay này tạo ra cùng tệp zip đó.
