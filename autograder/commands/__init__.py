"""The ``autograder`` subcommands: one module each, its options beside its code.

Each module defines ``command`` (a click command that parses the options)
and ``main(**options) -> int`` (what tests and other code call).  The
options several commands share are defined once, here.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable

import click

from autograder.core import i18n, labs

jobs_option = click.option("--jobs", type=click.IntRange(min=1), default=None,
                           help="parallel graders (default: number of cores, times the lab's graders_per_core, "
                                "at most one per 4 submissions)")


def default_jobs(targets: Iterable[labs.Lab] = ()) -> int:
    """Graders for a batch given no ``--jobs``: one per core this process may run on, times the
    largest ``[limits] graders_per_core`` of the labs in it (a lab whose tests mostly wait)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores * max((lab.manifest.limits.graders_per_core for lab in targets), default=1)


def sandbox_option(help_text: str):
    """``--no-sandbox``: grade in the grader's process (the keyword stays ``sandbox``)."""
    return click.option("--no-sandbox", "sandbox", is_flag=True, flag_value=False, default=True, help=help_text)


def lang_option(what: str):
    """``--lang en|vi``: the language of ``what`` (exported, so grader processes and workers follow)."""
    def decorate(fn):
        @functools.wraps(fn)
        def run(*, lang: str | None = None, **options):
            with i18n.language(lang):
                return fn(**options)
        return click.option("--lang", type=click.Choice(i18n.LANGS), default=None,
                            help=f"language of {what}: en or vi (default: ${i18n.ENV}, then the locale, then en)")(run)
    return decorate


def lab_command(name: str, *, check: str | None = None):
    """``autograder NAME [LAB]``: a command over the lab named, or every lab (:func:`chosen_labs`);
    with ``check``, also a ``--check`` flag, ``check`` its help."""
    def decorate(fn):
        if check is not None:
            fn = click.option("--check", is_flag=True, help=check)(fn)
        return click.command(name)(click.argument("lab", required=False)(fn))
    return decorate


def chosen_labs(lab: str | None) -> list[labs.Lab]:
    """The lab named ``lab`` (folder or short name), or every lab when none is named."""
    return [labs.get(lab)] if lab else labs.all_labs()


def build_or_check(lab: str | None, check: bool, *, write: Callable[[labs.Lab], Iterable],
                   stale: Callable[[labs.Lab], list], out_of_date: str) -> int:
    """For each of :func:`chosen_labs`: ``write(lab)`` what is out of date, printing "wrote PATH"
    for each path it yields; or, with ``check``, change nothing and print ``out_of_date`` (a
    ``str.format`` template) for each item of ``stale(lab)``.  1 when something is stale, else 0."""
    found = []
    for l in chosen_labs(lab):
        if check:
            found += stale(l)
        else:
            for path in write(l):
                print(f"wrote {path}")
    for s in found:
        print(out_of_date.format(s))
    return 1 if found else 0


def usage_error(command: str, text: str) -> int:
    """One line on stderr, ``autograder COMMAND: text``, and exit status 2."""
    import sys

    print(f"autograder {command}: {text}", file=sys.stderr)
    return 2

