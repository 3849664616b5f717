"""``otter run`` and our Gradescope runner on the same submissions, side by side, in one run.

For one lab (default lab 2), builds the otter zip (``autograder otter``) and
the Gradescope zip (``autograder gradescope``), then grades the same
submissions (the reference and the untouched stub, by default) with each:
``otter run -a <zip> <submission.zip>`` (the notebook and the modules, as a
student uploads them to otter) and ``source/run_autograder`` in a laid-out
``/autograder`` tree (``build.gradescope_zip.lay_out``; this Python stands
in for the one setup.sh installs).  Both run in this environment, one after
the other, each from a cold start, as on their platforms.  Prints each one's
wall time and score, and the ratio.  Otter grades only the public tests
(``docs/otter.md``), our runner the public and the hidden ones, in the
sandbox.

    python benchmarks/otter_vs_gradescope.py [--lab lab2] [--candidates reference,stub]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.authoring import candidates, gradescope_zip, otter
from autograder.core import i18n, labs


def run_otter(autograder_zip: Path, submission: Path, out: Path) -> tuple[float, str]:
    out.mkdir()
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "otter", "run", "-a", str(autograder_zip), "-o", str(out),
                           "--no-logo", str(submission)], cwd=out, capture_output=True, text=True, timeout=900)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0 or not (out / "results.json").exists():
        return elapsed, f"failed (exit {proc.returncode})"
    res = json.loads((out / "results.json").read_text())
    tests = res["tests"]
    return elapsed, f"{sum(t.get('score', 0) for t in tests):g}/{sum(t.get('max_score', 0) for t in tests):g}"


def run_gradescope(autograder_zip: Path, root: Path, files: dict[str, str]) -> tuple[float, str]:
    gradescope_zip.lay_out(autograder_zip, root, files)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "IRONLAW_PYTHON": sys.executable}
    env.pop(labs.ROOT_ENV, None)  # the engine finds the lab in source/, as on Gradescope
    t0 = time.perf_counter()
    proc = subprocess.run([str(root / "source" / "run_autograder")], env=env, cwd="/", capture_output=True,
                          text=True, timeout=900)
    elapsed = time.perf_counter() - t0
    results = root / "results" / "results.json"
    if proc.returncode != 0 or not results.exists():
        return elapsed, f"failed (exit {proc.returncode})"
    res = json.loads(results.read_text())
    return elapsed, f"{res['score']:g}/{sum(t.get('max_score', 0) for t in res['tests']):g}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lab", default="lab2")
    ap.add_argument("--candidates", default="reference,stub", help="ids from `autograder examples` (comma-separated)")
    args = ap.parse_args()
    lab = labs.get(args.lab)
    chosen = {c.id: c for c in candidates.all_candidates(lab)}
    print(f"{'submission':<16}{'otter run':>12}{'score':>10}{'run_autograder':>16}{'score':>10}{'otter / ours':>14}")
    total_otter = total_ours = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        tmp_path.chmod(0o755)  # as / above /autograder: its workers traverse to source/
        otter_zip = otter.build_zip(lab, tmp_path / "otter.zip")
        gs_zip, _ = gradescope_zip.build_zip(lab, tmp_path / "gradescope.zip", i18n.current())
        for cid in args.candidates.split(","):
            files = candidates.sources(lab, chosen[cid])
            sub = otter.submission_zip(lab, files, tmp_path / f"{cid}.zip")
            t_otter, s_otter = run_otter(otter_zip, sub, tmp_path / f"otter-{cid}")
            t_ours, s_ours = run_gradescope(gs_zip, tmp_path / f"gs-{cid}" / "autograder", files)
            total_otter, total_ours = total_otter + t_otter, total_ours + t_ours
            print(f"{cid:<16}{t_otter:>10.1f} s{s_otter:>10}{t_ours:>14.1f} s{s_ours:>10}{t_otter / t_ours:>13.2f}x")
    print(f"{'all':<16}{total_otter:>10.1f} s{'':>10}{total_ours:>14.1f} s{'':>10}{total_otter / total_ours:>13.2f}x")


if __name__ == "__main__":
    main()
