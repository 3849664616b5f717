"""What can go wrong in a student's code, as one exception type.

Both seams (in-process and sandboxed) raise :class:`StudentCodeError`, so a
test, the plugin and the feedback treat every failure the same way.
"""

from __future__ import annotations

# kinds, ordered roughly by when they happen
MISSING_FILE = "missing_file"
IMPORT = "import"  # syntax error or exception at import time
MISSING_FUNCTION = "missing_function"
NOT_IMPLEMENTED = "not_implemented"
EXCEPTION = "exception"
UNSUPPORTED = "unsupported"  # a return value that is not plain data
TIMEOUT = "timeout"
CRASH = "crash"  # the worker died: a signal, a memory limit, exit()
ARGUMENT = "argument"  # the call itself was malformed on the grader's side
GRADER = "grader"  # the engine failed (no sandbox could start): not the student's code; the score is pending
MODIFIED_ARGUMENT = "modified_argument"  # the call changed its inputs (loader.check_unmodified)

# What a sandboxed worker may say of its own call: the kinds it raises itself (worker._answer).
# Only the grader decides that a failure is the grader's (GRADER: the score is pending) or the
# grader's call's (ARGUMENT), that the worker died (CRASH) or ran out of time (TIMEOUT).
WORKER_KINDS = frozenset({MISSING_FILE, IMPORT, MISSING_FUNCTION, NOT_IMPLEMENTED, EXCEPTION, UNSUPPORTED,
                          MODIFIED_ARGUMENT})


class GraderError(RuntimeError):
    """The engine itself cannot run a student's call (a sandbox that cannot start, a
    misconfigured Python): never the student's fault, so never a student's zero."""


OUTPUT_LIMIT = 2000  # characters of captured output kept (the tail: the last lines matter)
TRACEBACK_LIMIT = 8000  # characters of a trimmed traceback kept (whole frames: loader.trimmed_traceback)


class StudentCodeError(Exception):
    """A call into student code failed; ``str()`` is a message for the student.

    ``output`` is the tail of what the call printed (sandboxed calls only).
    It is the student's own text and, during a hidden test, may show the
    hidden inputs: the plugin shows it only for public tests and keeps it
    for instructors otherwise (``docs/feedback.md``).
    """

    def __init__(self, kind: str, message: str, traceback: str = "", output: str = ""):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.traceback = traceback  # trimmed to the student's own files
        self.output = str(output or "")[-OUTPUT_LIMIT:]

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict:
        return {"kind": self.kind, "message": self.message, "traceback": self.traceback, "output": self.output}

    @classmethod
    def from_worker(cls, d) -> "StudentCodeError":
        """The error a worker sent, read as what it is: the student's own words.

        Whatever ran in the worker after its isolation report may have written it, so it
        can never speak for the grader: a kind outside :data:`WORKER_KINDS` (``"grader"``
        included) becomes :data:`EXCEPTION`, and every field is bounded text (anything
        else is dropped)."""
        d = d if isinstance(d, dict) else {}
        kind = d.get("kind")
        kind = kind if isinstance(kind, str) and kind in WORKER_KINDS else EXCEPTION
        return cls(kind, _text(d.get("message"))[:4000], _text(d.get("traceback"))[:TRACEBACK_LIMIT],
                   _text(d.get("output"))[-OUTPUT_LIMIT:])


def _text(value) -> str:
    return value if isinstance(value, str) else ""
