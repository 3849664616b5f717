"""The ``autograder`` subcommands: one module each, its options beside its code.

Each module defines ``command`` (a click command that parses the options)
and ``main(**options) -> int`` (what tests and other code call).  The
options several commands share are defined once, here.
"""

from __future__ import annotations

import functools

import click

from autograder.core import i18n

jobs_option = click.option("--jobs", type=click.IntRange(min=1), default=None,
                           help="parallel graders (default: number of cores)")


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
