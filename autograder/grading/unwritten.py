""""Run all" on the untouched stubs: a cell skips what needs a function not written yet.

Each stub function raises ``NotImplementedError`` until the student writes
it.  A notebook cell that calls student code wraps the call::

    with skip_if_unwritten():
        layer = flops.layer_matmul_flops(**XL)
        plt.barh(list(layer), list(layer.values()))
        show()

    measured = attempt(flops.step_flops, **XL)   # None while step_flops is not written

When the ``NotImplementedError`` comes from a student file (``student_files``
in the lab's ``lab.toml``; without one, a ``.py`` file of the notebook's
folder), the rest of the block is skipped, one line in the notebook's
language names the function to write, the figures the block opened are
closed (no empty plot is shown), and the notebook goes on to the next cell:
"Run all" reaches the end, and every ``grader.check`` cell shows its
verdict.  Any other exception, and a ``NotImplementedError`` raised
elsewhere (a library's), goes through as usual.

At import this module needs only the standard library and the engine's ``core``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from autograder.core import manifest as _manifest
from autograder.core.i18n import N_, _

NOT_WRITTEN = N_("{function} is not written yet (in {file}): this cell skips what needs it. Write it, then run "
                 "the cell again.")

__all__ = ["attempt", "skip_if_unwritten"]


def student_files(folder: Path) -> set[str] | None:
    """The lab's student files, from ``lab.toml`` in ``folder``; None where there is none."""
    path = folder / "lab.toml"
    return set(_manifest.load(path).student_files) if path.is_file() else None


def unwritten_function(exc: BaseException, folder: Path) -> tuple[str, str] | None:
    """``("flops.matmul_flops", "flops.py")`` when ``exc`` is a ``NotImplementedError`` raised in
    a student file of ``folder`` (its innermost frame is the stub's body); None otherwise."""
    if not isinstance(exc, NotImplementedError) or exc.__traceback__ is None:
        return None
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    where = Path(code.co_filename)
    names = student_files(folder)
    ours = where.name in names if names is not None else where.parent.resolve() == folder.resolve()
    if not ours or where.suffix != ".py":
        return None
    return f"{where.stem}.{getattr(code, 'co_qualname', code.co_name)}", where.name


class skip_if_unwritten:
    """``with skip_if_unwritten():``: the block stops at a stub not written yet, says which, and
    the cell goes on after it (see the module docstring).  ``folder``: the lab's (default: the
    current folder, where the notebook's first cell put it)."""

    def __init__(self, folder: Path | str | None = None):
        self.folder = Path(folder) if folder is not None else Path.cwd()
        self.skipped: str | None = None  # the function that stopped the block, once it did

    def __enter__(self):
        self._figures = set(_open_figures())
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        found = unwritten_function(exc, self.folder) if exc is not None else None
        if found is None:
            return False
        self.skipped = found[0]
        _close_figures(set(_open_figures()) - self._figures)
        print(_(NOT_WRITTEN).format(function=found[0], file=found[1]))
        return True


def attempt(function, *args, **kwargs):
    """``function(*args, **kwargs)``, or None (after one line naming it) while the student
    function it needs is not written yet."""
    with skip_if_unwritten():
        return function(*args, **kwargs)
    return None


def _open_figures() -> list[int]:
    """The numbers of matplotlib's open figures, when a cell has imported pyplot (never imported here)."""
    plt = sys.modules.get("matplotlib.pyplot")
    return list(plt.get_fignums()) if plt is not None else []


def _close_figures(numbers: set[int]) -> None:
    plt = sys.modules.get("matplotlib.pyplot")
    for n in sorted(numbers):
        plt.close(n)
