"""The hand-in zip: one copy of what it holds, for both ways a student makes one.

``autograder submit LAB`` (``commands/submit.py``) and the notebook's last cell
(``notebook.submit``, ``autograder.grading.notebook``) both call :func:`make`,
so their zips grade alike.  The zip holds

- the lab's declared ``student_files``, flat, as they are in the lab's folder
  (``autograder grade`` and Gradescope find them by name);
- the notebook the student worked in, with its outputs and answers, named as
  the lab names its notebook in that language (``Manifest.notebooks``), so the
  grader finds the written answers of a lab marked by hand; its outputs are
  left out only when they make it larger than a handed-in file may be
  (:data:`MAX_FILE_BYTES`: staging would refuse it, and the answers with it);
- ``predictions.json`` where the lab asks for predictions and the notebook
  wrote one (:func:`autograder.grading.predictions.handin`);
- ``MANIFEST.json``: each file's sha256 and size, and how many public tests
  passed, so a student and an instructor can agree on what was handed in.

The public tests run before the zip is written (on the files already read);
failing ones only warn, since a partial submission still earns the points it
has, but a run in which no test ran is an error and writes nothing
(:class:`autograder.grading.local.TestsDidNotRun`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from autograder import __version__
from autograder.core.limits import MAX_FILE_BYTES
from autograder.core import i18n, labs
from autograder.core.files import text_bytes, write_zip
from autograder.core.i18n import N_, _
from autograder.core.results import PASSED

MANIFEST = "MANIFEST.json"
MISSING = N_("cannot submit: {files} missing from {folder}")
HOLDS = N_("(a {lab} submission holds {files})")
NO_NOTEBOOK = N_("WARNING: no notebook ({names}) in {folder}: your written answers are not in the zip.")
NO_PREDICTIONS = N_("WARNING: no {file} in {folder}: your predictions are not in the zip "
                    "(the notebook's prediction cells write it).")
ALL_PASSED = N_("public tests: all {total} passed.")
SOME_FAIL = N_("WARNING: {failed} of {total} public tests fail;")
WRITTEN_ANYWAY = N_("the zip is written all the same.")
WROTE = N_("wrote {zip} ({files} + {manifest}).")
UPLOAD = N_("Upload this file; {hidden} run at grading.")
WITHOUT_OUTPUTS = N_("WARNING: {notebook} is {size} MiB with its outputs, more than the {limit} MiB a handed-in file "
                     "may be: it is in the zip without its outputs (your answers are in its cells).")


class MissingFiles(ValueError):
    """A declared student file is not in the folder: the message says which, in the current language."""


@dataclass(frozen=True)
class FileRecord:
    name: str
    sha256: str
    size: int


@dataclass
class HandIn:
    """A zip written by :func:`make`: where, what it holds, and what the student should know."""

    dest: Path
    names: list[str]  # the files in it, MANIFEST.json aside
    passed: int
    total: int
    hidden: int  # hidden tests counted here (0 in a student's bundle)
    warnings: list[str] = field(default_factory=list)

    def lines(self, details: str) -> list[tuple[str, str]]:
        """What to tell the student, as (kind, text), kind one of ``warning``, ``passed`` and
        ``written``; ``details``: where the failing public tests are shown (a command, a
        notebook call), said after their count."""
        from autograder.grading.local import hidden_tests

        out = [("warning", w) for w in self.warnings]
        if self.passed == self.total:
            out.append(("passed", _(ALL_PASSED).format(total=self.total)))
        else:
            out.append(("warning", _(SOME_FAIL).format(failed=self.total - self.passed, total=self.total) + " "
                        + _(WRITTEN_ANYWAY) + " " + details))
        out.append(("written", _(WROTE).format(zip=self.dest, files=", ".join(self.names), manifest=MANIFEST) + " "
                    + _(UPLOAD).format(hidden=hidden_tests(self.hidden))))
        return out


def utc_timestamp() -> str:
    """Now in UTC, or $SOURCE_DATE_EPOCH when set (reproducible builds' convention)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(epoch) if epoch else None))


def manifest_json(lab: labs.Lab, files: dict[str, bytes], passed: int, total: int) -> str:
    records = [FileRecord(n, hashlib.sha256(d).hexdigest(), len(d)) for n, d in sorted(files.items())]
    return json.dumps({
        "lab": lab.name,
        "title": lab.manifest.title,
        "created_utc": utc_timestamp(),
        "autograder_version": __version__,
        "public_tests": {"passed": passed, "total": total},
        "files": [asdict(r) for r in records],
    }, indent=2) + "\n"


# -- the notebook -------------------------------------------------------------------------
def notebook_name(lab: labs.Lab, lang: str) -> str:
    """The name the lab gives its notebook in ``lang`` (``Manifest.notebooks`` lists them in
    the order of :data:`autograder.core.i18n.LANGS`)."""
    return dict(zip(i18n.LANGS, lab.manifest.notebooks))[lang if lang in i18n.LANGS else i18n.DEFAULT]


def _read(data: bytes) -> dict | None:
    try:
        nb = json.loads(data)
    except ValueError:
        return None
    return nb if isinstance(nb, dict) and isinstance(nb.get("cells"), list) else None


def language_of(data: bytes, file_name: str = "") -> str:
    """A lab notebook's language: what its build wrote into its metadata (``ironlaw.language``),
    else its file name's (``*.vi.ipynb``), else English."""
    nb = _read(data) or {}
    said = (nb.get("metadata") or {}).get("ironlaw", {}) if isinstance(nb.get("metadata"), dict) else {}
    lang = said.get("language") if isinstance(said, dict) else None
    if lang in i18n.LANGS:
        return lang
    return next((l for l in i18n.LANGS if file_name.endswith(f".{l}.ipynb")), i18n.DEFAULT)


def was_run(data: bytes) -> bool:
    """Whether any code cell of the notebook ``data`` ran (has an output or an execution count):
    a notebook never run is the one handed out, not the one a student worked in."""
    nb = _read(data)
    return nb is None or any(c.get("outputs") or c.get("execution_count") for c in nb["cells"]
                             if isinstance(c, dict) and c.get("cell_type") == "code")


def fitted(name: str, data: bytes) -> tuple[bytes, str | None]:
    """The notebook as it is, outputs and all; without its outputs (and a warning saying so) when
    it is larger than a handed-in file may be.  What is not a notebook's JSON stays as it is:
    what is handed in is the student's to decide, and staging says what it makes of it."""
    nb = _read(data)
    if len(data) <= MAX_FILE_BYTES or nb is None:
        return data, None
    for cell in nb["cells"]:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
    mib = 2 ** 20
    return text_bytes(json.dumps(nb, indent=1, ensure_ascii=False) + "\n"), _(WITHOUT_OUTPUTS).format(
        notebook=name, size=f"{len(data) / mib:.1f}", limit=f"{MAX_FILE_BYTES / mib:g}")


# -- the zip ------------------------------------------------------------------------------------
def missing(lab: labs.Lab, code_dir: Path) -> MissingFiles | None:
    """The error when a declared file is not in ``code_dir``, else None."""
    wanted = lab.manifest.student_files
    absent = [f for f in wanted if not (Path(code_dir) / f).is_file()]
    if not absent:
        return None
    return MissingFiles(_(MISSING).format(files=", ".join(absent), folder=code_dir) + " "
                        + _(HOLDS).format(lab=lab.short, files=", ".join(wanted)))


def make(lab: labs.Lab, code_dir: Path, notebooks: dict[str, bytes], dest: Path,
         warnings: list[str] = ()) -> HandIn:
    """Write the hand-in zip of the files in ``code_dir`` to ``dest``: the module docstring's
    contents, with ``notebooks`` (name -> bytes, the lab's notebook names) as the notebook.
    ``warnings``: the caller's own, kept first.  MissingFiles when a declared file is not
    there; TestsDidNotRun (nothing written) when no public test ran."""
    from autograder.grading import predictions
    from autograder.grading.local import public_tests_here

    code_dir = Path(code_dir)
    m = lab.manifest
    if (error := missing(lab, code_dir)) is not None:
        raise error
    files = {f: (code_dir / f).read_bytes() for f in m.student_files}  # read before the tests run
    said = list(warnings)
    for name, data in sorted(notebooks.items()):
        files[name], note = fitted(name, data)
        said += [note] if note else []
    if m.manual and not notebooks:
        said.append(_(NO_NOTEBOOK).format(names=", ".join(m.notebooks), folder=code_dir))
    guesses = predictions.handin(code_dir, m)
    if m.predictions and not guesses:
        said.append(_(NO_PREDICTIONS).format(file=predictions.FILE, folder=code_dir))
    files.update(guesses)

    tests, hidden = public_tests_here(lab, code_dir)
    passed = sum(t.status == PASSED for t in tests)
    write_zip(Path(dest), {**files, MANIFEST: manifest_json(lab, files, passed, len(tests))})
    return HandIn(Path(dest), sorted(files), passed, len(tests), hidden, said)
