"""Import a lab's modules from a folder without touching anyone else's.

Used by the in-process seam (student debugging, the reference) and by the
sandboxed worker.  Each declared file is imported under its own name, as
the student wrote it (``import optimizers`` works between their files), but
``sys.modules`` and ``sys.path`` are restored afterwards, so the reference
and a submission can both be loaded in one process.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

from autograder import errors
from autograder.i18n import _


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


def load_modules(code_dir: Path, files: tuple[str, ...], support_dir: Path | None = None,
                 support_files: tuple[str, ...] = ()) -> dict[str, ModuleType]:
    """Import ``files`` from ``code_dir`` (support modules from ``support_dir``).

    Raises StudentCodeError(MISSING_FILE | IMPORT) with a trimmed traceback.
    """
    for f in files:
        if not (code_dir / f).is_file():
            raise errors.StudentCodeError(errors.MISSING_FILE, _("file {file} is missing from the submission").format(file=f))
    names = [Path(f).stem for f in files + support_files]
    saved_modules = {n: sys.modules.pop(n) for n in names if n in sys.modules}
    saved_path = list(sys.path)
    sys.path[:0] = [str(code_dir)] + ([str(support_dir)] if support_dir else [])
    loaded: dict[str, ModuleType] = {}
    try:
        for f in files:
            name = Path(f).stem
            try:
                loaded[name] = sys.modules.get(name) or importlib.import_module(name)
            except BaseException as exc:  # SyntaxError, SystemExit, anything at import time
                raise errors.StudentCodeError(
                    errors.IMPORT,
                    _("importing {file} failed: {error}").format(file=f, error=f"{type(exc).__name__}: {exc}"),
                    trimmed_traceback(exc, [code_dir]),
                ) from None
        return loaded
    finally:
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(saved_modules)
        sys.path[:] = saved_path


def find_function(modules: dict[str, ModuleType], name: str):
    """The first module-level callable ``name`` across the lab's modules."""
    for mod in modules.values():
        fn = getattr(mod, name, None)
        if callable(fn):
            return fn
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
