"""Every row of GRADING.md's "What a submission may try", graded in one batch.

Each hostile submission must score no more than the stub (0), the control
keeps full marks, the batch completes, nothing is written outside the
workers' folders, no process outlives the batch, and results stay small.
"""

from __future__ import annotations

import csv
import json
import os
import pwd
import shutil
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder.commands import grade
from autograder.sandbox import layers

HOSTILE = Path(__file__).parent / "fixtures" / "hostile"
MARKERS = [Path("/tmp/ironlaw-pwned-marker"), Path("/ironlaw-pwned-marker"), Path("/etc/ironlaw-pwned-marker"),
           Path(np.__file__).parent / "ironlaw-pwned-marker", Path(pwd.getpwuid(0).pw_dir) / "ironlaw-pwned-marker"]
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the full sandbox needs root (as on CI and Gradescope)")


def _worker_processes() -> list[str]:
    """Live processes that belong to a sandbox: worker uids or a zygote."""
    found = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            uid = int(next(l for l in (p / "status").read_text().splitlines() if l.startswith("Uid:")).split()[1])
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, StopIteration):
            continue
        mine = sys.prefix in cmd or not cmd  # not another checkout's batch running beside this one
        if mine and (uid >= layers.UID_BASE or "autograder.sandbox.zygote" in cmd):
            found.append(f"{p.name} uid={uid} {cmd[:80]}")
    return found


def _grade_batch(toy_root: Path, tmp_path: Path) -> tuple[dict[str, dict], Path]:
    subs = tmp_path / "submissions"
    shutil.copytree(HOSTILE, subs)
    out = tmp_path / "out"
    for m in MARKERS:
        m.unlink(missing_ok=True)
    assert grade.main(lab="labx", submissions_dir=str(subs), out=str(out), jobs=2, quiet=True) == 0
    rows = {r["submission"]: r for r in csv.DictReader(open(out / "gradebook.csv"))}
    return rows, out


def _check_batch(rows: dict, out: Path, expect_control: float, private_tmp: bool = True) -> None:
    assert set(rows) == {p.name for p in HOSTILE.iterdir()}, "the batch must grade every submission"
    assert float(rows["control"]["score"]) == expect_control
    breaches = {k: r["score"] for k, r in rows.items() if k != "control" and float(r["score"]) > 0}
    assert not breaches, f"hostile submissions scored above the stub: {breaches}"
    for m in MARKERS:
        if not private_tmp and m.parent == Path("/tmp"):
            m.unlink(missing_ok=True)  # world-writable without a mount namespace (one container per
            continue                   # submission on Gradescope keeps it from other students)
        assert not m.exists(), f"a submission wrote {m}"
    for p in out.rglob("*"):
        if p.is_file():
            assert p.stat().st_size < 2**20, f"{p.name} is over 1 MB"
    assert sorted(x.name for x in out.iterdir()) == ["feedback", "gradebook.csv", "raw", "results",
                                                      "summary.md", "summary.png"]
    assert not _worker_processes(), "processes outlived the batch"


def test_hostile_batch(toy_root, tmp_path):
    rows, out = _grade_batch(toy_root, tmp_path)
    _check_batch(rows, out, expect_control=5.0)
    result = json.loads((out / "results" / "control.json").read_text())
    iso = result["extra_data"]["isolation"]
    assert iso["sandbox"] and iso["seccomp"] and iso["rlimits"]
    fb = {k: (out / "feedback" / f"{k}.md").read_text() for k in rows}
    assert "timed out after 3 s" in fb["infinite_loop"]
    assert "importing your files timed out" in fb["import_hang"]
    assert "SyntaxError" in fb["syntax_error"]
    assert "no function add()" in fb["missing_function"]
    assert "unsupported return type" in fb["pickle_payload"]
    assert "exited with code 0" in fb["os_exit"]


def test_hostile_batch_keeping_uid0(toy_root, tmp_path, monkeypatch):
    """The path for a Python an unprivileged uid cannot reach (pyenv under /root)."""
    monkeypatch.setenv("IRONLAW_SANDBOX_KEEP_UID", "1")
    rows, out = _grade_batch(toy_root, tmp_path)
    _check_batch(rows, out, expect_control=5.0)
    iso = json.loads((out / "results" / "control.json").read_text())["extra_data"]["isolation"]
    assert iso["privileges"].startswith("uid 0 without capabilities")
    assert iso["mount_namespace"], "uid 0 is only safe behind a mount namespace"


def test_gradescope_shape(toy_root, tmp_path, monkeypatch):
    """Root without CAP_SYS_ADMIN: no namespaces.  The uid drop, file modes,
    rlimits, seccomp and the separate scorer must still hold, or the
    sandbox must refuse to run rather than grade unprotected."""
    monkeypatch.setenv(layers.NO_NAMESPACES_ENV, "1")
    secret_dirs = [toy_root / "solutions", toy_root / "tests", Path(__file__).parent / "fixtures" / "toyroot"]
    saved = {d: stat.S_IMODE(d.stat().st_mode) for d in secret_dirs}
    try:
        for d in secret_dirs:  # what setup.sh does on Gradescope
            d.chmod(0o700)
        if layers.zygote_can_drop_uid():
            rows, out = _grade_batch(toy_root, tmp_path)
            _check_batch(rows, out, expect_control=5.0, private_tmp=False)
            iso = json.loads((out / "results" / "control.json").read_text())["extra_data"]["isolation"]
            assert not iso["mount_namespace"] and iso["privileges"].startswith("uid ")
        else:
            rows, out = _grade_batch(toy_root, tmp_path)
            assert all(float(r["score"]) == 0 for r in rows.values())
            assert "not reachable by an unprivileged uid" in (out / "feedback" / "control.md").read_text()
    finally:
        for d, mode in saved.items():
            d.chmod(mode)
