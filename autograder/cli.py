"""``autograder``: a thin CLI.  Each subcommand is one module of
``autograder.commands`` with its options beside its code; this file only
names them, in the order ``--help`` lists them.

A module that is absent is not offered: the student bundle ships only
``check`` and ``submit`` (``autograder.authoring.release``), so its CLI lists
just what works there, and a course command named there (``grade``) says
why it is not there and exits 2.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import NoReturn

import click

from autograder.core import i18n, quick_exit
from autograder.core.i18n import N_, _

COMMANDS = {  # subcommand -> module; the module's ``command`` parses, its ``main`` runs
    "check": "autograder.commands.check",
    "submit": "autograder.commands.submit",
    "grade": "autograder.commands.grade",
    "history": "autograder.commands.history",
    "similarity": "autograder.commands.similarity",
    "mark": "autograder.commands.mark",
    "verify": "autograder.commands.verify",
    "mutants": "autograder.commands.mutants",
    "snapshots": "autograder.commands.snapshots",
    "examples": "autograder.commands.examples",
    "stubs": "autograder.commands.stubs",
    "gradescope": "autograder.commands.gradescope",
    "otter": "autograder.commands.otter_zip",
    "release": "autograder.commands.release",
    "otter-tests": "autograder.commands.otter_tests",
    "translations": "autograder.commands.translations",
    "notebooks": "autograder.commands.notebooks",
}


NOT_IN_BUNDLE = N_("`autograder {command}` is not in this student bundle: it holds only what a student needs "
                   "(check, submit) and only the public tests. Grading runs in the course repository.")


def _present(name: str) -> bool:
    return name in COMMANDS and importlib.util.find_spec(COMMANDS[name]) is not None


class _Commands(click.Group):
    """Imports a command's module only when it runs (or when --help lists it)."""

    def list_commands(self, ctx):
        return [name for name in COMMANDS if _present(name)]

    def get_command(self, ctx, name):
        if _present(name):
            return importlib.import_module(COMMANDS[name]).command
        if name not in COMMANDS:
            return None

        @click.command(name, context_settings={"ignore_unknown_options": True}, add_help_option=False)
        @click.argument("args", nargs=-1, type=click.UNPROCESSED)
        def absent(args):
            print(_(NOT_IN_BUNDLE).format(command=name), file=sys.stderr)
            return 2
        return absent


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
def autograder():
    """Iron Law Labs autograder"""


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; its exit status.  A usage error exits 2, as argparse does."""
    with i18n.language(None):  # resolved once and exported: grader processes and workers follow it
        try:
            status = autograder.main(args=argv, prog_name="autograder", standalone_mode=False)
        except click.UsageError as exc:
            exc.show()
            raise SystemExit(exc.exit_code) from None
        except click.Abort:
            return 1
        except KeyError as exc:  # unknown lab name
            print(f"autograder: {exc.args[0]}", file=sys.stderr)
            return 2
    return int(status or 0)


def run() -> NoReturn:
    """The ``autograder`` command: ``main`` on the command line, ended without the interpreter's teardown
    (``core/quick_exit``: 0.3-0.6 s of a process that imported torch); tests call ``main``."""
    quick_exit.leave(main())


if __name__ == "__main__":
    run()
