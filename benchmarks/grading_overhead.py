"""What the sandbox costs, measured in one run.

Prints:
  * worker start: warm (fork from the zygote, with every isolation layer)
    against cold (a fresh interpreter importing numpy and torch);
  * grading one Lab 2 submission (the reference) sandboxed against the same
    hidden suite in-process, both through the same grader process.
Targets (issue #3): warm start <= 50 ms; sandboxed / in-process <= 1.3.

    python benchmarks/grading_overhead.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.authoring import candidates
from autograder.core import labs
from autograder.grading import runner
from autograder.sandbox.backend import SandboxBackend, shared_zygote


def warm_starts(lab: labs.Lab, n: int) -> tuple[list[float], list[float], list[float]]:
    """(isolated, ready, end to end) seconds: fork + every layer; + the submission
    imported; + the grader's side of the handshake."""
    backend = SandboxBackend(lab.solution_dir, lab.manifest, lab.assignment_dir)
    isolated, ready = [], []
    for _ in range(n):
        backend._spawn()
        isolated.append(backend.isolation["setup_ms"] / 1e3)
        ready.append(backend.isolation["ready_ms"] / 1e3)
        backend._kill()
    return isolated, ready, backend.spawn_s


def cold_start() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import numpy, torch; torch.set_num_threads(1)"], check=True)
    return time.perf_counter() - t0


def grade_once(lab: labs.Lab, sandbox: bool) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        code = candidates.write_sources(candidates.sources(lab, candidates.Candidate("reference", frozenset())), Path(tmp) / "code")
        t0 = time.perf_counter()
        res = runner.grade_staged(lab, code, "bench", sandbox=sandbox)
        elapsed = time.perf_counter() - t0
    assert res.score == lab.manifest.max_score, f"reference scored {res.score}: {res.errors}"
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    lab = labs.get("lab2")
    with shared_zygote():
        isolated, ready, warm = (xs[3:] for xs in warm_starts(lab, 23))  # the first few warm caches
        sandboxed = [grade_once(lab, True) for _ in range(args.repeat)]
    cold = [cold_start() for _ in range(3)]
    inproc = [grade_once(lab, False) for _ in range(args.repeat)]
    w, c = statistics.median(warm), statistics.median(cold)
    iso, rdy = statistics.median(isolated), statistics.median(ready)
    s, i = statistics.median(sandboxed), statistics.median(inproc)
    print(f"{'measure':<44}{'median':>10}{'target':>12}")
    print(f"{'worker start, warm: forked + every layer':<44}{iso * 1e3:>8.1f} ms{'<= 50 ms':>12}")
    print(f"{'  ... and the submission imported':<44}{rdy * 1e3:>8.1f} ms")
    print(f"{'  ... as the grader sees it (handshake)':<44}{w * 1e3:>8.1f} ms")
    print(f"{'worker start, cold (python + numpy + torch)':<44}{c * 1e3:>8.1f} ms")
    print(f"{'cold / warm':<44}{c / w:>9.1f}x")
    print(f"{'grade lab2 reference, sandboxed (warm zygote)':<44}{s:>9.2f} s")
    print(f"{'grade lab2 reference, in-process':<44}{i:>9.2f} s")
    print(f"{'sandboxed / in-process':<44}{s / i:>10.2f}{'<= 1.3':>12}")


if __name__ == "__main__":
    main()
