# The setup cell of every lab notebook (autograder.authoring.notebooks): a code cell of a
# notebook source tagged "setup" holds only its lab's line `LAB, MODULE = "<lab>", "<module>"`,
# which replaces the line `LAB, MODULE = ...` below when the notebooks are built; the build
# also writes the notebook's language and the bundle's address (course.toml, [bundle] url)
# in place of `LANG, BUNDLE_URL = ...`, and NO_BUNDLE's message in that language.
# The cell must run before anything is installed: up to `from autograder.grading import
# notebook` it is plain standard library, and that module imports nothing else either.
# This comment, up to the first blank line, is not part of the cell.

# tr: Set-up: finds this lab's files, installs what is missing and starts the checker (Jupyter, VS Code, Colab; CPU).
# tr: Where the lab bundle is not here (on Colab, say), it is downloaded into iron-law-labs/ next to this notebook.
import os, sys

LAB, MODULE = ...
LANG, BUNDLE_URL = ...
NO_BUNDLE = ...
BUNDLE = "iron-law-labs"
DRIVE = "/content/drive/MyDrive/" + BUNDLE  # tr: Colab: the copy kept in Google Drive comes first
# tr: messages (grader.check's too) in this notebook's language, unless a language is set
os.environ["IRONLAW_LANG"] = os.environ.get("IRONLAW_LANG") or LANG
try:
    from autograder.grading import notebook
except ImportError:  # tr: not installed: the bundle named by $IRONLAW_ROOT or one around this notebook, else download it
    def _engine(p):  # tr: the bundle is p, or in a folder iron-law-labs/ one level down (a zip with a top folder)
        inner = [os.path.join(p, d) for d in sorted(os.listdir(p))] if p.endswith(BUNDLE) and os.path.isdir(p) else []
        return next((q for q in [p, *inner] if os.path.isdir(os.path.join(q, "autograder"))), None)
    roots = [r for p in (os.environ.get("IRONLAW_ROOT"), DRIVE, "../..", BUNDLE, f"../{BUNDLE}")
             if p and (r := _engine(os.path.abspath(p)))]
    if not roots:
        import io, urllib.request, zipfile
        url = os.environ.get("IRONLAW_BUNDLE_URL") or BUNDLE_URL
        print(f"{url} -> {os.path.abspath(BUNDLE)}")
        try:
            with urllib.request.urlopen(url, timeout=300) as response:
                zipfile.ZipFile(io.BytesIO(response.read())).extractall(BUNDLE)
        except (OSError, ValueError, zipfile.BadZipFile) as exc:  # tr: ValueError: no address at all
            raise FileNotFoundError(f"{exc}\n{NO_BUNDLE}") from None
        roots = [r for r in [_engine(os.path.abspath(BUNDLE))] if r]
    sys.path[:0] = roots
    from autograder.grading import notebook
notebook.install_missing()  # tr: pip: what this Python lacks (on Colab otter-grader and a few more, under a minute)
notebook.locate_bundle(LAB, MODULE)  # tr: goes to the lab's folder if this notebook was opened elsewhere
grader = notebook.checker()  # tr: otter's grader.check; each cell runs your latest saved .py files
from autograder.grading.predictions import predict, reveal  # tr: your guess before a measurement, then the result
from autograder.grading.unwritten import attempt, skip_if_unwritten  # tr: a cell that needs a function not written yet says which, and goes on
