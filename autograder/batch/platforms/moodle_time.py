"""Moodle's dates as its grading worksheet writes them: "Thursday, 2 October 2025, 10:43 AM".

Moodle writes a worksheet's "Last modified (submission)" with ``userdate()`` and the
language pack's ``strftimedatetime`` (``%A, %d %B %Y, %I:%M %p`` in English), in the
site's (or the user's) time zone, with no offset: the wall-clock time is read here,
and the caller gives it the zone (``grade --tz``).  A language pack may name the
weekday, the month and the half of the day in its own words ("Thứ Năm, 2 tháng 10
2025, 10:43 SA"), or write a 24-hour clock: the month is matched against the month
names Babel knows for :data:`LOCALES`, the weekday is ignored, and ``AM``/``PM`` (or
the locale's words for them) turn a 12-hour time into a 24-hour one.  "-" (or an
empty cell) is Moodle's "never": no time.

This is not a ``Platform`` module (it defines no ``PLATFORM``): ``moodle.py`` uses it.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from datetime import datetime

LOCALES = ("en", "vi", "fr", "de", "es", "pt", "it", "nl", "id", "th", "ja", "zh", "ko", "ru")
NEVER = ("", "-")

_DATE = re.compile(r"(?P<day>\d{1,2})\.?\s+(?P<month>[^\d,]+?(?:\s*\d{1,2}(?!\d))?)\.?,?\s+(?P<year>\d{4})\b"
                   r"\D*?(?P<h>\d{1,2})[:h.](?P<m>\d{2})(?:[:.]\d{2})?\s*(?P<half>[^\W\d_][\w.\s]*)?\s*$")


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    return " ".join("".join(c for c in text if not unicodedata.combining(c)).casefold().replace(".", " ").split())


@functools.cache
def _months() -> dict[str, int]:
    from babel.dates import get_month_names

    names: dict[str, int] = {}
    for loc in LOCALES:
        for width in ("wide", "abbreviated"):
            for context in ("format", "stand-alone"):
                for n, name in get_month_names(width, context=context, locale=loc).items():
                    names.setdefault(_fold(name), n)
    return names


@functools.cache
def _halves() -> dict[str, str]:
    from babel.dates import get_period_names

    words = {"am": "am", "pm": "pm", "a m": "am", "p m": "pm"}
    for loc in LOCALES:
        for width in ("abbreviated", "wide", "narrow"):
            periods = get_period_names(width=width, context="format", locale=loc)
            for half in ("am", "pm"):
                if half in periods:
                    words.setdefault(_fold(periods[half]), half)
    return words


def parse(text: str) -> datetime | None:
    """The naive wall-clock time a worksheet's cell holds; None for Moodle's "never" ("-").
    ValueError (naming the text) for a cell that is neither."""
    cell = (text or "").strip()
    if cell in NEVER:
        return None
    m = _DATE.search(cell)
    month = _months().get(_fold(m["month"])) if m else None
    if not m or month is None:
        raise ValueError(f"{cell!r} is not a date as Moodle writes it (such as 'Thursday, 2 October 2025, 10:43 AM')")
    hour, minute = int(m["h"]), int(m["m"])
    half = _halves().get(_fold(m["half"] or ""), "") if m["half"] else ""
    if m["half"] and not half:
        raise ValueError(f"{cell!r}: {m['half'].strip()!r} is not AM or PM in a language this command knows")
    if half:
        if not 1 <= hour <= 12:
            raise ValueError(f"{cell!r}: {hour} is not an hour of a 12-hour clock")
        hour = hour % 12 + (12 if half == "pm" else 0)
    try:
        return datetime(int(m["year"]), month, int(m["day"]), hour, minute)
    except ValueError as exc:
        raise ValueError(f"{cell!r} is not a valid date ({exc})") from None
