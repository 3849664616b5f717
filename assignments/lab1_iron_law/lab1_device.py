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
  starts at 0.0 and moves only inside ``matmul``).  The same calls always
  give the same times, on any machine, however busy.  ``X @ W`` on
  simulated operands raises TypeError: call ``dev.matmul(X, W)``.

The model of one simulated product (m, k) @ (k, n), with F = 2*m*k*n FLOPs,
when it is the c-th product of that shape on this device (c = 0, 1, 2, ...):

    seconds = slowdown(c) * (overhead_s + (F + half_rate_flops) / rate) + (warmup_s if c == 0 else 0)
    rate    = peak_flop_per_s * threads_now / threads_expected

* ``overhead_s`` is paid by every call, so a tiny product is mostly
  overhead.  ``half_rate_flops`` makes the rate grow with the size of the
  product: F FLOPs run at peak * F / (F + half_rate_flops), so a product of
  half_rate_flops FLOPs reaches half the peak and large ones approach it.
* The first product of each shape also pays ``warmup_s`` (allocation,
  kernel selection): that is why a measurement starts with an untimed call.
* ``slowdown(c) >= 1`` is a deterministic "noise": 1 + noise * E, where E
  is an exponential random number drawn from (seed, m, k, n, c).  It
  depends only on the shape and on how many products of that shape came
  before, not on what else ran in between, so the order in which shapes
  are interleaved does not matter.  Best, median and mean of repeated
  timings differ, as they do on a real machine.
* ``threads_now`` is ``torch.get_num_threads()`` at the call, and
  ``threads_expected`` is ``spec["threads"]`` if given, otherwise torch's
  thread setting when this module was first imported.  A function that
  changes torch's thread setting therefore measures another rate.

Spec keys (any left out take the value in ``SIMULATED``): ``kind``,
``peak_flop_per_s``, ``overhead_s``, ``half_rate_flops``, ``warmup_s``,
``noise``, ``seed``, and optionally ``threads``.  Every ``open_device``
call returns a new device: its clock starts at 0.0 and its count of
products of each shape at 0.

Tóm tắt (tiếng Việt): thiết bị của Lab 1.  ``open_device(None)`` là CPU này
(tensor float32 của torch, ``X @ W``, ``time.perf_counter``);
``open_device({"kind": "simulated", ...})`` là một thiết bị mô phỏng: không
tính gì cả, ``matmul`` chỉ tăng đồng hồ riêng của thiết bị theo mô hình ở
trên (chi phí cố định mỗi lần gọi, tốc độ tăng theo kích thước, lần đầu của
mỗi kích thước tốn thêm ``warmup_s``, "nhiễu" tất định).  Hãy đo thời gian
bằng ``dev.clock()`` quanh ``dev.matmul(X, W)``, và đừng đổi số luồng của torch.
"""

from __future__ import annotations

import hashlib
import math
import numbers
import time

import torch

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
}
SIMULATED_KEYS = tuple(SIMULATED) + ("threads",)

# torch's thread setting when this module was first imported: what a simulated device expects
THREADS_AT_IMPORT = torch.get_num_threads()


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
    for key in ("peak_flop_per_s", "overhead_s", "half_rate_flops", "warmup_s", "noise"):
        v = full[key]
        if not (isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) and v >= 0):
            raise ValueError(f"spec[{key!r}] must be a finite number >= 0, got {v!r}")
        full[key] = float(v)
    if full["peak_flop_per_s"] <= 0:
        raise ValueError("spec['peak_flop_per_s'] must be positive")
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


def product_seconds(spec: dict, shape: tuple[int, int, int], call: int, threads_ratio: float = 1.0) -> float:
    """Simulated seconds of the ``call``-th product of ``shape`` = (m, k, n) on a device of ``spec``
    (a full spec, see ``simulated_spec``), with torch at ``threads_ratio`` times the expected threads."""
    m, k, n = shape
    flops = 2 * m * k * n
    rate = spec["peak_flop_per_s"] * threads_ratio
    seconds = slowdown(spec, shape, call) * (spec["overhead_s"] + (flops + spec["half_rate_flops"]) / rate)
    return seconds + (spec["warmup_s"] if call == 0 else 0.0)


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
    """A simulated device (see the module docstring): ``matmul`` moves ``clock()`` by the model's time."""

    kind = "simulated"

    def __init__(self, spec: dict):
        self.spec = simulated_spec(spec)
        self.threads_expected = self.spec.get("threads", THREADS_AT_IMPORT)
        self._now = 0.0
        self._calls: dict[tuple[int, int, int], int] = {}

    def randn(self, rows: int, cols: int) -> SimulatedMatrix:
        """A (rows, cols) simulated operand (a shape, no values)."""
        _check_dims(rows, cols)
        return SimulatedMatrix(rows, cols)

    def matmul(self, X, W) -> SimulatedMatrix:
        """One product X @ W: advances ``clock()`` by its simulated time and returns a (rows, cols) operand."""
        m, k = _shape2(X, "X")
        k2, n = _shape2(W, "W")
        if k != k2:
            raise ValueError(f"matmul: shapes ({m}, {k}) and ({k2}, {n}) cannot be multiplied")
        shape = (m, k, n)
        call = self._calls.get(shape, 0)
        self._calls[shape] = call + 1
        ratio = torch.get_num_threads() / self.threads_expected
        self._now += product_seconds(self.spec, shape, call, ratio)
        return SimulatedMatrix(m, n)

    def clock(self) -> float:
        """The simulated clock, in seconds: 0.0 when the device was opened, moved only by ``matmul``."""
        return self._now


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
