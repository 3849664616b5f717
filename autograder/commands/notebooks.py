"""``autograder notebooks [LAB] [--check]``: build each lab's notebooks, one per
language, from its single jupytext source (``autograder.authoring.notebooks``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from autograder.authoring import notebooks
from autograder.commands import build_or_check, lab_command
from autograder.core import labs


@lab_command("notebooks", check="only report notebooks that differ from their source")
def command(**options) -> int:
    """build each lab's notebooks (English, Vietnamese) from their one source"""
    return main(**options)


def main(*, lab: str | None = None, check: bool = False) -> int:
    return build_or_check(lab, check, write=_write, stale=_stale,
                          out_of_date="out of date with its source: {} (run `autograder notebooks`)")


def _differing(lab: labs.Lab) -> list[tuple[Path, str]]:
    """(notebook, what its source renders to) for each of the lab's notebooks that differs from its source."""
    src = notebooks.source_path(lab.assignment_dir, lab.name)
    out = []
    for lang in notebooks.LANGS:
        dest = notebooks.notebook_path(lab.assignment_dir, lab.name, lang)
        text = notebooks.render(src, lang)
        if not (dest.is_file() and dest.read_text(encoding="utf-8") == text):
            out.append((dest, text))
    return out


def _stale(lab: labs.Lab) -> list[str]:
    return [str(dest) for dest, _text in _differing(lab)]


def _write(lab: labs.Lab) -> Iterator[Path]:
    for dest, text in _differing(lab):
        dest.write_text(text, encoding="utf-8")
        yield dest
