"""What a lab notebook's code cells print and draw, in the notebook's language.

A notebook source has one set of code cells for both of its languages
(``autograder.authoring.notebooks``), so the text those cells put on screen is
chosen when they run, not when the notebook is built.  The notebooks import
these helpers in their first code cell after the setup cell::

    from autograder.grading.notebook_text import num, nums, tr

    plt.ylabel(tr("cumulative cost ($M)"))
    print(tr("energy: {kwh} kWh").format(kwh=num(31784)))    # 31,784 kWh / 31.784 kWh

- ``tr(english)`` is the English text in the current language
  (:func:`autograder.core.i18n.current`: ``$IRONLAW_LANG``, a ``*.vi.ipynb``
  session, the locale), read from the engine's and the labs' catalogs; the
  English is the message id, so the source reads as it prints in English and
  an untranslated text shows in English.  ``autograder translations`` collects
  every ``tr("...")`` of a ``<lab>.nb.py`` into that lab's catalog, and the
  student bundle's catalog keeps those of the notebooks it ships
  (``autograder.authoring.catalogs.student_subset``).  As with ``_``: one plain
  literal per call, named placeholders filled with ``.format()`` afterwards.
  It is not named ``_``: notebooks use ``_`` as a throwaway name.
- ``num(value, digits)`` is a number with the language's separators, from
  Babel's locale data (CLDR): ``31,784`` and ``1.42`` in English, ``31.784``
  and ``1,42`` in Vietnamese, where a comma is the decimal mark.
  ``nums(values, digits)`` is a list of them: ``[0.6, 0.8]``, and
  ``[0,6; 0,8]`` where the comma is taken.
- ``show()`` in place of ``plt.show()``: the tick labels of every open figure
  get the language's separators (``0,5`` on a Vietnamese axis), then
  matplotlib shows the figures.  matplotlib's own ``axes.formatter.use_locale``
  would need a Vietnamese C locale installed, which Colab has not; so each
  axis keeps its formatter (ticks, offsets, log labels as matplotlib chooses
  them) and only the characters it writes are changed, as ``num`` does.
  Labels a cell gives as text (``set_xticks(x, labels)``) are left as given.

Nothing here imports matplotlib or torch at import time, and nothing is translated at import
time: the language is read at every call.
"""

from __future__ import annotations

import functools
import numbers

from autograder.core import i18n
from autograder.core.i18n import in_language, separators

__all__ = ["localize", "num", "nums", "show", "tr"]


def tr(message: str) -> str:
    """``message`` (English, a catalog's msgid) in the notebook's current language."""
    return i18n._(message)


def num(value, digits: int | str | None = None, *, lang: str | None = None) -> str:
    """``value`` written for a reader of ``lang`` (default: the current language).

    ``digits``:

    - ``None``: an integer (or a float with an integral value below 1e15) with
      its thousands grouped, ``31,784``; another float as Python's shortest
      repr, grouped (``0.00025``, ``1e+23``);
    - an ``int``: exactly that many decimals, thousands grouped: ``num(1.4251, 2)``
      is ``1.43`` / ``1,43``;
    - a ``str``: a Python format spec, as in an f-string (``".2e"``, ``".0%"``,
      ``"9,.0f"``, ``".3g"``, ``">8.1f"``).

    The number is formatted in English by Python (so the English text is what
    an f-string prints), then its decimal mark and group separator become the
    language's.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"num() formats a number, not {type(value).__name__}")
    if digits is None:
        if isinstance(value, numbers.Integral):
            text = format(int(value), ",d")
        elif float(value).is_integer() and abs(value) < 1e15:
            text = format(int(value), ",d")
        else:
            text = format(float(value), ",")
    elif isinstance(digits, bool) or not isinstance(digits, (int, str)):
        raise TypeError("digits is a number of decimals or a format spec")
    elif isinstance(digits, int):
        text = format(float(value), f",.{digits}f")
    else:
        text = format(int(value) if isinstance(value, numbers.Integral) else float(value), digits)
    return in_language(text, lang)


class Local(float):
    """A number that a format spec writes in the reader's language: ``_("{points:g} / 7").format(
    points=Local(3.5))`` is 3.5 / 7 in English and 3,5 / 7 in Vietnamese (feedback, ``check``)."""

    def __format__(self, spec: str) -> str:
        return in_language(float(self).__format__(spec))

    __str__ = lambda self: format(self, "g")  # noqa: E731


def nums(values, digits: int | str | None = None, *, brackets: str = "[]", lang: str | None = None) -> str:
    """A sequence of numbers (a list, a tuple, a 1-D array) for a reader of ``lang``:
    each as :func:`num` writes it (but integers without a group separator, which
    would read as one more item), between ``brackets``, separated by ``", "``,
    or by ``"; "`` in a language whose decimal mark is the comma."""
    decimal, _group = separators(lang)
    sep = "; " if decimal == "," else ", "
    items = []
    for v in values:
        v = v.item() if hasattr(v, "item") else v
        plain_int = digits is None and isinstance(v, numbers.Integral) and not isinstance(v, bool)
        items.append(num(v, "d" if plain_int else digits, lang=lang))
    return f"{brackets[:1]}{sep.join(items)}{brackets[1:]}"


@functools.cache
def _local_ticks():
    """The tick formatter of :func:`localize` (a class, made on first use: matplotlib is imported then)."""
    from matplotlib import ticker

    class LocalTicks(ticker.Formatter):
        """Another formatter's tick text in the current language's separators."""

        def __init__(self, inner: ticker.Formatter):
            self.inner = inner

        def set_axis(self, axis):
            super().set_axis(axis)
            self.inner.set_axis(axis)

        def set_locs(self, locs):
            self.inner.set_locs(locs)

        def __call__(self, x, pos=None):
            return in_language(self.inner(x, pos))

        def format_ticks(self, values):
            return [in_language(text) for text in self.inner.format_ticks(values)]

        def get_offset(self):
            return in_language(self.inner.get_offset())

        def format_data(self, value):
            return in_language(self.inner.format_data(value))

        def format_data_short(self, value):
            return in_language(self.inner.format_data_short(value))

    return LocalTicks


def localize(*figures) -> None:
    """Give the tick labels of ``figures`` (default: every open figure) the current language's
    separators.  Only formatters that write numbers are changed (matplotlib's default ones, and
    the format-string, percent and engineering ones); labels given as text, such as
    ``set_xticks(x, labels)`` (a ``FuncFormatter`` since matplotlib 3.10), are left as given."""
    from matplotlib import pyplot as plt
    from matplotlib import ticker

    local = _local_ticks()
    numeric = (ticker.ScalarFormatter, ticker.LogFormatter, ticker.StrMethodFormatter, ticker.FormatStrFormatter,
               ticker.PercentFormatter, ticker.EngFormatter)
    for fig in figures or [plt.figure(n) for n in plt.get_fignums()]:
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                for get, put in ((axis.get_major_formatter, axis.set_major_formatter),
                                 (axis.get_minor_formatter, axis.set_minor_formatter)):
                    inner = get()
                    if isinstance(inner, numeric) and not isinstance(inner, local):
                        put(local(inner))


def show() -> None:
    """``plt.show()`` with every open figure's tick labels in the current language (:func:`localize`)."""
    from matplotlib import pyplot as plt

    localize()
    plt.show()
