"""Import a lab's modules from a folder without touching anyone else's.

Used by the in-process seam (student debugging, the reference) and by the
sandboxed worker.  Each declared file is imported under its own name, as
the student wrote it (``import optimizers`` works between their files), but
``sys.modules`` and ``sys.path`` are restored afterwards, so the reference
and a submission can both be loaded in one process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import re
import sys
import traceback
from pathlib import Path
from types import ModuleType

import numpy as np

from autograder.calls import errors
from autograder.core.i18n import _

# StudentCodeError kind: the call changed an argument it was given (see check_unmodified)
MODIFIED_ARGUMENT = errors.MODIFIED_ARGUMENT  # kept here too: the tests name it loader.MODIFIED_ARGUMENT


LINE_LIMIT = 300  # characters of one traceback line kept (a one-line program is one source line)


def student_file(filename: object, code_dir: Path, hide: tuple[str, ...] = ()) -> str | None:
    """The name a student knows a frame's file by (``accumulation.py``), or None when
    the file is not theirs.

    Theirs: a ``.py`` file directly in ``code_dir``, other than the lab's own support
    files in ``hide``. Never a pseudo-file such as ``<frozen importlib._bootstrap>``
    or ``<string>``: resolved against a worker's cwd (its code folder, /tmp), those
    passed for its files. Nor anything deeper: a worker sees a Python that lies under
    /tmp at its own path, and a student's folder may hold a venv."""
    if not isinstance(filename, str) or filename.startswith("<"):
        return None
    path = Path(os.path.abspath(filename))  # as the import opened it: a relative sys.path entry, a symlink
    if path.parent != Path(os.path.abspath(code_dir)) or path.suffix != ".py" or path.name in hide:
        return None
    return path.name


def trimmed_traceback(exc: BaseException, code_dir: Path, hide: tuple[str, ...] = ()) -> str:
    """The traceback of ``exc`` as the student knows their code: only the frames in their
    own files (:func:`student_file`), each file by its own name, then the exception.

    Never a frame of the engine, importlib, a library, the reference or a test: those
    would show code the student must not see and bury theirs (an import failed under
    eight ``<frozen importlib._bootstrap>`` frames)."""
    frames = []
    for frame in traceback.extract_tb(exc.__traceback__):  # reads each source line now, by the real path
        name = student_file(frame.filename, code_dir, hide)
        if name is not None:
            frame.filename = name
            frames.append(frame)
    return _fit(traceback.StackSummary.from_list(frames).format(), _exception_lines(exc, code_dir, hide))


def _syntax_error_file(exc: BaseException, code_dir: Path, hide: tuple[str, ...]) -> str | None:
    """The student's file a SyntaxError is in, by name; None for any other exception or
    file (``compile`` of a string: its text is no file of theirs)."""
    return student_file(exc.filename, code_dir, hide) if isinstance(exc, SyntaxError) else None


def _exception_lines(exc: BaseException, code_dir: Path, hide: tuple[str, ...]) -> list[str]:
    """The traceback's last lines: a SyntaxError in one of the student's files with its
    place (file by name, line, source line, caret); anything else as type and message."""
    where = _syntax_error_file(exc, code_dir, hide)
    if where is None:
        return [f"{type(exc).__name__}: {exc}\n"]
    shown = traceback.TracebackException(type(exc), exc, None, compact=True)
    shown.filename = where
    return list(shown.format_exception_only())


def _fit(frames: list[str], tail: list[str], limit: int = errors.TRACEBACK_LIMIT) -> str:
    """The newest whole frames that fit in ``limit`` with the exception after them.

    Cut anywhere else, a traceback would start mid-line, and a hidden test's feedback
    would take all of it for the exception's text (``plugin.safe_traceback``): every
    number rounded, line numbers too."""
    end = _short_lines("".join(tail))[: limit // 4]
    kept, size = [], len(end)
    for chunk in map(_short_lines, reversed(frames)):
        if size + len(chunk) > limit:
            break
        kept.append(chunk)
        size += len(chunk)
    return "".join(reversed(kept)) + end


def _short_lines(text: str) -> str:
    return "".join(line if len(line) <= LINE_LIMIT else line[: LINE_LIMIT - 1] + "…\n"
                   for line in text.splitlines(keepends=True))


def _import_error(exc: BaseException, code_dir: Path, hide: tuple[str, ...]) -> str:
    """"SyntaxError: invalid syntax", without Python's "(accumulation.py, line 139)": the
    traceback shows that place, exactly; a hidden test's feedback rounds every number of
    a message (it reads "line 140")."""
    if _syntax_error_file(exc, code_dir, hide) is not None:
        return f"{type(exc).__name__}: {exc.msg}"
    return f"{type(exc).__name__}: {exc}"


def load_each(code_dir: Path, files: tuple[str, ...], support_dir: Path | None = None,
              support_files: tuple[str, ...] = ()) -> tuple[dict[str, ModuleType], dict[str, errors.StudentCodeError]]:
    """Import each of ``files`` from ``code_dir`` on its own (support modules from ``support_dir``).

    Returns the modules that loaded and, per file that did not, its
    StudentCodeError(MISSING_FILE | IMPORT) with a trimmed traceback: a broken
    file costs only the calls that need it (:func:`find_function`), never the
    functions of the files that import.
    """
    failed: dict[str, errors.StudentCodeError] = {}
    for f in files:
        if not (code_dir / f).is_file():
            failed[f] = errors.StudentCodeError(errors.MISSING_FILE,
                                                _("file {file} is missing from the submission").format(file=f))
    names = [Path(f).stem for f in files + support_files]
    saved_modules = {n: sys.modules.pop(n) for n in names if n in sys.modules}
    saved_path = list(sys.path)
    sys.path[:0] = [str(code_dir)] + ([str(support_dir)] if support_dir else [])
    loaded: dict[str, ModuleType] = {}
    try:
        for s in support_files:  # the lab's own modules first: their set-up runs before any student code
            try:  # (lab 1's device counts torch.set_num_threads calls, even one above `import lab1_device`)
                importlib.import_module(Path(s).stem)
            except Exception:
                pass  # not the student's fault, and a file that imports it reports it as its own
        for f in files:
            name = Path(f).stem
            if f in failed:
                continue
            try:
                loaded[name] = sys.modules.get(name) or importlib.import_module(name)
            except BaseException as exc:  # SyntaxError, SystemExit, anything at import time
                error = _import_error(exc, code_dir, support_files)
                failed[f] = errors.StudentCodeError(errors.IMPORT, _("importing {file} failed: {error}").format(
                    file=f, error=error), trimmed_traceback(exc, code_dir, support_files))
        return loaded, {f: failed[f] for f in files if f in failed}  # in the lab's order
    finally:
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(saved_modules)
        sys.path[:] = saved_path


def load_modules(code_dir: Path, files: tuple[str, ...], support_dir: Path | None = None,
                 support_files: tuple[str, ...] = ()) -> dict[str, ModuleType]:
    """All of ``files`` or nothing: raises the first file's StudentCodeError (:func:`load_each`)."""
    loaded, failed = load_each(code_dir, files, support_dir, support_files)
    if failed:
        raise next(iter(failed.values()))
    return loaded


def _defines(path: Path, name: str) -> bool:
    """Whether the text of a file that did not import defines ``name`` at module level."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(rf"^(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*[:=]",
                     text, re.MULTILINE) is not None


def find_function(modules: dict[str, ModuleType], name: str,
                  failed: dict[str, errors.StudentCodeError] | None = None, code_dir: Path | None = None):
    """The first module-level callable ``name`` across the lab's modules.

    Not found while some file failed to load: that file's error, the one
    whose text defines ``name`` (a syntax error elsewhere in it does not
    hide the ``def`` line), else the first failed file's (the function may
    well be in it)."""
    for mod in modules.values():
        fn = getattr(mod, name, None)
        if callable(fn):
            return fn
    if failed:
        for f, exc in failed.items():
            if code_dir is not None and _defines(code_dir / f, name):
                raise exc
        raise next(iter(failed.values()))
    where = ", ".join(f"{m}.py" for m in modules)
    raise errors.StudentCodeError(errors.MISSING_FUNCTION, _("no function {name}() in {files}").format(name=name, files=where))


def call(fn, args: tuple, kwargs: dict, code_dir: Path, hide: tuple[str, ...] = ()):
    """Call a loaded function, turning any exception into StudentCodeError (its traceback
    shows the frames in ``code_dir``'s files but those in ``hide``: :func:`trimmed_traceback`)."""
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise errors.StudentCodeError(errors.NOT_IMPLEMENTED, _("{name}() is not implemented yet").format(name=fn.__name__)) from None
    except BaseException as exc:  # SystemExit and KeyboardInterrupt from student code too
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise errors.StudentCodeError(
            errors.EXCEPTION,
            _("{name}() raised {error}").format(name=fn.__name__, error=f"{type(exc).__name__}: {str(exc)[:500]}"),
            trimmed_traceback(exc, code_dir, hide),
        ) from None


# -- arguments the call must leave as they were -----------------------------------
# Each call gets a fresh copy of its arguments, so an in-place change cannot reach the
# grader; but a function that changes its inputs has a real bug (its caller's data is
# gone), which the labs teach against. Both seams fingerprint the arguments before the
# call and compare after it: arrays and tensors bitwise (dtype, shape and bytes, hashed
# in place: no copy), lists, tuples and dicts item by item. Cheap: one pass of sha256
# over the arguments' bytes before the call and one after.
_SCALARS = (int, float, str, bool, type(None))


def fingerprint(value) -> bytes:
    """A digest of a plain-data value (``autograder.calls.wire``'s types), equal for equal
    values and, in practice, different after any change: a new element, a changed
    byte, dtype or shape. Cycles and shared items (which only student code can make)
    are hashed as references, so the walk ends and stays linear."""
    h = hashlib.sha256()
    _feed(h, value, {})
    return h.digest()


def _feed(h, x, seen: dict) -> None:
    t = type(x)
    if t in _SCALARS:
        h.update(f"{t.__name__}:{x!r};".encode())
        return
    if id(x) in seen:  # a cycle or a shared item: its place in the walk, not its contents again
        h.update(f"ref:{seen[id(x)]};".encode())
        return
    seen[id(x)] = len(seen)
    if isinstance(x, np.ndarray):
        _feed_array(h, "ndarray", x)
    elif type(x).__module__.startswith("torch") and type(x).__name__ in ("Tensor", "Parameter"):
        _feed_tensor(h, x)
    elif isinstance(x, (list, tuple)):
        h.update(f"{t.__name__}[{len(x)}]".encode())
        if all(type(v) in _SCALARS for v in x):  # a long list of numbers: one repr, not one update each
            h.update(repr(x).encode())
        else:
            for v in x:
                _feed(h, v, seen)
    elif isinstance(x, dict):
        h.update(f"{t.__name__}{{{len(x)}}}".encode())
        for k, v in x.items():
            _feed(h, k, seen)
            _feed(h, v, seen)
    else:  # not plain data: only student code puts such a thing into an argument
        h.update(f"object:{t.__module__}.{t.__qualname__};".encode())


def _feed_array(h, kind: str, a: np.ndarray) -> None:
    h.update(f"{kind}:{a.dtype.str}:{a.shape};".encode())
    if a.dtype.hasobject:
        h.update(repr(a.tolist()).encode())
        return
    h.update(np.ascontiguousarray(a).reshape(-1).view(np.uint8))  # a view when contiguous (always, as decoded)


def _feed_tensor(h, t) -> None:
    import torch

    t = t.detach()
    h.update(f"tensor:{t.dtype}:{tuple(t.shape)}:{t.device};".encode())
    t = t.cpu().resolve_conj().resolve_neg().contiguous().reshape(-1)
    h.update(t.view(torch.uint8).numpy())  # the bits, whatever the dtype (bfloat16 too)


def argument_names(fn, args: tuple, kwargs: dict) -> list[str]:
    """The parameter name each positional argument binds to (``#1``, ... when unknown)."""
    names = [f"#{i + 1}" for i in range(len(args))]
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        names[:len(params)] = params[:len(args)]
    except (TypeError, ValueError):
        pass
    return names


def fingerprint_arguments(args: tuple, kwargs: dict) -> list[bytes]:
    """One digest per argument, positional first, then keywords in order."""
    return [fingerprint(v) for v in (*args, *kwargs.values())]


def check_unmodified(name: str, fn, args: tuple, kwargs: dict, before: list[bytes]) -> None:
    """Raise StudentCodeError(MODIFIED_ARGUMENT) naming each argument whose value changed
    since ``before`` (``fingerprint_arguments`` of the same objects, before the call)."""
    differs = [fingerprint(value) != digest for value, digest in zip((*args, *kwargs.values()), before)]
    if not any(differs):
        return  # the usual case, and a hot path (a ring test makes thousands of calls): no signature lookup
    labels = argument_names(fn, args, kwargs) + list(kwargs)
    changed = [label for label, d in zip(labels, differs) if d]
    if len(changed) == 1:
        raise errors.StudentCodeError(MODIFIED_ARGUMENT, _(
            "{name}() modified its argument {argument} in place; return new values instead").format(
            name=name, argument=changed[0]))
    if changed:
        raise errors.StudentCodeError(MODIFIED_ARGUMENT, _(
            "{name}() modified its arguments {arguments} in place; return new values instead").format(
            name=name, arguments=", ".join(changed)))
