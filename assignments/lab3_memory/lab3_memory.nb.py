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
# This is the chapter's training memory equation (§3.3.2 Memory-computation trade-offs). You will:
# 1. measure the four terms on a real (tiny) PyTorch model, and count activations with two kinds of hooks (§3.3 Backpropagation mechanics, §3.3.1 Activation memory requirements, §4.3.2 Memory management);
# 2. build **bytes per parameter** from which copies a recipe keeps in which dtype, and see which recipe, in bytes per parameter, each of the chapter's totals assumes (§3.2.3 Optimization algorithm system implications, §4.3.2 Memory management, §8 Fallacies and Pitfalls);
# 3. use a per-layer activation formula, $s\,b\,h\,(34 + 5\,a\,s/h)$, from Korthikanti et al. 2022 (beyond the chapter), beside the chapter's own breakdown (§3.3.1 Activation memory requirements);
# 4. read FP32 / FP16 / BF16 from `torch.finfo`, watch gradients underflow in FP16 and loss scaling bring them back (§6.3 Mixed-precision training, §6.3.1 Loss scaling, §6.3.2 Mixed-precision benefits);
# 5. measure activation checkpointing (lưu điểm) with `torch.utils.checkpoint`: the peak during backward and the recomputed work (§6.5.1.2 Activation checkpointing, §6.5.2 Optimal checkpoint placement strategy);
# 6. fit GPT-2 XL on a 32 GiB V100 as the chapter does, and see what its ÷4 assumes (§6.3.2 Mixed-precision benefits, §6.7 GPT-2 optimization walkthrough).
#
# Where the lab goes beyond the chapter (a formula from a paper, an example of its own), the text says so and names the source.
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
# Đây là phương trình bộ nhớ huấn luyện của chương sách (§3.3.2 Đánh đổi giữa bộ nhớ và tính toán (Memory-computation trade-offs)). Bạn sẽ:
# 1. đo bốn số hạng trên một mô hình PyTorch thật (dù rất nhỏ), và đếm giá trị kích hoạt bằng hai loại hook (§3.3 Cơ chế lan truyền ngược (Backpropagation mechanics), §3.3.1 Yêu cầu bộ nhớ cho giá trị kích hoạt (Activation memory requirements), §4.3.2 Quản lý bộ nhớ (Memory management));
# 2. dựng **số byte mỗi tham số** từ những bản sao mà một công thức (recipe) giữ và dtype của từng bản, rồi xem mỗi con số tổng của chương sách giả định công thức nào, tính theo byte mỗi tham số (§3.2.3 Hệ quả hệ thống của thuật toán tối ưu (Optimization algorithm system implications), §4.3.2 Quản lý bộ nhớ (Memory management), §8 Ngộ nhận và cạm bẫy (Fallacies and Pitfalls));
# 3. dùng một công thức giá trị kích hoạt cho mỗi lớp, $s\,b\,h\,(34 + 5\,a\,s/h)$, của Korthikanti và cộng sự (2022, ngoài chương sách), đặt cạnh cách chương sách tự phân tích (§3.3.1 Yêu cầu bộ nhớ cho giá trị kích hoạt (Activation memory requirements));
# 4. đọc FP32 / FP16 / BF16 từ `torch.finfo`, xem gradient bị tràn dưới (underflow) trong FP16 và phép nhân tỉ lệ mất mát (loss scaling) đưa chúng trở lại (§6.3 Huấn luyện với độ chính xác hỗn hợp (Mixed-precision training), §6.3.1 Nhân tỉ lệ mất mát (Loss scaling), §6.3.2 Lợi ích của độ chính xác hỗn hợp (Mixed-precision benefits));
# 5. đo lưu điểm giá trị kích hoạt (activation checkpointing) bằng `torch.utils.checkpoint`: đỉnh bộ nhớ trong lượt ngược và phần tính lại (§6.5.1.2 Lưu điểm giá trị kích hoạt (Activation checkpointing), §6.5.2 Chiến lược đặt điểm lưu tối ưu (Optimal checkpoint placement strategy));
# 6. đưa GPT-2 XL vừa vào một V100 32 GiB như chương sách làm, và xem phép chia cho 4 của nó giả định điều gì (§6.3.2 Lợi ích của độ chính xác hỗn hợp (Mixed-precision benefits), §6.7 Tối ưu GPT-2 từng bước (GPT-2 optimization walkthrough)).
#
# Chỗ nào bài lab đi xa hơn chương sách (một công thức từ bài báo, một ví dụ của riêng bài lab), văn bản nói rõ và nêu nguồn.
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
import textwrap

import matplotlib.pyplot as plt
import numpy as np
import torch

torch.set_num_threads(1)  # tr: the models here are tiny: one thread is faster than two

import lab3_models
import memory
from autograder.grading.notebook_text import num, nums, show, tr  # tr: what the cells print and plot, in the notebook's language

GB = 1e9
print(tr("the tiny GPT's defaults: {config}").format(config=lab3_models.GPT_DEFAULTS))
# tr: the four terms, as the plots name them
TERM = {"weights": tr("weights"), "gradients": tr("gradients"), "optimizer_state": tr("optimizer state"),
        "activations": tr("activations")}

# %% [markdown] tags=["en"]
# ## 1. The four terms, measured (§3.3 Backpropagation mechanics, §4.3.2 Memory management)
#
# `measure_four_terms` builds the model from a config, runs one forward pass to the loss, one backward and one optimizer step, and reports bytes:
#
# * **weights**: every parameter once (the tiny GPT ties its LM head to the token embedding, as GPT-2 does: one tensor, counted once);
# * **gradients**: every `p.grad` after backward (frozen parameters have none);
# * **optimizer state**: what `torch.optim` keeps after one step (Adam: m and v; the scalar `step` counter is left out);
# * **activations**: what autograd saved for backward during the forward pass, counted with `torch.autograd.graph.saved_tensors_hooks`.

# %% [markdown] tags=["vi"]
# ## 1. Bốn số hạng, đo thực tế (§3.3 Cơ chế lan truyền ngược (Backpropagation mechanics), §4.3.2 Quản lý bộ nhớ (Memory management))
#
# `measure_four_terms` dựng mô hình từ một cấu hình, chạy một lượt xuôi tới giá trị mất mát, một lượt ngược và một bước của bộ tối ưu, rồi báo cáo số byte:
#
# * **trọng số** (weights): mỗi tham số một lần (GPT nhỏ dùng chung (tie) trọng số của đầu LM với embedding token, như GPT-2: một tensor, đếm một lần);
# * **gradient**: mọi `p.grad` sau lượt ngược (tham số bị đóng băng không có gradient);
# * **trạng thái bộ tối ưu** (optimizer state): những gì `torch.optim` giữ lại sau một bước (Adam: m và v; bộ đếm vô hướng `step` không được tính);
# * **giá trị kích hoạt** (activations): những gì autograd lưu cho lượt ngược trong lượt xuôi, đếm bằng `torch.autograd.graph.saved_tensors_hooks`.

# %%
with skip_if_unwritten():
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
with skip_if_unwritten():
    widths = [8, 16, 32, 64]
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
    ax.legend(); show()

# %%
grader.check("four_terms")

# %% [markdown] tags=["en"]
# ### Two ways to count activations (§3.3.1 Activation memory requirements)
#
# * `saved_tensors_hooks(pack, unpack)` sees **exactly** the tensors autograd keeps for backward: layer inputs, the softmax output, GELU inputs, the loss's log-probabilities, index tensors and masks. Parameters are saved too (a `Linear` needs its weight to compute the input gradient) but they are weights, not activations, so they are left out; several saves can share one storage (a view, or one tensor saved by two ops), and that memory is held only once.
# * Forward hooks on the leaf modules see **module outputs**. They miss what is saved *inside* functional code (the attention scores and softmax of the attention layer, the loss), and they count outputs that nobody saves.

# %% [markdown] tags=["vi"]
# ### Hai cách đếm giá trị kích hoạt (§3.3.1 Yêu cầu bộ nhớ cho giá trị kích hoạt (Activation memory requirements))
#
# * `saved_tensors_hooks(pack, unpack)` thấy **chính xác** các tensor mà autograd giữ lại cho lượt ngược: đầu vào của các lớp, đầu ra softmax, đầu vào GELU, log-xác suất của hàm mất mát, các tensor chỉ số và mặt nạ (mask). Tham số cũng được lưu (một `Linear` cần trọng số của nó để tính gradient theo đầu vào) nhưng chúng là trọng số, không phải giá trị kích hoạt, nên bị loại ra; nhiều lần lưu có thể dùng chung một vùng lưu trữ (storage) (một view, hoặc một tensor được hai phép toán cùng lưu), và vùng nhớ đó chỉ bị chiếm một lần.
# * Forward hook trên các module lá thấy **đầu ra của module**. Chúng bỏ sót những gì được lưu *bên trong* mã dạng hàm (functional) (điểm attention và softmax của lớp attention, hàm mất mát), và lại đếm cả những đầu ra không ai lưu.

# %%
with skip_if_unwritten():
    counts = memory.activation_hook_counts(config={"kind": "gpt"}, batch_size=4)
    for k, v in counts.items():
        print(f"{k:>20}: {num(v)}")
    print(tr("module outputs / saved tensors = {ratio}").format(
        ratio=num(counts["module_output_bytes"] / counts["saved_bytes"], 2)))

# %%
grader.check("activation_hooks")

# %% [markdown] tags=["en"]
# ### Predict first
#
# The chapter budgets a 7B-parameter model's weights, gradients and Adam state at **84 GB** (§1 Training Systems Fundamentals). How many **bytes per parameter** does that assume? A number from 1 to 40 (B/param).

# %% [markdown] tags=["vi"]
# ### Dự đoán trước
#
# Chương sách tính trọng số, gradient và trạng thái Adam của một mô hình 7B tham số là **84 GB** (§1 Nền tảng hệ thống huấn luyện (Training Systems Fundamentals)). Con số đó giả định bao nhiêu **byte mỗi tham số**? Một số từ 1 đến 40 (B/tham số).

# %%
guess = None  # tr: your prediction, from 1 to 40 (B/param), in place of None
predict("seven_b_bytes", guess)

# %% [markdown] tags=["en"]
# ## 2. Bytes per parameter, built from their parts (§3.2.3 Optimization algorithm system implications, §4.3.2 Memory management, §8 Fallacies and Pitfalls)
#
# Weights, gradients and optimizer state cost a fixed number of bytes per parameter, but **which** number depends on which copies a recipe keeps and in which dtype. The chapter uses four recipes in different places, and each of its totals assumes one of them:
#
# | recipe | weights | gradients | master copy | optimizer (Adam m, v) | B/param | the chapter's total |
# |---|---|---|---|---|---|---|
# | FP32 Adam | FP32 4 | FP32 4 | none | 2 × FP32 = 8 | **16** | GPT-2 1.5B: 6 + 6 + 12 = 24 GB (§3.2.3 Optimization algorithm system implications) |
# | mixed precision with an FP32 master copy | FP16 2 | FP16 2 | FP32 4 | 8 | **16** | GPT-2: 3 + 3 + 6 + 12 = 24 GB (§3.2.3 Optimization algorithm system implications, §6.3.2 Mixed-precision benefits) |
# | FP16 weights and gradients, FP32 moments, no master | 2 | 2 | none | 8 | **12** | 7B: 14 + 14 + 56 = 84 GB (§1 Training Systems Fundamentals, §4.3.2 Memory management) |
# | FP16 weights and optimizer state only | 2 | not counted | none | 8 | **10** | 20B: 40 + 160 = 200 GB (§8 Fallacies and Pitfalls, first fallacy) |
#
# Its pitfall on memory budgets (§8 Fallacies and Pitfalls) brackets them: "12–16 bytes per parameter" before activations. This lab's `bytes_per_parameter` uses 16 (mixed precision with the master copy), so its 7B total is **112 GB, not the chapter's 84 GB**: the difference is the 4-byte master copy the 84 GB leaves out. Dropping the master copy loses small updates, as Part 4 shows; that is why the chapter's own mixed-precision recipe (§6.3.2 Mixed-precision benefits) keeps it. (An 18 B/param count with FP32 gradients, the third scheme below, is from Megatron Core's distributed-optimizer documentation, beyond the chapter.) Activations are in none of these numbers: they depend on the batch.
#
# `recipe_bytes` builds each total from its parts; the recipes below are the table's rows.

# %% [markdown] tags=["vi"]
# ## 2. Số byte mỗi tham số, dựng từ các phần (§3.2.3 Hệ quả hệ thống của thuật toán tối ưu (Optimization algorithm system implications), §4.3.2 Quản lý bộ nhớ (Memory management), §8 Ngộ nhận và cạm bẫy (Fallacies and Pitfalls))
#
# Trọng số, gradient và trạng thái bộ tối ưu tốn một số byte cố định cho mỗi tham số, nhưng **con số nào** thì tuỳ vào công thức (recipe) giữ những bản sao nào và ở dtype nào. Chương sách dùng bốn công thức ở những chỗ khác nhau, và mỗi con số tổng của nó giả định một trong số đó:
#
# | công thức | trọng số | gradient | bản sao chính (master) | bộ tối ưu (Adam m, v) | B/tham số | con số của chương sách |
# |---|---|---|---|---|---|---|
# | Adam FP32 | FP32 4 | FP32 4 | không | 2 × FP32 = 8 | **16** | GPT-2 1,5B: 6 + 6 + 12 = 24 GB (§3.2.3 Hệ quả hệ thống của thuật toán tối ưu (Optimization algorithm system implications)) |
# | độ chính xác hỗn hợp có bản sao chính FP32 | FP16 2 | FP16 2 | FP32 4 | 8 | **16** | GPT-2: 3 + 3 + 6 + 12 = 24 GB (§3.2.3 Hệ quả hệ thống của thuật toán tối ưu (Optimization algorithm system implications), §6.3.2 Lợi ích của độ chính xác hỗn hợp (Mixed-precision benefits)) |
# | trọng số và gradient FP16, moment FP32, không có bản sao chính | 2 | 2 | không | 8 | **12** | 7B: 14 + 14 + 56 = 84 GB (§1 Nền tảng hệ thống huấn luyện (Training Systems Fundamentals), §4.3.2 Quản lý bộ nhớ (Memory management)) |
# | chỉ trọng số FP16 và trạng thái bộ tối ưu | 2 | không tính | không | 8 | **10** | 20B: 40 + 160 = 200 GB (§8 Ngộ nhận và cạm bẫy (Fallacies and Pitfalls), ngộ nhận thứ nhất) |
#
# Cạm bẫy về ngân sách bộ nhớ của chương sách (§8 Ngộ nhận và cạm bẫy (Fallacies and Pitfalls)) gói chúng lại: "12–16 byte mỗi tham số" trước khi tính giá trị kích hoạt. Hàm `bytes_per_parameter` của bài lab này dùng 16 (độ chính xác hỗn hợp có bản sao chính), nên tổng cho 7B là **112 GB, không phải 84 GB của chương sách**: chênh lệch chính là 4 byte của bản sao chính mà con số 84 GB bỏ qua. Bỏ bản sao chính thì mất các cập nhật nhỏ, như Phần 4 cho thấy; vì vậy công thức độ chính xác hỗn hợp của chính chương sách (§6.3.2 Lợi ích của độ chính xác hỗn hợp (Mixed-precision benefits)) vẫn giữ nó. (Con số 18 B/tham số với gradient FP32, phương án thứ ba bên dưới, lấy từ tài liệu về distributed optimizer của Megatron Core, ngoài chương sách.) Giá trị kích hoạt không nằm trong con số nào ở đây: chúng phụ thuộc vào batch.
#
# `recipe_bytes` dựng mỗi con số tổng từ các phần của nó; các công thức bên dưới chính là các hàng của bảng.

# %%
with skip_if_unwritten():
    for scheme in ("mixed_adam", "fp32_adam", "mixed_adam_fp32_grads"):
        print(f"{scheme:>22}:", memory.bytes_per_parameter(scheme=scheme))

    for P in (7e9, 20e9, 175e9):
        b = memory.model_state_bytes(n_params=int(P), scheme="mixed_adam")
        print(tr("{billions}B parameters -> {gb} GB (the lab's 16 B/param)").format(
            billions=num(P / 1e9, "5.0f"), gb=num(b / GB, "7,.0f")))

# %%
grader.check("bytes_per_param")

# %%
with skip_if_unwritten():
    def recipe(weights, gradients, master, states, states_dtype):
        return {"weights": weights, "gradients": gradients, "master": master,
                "optimizer_states": states, "optimizer_dtype": states_dtype}


    recipes = {  # tr: name: (recipe, parameters, the chapter's total in GB)
        tr("FP32 Adam"): (recipe("float32", "float32", None, 2, "float32"), 1.5e9, 24),
        tr("mixed-precision Adam with an FP32 master copy"): (recipe("float16", "float16", "float32", 2, "float32"), 1.5e9, 24),
        tr("FP16 weights and gradients, FP32 Adam moments, no master copy"): (recipe("float16", "float16", None, 2, "float32"), 7e9, 84),
        tr("FP16 weights and FP32 Adam moments only"): (recipe("float16", None, None, 2, "float32"), 20e9, 200),
    }
    for name, (r, P, chapter_gb) in recipes.items():
        got = memory.recipe_bytes(recipe=r, n_params=int(P))
        if P == 7e9:
            seven_b = got["per_param"]  # tr: the chapter's 7B recipe
        print(tr("{recipe}: {parts} = {per_param} B/param; {billions}B -> {gb} GB (the chapter: {chapter} GB)").format(
            recipe=name, parts=" + ".join(str(got[k]) for k in ("weights", "gradients", "master", "optimizer")),
            per_param=got["per_param"], billions=num(P / 1e9, "g"), gb=num(got["total_gb"], 1), chapter=chapter_gb))
    reveal("seven_b_bytes", seven_b)

    # tr: the pitfall of §8 Fallacies and Pitfalls: budgeting 2 B/param (FP16 weights alone) underestimates by 12/2 = 6x to 16/2 = 8x
    weights_only = memory.recipe_bytes(recipe=recipe("float16", None, None, 0, None), n_params=1)["per_param"]
    print(tr("FP16 weights alone: {b} B/param, {low}x to {high}x too little").format(
        b=weights_only, low=num(12 / weights_only, 0), high=num(16 / weights_only, 0)))

# %%
grader.check("recipes")

# %% [markdown] tags=["en"]
# **Reflection** (one line, marked by hand with the other reflections): how far was your guess from the 7B recipe's bytes per parameter, and which copy does the 84 GB leave out?

# %% [markdown] tags=["vi"]
# **Suy ngẫm** (một dòng, chấm tay cùng các suy ngẫm khác): dự đoán của bạn cách số byte mỗi tham số của công thức 7B bao xa, và con số 84 GB bỏ qua bản sao nào?

# %% [markdown] tags=["en", "answer:reflections/seven_b_bytes"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/seven_b_bytes"]
# *Một dòng ở đây.*

# %% [markdown] tags=["en"]
# ### Predict first: the largest term
#
# Before part 3 counts GPT-2 XL's activations: GPT-2 XL (1.5e9 parameters, 48 layers) trained with mixed-precision Adam at micro-batch 8 and sequence 1024: which of the four terms is the **largest**: a) weights, b) gradients, c) optimizer state, d) activations? Write the letter or the words. The measurement comes at the end of part 3.

# %% [markdown] tags=["vi"]
# ### Dự đoán trước: số hạng lớn nhất
#
# Trước khi phần 3 đếm giá trị kích hoạt của GPT-2 XL: GPT-2 XL (1,5e9 tham số, 48 lớp) huấn luyện bằng Adam độ chính xác hỗn hợp, micro-batch 8, độ dài chuỗi 1024: số hạng nào trong bốn số hạng **lớn nhất**: a) trọng số, b) gradient, c) trạng thái bộ tối ưu, d) giá trị kích hoạt? Ghi chữ cái hoặc tên của nó. Phép đo nằm ở cuối phần 3.

# %%
guess = None  # tr: your prediction: a letter (a to d) or the term's name, in place of None
predict("dominant_term", guess)

# %% [markdown] tags=["en"]
# ## 3. Activations per transformer layer (giá trị kích hoạt) (§3.3.1 Activation memory requirements)
#
# **Beyond the chapter.** The per-layer formula of this part is from Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models" (arXiv:2205.05198, 2022). Per layer, in FP16 bytes: $s\,b\,h\,(34 + 5\,a\,s/h) = 34\,sbh + 5\,a\,s^2 b$.
# The 5 is the attention score matrix (ma trận điểm attention): 2 bytes for the $QK^T$ scores, 2 for the softmax output, 1 for the dropout mask, each $b \times a \times s \times s$.
# **Selective recomputation** re-derives those and keeps $34\,sbh$; **full recomputation** keeps only the layer input, $2\,sbh$ (the paper's two recomputation schemes).
#
# How it relates to the chapter: §3.3.1 Activation memory requirements itemises a GPT-2 XL layer (b = 8, s = 1024) as Q, K, V and the attention output ($4\,sbh$ values), the FFN expansion ($4\,sbh$ values, width $4h$), the same three $5\,a\,s^2 b$ attention buffers (the term it shares with the paper: "the dominant term ... exactly what selective recomputation discards") and about 10 MB of layer-norm states: about **1.27 GB per layer**, 60.9 GB for 48 layers. Its total, **71.7 GB**, is a library estimate that "includes residual-stream and framework buffers beyond the line items": it is this formula's $48 \times 1.494$ GB. The cell below prints both.

# %% [markdown] tags=["vi"]
# ## 3. Giá trị kích hoạt của mỗi lớp transformer (§3.3.1 Yêu cầu bộ nhớ cho giá trị kích hoạt (Activation memory requirements))
#
# **Ngoài chương sách.** Công thức cho mỗi lớp trong phần này lấy từ Korthikanti và cộng sự, "Reducing Activation Recomputation in Large Transformer Models" (arXiv:2205.05198, 2022). Mỗi lớp, theo byte FP16: $s\,b\,h\,(34 + 5\,a\,s/h) = 34\,sbh + 5\,a\,s^2 b$.
# Số 5 là ma trận điểm attention (attention score matrix): 2 byte cho điểm $QK^T$, 2 cho đầu ra softmax, 1 cho mặt nạ dropout, mỗi tensor có kích thước $b \times a \times s \times s$.
# **Tính lại có chọn lọc** (selective recomputation) tính lại các tensor đó và giữ $34\,sbh$; **tính lại toàn bộ** (full recomputation) chỉ giữ đầu vào của lớp, $2\,sbh$ (hai cách tính lại của bài báo).
#
# Liên hệ với chương sách: §3.3.1 Yêu cầu bộ nhớ cho giá trị kích hoạt (Activation memory requirements) liệt kê từng khoản của một lớp GPT-2 XL (b = 8, s = 1024): Q, K, V và đầu ra attention ($4\,sbh$ giá trị), phần mở rộng FFN ($4\,sbh$ giá trị, độ rộng $4h$), đúng ba bộ đệm attention $5\,a\,s^2 b$ (số hạng chung với bài báo: "số hạng trội ... đúng là phần mà tính lại có chọn lọc bỏ đi") và khoảng 10 MB trạng thái layer norm: khoảng **1,27 GB mỗi lớp**, 60,9 GB cho 48 lớp. Con số tổng của nó, **71,7 GB**, là ước lượng của một thư viện, "gồm cả các bộ đệm của luồng dư (residual stream) và của framework ngoài các khoản đã liệt kê": đó chính là $48 \times 1{,}494$ GB của công thức này. Ô bên dưới in cả hai.

# %%
with skip_if_unwritten():
    xl = dict(s=1024, b=8, h=1600, a=25)  # tr: GPT-2 XL, micro-batch 8
    scores = memory.attention_score_bytes(s=1024, b=8, a=25)
    print("; ".join(f"{k}: {num(v / GB, 3)} GB" for k, v in scores.items()))
    for mode in ("none", "selective", "full"):
        one = memory.activation_bytes(**xl, n_layers=1, recompute=mode)
        all48 = memory.activation_bytes(**xl, n_layers=48, recompute=mode)
        print(tr("{mode}: {layer} GB per layer, {model} GB for 48 layers").format(
            mode=f"{mode:>9}", layer=num(one / GB, "6.3f"), model=num(all48 / GB, "6.1f")))

    # tr: the chapter's own items (§3.3.1 Activation memory requirements): Q, K, V, output (4·s·b·h values) + FFN (4·s·b·h) in FP16, the attention buffers, ~10 MB of layer norm
    sbh = 1024 * 8 * 1600
    chapter_layer = 2 * 4 * sbh + 2 * 4 * sbh + sum(scores.values()) + 10e6
    print(tr("the chapter's items: {layer} GB per layer, {model} GB for 48 layers (its total, 71.7 GB, is the formula's)").format(
        layer=num(chapter_layer / GB, 2), model=num(48 * chapter_layer / GB, 1)))

# %%
with skip_if_unwritten():
    seqs = [256, 512, 1024, 2048, 4096]
    linear = [memory.activation_bytes(s=s, b=8, h=1600, a=25, recompute="selective") / GB for s in seqs]
    total = [memory.activation_bytes(s=s, b=8, h=1600, a=25) / GB for s in seqs]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.bar([str(s) for s in seqs], linear, label=tr("34·s·b·h (linear in s)"))
    ax.bar([str(s) for s in seqs], np.subtract(total, linear), bottom=linear, label=tr("5·a·s²·b (attention, quadratic)"))
    ax.set_xlabel(tr("sequence length s")); ax.set_ylabel(tr("GB per layer (GPT-2 XL, b=8)"))
    ax.legend(); show()

# %% [markdown] tags=["en"]
# The same four terms at real scale: GPT-2 small, medium, large and XL with mixed-precision Adam, micro-batch 8, sequence 1024. Weights are 2 bytes/parameter, gradients 2, optimizer state (master + m + v) 12; activations by the formula above (Korthikanti et al.).

# %% [markdown] tags=["vi"]
# Cũng bốn số hạng đó ở quy mô thật: GPT-2 small, medium, large và XL với Adam độ chính xác hỗn hợp, micro-batch 8, độ dài chuỗi 1024. Trọng số 2 byte/tham số, gradient 2, trạng thái bộ tối ưu (bản sao chính + m + v) 12; giá trị kích hoạt theo công thức ở trên (Korthikanti và cộng sự).

# %%
with skip_if_unwritten():
    gpt2 = {  # tr: name: (parameters, layers, d_model, heads)
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
    largest = max(stack, key=lambda term: stack[term][-1])  # tr: the largest term of GPT-2 XL
    reveal("dominant_term", largest.replace("_", " "))

# %%
grader.check("activation_formula")

# %% [markdown] tags=["en"]
# **Reflection** (one line, marked by hand with the other reflections): which term did you expect, which one is it, and what makes it grow faster than the other three?

# %% [markdown] tags=["vi"]
# **Suy ngẫm** (một dòng, chấm tay cùng các suy ngẫm khác): bạn đã nghĩ số hạng nào, thực tế là số hạng nào, và điều gì làm nó tăng nhanh hơn ba số hạng còn lại?

# %% [markdown] tags=["en", "answer:reflections/dominant_term"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/dominant_term"]
# *Một dòng ở đây.*

# %% [markdown] tags=["en"]
# ## 4. Number formats: FP32, FP16, BF16 (§6.3 Mixed-precision training)
#
# FP16 has 5 exponent bits: its largest value is 65504, normal numbers stop at 6.1e-5, and anything below half the smallest subnormal (6e-8 / 2) rounds to 0. BF16 keeps FP32's 8 exponent bits (same range) but only 7 mantissa bits (eps 7.8e-3). The chapter gives the ranges; the eps values (the spacing just above 1) are the formats' own, read from `torch.finfo`.

# %% [markdown] tags=["vi"]
# ## 4. Định dạng số: FP32, FP16, BF16 (§6.3 Huấn luyện với độ chính xác hỗn hợp (Mixed-precision training))
#
# FP16 có 5 bit số mũ: giá trị lớn nhất là 65504, các số chuẩn (normal) dừng ở 6,1e-5, và mọi giá trị nhỏ hơn một nửa số dưới chuẩn (subnormal) nhỏ nhất (6e-8 / 2) đều bị làm tròn về 0. BF16 giữ 8 bit số mũ của FP32 (cùng phạm vi) nhưng chỉ có 7 bit phần định trị (mantissa) (eps 7,8e-3). Chương sách cho các phạm vi; các giá trị eps (khoảng cách ngay trên 1) là của chính các định dạng, đọc từ `torch.finfo`.

# %%
with skip_if_unwritten():
    ranges = memory.format_ranges()
    columns = {"max": tr("largest"), "min_normal": tr("smallest normal"), "min_subnormal": tr("smallest subnormal"),
               "eps": "eps"}
    width = {key: max(10, len(head)) for key, head in columns.items()}
    print(" " * 9, *(f"{head:>{width[key]}}" for key, head in columns.items()), " " + tr("bits (exponent, mantissa)"))
    for name, r in ranges.items():
        print(f"{name:>9}", *(f"{num(r[key], '.3g'):>{width[key]}}" for key in columns),
              f" ({r['exponent_bits']}, {r['mantissa_bits']})")

# %% [markdown] tags=["en"]
# Real gradients of a deep MLP with small initial weights shrink layer by layer. Cast to FP16, many of them flush to zero. **Loss scaling** (§6.3.1 Loss scaling) multiplies the loss (and so every gradient) by $2^k$ before backward, which lifts them back into FP16's range; too large a scale overflows to inf instead. The chapter names three scales: $2^{10}$ as an example (§6.3.1 Loss scaling), a start at $2^{15}$ halved on overflow and "typically $2^8$ to $2^{14}$" (§6.3.2 Mixed-precision benefits). The sweep below covers them all; the graded checks use $2^{15}$, the chapter's starting scale.

# %% [markdown] tags=["vi"]
# Gradient thật của một MLP sâu với trọng số khởi tạo nhỏ co lại dần qua từng lớp. Khi ép sang FP16, nhiều gradient bị làm tròn về 0. **Nhân tỉ lệ mất mát** (loss scaling) (§6.3.1 Nhân tỉ lệ mất mát (Loss scaling)) nhân giá trị mất mát (và do đó mọi gradient) với $2^k$ trước lượt ngược, đưa chúng trở lại phạm vi của FP16; hệ số quá lớn thì ngược lại gây tràn trên (overflow) thành inf. Chương sách nêu ba mức: $2^{10}$ làm ví dụ (§6.3.1 Nhân tỉ lệ mất mát (Loss scaling)), bắt đầu từ $2^{15}$ và giảm một nửa khi tràn trên, và "thường từ $2^8$ đến $2^{14}$" (§6.3.2 Lợi ích của độ chính xác hỗn hợp (Mixed-precision benefits)). Phép quét bên dưới bao gồm tất cả; các bài kiểm tra chấm điểm dùng $2^{15}$, mức bắt đầu của chương sách.

# %%
with skip_if_unwritten():
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
# Why master weights stay FP32 (§6.3.2 Mixed-precision benefits). The chapter says it in one sentence: "a small learning rate (2.5e-4) multiplied by an FP16 gradient can round to zero, but FP32 accumulation preserves these tiny updates". The numbers below are **the lab's own example**, not the chapter's: a gradient of 1e-2 (so lr × grad = 2.5e-6) and a weight of exactly 1 ("w = 1").
#
# Why it is lost, derived: FP16 keeps 10 mantissa bits, so the next value above 1 is $1 + 2^{-10}$ (that gap is FP16's eps). Round-to-nearest sends $1 + u$ back to 1 whenever $u < 2^{-11}$, and 2.5e-6 is far smaller. The update itself is not zero in FP16 (2.5e-6 is a subnormal, above the smallest one, $2^{-24}$): it is lost in the **addition**. At any weight $w$ the threshold scales with it: an update below about $|w| \cdot 2^{-11}$ is lost, so w = 1 stands for every weight of order 1. In FP32 the gap above 1 is $2^{-23}$, and the update survives. (The product lr × grad rounds to zero in FP16 itself only below half the smallest subnormal, $2^{-25}$.) The cell below prints each of these numbers, read from the formats with `np.spacing` (the gap to the next value of a dtype) and `np.finfo`.

# %% [markdown] tags=["vi"]
# Vì sao trọng số chính (master weights) giữ ở FP32 (§6.3.2 Lợi ích của độ chính xác hỗn hợp (Mixed-precision benefits)). Chương sách nói điều này trong một câu: "một tốc độ học nhỏ (2,5e-4) nhân với một gradient FP16 có thể bị làm tròn về 0, nhưng phép cộng dồn FP32 giữ lại được những cập nhật rất nhỏ này". Các con số bên dưới là **ví dụ của riêng bài lab**, không phải của chương sách: một gradient bằng 1e-2 (nên lr × grad = 2,5e-6) và một trọng số đúng bằng 1 ("w = 1").
#
# Vì sao cập nhật bị mất, suy ra từng bước: FP16 giữ 10 bit phần định trị, nên giá trị kế tiếp lớn hơn 1 là $1 + 2^{-10}$ (khoảng cách đó là eps của FP16). Làm tròn về số gần nhất đưa $1 + u$ về lại 1 mỗi khi $u < 2^{-11}$, và 2,5e-6 nhỏ hơn thế rất nhiều. Bản thân cập nhật không bằng 0 trong FP16 (2,5e-6 là một số dưới chuẩn, lớn hơn số dưới chuẩn nhỏ nhất, $2^{-24}$): nó bị mất ở **phép cộng**. Với trọng số $w$ bất kỳ, ngưỡng tỉ lệ theo nó: cập nhật nhỏ hơn khoảng $|w| \cdot 2^{-11}$ thì bị mất, nên w = 1 đại diện cho mọi trọng số cỡ 1. Trong FP32, khoảng cách ngay trên 1 là $2^{-23}$, và cập nhật được giữ lại. (Bản thân tích lr × grad chỉ bị làm tròn về 0 trong FP16 khi nhỏ hơn một nửa số dưới chuẩn nhỏ nhất, $2^{-25}$.) Ô bên dưới in từng con số này, đọc từ chính các định dạng bằng `np.spacing` (khoảng cách tới giá trị kế tiếp của một dtype) và `np.finfo`.

# %%
# tr: the derivation's numbers, read from the formats (np.spacing: the gap to the next value of a dtype)
for name, dtype in (("FP16", np.float16), ("FP32", np.float32)):
    gap = float(np.spacing(dtype(1)))
    print(tr("{fmt}: the next value above 1 is 1 + {gap}; 1 + u rounds back to 1 for u below {half}").format(
        fmt=name, gap=num(gap, ".3g"), half=num(gap / 2, ".3g")))
half_fp16 = float(np.spacing(np.float16(1))) / 2
print(tr("the lab's update 2.5e-6 is {times} times smaller than FP16's {half}").format(
    times=num(half_fp16 / 2.5e-6, ".0f"), half=num(half_fp16, ".3g")))
zero = float(np.finfo(np.float16).smallest_subnormal) / 2
print(tr("in FP16 a product rounds to 0 below {zero} (half the smallest subnormal): at lr 2.5e-4, gradients "
         "below {grad}").format(zero=num(zero, ".3g"), grad=num(zero / 2.5e-4, ".3g")))

# %%
with skip_if_unwritten():
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
# ### Break it on purpose: mixed precision as a toggle (§8 Fallacies and Pitfalls)
#
# The chapter's pitfall: treating mixed precision as a switch that casts the model to FP16, with no FP32 master copy and no loss scaling (§6.3.2 Mixed-precision benefits). Write it yourself, then the fix, and watch both train:
#
# * `train_fp16_toggle`: `model.half()` and plain SGD on the FP16 weights, `p -= lr * p.grad`, no loss scaling;
# * `train_fp16_master`: the same run with an FP32 master copy of every weight that trains, the loss scaled before backward and the gradient unscaled in FP32, the master updated and copied into the FP16 model.
#
# The model is **the lab's own example**: one hidden layer whose weights have a standard deviation of 0.3, biases frozen (a bias starts at 0, where no update is lost), lr = 1e-5. Each update, lr × its gradient, is far below half the FP16 spacing next to its weight (next to 0.3 the spacing is $2^{-12}$, so half of it is $2^{-13}$): in FP16 it rounds away, as the lost updates of the last cell showed. In FP32 the master copy adds the 20 updates up. The cell after the runs measures both on this model: the spacing, the size of the first step's updates, and the share of them that FP16 rounds away.

# %% [markdown] tags=["vi"]
# ### Cố tình làm hỏng: độ chính xác hỗn hợp như một công tắc (§8 Ngộ nhận và cạm bẫy (Fallacies and Pitfalls))
#
# Cạm bẫy của chương sách: coi độ chính xác hỗn hợp là một công tắc ép mô hình sang FP16, không có bản sao chính FP32 và không nhân tỉ lệ mất mát (§6.3.2 Lợi ích của độ chính xác hỗn hợp (Mixed-precision benefits)). Hãy tự viết nó, rồi viết bản sửa, và xem cả hai huấn luyện:
#
# * `train_fp16_toggle`: `model.half()` và SGD thuần trên trọng số FP16, `p -= lr * p.grad`, không nhân tỉ lệ mất mát;
# * `train_fp16_master`: cùng lượt chạy đó với bản sao chính FP32 của mọi trọng số được huấn luyện, giá trị mất mát được nhân tỉ lệ trước lượt ngược và gradient được chia lại trong FP32, bản sao chính được cập nhật rồi chép vào mô hình FP16.
#
# Mô hình là **ví dụ của riêng bài lab**: một lớp ẩn với trọng số có độ lệch chuẩn 0,3, bias bị đóng băng (một bias bắt đầu từ 0, nơi không cập nhật nào bị mất), lr = 1e-5. Mỗi cập nhật, tức lr × gradient của nó, nhỏ hơn nhiều so với nửa khoảng cách FP16 cạnh trọng số của nó (cạnh 0,3 khoảng cách là $2^{-12}$, nên một nửa là $2^{-13}$): trong FP16 nó bị làm tròn mất, như các cập nhật bị mất ở ô trước. Trong FP32, bản sao chính cộng dồn 20 cập nhật đó. Ô sau các lượt chạy đo cả hai trên chính mô hình này: khoảng cách, độ lớn các cập nhật của bước đầu, và tỉ lệ cập nhật bị FP16 làm tròn mất.

# %%
toggle_model = {"kind": "mlp", "n_layers": 1, "init_std": 0.3, "act": "relu",
                "frozen": ["inp.bias", "blocks.0.fc.bias", "out.bias"]}
run = dict(config=toggle_model, batch_size=64, lr=1e-5, steps=20)
runs_fp16 = {tr("all in FP16 (the toggle)"): attempt(memory.train_fp16_toggle, **run),
             tr("FP32 master copy, loss scale 2^10"): attempt(memory.train_fp16_master, **run, loss_scale=2.0**10)}
fig, ax = plt.subplots(figsize=(7, 3.5))
for name, losses in runs_fp16.items():
    if losses is not None:
        print(tr("{run}: loss {first} -> {last}").format(run=name, first=num(losses[0], 5), last=num(losses[-1], 5)))
        ax.plot(range(1, len(losses) + 1), losses, "o-", label=name)
ax.set_xlabel(tr("step")); ax.set_ylabel(tr("loss")); ax.legend(); show()

# %%
# tr: why the toggle stalls, measured with lab3_models (not your code): first-step updates against half the FP16 spacing
probe = lab3_models.build_model(toggle_model)
lab3_models.forward_loss(probe, lab3_models.make_batch(toggle_model, run["batch_size"], seed=0)).backward()
trained = [p for p in probe.parameters() if p.requires_grad]
update = np.concatenate([run["lr"] * np.abs(p.grad.numpy()).ravel() for p in trained])
half_gap = np.concatenate([np.spacing(np.abs(p.detach().numpy()).astype(np.float16)).astype(np.float64).ravel() / 2
                           for p in trained])
gap_03 = float(np.spacing(np.float16(0.3)))
print(tr("FP16 spacing next to a weight of 0.3: {gap}; half of it: {half}").format(
    gap=num(gap_03, ".3g"), half=num(gap_03 / 2, ".3g")))
print(tr("the first step's updates (lr × gradient): median {median}, largest {largest}").format(
    median=num(float(np.median(update)), ".2g"), largest=num(float(update.max()), ".2g")))
print(tr("updates below half the FP16 spacing next to their weight: {share}").format(
    share=num(float(np.mean(update < half_gap)), ".1%")))

# %%
grader.check("fp16_toggle")

# %%
grader.check("fp16_master")

# %% [markdown] tags=["en"]
# ### Predict first
#
# 48 layers, each holding the same activations. With activation checkpointing, the forward pass keeps only $k$ checkpoints and backward rebuilds one segment at a time; place them at the best $k$. What **share of the activation memory** is saved, against keeping every layer's activations? A percentage from 0 to 100.

# %% [markdown] tags=["vi"]
# ### Dự đoán trước
#
# 48 lớp, mỗi lớp giữ cùng một lượng giá trị kích hoạt. Với lưu điểm (activation checkpointing), lượt xuôi chỉ giữ $k$ điểm lưu và lượt ngược dựng lại từng đoạn một; đặt chúng ở $k$ tốt nhất. Tiết kiệm được **bao nhiêu phần trăm bộ nhớ giá trị kích hoạt** so với giữ giá trị kích hoạt của mọi lớp? Một phần trăm từ 0 đến 100.

# %%
guess = None  # tr: your prediction, in %, from 0 to 100, in place of None
predict("checkpoint_saving", guess)

# %% [markdown] tags=["en"]
# ## 5. Checkpointing (lưu điểm) and recompute (tính lại) (§6.5.1.2 Activation checkpointing, §6.5.2 Optimal checkpoint placement strategy)
#
# The chapter's model (§6.5.2 Optimal checkpoint placement strategy, its table): $N$ layers, each holding $A$ bytes of activations, and $k$ checkpoints. The forward pass keeps only the checkpoints; backward rebuilds one segment of $N/k$ layers at a time from the checkpoint before it. So the memory to count is the **peak during backward**, $k \cdot A + (N/k) \cdot A$: every checkpoint, plus one segment rebuilt. In units of $A$ that is $k + N/k$, smallest near $k = \sqrt N$: 48 layers with 7 checkpoints keep 13.9 units of 48, a 71% saving (the chapter's ≈ 14·A and 71%; §3.3.2 Memory-computation trade-offs: $O(N)$ becomes $O(\sqrt N)$).

# %% [markdown] tags=["vi"]
# ## 5. Lưu điểm (checkpointing) và tính lại (recompute) (§6.5.1.2 Lưu điểm giá trị kích hoạt (Activation checkpointing), §6.5.2 Chiến lược đặt điểm lưu tối ưu (Optimal checkpoint placement strategy))
#
# Mô hình của chương sách (bảng trong §6.5.2 Chiến lược đặt điểm lưu tối ưu (Optimal checkpoint placement strategy)): $N$ lớp, mỗi lớp giữ $A$ byte giá trị kích hoạt, và $k$ điểm lưu. Lượt xuôi chỉ giữ các điểm lưu; lượt ngược dựng lại từng đoạn $N/k$ lớp một, từ điểm lưu đứng trước nó. Vì vậy bộ nhớ cần tính là **đỉnh trong lượt ngược**, $k \cdot A + (N/k) \cdot A$: mọi điểm lưu, cộng một đoạn đang được dựng lại. Tính theo đơn vị $A$ là $k + N/k$, nhỏ nhất khi $k$ gần $\sqrt N$: 48 lớp với 7 điểm lưu giữ 13,9 trên 48 đơn vị, tiết kiệm 71% (con số ≈ 14·A và 71% của chương sách; §3.3.2 Đánh đổi giữa bộ nhớ và tính toán (Memory-computation trade-offs): $O(N)$ thành $O(\sqrt N)$).

# %%
with skip_if_unwritten():
    N = 48
    ks = np.arange(1, N + 1)
    units = [memory.checkpoint_units(n_layers=N, n_checkpoints=int(k))["units"] for k in ks]
    best = memory.best_checkpoint_count(n_layers=N)
    kept = memory.checkpoint_units(n_layers=N, n_checkpoints=best)
    reveal("checkpoint_saving", 100 * kept["saving"])
    print(tr("best k = {k}: {units} units kept, a saving of {saving}").format(
        k=best, units=num(kept["units"], 1), saving=num(kept["saving"], ".1%")))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot(ks, units); ax.axhline(N, ls=":", c="gray", label=tr("no checkpointing"))
    ax.plot([best], [units[best - 1]], "ro", label=f"k={best}")
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))  # tr: k counts checkpoints: whole numbers
    ax.set_xlabel(tr("checkpoints k")); ax.set_ylabel(tr("layer-activations kept")); ax.legend(); show()

# %% [markdown] tags=["en"]
# Now for real, with `torch.utils.checkpoint` on a 4-block tiny GPT. Each segment of blocks keeps only its input; in backward its forward runs again. A forward **pre**-hook counts the re-runs (non-reentrant checkpointing stops a recompute as soon as it has rebuilt what backward needs, so the forward may never return). Three results per segment size:
#
# * `saved_bytes`: what the forward pass leaves behind (the checkpoints, and what the embedding and the head save). It shrinks as segments grow, but it is **not** the memory checkpointing needs: backward must rebuild a segment's activations before it can use them.
# * `peak_bytes` = `saved_bytes` + `segment_bytes`: every checkpoint plus the largest segment rebuilt, the peak as the chapter's table counts it. With one segment for the whole model it is exactly the total without checkpointing.
# * `recompute_fraction`: every block's forward runs once more in backward. A backward costs about two forwards (§1 Training Systems Fundamentals), so that is 1/3 of a step's block work: the chapter's "≈ 33%". (The chapter's table counts $N_L - k$ recomputed forwards, as if each checkpoint were a layer's output; `torch.utils.checkpoint` keeps a segment's *input* and reruns all of its blocks.)

# %% [markdown] tags=["vi"]
# Giờ làm thật, với `torch.utils.checkpoint` trên một GPT nhỏ 4 khối. Mỗi đoạn (segment) gồm các khối chỉ giữ đầu vào của nó; trong lượt ngược, lượt xuôi của đoạn đó chạy lại. Một forward **pre**-hook đếm số lần chạy lại (lưu điểm kiểu non-reentrant dừng việc tính lại ngay khi đã dựng lại xong những gì lượt ngược cần, nên lượt xuôi có thể không bao giờ trả về). Ba kết quả cho mỗi kích thước đoạn:
#
# * `saved_bytes`: những gì lượt xuôi để lại (các điểm lưu, và những gì phần embedding và phần đầu ra (head) lưu). Nó giảm khi đoạn dài ra, nhưng **không** phải bộ nhớ mà lưu điểm cần: lượt ngược phải dựng lại giá trị kích hoạt của một đoạn rồi mới dùng được.
# * `peak_bytes` = `saved_bytes` + `segment_bytes`: mọi điểm lưu cộng với đoạn lớn nhất đang được dựng lại, tức đỉnh bộ nhớ theo cách bảng của chương sách tính. Khi cả mô hình là một đoạn, nó đúng bằng tổng khi không lưu điểm.
# * `recompute_fraction`: lượt xuôi của mỗi khối chạy thêm một lần trong lượt ngược. Một lượt ngược tốn khoảng hai lượt xuôi (§1 Nền tảng hệ thống huấn luyện (Training Systems Fundamentals)), nên đó là 1/3 khối lượng tính toán của các khối trong một bước: con số "≈ 33%" của chương sách. (Bảng của chương sách tính $N_L - k$ lượt xuôi phải chạy lại, như thể mỗi điểm lưu là đầu ra của một lớp; `torch.utils.checkpoint` giữ *đầu vào* của một đoạn và chạy lại mọi khối của đoạn đó.)

# %%
with skip_if_unwritten():
    cfg = {"kind": "gpt", "n_layers": 4, "d_model": 64}
    segs = [0, 1, 2, 4]
    ck = {k: memory.measure_checkpointing(config=cfg, batch_size=8, segment_size=k) for k in segs}
    for k, r in ck.items():
        print(tr("segment_size={k}: saved {saved} KiB, peak {peak} KiB, forward calls {calls}, recomputed {extra} of the step").format(
            k=k, saved=num(r["saved_bytes"] / 1024, "7,.1f"), peak=num(r["peak_bytes"] / 1024, "7,.1f"),
            calls=nums(r["forward_calls"]), extra=num(r["recompute_fraction"], ".0%")))
        print(tr("    loss {loss}, gradient norm {norm}").format(loss=num(r["loss"], 4), norm=num(r["grad_norm"], 6)))
    labels = [(tr("no checkpointing") if k == 0 else tr("every {k}").format(k=k)) for k in segs]
    x = np.arange(len(segs))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(x - 0.2, [ck[k]["saved_bytes"] / 1024 for k in segs], 0.4, label=tr("saved by the forward pass"))
    ax.bar(x + 0.2, [ck[k]["peak_bytes"] / 1024 for k in segs], 0.4, label=tr("peak during backward"))
    ax.set_xticks(x, labels)
    ax.set_xlabel(tr("checkpoint segments")); ax.set_ylabel(tr("activations (KiB)")); ax.legend(); show()

# %% [markdown] tags=["en"]
# A checkpoint is not a whole layer. Here it is one block's input, $B \times S \times d$ values, while a block saves many more tensors for backward (its LayerNorms, Q, K and V, the $S \times S$ scores and softmax, the GELU input). The chapter's $k \cdot A$ counts every checkpoint as a full layer's $A$ (its "simplified model"); measured, a checkpoint costs far less, so the peak is lowest with **short** segments, not at $\sqrt N$. Below, a 12-block tiny GPT: the measured peak in units of one block rebuilt ($A$, the `segment_bytes` of one-block segments), against the chapter's $k + N/k$. (Korthikanti et al.'s "full recomputation", Part 3, is the one-block case: $2\,sbh$ per layer kept.)

# %% [markdown] tags=["vi"]
# Một điểm lưu không phải là cả một lớp. Ở đây nó là đầu vào của một khối, $B \times S \times d$ giá trị, trong khi một khối lưu nhiều tensor hơn thế cho lượt ngược (các LayerNorm, Q, K và V, ma trận điểm $S \times S$ và softmax, đầu vào của GELU). $k \cdot A$ của chương sách tính mỗi điểm lưu bằng trọn $A$ của một lớp ("mô hình đơn giản hoá" của nó); đo thực tế, một điểm lưu tốn ít hơn nhiều, nên đỉnh bộ nhớ thấp nhất với các đoạn **ngắn**, không phải ở $\sqrt N$. Bên dưới là một GPT nhỏ 12 khối: đỉnh đo được, tính theo đơn vị một khối được dựng lại ($A$, tức `segment_bytes` khi mỗi đoạn có một khối), đặt cạnh $k + N/k$ của chương sách. ("Tính lại toàn bộ" của Korthikanti và cộng sự, Phần 3, chính là trường hợp một khối: giữ $2\,sbh$ cho mỗi lớp.)

# %%
with skip_if_unwritten():
    cfg12 = {"kind": "gpt", "n_layers": 12, "d_model": 32}
    sizes = [1, 2, 3, 4, 6, 12]
    runs = {c: memory.measure_checkpointing(config=cfg12, batch_size=4, segment_size=c) for c in sizes}
    A = runs[1]["segment_bytes"]  # tr: one block rebuilt
    checkpoints = [12 // c for c in sizes]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot(checkpoints, [runs[c]["peak_bytes"] / A for c in sizes], "o-", label=tr("measured peak / A"))
    ax.plot(checkpoints, [memory.checkpoint_units(n_layers=12, n_checkpoints=k)["units"] for k in checkpoints], "s--",
            label=tr("the chapter's k + N/k"))
    ax.set_xlabel(tr("checkpoints k (segments of N/k blocks)")); ax.set_ylabel(tr("units of one block's activations"))
    ax.legend(); show()

# %%
grader.check("checkpointing")

# %% [markdown] tags=["en"]
# **Reflection** (one line, marked by hand with the other reflections): how close was your guess to the saving at the best $k$, and why is the best $k$ near $\sqrt N$?

# %% [markdown] tags=["vi"]
# **Suy ngẫm** (một dòng, chấm tay cùng các suy ngẫm khác): dự đoán của bạn gần mức tiết kiệm ở $k$ tốt nhất đến đâu, và vì sao $k$ tốt nhất nằm gần $\sqrt N$?

# %% [markdown] tags=["en", "answer:reflections/checkpoint_saving"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/checkpoint_saving"]
# *Một dòng ở đây.*

# %% [markdown] tags=["en"]
# ### Predict first
#
# GPT-2 XL (1.5e9 parameters, 48 layers) with mixed-precision Adam, micro-batch 4, sequence 1024, **no checkpointing**: does it fit in a 32 GiB (34.4 GB) V100: a) yes, b) no?

# %% [markdown] tags=["vi"]
# ### Dự đoán trước
#
# GPT-2 XL (1,5e9 tham số, 48 lớp) với Adam độ chính xác hỗn hợp, micro-batch 4, độ dài chuỗi 1024, **không lưu điểm**: nó có vừa một V100 32 GiB (34,4 GB) không: a) có, b) không?

# %%
guess = None  # tr: your prediction: a (yes) or b (no), in place of None
predict("xl_mixed_fits", guess)

# %% [markdown] tags=["en"]
# ## 6. GPT-2 XL on a V100 (§6.3.2 Mixed-precision benefits, §6.7 GPT-2 optimization walkthrough)
#
# GPT-2 XL (1.5e9 parameters, 48 layers) with micro-batch 4 and sequence 1024 on a 32 GiB = 34.4 GB V100, as the chapter gives it:
#
# | Step | Memory | Fits? |
# |---|---|---|
# | FP32 baseline | 95.7 GB | no |
# | mixed precision | 59.9 GB | no |
# | + checkpoint every 4 layers (activations ÷4) | 33.0 GB | yes |
#
# **The ÷4 is the chapter's own assumption.** §3.3.1 Activation memory requirements says checkpointing cuts activation memory by 75%, §6.3.2 Mixed-precision benefits divides the activations by 4, and §6.7 GPT-2 optimization walkthrough says "checkpointing every four layers reduces activation storage by 4×". The chapter's rule from §6.5.2 Optimal checkpoint placement strategy (Part 5) gives another number for the same case: a checkpoint every 4 of 48 layers is $k = 12$ checkpoints and 4-layer segments, $12 + 4 = 16$ of 48 units, **÷3** (a 67% cut), and 24 + 11.95 = **35.95 GB, which does not fit**. The rule's best, $k = 7$ (13.9 units, 71%), gives 34.35 GB: it fits, by about 7 MB. (The chapter's summary, §9 Summary, says checkpointing cuts stored activations "3–4×".) `v100_walkthrough` keeps the chapter's ÷4, so that it reproduces the chapter's table; the cell prints the $k + N/k$ figures beside it.

# %% [markdown] tags=["vi"]
# ## 6. GPT-2 XL trên một V100 (§6.3.2 Lợi ích của độ chính xác hỗn hợp (Mixed-precision benefits), §6.7 Tối ưu GPT-2 từng bước (GPT-2 optimization walkthrough))
#
# GPT-2 XL (1,5e9 tham số, 48 lớp) với micro-batch 4 và độ dài chuỗi 1024 trên một V100 32 GiB = 34,4 GB, như chương sách đưa ra:
#
# | Bước | Bộ nhớ | Vừa không? |
# |---|---|---|
# | FP32 cơ sở (baseline) | 95,7 GB | không |
# | độ chính xác hỗn hợp | 59,9 GB | không |
# | + lưu điểm mỗi 4 lớp (giá trị kích hoạt ÷4) | 33,0 GB | có |
#
# **Phép chia cho 4 là giả định của chính chương sách.** §3.3.1 Yêu cầu bộ nhớ cho giá trị kích hoạt (Activation memory requirements) nói lưu điểm giảm 75% bộ nhớ giá trị kích hoạt, §6.3.2 Lợi ích của độ chính xác hỗn hợp (Mixed-precision benefits) chia giá trị kích hoạt cho 4, và §6.7 Tối ưu GPT-2 từng bước (GPT-2 optimization walkthrough) nói "lưu điểm mỗi bốn lớp giảm bộ nhớ giá trị kích hoạt 4 lần". Quy tắc của chính chương sách ở §6.5.2 Chiến lược đặt điểm lưu tối ưu (Optimal checkpoint placement strategy) (Phần 5) cho một con số khác cho cùng trường hợp: một điểm lưu mỗi 4 trong 48 lớp là $k = 12$ điểm lưu và các đoạn 4 lớp, $12 + 4 = 16$ trên 48 đơn vị, tức **÷3** (giảm 67%), và 24 + 11,95 = **35,95 GB, không vừa**. Giá trị tốt nhất của quy tắc, $k = 7$ (13,9 đơn vị, 71%), cho 34,35 GB: vừa, dư khoảng 7 MB. (Phần tổng kết của chương sách, §9 Tổng kết (Summary), nói lưu điểm giảm giá trị kích hoạt được lưu "3–4 lần".) `v100_walkthrough` giữ phép chia cho 4 của chương sách để tái tạo đúng bảng của nó; ô bên dưới in các con số theo $k + N/k$ bên cạnh.

# %%
with skip_if_unwritten():
    V100 = 32 * 2**30
    walk = memory.v100_walkthrough(n_params=1_500_000_000, n_layers=48, s=1024, b=4, h=1600, a=25,
                                   checkpoint_every=4, capacity_bytes=V100)
    reveal("xl_mixed_fits", "yes" if walk["fits"]["mixed_precision"] else "no")
    steps = ["fp32_baseline", "mixed_precision", "checkpointed"]
    for s in steps:
        print(tr("{step}: {gb} GB, fits: {fits}").format(step=f"{s:>16}", gb=num(walk[s] / GB, "5.1f"),
                                                         fits=tr("yes") if walk["fits"][s] else tr("no")))

    # tr: the same step by the chapter's k + N/k rule (§6.5.2 Optimal checkpoint placement strategy): every 4 layers is k = 12 checkpoints; and the best k
    mixed_state = memory.model_state_bytes(n_params=1_500_000_000, scheme="mixed_adam")
    fp16_acts = memory.activation_bytes(s=1024, b=4, h=1600, a=25, n_layers=48)
    rule = {}
    for k in (48 // 4, memory.best_checkpoint_count(n_layers=48)):
        kept_units = memory.checkpoint_units(n_layers=48, n_checkpoints=k)["units"]
        rule[k] = mixed_state + fp16_acts * kept_units / 48
        print(tr("k + N/k with k = {k}: {units} of 48 units, {gb} GB, fits: {fits}").format(
            k=k, units=num(kept_units, 1), gb=num(rule[k] / GB, "5.2f"), fits=tr("yes") if rule[k] <= V100 else tr("no")))

    state = [memory.model_state_bytes(n_params=1_500_000_000, scheme=sc) / GB
             for sc in ("fp32_adam", "mixed_adam", "mixed_adam", "mixed_adam")]
    totals = [walk[s] / GB for s in steps] + [rule[12] / GB]
    acts = [t - m for t, m in zip(totals, state)]
    names = [tr("FP32 baseline"), tr("mixed precision"), tr("+ checkpoint every 4 layers"),
             tr("every 4 layers, by k + N/k")]  # tr: the steps, as in the table above, and the rule's figure
    names = [textwrap.fill(name, 18) for name in names]  # tr: on two lines: four labels side by side
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.bar(names, state, label=tr("weights + gradients + optimizer state"))
    ax.bar(names, acts, bottom=state, label=TERM["activations"])
    ax.axhline(V100 / GB, c="r", ls="--", label=tr("V100 32 GiB = 34.4 GB"))
    ax.set_ylabel("GB"); ax.set_title("GPT-2 XL, B=4, S=1024"); ax.legend(); show()

# %%
grader.check("v100")

# %% [markdown] tags=["en"]
# **Reflection** (one line, marked by hand with the other reflections): what did you expect, and which part of the 59.9 GB decides it: the model state or the activations?

# %% [markdown] tags=["vi"]
# **Suy ngẫm** (một dòng, chấm tay cùng các suy ngẫm khác): bạn đã nghĩ thế nào, và phần nào của 59,9 GB quyết định điều đó: trạng thái mô hình hay giá trị kích hoạt?

# %% [markdown] tags=["en", "answer:reflections/xl_mixed_fits"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/xl_mixed_fits"]
# *Một dòng ở đây.*

# %% [markdown] tags=["en"]
# ## How to check and submit
#
# * Check your work: in a terminal, run `autograder check lab3`. It runs the public tests against your `memory.py` and prints points per question with hints. In this notebook, the `grader.check("...")` cells run the same public tests one question at a time; `grader.check_all()` runs them all.
# * The public tests are only a sample: more **hidden tests** run at grading, on other models, optimizers, batch sizes and shapes, and they compare with PyTorch itself (saved-tensor hooks, `torch.optim`, `torch.utils.checkpoint`). Follow the docstrings exactly.
# * Submit: run the hand-in cell at the end of this notebook, or `autograder submit lab3` in a terminal. The zip holds `memory.py`, this notebook with its outputs and your answers, your predictions (`predictions.json`) and `MANIFEST.json`; `lab3_models.py` is supplied by the grader.

# %% [markdown] tags=["vi"]
# ## Cách kiểm tra và nộp bài
#
# * Kiểm tra bài làm: trong terminal, chạy `autograder check lab3`. Lệnh này chạy các bài kiểm thử công khai trên `memory.py` của bạn và in điểm từng câu hỏi kèm gợi ý. Trong sổ tay này, các ô `grader.check("...")` chạy cùng các bài kiểm thử công khai đó, mỗi lần một câu hỏi; `grader.check_all()` chạy tất cả.
# * Các bài kiểm thử công khai chỉ là một mẫu: khi chấm điểm còn nhiều **bài kiểm thử ẩn** (hidden tests) chạy thêm, trên các mô hình, bộ tối ưu, kích thước batch và shape khác, và chúng so sánh với chính PyTorch (saved-tensor hook, `torch.optim`, `torch.utils.checkpoint`). Hãy làm đúng theo docstring.
# * Nộp bài: chạy ô nộp bài ở cuối sổ tay này, hoặc `autograder submit lab3` trong terminal. Tệp zip chứa `memory.py`, sổ tay này cùng kết quả chạy và câu trả lời của bạn, các dự đoán của bạn (`predictions.json`) và `MANIFEST.json`; `lab3_models.py` do bộ chấm cung cấp.
