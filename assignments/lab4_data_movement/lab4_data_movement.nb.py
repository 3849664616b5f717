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
# *Machine Learning Systems*, Vol. I, Chapter 8 (Model Training): §4 Pipeline Architecture, §5 Identifying Bottlenecks, §6 Pipeline Optimizations, §7 Scaling Training Systems and §8 Fallacies and Pitfalls.
#
# A GPU only trains as fast as data reaches it. In this lab you follow the data:
#
# 1. **The slowest stage wins**: rates, utilization, what overlapping the stages buys, and a pipeline whose bottleneck moves as workers are added (`pipeline.py`).
# 2. **Prefetching** with a background thread and a bounded queue, and where the GIL stops it (`pipeline.py`).
# 3. **Tiled attention** with an online softmax: exact, without ever holding the S×S score matrix (`attention.py`).
# 4. **Attention memory traffic**: the bytes standard and tiled attention hold, and the bytes they move (`attention.py`).
# 5. **Ring AllReduce**, simulated: the sum on every rank, and how many bytes each rank sends (`allreduce.py`).
# 6. **The network wall**: 7B FP16 gradients on 8 GPUs, Ethernet against NVLink (`allreduce.py`).
# 7. **The communication tax**: what N GPUs buy once the AllReduce is paid, speed-up and efficiency (`allreduce.py`).
#
# Fill in the functions in the three `.py` files next to this notebook; each cell below calls them. The docstrings are the contract: they fix every unit and convention the grader relies on. After you edit a file, the next cell you run uses the new code (the setup cell turns on autoreload).

# %% [markdown] tags=["vi"]
# # Lab 4: di chuyển dữ liệu
#
# *Machine Learning Systems*, Tập I, Chương 8 (Huấn luyện mô hình): §4 Kiến trúc quy trình huấn luyện (Pipeline Architecture), §5 Xác định điểm nghẽn (Identifying Bottlenecks), §6 Tối ưu quy trình huấn luyện (Pipeline Optimizations), §7 Mở rộng hệ thống huấn luyện (Scaling Training Systems) và §8 Ngộ nhận và cạm bẫy (Fallacies and Pitfalls).
#
# GPU chỉ huấn luyện nhanh được bằng tốc độ dữ liệu đến với nó. Trong bài lab này, bạn đi theo dòng dữ liệu:
#
# 1. **Chặng chậm nhất quyết định** (quy tắc chặng chậm nhất): tốc độ, mức sử dụng, lợi ích của việc chồng lấp các chặng, và một quy trình có điểm nghẽn dịch chuyển khi thêm worker (`pipeline.py`).
# 2. **Nạp trước** bằng một luồng nền và một hàng đợi có giới hạn (bounded queue), và chỗ GIL chặn nó lại (`pipeline.py`).
# 3. **Attention chia khối** với softmax trực tuyến: chính xác, mà không bao giờ giữ ma trận điểm attention S×S (`attention.py`).
# 4. **Lưu lượng bộ nhớ của attention**: số byte mà attention tiêu chuẩn và attention chia khối giữ lại, và số byte chúng di chuyển (`attention.py`).
# 5. **AllReduce vòng**, mô phỏng: tổng có trên mọi rank, và mỗi rank gửi đi bao nhiêu byte (`allreduce.py`).
# 6. **Tường mạng**: gradient FP16 của mô hình 7B trên 8 GPU, Ethernet so với NVLink (`allreduce.py`).
# 7. **Thuế truyền thông**: N GPU mang lại gì sau khi đã trả giá cho AllReduce, hệ số tăng tốc và hiệu suất (`allreduce.py`).
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
import lab4_sim  # tr: shipped: the recorded loader work and the simulated ring network
import pipeline
from autograder.grading.notebook_text import num, nums, show, tr  # tr: what the cells print and plot, in the notebook's language

for module in (pipeline, attention, allreduce):  # tr: pick up your latest edits
    importlib.reload(module)

rng = np.random.default_rng(0)  # tr: random inputs for the attention cells (here, so one failing cell cannot hide it)

# %% [markdown] tags=["en"]
# ## 1. The slowest stage wins (§4.2 Data pipeline)
#
# Stages of an input pipeline (storage, preprocessing, transfer, compute) run concurrently, so the pipeline delivers samples at the rate of its slowest stage: $R = \min_k R_k$. The accelerator's utilization is $R / R_\text{compute}$. The chapter's example (§4.2.3 System implications): preprocessing at 200 img/s feeding a 1000 img/s accelerator uses 20% of it.
#
# Storage: $R_\text{storage} = \min(\text{disk}, \text{network}) \times$ access factor (about 0.1 for random reads, §4.2.1 Core components); preprocessing: $R = \text{workers} / t_\text{transform}$ (§4.2.2 Preprocessing).

# %% [markdown] tags=["vi"]
# ## 1. Chặng chậm nhất quyết định (§4.2 Quy trình dữ liệu (Data pipeline))
#
# Các chặng của một quy trình nạp dữ liệu (lưu trữ, tiền xử lý, truyền, tính toán) chạy đồng thời, nên quy trình cung cấp mẫu với tốc độ của chặng chậm nhất: $R = \min_k R_k$. Mức sử dụng của bộ tăng tốc là $R / R_\text{compute}$. Ví dụ của chương (§4.2.3 Hệ quả hệ thống (System implications)): tiền xử lý ở 200 img/s cấp dữ liệu cho một bộ tăng tốc 1000 img/s thì chỉ dùng 20% năng lực của nó.
#
# Lưu trữ: $R_\text{storage} = \min(\text{disk}, \text{network}) \times$ hệ số truy cập (khoảng 0,1 với đọc ngẫu nhiên, §4.2.1 Thành phần cốt lõi (Core components)); tiền xử lý: $R = \text{workers} / t_\text{transform}$ (§4.2.2 Tiền xử lý (Preprocessing)).

# %%
STAGE = {"storage": tr("storage"), "preprocess": tr("preprocessing"), "compute": tr("compute"),  # tr: stages, as printed
         "tokenize": tr("tokenize"), "transfer": tr("PCIe transfer"), "forward": tr("forward pass")}
with skip_if_unwritten():
    nvme_random = pipeline.storage_rate(disk_rate=7e9, network_rate=12.5e9, access_factor=0.1)
    print(tr("NVMe Gen4, random access: {rate} GB/s").format(rate=num(nvme_random / 1e9, 2)))
    print(tr("preprocessing, 8 workers at 4 ms per image: {rate} img/s").format(
        rate=num(pipeline.preprocess_rate(workers=8, t_transform_s=0.004))))
    slowest = pipeline.pipeline_rate(stage_rates={"storage": 700.0, "preprocess": 200.0, "compute": 1000.0})
    print(tr("storage 700, preprocessing 200, compute 1000 img/s: {rate} img/s, bottleneck {stage}, "
             "utilization {busy}").format(rate=num(slowest["rate"]), stage=STAGE.get(slowest["bottleneck"], slowest["bottleneck"]),
                                          busy=num(slowest["utilization"], ".0%")))

# %% [markdown] tags=["en"]
# In time per iteration: without overlap the stages run one after another and $t = \sum_k t_k$; with overlap (prefetching) they work on different batches at once and $t = \max_k t_k$ (§4.2.4 Data flows).
#
# The chapter's GPT-2 pipeline (§4.2.2 Preprocessing): a batch is 32 × 1024 = 32,768 tokens. Tokenizing at 500K tokens/s takes 65.5 ms on one core and 8.2 ms on 8; the int64 batch is 262 KB and crosses PCIe Gen3 in 0.017 ms; the forward pass takes 80 ms.

# %% [markdown] tags=["vi"]
# Tính theo thời gian mỗi vòng lặp: không chồng lấp thì các chặng chạy lần lượt và $t = \sum_k t_k$; có chồng lấp (nạp trước) thì chúng cùng lúc làm việc trên các batch khác nhau và $t = \max_k t_k$ (§4.2.4 Luồng dữ liệu (Data flows)).
#
# Quy trình GPT-2 của chương (§4.2.2 Tiền xử lý (Preprocessing)): một batch gồm 32 × 1024 = 32.768 token. Token hoá ở 500K token/s mất 65,5 ms trên một lõi và 8,2 ms trên 8 lõi; batch int64 nặng 262 KB và đi qua PCIe Gen3 trong 0,017 ms; lượt xuôi mất 80 ms.

# %% [markdown] tags=["en"]
# **Predict first.** With the stages overlapped (prefetching), a step takes as long as its slowest stage. How many times faster is the GPT-2 step with 4 tokenizer workers than with 1? A number from 1 to 8 (x): write it in place of `None` and run the cell. The cell after it measures.

# %% [markdown] tags=["vi"]
# **Dự đoán trước.** Khi các chặng chồng lấp (nạp trước), một bước mất thời gian bằng chặng chậm nhất. Bước GPT-2 nhanh hơn bao nhiêu lần khi có 4 worker token hoá thay vì 1? Một số từ 1 đến 8 (x): hãy viết nó thay cho `None` rồi chạy ô. Ô tiếp theo sẽ đo.

# %%
guess = None  # tr: your prediction, in place of None
predict("tokenizer_speedup", guess)

# %%
with skip_if_unwritten():
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

one, four = (attempt(pipeline.gpt2_pipeline, workers=w) for w in (1, 4))
reveal("tokenizer_speedup", one["step_s_overlap"] / four["step_s_overlap"] if one and four else None)

# %% [markdown] tags=["en"]
# **Reflect** (one line, marked by hand with the other reflections): was your guess above 1×, and which stage sets the pace of the overlapped step, with one worker and with four?

# %% [markdown] tags=["vi"]
# **Suy ngẫm** (một dòng, chấm tay cùng các suy ngẫm khác): dự đoán của bạn có lớn hơn 1× không, và chặng nào quyết định nhịp độ của bước chồng lấp, khi có một worker và khi có bốn worker?

# %% [markdown] tags=["en", "answer:reflections/tokenizer_speedup"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/tokenizer_speedup"]
# *Một dòng ở đây.*

# %% [markdown] tags=["en"]
# The chapter says so itself: at GPT-2 scale "CPU tokenization is already close to the 80 ms accelerator forward pass" (§4.2.2 Preprocessing). One core (65.5 ms) keeps up, so this step is compute-bound from the start. The chapter's 8 workers shorten the step only while the stages run one after another (145.6 ms to 88.2 ms, the plot above); overlapped, the 80 ms forward pass sets the pace with one worker or eight. The bottleneck never moves, and storage (0.7 GB/s under random access) never comes close.
#
# To see the slowest stage move, take the chapter's other pipeline numbers. One CPU thread needs 30 ms to augment a batch (crop 10 + jitter 15 + normalise 5 ms, §6.2.2 Practical considerations), and "a single thread performing image augmentation at 30 ms per batch cannot feed an accelerator that computes a forward pass in 10 ms" (§4.2.2 Preprocessing). Storage is an NVMe Gen4 disk at 7 GB/s sequential (the GPT-2 example above, §4.2.2 Preprocessing), of which the random access of shuffled training gets about 0.1 (§4.2.1 Core components); PCIe Gen3 carries 15.75 GB/s (the same example); batches hold 32 images (the `DataLoader` of §6.2.1 Prefetching mechanics). Two numbers are the lab's own, not the chapter's: 500 KB per stored image, and batches sent to the GPU as FP32 224×224×3 images.
#
# `image_pipeline` gives each stage's rate in batches per second and names the slowest. Watch the bottleneck move as workers are added: preprocessing with one worker (33 of the accelerator's 100 batches/s), then storage from two workers on, and more workers change nothing. Read the data in sequence instead (access factor 1.0: samples kept in large pre-shuffled record files, such as the formats §4.2.1 Core components names; the factor is the lab's assumption, the chapter gives no number for it) and preprocessing binds up to 3 workers, compute from 4: the "four to eight worker threads" of §4.2.5 Practical architectures.

# %% [markdown] tags=["vi"]
# Chính chương sách cũng nói vậy: ở quy mô GPT-2, "việc token hoá trên CPU đã gần bằng lượt xuôi 80 ms của bộ tăng tốc" (§4.2.2 Tiền xử lý (Preprocessing)). Một lõi (65,5 ms) đã theo kịp, nên bước huấn luyện này bị giới hạn bởi tính toán ngay từ đầu. 8 worker của chương chỉ rút ngắn bước khi các chặng chạy lần lượt (145,6 ms xuống 88,2 ms, biểu đồ trên); khi chồng lấp, lượt xuôi 80 ms quyết định nhịp độ dù có một hay tám worker. Điểm nghẽn không bao giờ dịch chuyển, và lưu trữ (0,7 GB/s khi truy cập ngẫu nhiên) cũng không bao giờ tới gần.
#
# Để thấy chặng chậm nhất dịch chuyển, hãy lấy các số khác của chương về quy trình nạp. Một luồng CPU cần 30 ms để tăng cường (augment) một batch (cắt 10 + đổi màu 15 + chuẩn hoá 5 ms, §6.2.2 Lưu ý thực tế (Practical considerations)), và "một luồng duy nhất tăng cường ảnh với 30 ms mỗi batch không thể cấp dữ liệu cho một bộ tăng tốc tính lượt xuôi trong 10 ms" (§4.2.2 Tiền xử lý (Preprocessing)). Lưu trữ là một ổ NVMe Gen4 đọc tuần tự 7 GB/s (ví dụ GPT-2 ở trên, §4.2.2 Tiền xử lý (Preprocessing)), mà việc truy cập ngẫu nhiên khi huấn luyện có xáo trộn chỉ đạt khoảng 0,1 (§4.2.1 Thành phần cốt lõi (Core components)); PCIe Gen3 truyền 15,75 GB/s (cùng ví dụ đó); mỗi batch gồm 32 ảnh (`DataLoader` ở §6.2.1 Cơ chế nạp trước (Prefetching mechanics)). Hai số là của bài lab, không phải của chương: 500 KB cho mỗi ảnh lưu trữ, và batch được gửi lên GPU dưới dạng ảnh FP32 224×224×3.
#
# `image_pipeline` cho tốc độ của từng chặng tính bằng batch mỗi giây và gọi tên chặng chậm nhất. Hãy xem điểm nghẽn dịch chuyển khi thêm worker: tiền xử lý khi có một worker (33 trên 100 batch/s của bộ tăng tốc), rồi lưu trữ từ hai worker trở đi, và thêm worker nữa cũng chẳng thay đổi gì. Nếu đọc dữ liệu tuần tự (hệ số truy cập 1,0: mẫu được giữ trong các tệp bản ghi lớn đã xáo trộn sẵn, như các định dạng mà §4.2.1 Thành phần cốt lõi (Core components) nêu tên; hệ số này là giả định của bài lab, chương không cho số) thì tiền xử lý là điểm nghẽn đến 3 worker, và tính toán từ 4 worker: đúng "bốn đến tám luồng worker" của §4.2.5 Kiến trúc thực tế (Practical architectures).

# %%
ACCESS = {0.1: tr("random access (0.1)"), 1.0: tr("sequential reads (1.0)")}
with skip_if_unwritten():
    for access, reads in ACCESS.items():
        for workers in (1, 2, 3, 4, 8):
            p = pipeline.image_pipeline(workers=workers, access_factor=access)
            print(tr("{reads}, {workers} worker(s): storage {storage}, preprocessing {pre}, PCIe {pcie}, compute {compute} "
                     "batches/s -> {rate} batches/s ({images} img/s), bottleneck {stage}, accelerator {busy} busy").format(
                reads=reads, workers=workers, storage=num(p["storage_rate"], 1), pre=num(p["preprocess_rate"], 1),
                pcie=num(p["transfer_rate"], 0), compute=num(p["compute_rate"], 0), rate=num(p["rate"], 1),
                images=num(p["images_per_s"], 0), stage=STAGE.get(p["bottleneck"], p["bottleneck"]),
                busy=num(p["utilization"], ".0%")))

    workers = np.arange(1, 9)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2), sharey=True)
    for ax, (access, reads) in zip(axes, ACCESS.items()):
        runs = [pipeline.image_pipeline(workers=int(w), access_factor=access) for w in workers]
        for stage, style in (("storage", "tab:green"), ("preprocess", "tab:orange"), ("compute", "tab:blue")):
            ax.plot(workers, [r[f"{stage}_rate"] for r in runs], color=style, ls="--", label=STAGE[stage])
        ax.plot(workers, [r["rate"] for r in runs], "k-", lw=3, alpha=0.4, label=tr("the pipeline: the slowest stage"))
        ax.set_title(reads, fontsize=9)
        ax.set_xlabel(tr("CPU workers"))
        ax.set_ylim(0, 150)
    axes[0].set_ylabel(tr("batches per second"))
    axes[1].legend(fontsize=8, loc="lower right")
    plt.tight_layout()
show()

# %%
grader.check("slowest_stage")


# %% [markdown] tags=["en"]
# ## 2. Prefetching, and the GIL (§6.2 Data prefetching and overlapping, §5 Identifying Bottlenecks)
#
# `run_loader` loads and computes `n_items` items, either in one loop or with a background `threading.Thread` that loads ahead into a `queue.Queue(maxsize=queue_size)`. It does the work through the shipped `lab4_sim.Recorder`: `rec.load(i, ...)` and `rec.compute(item, ...)` do one simulated stage each and record when it started and ended, in which thread and in which process. With `kind="sleep"` both stages are waits that release the GIL (disk, network, a GPU kernel): loading hides behind compute and the total approaches $n \cdot \max(t_\text{load}, t_\text{compute})$ instead of the sum (the chapter's example in §6.2 Data prefetching and overlapping cuts 105 s to 55 s). The timeline below is drawn from those events.
#
# The grader reads the same events. It checks their order, never their speed: that some item $i+1$ is loaded while item $i$ is computed, that the loader never runs more than `queue_size` + 1 items ahead, and which thread and process did the work. A busy machine stretches the bars, but it cannot reorder them.

# %% [markdown] tags=["vi"]
# ## 2. Nạp trước, và GIL (§6.2 Nạp trước dữ liệu và chồng lấp (Data prefetching and overlapping), §5 Xác định điểm nghẽn (Identifying Bottlenecks))
#
# `run_loader` nạp và tính `n_items` phần tử, hoặc trong một vòng lặp duy nhất, hoặc với một luồng nền `threading.Thread` nạp trước vào một `queue.Queue(maxsize=queue_size)`. Hàm làm việc qua `lab4_sim.Recorder` có sẵn: `rec.load(i, ...)` và `rec.compute(item, ...)` mỗi lệnh làm một chặng mô phỏng và ghi lại lúc bắt đầu, lúc kết thúc, luồng nào và tiến trình nào đã làm. Với `kind="sleep"`, cả hai chặng đều là những lần chờ có nhả GIL (đĩa, mạng, một kernel GPU): việc nạp được ẩn sau việc tính toán và tổng thời gian tiến gần tới $n \cdot \max(t_\text{load}, t_\text{compute})$ thay vì tổng của hai thời gian (ví dụ của chương ở §6.2 Nạp trước dữ liệu và chồng lấp (Data prefetching and overlapping) giảm 105 s xuống 55 s). Biểu đồ dòng thời gian dưới đây được vẽ từ các sự kiện đó.
#
# Bộ chấm đọc cùng các sự kiện ấy. Nó kiểm tra thứ tự của chúng, không bao giờ kiểm tra tốc độ: có phần tử $i+1$ nào được nạp trong khi phần tử $i$ đang được tính không, bộ nạp không bao giờ chạy trước quá `queue_size` + 1 phần tử, và luồng, tiến trình nào đã làm việc. Một máy bận làm các thanh dài ra, nhưng không thể đảo thứ tự của chúng.

# %%
def span(report):
    """Seconds from the Recorder's start to the last event's end."""
    return max(e["end"] for e in report["events"])

with skip_if_unwritten():
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
# Now make loading **pure-Python CPU work** (`kind="python_cpu"`: a bytecode loop that holds the GIL, like decoding or augmenting samples in plain Python). Only one thread can run Python bytecode at a time (the chapter's callout "The GIL-locked GPU" in §5 Identifying Bottlenecks, after D. Beazley, "Understanding the Python GIL", 2010), so the same prefetch thread buys nothing.
#
# Measure it yourself: the cell prints wall time and CPU time per second of wall time. Under the GIL a call can use at most about **one** CPU-second per second however many threads it starts; two loaders truly in parallel (processes) would approach two. Timings on a shared machine are noisy, so the grader does not time this; it checks from the events that your loader is a thread of the same process, which is the setting the GIL governs.
#
# **Question for your write-up:** why does the thread help in the first case and not in the second? What does PyTorch's `DataLoader(num_workers=...)` (§6.2.1 Prefetching mechanics) do instead?

# %% [markdown] tags=["vi"]
# Bây giờ hãy biến việc nạp thành **công việc CPU thuần Python** (`kind="python_cpu"`: một vòng lặp bytecode giữ GIL, giống như giải mã hay tăng cường (augment) mẫu bằng Python thuần). Tại mỗi thời điểm chỉ một luồng được chạy bytecode Python (khung "The GIL-locked GPU" của chương ở §5 Xác định điểm nghẽn (Identifying Bottlenecks), theo D. Beazley, "Understanding the Python GIL", 2010), nên cũng luồng nạp trước ấy chẳng mang lại gì.
#
# Hãy tự đo: ô này in thời gian thực (wall time) và thời gian CPU trên mỗi giây thời gian thực. Dưới GIL, một lần gọi dùng được tối đa khoảng **một** giây CPU mỗi giây, dù khởi chạy bao nhiêu luồng; hai bộ nạp thực sự song song (tiến trình) sẽ tiến gần tới hai. Trên một máy dùng chung, số đo thời gian bị nhiễu, nên bộ chấm không đo thời gian ở đây; nó kiểm tra từ các sự kiện rằng bộ nạp của bạn là một luồng của cùng tiến trình, đúng là tình huống mà GIL chi phối.
#
# **Câu hỏi cho bài báo cáo của bạn:** vì sao luồng giúp ích trong trường hợp thứ nhất mà không giúp trong trường hợp thứ hai? Thay vào đó, `DataLoader(num_workers=...)` của PyTorch (§6.2.1 Cơ chế nạp trước (Prefetching mechanics)) làm gì?

# %%
kw = dict(n_items=6, load_work=500_000, compute_work=500_000, kind="python_cpu", queue_size=2)
with skip_if_unwritten():
    for prefetch in (False, True):
        c0, t0 = time.process_time(), time.perf_counter()  # tr: CPU time of all this process's threads; wall time
        pipeline.run_loader(prefetch=prefetch, **kw)
        cpu, t = time.process_time() - c0, time.perf_counter() - t0
        print(tr("pure-Python loading, prefetch={prefetch}: wall time {wall} s, CPU {cpu} s, "
                 "{ratio} CPU-seconds per second").format(prefetch=prefetch, wall=num(t, 3), cpu=num(cpu, 3),
                                                         ratio=num(cpu / t, 2)))

# %% [markdown] tags=["en"]
# **Your answer** (marked by hand): why does the prefetch thread help with `kind="sleep"` despite the GIL, and not with `kind="python_cpu"`? What does PyTorch's `DataLoader(num_workers=...)` do instead? Argue from the timings above.

# %% [markdown] tags=["vi"]
# **Câu trả lời của bạn** (chấm tay): vì sao luồng nạp trước giúp ích với `kind="sleep"` dù có GIL, mà không giúp với `kind="python_cpu"`? Thay vào đó, `DataLoader(num_workers=...)` của PyTorch làm gì? Hãy lập luận từ các số đo thời gian ở trên.

# %% [markdown] tags=["en", "answer:gil_thread"]
# *Your answer here.*

# %% [markdown] tags=["vi", "answer:gil_thread"]
# *Câu trả lời của bạn ở đây.*

# %%
grader.check("prefetch")

# %% [markdown] tags=["en"]
# ## 3. Tiled attention with an online softmax (§6.4 Flash attention: IO-aware attention optimization)
#
# Standard attention materializes the S×S score matrix: 64 MiB per head at S = 4096 in FP32, against 64 KiB for one 128×128 tile. (The chapter writes the same bytes as 67.1 MB in §6.4.1 The standard attention memory bottleneck and as "64 MB" against "64 KB" in §6.4.2 IO-aware attention through tiling; this lab counts in binary units, 1 MiB = 2²⁰ bytes, and says so.) `tiled_attention`, FlashAttention's idea (T. Dao et al., 2022, which the chapter cites), walks over K/V in blocks and keeps, per query row, a running max $m$, a running normaliser $\ell$ and a running output; when a block raises $m$, the old $\ell$ and output are rescaled by $e^{m_\text{old} - m_\text{new}}$. The result is exact.

# %% [markdown] tags=["vi"]
# ## 3. Attention chia khối với softmax trực tuyến (§6.4 Flash attention: tối ưu attention theo vào/ra bộ nhớ (Flash attention: IO-aware attention optimization))
#
# Attention tiêu chuẩn tạo ra trọn vẹn (materialize) ma trận điểm attention S×S: 64 MiB mỗi head ở S = 4096 với FP32, so với 64 KiB cho một ô (tile) 128×128. (Chương viết cùng số byte đó là 67,1 MB ở §6.4.1 Điểm nghẽn bộ nhớ của attention tiêu chuẩn (The standard attention memory bottleneck) và là "64 MB" so với "64 KB" ở §6.4.2 Attention theo vào/ra bộ nhớ nhờ chia khối (IO-aware attention through tiling); bài lab này đếm theo đơn vị nhị phân, 1 MiB = 2²⁰ byte, và nói rõ như vậy.) `tiled_attention`, ý tưởng của FlashAttention (T. Dao và cộng sự, 2022, được chương trích dẫn), duyệt qua K/V theo từng khối và giữ, cho mỗi hàng truy vấn (query), một giá trị max tích luỹ $m$, một hệ số chuẩn hoá tích luỹ $\ell$ và một đầu ra tích luỹ; khi một khối làm tăng $m$, $\ell$ cũ và đầu ra cũ được nhân lại với $e^{m_\text{old} - m_\text{new}}$. Kết quả là chính xác.

# %%
with skip_if_unwritten():
    score = attention.attention_score_bytes(S=4096, block_size=128, bytes_per_element=4)
    print(tr("S = 4096, FP32: the whole score matrix {full} bytes, one 128×128 tile {tile} bytes").format(
        full=num(score["full_bytes"]), tile=num(score["tile_bytes"])))

    q, k, v = (rng.standard_normal((2, 100, 16)) for _ in range(3))  # tr: 2 heads; 100 is not a multiple of 32
    for causal in (False, True):
        err = np.abs(attention.tiled_attention(q=q, k=k, v=v, causal=causal, block_size=32)
                     - attention.standard_attention(q=q, k=k, v=v, causal=causal)).max()
        print(tr("causal={causal}: max abs difference {error}").format(causal=causal, error=num(err, ".1e")))


# %% [markdown] tags=["en"]
# Peak memory against S, measured with `tracemalloc` (it sees numpy's allocations). The standard version grows like S², the tiled one like S·d plus one tile. The grader measures the peak at S = 256, 1024 and 2048 (d = 16, float32, with causal=False and with causal=True) and how much it grows from each length to the next: less than 2 MiB, beyond the larger inputs and output. Even a boolean S×S mask grows by 3 MiB from 1024 to 2048.

# %% [markdown] tags=["vi"]
# Bộ nhớ đỉnh theo S, đo bằng `tracemalloc` (nó thấy được các lần cấp phát của numpy). Bản tiêu chuẩn tăng như S², bản chia khối tăng như S·d cộng thêm một ô. Bộ chấm đo bộ nhớ đỉnh ở S = 256, 1024 và 2048 (d = 16, float32, với causal=False và với causal=True) và mức tăng của nó từ mỗi độ dài lên độ dài kế tiếp: phải dưới 2 MiB, ngoài phần đầu vào và đầu ra lớn hơn. Ngay cả một mặt nạ boolean S×S cũng tăng 3 MiB từ 1024 lên 2048.

# %%
def peak_mib(fn, **kw):
    tracemalloc.start()
    fn(**kw)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20

with skip_if_unwritten():
    Ss = [256, 1024, 2048]
    std_mib, tiled_mib = [], []
    for S in Ss:
        q, k, v = (rng.standard_normal((S, 64)) for _ in range(3))
        std_mib.append(peak_mib(attention.standard_attention, q=q, k=k, v=v))
        tiled_mib.append(peak_mib(attention.tiled_attention, q=q, k=k, v=v, block_size=128))

    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.loglog(Ss, std_mib, "o-", label=tr("standard (S×S scores)"))
    ax.loglog(Ss, tiled_mib, "s-", label=tr("tiled, block 128"))
    ax.loglog(Ss, [S * S * 8 / 2**20 for S in Ss], "k:", label=tr("one S×S float64 matrix"))
    ax.set_xticks(Ss, [str(S) for S in Ss])  # tr: the measured lengths, without crowded minor labels
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.set_xlabel(tr("sequence length S"))
    ax.set_ylabel(tr("peak extra memory (MiB)"))
    ax.legend(fontsize=8)
    plt.tight_layout()
    print(tr("S=1024 -> 2048: tiled grows by {tiled} MiB, standard by {standard} MiB; budget {budget} MiB").format(
        tiled=num(tiled_mib[-1] - tiled_mib[-2], 2), standard=num(std_mib[-1] - std_mib[-2], 1),
        budget=num(2, 0)))
show()

# %%
grader.check("tiled_attention")

# %% [markdown] tags=["en"]
# ### Break it on purpose: the softmax without the max
#
# The stable softmax subtracts each row's max before `exp`; the running max $m$ of `tiled_attention` does the same, block by block. Now write the version the chapter warns about, `naive_attention` in `attention.py`: standard attention with `exp` of the raw scores, nothing subtracted (its docstring says exactly what it must do). `exp` overflows above about 709.8 in float64 (88.7 in float32): it gives inf, and inf / inf gives NaN. The cell below builds 6 query rows, rows 3 to 5 with scores near 1000, and runs both versions on them. The grader checks the symptom: NaN or inf exactly in the rows whose scores overflow, the right values elsewhere, and your tiled version finite and right on the same rows.

# %% [markdown] tags=["vi"]
# ### Cố ý làm hỏng: softmax không trừ max
#
# Softmax ổn định trừ max của mỗi hàng trước `exp`; max tích luỹ $m$ của `tiled_attention` làm đúng việc đó, theo từng khối. Bây giờ hãy viết phiên bản mà chương cảnh báo, `naive_attention` trong `attention.py`: attention tiêu chuẩn với `exp` của điểm thô, không trừ gì (docstring của nó nói chính xác hàm phải làm gì). `exp` tràn số khi vượt khoảng 709,8 với float64 (88,7 với float32): nó cho inf, và inf / inf cho NaN. Ô dưới đây tạo 6 hàng truy vấn, các hàng 3 đến 5 có điểm gần 1000, và chạy cả hai phiên bản trên chúng. Bộ chấm kiểm tra triệu chứng: NaN hoặc inf đúng ở những hàng có điểm bị tràn số, giá trị đúng ở các hàng khác, và phiên bản chia khối của bạn hữu hạn và đúng trên cùng các hàng đó.

# %%
q_big, k_big = (rng.integers(-8, 9, size=(6, 16)) / 8.0 for _row in range(2))
q_big[3:, 0], k_big[:, 0] = 40.0, 100.0  # tr: rows 3 to 5: scores near 1000, beyond exp's range in float64
v_big = rng.standard_normal((6, 16))
with skip_if_unwritten(), np.errstate(over="ignore", invalid="ignore"):  # tr: the overflow is the point: no warning
    naive = attention.naive_attention(q=q_big, k=k_big, v=v_big)
    print(tr("naive softmax: the rows holding NaN or inf: {rows}").format(
        rows=nums(np.flatnonzero(~np.isfinite(naive).all(axis=-1)))))
with skip_if_unwritten():
    tiled = attention.tiled_attention(q=q_big, k=k_big, v=v_big, block_size=2)
    error = np.abs(tiled - attention.standard_attention(q=q_big, k=k_big, v=v_big)).max()
    print(tr("tiled, with the running max: every value finite: {ok}; max abs difference from standard_attention "
             "{error}").format(ok=tr("yes") if np.isfinite(tiled).all() else tr("no"), error=num(error, ".1e")))

# %%
grader.check("softmax_overflow")

# %% [markdown] tags=["en"]
# **Predict before you read on.** At S = 4096 and d = 64 in FP32, tiled attention holds far fewer bytes than the S×S scores of standard attention. But a kernel's speed is set by the bytes it moves between HBM and the chip, not by what it holds. With blocks of 128, standard attention moves how many times the bytes tiled attention moves in one forward pass? A number from 1 to 100 (x): write it in place of `None` and run the cell.

# %% [markdown] tags=["vi"]
# **Dự đoán trước khi đọc tiếp.** Với S = 4096 và d = 64 ở FP32, attention chia khối giữ ít byte hơn nhiều so với ma trận điểm S×S của attention tiêu chuẩn. Nhưng tốc độ của một kernel do số byte nó di chuyển giữa HBM và chip quyết định, không phải số byte nó giữ. Với khối 128, attention tiêu chuẩn di chuyển gấp bao nhiêu lần số byte mà attention chia khối di chuyển trong một lượt xuôi? Một số từ 1 đến 100 (x): hãy viết nó thay cho `None` rồi chạy ô.

# %%
guess = None  # tr: your prediction, in place of None
predict("attention_traffic_ratio", guess)

# %% [markdown] tags=["en"]
# ## 4. Attention memory traffic (§6.4.1 The standard attention memory bottleneck, §6.4.3 Memory and IO complexity analysis)
#
# The chapter counts what attention keeps in HBM. For S = 4096 and d = 64 in FP32 the score matrix alone is 4096² × 4 B = 67.1 MB per head and 1.1 GB for 16 heads; the tiled version keeps only Q, K and V, 3 × 4096 × 64 × 4 B = 3.1 MB per head: 21.3× less.
#
# That is a footprint. What sets attention's speed is the traffic, the bytes that cross between HBM and the chip, and it falls less. `attention_hbm_bytes` counts both for one forward pass. Standard attention runs three kernels: QKᵀ writes Z, softmax reads Z and writes P, P·V reads P. So each S×S matrix is written once and read back once, $4S^2 + 4Sd$ elements per head. (§6.4.3 Memory and IO complexity analysis lists the tensors, Q, K, V read and score, probability and output written; §3.4 Arithmetic intensity counts the score matrix written and read back; the three-kernel count is Algorithm 0 of Dao et al., 2022.) The tiled loop writes no S×S matrix, but every query block needs every K and V block, so K and V are read once per query block: $Sd + 2Sd\lceil S/B\rceil + Sd$ elements. That is the chapter's own warning: "key and value blocks are streamed repeatedly across query blocks, so the bound is not simply $\mathcal{O}(S \cdot d)$". At block 128 the forward traffic falls 3.9×, not 21.3×; the count below shows what larger blocks (more SRAM) buy.
#
# The grader checks these counts against its own walk over the kernels and the tiles. It does not count the bytes your `tiled_attention` touches: numpy has no HBM and no SRAM to tell apart.

# %% [markdown] tags=["vi"]
# ## 4. Lưu lượng bộ nhớ của attention (§6.4.1 Điểm nghẽn bộ nhớ của attention tiêu chuẩn (The standard attention memory bottleneck), §6.4.3 Phân tích độ phức tạp bộ nhớ và vào/ra (Memory and IO complexity analysis))
#
# Chương đếm những gì attention giữ trong HBM. Với S = 4096 và d = 64 ở FP32, riêng ma trận điểm đã là 4096² × 4 B = 67,1 MB mỗi head và 1,1 GB cho 16 head; bản chia khối chỉ giữ Q, K và V, 3 × 4096 × 64 × 4 B = 3,1 MB mỗi head: ít hơn 21,3×.
#
# Đó là dung lượng chiếm giữ (footprint). Thứ quyết định tốc độ của attention là lưu lượng (traffic), tức số byte đi qua lại giữa HBM và chip, và nó giảm ít hơn. `attention_hbm_bytes` đếm cả hai cho một lượt xuôi. Attention tiêu chuẩn chạy ba kernel: QKᵀ ghi Z, softmax đọc Z và ghi P, P·V đọc P. Vậy mỗi ma trận S×S được ghi một lần và đọc lại một lần, $4S^2 + 4Sd$ phần tử mỗi head. (§6.4.3 Phân tích độ phức tạp bộ nhớ và vào/ra (Memory and IO complexity analysis) liệt kê các tensor: đọc Q, K, V và ghi ma trận điểm, ma trận xác suất, đầu ra; §3.4 Cường độ số học (Arithmetic intensity) đếm ma trận điểm được ghi rồi đọc lại; cách đếm ba kernel là Algorithm 0 của Dao và cộng sự, 2022.) Vòng lặp chia khối không ghi ma trận S×S nào, nhưng mỗi khối truy vấn cần mọi khối K và V, nên K và V được đọc một lần cho mỗi khối truy vấn: $Sd + 2Sd\lceil S/B\rceil + Sd$ phần tử. Đó chính là lời cảnh báo của chương: "các khối key và value được truyền lặp lại qua các khối truy vấn, nên cận không đơn giản là $\mathcal{O}(S \cdot d)$". Với khối 128, lưu lượng lượt xuôi giảm 3,9×, không phải 21,3×; phép đếm dưới đây cho thấy khối lớn hơn (nhiều SRAM hơn) mang lại gì.
#
# Bộ chấm kiểm tra các phép đếm này với cách tự duyệt qua các kernel và các ô của nó. Nó không đếm số byte mà `tiled_attention` của bạn chạm tới: numpy không có HBM hay SRAM để phân biệt.

# %%
with skip_if_unwritten():
    for heads in (1, 16):
        t = attention.attention_hbm_bytes(S=4096, d=64, block_size=128, n_heads=heads, bytes_per_element=4)
        print(tr("S = 4096, d = 64, block 128, FP32, {heads} head(s): scores {scores} MB against Q, K, V {qkv} MB "
                 "({footprint}x less); forward traffic {standard} MB standard against {tiled} MB tiled ({traffic}x less)"
                 ).format(heads=heads, scores=num(t["score_bytes"] / 1e6, 1), qkv=num(t["qkv_bytes"] / 1e6, 1),
                          footprint=num(t["footprint_ratio"], 1), standard=num(t["standard_traffic_bytes"] / 1e6, 1),
                          tiled=num(t["tiled_traffic_bytes"] / 1e6, 1), traffic=num(t["traffic_ratio"], 1)))

    blocks = [16, 32, 64, 128, 256, 512, 1024, 4096]
    runs = [attention.attention_hbm_bytes(S=4096, d=64, block_size=b) for b in blocks]
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.loglog(blocks, [r["traffic_ratio"] for r in runs], "o-", base=2, label=tr("forward traffic: standard / tiled"))
    ax.axhline(runs[0]["footprint_ratio"], color="k", ls=":", label=tr("footprint: scores / (Q, K, V)"))
    ax.set_xticks(blocks, [str(b) for b in blocks])
    ax.set_yticks([0.5, 1, 2, 4, 8, 16, 32, 64], [num(t) for t in (0.5, 1, 2, 4, 8, 16, 32, 64)])
    ax.minorticks_off()
    ax.set_xlabel(tr("block size (rows of Q and of K/V per tile)"))
    ax.set_ylabel(tr("times fewer bytes"))
    ax.legend(fontsize=8)
    plt.tight_layout()
show()

traffic = attempt(attention.attention_hbm_bytes, S=4096, d=64, block_size=128)
reveal("attention_traffic_ratio", traffic["traffic_ratio"] if traffic else None)

# %% [markdown] tags=["en"]
# **Reflect** (one line, marked by hand with the other reflections): how far was your guess from the ratio, and which bytes does tiled attention still move, again and again, that keep the ratio this small?

# %% [markdown] tags=["vi"]
# **Suy ngẫm** (một dòng, chấm tay cùng các suy ngẫm khác): dự đoán của bạn cách tỉ số bao xa, và attention chia khối vẫn phải di chuyển lặp đi lặp lại những byte nào khiến tỉ số chỉ nhỏ như vậy?

# %% [markdown] tags=["en", "answer:reflections/attention_traffic_ratio"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/attention_traffic_ratio"]
# *Một dòng ở đây.*

# %%
grader.check("attention_traffic")

# %% [markdown] tags=["en"]
# **Predict before you read on.** N = 8 ranks each hold a gradient buffer of M bytes, and AllReduce must leave the sum on every rank. Sending the whole buffer to every other rank costs each rank 7 × M. How many times M does each rank send in a ring AllReduce? A number from 0.1 to 16 (× M): write it in place of `None` and run the cell.

# %% [markdown] tags=["vi"]
# **Dự đoán trước khi đọc tiếp.** N = 8 rank, mỗi rank giữ một bộ đệm gradient M byte, và AllReduce phải để lại tổng trên mọi rank. Gửi cả bộ đệm cho mọi rank khác tốn 7 × M cho mỗi rank. Trong AllReduce vòng, mỗi rank gửi bao nhiêu lần M? Một số từ 0,1 đến 16 (× M): hãy viết nó thay cho `None` rồi chạy ô.

# %%
guess = None  # tr: your prediction, in place of None
predict("ring_bytes_multiple", guess)

# %% [markdown] tags=["en"]
# ## 5. Ring AllReduce (§7.2 Scaling beyond a single node)
#
# Each of N ranks holds a gradient buffer of M elements. The ring splits it into N chunks: N−1 steps of reduce-scatter, after which every rank owns the full sum of one chunk, then N−1 steps of all-gather. The result is the **sum** on every rank (not the mean), and each rank sends 2(N−1)/N × M elements, that is 2(N−1)/N × 4M bytes in float32, almost independent of N.
#
# The chapter gives the factor 2(N−1)/N (the callout "The network wall" in §7.2 Scaling beyond a single node) and defines AllReduce as a sum in its footnote there; §7.1.1 Data parallelism speaks of averaging the gradients, which is this sum divided by N afterwards. The two phases are beyond the chapter: P. Patarasuk and X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of workstations", 2009.
#
# You write what **one rank does at one step**: `ring_send` (which chunk goes to the next rank) and `ring_receive` (add it in, or overwrite). The shipped `lab4_sim.run_ring` plays all N ranks: each call sees only that rank's own buffer, and the messages travel over a simulated network that carries them only from rank r to rank (r + 1) mod N and counts the bytes every rank sends. The grader runs the same simulation and watches every message. Below: 3 ranks, 6 elements, step by step.

# %% [markdown] tags=["vi"]
# ## 5. AllReduce vòng (§7.2 Mở rộng ra ngoài một nút (Scaling beyond a single node))
#
# Mỗi rank trong N rank giữ một bộ đệm gradient gồm M phần tử. Thuật toán vòng chia bộ đệm thành N mảnh (chunk): N−1 bước reduce-scatter, sau đó mỗi rank sở hữu tổng đầy đủ của một mảnh, rồi N−1 bước all-gather. Kết quả là **tổng** trên mọi rank (không phải trung bình), và mỗi rank gửi 2(N−1)/N × M phần tử, tức 2(N−1)/N × 4M byte với float32, gần như không phụ thuộc vào N.
#
# Chương cho hệ số 2(N−1)/N (khung "The network wall" ở §7.2 Mở rộng ra ngoài một nút (Scaling beyond a single node)) và định nghĩa AllReduce là phép tổng trong chú thích ở đó; §7.1.1 Song song dữ liệu (Data parallelism) nói đến việc lấy trung bình gradient, tức là tổng này chia cho N sau đó. Hai pha nằm ngoài chương: P. Patarasuk và X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of workstations", 2009.
#
# Bạn viết việc **một rank làm ở một bước**: `ring_send` (mảnh nào đi tới rank kế tiếp) và `ring_receive` (cộng vào, hoặc ghi đè). `lab4_sim.run_ring` có sẵn mô phỏng cả N rank: mỗi lần gọi chỉ thấy bộ đệm của chính rank đó, và các thông điệp đi qua một mạng mô phỏng chỉ chuyển chúng từ rank r tới rank (r + 1) mod N và đếm số byte mỗi rank gửi. Bộ chấm chạy cùng mô phỏng đó và theo dõi từng thông điệp. Dưới đây: 3 rank, 6 phần tử, từng bước một.

# %%
with skip_if_unwritten():
    N = 3
    buffers = [np.array([1, 2, 3, 4, 5, 6]) * 10**r for r in range(N)]  # tr: rank r: digits in the 10**r place
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

    # tr: The network enforces the ring: a message to any rank but (r + 1) mod N is refused.
    def send_two_ahead(*, rank, N, step, buffer):
        return [{"to": (rank + 2) % N, "chunk": 0, "data": buffer[:1]}]

    try:
        lab4_sim.run_ring(buffers=buffers, send=send_two_ahead, receive=allreduce.ring_receive)
    except lab4_sim.RingError as err:
        print(tr("refused: {error}").format(error=err))

# %%
M = 1000  # tr: float32 elements: 4000 bytes per rank
Ns = [2, 3, 4, 6, 8, 12, 16]
measured = None
with skip_if_unwritten():
    measured = [np.mean(lab4_sim.run_ring(buffers=[np.ones(M, np.float32)] * N, send=allreduce.ring_send,
                                          receive=allreduce.ring_receive)["bytes_sent"]) for N in Ns]
    fig, ax = plt.subplots(figsize=(5.5, 4), layout="constrained")
    ax.plot(Ns, measured, "o", label=tr("ring, counted by the network (mean over ranks)"))
    ax.plot(Ns, [allreduce.allreduce_bytes_per_rank(M_bytes=4 * M, N=N) for N in Ns], "-", label=tr("ring: 2(N−1)/N × 4M bytes"))
    ax.plot(Ns, [(N - 1) * 4 * M for N in Ns], "--", label=tr("naive: the whole buffer to every rank"))
    ax.axhline(2 * 4 * M, color="gray", lw=0.5, label=tr("2 × 4M bytes: the ring's limit for large N"))
    ax.set_yscale("log")
    ax.set_xticks(Ns)  # tr: ranks are whole numbers
    ax.set_xlabel(tr("ranks N"))
    ax.set_ylabel(tr("bytes sent per rank"))
    fig.legend(fontsize=8, loc="outside lower center")  # tr: below the axes: no line runs under it
show()

reveal("ring_bytes_multiple", measured[Ns.index(8)] / (4 * M) if measured is not None else None)

# %% [markdown] tags=["en"]
# **Reflect** (one line, marked by hand with the other reflections): was your multiple right, and why does it stay below 2 however many ranks join the ring?

# %% [markdown] tags=["vi"]
# **Suy ngẫm** (một dòng, chấm tay cùng các suy ngẫm khác): bội số của bạn có đúng không, và vì sao nó vẫn nhỏ hơn 2 dù có bao nhiêu rank tham gia vòng?

# %% [markdown] tags=["en", "answer:reflections/ring_bytes_multiple"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/ring_bytes_multiple"]
# *Một dòng ở đây.*

# %%
grader.check("ring_allreduce")

# %% [markdown] tags=["en"]
# ## 6. The network wall (§7.2 Scaling beyond a single node)
#
# The chapter's callout "The network wall": a 7B model has 14 GB of FP16 gradients. On 8 GPUs each one sends 2·7/8 × 14 = 24.5 GB per step: 1.96 s at 12.5 GB/s (100 Gb/s), against about 1 s of compute. The step is communication-bound. NVLink (900 GB/s) moves the wall.

# %% [markdown] tags=["vi"]
# ## 6. Tường mạng (§7.2 Mở rộng ra ngoài một nút (Scaling beyond a single node))
#
# Khung "The network wall" của chương: một mô hình 7B có 14 GB gradient FP16. Trên 8 GPU, mỗi GPU gửi 2·7/8 × 14 = 24,5 GB mỗi bước: 1,96 s ở 12,5 GB/s (100 Gb/s), so với khoảng 1 s tính toán. Bước huấn luyện bị giới hạn bởi truyền thông (communication-bound). NVLink (900 GB/s) dời bức tường đi.

# %%
BOUND = {"communication": tr("communication-bound"), "compute": tr("compute-bound")}
with skip_if_unwritten():
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
# ## 7. The communication tax (§7 Scaling Training Systems, §8 Fallacies and Pitfalls)
#
# More accelerators should mean faster training, "but the communication tax often eats the gains" (§8 Fallacies and Pitfalls, the first pitfall: the second of its eight items). The figure "The Communication Tax" in §7 Scaling Training Systems draws the speed-up on N GPUs for r = 0.05 (compute-bound, ResNet), 0.15 (an LLM with NVLink) and 0.40 (a slow network). Its formula, speed-up = N / (1 + (N − 1)·r), is only in a comment of the figure's code; the caption calls r "the fraction of step time spent on communication" and the curves illustrative. It is Amdahl's law: however many GPUs, the speed-up stays below 1/r (the chapter's checkpoint in §7.4 When to scale: The physical ceiling asks for that ceiling at r = 0.10).
#
# You can derive the curve from the ring. Keep one step's batch fixed (strong scaling): one GPU computes it in $T_1$; on N GPUs each computes $T_1/N$, then they ring-AllReduce the gradient of $M$ bytes, $2(N-1)/N \cdot M$ per GPU at link bandwidth $B$. The step takes $T_1/N + (N-1)/N \cdot 2M/B$, and the speed-up $T_1$ / step is exactly $N / (1 + (N-1)\,r)$ with $r = 2M / (B\,T_1)$: the ring's time at large N as a fraction of one GPU's step. `communication_tax` computes it through your `network_wall`, with the link in Gb/s as the chapter quotes fabrics (100 Gb/s is 12.5 GB/s), with and without overlapping the AllReduce with the backward pass (one of the network wall's fixes, as in Horovod), and the scaling efficiency, speed-up / N.
#
# Two readings of "fraction of step time" meet here. The pitfall's "small models on 8 GPUs spend 30–50% of time synchronizing gradients, achieving only 4–6× speedup instead of the ideal 8×" is the fraction of the 8-GPU step spent waiting, `comm_fraction`: speed-up = N × (1 − comm_fraction), 8 × 0.7 = 5.6 and 8 × 0.5 = 4. Put 0.3 and 0.5 into the figure's formula as r instead, and 8 GPUs give 2.6× and 1.8×. The two agree once r is read as the ring defines it: 30% and 50% of the 8-GPU step are r = 3/49 ≈ 0.06 and r = 1/7 ≈ 0.14, between the figure's compute-bound and NVLink curves. The pitfall's cluster of 8 that takes 36 h where one A100 takes 24 h has a speed-up of 2/3: r = 11/7, an efficiency of 8%.

# %% [markdown] tags=["vi"]
# ## 7. Thuế truyền thông (§7 Mở rộng hệ thống huấn luyện (Scaling Training Systems), §8 Ngộ nhận và cạm bẫy (Fallacies and Pitfalls))
#
# Nhiều bộ tăng tốc hơn lẽ ra phải huấn luyện nhanh hơn, "nhưng thuế truyền thông thường ăn mất phần lợi" (§8 Ngộ nhận và cạm bẫy (Fallacies and Pitfalls), cạm bẫy thứ nhất: mục thứ hai trong tám mục). Hình "The Communication Tax" ở §7 Mở rộng hệ thống huấn luyện (Scaling Training Systems) vẽ hệ số tăng tốc trên N GPU với r = 0,05 (giới hạn bởi tính toán, ResNet), 0,15 (một LLM dùng NVLink) và 0,40 (mạng chậm). Công thức của nó, tăng tốc = N / (1 + (N − 1)·r), chỉ nằm trong một chú thích của mã vẽ hình; chú giải gọi r là "phần thời gian của bước dành cho truyền thông" và nói các đường chỉ mang tính minh hoạ. Đó là định luật Amdahl: dù bao nhiêu GPU, hệ số tăng tốc vẫn dưới 1/r (ô tự kiểm tra của chương ở §7.4 Khi nào cần mở rộng: giới hạn vật lý (When to scale: The physical ceiling) hỏi trần đó khi r = 0,10).
#
# Bạn có thể suy ra đường cong từ thuật toán vòng. Giữ cố định batch của một bước (mở rộng mạnh, strong scaling): một GPU tính nó trong $T_1$; trên N GPU mỗi GPU tính $T_1/N$, rồi chúng AllReduce vòng gradient $M$ byte, $2(N-1)/N \cdot M$ mỗi GPU với băng thông liên kết $B$. Bước mất $T_1/N + (N-1)/N \cdot 2M/B$, và hệ số tăng tốc $T_1$ / bước đúng bằng $N / (1 + (N-1)\,r)$ với $r = 2M / (B\,T_1)$: thời gian của vòng khi N lớn, tính theo tỉ lệ với bước của một GPU. `communication_tax` tính nó qua `network_wall` của bạn, với liên kết tính bằng Gb/s như chương ghi các mạng (100 Gb/s là 12,5 GB/s), có và không chồng lấp AllReduce với lượt ngược (một trong các cách khắc phục tường mạng, như Horovod), cùng hiệu suất mở rộng, tăng tốc / N.
#
# Hai cách hiểu "phần thời gian của bước" gặp nhau ở đây. Câu "các mô hình nhỏ trên 8 GPU dành 30–50% thời gian để đồng bộ gradient, chỉ tăng tốc 4–6× thay vì 8× lý tưởng" của cạm bẫy là phần thời gian của bước 8 GPU phải chờ, `comm_fraction`: tăng tốc = N × (1 − comm_fraction), 8 × 0,7 = 5,6 và 8 × 0,5 = 4. Nếu đưa 0,3 và 0,5 vào công thức của hình làm r, 8 GPU chỉ cho 2,6× và 1,8×. Hai cách khớp nhau khi r được hiểu như thuật toán vòng định nghĩa: 30% và 50% của bước 8 GPU ứng với r = 3/49 ≈ 0,06 và r = 1/7 ≈ 0,14, nằm giữa đường giới hạn bởi tính toán và đường NVLink của hình. Cụm 8 GPU trong cạm bẫy, mất 36 giờ trong khi một A100 mất 24 giờ, có hệ số tăng tốc 2/3: r = 11/7, hiệu suất 8%.

# %% [markdown] tags=["en"]
# **Predict first.** A 7B model trains with FP16 gradients on GPUs linked at 100 Gb/s; one GPU computes a step in 8 s. Split over 8 GPUs without overlap, each computes for 1 s and then ring-AllReduces the gradients. What speed-up against one GPU do the 8 GPUs give? A number from 0.1 to 8 (x): write it in place of `None` and run the cell.

# %% [markdown] tags=["vi"]
# **Dự đoán trước.** Một mô hình 7B huấn luyện với gradient FP16 trên các GPU nối với nhau ở 100 Gb/s; một GPU tính một bước trong 8 s. Chia cho 8 GPU mà không chồng lấp, mỗi GPU tính trong 1 s rồi AllReduce vòng các gradient. 8 GPU nhanh hơn một GPU bao nhiêu lần? Một số từ 0,1 đến 8 (x): hãy viết nó thay cho `None` rồi chạy ô.

# %%
guess = None  # tr: your prediction, in place of None
predict("speedup_8_gpus", guess)

# %%
model = dict(n_params=7e9, bytes_per_param=2, link_Gbps=100.0, compute_s_one_gpu=8.0)  # tr: 1 s a step on each of 8
with skip_if_unwritten():
    CURVES = {r: tr("{curve}, r = {r}").format(curve=name, r=num(r, 2)) for r, name in
              ((0.05, tr("compute-bound (ResNet)")), (0.15, tr("LLM with NVLink")), (0.40, tr("slow network")))}
    for r, name in CURVES.items():
        print(tr("{curve}: {at8}x on 8 GPUs, {at256}x on 256, never above {ceiling}x").format(
            curve=name, at8=num(allreduce.scaling_speedup(n_gpus=8, r=r), 2),
            at256=num(allreduce.scaling_speedup(n_gpus=256, r=r), 1), ceiling=num(1 / r, 1)))
    for waiting in (0.3, 0.5):  # tr: the pitfall: the fraction of the 8-GPU step spent synchronizing
        r = waiting / (7 * (1 - waiting))  # tr: from comm_fraction = (N − 1)·r / (1 + (N − 1)·r) with N = 8
        print(tr("8 GPUs waiting {waiting} of the step: r = {r}, speed-up {speedup}x (the figure's formula with r = "
                 "{waiting_number} would say {naive}x)").format(
            waiting=num(waiting, ".0%"), r=num(r, 3), speedup=num(allreduce.scaling_speedup(n_gpus=8, r=r), 2),
            waiting_number=num(waiting, 1), naive=num(allreduce.scaling_speedup(n_gpus=8, r=waiting), 2)))
    cluster = allreduce.scaling_speedup(n_gpus=8, r=11 / 7)
    print(tr("r = 11/7 on 8 GPUs: speed-up {speedup}x, so 24 h on one GPU take {hours} h on the cluster").format(
        speedup=num(cluster, 3), hours=num(24 / cluster, 0)))

    for n in (2, 8, 64):
        for overlap in (False, True):
            t = allreduce.communication_tax(n_gpus=n, overlap=overlap, **model)
            print(tr("7B, FP16, 100 Gb/s, {n} GPUs, overlap={overlap}: AllReduce {comm} s against {compute} s of compute, "
                     "{waiting} of the step waiting, speed-up {speedup}x, efficiency {efficiency} (r = {r})").format(
                n=n, overlap=overlap, comm=num(t["comm_s"], 2), compute=num(t["compute_s"], 3),
                waiting=num(t["comm_fraction"], ".0%"), speedup=num(t["speedup"], 2),
                efficiency=num(t["efficiency"], ".0%"), r=num(t["r"], 2)))

    Ns = [1, 2, 4, 8, 16, 32, 64, 128, 256]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot(Ns, Ns, "k--", lw=1, label=tr("linear"))
    for r, name in CURVES.items():
        ax.plot(Ns, [allreduce.scaling_speedup(n_gpus=n, r=r) for n in Ns], "o-", ms=3, label=name)
    for overlap, marker in ((False, "s"), (True, "^")):
        ax.plot(Ns, [allreduce.communication_tax(n_gpus=n, overlap=overlap, **model)["speedup"] for n in Ns], marker,
                color="gray", label=tr("7B over 100 Gb/s, overlap={overlap}").format(overlap=overlap))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(Ns, [str(n) for n in Ns])
    ax.set_yticks(Ns, [str(n) for n in Ns])
    ax.minorticks_off()
    ax.set_xlabel(tr("GPUs N"))
    ax.set_ylabel(tr("speed-up against one GPU"))
    ax.legend(fontsize=7, loc="upper left")
    plt.tight_layout()
show()

tax = attempt(allreduce.communication_tax, n_gpus=8, overlap=False, **model)
reveal("speedup_8_gpus", tax["speedup"] if tax else None)

# %% [markdown] tags=["en"]
# **Reflect** (one line, marked by hand with the other reflections): how far was your guess from the speed-up, and which time does not shrink as GPUs are added?

# %% [markdown] tags=["vi"]
# **Suy ngẫm** (một dòng, chấm tay cùng các suy ngẫm khác): dự đoán của bạn cách hệ số tăng tốc bao xa, và thời gian nào không giảm khi thêm GPU?

# %% [markdown] tags=["en", "answer:reflections/speedup_8_gpus"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/speedup_8_gpus"]
# *Một dòng ở đây.*

# %%
grader.check("communication_tax")

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
# The zip holds your three `.py` files, this notebook with its outputs and your written answers, your predictions (`predictions.json`) and `MANIFEST.json`, the size and SHA-256 hash of each file; the last cell of this notebook writes the same zip.
#
# The public tests are quick snapshot checks. More **hidden tests run at grading**: random shapes and lengths, causal masks and several heads, float32 and float64 tolerances, the image pipeline's bottleneck at every number of workers, the chapter's numbers for attention's bytes and for the communication tax, counts walked tile by tile, the recorded events of your loader (overlap, the queue bound, threads and processes), every message of your ring as the simulated network carries it, and how much the measured peak memory of `tiled_attention` grows from S = 1024 to S = 2048. Passing the public tests is necessary, not sufficient.
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
# Tệp zip chứa ba tệp `.py` của bạn, sổ tay này cùng kết quả chạy và các câu trả lời viết của bạn, các dự đoán của bạn (`predictions.json`) và `MANIFEST.json`, kích thước và mã băm SHA-256 của từng tệp; ô cuối của sổ tay này tạo đúng tệp zip đó.
#
# Các bài kiểm thử công khai là những phép so sánh nhanh với kết quả mẫu đã lưu (snapshot). Khi chấm điểm còn chạy thêm nhiều **bài kiểm thử ẩn**: hình dạng và độ dài ngẫu nhiên, mặt nạ nhân quả (causal mask) và nhiều head, dung sai của float32 và float64, điểm nghẽn của quy trình nạp ảnh ở mọi số worker, các số của chương cho số byte của attention và cho thuế truyền thông, các phép đếm duyệt từng ô, các sự kiện đã ghi của bộ nạp của bạn (chồng lấp, giới hạn hàng đợi, luồng và tiến trình), từng thông điệp của vòng AllReduce của bạn khi mạng mô phỏng chuyển nó, và mức tăng của bộ nhớ đỉnh đo được của `tiled_attention` từ S = 1024 lên S = 2048. Vượt qua các bài kiểm thử công khai là điều kiện cần, chưa phải điều kiện đủ.
#
# Trong sổ tay này, các ô `grader.check("...")` chạy cùng các bài kiểm thử công khai, từng câu hỏi một; `grader.check_all()` chạy tất cả.
