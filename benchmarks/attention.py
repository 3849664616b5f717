"""Benchmark: the Lab 4 reference tiled attention against standard NumPy attention.

    python benchmarks/attention.py [--d 64] [--block-size 128] [--repeats 3] [--threads 1]

For S = 1024, 2048 and 4096 (one head, float64) it prints the best-of-n wall
time of each implementation and its peak memory above the inputs
(tracemalloc, which sees numpy's allocations, measured in a separate run so
tracing does not slow the timed ones), then the ratios. The targets for the
reference default block size: tiled time within 3× of standard, and at
least 8× less peak memory at S = 4096. A benchmark prints; it does not
assert.

BLAS runs on one thread by default (as in the grading workers), so both
implementations get one core: on a busy 2-core machine a multithreaded
BLAS makes every small per-tile matmul pay for thread synchronisation, and
the comparison then measures the machine's load rather than the algorithm.
Pass --threads N to see that.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
import tracemalloc
from pathlib import Path


def _threads_from_argv(argv) -> str:
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return "1"


# BLAS reads its thread count when numpy is first imported, so set it before that.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = _threads_from_argv(sys.argv[1:])

import numpy as np  # noqa: E402

REFERENCE = Path(__file__).resolve().parents[1] / "solutions" / "lab4_data_movement" / "attention.py"


def load_reference():
    spec = importlib.util.spec_from_file_location("lab4_reference_attention", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def best_time(fn, repeats: int, **kw) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(**kw)
        times.append(time.perf_counter() - t0)
    return min(times)


def peak_bytes(fn, **kw) -> int:
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        fn(**kw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - base


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=64, help="head dimension")
    parser.add_argument("--block-size", type=int, default=None, help="tile size (default: the reference's default)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per case (the best is kept)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (read before numpy is imported)")
    args = parser.parse_args(argv)

    attn = load_reference()
    tiled_kw = {} if args.block_size is None else {"block_size": args.block_size}
    block = args.block_size or attn.tiled_attention.__kwdefaults__["block_size"]
    rng = np.random.default_rng(0)
    print(f"tiled (block {block}) vs standard attention, one head, d={args.d}, float64, "
          f"best of {args.repeats}, {os.environ['OPENBLAS_NUM_THREADS']} BLAS thread(s)")
    print(f"{'S':>6} {'standard s':>11} {'tiled s':>9} {'time ×':>7} {'standard MiB':>13} {'tiled MiB':>10} {'memory ÷':>9}")
    for S in (1024, 2048, 4096):
        q, k, v = (rng.standard_normal((S, args.d)) for _ in range(3))
        t_std = best_time(attn.standard_attention, args.repeats, q=q, k=k, v=v)
        t_tiled = best_time(attn.tiled_attention, args.repeats, q=q, k=k, v=v, **tiled_kw)
        m_std = peak_bytes(attn.standard_attention, q=q, k=k, v=v)
        m_tiled = peak_bytes(attn.tiled_attention, q=q, k=k, v=v, **tiled_kw)
        print(f"{S:>6} {t_std:>11.3f} {t_tiled:>9.3f} {t_tiled / t_std:>7.2f} "
              f"{m_std / 2**20:>13.1f} {m_tiled / 2**20:>10.2f} {m_std / m_tiled:>9.1f}")
    print("targets at S=4096: time × ≤ 3 (tiled within 3× of standard), memory ÷ ≥ 8")


if __name__ == "__main__":
    main()
