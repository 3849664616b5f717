"""Lab 4, part 3: ring AllReduce, the network wall and the communication tax
(§7 Scaling Training Systems, §7.2 Scaling beyond a single node, §8 Fallacies and Pitfalls).

Data-parallel training sums every gradient over N workers each step. The
ring algorithm splits each rank's buffer into N chunks and passes chunks
around a ring: N−1 steps of reduce-scatter (each rank ends up owning the
full sum of one chunk), then N−1 steps of all-gather (the owned chunks are
copied around). Each rank sends 2(N−1)/N × M bytes, almost independent of N
(the factor is the chapter's, in the callout "The network wall" of §7.2
Scaling beyond a single node); that is also why a big model's gradients can
still hit a network wall. The two phases and the proof that no algorithm
sends less are beyond the chapter: P. Patarasuk and X. Yuan, "Bandwidth
optimal all-reduce algorithms for clusters of workstations", J. Parallel
Distrib. Comput. 69(2), 2009.

You write what one rank does at one step (ring_send, ring_receive); the
shipped simulation lab4_sim.run_ring plays all N ranks over a simulated
network that only carries messages from rank r to rank (r + 1) mod N and
counts the bytes each rank sends. The grader runs the same simulation on
its own copy and watches every message.

Conventions:
  * AllReduce returns the element-wise SUM over ranks, not the mean (the
    chapter's AllReduce footnote in §7.2 Scaling beyond a single node
    defines it as a sum; §7.1.1 Data
    parallelism speaks of averaging gradients: the average is this sum
    divided by N, a local step after the AllReduce).
  * Bytes are counted as elements × itemsize of the buffers' dtype: the
    nbytes of every message's data.
  * GB means 10**9 bytes; link bandwidths are in GB/s.
  * No function changes its arguments in place (the grader fails a call
    that does): ring_receive returns a new buffer.

Tóm tắt (tiếng Việt): AllReduce vòng chia bộ đệm của mỗi rank thành N mảnh, chạy N−1
bước reduce-scatter rồi N−1 bước all-gather (hai pha này nằm ngoài chương: Patarasuk và Yuan,
2009); mỗi rank gửi 2(N−1)/N × M byte (hệ số của chương, §7.2 Mở rộng ra ngoài một nút (Scaling beyond a
single node)). Bạn viết việc
một rank làm ở một bước (ring_send, ring_receive); lab4_sim.run_ring mô phỏng N rank trên một
mạng chỉ cho rank r gửi tới rank (r + 1) mod N và đếm số byte mỗi rank gửi. Kết quả là TỔNG
theo phần tử (không phải trung bình); byte = số phần tử × itemsize; GB = 10**9 byte, băng
thông tính bằng GB/s. Không hàm nào được sửa tại chỗ các đối số của nó (bộ chấm đánh trượt lời
gọi làm vậy): ring_receive trả về một bộ đệm mới.
"""

from __future__ import annotations

import numpy as np


def chunk_bounds(*, M: int, N: int) -> list[tuple[int, int]]:
    """Split M elements into N contiguous chunks whose sizes differ by at most one.

    The first M mod N chunks get one extra element (numpy's array_split
    convention). Chunks may be empty when M < N.

    Returns:
        list of N (start, stop) pairs of ints, chunk c being
        buffer[start:stop]; the first start is 0, each stop is the next
        start, and the last stop is M.

    Tóm tắt (tiếng Việt): trả về N cặp (start, stop) liền nhau phủ từ 0 đến M, kích
    thước chênh nhau tối đa 1, M mod N mảnh đầu có thêm một phần tử (như np.array_split);
    mảnh có thể rỗng khi M < N.
    """
    ### BEGIN SOLUTION
    assert N >= 1 and M >= 0, f"need N >= 1 and M >= 0, got N={N}, M={M}"
    base, extra = divmod(M, N)
    bounds, start = [], 0
    for c in range(N):
        stop = start + base + (1 if c < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds
    ### END SOLUTION


def ring_chunk(*, rank: int, N: int, step: int) -> int:
    """The chunk that rank ``rank`` sends at ``step`` of the ring (the schedule below).

    Steps s = 0 .. N−2 are reduce-scatter: rank r sends chunk (r − s) mod N.
    Steps s = N−1 .. 2N−3 are all-gather step t = s − (N−1): rank r sends
    chunk (r + 1 − t) mod N.

    Returns:
        int in 0 .. N−1.

    Tóm tắt (tiếng Việt): trả về chỉ số mảnh mà rank gửi ở bước step: (r − s) mod N ở
    các bước reduce-scatter s = 0 .. N−2, (r + 1 − t) mod N với t = s − (N−1) ở các bước
    all-gather.
    """
    ### BEGIN SOLUTION
    assert 0 <= step < 2 * (N - 1), f"a ring over {N} ranks has steps 0..{2 * (N - 1) - 1}, got {step}"
    if step < N - 1:
        return (rank - step) % N
    return (rank + 1 - (step - (N - 1))) % N
    ### END SOLUTION


def ring_send(*, rank: int, N: int, step: int, buffer: np.ndarray) -> list[dict]:
    """The messages rank ``rank`` sends at ``step`` of ring AllReduce (sum).

    The simulation (``lab4_sim.run_ring``, which the grader runs on its own
    copy) plays N ranks on a ring, for 2(N−1) steps. At each step it first
    calls ring_send for every rank, with a copy of that rank's buffer as it
    is at the start of the step, carries the messages over its network,
    then calls ring_receive for every rank. A call sees one rank's own
    buffer and nothing else, as on a real cluster; the network counts the
    bytes each rank sends.

    The buffer (1-D, length M, any numeric dtype; M need not be divisible
    by N) is split into N chunks with chunk_bounds(M=M, N=N). The schedule:
      * Reduce-scatter, steps s = 0 .. N−2: rank r sends its chunk
        (r − s) mod N; the receiver adds it into its own copy of that
        chunk. Afterwards rank r holds the full sum of chunk (r + 1) mod N.
      * All-gather, steps s = N−1 .. 2N−3, with t = s − (N−1): rank r sends
        its chunk (r + 1 − t) mod N; the receiver overwrites its copy.
    ring_chunk(rank=, N=, step=) gives that index.

    Rank r only ever sends to rank (r + 1) mod N: the network refuses any
    other destination (lab4_sim.RingError). Send exactly one message per
    step, carrying exactly that chunk's elements.

    Returns:
        list with one message, a dict with exactly these keys:
          "to" (int): (rank + 1) % N;
          "chunk" (int): the chunk's index c;
          "data" (1-D array, the buffer's dtype): buffer[start:stop] of
              chunk c. The network counts its nbytes as bytes sent.
        Over both phases each rank then sends 2(N−1)/N × M × itemsize bytes
        when N divides M.

    Tóm tắt (tiếng Việt): trả về danh sách đúng một thông điệp {"to": (rank + 1) % N,
    "chunk": c, "data": buffer[start:stop] của mảnh c} theo lịch trên (ring_chunk); mỗi lần
    gọi chỉ thấy bộ đệm của chính rank đó; mạng mô phỏng từ chối mọi đích khác (rank + 1) % N
    và đếm nbytes của "data" là số byte đã gửi.
    """
    ### BEGIN SOLUTION
    c = ring_chunk(rank=rank, N=N, step=step)
    lo, hi = chunk_bounds(M=buffer.shape[0], N=N)[c]
    return [{"to": (rank + 1) % N, "chunk": c, "data": buffer[lo:hi].copy()}]
    ### END SOLUTION


def ring_receive(*, rank: int, N: int, step: int, buffer: np.ndarray, messages: list[dict]) -> np.ndarray:
    """Rank ``rank``'s buffer after it receives ``messages`` at ``step``.

    ``buffer`` is a copy of the rank's buffer at the start of the step;
    ``messages`` are the messages the network delivered to this rank at
    this step (on the ring, one from rank (rank − 1) mod N), each a dict
    {"from": int, "chunk": int, "data": 1-D array}. See ring_send for the
    schedule. In reduce-scatter (step < N − 1) add each message's data
    into the rank's copy of that chunk; in all-gather (step ≥ N − 1)
    overwrite the chunk with it.

    After the last step every rank holds the element-wise SUM of all ranks'
    buffers (not the mean), bit-identical on every rank.

    Work on a copy (``buffer.copy()``) and return it; do not change
    ``buffer`` or a message's data in place. Each call gets its own copies
    (the simulation copies every buffer it passes and every message on the
    wire), so no other rank would see such a change, but the grader fails
    a call that changes an argument it was given: a function that
    overwrites its caller's data is a bug wherever the caller still needs
    it.

    Returns:
        1-D array: the rank's new buffer, the same length and dtype as
        ``buffer``.

    Tóm tắt (tiếng Việt): trả về bộ đệm mới của rank (cùng độ dài và dtype) sau khi nhận
    các thông điệp {"from", "chunk", "data"} của bước này: cộng vào mảnh tương ứng ở
    reduce-scatter (step < N − 1), ghi đè ở all-gather; sau bước cuối mọi rank giữ TỔNG theo
    phần tử của mọi bộ đệm. Làm việc trên một bản sao (buffer.copy()) và trả về nó; không sửa
    tại chỗ buffer hay dữ liệu của thông điệp: bộ chấm đánh trượt lời gọi sửa đối số của nó.
    """
    ### BEGIN SOLUTION
    out = buffer.copy()
    bounds = chunk_bounds(M=buffer.shape[0], N=N)
    for msg in messages:
        lo, hi = bounds[msg["chunk"]]
        if step < N - 1:
            out[lo:hi] += msg["data"]  # reduce-scatter: accumulate the partial sum
        else:
            out[lo:hi] = msg["data"]  # all-gather: the finished chunk replaces the copy
    return out
    ### END SOLUTION


def allreduce_bytes_per_rank(*, M_bytes: float, N: int) -> float:
    """Bytes each rank sends in a ring AllReduce of M bytes: 2(N−1)/N × M.

    Returns:
        float, in the unit of M_bytes. For N = 1 nothing is sent (0.0).

    Tóm tắt (tiếng Việt): trả về 2(N−1)/N × M_bytes (float, cùng đơn vị với M_bytes);
    0.0 khi N = 1.
    """
    ### BEGIN SOLUTION
    return 2 * (N - 1) / N * M_bytes
    ### END SOLUTION


def network_wall(*, n_params: float, bytes_per_param: int, n_gpus: int, link_GBps: float,
                 compute_s: float) -> dict:
    """Is a data-parallel step compute-bound or communication-bound?

    Every step, each GPU ring-AllReduces the full gradient
    (n_params × bytes_per_param bytes) over a link of link_GBps.

    Args:
        n_params: number of parameters (e.g. 7e9).
        bytes_per_param: bytes of one gradient element (FP16: 2).
        n_gpus: data-parallel GPUs (N).
        link_GBps: per-GPU link bandwidth in GB/s (10**9 bytes/s):
            100 Gb/s Ethernet/InfiniBand is 12.5 GB/s, NVLink 900 GB/s.
        compute_s: seconds of forward + backward per step.

    Returns:
        dict with exactly these keys:
          "gradient_bytes" (float): n_params × bytes_per_param;
          "bytes_per_gpu" (float): 2(N−1)/N × gradient_bytes;
          "comm_s" (float): bytes_per_gpu / (link_GBps × 1e9);
          "step_s_no_overlap" (float): compute_s + comm_s;
          "step_s_overlap" (float): max(compute_s, comm_s), communication
              hidden behind the backward pass as far as it can be;
          "bound" (str): "communication" if comm_s > compute_s, else
              "compute";
          "break_even_GBps" (float): the link bandwidth at which comm_s
              equals compute_s: where the wall is.
        Example: 7e9 params, FP16, 8 GPUs, 12.5 GB/s, 1 s: 14 GB of
        gradients, 24.5 GB per GPU, 1.96 s of communication:
        communication-bound; the wall sits at 24.5 GB/s.

    Tóm tắt (tiếng Việt): trả về dict đúng bảy khoá ở trên: gradient_bytes, bytes_per_gpu =
    2(N−1)/N × gradient_bytes, comm_s = bytes_per_gpu / (link_GBps × 1e9), bước có/không
    chồng lấp, "bound" ("communication" nếu comm_s > compute_s, ngược lại "compute") và
    break_even_GBps (băng thông tại đó comm_s = compute_s).
    """
    ### BEGIN SOLUTION
    grad = n_params * bytes_per_param
    per_gpu = allreduce_bytes_per_rank(M_bytes=grad, N=n_gpus)
    comm = per_gpu / (link_GBps * 1e9)
    return {
        "gradient_bytes": grad,
        "bytes_per_gpu": per_gpu,
        "comm_s": comm,
        "step_s_no_overlap": compute_s + comm,
        "step_s_overlap": max(compute_s, comm),
        "bound": "communication" if comm > compute_s else "compute",
        "break_even_GBps": per_gpu / compute_s / 1e9,
    }
    ### END SOLUTION


def scaling_speedup(*, n_gpus: int, r: float) -> float:
    """The communication tax curve of §7 Scaling Training Systems: speed-up = N / (1 + (N − 1)·r).

    The chapter draws this curve in its figure "The Communication Tax" for
    r = 0.05 (compute-bound, ResNet), 0.15 (LLM with NVLink) and 0.40 (slow
    network), N = 1 to 256; the formula itself is only in a comment of the
    figure's code, and the caption calls r "the fraction of step time spent
    on communication". It is Amdahl's law with a serial fraction r: the
    speed-up never exceeds 1/r however many GPUs are added.

    Args:
        n_gpus: number of GPUs N (N ≥ 1).
        r: the communication fraction of the curve (r ≥ 0).

    Returns:
        float: N / (1 + (N − 1)·r); 1.0 for N = 1.
        Examples: N = 8, r = 0.15 gives 8 / 2.05 = 3.90; N = 256, r = 0.05
        gives 256 / 13.75 = 18.6.

    Tóm tắt (tiếng Việt): trả về N / (1 + (N − 1)·r) (float), đường "thuế truyền thông" trong
    hình của §7 Mở rộng hệ thống huấn luyện (Scaling Training Systems) (định luật Amdahl với phần nối
    tiếp r; 1.0 khi N = 1).
    """
    ### BEGIN SOLUTION
    return n_gpus / (1 + (n_gpus - 1) * r)
    ### END SOLUTION


def communication_tax(*, n_params: float, bytes_per_param: int, n_gpus: int, link_Gbps: float,
                      compute_s_one_gpu: float, overlap: bool = False) -> dict:
    """What data parallelism on N GPUs buys once the ring AllReduce is paid: speed-up and efficiency.

    Strong scaling: the global batch of a step stays the same. One GPU
    computes a step in compute_s_one_gpu seconds; on N GPUs each computes
    1/N of the batch (compute_s = compute_s_one_gpu / N), then the GPUs
    ring-AllReduce the full gradient (n_params × bytes_per_param bytes)
    over links of link_Gbps GIGABITS per second each (bytes/s =
    link_Gbps × 1e9 / 8: the chapter's "100 Gbps" fabric is 12.5 GB/s).
    Use network_wall for the AllReduce: comm_s is its "comm_s" with
    link_GBps = link_Gbps / 8 and compute_s = compute_s_one_gpu / N.

      * step_s: compute_s + comm_s without overlap; max(compute_s, comm_s)
        with overlap (communication hidden behind the backward pass as far
        as it can be, as in Horovod: the callout "The network wall" of §7.2
        Scaling beyond a single node);
      * comm_fraction: the fraction of each step the GPUs wait for the
        network, (step_s − compute_s) / step_s;
      * speedup: compute_s_one_gpu / step_s, against one GPU;
      * efficiency: speedup / N (1.0 is linear scaling);
      * r = 2 × gradient bytes / (link bytes/s × compute_s_one_gpu): the
        ring's time at large N (2 × the gradient over the link) as a
        fraction of one GPU's step. Without overlap, comm_s =
        (N − 1)/N × r × compute_s_one_gpu, so speedup = N / (1 + (N − 1)·r)
        exactly: the curve of scaling_speedup, with the figure's r. Also
        speedup = N × (1 − comm_fraction).

    Args:
        n_params: number of parameters (e.g. 7e9).
        bytes_per_param: bytes of one gradient element (FP16: 2).
        n_gpus: data-parallel GPUs N (N ≥ 1).
        link_Gbps: per-GPU link bandwidth in Gb/s (10**9 bits/s): 100 for
            the chapter's inter-node fabric, 7200 for NVLink at 900 GB/s.
        compute_s_one_gpu: seconds of forward + backward for one step's
            whole batch on one GPU.
        overlap: whether communication overlaps computation.

    Returns:
        dict with exactly these keys (floats, times in seconds):
          "comm_s", "compute_s", "step_s", "comm_fraction", "speedup",
          "efficiency", "r".
        Example: 7e9 params, FP16, 8 GPUs, 100 Gb/s, 8 s on one GPU (1 s
        each on 8): comm_s = 1.96, step_s = 2.96, comm_fraction = 0.66,
        speedup = 2.70, efficiency = 0.34, r = 0.28; with overlap step_s =
        1.96 and speedup = 4.08.

    Tóm tắt (tiếng Việt): mở rộng mạnh (strong scaling): một GPU tính một bước trong
    compute_s_one_gpu giây; trên N GPU mỗi GPU tính compute_s = compute_s_one_gpu / N rồi
    AllReduce vòng toàn bộ gradient qua liên kết link_Gbps GIGABIT/giây (byte/s = link_Gbps × 1e9
    / 8); dùng network_wall (link_GBps = link_Gbps / 8) để có comm_s. step_s = compute_s + comm_s
    (không chồng lấp) hoặc max(compute_s, comm_s) (chồng lấp); comm_fraction = (step_s −
    compute_s) / step_s; speedup = compute_s_one_gpu / step_s; efficiency = speedup / N;
    r = 2 × số byte gradient / (byte/s của liên kết × compute_s_one_gpu). Trả về dict đúng bảy
    khoá ở trên; khi không chồng lấp, speedup = N / (1 + (N − 1)·r) = scaling_speedup.
    """
    ### BEGIN SOLUTION
    link_GBps = link_Gbps / 8  # gigabits to gigabytes
    compute = compute_s_one_gpu / n_gpus
    wall = network_wall(n_params=n_params, bytes_per_param=bytes_per_param, n_gpus=n_gpus, link_GBps=link_GBps,
                        compute_s=compute)
    step = wall["step_s_overlap"] if overlap else wall["step_s_no_overlap"]
    speedup = compute_s_one_gpu / step
    return {"comm_s": wall["comm_s"], "compute_s": compute, "step_s": step, "comm_fraction": (step - compute) / step,
            "speedup": speedup, "efficiency": speedup / n_gpus,
            "r": 2 * wall["gradient_bytes"] / (link_GBps * 1e9 * compute_s_one_gpu)}
    ### END SOLUTION
