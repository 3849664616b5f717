"""What a lab notebook's code cells print and draw, in the notebook's language.

A notebook source has one set of code cells for both of its languages
(``autograder.build.notebooks``), so the text those cells put on screen is
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
  (``autograder.build.catalogs.student_subset``).  As with ``_``: one plain
  literal per call, named placeholders filled with ``.format()`` afterwards.
  It is not named ``_``: notebooks use ``_`` as a throwaway name.
- ``num(value, digits)`` is a number with the language's separators, from
  Babel's locale data (CLDR): ``31,784`` and ``1.42`` in English, ``31.784``
  and ``1,42`` in Vietnamese, where a comma is the decimal mark.
  ``nums(values, digits)`` is a list of them: ``[0.6, 0.8]``, and
  ``[0,6; 0,8]`` where the comma is taken.

Nothing here imports matplotlib or torch, and nothing is translated at import
time: the language is read at every call.
"""

from __future__ import annotations

import numbers

from autograder.core import i18n

__all__ = ["num", "nums", "tr"]


def tr(message: str) -> str:
    """``message`` (English, a catalog's msgid) in the notebook's current language."""
    return i18n._(message)


def separators(lang: str | None = None) -> tuple[str, str]:
    """(decimal mark, group separator) of ``lang`` (default: the current language), from CLDR."""
    from babel import numbers as babel_numbers

    locale = lang or i18n.current()
    return babel_numbers.get_decimal_symbol(locale), babel_numbers.get_group_symbol(locale)


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
    decimal, group = separators(lang)
    if (decimal, group) == (".", ","):
        return text
    return text.translate(str.maketrans({".": decimal, ",": group}))


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
