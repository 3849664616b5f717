"""Who submitted what: the people behind one submission, as its platform names them.

Each platform (``autograder.batch.platforms``) reads its own export into
:class:`Submitters`: Gradescope's ``submission_metadata.yml`` (names, emails,
sids; a group lists several), Moodle's folder names and grading worksheet
(the name, and the participant id), Canvas's file names and gradebook export
(the user id, the SIS ids).  The gradebook shows ``name, email, sid``; the
platform's own ids (``ids``) and logins are what its grade files and
``--only`` match on.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from autograder.core import i18n

COLUMNS = ("name", "email", "sid")
# A roster column that gives each student's language (a column the instructor adds to Canvas's gradebook
# export or Moodle's worksheet), found by its header, case and accents ignored
LANG_HEADERS = ("language", "lang", "ngon ngu")
# a value of it, case, accents and spaces ignored -> the language (i18n.LANGS); a locale code ("vi_VN") too
LANG_VALUES = {"vi": "vi", "vie": "vi", "vietnamese": "vi", "tiengviet": "vi", "viet": "vi",
               "en": "en", "eng": "en", "english": "en", "tienganh": "en", "anh": "en"}


@dataclass(frozen=True)
class Submitters:
    names: tuple[str, ...]
    emails: tuple[str, ...]
    sids: tuple[str, ...]
    logins: tuple[str, ...] = ()  # Canvas's SIS Login ID, Moodle's username
    ids: tuple[str, ...] = ()  # the platform's own id of each (Canvas's user id, Moodle's participant id)
    lang: str = ""  # the roster's language column (:func:`language`): "" none; a notebook handed in wins

    def columns(self) -> list[str]:
        return ["; ".join(v) for v in (self.names, self.emails, self.sids)]

    def keys(self) -> tuple[str, ...]:
        """Everything a person may be named by on the command line (``--only``)."""
        return tuple(k for k in (*self.names, *self.emails, *self.sids, *self.logins, *self.ids) if k)


NOBODY = Submitters((), (), ())


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.replace("đ", "d").replace("Đ", "D"))
    return "".join(c for c in text if not unicodedata.combining(c)).casefold()


def lang_column(header: list[str]) -> int | None:
    """Where a roster's language column is (:data:`LANG_HEADERS`; None: it has none)."""
    folded = [" ".join(_fold(h).split()) for h in header]
    return next((folded.index(h) for h in LANG_HEADERS if h in folded), None)


def language(value: str) -> str | None:
    """A language column's cell as a language of ``i18n.LANGS``: ``vi``, ``Tiếng Việt``,
    ``Vietnamese``, ``en``, ``English``, ``en_US`` ...; "" for an empty cell; None for a value
    it cannot read (the caller says so; that student gets the batch's language)."""
    if not value.strip():
        return ""
    word = "".join(_fold(value).split())
    return LANG_VALUES.get(word) or i18n._pick(value)  # noqa: SLF001  (the same reading as --lang's)
