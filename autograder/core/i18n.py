"""The language a student reads, and the gettext catalogs that translate it.

Code is written in English.  A student-facing string is marked ``_("...")``
(translated where it is written) or ``N_("...")`` (a template kept in a
constant and translated where it is used, ``_(TEMPLATE).format(...)``).
Placeholders are named (``{what}``), so a translation may reorder them.

Catalogs are PO files, the format translators' tools know, one per language:

- ``autograder/core/locale/<lang>.po``: the engine's messages;
- ``assignments/<lab>/locale/<lang>.po``: one lab's, from its tests and its
  ``lab.toml`` titles.

Babel reads a PO file and compiles it in memory for Python's ``gettext``, so
no compiled ``.mo`` file can drift from its source.  A fuzzy or empty entry
falls back to English.  ``tests/framework/content/test_i18n.py`` fails when a marked
string lacks a translation or a translation's placeholders differ.

The language: ``--lang``, else ``$IRONLAW_LANG``, else a Jupyter notebook
named ``*.vi.ipynb`` (``$JPY_SESSION_NAME``), else the locale (``$LC_ALL``,
``$LC_MESSAGES``, ``$LANG``), else English.  The CLI exports its choice in
``$IRONLAW_LANG``, so grader processes and sandboxed workers follow it.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import gettext
import io
import os
from pathlib import Path

from autograder.core.files import find_root, scoped_environ

LANGS = ("en", "vi")
DEFAULT = "en"
ENV = "IRONLAW_LANG"
ENGINE_LOCALE = Path(__file__).parent / "locale"
LAB_LOCALE = "locale"  # inside each assignments/<lab>/


def _pick(value: str | None) -> str | None:
    """'vi', 'vi_VN.UTF-8', 'VI' -> 'vi'; anything else -> None."""
    if not value:
        return None
    code = value.strip().split(".")[0].split("_")[0].split("-")[0].lower()
    return code if code in LANGS else None


def resolve(cli: str | None = None, environ=None) -> str:
    """The language, by the order in this module's docstring."""
    env = os.environ if environ is None else environ
    if cli:
        if _pick(cli) is None:
            raise ValueError(f"unknown language {cli!r}; choose one of {', '.join(LANGS)}")
        return _pick(cli)
    if _pick(env.get(ENV)):
        return _pick(env[ENV])
    if env.get("JPY_SESSION_NAME", "").endswith(".vi.ipynb"):
        return "vi"
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if env.get(var):  # the first one set decides, as in POSIX
            return _pick(env[var]) or DEFAULT
    return DEFAULT


@contextlib.contextmanager
def language(lang: str | None = None):
    """Within the block, this process and the processes it starts use
    ``resolve(lang)``; the environment is restored afterwards."""
    chosen = resolve(lang)
    with scoped_environ(**{ENV: chosen}):
        yield chosen


_SPEAKING: contextvars.ContextVar[str | None] = contextvars.ContextVar("ironlaw_speaking", default=None)


@contextlib.contextmanager
def speaking(lang: str | None):
    """Within the block, in this thread only, ``_`` and :func:`current` use ``lang`` (None: no
    change).  For one student's text in a batch of several languages (``batch/bulk.py``); the
    environment, which processes started inside inherit, is left alone: a caller that starts
    one passes :func:`current` on (``runner.grader_env``)."""
    if lang is not None and lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; choose one of {', '.join(LANGS)}")
    token = _SPEAKING.set(lang) if lang else None
    try:
        yield
    finally:
        if token is not None:
            _SPEAKING.reset(token)


def current() -> str:
    return _SPEAKING.get() or resolve()


def catalog_files(lang: str, root: Path | None = None) -> list[Path]:
    """The engine's catalog, then every lab's under ``root`` (when known)."""
    files = [ENGINE_LOCALE / f"{lang}.po"]
    if root is not None:
        files += sorted((root / "assignments").glob(f"*/{LAB_LOCALE}/{lang}.po"))
    return [f for f in files if f.is_file()]


def compile_po(path: Path) -> gettext.GNUTranslations:
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with open(path, "rb") as f:
        catalog = read_po(f)
    buf = io.BytesIO()
    write_mo(buf, catalog)  # skips fuzzy entries: they fall back to English
    buf.seek(0)
    return gettext.GNUTranslations(buf)


@functools.lru_cache(maxsize=8)
def translations(lang: str, root: str | None) -> gettext.NullTranslations:
    chain: gettext.NullTranslations = gettext.NullTranslations()
    if lang == DEFAULT:
        return chain
    for path in reversed(catalog_files(lang, Path(root) if root else None)):
        t = compile_po(path)
        t.add_fallback(chain)
        chain = t
    return chain


def _root() -> str | None:
    try:
        return str(find_root())
    except Exception:  # a sandboxed worker sees no project: the engine's catalog is enough there
        return None


def _(message: str) -> str:
    """``message`` in the current language (English when untranslated)."""
    lang = current()
    if lang == DEFAULT:
        return message
    return translations(lang, _root()).gettext(message)


def N_(message: str) -> str:
    """Mark a template for the catalog; translate it later with ``_``."""
    return message


# Numbers in the reader's language: the notebooks' text (grading/notebook_text.py) and the
# tests' messages (labkit/messages.py) both write them, so they live here, below both.
def separators(lang: str | None = None) -> tuple[str, str]:
    """(decimal mark, group separator) of ``lang`` (default: the current language), from CLDR."""
    from babel import numbers as babel_numbers

    locale = lang or current()
    return babel_numbers.get_decimal_symbol(locale), babel_numbers.get_group_symbol(locale)


def in_language(text: str, lang: str | None = None) -> str:
    """English number text (``.`` decimal mark, ``,`` group separator) in ``lang``'s separators."""
    decimal, group = separators(lang)
    if (decimal, group) == (".", ","):
        return text
    return text.translate(str.maketrans({".": decimal, ",": group}))
