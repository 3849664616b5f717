"""``autograder mark LAB OUT``: the marking page, served on this machine for the TAs.

The page is ``autograder.batch.marking``; this module parses the options and serves it.
It listens on 127.0.0.1 only: a TA on another machine reaches it through an SSH tunnel
(``ssh -L 8765:127.0.0.1:8765 host``), never over the open network.
"""

from __future__ import annotations

from pathlib import Path

import click

from autograder.commands import usage_error
from autograder.core import labs


@click.command("mark")
@click.argument("lab")
@click.argument("out")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="the port on 127.0.0.1 (0: any free port)")
@click.option("--marker", default="", help="the name your marks are recorded under (the page asks otherwise)")
def command(**options) -> int:
    """serve the marking page for LAB's written answers graded into OUT (127.0.0.1 only)"""
    return main(**options)


def main(*, lab: str, out: str, port: int = 8765, marker: str = "") -> int:
    from werkzeug.serving import make_server

    from autograder.batch.marking.app import create_app

    try:
        the_lab = labs.get(lab)
    except KeyError as exc:
        return usage_error("mark", exc.args[0])
    if not (Path(out) / "manual").is_dir():
        return usage_error("mark", f"{out} holds no answers to mark: run `autograder grade {lab} ... --out {out}` "
                                   "first")
    server = make_server("127.0.0.1", port, create_app(the_lab, Path(out), marker=marker), threaded=True)
    print(f"marking page for {the_lab.manifest.title}: http://127.0.0.1:{server.server_port}/ (Ctrl+C stops it)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0
