"""``autograder``: a thin CLI; each subcommand calls one module's ``main(...)``."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys

from autograder.core import i18n

# subcommand -> (module, help); the module's main() takes the options as keywords
COMMANDS = {
    "check": ("autograder.commands.check", "run the public tests on your copy of a lab"),
    "submit": ("autograder.commands.submit", "build the zip to upload: your files and their hashes"),
    "grade": ("autograder.commands.grade", "grade a folder of submissions (sandboxed)"),
    "verify": ("autograder.commands.verify", "prove reference = full marks, stub = 0, variants lose their questions"),
    "mutants": ("autograder.commands.mutants", "mutation score: grade small AST mutants of the reference, list survivors"),
    "snapshots": ("autograder.commands.snapshots", "rewrite public-test snapshots from the reference"),
    "examples": ("autograder.commands.examples", "write the demo submissions under examples/"),
    "gradescope": ("autograder.commands.gradescope", "build a Gradescope autograder zip for one lab"),
    "release": ("autograder.commands.release", "write the student bundle (refuses if reference code would leak)"),
    "otter-tests": ("autograder.commands.otter_tests", "rewrite each notebook's otter tests from the public tests"),
    "translations": ("autograder.commands.translations", "update the Vietnamese message catalogs from the code; --check lists gaps"),
    "notebooks": ("autograder.commands.notebooks", "build each lab's notebooks (English, Vietnamese) from its one source"),
    "otter": ("autograder.commands.otter_zip", "build an otter-grader autograder zip for one lab (public tests, untrusted)"),
}


class _Present:
    """Offers only the subcommands whose module is here: the student bundle
    ships without the instructors' modules (``release``), so its CLI lists
    just what works there.  An absent one's options go to a detached parser."""

    def __init__(self, sub):
        self.sub = sub

    def add_parser(self, name: str, **kwargs) -> argparse.ArgumentParser:
        if importlib.util.find_spec(COMMANDS[name][0]) is None:
            return argparse.ArgumentParser(add_help=False)
        return self.sub.add_parser(name, **kwargs)


def _lang_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--lang", choices=i18n.LANGS, default=None,
                        help=f"language of {what}: en or vi (default: ${i18n.ENV}, then the locale, then en)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="autograder", description="Iron Law Labs autograder")
    sub = _Present(p.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    c = sub.add_parser("check", help=COMMANDS["check"][1])
    c.add_argument("lab", help="lab name or short name, e.g. lab2")
    c.add_argument("--path", help="folder with your files (default: assignments/<lab>)")
    c.add_argument("--sandbox", action="store_true", help="grade exactly as the grader does (slower)")
    _lang_option(c, "messages")

    sm = sub.add_parser("submit", help=COMMANDS["submit"][1])
    sm.add_argument("lab", help="lab name or short name, e.g. lab2")
    sm.add_argument("--path", help="folder with your files (default: assignments/<lab>)")
    sm.add_argument("--out", help="the zip to write (default: ./<lab>-submission.zip)")
    _lang_option(sm, "messages")

    g = sub.add_parser("grade", help=COMMANDS["grade"][1])
    g.add_argument("lab")
    g.add_argument("submissions_dir", metavar="SUBMISSIONS", help="folder of per-student folders or .zip files")
    g.add_argument("--out", required=True, help="output folder")
    g.add_argument("--jobs", type=int, default=None, help="parallel graders (default: number of cores)")
    g.add_argument("--force", action="store_true", help="regrade submissions that did not change")
    g.add_argument("--no-sandbox", dest="sandbox", action="store_false",
                   help="UNSAFE: run student code inside the grader (warns, and results say so)")
    g.add_argument("--after-due", dest="after_due", action="store_true",
                   help="the due date has passed: feedback shows the hidden-test details of questions "
                        "with details = \"after_due_date\" in lab.toml")
    _lang_option(g, "the students' feedback")

    v = sub.add_parser("verify", help=COMMANDS["verify"][1])
    v.add_argument("lab", nargs="?", default=None)
    v.add_argument("--jobs", type=int, default=None)
    v.add_argument("--no-sandbox", dest="sandbox", action="store_false", help="grade in-process (faster, for lab authors)")
    v.add_argument("--mutants", action="store_true", help="also report each lab's mutation score (slow: one grading per mutant)")
    v.add_argument("--mutant-limit", type=int, default=None, help="with --mutants: grade only N mutants per lab, evenly spread")

    mu = sub.add_parser("mutants", help=COMMANDS["mutants"][1])
    mu.add_argument("lab")
    mu.add_argument("--limit", type=int, default=None, help="grade only N mutants, evenly spread over all of them")
    mu.add_argument("--jobs", type=int, default=None, help="parallel graders (default: number of cores)")
    mu.add_argument("--no-sandbox", dest="sandbox", action="store_false", help="grade in-process (for lab authors)")

    s = sub.add_parser("snapshots", help=COMMANDS["snapshots"][1])
    s.add_argument("lab")

    e = sub.add_parser("examples", help=COMMANDS["examples"][1])
    e.add_argument("lab", nargs="?", default=None)

    gs = sub.add_parser("gradescope", help=COMMANDS["gradescope"][1])
    gs.add_argument("lab")
    gs.add_argument("--out", required=True, help="the zip to write, e.g. lab2-autograder.zip")
    _lang_option(gs, "the students' feedback on Gradescope")

    r = sub.add_parser("release", help=COMMANDS["release"][1])
    r.add_argument("--out", required=True, help="folder to write; must not exist or be empty")

    ot = sub.add_parser("otter-tests", help=COMMANDS["otter-tests"][1])
    ot.add_argument("lab", nargs="?", default=None)

    tr = sub.add_parser("translations", help=COMMANDS["translations"][1])
    tr.add_argument("lab", nargs="?", default=None, help="only this lab's catalog (default: all, and the engine's)")
    tr.add_argument("--check", action="store_true", help="change nothing; list missing or inconsistent translations")

    nbk = sub.add_parser("notebooks", help=COMMANDS["notebooks"][1])
    nbk.add_argument("lab", nargs="?", default=None)
    nbk.add_argument("--check", action="store_true", help="only report notebooks that differ from their source")

    oz = sub.add_parser("otter", help=COMMANDS["otter"][1])
    oz.add_argument("lab")
    oz.add_argument("--out", required=True, help="the zip to write, e.g. lab2-otter.zip")
    return p


def main(argv: list[str] | None = None) -> int:
    args = vars(build_parser().parse_args(argv))
    module = importlib.import_module(COMMANDS[args.pop("command")][0])
    with i18n.language(args.pop("lang", None)):  # exported: grader processes and workers follow it
        try:
            return int(module.main(**args) or 0)
        except KeyError as exc:  # unknown lab name
            print(f"autograder: {exc.args[0]}", file=sys.stderr)
            return 2


if __name__ == "__main__":
    sys.exit(main())
