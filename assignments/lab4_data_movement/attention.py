"""Lab 4, part 2: tiled attention with an online softmax (chapter section 6).

Standard attention builds the S×S score matrix softmax(QKᵀ/√d): at S = 4096
that is 64 MiB in FP32 per head, and it is written to and read back from
memory several times. Tiled attention (FlashAttention's idea) walks over K
and V in blocks and keeps, for every query row, a running max m, a running
normaliser l and a running unnormalised output. When a new block raises the
max, the old l and output are rescaled by exp(m_old − m_new). The result is
exactly softmax(QKᵀ/√d)·V, but only one block×block tile of scores exists at
a time.

Conventions:
  * q, k, v have shape (..., S, d): any leading dimensions are independent
    (for example heads: (H, S, d)); the three shapes are equal.
  * scores are scaled by 1/√d, where d is the last dimension.
  * causal=True: query position i attends to key positions j ≤ i only.
  * outputs have the dtype of q and are computed in that dtype.

Tóm tắt (tiếng Việt): attention chia khối duyệt K, V theo khối với softmax trực tuyến
(max tích luỹ m, hệ số chuẩn hoá l, đầu ra tích luỹ) và cho đúng softmax(QKᵀ/√d)·V mà
không giữ ma trận S×S. q, k, v có dạng (..., S, d); điểm nhân với 1/√d; causal=True:
truy vấn i chỉ nhìn khoá j ≤ i; đầu ra có dtype của q.
"""

from __future__ import annotations

import math

import numpy as np


def attention_score_bytes(*, S: int, block_size: int, bytes_per_element: int) -> dict:
    """Memory of the attention scores for one head: the full matrix against one tile.

    Args:
        S: sequence length.
        block_size: rows (and columns) of one square score tile.
        bytes_per_element: 4 for FP32, 2 for FP16, 8 for float64.

    Returns:
        dict with exactly these keys (ints, bytes):
          "full_bytes": S × S × bytes_per_element;
          "tile_bytes": block_size × block_size × bytes_per_element.
        Example: S=4096, block 128, FP32: 64 MiB (67,108,864) against
        64 KB (65,536).

    Tóm tắt (tiếng Việt): trả về dict hai khoá (int, byte) cho một head:
    "full_bytes" = S × S × bytes_per_element và
    "tile_bytes" = block_size × block_size × bytes_per_element.
    """
    raise NotImplementedError


def standard_attention(*, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False) -> np.ndarray:
    """softmax(QKᵀ/√d)·V the standard way: materialize the (..., S, S) scores.

    Args:
        q, k, v: arrays of shape (..., S, d), float32 or float64.
        causal: if True, query i attends to keys j ≤ i only.

    Returns:
        (..., S, d) array with q's dtype. Use the numerically stable softmax
        (subtract each row's max before exp).

    Tóm tắt (tiếng Việt): tính softmax(QKᵀ/√d)·V bằng cách tạo đủ ma trận điểm
    (..., S, S), với softmax ổn định số (trừ max của mỗi hàng trước exp) và mặt nạ causal
    nếu cần; trả về mảng (..., S, d) có dtype của q.
    """
    raise NotImplementedError


def tiled_attention(*, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False,
                    block_size: int = 128) -> np.ndarray:
    """softmax(QKᵀ/√d)·V with an online softmax over blocks, never holding S×S.

    Split the S query rows into blocks of ``block_size`` rows and, for each
    query block, walk over K and V in blocks of ``block_size`` rows. The
    last block of each is shorter when block_size does not divide S. Per
    query row keep a running max m, a running normaliser l = Σ exp(s − m)
    and a running output acc = Σ exp(s − m)·v; when a block raises m,
    rescale l and acc by exp(m_old − m_new). The answer is acc / l.

    Args:
        q, k, v: arrays of shape (..., S, d), float32 or float64; the leading
            dimensions (e.g. heads) are independent.
        causal: if True, query i attends to keys j ≤ i only. Key blocks that
            lie entirely after a query block may be skipped.
        block_size: rows of Q and of K/V per block (both use the same size).

    Returns:
        (..., S, d) array with q's dtype. It must match standard attention
        within 1e-10 in float64 and 1e-5 in float32.

    Memory: never allocate an (S, S) or (..., S, S) array. Peak extra
    memory is O(block_size² + S·d) per leading index. The grader measures
    it at S=2048, d=64, block_size=128 with float32 inputs and requires
    less than 1/8 of the S×S float64 score matrix (4 MiB), beyond the
    memory that passing q, k, v and returning the output costs.

    Tóm tắt (tiếng Việt): cho cùng kết quả với standard_attention (sai khác ≤ 1e-10 với
    float64, 1e-5 với float32; dtype của q) nhưng duyệt Q và K/V theo khối block_size hàng
    với softmax trực tuyến (m, l, acc; nhân lại với exp(m_old − m_new)), không bao giờ cấp
    phát mảng (S, S); bộ nhớ phụ đỉnh ở S=2048 phải dưới 4 MiB.
    """
    raise NotImplementedError
