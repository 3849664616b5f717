"""Lab 1's devices: this CPU, or a simulated one (shipped with the lab; do not edit).

The grader always uses its own copy of this file; a copy in a submission is
ignored.  ``flops.measure_peak_flop_per_s`` and
``flops.measure_matmul_throughput`` do all their work through a device::

    dev = open_device(spec)              # spec: None (this CPU) or a plain dict
    X, W = dev.randn(b, d_in), dev.randn(d_in, d_out)
    t0 = dev.clock()
    dev.matmul(X, W)                     # one product
    seconds = dev.clock() - t0

Two kinds of device:

* **This CPU** (``spec=None``, or ``{"kind": "cpu"}``).  ``randn`` makes a
  float32 torch tensor with random values, ``matmul(X, W)`` is ``X @ W``
  and ``clock()`` is ``time.perf_counter()``.  Real timings: they differ
  from run to run and from machine to machine.

* **A simulated device** (``{"kind": "simulated", ...}``).  Nothing is
  computed: ``randn`` returns a :class:`SimulatedMatrix`, which holds only a
  shape, and ``matmul`` advances the device's own clock by the time the
  model below gives for that product.  ``clock()`` reads that clock (it
  starts at 0.0 and moves only inside ``randn`` and ``matmul``).  The same
  calls, in the same order, always give the same times, on any machine,
  however busy.  ``X @ W`` on simulated operands raises TypeError: call
  ``dev.matmul(X, W)``.

The model of one simulated product (m, k) @ (k, n), with F = 2*m*k*n FLOPs,
when it is the c-th product of that shape on this device (c = 0, 1, 2, ...):

    seconds = slowdown(c) * cache * (overhead_s + (F + half_rate_flops) / peak_flop_per_s)
              + (warmup_s if c == 0 else 0)
    cache   = 1 - repeat_speedup   if the product just before it on this device had the same shape,
              1                    otherwise

* ``overhead_s`` is paid by every call, so a tiny product is mostly
  overhead.  ``half_rate_flops`` makes the rate grow with the size of the
  product: F FLOPs run at peak * F / (F + half_rate_flops), so a product of
  half_rate_flops FLOPs reaches half the peak and large ones approach it.
* The first product of each shape also pays ``warmup_s`` (allocation,
  kernel selection): that is why a measurement starts with an untimed call.
* A product right after one of the same shape finds the caches warm and
  takes the fraction ``repeat_speedup`` less time.  So the ORDER matters: timing all repeats
  of one batch size back to back measures warm-cache times that a layer
  in a real model, between other work, never sees.  Rounds that
  interleave the batch sizes (one product of each per round) measure each
  product after one of another shape.
* ``slowdown(c) >= 1`` is a deterministic "noise": 1 + noise * E, where E
  is an exponential random number drawn from (seed, m, k, n, c): from the
  shape and how many products of that shape came before.  Best, median
  and mean of repeated timings differ, as they do on a real machine.
* ``randn(rows, cols)`` advances the clock too, by ``randn_s_per_value``
  per value (rows * cols of them): make the operands before the clock
  reads that time a product, never between them.
* Threads.  A simulated device measures at one thread setting, the one it
  was given: ``spec["threads"]`` (the grader always gives it), otherwise
  torch's thread setting when this module was first imported.  ``matmul``
  raises :class:`ThreadSettingError` when torch's setting is another one,
  and when the code that opened the device (the files of its folder) has
  called ``torch.set_num_threads`` since this module was imported, with
  any count: even setting the same count, or setting it back, is a
  change the device cannot tell from the others.  (The grader imports
  this module before your files, so a call above ``import lab1_device``
  counts too.)  Leave torch's thread setting alone.

Spec keys (any left out take the value in ``SIMULATED``): ``kind``,
``peak_flop_per_s``, ``overhead_s``, ``half_rate_flops``, ``warmup_s``,
``noise``, ``seed``, ``repeat_speedup``, ``randn_s_per_value``, and
optionally ``threads``.  Every ``open_device`` call returns a new device:
its clock starts at 0.0, its count of products of each shape at 0, and no
product has run on it yet.

Tóm tắt (tiếng Việt): thiết bị của Lab 1.  ``open_device(None)`` là CPU này
(tensor float32 của torch, ``X @ W``, ``time.perf_counter``);
``open_device({"kind": "simulated", ...})`` là một thiết bị mô phỏng: không
tính gì cả, ``matmul`` chỉ tăng đồng hồ riêng của thiết bị theo mô hình ở
trên (chi phí cố định mỗi lần gọi, tốc độ tăng theo kích thước, lần đầu của
mỗi kích thước tốn thêm ``warmup_s``, tích ngay sau một tích cùng kích thước
nhanh hơn ``repeat_speedup`` vì bộ nhớ đệm còn nóng, ``randn`` cũng tốn thời
gian, "nhiễu" tất định).  Hãy tạo toán hạng trước, đo thời gian bằng
``dev.clock()`` quanh đúng một ``dev.matmul(X, W)``, xen kẽ các batch trong
mỗi vòng, và đừng bao giờ gọi ``torch.set_num_threads`` (thiết bị mô phỏng
báo ThreadSettingError).
"""

from __future__ import annotations

import collections
import hashlib
import math
import numbers
import os
import sys
import time

import torch

from autograder.core.i18n import N_, _

KINDS = ("cpu", "simulated")

# A simulated device's defaults: roughly one fast CPU core in float32.
SIMULATED = {
    "kind": "simulated",
    "peak_flop_per_s": 1e11,  # FLOP/s that a very large product approaches
    "overhead_s": 2e-5,  # paid by every call
    "half_rate_flops": 2e7,  # a product of this many FLOPs runs at half the peak
    "warmup_s": 2e-3,  # paid once more by the first product of each shape
    "noise": 0.1,  # mean extra slowdown of a call (0: every call of a shape takes the same time)
    "seed": 0,  # draws the noise
    "repeat_speedup": 0.25,  # time saved by a product right after one of the same shape (warm caches)
    "randn_s_per_value": 2e-9,  # randn's time per value it makes
}
SIMULATED_KEYS = tuple(SIMULATED) + ("threads",)

# torch's thread setting when this module was first imported: what a simulated device without
# spec["threads"] expects (the grader always gives spec["threads"])
THREADS_AT_IMPORT = torch.get_num_threads()


# -- torch's thread setting belongs to whoever opened the device ----------------------------
# Every torch.set_num_threads call in this process is counted by the folder of the file that
# made it (torch.set_num_threads is wrapped once per process; every copy of this module reads the
# same counts).  A simulated device counts only the calls of its opener's folder: a notebook's
# own calls, or the grader's, are not the measuring code's.
def _folder_of(frame) -> str:
    return os.path.dirname(os.path.abspath(frame.f_code.co_filename)) if frame is not None else ""


def _thread_calls() -> collections.Counter:
    setter = torch.set_num_threads
    calls = getattr(setter, "lab1_calls", None)
    if calls is None:
        calls = collections.Counter()

        def set_num_threads(n):
            calls[_folder_of(sys._getframe(1))] += 1
            return setter(n)

        set_num_threads.__doc__ = setter.__doc__
        set_num_threads.lab1_calls = calls
        torch.set_num_threads = set_num_threads
    return calls


THREAD_CALLS = _thread_calls()
THREAD_CALLS_AT_IMPORT = dict(THREAD_CALLS)


class ThreadSettingError(RuntimeError):
    """A simulated device found torch's thread setting changed (see the module docstring)."""

    CALLED = N_("a simulated device measures at the thread setting it was given, and this code called "
                "torch.set_num_threads (at import time or in a function): leave torch's thread setting alone, "
                "do not set it, not even back to what it was")
    OTHER = N_("torch's thread setting is not the one this simulated device was given (spec['threads'], or "
               "torch's setting when lab1_device was imported): leave torch's thread setting alone")


def _opener_folder() -> str:
    """The folder of the file that called into this module (the first frame outside it)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals is globals():
        frame = frame.f_back
    return _folder_of(frame)


def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def simulated_spec(spec: dict) -> dict:
    """``spec`` checked and completed with the defaults of ``SIMULATED``."""
    if not isinstance(spec, dict):
        raise TypeError(f"a device spec is a dict or None, got {type(spec).__name__}")
    unknown = sorted(str(k) for k in spec if k not in SIMULATED_KEYS)
    if unknown:
        raise ValueError(f"unknown key(s) {unknown} in a simulated device spec; allowed: {list(SIMULATED_KEYS)}")
    full = {**SIMULATED, **spec}
    if full["kind"] != "simulated":
        raise ValueError(f"kind must be 'simulated' here, got {full['kind']!r}")
    for key in ("peak_flop_per_s", "overhead_s", "half_rate_flops", "warmup_s", "noise", "repeat_speedup",
                "randn_s_per_value"):
        v = full[key]
        if not (isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) and v >= 0):
            raise ValueError(f"spec[{key!r}] must be a finite number >= 0, got {v!r}")
        full[key] = float(v)
    if full["peak_flop_per_s"] <= 0:
        raise ValueError("spec['peak_flop_per_s'] must be positive")
    if full["repeat_speedup"] >= 1:
        raise ValueError("spec['repeat_speedup'] must be below 1")
    if not _is_int(full["seed"]):
        raise ValueError(f"spec['seed'] must be an int, got {full['seed']!r}")
    full["seed"] = int(full["seed"])
    if "threads" in full:
        if not (_is_int(full["threads"]) and full["threads"] >= 1):
            raise ValueError(f"spec['threads'] must be an int >= 1, got {full['threads']!r}")
        full["threads"] = int(full["threads"])
    return full


def slowdown(spec: dict, shape: tuple[int, int, int], call: int) -> float:
    """The noise factor (>= 1) of the ``call``-th product of ``shape`` = (m, k, n), for a full spec."""
    m, k, n = shape
    digest = hashlib.blake2b(f"{spec['seed']}/{m}/{k}/{n}/{call}".encode(), digest_size=8).digest()
    u = (int.from_bytes(digest, "big") + 0.5) / 2.0**64  # uniform in (0, 1)
    return 1.0 + spec["noise"] * -math.log1p(-u)  # 1 + noise * Exponential(1)


def _plain_seconds(spec: dict, shape: tuple[int, int, int]) -> float:
    """Seconds of a product of ``shape`` = (m, k, n) before noise, caches and the first-call cost."""
    m, k, n = shape
    return spec["overhead_s"] + (2 * m * k * n + spec["half_rate_flops"]) / spec["peak_flop_per_s"]


def product_seconds(spec: dict, shape: tuple[int, int, int], call: int, after_same_shape: bool = False) -> float:
    """Simulated seconds of the ``call``-th product of ``shape`` = (m, k, n) on a device of ``spec``
    (a full spec, see ``simulated_spec``), right after a product of the same shape or not."""
    cache = 1.0 - spec["repeat_speedup"] if after_same_shape else 1.0
    seconds = slowdown(spec, shape, call) * cache * _plain_seconds(spec, shape)
    return seconds + (spec["warmup_s"] if call == 0 else 0.0)


def least_product_seconds(spec: dict, shape: tuple[int, int, int]) -> float:
    """The fewest simulated seconds any product of ``shape`` takes on a device of ``spec`` (a full
    spec): no noise (a slowdown of 1), warm caches, no first-call cost.  A shorter time was not
    read on ``device.clock()``."""
    return (1.0 - spec["repeat_speedup"]) * _plain_seconds(spec, shape)


def randn_seconds(spec: dict, rows: int, cols: int) -> float:
    """Simulated seconds of ``randn(rows, cols)`` on a device of ``spec`` (a full spec)."""
    return spec["randn_s_per_value"] * rows * cols


class SimulatedMatrix:
    """An operand on a simulated device: a (rows, cols) shape and no values."""

    __slots__ = ("shape",)

    def __init__(self, rows: int, cols: int):
        self.shape = (rows, cols)

    def __matmul__(self, other):
        raise TypeError("simulated operands hold only a shape: multiply them with device.matmul(X, W), "
                        "which moves device.clock() by the product's simulated time")

    __rmatmul__ = __matmul__

    def __repr__(self) -> str:
        return f"SimulatedMatrix{self.shape}"


def _check_dims(rows, cols) -> None:
    if not (_is_int(rows) and _is_int(cols) and rows >= 0 and cols >= 0):
        raise TypeError(f"randn(rows, cols) takes two ints >= 0, got ({rows!r}, {cols!r})")


def _shape2(x, name: str) -> tuple[int, int]:
    shape = tuple(getattr(x, "shape", ()))
    if len(shape) != 2:
        raise TypeError(f"matmul: {name} must be a 2-D operand from device.randn, got {type(x).__name__}")
    return int(shape[0]), int(shape[1])


class CpuDevice:
    """This CPU: float32 torch tensors, ``X @ W``, ``time.perf_counter``."""

    kind = "cpu"

    def __init__(self):
        self.spec = {"kind": "cpu"}
        self._gen = torch.Generator().manual_seed(0)

    def randn(self, rows: int, cols: int) -> torch.Tensor:
        """A (rows, cols) float32 tensor of standard normal values."""
        _check_dims(rows, cols)
        return torch.randn(rows, cols, generator=self._gen, dtype=torch.float32)

    def matmul(self, X: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        """One product, ``X @ W``."""
        return X @ W

    def clock(self) -> float:
        """``time.perf_counter()``: seconds on a monotonic clock."""
        return time.perf_counter()


class SimulatedDevice:
    """A simulated device (see the module docstring): ``randn`` and ``matmul`` move ``clock()`` by the model's time."""

    kind = "simulated"

    def __init__(self, spec: dict):
        self.spec = simulated_spec(spec)
        self.threads_expected = self.spec.get("threads", THREADS_AT_IMPORT)
        self._opener = _opener_folder()
        self._now = 0.0
        self._calls: dict[tuple[int, int, int], int] = {}
        self._last_shape: tuple[int, int, int] | None = None

    def randn(self, rows: int, cols: int) -> SimulatedMatrix:
        """A (rows, cols) simulated operand (a shape, no values); advances ``clock()`` by its making."""
        _check_dims(rows, cols)
        self._now += randn_seconds(self.spec, rows, cols)
        return SimulatedMatrix(rows, cols)

    def matmul(self, X, W) -> SimulatedMatrix:
        """One product X @ W: advances ``clock()`` by its simulated time and returns a (rows, cols) operand."""
        m, k = _shape2(X, "X")
        k2, n = _shape2(W, "W")
        if k != k2:
            raise ValueError(f"matmul: shapes ({m}, {k}) and ({k2}, {n}) cannot be multiplied")
        self._check_threads()
        shape = (m, k, n)
        call = self._calls.get(shape, 0)
        self._calls[shape] = call + 1
        self._now += product_seconds(self.spec, shape, call, after_same_shape=shape == self._last_shape)
        self._last_shape = shape
        return SimulatedMatrix(m, n)

    def clock(self) -> float:
        """The simulated clock, in seconds: 0.0 when the device was opened, moved only by ``randn`` and ``matmul``."""
        return self._now

    def _check_threads(self) -> None:
        if THREAD_CALLS[self._opener] > THREAD_CALLS_AT_IMPORT.get(self._opener, 0):
            raise ThreadSettingError(_(ThreadSettingError.CALLED))
        if torch.get_num_threads() != self.threads_expected:
            raise ThreadSettingError(_(ThreadSettingError.OTHER))


def open_device(spec: dict | None = None):
    """A new device for ``spec``: None or {"kind": "cpu"} for this CPU, {"kind": "simulated", ...} for a
    simulated one (keys and model in the module docstring)."""
    if spec is None:
        return CpuDevice()
    if not isinstance(spec, dict):
        raise TypeError(f"a device spec is a dict or None, got {type(spec).__name__}")
    kind = spec.get("kind")
    if kind == "cpu":
        if set(spec) != {"kind"}:
            raise ValueError("a cpu device spec has only the key 'kind'")
        return CpuDevice()
    if kind == "simulated":
        return SimulatedDevice(spec)
    raise ValueError(f"spec['kind'] must be one of {list(KINDS)}, got {kind!r}")
