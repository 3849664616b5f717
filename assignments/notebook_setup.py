# The setup cell of every lab notebook (autograder.build.notebooks): a code cell of a
# notebook source tagged "setup" holds only its lab's line `LAB, MODULE = "<lab>", "<module>"`,
# which replaces the line `LAB, MODULE = ...` below when the notebooks are built.  This comment, up to the first blank line, is not part of the cell.

# Find this lab's files and start the checker. Works in Jupyter, VS Code and Colab (CPU only).
import os, sys

LAB, MODULE = ...
try:
    import autograder.grading.notebook
except ImportError:  # the bundle is not installed: use one named by $IRONLAW_ROOT, or one around this notebook
    sys.path[:0] = [os.path.abspath(p) for p in (os.environ.get("IRONLAW_ROOT"), "../..", "iron-law-labs", "../iron-law-labs")
                    if p and os.path.isdir(os.path.join(p, "autograder"))]
try:
    import otter
    from autograder.grading.notebook import locate_bundle
except ImportError as exc:
    raise ImportError(f"{exc.name} is missing: install the lab bundle first (see its README), e.g. "
                      "pip install -c iron-law-labs/requirements.lock -e iron-law-labs") from None
locate_bundle(LAB, MODULE)  # goes to the lab's folder if this notebook was opened elsewhere
grader = otter.Notebook(tests_dir="otter_tests")
