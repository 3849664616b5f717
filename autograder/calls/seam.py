"""The one seam between a test and the code under test.

Tests see ``student.fn(**kwargs)`` and nothing else.  Behind the proxy sits
a backend: :class:`InProcess` (student debugging, the reference) or the
sandboxed worker (``autograder.sandbox``).  Arguments and results always
cross as plain data (``autograder.calls.wire``), in both modes, so a test cannot
tell them apart and a student cannot mutate an object the grader inspects.
A call that changes the copy it was given fails in both modes all the same
(``loader.check_unmodified``): changing one's inputs is a bug in itself.
"""

from __future__ import annotations

import resource
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from autograder.calls import errors, loader, wire
from autograder.core.i18n import _


@dataclass(frozen=True)
class Measurement:
    """Measured around one call, from outside the code under test."""

    wall_s: float
    cpu_s: float  # all threads, plus the child processes the call waited for
    # peak memory of the call: in-process, above what was traced when it began (tracemalloc);
    # sandboxed, above the fresh worker's memory before it imported any student file (rss)
    peak_bytes: int
    method: str  # how peak_bytes was measured ("tracemalloc", "rss")


class Backend(Protocol):
    """A backend may also offer ``call_each(name, calls) -> list`` (one round trip for many
    calls: the sandbox) and ``call_chain(name, calls, carry) -> list`` (one message for a
    sequence of calls, one reply per call); without them, :meth:`_Function.each` and
    :meth:`_Function.chain` make the calls one by one."""

    label: str

    def call(self, name: str, args: tuple, kwargs: dict, measure: bool = False) -> tuple[object, Measurement | None]: ...

    def close(self) -> None: ...


def encode_call(name: str, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The grader's arguments as the student will see them (a fresh copy)."""
    try:
        return wire.roundtrip((tuple(args), dict(kwargs)), _("arguments of {name}()").format(name=name))
    except wire.WireError as exc:  # a test bug, not the student's
        raise errors.StudentCodeError(errors.ARGUMENT, str(exc)) from None


def call_message(name: str, args: tuple, kwargs: dict) -> bytes:
    """The call as a sandboxed worker receives it: the same copy :func:`encode_call` makes, in
    one pass of the wire format (its decoding happens in the worker)."""
    return _message(name, {"args": tuple(args), "kwargs": dict(kwargs)})


def each_message(name: str, calls: list[dict]) -> bytes:
    """Many keyword calls of one function as a sandboxed worker receives them (``worker._answer``)."""
    return _message(name, {"each": [dict(kw) for kw in calls]})


def chain_message(name: str, calls: list[dict], carry: tuple[str | None, ...]) -> bytes:
    """A chain of keyword calls of one function as a sandboxed worker receives it (``worker._answers``)."""
    return _message(name, {"chain": [dict(kw) for kw in calls], "carry": list(carry)})


def feeds(value, carry: tuple[str | None, ...]) -> bool:
    """Can ``value``, a call's return value, feed the next call of a chain: a tuple or list of
    exactly ``len(carry)`` items, what a test's own loop (``params, state = fn(...)``) would
    unpack and pass on.  The grader and the worker end a chain by this one rule."""
    return isinstance(value, (tuple, list)) and len(value) == len(carry)


def fed(kwargs: dict, previous: tuple, carry: tuple[str | None, ...]) -> dict:
    """A chain's next call: its own keywords, and item ``i`` of ``previous`` as keyword ``carry[i]``."""
    return {**kwargs, **{key: item for key, item in zip(carry, previous) if key is not None}}


def _message(name: str, body: dict) -> bytes:
    try:
        return wire.dumps({"fn": name, **body}, _("arguments of {name}()").format(name=name))
    except wire.WireError as exc:  # a test bug, not the student's
        raise errors.StudentCodeError(errors.ARGUMENT, str(exc)) from None


def decode_result(name: str, value):
    try:
        return wire.roundtrip(value, _("return value of {name}()").format(name=name))
    except wire.WireError as exc:
        raise errors.StudentCodeError(errors.UNSUPPORTED, _("unsupported return type: {error}").format(error=exc)) from None


def _cpu_time() -> float:
    """CPU seconds of this process and of the children it has waited for."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


class InProcess:
    """Loads the modules into this process; fast and debuggable, not isolated."""

    def __init__(self, code_dir: Path, files: tuple[str, ...], support_dir: Path | None = None,
                 support_files: tuple[str, ...] = (), label: str = "in-process"):
        self.code_dir = Path(code_dir)
        self.files, self.support_dir, self.support_files = files, support_dir, support_files
        self.label = label
        self._loaded = None  # (modules, failed files), on the first call

    def _function(self, name: str):
        if self._loaded is None:
            self._loaded = loader.load_each(self.code_dir, self.files, self.support_dir, self.support_files)
        modules, failed = self._loaded
        return loader.find_function(modules, name, failed, self.code_dir)

    def call(self, name, args, kwargs, measure=False):
        fn = self._function(name)
        args, kwargs = encode_call(name, args, kwargs)
        before = loader.fingerprint_arguments(args, kwargs)  # outside the measured window
        if not measure:
            value = loader.call(fn, args, kwargs, self.code_dir, self.support_files)
            loader.check_unmodified(name, fn, args, kwargs, before)
            return decode_result(name, value), None
        tracing = tracemalloc.is_tracing()
        if not tracing:
            tracemalloc.start()
        tracemalloc.reset_peak()
        base, _current = tracemalloc.get_traced_memory()
        w0, c0 = time.perf_counter(), _cpu_time()
        try:
            value = loader.call(fn, args, kwargs, self.code_dir, self.support_files)
        finally:
            w1, c1 = time.perf_counter(), _cpu_time()
            _current, peak = tracemalloc.get_traced_memory()
            if not tracing:
                tracemalloc.stop()
        loader.check_unmodified(name, fn, args, kwargs, before)
        return decode_result(name, value), Measurement(w1 - w0, c1 - c0, max(0, peak - base), "tracemalloc")

    def close(self):
        self._loaded = None


class _Function:
    def __init__(self, backend: Backend, name: str):
        self._backend, self._name = backend, name

    def __call__(self, *args, **kwargs):
        return self._backend.call(self._name, args, kwargs)[0]

    def measured(self, *args, **kwargs) -> tuple[object, Measurement]:
        """Call and measure wall time, CPU time and peak memory from outside."""
        return self._backend.call(self._name, args, kwargs, measure=True)

    def each(self, calls: list[dict]) -> list:
        """``[fn(**kw) for kw in calls]``, in order, in one round trip to a sandboxed worker.

        For many small independent calls (a ring step's N ranks): a round trip costs more
        than such a call. The first call that fails raises as it would alone, and the
        calls after it are not made. Sandboxed, the calls share ``len(calls)`` times the
        per-call time limit."""
        many = getattr(self._backend, "call_each", None)
        if many is None:
            return [self._backend.call(self._name, (), kw)[0] for kw in calls]
        return many(self._name, calls)

    def chain(self, calls: list[dict], carry: tuple[str | None, ...]) -> list:
        """Calls in sequence, each fed what the one before returned; their values, in order.

        Call ``t`` gets ``calls[t]``, and from the second on, item ``i`` of the previous
        value as keyword ``carry[i]`` (None: not passed on), a fresh copy as if the test had
        passed it back: an optimizer's steps return ``(params, state)``, ``carry=("params",
        "state")``.  A value that cannot feed the next call (:func:`feeds`: not a tuple
        or list of exactly ``len(carry)`` items) is the last one: the list is shorter, and the test reads
        that value as it would have alone, no later call made.
        The first call that fails raises as it would alone.  Sandboxed, the calls go in one
        message and come back one reply per call, each within its own per-call time limit,
        exactly as if made one by one: only the round trips are saved."""
        many = getattr(self._backend, "call_chain", None)
        if many is not None:
            return many(self._name, calls, carry)
        values: list = []
        for kw in calls:
            if values and not feeds(values[-1], carry):
                break
            values.append(self._backend.call(self._name, (), fed(kw, values[-1], carry) if values else kw)[0])
        return values

    def __repr__(self):
        return f"<{self._name} via {self._backend.label}>"


class CodeProxy:
    """``student`` / ``reference`` in tests: attribute access gives callables."""

    def __init__(self, backend: Backend):
        object.__setattr__(self, "_backend", backend)

    def __getattr__(self, name: str) -> _Function:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Function(self._backend, name)

    def __setattr__(self, name, value):
        raise AttributeError("the code under test is read-only from a test")

    def __repr__(self):
        return f"<code via {self._backend.label}>"
