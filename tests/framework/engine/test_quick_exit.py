"""A trusted process ended without the interpreter's teardown still does what an exit owes.

``core/quick_exit``: the ``autograder`` command ends with ``leave`` (threads joined, ``atexit`` run,
streams flushed, then ``os._exit``), a pool grader with ``skip_teardown``.  What a caller can see of
an exit is checked here: the status, every byte printed, the work of a thread still running, the
``atexit`` handlers, a temporary folder's finalizer and a file left open; the command's status and
message, through ``leave``; and a pool's graders still return every result.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from autograder.grading.pool import GraderPool

PROGRAM = textwrap.dedent("""
    import atexit, sys, tempfile, threading, time
    from autograder.core.quick_exit import leave

    out = sys.argv[1]
    kept = tempfile.TemporaryDirectory(dir=out)  # never cleaned up by hand: its finalizer must run
    open(out + "/folder", "w").write(kept.name)
    atexit.register(lambda: open(out + "/atexit", "w").write("ran"))
    kept_open = open(out + "/open", "w")  # never closed: what it buffered must reach the file
    kept_open.write("buffered")

    def late():
        time.sleep(0.2)
        open(out + "/thread", "w").write("done")
    threading.Thread(target=late).start()  # not a daemon: an exit waits for it
    sys.stdout.write("x" * 100_000)  # more than a pipe's buffer, unflushed
    sys.stderr.write("said on stderr")
    leave(3)
""")


def test_leave_keeps_what_an_exit_owes(tmp_path):
    proc = subprocess.run([sys.executable, "-c", PROGRAM, str(tmp_path)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 3
    assert proc.stdout == "x" * 100_000 and proc.stderr == "said on stderr"
    assert (tmp_path / "thread").read_text() == "done"
    assert (tmp_path / "atexit").read_text() == "ran"
    assert (tmp_path / "open").read_text() == "buffered"
    assert not Path((tmp_path / "folder").read_text()).exists()


def test_the_command_ends_with_main_s_status():
    # an unknown lab: main prints why and returns 2, which leave passes on (an unknown command would not
    # test it: click's usage error leaves through SystemExit, as Python always does)
    proc = subprocess.run([sys.executable, "-m", "autograder", "check", "no-such-lab"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and "no-such-lab" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "autograder", "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "check" in proc.stdout


def test_graders_that_skip_their_teardown_return_every_result(tmp_path):
    pool = GraderPool(str(tmp_path), 2, {})
    try:
        futures = [pool._pool.submit(pow, n, 2) for n in range(20)]  # a builtin: a spawned grader can unpickle it
        assert [f.result(timeout=120) for f in futures] == [n * n for n in range(20)]
        processes = list(pool._pool._processes.values())
    finally:
        pool.close()
    assert processes and all(p.exitcode == 0 for p in processes)
