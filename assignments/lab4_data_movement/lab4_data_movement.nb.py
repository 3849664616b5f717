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
# # Lab 4: data movement
#
# *Machine Learning Systems*, Vol. I, Chapter 8 (Model Training), sections 3–8.
#
# A GPU only trains as fast as data reaches it. In this lab you follow the data:
#
# 1. **The slowest stage wins**: rates, utilization, and what overlapping the stages buys (`pipeline.py`).
# 2. **Prefetching** with a background thread and a bounded queue, and where the GIL stops it (`pipeline.py`).
# 3. **Tiled attention** with an online softmax: exact, without ever holding the S×S score matrix (`attention.py`).
# 4. **Ring AllReduce**, simulated: the sum on every rank for 2(N−1)/N × M bytes per rank (`allreduce.py`).
# 5. **The network wall**: 7B FP16 gradients on 8 GPUs, Ethernet against NVLink (`allreduce.py`).
#
# Fill in the functions in the three `.py` files next to this notebook; each cell below calls them. The docstrings are the contract: they fix every unit and convention the grader relies on. After you edit a file, the next cell you run uses the new code (the setup cell turns on autoreload).

# %% [markdown] tags=["vi"]
# # Lab 4: di chuyển dữ liệu
#
# *Machine Learning Systems*, Tập I, Chương 8 (Huấn luyện mô hình), mục 3–8.
#
# GPU chỉ huấn luyện nhanh được bằng tốc độ dữ liệu đến với nó. Trong bài lab này, bạn đi theo dòng dữ liệu:
#
# 1. **Chặng chậm nhất quyết định** (quy tắc chặng chậm nhất): tốc độ, mức sử dụng, và lợi ích của việc chồng lấp các chặng (`pipeline.py`).
# 2. **Nạp trước** bằng một luồng nền và một hàng đợi có giới hạn (bounded queue), và chỗ GIL chặn nó lại (`pipeline.py`).
# 3. **Attention chia khối** với softmax trực tuyến: chính xác, mà không bao giờ giữ ma trận điểm attention S×S (`attention.py`).
# 4. **AllReduce vòng**, mô phỏng: tổng có trên mọi rank, với 2(N−1)/N × M byte mỗi rank (`allreduce.py`).
# 5. **Tường mạng**: gradient FP16 của mô hình 7B trên 8 GPU, Ethernet so với NVLink (`allreduce.py`).
#
# Hãy viết các hàm trong ba tệp `.py` nằm cạnh sổ tay thực hành này; mỗi ô bên dưới gọi đến chúng. Docstring là bản hợp đồng: chúng cố định mọi đơn vị và quy ước mà bộ chấm dựa vào. Sau khi bạn sửa một tệp, ô tiếp theo bạn chạy sẽ dùng mã mới (ô thiết lập bật autoreload).

# %% [markdown] tags=["en"]
# ### Setup, and checking as you go
#
# The next cell finds this lab's files (also when the notebook was opened somewhere else, e.g. on Colab) and starts
# [otter-grader](https://otter-grader.readthedocs.io)'s checker. After each exercise a cell `grader.check("...")`
# runs that question's **public tests** on your files in this folder and shows what failed: the same tests as
# `autograder check lab4`, one question at a time.

# %% [markdown] tags=["vi"]
# ### Thiết lập, và kiểm tra trong lúc làm
#
# Ô tiếp theo tìm các tệp của bài lab này (kể cả khi sổ tay được mở ở nơi khác, ví dụ trên Colab) và khởi động
# bộ kiểm tra của [otter-grader](https://otter-grader.readthedocs.io). Sau mỗi bài tập, một ô `grader.check("...")`
# chạy các **bài kiểm thử công khai** (public tests) của câu hỏi đó trên các tệp của bạn trong thư mục này và cho biết
# những gì chưa đạt: cùng các bài kiểm thử như `autograder check lab4`, từng câu hỏi một.
#
# Các thông báo do `grader.check` in ra bằng tiếng Việt ở mọi nơi (Jupyter, VS Code, Colab): ô thiết lập của sổ tay
# này (`*.vi.ipynb`) tự đặt ngôn ngữ của nó.

# %% tags=["setup"]
LAB, MODULE = "lab4_data_movement", "pipeline"

# %%
import importlib
import time
import tracemalloc

import matplotlib.pyplot as plt
import numpy as np

import allreduce
import attention
import lab4_sim  # shipped: the recorded loader work and the simulated ring network
import pipeline
from autograder.grading.notebook_text import num, nums, show, tr  # what the cells print and plot, in the notebook's language

for module in (pipeline, attention, allreduce):  # pick up your latest edits
    importlib.reload(module)

rng = np.random.default_rng(0)  # random inputs for the attention cells (here, so one failing cell cannot hide it)

# %% [markdown] tags=["en"]
# ## 1. The slowest stage wins (sections 4–5)
#
# Stages of an input pipeline (storage, preprocessing, transfer, compute) run concurrently, so the pipeline delivers samples at the rate of its slowest stage: $R = \min_k R_k$. The accelerator's utilization is $R / R_\text{compute}$. The chapter's example: preprocessing at 200 img/s feeding a 1000 img/s accelerator uses 20% of it.
#
# Storage: $R_\text{storage} = \min(\text{disk}, \text{network}) \times$ access factor (about 0.1 for random reads); preprocessing: $R = \text{workers} / t_\text{transform}$.

# %% [markdown] tags=["vi"]
# ## 1. Chặng chậm nhất quyết định (mục 4–5)
#
# Các chặng của một quy trình nạp dữ liệu (lưu trữ, tiền xử lý, truyền, tính toán) chạy đồng thời, nên quy trình cung cấp mẫu với tốc độ của chặng chậm nhất: $R = \min_k R_k$. Mức sử dụng của bộ tăng tốc là $R / R_\text{compute}$. Ví dụ của chương: tiền xử lý ở 200 img/s cấp dữ liệu cho một bộ tăng tốc 1000 img/s thì chỉ dùng 20% năng lực của nó.
#
# Lưu trữ: $R_\text{storage} = \min(\text{disk}, \text{network}) \times$ hệ số truy cập (khoảng 0,1 với đọc ngẫu nhiên); tiền xử lý: $R = \text{workers} / t_\text{transform}$.

# %%
STAGE = {"storage": tr("storage"), "preprocess": tr("preprocessing"), "compute": tr("compute"),  # stages, as printed
         "tokenize": tr("tokenize"), "transfer": tr("PCIe transfer"), "forward": tr("forward pass")}
nvme_random = pipeline.storage_rate(disk_rate=7e9, network_rate=12.5e9, access_factor=0.1)
print(tr("NVMe Gen4, random access: {rate} GB/s").format(rate=num(nvme_random / 1e9, 2)))
print(tr("preprocessing, 8 workers at 4 ms per image: {rate} img/s").format(
    rate=num(pipeline.preprocess_rate(workers=8, t_transform_s=0.004))))
slowest = pipeline.pipeline_rate(stage_rates={"storage": 700.0, "preprocess": 200.0, "compute": 1000.0})
print(tr("storage 700, preprocessing 200, compute 1000 img/s: {rate} img/s, bottleneck {stage}, "
         "utilization {busy}").format(rate=num(slowest["rate"]), stage=STAGE.get(slowest["bottleneck"], slowest["bottleneck"]),
                                      busy=num(slowest["utilization"], ".0%")))

# %% [markdown] tags=["en"]
# In time per iteration: without overlap the stages run one after another and $t = \sum_k t_k$; with overlap (prefetching) they work on different batches at once and $t = \max_k t_k$.
#
# The chapter's GPT-2 pipeline: a batch is 32 × 1024 = 32,768 tokens. Tokenizing at 500K tokens/s takes 65.5 ms on one core and 8.2 ms on 8; the int64 batch is 262 KB and crosses PCIe Gen3 in 0.017 ms; the forward pass takes 80 ms.

# %% [markdown] tags=["vi"]
# Tính theo thời gian mỗi vòng lặp: không chồng lấp thì các chặng chạy lần lượt và $t = \sum_k t_k$; có chồng lấp (nạp trước) thì chúng cùng lúc làm việc trên các batch khác nhau và $t = \max_k t_k$.
#
# Quy trình GPT-2 của chương: một batch gồm 32 × 1024 = 32.768 token. Token hoá ở 500K token/s mất 65,5 ms trên một lõi và 8,2 ms trên 8 lõi; batch int64 nặng 262 KB và đi qua PCIe Gen3 trong 0,017 ms; lượt xuôi mất 80 ms.

# %%
for workers in (1, 8):
    g = pipeline.gpt2_pipeline(workers=workers)
    print(tr("{workers} worker(s): tokenize {tokenize} ms, transfer {transfer} ms, forward pass {forward} ms -> "
             "a step takes {serial} ms without overlap ({busy_serial} busy), {overlap} ms with overlap "
             "({busy_overlap} busy); bottleneck: {stage}").format(
        workers=workers, tokenize=num(g["tokenize_s"] * 1e3, 1), transfer=num(g["transfer_s"] * 1e3, 3),
        forward=num(g["forward_s"] * 1e3, 0), serial=num(g["step_s_no_overlap"] * 1e3, 1),
        busy_serial=num(g["utilization_no_overlap"], ".0%"), overlap=num(g["step_s_overlap"] * 1e3, 1),
        busy_overlap=num(g["utilization_overlap"], ".0%"), stage=STAGE.get(g["bottleneck"], g["bottleneck"])))

fig, ax = plt.subplots(figsize=(7, 2.2))
for row, workers in enumerate((1, 8)):
    g = pipeline.gpt2_pipeline(workers=workers)
    left = 0.0
    for stage, color in (("tokenize", "tab:orange"), ("transfer", "tab:green"), ("forward", "tab:blue")):
        ax.barh(row, g[f"{stage}_s"] * 1e3, left=left, color=color, label=STAGE[stage] if row == 0 else None)
        left += g[f"{stage}_s"] * 1e3
ax.set_yticks([0, 1], [tr("1 worker"), tr("8 workers")])
ax.set_xlim(0, 210)
ax.set_xlabel(tr("ms per batch, stages in sequence (no overlap)"))
ax.legend(loc="center right", fontsize=8)
plt.tight_layout()
show()

# %%
grader.check("slowest_stage")


# %% [markdown] tags=["en"]
# ## 2. Prefetching, and the GIL (section 6)
#
# `run_loader` loads and computes `n_items` items, either in one loop or with a background `threading.Thread` that loads ahead into a `queue.Queue(maxsize=queue_size)`. It does the work through the shipped `lab4_sim.Recorder`: `rec.load(i, ...)` and `rec.compute(item, ...)` do one simulated stage each and record when it started and ended, in which thread and in which process. With `kind="sleep"` both stages are waits that release the GIL (disk, network, a GPU kernel): loading hides behind compute and the total approaches $n \cdot \max(t_\text{load}, t_\text{compute})$ instead of the sum (the chapter's example cuts 105 s to 55 s). The timeline below is drawn from those events.
#
# The grader reads the same events. It checks their order, never their speed: that some item $i+1$ is loaded while item $i$ is computed, that the loader never runs more than `queue_size` + 1 items ahead, and which thread and process did the work. A busy machine stretches the bars, but it cannot reorder them.

# %% [markdown] tags=["vi"]
# ## 2. Nạp trước, và GIL (mục 6)
#
# `run_loader` nạp và tính `n_items` phần tử, hoặc trong một vòng lặp duy nhất, hoặc với một luồng nền `threading.Thread` nạp trước vào một `queue.Queue(maxsize=queue_size)`. Hàm làm việc qua `lab4_sim.Recorder` có sẵn: `rec.load(i, ...)` và `rec.compute(item, ...)` mỗi lệnh làm một chặng mô phỏng và ghi lại lúc bắt đầu, lúc kết thúc, luồng nào và tiến trình nào đã làm. Với `kind="sleep"`, cả hai chặng đều là những lần chờ có nhả GIL (đĩa, mạng, một kernel GPU): việc nạp được ẩn sau việc tính toán và tổng thời gian tiến gần tới $n \cdot \max(t_\text{load}, t_\text{compute})$ thay vì tổng của hai thời gian (ví dụ của chương giảm 105 s xuống 55 s). Biểu đồ dòng thời gian dưới đây được vẽ từ các sự kiện đó.
#
# Bộ chấm đọc cùng các sự kiện ấy. Nó kiểm tra thứ tự của chúng, không bao giờ kiểm tra tốc độ: có phần tử $i+1$ nào được nạp trong khi phần tử $i$ đang được tính không, bộ nạp không bao giờ chạy trước quá `queue_size` + 1 phần tử, và luồng, tiến trình nào đã làm việc. Một máy bận làm các thanh dài ra, nhưng không thể đảo thứ tự của chúng.

# %%
def span(report):
    """Seconds from the Recorder's start to the last event's end."""
    return max(e["end"] for e in report["events"])

kw = dict(n_items=6, load_work=0.03, compute_work=0.03, kind="sleep", queue_size=2)
reports = {prefetch: pipeline.run_loader(prefetch=prefetch, **kw) for prefetch in (False, True)}
print(tr("sequential {serial} s, prefetch {prefetch} s: {ratio}x (ideal 0.5x)").format(
    serial=num(span(reports[False]), 3), prefetch=num(span(reports[True]), 3),
    ratio=num(span(reports[True]) / span(reports[False]), 2)))
for prefetch, report in reports.items():
    loaders = {e["thread"] for e in report["events"] if e["stage"] == "load"}
    print(tr("prefetch={prefetch}: loads in thread(s) {loaders}, computes in the calling thread {thread}").format(
        prefetch=prefetch, loaders=sorted(loaders), thread=report["thread"]))

fig, axes = plt.subplots(2, 1, figsize=(8, 3), sharex=True)
for ax, prefetch, title in ((axes[0], False, tr("sequential")), (axes[1], True, tr("prefetch thread"))):
    for e in reports[prefetch]["events"]:
        row, color = (1, "tab:orange") if e["stage"] == "load" else (0, "tab:blue")
        ax.broken_barh([(e["start"], e["end"] - e["start"])], (row, 0.8), color=color, edgecolor="white")
    ax.set_yticks([0.4, 1.4], [STAGE["compute"], tr("load")])
    ax.set_title(title, fontsize=9)
axes[1].set_xlabel(tr("seconds since the Recorder was created"))
plt.tight_layout()
show()

# %% [markdown] tags=["en"]
# Now make loading **pure-Python CPU work** (`kind="python_cpu"`: a bytecode loop that holds the GIL, like decoding or augmenting samples in plain Python). Only one thread can run Python bytecode at a time, so the same prefetch thread buys nothing.
#
# Measure it yourself: the cell prints wall time and CPU time per second of wall time. Under the GIL a call can use at most about **one** CPU-second per second however many threads it starts; two loaders truly in parallel (processes) would approach two. Timings on a shared machine are noisy, so the grader does not time this; it checks from the events that your loader is a thread of the same process, which is the setting the GIL governs.
#
# **Question for your write-up:** why does the thread help in the first case and not in the second? What does PyTorch's `DataLoader(num_workers=...)` do instead?

# %% [markdown] tags=["vi"]
# Bây giờ hãy biến việc nạp thành **công việc CPU thuần Python** (`kind="python_cpu"`: một vòng lặp bytecode giữ GIL, giống như giải mã hay tăng cường (augment) mẫu bằng Python thuần). Tại mỗi thời điểm chỉ một luồng được chạy bytecode Python, nên cũng luồng nạp trước ấy chẳng mang lại gì.
#
# Hãy tự đo: ô này in thời gian thực (wall time) và thời gian CPU trên mỗi giây thời gian thực. Dưới GIL, một lần gọi dùng được tối đa khoảng **một** giây CPU mỗi giây, dù khởi chạy bao nhiêu luồng; hai bộ nạp thực sự song song (tiến trình) sẽ tiến gần tới hai. Trên một máy dùng chung, số đo thời gian bị nhiễu, nên bộ chấm không đo thời gian ở đây; nó kiểm tra từ các sự kiện rằng bộ nạp của bạn là một luồng của cùng tiến trình, đúng là tình huống mà GIL chi phối.
#
# **Câu hỏi cho bài báo cáo của bạn:** vì sao luồng giúp ích trong trường hợp thứ nhất mà không giúp trong trường hợp thứ hai? Thay vào đó, `DataLoader(num_workers=...)` của PyTorch làm gì?

# %%
kw = dict(n_items=8, load_work=1_000_000, compute_work=1_000_000, kind="python_cpu", queue_size=2)
for prefetch in (False, True):
    c0, t0 = time.process_time(), time.perf_counter()  # CPU time of all this process's threads; wall time
    pipeline.run_loader(prefetch=prefetch, **kw)
    cpu, t = time.process_time() - c0, time.perf_counter() - t0
    print(tr("pure-Python loading, prefetch={prefetch}: wall time {wall} s, CPU {cpu} s, "
             "{ratio} CPU-seconds per second").format(prefetch=prefetch, wall=num(t, 3), cpu=num(cpu, 3),
                                                     ratio=num(cpu / t, 2)))

# %%
grader.check("prefetch")

# %% [markdown] tags=["en"]
# ## 3. Tiled attention with an online softmax (section 6)
#
# Standard attention materializes the S×S score matrix: 64 MiB per head at S = 4096 in FP32, against 64 KiB for one 128×128 tile. `tiled_attention` walks over K/V in blocks and keeps, per query row, a running max $m$, a running normaliser $\ell$ and a running output; when a block raises $m$, the old $\ell$ and output are rescaled by $e^{m_\text{old} - m_\text{new}}$. The result is exact.

# %% [markdown] tags=["vi"]
# ## 3. Attention chia khối với softmax trực tuyến (mục 6)
#
# Attention tiêu chuẩn tạo ra trọn vẹn (materialize) ma trận điểm attention S×S: 64 MiB mỗi head ở S = 4096 với FP32, so với 64 KiB cho một ô (tile) 128×128. `tiled_attention` duyệt qua K/V theo từng khối và giữ, cho mỗi hàng truy vấn (query), một giá trị max tích luỹ $m$, một hệ số chuẩn hoá tích luỹ $\ell$ và một đầu ra tích luỹ; khi một khối làm tăng $m$, $\ell$ cũ và đầu ra cũ được nhân lại với $e^{m_\text{old} - m_\text{new}}$. Kết quả là chính xác.

# %%
score = attention.attention_score_bytes(S=4096, block_size=128, bytes_per_element=4)
print(tr("S = 4096, FP32: the whole score matrix {full} bytes, one 128×128 tile {tile} bytes").format(
    full=num(score["full_bytes"]), tile=num(score["tile_bytes"])))

q, k, v = (rng.standard_normal((2, 100, 16)) for _ in range(3))  # 2 heads; 100 is not a multiple of 32
for causal in (False, True):
    err = np.abs(attention.tiled_attention(q=q, k=k, v=v, causal=causal, block_size=32)
                 - attention.standard_attention(q=q, k=k, v=v, causal=causal)).max()
    print(tr("causal={causal}: max abs difference {error}").format(causal=causal, error=num(err, ".1e")))


# %% [markdown] tags=["en"]
# Peak memory against S, measured with `tracemalloc` (it sees numpy's allocations). The standard version grows like S², the tiled one like S·d plus one tile. The grader measures how much the peak grows from S = 1024 to S = 2048: less than 1/8 of the S×S float64 matrix at S = 2048 (4 MiB), beyond the larger inputs and output.

# %% [markdown] tags=["vi"]
# Bộ nhớ đỉnh theo S, đo bằng `tracemalloc` (nó thấy được các lần cấp phát của numpy). Bản tiêu chuẩn tăng như S², bản chia khối tăng như S·d cộng thêm một ô. Bộ chấm đo mức tăng của bộ nhớ đỉnh từ S = 1024 lên S = 2048: phải dưới 1/8 ma trận S×S float64 ở S = 2048 (4 MiB), ngoài phần đầu vào và đầu ra lớn hơn.

# %%
def peak_mib(fn, **kw):
    tracemalloc.start()
    fn(**kw)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20

Ss = [256, 512, 1024, 2048]
std_mib, tiled_mib = [], []
for S in Ss:
    q, k, v = (rng.standard_normal((S, 64)) for _ in range(3))
    std_mib.append(peak_mib(attention.standard_attention, q=q, k=k, v=v))
    tiled_mib.append(peak_mib(attention.tiled_attention, q=q, k=k, v=v, block_size=128))

fig, ax = plt.subplots(figsize=(5, 3.2))
ax.loglog(Ss, std_mib, "o-", label=tr("standard (S×S scores)"))
ax.loglog(Ss, tiled_mib, "s-", label=tr("tiled, block 128"))
ax.loglog(Ss, [S * S * 8 / 2**20 for S in Ss], "k:", label=tr("one S×S float64 matrix"))
ax.set_xticks(Ss, [str(S) for S in Ss])  # the measured lengths, without crowded minor labels
ax.xaxis.set_minor_locator(plt.NullLocator())
ax.set_xlabel(tr("sequence length S"))
ax.set_ylabel(tr("peak extra memory (MiB)"))
ax.legend(fontsize=8)
plt.tight_layout()
print(tr("S=1024 -> 2048: tiled grows by {tiled} MiB, standard by {standard} MiB; budget {budget} MiB").format(
    tiled=num(tiled_mib[-1] - tiled_mib[-2], 2), standard=num(std_mib[-1] - std_mib[-2], 1),
    budget=num(2048 * 2048 * 8 / 8 / 2**20, 0)))
show()

# %%
grader.check("tiled_attention")

# %% [markdown] tags=["en"]
# ## 4. Ring AllReduce (section 7)
#
# Each of N ranks holds a gradient buffer of M elements. The ring splits it into N chunks: N−1 steps of reduce-scatter, after which every rank owns the full sum of one chunk, then N−1 steps of all-gather. The result is the **sum** on every rank (not the mean), and each rank sends 2(N−1)/N × M elements, that is 2(N−1)/N × 4M bytes in float32, almost independent of N.
#
# You write what **one rank does at one step**: `ring_send` (which chunk goes to the next rank) and `ring_receive` (add it in, or overwrite). The shipped `lab4_sim.run_ring` plays all N ranks: each call sees only that rank's own buffer, and the messages travel over a simulated network that carries them only from rank r to rank (r + 1) mod N and counts the bytes every rank sends. The grader runs the same simulation and watches every message. Below: 3 ranks, 6 elements, step by step.

# %% [markdown] tags=["vi"]
# ## 4. AllReduce vòng (mục 7)
#
# Mỗi rank trong N rank giữ một bộ đệm gradient gồm M phần tử. Thuật toán vòng chia bộ đệm thành N mảnh (chunk): N−1 bước reduce-scatter, sau đó mỗi rank sở hữu tổng đầy đủ của một mảnh, rồi N−1 bước all-gather. Kết quả là **tổng** trên mọi rank (không phải trung bình), và mỗi rank gửi 2(N−1)/N × M phần tử, tức 2(N−1)/N × 4M byte với float32, gần như không phụ thuộc vào N.
#
# Bạn viết việc **một rank làm ở một bước**: `ring_send` (mảnh nào đi tới rank kế tiếp) và `ring_receive` (cộng vào, hoặc ghi đè). `lab4_sim.run_ring` có sẵn mô phỏng cả N rank: mỗi lần gọi chỉ thấy bộ đệm của chính rank đó, và các thông điệp đi qua một mạng mô phỏng chỉ chuyển chúng từ rank r tới rank (r + 1) mod N và đếm số byte mỗi rank gửi. Bộ chấm chạy cùng mô phỏng đó và theo dõi từng thông điệp. Dưới đây: 3 rank, 6 phần tử, từng bước một.

# %%
N = 3
buffers = [np.array([1, 2, 3, 4, 5, 6]) * 10**r for r in range(N)]  # rank r: digits in the 10**r place
out = lab4_sim.run_ring(buffers=buffers, send=allreduce.ring_send, receive=allreduce.ring_receive, history=True)
print(tr("chunks: {bounds}").format(bounds=allreduce.chunk_bounds(M=6, N=N)))
for step, state in enumerate(out["history"]):
    if step == 0:
        label = tr("start")
    else:
        phase, t = ("reduce-scatter", step - 1) if step - 1 < N - 1 else ("all-gather", step - 1 - (N - 1))
        sent = ", ".join(tr("{src}->{dst}: chunk {chunk}").format(src=m["from"], dst=m["to"], chunk=m["chunk"])
                         for m in out["log"] if m["step"] == step - 1)
        label = f"{phase} {t} ({sent})"
    print(f"{label:>62} | " + " | ".join(" ".join(num(x, "3d") for x in b) for b in state))
summed = all(np.array_equal(r, np.sum(buffers, axis=0)) for r in out["results"])
print(tr("the sum on every rank: {ok}").format(ok=tr("yes") if summed else tr("no")))
print(tr("bytes sent per rank, counted by the network: {sent}").format(sent=nums(out["bytes_sent"])))

# The network enforces the ring: a message to any rank but (r + 1) mod N is refused.
def send_two_ahead(*, rank, N, step, buffer):
    return [{"to": (rank + 2) % N, "chunk": 0, "data": buffer[:1]}]

try:
    lab4_sim.run_ring(buffers=buffers, send=send_two_ahead, receive=allreduce.ring_receive)
except lab4_sim.RingError as err:
    print(tr("refused: {error}").format(error=err))

# %%
M = 1000  # float32 elements: 4000 bytes per rank
Ns = [2, 3, 4, 6, 8, 12, 16]
measured = [np.mean(lab4_sim.run_ring(buffers=[np.ones(M, np.float32)] * N, send=allreduce.ring_send,
                                      receive=allreduce.ring_receive)["bytes_sent"]) for N in Ns]
fig, ax = plt.subplots(figsize=(5.5, 4), layout="constrained")
ax.plot(Ns, measured, "o", label=tr("ring, counted by the network (mean over ranks)"))
ax.plot(Ns, [allreduce.allreduce_bytes_per_rank(M_bytes=4 * M, N=N) for N in Ns], "-", label=tr("ring: 2(N−1)/N × 4M bytes"))
ax.plot(Ns, [(N - 1) * 4 * M for N in Ns], "--", label=tr("naive: the whole buffer to every rank"))
ax.axhline(2 * 4 * M, color="gray", lw=0.5, label=tr("2 × 4M bytes: the ring's limit for large N"))
ax.set_yscale("log")
ax.set_xticks(Ns)  # ranks are whole numbers
ax.set_xlabel(tr("ranks N"))
ax.set_ylabel(tr("bytes sent per rank"))
fig.legend(fontsize=8, loc="outside lower center")  # below the axes: no line runs under it
show()

# %%
grader.check("ring_allreduce")

# %% [markdown] tags=["en"]
# ## 5. The network wall (section 7)
#
# A 7B model has 14 GB of FP16 gradients. On 8 GPUs each one sends 2·7/8 × 14 = 24.5 GB per step: 1.96 s at 12.5 GB/s (100 Gb/s), against about 1 s of compute. The step is communication-bound. NVLink (900 GB/s) moves the wall.

# %% [markdown] tags=["vi"]
# ## 5. Tường mạng (mục 7)
#
# Một mô hình 7B có 14 GB gradient FP16. Trên 8 GPU, mỗi GPU gửi 2·7/8 × 14 = 24,5 GB mỗi bước: 1,96 s ở 12,5 GB/s (100 Gb/s), so với khoảng 1 s tính toán. Bước huấn luyện bị giới hạn bởi truyền thông (communication-bound). NVLink (900 GB/s) dời bức tường đi.

# %%
BOUND = {"communication": tr("communication-bound"), "compute": tr("compute-bound")}
for name, bw in ((tr("100 Gb/s network"), 12.5), ("NVLink", 900.0)):
    w = allreduce.network_wall(n_params=7e9, bytes_per_param=2, n_gpus=8, link_GBps=bw, compute_s=1.0)
    print(tr("{link}: {gb} GB per GPU, {comm} s of AllReduce -> {bound}; the wall sits at {wall} GB/s").format(
        link=name, gb=num(w["bytes_per_gpu"] / 1e9, 1), comm=num(w["comm_s"], 3),
        bound=BOUND.get(w["bound"], w["bound"]),
        wall=num(w["break_even_GBps"], 1)))

bws = np.logspace(0, 3.2, 60)
comm = [allreduce.network_wall(n_params=7e9, bytes_per_param=2, n_gpus=8, link_GBps=b, compute_s=1.0)["comm_s"] for b in bws]
fig, ax = plt.subplots(figsize=(5, 3.2))
ax.loglog(bws, comm, label=tr("AllReduce time per step"))
ax.axhline(1.0, color="k", ls=":", label=tr("compute per step"))
for name, bw in (("100 Gb/s", 12.5), ("NVLink", 900.0)):
    ax.axvline(bw, color="gray", lw=0.6)
    ax.text(bw, 3, name, fontsize=8, rotation=90, va="bottom")
ax.set_xlabel(tr("link bandwidth (GB/s)"))
ax.set_ylabel(tr("seconds"))
ax.legend(fontsize=8)
plt.tight_layout()
show()

# %%
grader.check("network_wall")

# %% [markdown] tags=["en"]
# ## How to check and submit
#
# From a terminal in the lab bundle:
#
# ```bash
# autograder check lab4     # runs the public tests on your files, per question
# autograder submit lab4    # builds the zip to upload
# ```
#
# The public tests are quick snapshot checks. More **hidden tests run at grading**: random shapes and lengths, causal masks and several heads, float32 and float64 tolerances, the recorded events of your loader (overlap, the queue bound, threads and processes), every message of your ring as the simulated network carries it, and how much the measured peak memory of `tiled_attention` grows from S = 1024 to S = 2048. Passing the public tests is necessary, not sufficient.
#
# In this notebook, the `grader.check("...")` cells run the same public tests one question at a time; `grader.check_all()` runs them all.

# %% [markdown] tags=["vi"]
# ## Cách kiểm tra và nộp bài
#
# Từ một terminal trong bộ bài lab (lab bundle):
#
# ```bash
# autograder check lab4     # chạy các bài kiểm thử công khai trên các tệp của bạn, theo từng câu hỏi
# autograder submit lab4    # tạo tệp zip để tải lên
# ```
#
# Các bài kiểm thử công khai là những phép so sánh nhanh với kết quả mẫu đã lưu (snapshot). Khi chấm điểm còn chạy thêm nhiều **bài kiểm thử ẩn**: hình dạng và độ dài ngẫu nhiên, mặt nạ nhân quả (causal mask) và nhiều head, dung sai của float32 và float64, các sự kiện đã ghi của bộ nạp của bạn (chồng lấp, giới hạn hàng đợi, luồng và tiến trình), từng thông điệp của vòng AllReduce của bạn khi mạng mô phỏng chuyển nó, và mức tăng của bộ nhớ đỉnh đo được của `tiled_attention` từ S = 1024 lên S = 2048. Vượt qua các bài kiểm thử công khai là điều kiện cần, chưa phải điều kiện đủ.
#
# Trong sổ tay này, các ô `grader.check("...")` chạy cùng các bài kiểm thử công khai, từng câu hỏi một; `grader.check_all()` chạy tất cả.
