"""Counter files the grader reads at every call (thousands a submission): a worker's
``/proc/<pid>/stat`` and ``schedstat``, its cgroup's CPU and OOM counters.

Each is opened once and read with ``pread`` from the start: the kernel writes
the counter's current value at every read, and opening and closing the file
each time cost about 30 us a read.  A descriptor stays the file's, and a
``/proc`` file's stays its process's: once that process is gone it reads
nothing, never the numbers of another process given the same pid.
"""

from __future__ import annotations

import contextlib
import os


class Descriptors:
    """Counter files by name, each opened once (the first of its paths that opens)."""

    def __init__(self):
        self._fds: dict[str, int] = {}

    def read(self, name: str, folder, *files: str) -> str:
        """The text of counter ``name`` now; OSError where none of ``folder``'s ``files`` opens or
        the read fails.  A path is made only to open it: most reads find the descriptor."""
        fd = self._fds.get(name)
        if fd is None:
            for file in files:
                with contextlib.suppress(OSError):
                    fd = self._fds[name] = os.open(os.path.join(folder, file), os.O_RDONLY | os.O_CLOEXEC)
                    break
            else:
                raise FileNotFoundError(f"no counter file {name} among {files} in {folder}")
        return os.pread(fd, 4096, 0).decode("ascii", "replace")

    def close(self) -> None:
        for fd in self._fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()

    __del__ = close
