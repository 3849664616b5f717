"""``autograder release [LAB ...] --out DIR [--zip FILE] [--bundle-url URL]``: write the student bundle
(of the labs named, or of every lab)
(``autograder.authoring.release``), and with ``--zip`` also the zip the notebooks' first cell
downloads; refuses, writing nothing, when reference code or hidden tests would leak."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from autograder.authoring import leakscan
from autograder.authoring.release import TOP_FILES, release, write_zip
from autograder.core import course, labs


@click.command("release")
@click.argument("lab", nargs=-1)
@click.option("--out", required=True, help="folder to write; must not exist or be empty")
@click.option("--zip", "zip_path", default=None, metavar="FILE",
              help="also write the bundle as this zip (publish it at the notebooks' bundle address)")
@click.option("--bundle-url", default=None, metavar="URL",
              help="where the notebooks' first cell downloads the bundle zip (default: [bundle] url in course.toml)")
def command(**options) -> int:
    """write the student bundle of LAB(s), or of every lab (refuses if reference code would leak)"""
    return main(**options)


def _refuse(message: str, code: int) -> int:
    print(f"autograder release: {message}", file=sys.stderr)
    return code


def main(*, out: str, zip_path: str | None = None, bundle_url: str | None = None, lab: tuple[str, ...] = ()) -> int:
    root = labs.find_root()
    try:
        chosen = [labs.get(name, root) for name in lab] if lab else labs.all_labs(root)
    except KeyError as exc:
        return _refuse(exc.args[0], 2)
    target = Path(out).resolve()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        return _refuse(f"{target} exists and is not an empty folder; remove it or choose another", 2)
    missing = [f for f in (*TOP_FILES, "pyproject.toml") if not (root / f).is_file()]
    if missing:
        return _refuse(f"{root} has no {', '.join(missing)}; the bundle needs them", 2)
    findings = release(root, target, bundle_url, [l.name for l in chosen] if lab else None)
    if findings:
        return _refuse("\n  ".join([
            f"REFUSED, {len(findings)} leak(s) of reference code or hidden tests; nothing written:",
            *map(str, findings),
            f"A line public on purpose goes in solutions/<lab>/{leakscan.ALLOW_FILE}, with a comment saying why."]), 1)
    files = [p for p in target.rglob("*") if p.is_file()]
    print(f"{target}: {len(files)} files for {len(chosen)} lab(s) ({', '.join(l.name for l in chosen)}); "
          "leak scan clean")
    url = course.load(root).bundle_url if bundle_url is None else bundle_url
    if zip_path:
        print(f"{write_zip(target, Path(zip_path).resolve())}: the bundle zip, to publish at "
              f"{url or '(no address: set [bundle] url in assignments/course.toml, or --bundle-url)'}")
    elif not url:
        print("the notebooks know no address to download the bundle from: set [bundle] url in "
              "assignments/course.toml (or pass --bundle-url), and publish the zip of --zip there")
    return 0
