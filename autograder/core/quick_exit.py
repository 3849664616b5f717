"""Ending a trusted process without the interpreter's teardown, once it has done all it owes.

A Python that imported torch spends 0.3-0.6 s leaving: the interpreter clears every module and
collects every object they held (measured on the project's 2-core VM: 0.36 s after ``import torch``,
0.56 s after torch, ``torch._dynamo`` and pytest, 0.02 s with ``os._exit``; docs/performance.md).
Nobody reads what that teardown does, yet the command's caller, a student waiting for ``check`` or a
batch waiting for its graders, waits for it.

So the two kinds of trusted process that hold torch and end often leave with ``os._exit`` once what
Python itself would do first has been done:

* the ``autograder`` command (``leave``): its threads joined and its ``atexit`` handlers run, in that
  order, as ``Py_FinalizeEx`` does (temporary folders' finalizers and ``logging`` are among them), then
  every file still open flushed, as its finalizer would (``check`` runs a student's own code in this
  process, on the student's machine: a file it opened and never closed keeps what it wrote);
* a grader of the pool (``skip_teardown``, an ``atexit`` handler registered as it starts): a spawned
  pool process reaches ``atexit`` only after ``multiprocessing`` has run its own exit function,
  joined its threads and flushed its streams (``BaseProcess._bootstrap``), with its every reply
  written (a ``SimpleQueue`` writes as it is put); the handlers registered after it (torch's, a
  lab's) run before it, last registered first.

Only the normal end takes this path: an exception, Ctrl-C or ``SystemExit`` leaves as Python always
does.  In grading mode student code never runs in these processes: its sandboxed workers already end
with ``os._exit`` (``sandbox/worker.py``).
"""

from __future__ import annotations

import atexit
import gc
import io
import os
import sys
import threading
from typing import NoReturn


def _flush(streams=None) -> None:
    for stream in (sys.stdout, sys.stderr) if streams is None else streams:
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):  # None, a closed pipe (`| head`), a closed file
            pass


_BUFFERED = (io.TextIOWrapper, io.BufferedWriter, io.BufferedRandom)


def _open_files() -> list[io.IOBase]:
    """Every open file object that buffers writes (what the teardown would flush as it freed them), text
    files first: a text file's flush writes into the binary one under it."""
    found = []
    for o in gc.get_objects():
        if issubclass(type(o), _BUFFERED):  # type(), not isinstance: no object's __class__ is asked (torch warns)
            try:
                if not o.closed:
                    found.append(o)
            except ValueError:  # a text file whose binary one was detached
                pass
    return sorted(found, key=lambda f: not issubclass(type(f), io.TextIOWrapper))


def leave(code: int) -> NoReturn:
    """Exit with ``code`` after what the interpreter does before its teardown, without the teardown."""
    shutdown = getattr(threading, "_shutdown", None)  # what Py_FinalizeEx calls first (CPython 3.8-3.13)
    if shutdown is None:
        sys.exit(code)
    shutdown()  # threading's own exit hooks (concurrent.futures joins its executors), then every non-daemon thread
    atexit._run_exitfuncs()  # what atexit holds, last registered first, as at any exit
    _flush([*_open_files(), sys.stdout, sys.stderr])
    os._exit(code)


def skip_teardown() -> None:
    """A pool grader's ``atexit`` handler: flush, and end with status 0 (nothing reads a grader's status)."""
    _flush()
    os._exit(0)
