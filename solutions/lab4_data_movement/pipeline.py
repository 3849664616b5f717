"""Lab 4, part 1: the input pipeline (§4.2 Data pipeline, §5 Identifying Bottlenecks,
§6.2 Data prefetching and overlapping).

The slowest stage sets the pace of the whole pipeline, and overlapping the
stages (prefetching) turns the sum of stage times into their maximum, as
long as the stages can really run at the same time.

Conventions used by every function below:
  * rates are items per second (images, tokens, bytes: whatever the caller
    uses, as long as all stages use the same item);
  * times are seconds;
  * GB means 10**9 bytes and KB 10**3 bytes (decimal, as in the chapter);
  * the compute stage of a pipeline is always called "compute".

Tóm tắt (tiếng Việt): chặng chậm nhất quyết định tốc độ của cả quy trình nạp;
chồng lấp các chặng (nạp trước) biến tổng thời gian các chặng thành giá trị lớn nhất
của chúng. Tốc độ tính bằng phần tử/giây, thời gian bằng giây, GB = 10**9 byte,
KB = 10**3 byte; chặng tính toán luôn có tên "compute".
"""

from __future__ import annotations

import queue  # queue.Queue(maxsize=...): the bounded buffer between loader and consumer
import threading  # threading.Thread: the background loader

from lab4_sim import Recorder  # shipped: does each stage's simulated work and records it

# --------------------------------------------------------------------------
# The slowest stage wins.
# --------------------------------------------------------------------------


def storage_rate(*, disk_rate: float, network_rate: float, access_factor: float = 1.0) -> float:
    """Rate at which storage delivers data: R_storage = min(disk, network) × access factor.

    Args:
        disk_rate: sequential read rate of the disk (items/s, e.g. bytes/s).
        network_rate: rate of the network link between storage and the host
            (same unit).
        access_factor: fraction of the sequential rate achieved by the access
            pattern: 1.0 for sequential reads, about 0.1 for random access.

    Returns:
        The storage rate, in the unit of the inputs (float).

    Tóm tắt (tiếng Việt): trả về min(disk_rate, network_rate) × access_factor
    (float, cùng đơn vị với đầu vào); access_factor là 1.0 khi đọc tuần tự, khoảng 0.1
    khi truy cập ngẫu nhiên.
    """
    ### BEGIN SOLUTION
    return min(disk_rate, network_rate) * access_factor
    ### END SOLUTION


def preprocess_rate(*, workers: int, t_transform_s: float) -> float:
    """Rate of the preprocessing stage: R_preprocess = workers / t_transform.

    Args:
        workers: number of parallel worker processes (or cores).
        t_transform_s: seconds one worker spends on one item.

    Returns:
        Items per second (float).

    Tóm tắt (tiếng Việt): trả về workers / t_transform_s, số phần tử mỗi giây (float).
    """
    ### BEGIN SOLUTION
    assert t_transform_s > 0, "a transform takes a positive time"
    return workers / t_transform_s
    ### END SOLUTION


def pipeline_rate(*, stage_rates: dict[str, float]) -> dict:
    """Throughput of a pipeline of stages that run concurrently.

    R_pipeline = min over stages; utilization = R_pipeline / R_compute.

    Args:
        stage_rates: stage name -> rate (items/s). Must contain the key
            "compute" (the accelerator's rate). Example:
            {"storage": 700.0, "preprocess": 200.0, "compute": 1000.0}.

    Returns:
        dict with exactly these keys:
          "rate" (float): the pipeline's throughput, items/s;
          "bottleneck" (str): name of the slowest stage (the first one in
              the dict's order if several tie);
          "utilization" (float): fraction of the accelerator's rate that is
              used, in [0, 1] (200 img/s feeding a 1000 img/s accelerator
              gives 0.2).

    Tóm tắt (tiếng Việt): trả về dict đúng ba khoá "rate" (min các tốc độ, phần tử/s),
    "bottleneck" (tên chặng chậm nhất; hoà thì lấy chặng đứng trước theo thứ tự dict) và
    "utilization" (rate / stage_rates["compute"], trong [0, 1]).
    """
    ### BEGIN SOLUTION
    assert "compute" in stage_rates, "the pipeline needs a 'compute' stage"
    bottleneck = min(stage_rates, key=stage_rates.get)  # min() keeps the first of ties
    rate = stage_rates[bottleneck]
    return {"rate": rate, "bottleneck": bottleneck, "utilization": rate / stage_rates["compute"]}
    ### END SOLUTION


def pipeline_step(*, stage_times_s: dict[str, float], overlap: bool) -> dict:
    """Time per iteration of a pipeline, with or without overlapping stages.

    Without overlap each iteration runs the stages one after another, so
    t_iteration = sum of the stage times. With overlap (prefetching), stage k
    of batch i+1 runs while stage k+1 works on batch i, so in steady state
    t_iteration = max of the stage times.

    Args:
        stage_times_s: stage name -> seconds per iteration (batch). Must
            contain the key "compute".
        overlap: whether the stages run concurrently.

    Returns:
        dict with exactly these keys:
          "step_s" (float): seconds per iteration;
          "throughput" (float): iterations per second, 1 / step_s;
          "utilization" (float): fraction of the step the accelerator
              computes, stage_times_s["compute"] / step_s;
          "bottleneck" (str): name of the stage with the largest time (the
              first one in the dict's order if several tie). It is the same
              with and without overlap.

    Tóm tắt (tiếng Việt): step_s (giây mỗi vòng lặp) là tổng thời gian các chặng
    nếu không chồng lấp, giá trị lớn nhất nếu có; trả về dict đúng các khoá "step_s",
    "throughput" (1 / step_s), "utilization" (stage_times_s["compute"] / step_s) và
    "bottleneck" (chặng lâu nhất; hoà thì lấy chặng đứng trước theo thứ tự dict).
    """
    ### BEGIN SOLUTION
    assert "compute" in stage_times_s, "the pipeline needs a 'compute' stage"
    times = stage_times_s
    step = max(times.values()) if overlap else sum(times.values())
    bottleneck = max(times, key=times.get)  # max() keeps the first of ties
    return {"step_s": step, "throughput": 1.0 / step, "utilization": times["compute"] / step,
            "bottleneck": bottleneck}
    ### END SOLUTION


def gpt2_pipeline(*, batch_size: int = 32, seq_len: int = 1024, tokens_per_s_per_core: float = 500_000.0,
                  workers: int = 8,
                  bytes_per_token: int = 8, pcie_GBps: float = 15.75, forward_s: float = 0.080) -> dict:
    """The chapter's GPT-2 pipeline: tokenize on the CPU, copy over PCIe, run the forward pass.

    With the defaults (the example "GPT-2 language model data pipeline" of
    §4.2.2 Preprocessing): 32 × 1024 = 32,768 tokens per batch; tokenizing
    takes 65.5 ms on one core and 8.2 ms on 8; the int64 batch is 262 KB and
    moves in 0.017 ms over PCIe Gen3; the forward pass takes 80 ms. So the
    step is compute-bound already with one core (65.5 ms < 80 ms: "close to"
    the forward pass, in the chapter's words); the chapter's 8 workers and
    prefetching buy headroom, not a new bottleneck. image_pipeline below is
    the case where adding workers moves the bottleneck.

    Args:
        batch_size: sequences per batch (B).
        seq_len: tokens per sequence (S).
        tokens_per_s_per_core: tokenizer speed of one core.
        workers: cores tokenizing in parallel (the work splits evenly).
        bytes_per_token: bytes of one token id on the wire (int64: 8).
        pcie_GBps: host-to-device bandwidth in GB/s (10**9 bytes/s).
        forward_s: seconds of the forward pass for one batch.

    Returns:
        dict with exactly these keys (times in seconds):
          "tokens_per_batch" (int): B × S;
          "tokenize_s_one_core" (float): tokens / (tokens_per_s_per_core);
          "tokenize_s" (float): the same with `workers` cores;
          "batch_bytes" (int): tokens × bytes_per_token;
          "transfer_s" (float): batch_bytes / (pcie_GBps × 1e9);
          "forward_s" (float): forward_s;
          "step_s_no_overlap" (float): tokenize_s + transfer_s + forward_s;
          "step_s_overlap" (float): max of the three;
          "utilization_no_overlap" (float): forward_s / step_s_no_overlap;
          "utilization_overlap" (float): forward_s / step_s_overlap;
          "bottleneck" (str): the slowest of "tokenize", "transfer",
              "compute" (ties go to the first in that order).

    Tóm tắt (tiếng Việt): tính thời gian (giây) token hoá trên CPU (chia đều cho
    `workers` lõi), truyền batch_bytes = số token × bytes_per_token byte qua PCIe
    (pcie_GBps × 1e9 byte/s) và lượt xuôi; trả về dict đúng 11 khoá ở trên, kể cả bước
    có/không chồng lấp, mức sử dụng và "bottleneck" (hoà thì lấy tên đứng trước).
    """
    ### BEGIN SOLUTION
    tokens = batch_size * seq_len
    tokenize_1 = tokens / tokens_per_s_per_core
    batch_bytes = tokens * bytes_per_token
    # the stage names match pipeline_step's convention: the accelerator is "compute"
    times = {"tokenize": tokenize_1 / workers, "transfer": batch_bytes / (pcie_GBps * 1e9), "compute": forward_s}
    serial = pipeline_step(stage_times_s=times, overlap=False)
    overlapped = pipeline_step(stage_times_s=times, overlap=True)
    return {
        "tokens_per_batch": tokens,
        "tokenize_s_one_core": tokenize_1,
        "tokenize_s": times["tokenize"],
        "batch_bytes": batch_bytes,
        "transfer_s": times["transfer"],
        "forward_s": forward_s,
        "step_s_no_overlap": serial["step_s"],
        "step_s_overlap": overlapped["step_s"],
        "utilization_no_overlap": serial["utilization"],
        "utilization_overlap": overlapped["utilization"],
        "bottleneck": overlapped["bottleneck"],
    }
    ### END SOLUTION


def image_pipeline(*, workers: int, batch_size: int = 32, t_transform_s: float = 0.030,
                   compute_s: float = 0.010, image_bytes: float = 500_000.0, disk_GBps: float = 7.0,
                   network_GBps: float | None = None, access_factor: float = 0.1,
                   tensor_bytes_per_image: int = 224 * 224 * 3 * 4, pcie_GBps: float = 15.75) -> dict:
    """An image-classification input pipeline of four stages, in batches per second.

    The stages run concurrently (storage reads batch i+2 while the CPU
    workers transform batch i+1 and the accelerator computes batch i), so
    the pipeline runs at its slowest stage's rate (pipeline_rate):
      * "storage": R_storage × access factor, in bytes/s, over the stored
        bytes of one batch: storage_rate(disk_rate=disk_GBps × 1e9,
        network_rate=network_GBps × 1e9, access_factor=access_factor)
        / (batch_size × image_bytes). network_GBps=None means a local disk
        with no network between it and the host: use the disk's rate for
        both arguments;
      * "preprocess": preprocess_rate(workers=workers,
        t_transform_s=t_transform_s): t_transform_s is the time ONE worker
        spends on one whole batch (decode, crop, jitter, normalise);
      * "transfer": pcie_GBps × 1e9 / (batch_size × tensor_bytes_per_image),
        the decoded batch crossing PCIe;
      * "compute": 1 / compute_s.

    The defaults are the chapter's numbers where it gives them: one CPU
    thread takes 30 ms per batch and cannot feed an accelerator that needs
    10 ms (§4.2.2 Preprocessing; §6.2.2 Practical considerations: crop
    10 + jitter 15 + normalise 5 = 30 ms); an NVMe Gen4 disk reads 7 GB/s
    sequentially (§4.2.2 Preprocessing, the GPT-2 example; §4.2.5 Practical
    architectures) and about 0.1 of that under the random access of shuffled
    training (§4.2.1 Core components); PCIe Gen3 carries 15.75 GB/s
    (§4.2.2 Preprocessing, the GPT-2 example); batches of 32 (the DataLoader of §6.2.1 Prefetching
    mechanics). Two numbers are the lab's own, not the chapter's: 500 KB
    stored per image (a high-resolution JPEG) and a batch decoded to FP32
    224 × 224 × 3 images on the wire. With them, one worker delivers 33.3
    batches/s (the accelerator is 33% busy); from 2 workers on, storage's
    43.75 batches/s binds, however many workers are added. With sequential
    reads (access_factor=1.0) preprocessing binds up to 3 workers (at 3 it
    ties with compute, both exactly 100 batches/s) and compute from 4 on:
    the "four to eight worker threads" of §4.2.5 Practical architectures.

    Args:
        workers: CPU workers transforming batches in parallel.
        batch_size: images per batch.
        t_transform_s: seconds one worker spends on one batch.
        compute_s: seconds the accelerator spends on one batch.
        image_bytes: bytes of one stored (encoded) image.
        disk_GBps: the disk's sequential read rate, GB/s (10**9 bytes/s).
        network_GBps: the network between storage and host, GB/s, or None
            for a local disk.
        access_factor: fraction of the sequential rate the access pattern
            achieves (about 0.1 for random access, 1.0 for sequential).
        tensor_bytes_per_image: bytes of one decoded image sent to the
            accelerator.
        pcie_GBps: host-to-device bandwidth, GB/s.

    Returns:
        dict with exactly these keys (rates in batches per second, floats):
          "storage_rate", "preprocess_rate", "transfer_rate",
          "compute_rate": each stage's rate;
          "rate": the pipeline's rate, the smallest of the four;
          "bottleneck" (str): the slowest stage, one of "storage",
              "preprocess", "transfer", "compute" (ties go to the first in
              that order, as in pipeline_rate);
          "utilization": rate / compute_rate, in [0, 1];
          "images_per_s": rate × batch_size.

    Tóm tắt (tiếng Việt): quy trình nạp ảnh bốn chặng chạy đồng thời, tốc độ tính bằng
    batch/giây: "storage" = storage_rate(disk_rate=disk_GBps × 1e9, network_rate=network_GBps
    × 1e9, access_factor) / (batch_size × image_bytes) (network_GBps=None: đĩa cục bộ, dùng tốc
    độ của đĩa cho cả hai đối số); "preprocess" = preprocess_rate(workers, t_transform_s) với
    t_transform_s là thời gian MỘT worker xử lý cả một batch; "transfer" = pcie_GBps × 1e9 /
    (batch_size × tensor_bytes_per_image); "compute" = 1 / compute_s. Trả về dict đúng tám khoá
    ở trên: bốn tốc độ, "rate" (nhỏ nhất), "bottleneck" (hoà thì lấy chặng đứng trước theo thứ tự
    storage, preprocess, transfer, compute), "utilization" = rate / compute_rate và
    "images_per_s" = rate × batch_size. Mặc định là số của chương (30 ms mỗi batch trên một luồng
    so với 10 ms của bộ tăng tốc; NVMe 7 GB/s, hệ số truy cập ngẫu nhiên 0,1; PCIe 15,75 GB/s);
    500 KB mỗi ảnh lưu trữ và ảnh FP32 224 × 224 × 3 là số của bài lab.
    """
    ### BEGIN SOLUTION
    disk = disk_GBps * 1e9
    link = disk if network_GBps is None else network_GBps * 1e9  # a local disk: no network to cross
    stored_batch = batch_size * image_bytes
    rates = {  # in pipeline order, so that pipeline_rate's "first of ties" is the earliest stage
        "storage": storage_rate(disk_rate=disk, network_rate=link, access_factor=access_factor) / stored_batch,
        "preprocess": preprocess_rate(workers=workers, t_transform_s=t_transform_s),
        "transfer": pcie_GBps * 1e9 / (batch_size * tensor_bytes_per_image),
        "compute": 1.0 / compute_s,
    }
    slowest = pipeline_rate(stage_rates=rates)
    return {"storage_rate": rates["storage"], "preprocess_rate": rates["preprocess"],
            "transfer_rate": rates["transfer"], "compute_rate": rates["compute"], "rate": slowest["rate"],
            "bottleneck": slowest["bottleneck"], "utilization": slowest["utilization"],
            "images_per_s": slowest["rate"] * batch_size}
    ### END SOLUTION


# --------------------------------------------------------------------------
# Prefetching with a background thread and a bounded queue.
# --------------------------------------------------------------------------


def run_loader(*, n_items: int, load_work: float, compute_work: float, kind: str = "sleep",
               prefetch: bool = False, queue_size: int = 2) -> dict:
    """Load and compute ``n_items`` items, sequentially or with a prefetch thread.

    Create one ``lab4_sim.Recorder()`` at the start of the call (in the
    calling thread). Loading item i is ``rec.load(i, kind=kind,
    amount=load_work)``, which returns the item; computing on it is
    ``rec.compute(item, kind=kind, amount=compute_work)``. (The amounts are
    seconds for kind="sleep", a wait that releases the GIL, and loop
    iterations for kind="python_cpu", pure-Python work that holds it.)
    Load every item exactly once, in order 0, 1, ..., n_items−1, and
    compute every item exactly once, in the same order, in the calling
    thread.

    prefetch=False: one loop in the calling thread: load item i, compute
        item i, then item i+1.
    prefetch=True: one background ``threading.Thread`` (not a process)
        loads the items in order and puts each into a
        ``queue.Queue(maxsize=queue_size)`` right after loading it; the
        calling thread takes items from the queue and computes them. Join
        the thread (``thread.join()``) before calling ``rec.report()``.

    The grader judges only the recorded events, never a timing threshold:
      * every item loaded once and computed once, in order, each compute
        after its own load, with the kind and amounts asked for (every
        ``rec.load`` call is recorded, also one whose item is then dropped:
        never load an item again in the calling thread);
      * the loader thread joined when ``rec.report()`` runs (the report
        lists the threads that did recorded work and were not joined);
      * prefetch=False: everything in the calling thread, and no item
        loaded while the previous one is being computed;
      * prefetch=True: loads in one other thread of the same process,
        computes in the calling thread, and loading overlaps computing
        (some item i+1 starts loading before item i finishes computing);
      * the queue bound: at most queue_size items wait in the queue and the
        loader holds one more while it waits to put it, so loading item i
        never starts before item i − queue_size − 2 has finished computing;
      * the queue is used up to queue_size: with fast loads and slow
        computes, the loader fills the queue and loads one more item, so
        some item i starts loading before item i − queue_size − 1 has
        finished computing (a smaller queue, such as maxsize=1 whatever
        queue_size says, never does).
    Each call has the lab's 20 s time limit; the grader's cases sleep for
    well under 1 s in total.

    Returns:
        ``rec.report()``: a dict with the keys "pid" and "thread" (of the
        calling thread), "events" (every load and compute event; see
        lab4_sim.Recorder) and "unjoined" (threads not joined yet: empty).

    Tóm tắt (tiếng Việt): tạo một lab4_sim.Recorder() ở đầu lời gọi; nạp mỗi phần tử đúng
    một lần theo thứ tự bằng rec.load(i, ...) và tính nó đúng một lần, theo cùng thứ tự, trong
    luồng gọi hàm bằng rec.compute(item, ...); tuần tự, hoặc với một luồng nền threading.Thread
    (không phải tiến trình) nạp trước vào queue.Queue(maxsize=queue_size), được join trước khi
    gọi rec.report(). Mọi lần gọi rec.load đều được ghi, kể cả khi phần tử bị bỏ đi: đừng nạp lại
    phần tử trong luồng gọi hàm. Bộ chấm chỉ xét các sự kiện đã ghi (chồng lấp, giới hạn hàng
    đợi, luồng và tiến trình, luồng chưa join), không xét ngưỡng thời gian; mỗi lần gọi có giới
    hạn 20 s. Hàng đợi phải được dùng đến đúng queue_size: khi nạp nhanh và tính chậm, luồng nạp
    lấp đầy hàng đợi và nạp thêm một phần tử, nên có phần tử i bắt đầu nạp trước khi phần tử
    i − queue_size − 1 tính xong (hàng đợi nhỏ hơn, như maxsize=1 bất kể queue_size, không bao
    giờ làm được vậy). Trả về rec.report().
    """
    ### BEGIN SOLUTION
    assert kind in ("sleep", "python_cpu"), f"unknown kind {kind!r}"
    assert queue_size >= 1, "a bounded queue holds at least one item"
    rec = Recorder()

    if not prefetch:
        for i in range(n_items):
            rec.compute(rec.load(i, kind=kind, amount=load_work), kind=kind, amount=compute_work)
        return rec.report()

    # put() blocks while the queue is full: that bound is what keeps a fast
    # loader from filling memory with samples the accelerator is not ready for.
    q: queue.Queue[dict] = queue.Queue(maxsize=queue_size)

    def producer() -> None:
        for i in range(n_items):
            q.put(rec.load(i, kind=kind, amount=load_work))

    loader = threading.Thread(target=producer, daemon=True)
    loader.start()
    for _ in range(n_items):
        rec.compute(q.get(), kind=kind, amount=compute_work)
    loader.join()
    return rec.report()
    ### END SOLUTION
