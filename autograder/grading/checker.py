"""``grader`` in a notebook: otter's ``Notebook``, its results said in the notebook's language.

Otter writes the frame of a check's result itself, in English ("q results: All
test cases passed!", "❌ Test case failed"); the messages inside it are ours,
already translated (:func:`autograder.grading.notebook.check`).  So
``grader.check`` returns otter's own result (every attribute as otter has it,
for otter's logs), shown with the frame in the current language
(:func:`autograder.core.i18n.current`), as text and as HTML.
``grader.check_all`` checks every question the same way, one after another,
and shows all their results.
"""

from __future__ import annotations

import html
import inspect
import re
from textwrap import indent

from autograder.core.i18n import N_, _

ALL_PASSED = N_("{name} results: All test cases passed!")
RESULTS = N_("{name} results:")
CASE_RESULT = N_("{case} result:")
PASSED_HTML = N_("{name} passed!")
# otter's own words at the start of a test case's message (otter.test_files.exception_test)
OTTER_FAILED, OTTER_PASSED = "❌ Test case failed", "✅ Test case passed"
CASE_FAILED, CASE_PASSED = N_("❌ Test case failed"), N_("✅ Test case passed")
# the one test case of every otter test file (autograder.authoring.otter writes it): its name is shown
PUBLIC_TESTS = N_("public tests")


# otter's pointer into its own test file (a generated one-liner that calls ``check``): nothing a
# student can act on, so left out
_OTTER_WHERE = re.compile(r"^Error at line \d+ in test [^\n]*:\n[ \t]+check\([^\n]*\)\n", re.M)


def case_message(message: str | None) -> str:
    """One test case's message with otter's opening words in the current language."""
    text = _OTTER_WHERE.sub("", message or "")
    for theirs, ours in ((OTTER_FAILED, CASE_FAILED), (OTTER_PASSED, CASE_PASSED)):
        if text.startswith(theirs):
            return _(ours) + text[len(theirs):]
    return text


class Result:
    """otter's result of one check, shown in the notebook's language."""

    def __init__(self, result):
        self._result = result

    def __getattr__(self, name):
        return getattr(self._result, name)

    def _cases(self):
        def name(case):
            return _(PUBLIC_TESTS) if case.name == PUBLIC_TESTS else case.name

        return [(name(tcr.test_case), case_message(tcr.message)) for tcr in self._result.test_case_results]

    def __repr__(self) -> str:
        r = self._result
        if r.passed_all:
            return _(ALL_PASSED).format(name=r.name)
        parts = [_(CASE_RESULT).format(case=case) + "\n" + indent(text.strip(), "    ") for case, text in self._cases()]
        return _(RESULTS).format(name=r.name) + "\n" + indent("\n\n".join(parts), "    ")

    def _repr_html_(self) -> str:
        r = self._result
        name = f"<pre style='display: inline;'>{html.escape(r.name)}</pre>"
        if r.passed_all:
            return "<p><strong>" + _(PASSED_HTML).format(name=name) + " ✅</strong></p>"
        out = "<p><strong style='color: red;'>" + _(RESULTS).format(name=name) + "</strong></p>"
        for case, text in self._cases():
            label = f"<pre style='display: inline;'>{html.escape(case)}</pre>"
            out += "<p><strong>" + _(CASE_RESULT).format(case=label) + "</strong></p>"
            out += f"<pre>{html.escape(indent(text, '    '))}</pre>"
        return out


class AllResults:
    """Every question's :class:`Result`, in order (``grader.check_all()``)."""

    def __init__(self, results: list[Result]):
        self.results = results

    def __iter__(self):
        return iter(self.results)

    @property
    def passed_all(self) -> bool:
        return all(r.passed_all for r in self.results)

    def __repr__(self) -> str:
        return "\n\n".join(repr(r) for r in self.results)

    def _repr_html_(self) -> str:
        return "".join(r._repr_html_() for r in self.results)


class Grader:
    """``grader``: otter's ``Notebook`` whose ``check`` and ``check_all`` show their results
    through :class:`Result`; everything else is otter's."""

    def __init__(self, notebook):
        self._notebook = notebook

    def __getattr__(self, name):
        return getattr(self._notebook, name)

    def check(self, question: str, global_env: dict | None = None) -> Result:
        # otter reads the caller's globals two frames up when none are given: this method is one
        # frame more, so they are given here, the notebook's own
        if global_env is None:
            global_env = inspect.currentframe().f_back.f_globals
        return Result(self._notebook.check(question, global_env))

    def check_all(self, global_env: dict | None = None) -> AllResults:
        # otter's own check_all finds the notebook's globals by counting frames, which this
        # wrapper would throw off; so every question is checked here, in otter's order
        from otter.check.utils import list_available_tests

        if global_env is None:
            global_env = inspect.currentframe().f_back.f_globals
        notebook = self._notebook
        questions = list_available_tests(notebook._tests_dir, notebook._nbmeta_config)
        return AllResults([self.check(q, global_env) for q in questions])
