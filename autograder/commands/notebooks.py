"""``autograder notebooks [LAB] [--check]``: build each lab's notebooks, one per
language, from its single jupytext source (``autograder.build.notebooks``)."""

from __future__ import annotations

import click

from autograder.core import labs
from autograder.build import notebooks


@click.command("notebooks")
@click.argument("lab", required=False)
@click.option("--check", is_flag=True, help="only report notebooks that differ from their source")
def command(**options) -> int:
    """build each lab's notebooks (English, Vietnamese) from their one source"""
    return main(**options)


def main(*, lab: str | None = None, check: bool = False) -> int:
    stale = []
    for l in [labs.get(lab)] if lab else labs.all_labs():
        src = notebooks.source_path(l.assignment_dir, l.name)
        for lang in notebooks.LANGS:
            dest = notebooks.notebook_path(l.assignment_dir, l.name, lang)
            text = notebooks.render(src, lang)
            if dest.is_file() and dest.read_text(encoding="utf-8") == text:
                continue
            if check:
                stale.append(str(dest))
            else:
                dest.write_text(text, encoding="utf-8")
                print(f"wrote {dest}")
    for s in stale:
        print(f"out of date with its source: {s} (run `autograder notebooks`)")
    return 1 if stale else 0
