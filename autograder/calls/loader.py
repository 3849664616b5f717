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
import re
import sys
import traceback
from pathlib import Path
from types import ModuleType

import numpy as np

from autograder.calls import errors
from autograder.core.i18n import _

# StudentCodeError kind: the call changed an argument it was given (see check_unmodified)
MODIFIED_ARGUMENT = "modified_argument"


def trimmed_traceback(exc: BaseException, code_dirs: list[Path]) -> str:
    """The traceback of ``exc`` with only the frames inside ``code_dirs``."""
    dirs = [str(d.resolve()) for d in code_dirs]
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if any(str(Path(f.filename).resolve()).startswith(d) for d in dirs)
    ]
    lines = traceback.format_list(frames)
    if isinstance(exc, SyntaxError) and exc.filename:
        lines += traceback.format_exception_only(type(exc), exc)
    else:
        lines.append(f"{type(exc).__name__}: {exc}\n")
    return "".join(lines)[-8000:]


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
        for f in files:
            name = Path(f).stem
            if f in failed:
                continue
            try:
                loaded[name] = sys.modules.get(name) or importlib.import_module(name)
            except BaseException as exc:  # SyntaxError, SystemExit, anything at import time
                failed[f] = errors.StudentCodeError(
                    errors.IMPORT,
                    _("importing {file} failed: {error}").format(file=f, error=f"{type(exc).__name__}: {exc}"),
                    trimmed_traceback(exc, [code_dir]),
                )
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


def call(fn, args: tuple, kwargs: dict, code_dirs: list[Path]):
    """Call a loaded function, turning any exception into StudentCodeError."""
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
            trimmed_traceback(exc, code_dirs),
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
    labels = argument_names(fn, args, kwargs) + list(kwargs)
    changed = [label for label, value, digest in zip(labels, (*args, *kwargs.values()), before)
               if fingerprint(value) != digest]
    if len(changed) == 1:
        raise errors.StudentCodeError(MODIFIED_ARGUMENT, _(
            "{name}() modified its argument {argument} in place; return new values instead").format(
            name=name, argument=changed[0]))
    if changed:
        raise errors.StudentCodeError(MODIFIED_ARGUMENT, _(
            "{name}() modified its arguments {arguments} in place; return new values instead").format(
            name=name, arguments=", ".join(changed)))
