"""``autograder``: a thin CLI; each subcommand calls one module's ``main(...)``."""

from __future__ import annotations

import argparse
import importlib
import sys

# subcommand -> (module, help); the module's main() takes the options as keywords
COMMANDS = {
    "check": ("autograder.commands.check", "run the public tests on your copy of a lab"),
    "grade": ("autograder.commands.grade", "grade a folder of submissions (sandboxed)"),
    "verify": ("autograder.commands.verify", "prove reference = full marks, stub = 0, variants lose their questions"),
    "snapshots": ("autograder.commands.snapshots", "rewrite public-test snapshots from the reference"),
    "examples": ("autograder.commands.examples", "write the demo submissions under examples/"),
}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="autograder", description="Iron Law Labs autograder")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    c = sub.add_parser("check", help=COMMANDS["check"][1])
    c.add_argument("lab", help="lab name or short name, e.g. lab2")
    c.add_argument("--path", help="folder with your files (default: assignments/<lab>)")
    c.add_argument("--sandbox", action="store_true", help="grade exactly as the grader does (slower)")

    g = sub.add_parser("grade", help=COMMANDS["grade"][1])
    g.add_argument("lab")
    g.add_argument("submissions_dir", metavar="SUBMISSIONS", help="folder of per-student folders or .zip files")
    g.add_argument("--out", required=True, help="output folder")
    g.add_argument("--jobs", type=int, default=None, help="parallel graders (default: number of cores)")
    g.add_argument("--force", action="store_true", help="regrade submissions that did not change")
    g.add_argument("--no-sandbox", dest="sandbox", action="store_false",
                   help="UNSAFE: run student code inside the grader (warns, and results say so)")

    v = sub.add_parser("verify", help=COMMANDS["verify"][1])
    v.add_argument("lab", nargs="?", default=None)
    v.add_argument("--jobs", type=int, default=None)
    v.add_argument("--no-sandbox", dest="sandbox", action="store_false", help="grade in-process (faster, for lab authors)")

    s = sub.add_parser("snapshots", help=COMMANDS["snapshots"][1])
    s.add_argument("lab")

    e = sub.add_parser("examples", help=COMMANDS["examples"][1])
    e.add_argument("lab", nargs="?", default=None)
    return p


def main(argv: list[str] | None = None) -> int:
    args = vars(build_parser().parse_args(argv))
    module = importlib.import_module(COMMANDS[args.pop("command")][0])
    try:
        return int(module.main(**args) or 0)
    except KeyError as exc:  # unknown lab name
        print(f"autograder: {exc.args[0]}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
