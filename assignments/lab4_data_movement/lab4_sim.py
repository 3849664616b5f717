"""Lab 4's simulations: recorded loader work and a ring network (shipped with the lab; do not edit).

The grader always uses its own copy of this file; a copy in a submission
is ignored. Two parts:

* **Recorded work** for the prefetching exercise. ``Recorder.load`` and
  ``Recorder.compute`` do one simulated stage of work (a sleep that
  releases the GIL, or a pure-Python loop that holds it) and record when it
  started and ended, in which thread and in which process. ``run_loader``
  returns ``Recorder.report()``, and the grader judges prefetching from
  those events: what overlapped, how far loading ran ahead, which thread
  and process did what. It never compares timings with a threshold.

  >>> rec = Recorder()
  >>> item = rec.load(0, kind="sleep", amount=0.01)      # the sample, carrying its load record
  >>> rec.compute(item, kind="sleep", amount=0.01)
  >>> [e["stage"] for e in rec.report()["events"]]
  ['load', 'compute']

  Every load is recorded, also one whose item is never computed (work
  done twice shows), and the report lists the threads that did recorded
  work but had not been joined when it was made.

* **A ring network** for ring AllReduce. ``run_ring`` plays N ranks, step
  by step: at every step it asks each rank which messages it sends
  (``send``), carries them over a :class:`RingNetwork`, then hands each
  rank the messages addressed to it (``receive``). Each call sees one
  rank's own buffer and nothing else. The network only lets rank r send to
  rank (r + 1) % N (anything else raises :class:`RingError`) and counts
  the bytes every rank sends. The grader drives your ``ring_send`` and
  ``ring_receive`` through this same code.
"""

from __future__ import annotations

import os
import threading
import time
from itertools import count, repeat

import numpy as np

from autograder.core.i18n import N_, _

# --------------------------------------------------------------------------
# Simulated, recorded work (prefetching)
# --------------------------------------------------------------------------

KINDS = ("sleep", "python_cpu")


def python_work(n: int) -> int:
    """Pure-Python busy loop of ``n`` iterations (about 30 ns each).

    It executes Python bytecode the whole time, so it holds the GIL, like
    decoding or augmenting samples in plain Python.
    """
    x = 0
    for _ in repeat(None, int(n)):
        x = (x + 3) & 255
    return x


def do_work(*, kind: str, amount: float) -> None:
    """One simulated stage of work.

    kind="sleep":      ``time.sleep(amount)``: ``amount`` is in seconds. A wait
                       that releases the GIL, like disk or network I/O or a
                       GPU kernel the CPU waits on.
    kind="python_cpu": ``python_work(int(amount))``: ``amount`` is a number
                       of loop iterations. CPU work that holds the GIL.
    """
    if kind == "sleep":
        time.sleep(amount)
    elif kind == "python_cpu":
        python_work(int(amount))
    else:
        raise ValueError(_("kind must be 'sleep' or 'python_cpu', got {kind}").format(kind=repr(kind)))


_LOADS = count()  # numbers every load of this process; (pid, number) names it in any process


def _joined(thread: threading.Thread) -> bool:
    """Whether the end of ``thread`` has been waited for (``join()`` returned, or ``is_alive()``
    answered False), without waiting or polling here. CPython's ``Thread._is_stopped`` is set by
    exactly that wait, never by the thread itself, so the answer does not depend on whether the
    thread happened to have ended already: a finished thread nobody joined is still "not joined".
    A Python without that attribute falls back to ``not is_alive()`` (which cannot tell a finished
    thread from a joined one).
    """
    stopped = getattr(thread, "_is_stopped", None)
    return bool(stopped) if stopped is not None else not thread.is_alive()


class Recorder:
    """Does the loader's work and records every stage as an event.

    Create one at the start of each ``run_loader`` call, in the calling
    thread: it remembers that thread and process, and its clock starts at
    0. An event is a dict::

        {"item": 3, "stage": "load" or "compute", "start": 0.061, "end": 0.092,
         "thread": 4711, "pid": 12, "kind": "sleep", "amount": 0.03}

    with times in seconds since the Recorder was created
    (``time.perf_counter``, one clock for all threads and processes), the
    thread that did the work (``threading.get_native_id()``) and its
    process (``os.getpid()``).

    ``load`` files its event at once, so every load of this process is
    recorded, also one whose item is never computed. It returns the item as
    a small dict that also carries the record of its own loading, so the
    record travels with the sample through a queue, even to another process
    (where this Recorder's own list is out of reach); ``compute`` files
    such a record if it was not filed yet, then its own. Thread-safe.
    """

    def __init__(self):
        self.t0 = time.perf_counter()
        self.pid = os.getpid()
        self.thread = threading.get_native_id()
        self._events: list[dict] = []
        self._filed: set[tuple[int, int]] = set()  # the loads already in _events, by their names
        self._workers: dict[int, threading.Thread] = {}  # other threads of this process that did work
        self._lock = threading.Lock()

    def _event(self, item: int, stage: str, start: float, kind: str, amount: float) -> dict:
        return {"item": int(item), "stage": stage, "start": start, "end": time.perf_counter() - self.t0,
                "thread": threading.get_native_id(), "pid": os.getpid(), "kind": kind, "amount": float(amount)}

    def _worked(self) -> None:
        """Note the current thread when it is not the one that created this Recorder."""
        if os.getpid() == self.pid and threading.get_native_id() != self.thread:
            self._workers.setdefault(threading.get_native_id(), threading.current_thread())

    def load(self, i: int, *, kind: str, amount: float) -> dict:
        """Load item ``i``: ``do_work(kind=kind, amount=amount)``, recorded. Returns the item."""
        start = time.perf_counter() - self.t0
        do_work(kind=kind, amount=amount)
        event, name = self._event(i, "load", start, kind, amount), (os.getpid(), next(_LOADS))
        with self._lock:  # in another process this is that process's copy: the item carries the record
            self._events.append(event)
            self._filed.add(name)
            self._worked()
        return {"id": int(i), "load": dict(event), "name": name}

    def compute(self, item: dict, *, kind: str, amount: float) -> None:
        """Compute on an item that ``load`` returned: ``do_work(kind=kind, amount=amount)``, recorded."""
        if not (isinstance(item, dict) and "id" in item and "load" in item):
            raise TypeError(_("compute() takes the item that load() returned, got {type}").format(
                type=type(item).__name__))
        start = time.perf_counter() - self.t0
        do_work(kind=kind, amount=amount)
        done = self._event(item["id"], "compute", start, kind, amount)
        name = tuple(item.get("name", ()))
        with self._lock:
            if name not in self._filed:  # loaded in another process (or by another Recorder)
                self._events.append(dict(item["load"]))
                self._filed.add(name)
            self._events.append(done)
            self._worked()

    def report(self) -> dict:
        """Plain data for the grader: the creating thread and process, every event filed so far, and
        "unjoined": the native ids of the other threads of this process that did recorded work and
        had not been joined when the report was made (join the loader thread before calling this)."""
        with self._lock:
            events = [dict(e) for e in self._events]
            workers = dict(self._workers)
        unjoined = sorted(tid for tid, t in workers.items() if not _joined(t))
        return {"pid": self.pid, "thread": self.thread, "events": events, "unjoined": unjoined}


# --------------------------------------------------------------------------
# A simulated ring network (ring AllReduce)
# --------------------------------------------------------------------------


class RingError(ValueError):
    """A rank broke the ring's rules. ``kind`` says which rule:

    "neighbour": it sent to a rank other than (rank + 1) % N;
    "message":   a message is not {"to": int, "chunk": int, "data": 1-D array};
    "dtype":     a message's data has another dtype than the buffers;
    "messages":  ring_send did not return a list of messages;
    "buffer":    ring_receive did not return a 1-D array of the buffer's length and dtype.

    The message is worded once, here (:meth:`explain`, in the reader's
    language): the notebook prints it, and the public and hidden tests say
    the same sentence with their case. It names the step and the rank, never
    a buffer's contents.
    """

    WORDING = {
        "neighbour": N_("ring AllReduce{case}: at step {step} rank {rank} sent to rank {to}; on a ring rank {rank} "
                        "may only send to rank {next}, that is (rank + 1) mod N"),
        "message": N_("ring AllReduce{case}: at step {step} rank {rank} sent a message that is not a dict with "
                      "exactly the keys 'to' (an int), 'chunk' (an int below N) and 'data' (a 1-D numpy array)"),
        "dtype": N_("ring AllReduce{case}: at step {step} rank {rank} sent data of another dtype than the buffers"),
        "messages": N_("ring AllReduce{case}: at step {step} ring_send for rank {rank} did not return a list of "
                       "messages"),
        "buffer": N_("ring AllReduce{case}: at step {step} ring_receive for rank {rank} did not return a 1-D array "
                     "of the buffer's length and dtype"),
    }

    def __init__(self, kind: str, *, step: int, rank: int, N: int, to: int | None = None):
        self.kind, self.step, self.rank, self.N, self.to = kind, step, rank, N, to
        super().__init__(self.explain())

    def explain(self, case: str = "") -> str:
        """The broken rule in the current language; ``case`` (such as " (4 ranks)") follows "ring AllReduce"."""
        return _(self.WORDING[self.kind]).format(case=case, step=self.step, rank=self.rank, to=self.to,
                                                 next=(self.rank + 1) % self.N)


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


class RingNetwork:
    """N ranks on a ring. Rank r may only send to rank (r + 1) % N.

    ``send`` checks each message, copies its data onto the wire and adds its
    ``nbytes`` to ``bytes_sent[rank]``; ``deliver`` hands every rank the
    messages addressed to it during the step and empties the wire. ``log``
    lists every message sent: step, from, to, chunk, nbytes.
    """

    def __init__(self, N: int, dtype=None):
        assert N >= 1, "a ring needs at least one rank"
        self.N = N
        self.dtype = None if dtype is None else np.dtype(dtype)
        self.bytes_sent = [0] * N
        self.log: list[dict] = []
        self._wire: list[list[dict]] = [[] for _ in range(N)]

    def send(self, *, step: int, rank: int, message) -> None:
        N = self.N
        if not (isinstance(message, dict) and set(message) == {"to", "chunk", "data"}):
            raise RingError("message", step=step, rank=rank, N=N)
        to, chunk, data = message["to"], message["chunk"], message["data"]
        if not (_is_int(to) and _is_int(chunk) and 0 <= chunk < N):
            raise RingError("message", step=step, rank=rank, N=N)
        if int(to) != (rank + 1) % N:
            raise RingError("neighbour", step=step, rank=rank, N=N, to=int(to))
        if not (isinstance(data, np.ndarray) and data.ndim == 1 and data.dtype.kind in "biuf"):
            raise RingError("message", step=step, rank=rank, N=N)
        if self.dtype is not None and data.dtype != self.dtype:
            raise RingError("dtype", step=step, rank=rank, N=N)
        data = data.copy()  # on the wire: later changes to the sender's array do not travel
        self.bytes_sent[rank] += int(data.nbytes)
        self.log.append({"step": step, "from": rank, "to": int(to), "chunk": int(chunk), "nbytes": int(data.nbytes)})
        self._wire[int(to)].append({"from": rank, "chunk": int(chunk), "data": data})

    def deliver(self) -> list[list[dict]]:
        """The messages of this step, per receiving rank; the wire is empty afterwards."""
        inboxes, self._wire = self._wire, [[] for _ in range(self.N)]
        return inboxes


def ring_steps(N: int) -> int:
    """Steps of a ring AllReduce over N ranks: N − 1 of reduce-scatter, then N − 1 of all-gather."""
    return 2 * (N - 1)


def _each(fn, calls: list[dict]) -> list:
    """``[fn(**kw) for kw in calls]``, through ``fn.each`` when ``fn`` offers it."""
    each = getattr(fn, "each", None)
    return list(each(calls)) if callable(each) else [fn(**kw) for kw in calls]


def run_ring(*, buffers, send, receive, history: bool = False) -> dict:
    """Run ring AllReduce over N = len(buffers) simulated ranks, step by step.

    At every step s = 0 .. 2(N−1)−1, first every rank r sends:
    ``send(rank=r, N=N, step=s, buffer=...)`` gets a copy of rank r's buffer
    and returns a list of messages ``{"to": ..., "chunk": ..., "data": ...}``,
    all carried by the network. Then every rank receives:
    ``receive(rank=r, N=N, step=s, buffer=..., messages=...)`` gets a copy of
    its buffer and the messages addressed to it, each
    ``{"from": ..., "chunk": ..., "data": ...}``, and returns its new buffer.
    So within a step all ranks send what they held at the start of it.
    Every call gets its own copies (each message's data was copied onto the
    wire and goes to one rank only), so no call can change what another
    sees; the lab's functions still return new arrays rather than change
    their arguments.
    A step's N calls of ``send`` (then of ``receive``) are made together, in
    rank order, before any of their results is used: with ``send.each``
    when the callable has it (the grader's proxy for your sandboxed code,
    which makes the N calls in one round trip), else one by one.

    Args:
        buffers: N 1-D arrays of equal length and dtype (not modified).
        send, receive: the two per-rank functions (called with keywords).
        history: also return every rank's buffer after each step.

    Returns:
        dict: "results" (the N buffers at the end), "bytes_sent" (bytes each
        rank put on the wire, as the network counted them), "log" (every
        message: step, from, to, chunk, nbytes) and, with history=True,
        "history" (a list of 2(N−1) + 1 lists of N buffers: the start, then
        after each step). Raises RingError when a rank breaks the ring.
    """
    N = len(buffers)
    bufs = [np.array(b, copy=True) for b in buffers]
    assert N >= 1 and all(b.ndim == 1 and b.shape == bufs[0].shape and b.dtype == bufs[0].dtype for b in bufs), \
        "buffers must be N >= 1 1-D arrays of equal length and dtype"
    shape, dtype = bufs[0].shape, bufs[0].dtype
    net = RingNetwork(N, dtype)
    steps = [[b.copy() for b in bufs]] if history else None
    for step in range(ring_steps(N)):
        sent = _each(send, [dict(rank=rank, N=N, step=step, buffer=bufs[rank].copy()) for rank in range(N)])
        for rank, messages in enumerate(sent):
            if not isinstance(messages, (list, tuple)):
                raise RingError("messages", step=step, rank=rank, N=N)
            for message in messages:
                net.send(step=step, rank=rank, message=message)
        inboxes = net.deliver()
        received = _each(receive, [dict(rank=rank, N=N, step=step, buffer=bufs[rank].copy(), messages=inboxes[rank])
                                   for rank in range(N)])
        for rank, new in enumerate(received):
            if not (isinstance(new, np.ndarray) and new.shape == shape and new.dtype == dtype):
                raise RingError("buffer", step=step, rank=rank, N=N)
            bufs[rank] = new.copy()
        if history:
            steps.append([b.copy() for b in bufs])
    out = {"results": bufs, "bytes_sent": list(net.bytes_sent), "log": net.log}
    if history:
        out["history"] = steps
    return out
