"""Reading bytes a student controls, bounded: one copy of the rules, for every reader.

What a student hands in besides the code (the notebook, ``predictions.json``)
is read as data in the instructor's own process (``autograder grade``, the
Gradescope runner), one entry after another, before any grader starts: a
reader that is slow on some input would stall the whole batch.  So every such
read is bounded three ways:

- **Linear parsers and limits checked before parsing.**  :func:`load_json`
  refuses more than ``max_bytes`` (a handed-in file's limit,
  :data:`MAX_FILE_BYTES`), then reads the text's brackets outside its strings
  with whole-text passes of ``bytes`` methods (:func:`structure`) and refuses
  nesting past ``max_depth`` and more than ``max_items`` arrays and objects
  (:data:`MAX_ITEMS`: building millions of empty lists costs more than any
  limit here allows), and only then parses with the standard library's C
  parser (linear; nesting past the interpreter's recursion limit is a
  ``RecursionError`` it raises, never a crash).  No regular expression ever
  runs over a whole file (a pattern such as ``"(?:[^"\\\\]|\\\\.)*"`` restarts
  at every escaped quote of an unterminated string: its time grows with the
  square of the size, hours for 2 MiB).
- **A budget in CPU seconds per entry** (:func:`budget`, :data:`READ_CPU_S`):
  the backstop for whatever a linear reader still missed.  It is checked
  between steps and in every loop over a student-controlled count
  (:func:`check`: cells, members, entries), and in the main thread a CPU-time
  timer (``ITIMER_PROF``) raises :class:`OverBudget` at the next bytecode, so a
  Python loop or a regular expression (which checks for signals) that runs
  too long is stopped too.  The budget is far above what any real submission
  costs (the worst 2 MiB file we know reads in about 0.1 s), so it never decides
  a grade on a loaded or a slow machine: it is there so that no input can
  take the batch with it.
- **Clear outcomes.**  Whatever is not read raises :class:`Unreadable` (a
  ``ValueError``) whose message says why, in the current language; each
  reader says what that costs (``batch/manual.py``: the written answers;
  ``batch/predictions_report.py``: the participation points).

Only the standard library and ``core``: the student bundle ships this module
(``grading/predictions.py`` reads a student's own file with it too).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import signal
import threading
import time
from collections.abc import Iterator

from autograder.core.i18n import N_, _
from autograder.core.limits import MAX_FILE_BYTES

READ_CPU_S = 5.0  # CPU seconds to read one entry's files (the worst 2 MiB input takes about 0.1 s)
# arrays and objects in one file: a lab's notebook holds a few hundred (a few thousand with its outputs)
MAX_ITEMS = 100_000
TOO_LARGE = N_("larger than {mib} MiB")
TOO_DEEP = N_("nested more than {depth} levels deep")
TOO_MANY = N_("more than {count} lists and objects")
OVER_BUDGET = N_("the grader stopped reading this submission's files after {seconds:g} s of its CPU time (the "
                 "limit for one submission): what was not read by then is left out")


class Unreadable(ValueError):
    """Bytes of a student's that are not read, on purpose; the message (the student's language) says why.

    ``syntax``: the bytes are no JSON at all (not UTF-8, not JSON), as opposed to JSON refused
    for its size or nesting."""

    def __init__(self, message: str, *, syntax: bool = False):
        super().__init__(message)
        self.syntax = syntax


class OverBudget(Unreadable):
    """An entry's reading ran past its :func:`budget`."""


def load_json(data: bytes | str, *, max_depth: int, max_items: int = MAX_ITEMS, max_bytes: int = MAX_FILE_BYTES):
    """``data`` (UTF-8) parsed as JSON: at most ``max_bytes`` long, ``max_depth`` levels of arrays
    and objects (a scalar is 0 levels) and ``max_items`` of them in all, each checked on the text
    before it is parsed, in time linear in its size; :class:`Unreadable` for anything else."""
    if len(data) > max_bytes:
        raise Unreadable(_(TOO_LARGE).format(mib=f"{max_bytes / 2**20:g}"))
    check()
    brackets = structure(data)
    opened = brackets.count(b"[")
    if b"[" * (max_depth + 1) in brackets:  # a run of openings: deeper at once, however many
        raise Unreadable(_(TOO_DEEP).format(depth=max_depth))
    if opened > max_items:
        raise Unreadable(_(TOO_MANY).format(count=max_items))
    if opened == brackets.count(b"]") and nesting(brackets, max_depth) > max_depth:  # unbalanced: no JSON (below)
        raise Unreadable(_(TOO_DEEP).format(depth=max_depth))
    check()
    try:
        return json.loads(data.decode("utf-8") if isinstance(data, bytes) else data)  # strictly UTF-8, no guess
    except RecursionError:  # text that is no JSON, deeper than it looked: the C parser counts its depth
        raise Unreadable(_(TOO_DEEP).format(depth=max_depth)) from None
    except (ValueError, MemoryError) as exc:  # not UTF-8, not JSON, an integer of 5,000 digits
        raise Unreadable(type(exc).__name__, syntax=True) from None


_SQUARE = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def structure(data: bytes | str) -> bytes:
    """The brackets of JSON text ``data`` outside its strings, ``{}`` written as ``[]``.

    Whole-text passes of ``bytes`` methods (C, linear, nothing that backtracks): escaped
    backslashes and quotes out (valid JSON has a backslash only inside a string, read left to
    right), then every other piece between quotes (the strings), then all but the brackets.
    Exact for valid JSON; for other text some brackets the parser refuses anyway."""
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    return b"".join(raw.split(b'"')[::2]).translate(_SQUARE, _NOT_BRACKETS)


def nesting(brackets: bytes, limit: int) -> int:
    """How deep the :func:`structure` ``brackets`` nest, counting stopped once past ``limit``: each
    pass takes away the innermost pairs, one level, so at most ``limit + 1`` passes (over at most
    twice the items :func:`load_json` lets through)."""
    depth = 0
    while brackets and depth <= limit:
        check()
        inner = brackets.replace(b"[]", b"")
        if len(inner) == len(brackets):
            break  # unbalanced: no JSON, which the parser says
        brackets, depth = inner, depth + 1
    return depth


# -- the per-entry budget -------------------------------------------------------------------
class Budget:
    """CPU seconds left to read one entry (the process's CPU time: the entries are read one at a
    time, before any grader thread starts)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.start = time.process_time()
        self.exceeded = False

    def left(self) -> float:
        return self.seconds - (time.process_time() - self.start)

    def error(self) -> OverBudget:
        self.exceeded = True
        return OverBudget(_(OVER_BUDGET).format(seconds=self.seconds))

    def check(self) -> None:
        if self.exceeded or self.left() < 0:
            raise self.error()


_current: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("read_budget", default=None)
_armed: Budget | None = None  # the budget the CPU timer stops (main thread only)


def check() -> None:
    """:class:`OverBudget` when the budget of the entry being read is spent (nothing outside one)."""
    b = _current.get()
    if b is not None:
        b.check()


@contextlib.contextmanager
def budget(seconds: float | None = None) -> Iterator[Budget]:
    """Read one entry within ``seconds`` (default :data:`READ_CPU_S`) of CPU time: :func:`check`
    raises :class:`OverBudget` once they are spent and, in the main thread, a CPU-time timer
    raises it in whatever runs then.  The caller records an entry whose budget ran out
    (``Budget.exceeded``)."""
    global _armed
    b = Budget(READ_CPU_S if seconds is None else seconds)
    token = _current.set(b)
    armed = _arm(b)
    try:
        yield b
    finally:
        if armed is not None:  # in this order: a signal on its way finds nothing armed, never SIG_DFL's kill
            _armed = None
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, armed)
        _current.reset(token)


def _arm(b: Budget):
    """Start the CPU timer for ``b``; the SIGPROF handler it replaces (None: not armed, as outside the
    main thread, inside another budget, or where something else uses SIGPROF: a profiler)."""
    global _armed
    if threading.current_thread() is not threading.main_thread() or _armed is not None:
        return None
    previous = signal.getsignal(signal.SIGPROF)
    if previous not in (signal.SIG_DFL, signal.SIG_IGN) or signal.getitimer(signal.ITIMER_PROF)[0]:
        return None
    _armed = b
    signal.signal(signal.SIGPROF, _expired)
    signal.setitimer(signal.ITIMER_PROF, max(b.left(), 1e-3))
    return previous


def _expired(_signum, _frame) -> None:
    b = _armed
    if b is not None:
        raise b.error()
