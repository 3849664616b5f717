"""Answers that are the same for every submission of a batch, computed once per batch.

A hidden test compares a submission's answer with one that trusted code
computes for the same input: the reference (``reference.fn(...)``) or the
test's own ground truth (``torch.optim``, ``FlopCounterMode``, saved-tensor
hooks).  Where that input is the same for every submission (a fixed case,
a ``@pytest.mark.fixed_seed`` test, or every case of ``autograder verify``,
which grades without a seed salt), so is the answer; a batch of 300 would
otherwise compute it 300 times.  So both are looked up here first:

- every call of ``reference.fn(...)`` (not ``.measured()``: a measurement is
  of that call), through :class:`CachedBackend`, which the plugin puts in
  front of the in-process reference;
- every call of a test helper decorated with :func:`batch_constant`.

**The key** is a SHA-256 over the lab's version (:func:`lab_version`: the
bytes of its trusted files, so an edited reference or test is a new key),
what is called (``reference.trajectory`` or the helper's module and name)
and the call's arguments in the wire format (``autograder.calls.wire``).
Inputs salted per submission (``--seed-salt``) give other arguments, hence
other keys: those answers are computed for each submission, as before.

**The value** is the wire bytes of the answer, and a call returns what those
bytes decode to, hit or miss: the value a test sees is the same whether it
was computed now or by another submission's grader, so no grade depends on
which submission came first.  A reference function and a decorated helper
must therefore be deterministic functions of their arguments (graders run
single-threaded, seeds come in as arguments) and return plain data; a value
the wire cannot carry is a :class:`TypeError` naming the helper.

**Where it is kept:** in this pytest session's memory, and with
``--batch-cache DIR`` also as one file per key in ``DIR``, shared by every
grader of the batch (the runner gives each the batch's own folder inside its
mode-700 temporary directory).  A file is written whole and moved into
place, so a grader killed while writing leaves no half value.  Student code
never sees the folder: workers run under their own uid, without access to
the grader's temporary directory, and the reference still runs only in the
grader process.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from pathlib import Path

from autograder.calls import wire
from autograder.core import labs
from autograder.core.files import atomic_write

SUFFIX = ".wire"


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()


def _trusted_files(lab: labs.Lab) -> list[Path]:
    """The files whose bytes decide a cached answer: lab.toml, the reference, the support
    files, the hidden and public tests (with their snapshots)."""
    m = lab.manifest
    files = [lab.assignment_dir / "lab.toml"]
    files += [lab.solution_dir / f for f in m.student_files]
    files += [lab.assignment_dir / f for f in m.support_files]
    for d in (lab.hidden_tests_dir, lab.public_tests_dir):
        if d.is_dir():
            files += [p for p in d.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return sorted(p for p in files if p.is_file())


def lab_version(lab: labs.Lab) -> str:
    """A digest of the lab's trusted files (names and bytes), read once per session."""
    parts = []
    for p in _trusted_files(lab):
        parts += [str(p.relative_to(lab.root)).encode(), p.read_bytes()]
    return _digest(*parts)


class Store:
    """One lab's cached answers: in memory, and in ``directory`` when given."""

    def __init__(self, lab: labs.Lab, directory: Path | None = None):
        self.version = lab_version(lab)
        self.directory = Path(directory) if directory else None
        self._memory: dict[str, bytes] = {}
        self.hits = self.misses = 0

    def key(self, what: str, args: tuple, kwargs: dict) -> str:
        try:
            call = wire.dumps((list(args), dict(kwargs)), what)
        except wire.WireError as exc:
            raise TypeError(f"{what}: its arguments cannot key a cached answer ({exc}); "
                            "they must be plain data") from None
        return _digest(self.version.encode(), what.encode(), call)

    def _read(self, key: str) -> bytes | None:
        if key in self._memory:
            return self._memory[key]
        if self.directory is not None:
            path = self.directory / f"{key}{SUFFIX}"
            try:
                data = path.read_bytes()
            except OSError:
                return None
            self._memory[key] = data
            return data
        return None

    def answer(self, what: str, args: tuple, kwargs: dict, compute):
        """``compute()``'s answer to this call, computed here unless it is kept; always decoded
        from its wire bytes (see the module docstring)."""
        key = self.key(what, args, kwargs)
        data = self._read(key)
        if data is None:
            self.misses += 1
            try:
                data = wire.dumps(compute(), what)
            except wire.WireError as exc:
                raise TypeError(f"{what}: its answer cannot be kept for the batch ({exc}); "
                                "a cached answer must be plain data") from None
            self._memory[key] = data
            if self.directory is not None:
                atomic_write(self.directory / f"{key}{SUFFIX}", data)
        else:
            self.hits += 1
        return wire.loads(data)


class CachedBackend:
    """A backend (the in-process reference) whose plain calls are answered through a :class:`Store`."""

    def __init__(self, inner, store: Store):
        self._inner, self._store = inner, store
        self.label = inner.label

    def call(self, name, args, kwargs, measure=False):
        if measure:
            return self._inner.call(name, args, kwargs, measure=True)
        value = self._store.answer(f"reference.{name}", args, kwargs,
                                   lambda: self._inner.call(name, args, kwargs)[0])
        return value, None

    def close(self):
        self._inner.close()


class Session:
    """The stores of one pytest session, one per lab, all in ``directory`` (if any)."""

    def __init__(self, directory: Path | None = None):
        self.directory = Path(directory) if directory else None
        self._stores: dict[str, Store] = {}

    def store(self, lab: labs.Lab) -> Store:
        if lab.name not in self._stores:
            self._stores[lab.name] = Store(lab, self.directory)
        return self._stores[lab.name]


# one per pytest session, innermost last: a test may run pytest inside pytest (a CLI check)
_sessions: list[Session] = []


def open_session(directory: Path | None = None) -> Session:
    """Called by the plugin when a pytest session is configured (``--batch-cache DIR``)."""
    if directory is not None:
        Path(directory).mkdir(mode=0o700, parents=True, exist_ok=True)
    _sessions.append(Session(directory))
    return _sessions[-1]


def close_session() -> None:
    if _sessions:
        _sessions.pop()


def current() -> Session:
    """The innermost pytest session's stores (a memory-only one outside any session)."""
    return _sessions[-1] if _sessions else Session()


def batch_constant(fn):
    """Decorate a hidden test's helper whose answer depends only on its arguments (ground
    truth such as a ``torch.optim`` trajectory): within a batch it is computed once per
    distinct call (the module docstring says how).  Outside a pytest session it is computed
    at every call, its answer passed through the wire format all the same."""
    source = Path(inspect.getsourcefile(fn)).resolve()
    lab = labs.lab_of_test(source)
    if lab is None:
        raise TypeError(f"@batch_constant is for the helpers of a lab's tests, not {fn.__module__}.{fn.__qualname__}")
    what = f"{source.relative_to(lab.root.resolve())}:{fn.__qualname__}"

    @functools.wraps(fn)
    def cached(*args, **kwargs):
        return current().store(lab).answer(what, args, kwargs, lambda: fn(*args, **kwargs))

    return cached
