"""The chapter the labs teach, at one pinned version: ``assignments/chapter.toml``.

The file holds the pin (repository, path, commit) and the chapter's outline:
each section's number, its exact title and its anchor id.  Everything a
student reads points to a section **by title**, in one form::

    §4.2 Data Pipeline

(``§``, the number, one space, the title as the chapter writes it, or its
Vietnamese translation from the engine's catalog).  Feedback hints are built
here from the title a question names in ``lab.toml``; prose (notebooks,
docstrings, docs) writes the same form by hand, and
``tests/framework/content/test_chapter_pointers.py`` fails when any pointer
names a section the outline does not have, or a title that is not that
section's.

Numbers are this project's labels: the chapter opens with an unnumbered
Purpose, so its first numbered section is 1; a subsection's number counts
the level-3 headings of its section in reading order.

Strict, like ``lab.toml``: an unknown key, a duplicate title or a missing
field is a :class:`ChapterError`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.core.files import find_root, read_toml

FILE = "chapter.toml"  # in assignments/
_TOP = {"book": str, "title": str, "repo": str, "path": str, "commit": str, "sections": list}
_SECTION = {"number": str, "title": str, "anchor": str}
NUMBER = re.compile(r"\d+(?:\.\d+)*")
# a pointer in text: "§4.2" and what follows it on the line (a title, after one space)
POINTER = re.compile(r"§\s*(\d+(?:\.\d+)*)(?=([^\n]*))")  # a lookahead: the next pointer may be in it


class ChapterError(ValueError):
    pass


@dataclass(frozen=True)
class Section:
    number: str  # "4.2"
    title: str  # "Data Pipeline": the heading's text, as the chapter writes it
    anchor: str  # "sec-model-training-data-pipeline-8e71"


@dataclass(frozen=True)
class Chapter:
    book: str
    title: str
    repo: str
    path: str
    commit: str
    sections: tuple[Section, ...]

    @property
    def url(self) -> str:
        """The pinned file on GitHub."""
        return f"https://github.com/{self.repo}/blob/{self.commit}/{self.path}"

    @property
    def pin(self) -> str:
        """One line naming the version: repository, file, commit."""
        return f"{self.repo}, {self.path}, commit {self.commit}"

    def by_title(self, title: str) -> Section:
        """The section titled ``title``; a title that occurs twice is named with its number,
        ``"§6.5.4 Practical considerations"``."""
        m = re.fullmatch(r"§(\d+(?:\.\d+)*) (.+)", title)
        found = [s for s in self.sections if (s.number, s.title) == m.groups()] if m else \
            [s for s in self.sections if s.title == title]
        if len(found) == 1:
            return found[0]
        if found:
            raise ChapterError(f"{len(found)} sections are titled {title!r}: name one as "
                               f"{', '.join(repr(f'§{s.number} {s.title}') for s in found)}")
        raise ChapterError(f"no section titled {title!r} in the chapter's outline (assignments/{FILE}); "
                           f"titles are exact, e.g. {self.sections[0].title!r}")

    def by_number(self, number: str) -> Section | None:
        return next((s for s in self.sections if s.number == number), None)


def parse(data: dict, where: str) -> Chapter:
    for key in sorted(set(data) - set(_TOP)):
        raise ChapterError(f"{where}: unknown key {key!r}; known: {sorted(_TOP)}")
    for key, kind in _TOP.items():
        if not isinstance(data.get(key), kind):
            raise ChapterError(f"{where}: {key} must be a {kind.__name__}")
    if not re.fullmatch(r"[0-9a-f]{40}", data["commit"]):
        raise ChapterError(f"{where}: commit must be a full 40-digit hash, not {data['commit']!r}")
    sections = []
    for i, s in enumerate(data["sections"]):
        if not isinstance(s, dict) or set(s) != set(_SECTION) or not all(isinstance(s[k], str) and s[k]
                                                                         for k in _SECTION):
            raise ChapterError(f"{where}: [[sections]] #{i + 1} needs exactly {sorted(_SECTION)}, each a "
                               f"non-empty string")
        if not NUMBER.fullmatch(s["number"]):
            raise ChapterError(f"{where}: [[sections]] #{i + 1}: number {s['number']!r} is not like 4 or 4.2")
        sections.append(Section(s["number"], s["title"], s["anchor"]))
    for field in ("number", "anchor"):  # a title may occur twice ("Practical considerations"): see by_title
        values = [getattr(s, field) for s in sections]
        dup = sorted({v for v in values if values.count(v) > 1})
        if dup:
            raise ChapterError(f"{where}: duplicate section {field}(s) {dup}")
    return Chapter(book=data["book"], title=data["title"], repo=data["repo"], path=data["path"],
                   commit=data["commit"], sections=tuple(sections))


@functools.lru_cache(maxsize=4)
def _load(path: str) -> Chapter:
    return parse(read_toml(Path(path), ChapterError), path)


def load(root: Path | None = None) -> Chapter:
    """The chapter of the project at ``root`` (default: ``find_root()``)."""
    return _load(str((root or find_root()) / "assignments" / FILE))


def pointer(section: Section, translate=None) -> str:
    """``§4.2 Data Pipeline``; with ``translate`` (a gettext function) and a translation that
    differs, ``§4.2 <translated title> (Data Pipeline)``: the reader still finds the English heading."""
    title = translate(section.title) if translate else section.title
    if title != section.title:
        return f"§{section.number} {title} ({section.title})"
    return f"§{section.number} {title}"


def bad_pointers(text: str, chapter: Chapter, titles: dict[str, set[str]] | None = None) -> list[str]:
    """Each pointer of ``text`` that names no section of ``chapter``, or whose title is not
    that section's: ``§N`` must be followed by the section's title, or by one of its other
    spellings in ``titles`` (English title -> e.g. its Vietnamese translations)."""
    bad = []
    for m in POINTER.finditer(text):
        number, rest = m.group(1), m.group(2)
        s = chapter.by_number(number)
        if s is None:
            bad.append(f"§{number} (no such section)")
            continue
        allowed = {s.title, *(titles or {}).get(s.title, ())}
        if not (rest[:1] == " " and any(rest[1:].startswith(t) for t in allowed if t)):
            bad.append(f"§{number} {rest[:50]!r} (the title of §{number} is {s.title!r})")
    return bad
