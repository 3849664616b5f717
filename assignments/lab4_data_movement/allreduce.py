"""Lab 4, part 3: ring AllReduce and the network wall (chapter section 7).

Data-parallel training sums every gradient over N workers each step. The
ring algorithm splits each rank's buffer into N chunks and passes chunks
around a ring: N−1 steps of reduce-scatter (each rank ends up owning the
full sum of one chunk), then N−1 steps of all-gather (the owned chunks are
copied around). Each rank sends 2(N−1)/N × M bytes, almost independent of N,
which is why the ring is bandwidth-optimal, and also why a big model's
gradients can still hit a network wall.

Conventions:
  * AllReduce returns the element-wise SUM over ranks, not the mean.
  * Bytes are counted as elements × itemsize of the buffers' dtype.
  * GB means 10**9 bytes; link bandwidths are in GB/s.

Tóm tắt (tiếng Việt): AllReduce vòng chia bộ đệm của mỗi rank thành N mảnh, chạy N−1
bước reduce-scatter rồi N−1 bước all-gather; mỗi rank gửi 2(N−1)/N × M byte. Kết quả là
TỔNG theo phần tử (không phải trung bình); byte = số phần tử × itemsize; GB = 10**9 byte,
băng thông tính bằng GB/s.
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
    raise NotImplementedError


def ring_allreduce(*, buffers: list[np.ndarray]) -> dict:
    """Simulate ring AllReduce (sum) over N = len(buffers) ranks.

    Rank r holds buffers[r], a 1-D array of length M (all ranks have the
    same length and dtype; M need not be divisible by N). Split the buffer
    into N chunks with chunk_bounds(M=M, N=N). Rank r only ever sends to
    rank (r + 1) mod N.
      * Reduce-scatter, steps s = 0 .. N−2: every rank r sends its chunk
        (r − s) mod N to rank r+1, which adds it into its own copy of that
        chunk. Afterwards rank r holds the full sum of chunk (r + 1) mod N.
      * All-gather, steps s = 0 .. N−2: every rank r sends its chunk
        (r + 1 − s) mod N to rank r+1, which overwrites its copy with it.
    Within a step all ranks send at the same time: a rank sends what it
    held at the start of the step.

    Count the bytes each rank actually sends (the nbytes of every chunk it
    sends), over both phases. With M divisible by N this is
    2(N−1)/N × M × itemsize per rank.

    Args:
        buffers: N 1-D arrays of equal length and dtype. Do not modify them.

    Returns:
        dict with exactly these keys:
          "results" (list of N 1-D arrays): rank r's buffer at the end, the
              element-wise sum of all buffers, same dtype and length;
          "bytes_sent" (list of N ints): bytes sent by each rank.

    Tóm tắt (tiếng Việt): mô phỏng AllReduce vòng (tổng) đúng theo các bước trên, rank r
    chỉ gửi cho rank (r + 1) mod N, không sửa buffers; trả về dict "results" (N mảng 1-D là
    tổng theo phần tử, cùng dtype và độ dài) và "bytes_sent" (N số int: tổng nbytes của các
    mảnh mỗi rank đã gửi qua cả hai pha).
    """
    raise NotImplementedError


def allreduce_bytes_per_rank(*, M_bytes: float, N: int) -> float:
    """Bytes each rank sends in a ring AllReduce of M bytes: 2(N−1)/N × M.

    Returns:
        float, in the unit of M_bytes. For N = 1 nothing is sent (0.0).

    Tóm tắt (tiếng Việt): trả về 2(N−1)/N × M_bytes (float, cùng đơn vị với M_bytes);
    0.0 khi N = 1.
    """
    raise NotImplementedError


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
    raise NotImplementedError
