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
    def from_dict(cls, d: dict) -> "StudentCodeError":
        return cls(str(d.get("kind", CRASH)), str(d.get("message", ""))[:4000],
                   str(d.get("traceback", ""))[:TRACEBACK_LIMIT], str(d.get("output") or "")[-OUTPUT_LIMIT:])
