"""The clock a sandboxed worker's time limits run on: the worker's own, not the machine's.

A time limit (``Limits.timeout_s`` for a call, the same plus an allowance for
importing the files) is there to end code that would never finish: a loop, a
sleep, a wait for something that never comes.  It must never grade speed, and
the same code must get the same grade on a quiet machine and on one busy with
other graders, kernels or test runs.  On the wall clock a busy machine is a
slow machine: a call that needs 1 s alone takes 3 s beside two busy
processes on one core, and an import that needs 0.5 s can take 10 s on an
oversubscribed CI runner.  So a call's time is counted as its wall time less
the time the worker's main thread (the one that serves calls) spent ready to
run but waiting for a core another process held: ``run_delay`` in
``/proc/<pid>/schedstat``, which the kernel keeps for every thread.  What is
left is the time the call would have taken alone on the machine: a loop uses
it up as fast as it gets a core, a sleep or a blocked wait as fast as the
wall clock, and other processes' load slows neither.

Or the CPU time of the worker's whole tree, when that is more: all its
threads, and every process it started, waited for or not, dead or alive
(counted by its cgroup, ``cgroups.WorkerGroup.cpu_seconds``; where it has
none, its own threads and the children it waited for).  Threads and
processes of its own that keep its main thread from a core count as the
worker's time, so a submission cannot slow its own clock: a fork bomb
spends its limit as fast as it takes the machine's cores.
Where the kernel keeps no schedstat (``CONFIG_SCHED_INFO`` off) the clock is
the wall clock.

The submission's budget (``Limits.submission_timeout_s``) stays on the wall
clock: it is the bound a batch plans on, sized at 10 times and more the
reference's whole grading, and what ends the spent time of code that slows
its own clock in ways the CPU time does not see (children it never waits for).
"""

from __future__ import annotations

import os
import time

from autograder.sandbox import counters

HZ = os.sysconf("SC_CLK_TCK")
CORES = os.cpu_count() or 1  # the most CPU seconds any tree can spend in one second of wall time


def cpu_ticks(pid: int) -> int:
    """utime + stime of all of ``pid``'s threads, plus cutime + cstime of the children it
    waited for: work handed to a joined process still counts (OSError when it is gone)."""
    with open(f"/proc/{pid}/stat") as f:
        return _ticks(f.read())


def _ticks(stat: str) -> int:
    fields = stat.rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in (11, 12, 13, 14))


def run_delay_ns(pid: int) -> int | None:
    """Nanoseconds ``pid``'s main thread has spent runnable but waiting for a core (None: unknown)."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return _delay(f.read())
    except (OSError, ValueError, IndexError):
        return None


def _delay(schedstat: str) -> int:
    return int(schedstat.split()[1])


class ProcFiles:
    """:func:`cpu_ticks` and :func:`run_delay_ns` of one process, from its counter files opened
    once (``counters``): a worker's clock reads both at every call."""

    def __init__(self, pid: int | None):
        self.pid = pid
        self._folder = f"/proc/{pid}"
        self._files = counters.Descriptors()

    def cpu_ticks(self) -> int | None:
        try:
            return _ticks(self._files.read("stat", self._folder, "stat"))
        except (OSError, ValueError, IndexError):
            return None

    def run_delay_ns(self) -> int | None:
        try:
            return _delay(self._files.read("schedstat", self._folder, "schedstat"))
        except (OSError, ValueError, IndexError):
            return None

    def close(self) -> None:
        self._files.close()


POLL_S = 0.5  # the longest a reader waits before it reads the clock again (its CPU term can outrun the wall)


class WorkerClock:
    """``seconds`` on the clock of the worker ``proc`` (its :class:`ProcFiles`, or its pid; None:
    no worker, the wall clock) from now, and never past ``wall_end`` (a ``time.monotonic()``
    value: the submission's budget).  Called, it says how long a reader may wait before it asks
    again (``channel.recv`` takes it as its deadline); zero or less: the limit is reached."""

    def __init__(self, proc: ProcFiles | int | None, seconds: float, wall_end: float | None = None,
                 tree_cpu=None):
        """``tree_cpu``: a function giving the CPU seconds of the worker's whole tree (None: unknown)."""
        self.proc = proc if isinstance(proc, ProcFiles) else ProcFiles(proc)
        self.seconds, self.wall_end = seconds, wall_end
        self.tree_cpu = tree_cpu or (lambda: None)
        self.t0 = time.monotonic()
        self.delay0 = self.proc.run_delay_ns()
        self.cpu0 = self.proc.cpu_ticks()
        self.tree0 = self.tree_cpu()

    def used(self) -> float:
        """The worker's seconds since the clock started."""
        wall = time.monotonic() - self.t0
        delay = self.proc.run_delay_ns()
        if delay is None or self.delay0 is None:  # no schedstat here, or the worker has ended
            return wall
        # the thread's current wait is added to run_delay only when it gets its core: the
        # clock may run ahead of the worker by that wait, never behind it
        own = wall - (delay - self.delay0) / 1e9
        cpu = self.proc.cpu_ticks()
        if cpu is not None and self.cpu0 is not None:
            own = max(own, (cpu - self.cpu0) / HZ)
        tree = self.tree_cpu()
        if tree is not None and self.tree0 is not None:
            own = max(own, tree - self.tree0)
        return own

    def past_wall_end(self) -> bool:
        return self.wall_end is not None and time.monotonic() >= self.wall_end

    def __call__(self) -> float:
        now = time.monotonic()
        if (now - self.t0 + POLL_S) * CORES < self.seconds:
            # not even every core since the start and until the next poll reaches the limit: the answer
            # is POLL_S without reading /proc and the cgroup (three reads, ~80 us, at each of a reply's
            # waits: about 3,600 for a lab 2 submission)
            left = POLL_S
        else:
            left = self.seconds - self.used()
        if self.wall_end is not None:
            left = min(left, self.wall_end - now)
        return min(left, POLL_S)
