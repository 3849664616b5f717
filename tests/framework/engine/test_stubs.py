"""The stub generator (``autograder.core.stubs``) on toy references: markers,
their errors, writing and ``--check``.  The real labs' stubs are checked in
``tests/framework/content/test_stubs.py``.
"""

from __future__ import annotations

import pytest

from autograder.core import stubs
from autograder.commands import stubs as stubs_command
from autograder.core import labs


REFERENCE = '''"""The module.

Tóm tắt (tiếng Việt): mô-đun.
"""

import math

SCALE = 2  # a constant the stub ships


### BEGIN SOLUTION NO PROMPT
def _helper(x):
    return x * SCALE


def _other(x):
    return -x
### END SOLUTION


def area(r: float) -> float:
    """The area of a circle.

    ### BEGIN SOLUTION in a docstring is text, not a marker
    Tóm tắt (tiếng Việt): diện tích.
    """
    ### BEGIN SOLUTION
    # pi r squared
    return math.pi * r**2
    ### END SOLUTION


class Shape:
    def scaled(self, x):
        """Scaled."""
        if x:
            ### BEGIN SOLUTION
            return _helper(x)

            ### END SOLUTION
        return 0
'''

STUB = '''"""The module.

Tóm tắt (tiếng Việt): mô-đun.
"""

import math

SCALE = 2  # a constant the stub ships


def area(r: float) -> float:
    """The area of a circle.

    ### BEGIN SOLUTION in a docstring is text, not a marker
    Tóm tắt (tiếng Việt): diện tích.
    """
    raise NotImplementedError


class Shape:
    def scaled(self, x):
        """Scaled."""
        if x:
            raise NotImplementedError
        return 0
'''


def test_markers_become_raise_at_their_indentation_and_the_rest_is_untouched():
    assert stubs.stub_text(REFERENCE, "solutions/labx/toy.py") == STUB
    exec(compile(REFERENCE, "toy.py", "exec"), ns := {})  # the markers are comments: the reference runs
    assert round(ns["area"](1.0), 5) == 3.14159 and ns["Shape"]().scaled(3) == 6


def _body(*lines: str, after: str = "def g():\n    return 1\n") -> str:
    """Line 1 ``def f``, line 2 its docstring, ``lines`` from line 3, two blank lines, then ``after``."""
    return "def f(x):\n    \"\"\"Doc.\"\"\"\n" + "".join(f"{l}\n" for l in lines) + "\n\n" + after


OK = ("    ### BEGIN SOLUTION", "    return x", "    ### END SOLUTION")  # lines 3-5


@pytest.mark.parametrize(("text", "message"), [
    (_body("    return x", after="class C:\n    ### BEGIN SOLUTION\n    x = 1\n"),
     "toy.py:7: '### BEGIN SOLUTION' is never closed with '### END SOLUTION'"),
    (_body("    ### BEGIN SOLUTION", "    return x"),
     "toy.py:7: a line left of the '### BEGIN SOLUTION' at line 3 (close the block before it)"),
    (_body("    return x", "    ### END SOLUTION"), "toy.py:4: '### END SOLUTION' without a '### BEGIN SOLUTION'"),
    (_body("    ### BEGIN SOLUTION", "    ### BEGIN SOLUTION", "    return x", "    ### END SOLUTION",
           "    ### END SOLUTION"), "toy.py:4: '### BEGIN SOLUTION' inside the block opened at line 3 (no nesting)"),
    (_body(*OK, after="### BEGIN SOLUTION NO PROMPT\ndef g():\n    ### BEGIN SOLUTION\n    return 1\n"
                      "    ### END SOLUTION\n### END SOLUTION\n"),
     "toy.py:10: '### BEGIN SOLUTION' inside the block opened at line 8 (no nesting)"),
    (_body("    ### BEGIN SOLUTION", "    return x", "### END SOLUTION"),
     "toy.py:5: '### END SOLUTION' is not at the indentation of its BEGIN (line 3)"),
    (_body(*OK, after="### BEGIN SOLUTION NO PROMPT\ndef g():\n    return 1\n    ### END SOLUTION\n"),
     "toy.py:11: '### END SOLUTION' is not at the indentation of its BEGIN (line 8)"),
    (_body("    ### BEGIN SOLUTION", "    ### END SOLUTION", "    return x"),
     "toy.py:4: empty solution block (opened at line 3)"),
    (_body(*OK, after="### BEGIN SOLUTION\ndef g():\n    return 1\n### END SOLUTION\n"),
     "toy.py:8: '### BEGIN SOLUTION' at module level would raise on import"),
    (_body("    # BEGIN SOLUTION", "    return x", "    # END SOLUTION"), "toy.py:3: malformed marker '# BEGIN SOLUTION'"),
    (_body(*OK[:2], "    ###END SOLUTION"), "toy.py:5: malformed marker '###END SOLUTION'"),
    (_body("    return x"), "toy.py:1: a contract file with no '### BEGIN SOLUTION' marker"),
])
def test_bad_markers_are_errors_naming_file_and_line(text, message):
    with pytest.raises(stubs.MarkerError) as err:
        stubs.stub_text(text, "solutions/labx/toy.py")
    assert str(err.value).startswith("solutions/labx/" + message), str(err.value)


def test_a_solution_line_left_of_its_marker_is_an_error():
    text = "class C:\n    def f(self):\n        ### BEGIN SOLUTION\n        x = 1\n    y = 2\n        ### END SOLUTION\n"
    with pytest.raises(stubs.MarkerError, match=r"^toy.py:5: a line left of the '### BEGIN SOLUTION' at line 3"):
        stubs.stub_text(text, "toy.py")


def test_no_prompt_blocks_go_with_the_blank_lines_after_them():
    text = _body(*OK, after="### BEGIN SOLUTION NO PROMPT\ndef _g():\n    return 1\n### END SOLUTION\n\n\ndef h():\n"
                            "    ### BEGIN SOLUTION\n    return 2\n    ### END SOLUTION\n")
    assert stubs.stub_text(text, "toy.py") == ('def f(x):\n    """Doc."""\n    raise NotImplementedError\n\n\n'
                                               'def h():\n    raise NotImplementedError\n')


@pytest.fixture
def marked_toy_lab(toy_root):
    """The toy lab (IRONLAW_ROOT points at its copy) with a marked reference and its stub."""
    lab = labs.get("labx", toy_root)
    ref = lab.solution_dir / "toy.py"
    ref.write_text(REFERENCE, encoding="utf-8")
    (lab.assignment_dir / "toy.py").write_text(STUB, encoding="utf-8")
    return lab


def test_generate_drift_and_write(marked_toy_lab, capsys):
    stub = marked_toy_lab.assignment_dir / "toy.py"
    assert stubs.generate(marked_toy_lab) == {stub: STUB} and stubs.drift(marked_toy_lab) == []
    stub.write_text(STUB.replace("raise NotImplementedError\n\n\nclass", "return 0.0\n\n\nclass"), encoding="utf-8")
    assert stubs.drift(marked_toy_lab) == ["assignments/labx_toy/toy.py"]
    assert stubs_command.main(lab="labx", check=True) == 1
    assert "out of date with its reference: assignments/labx_toy/toy.py" in capsys.readouterr().out
    assert stubs_command.main(lab="labx") == 0
    assert "wrote assignments/labx_toy/toy.py" in capsys.readouterr().out
    assert stub.read_text(encoding="utf-8") == STUB and stubs.write(marked_toy_lab) == []
    assert stubs_command.main(lab="labx", check=True) == 0


def test_a_marker_outside_the_contract_files_is_an_error(marked_toy_lab):
    variant = marked_toy_lab.solution_dir / "variants" / "double_norm.py"
    variant.write_text(variant.read_text() + "    ### END SOLUTION\n")
    n = len(variant.read_text().splitlines())
    with pytest.raises(stubs.MarkerError, match=rf"^solutions/labx_toy/variants/double_norm.py:{n}: "
                                                r"a solution marker in a file that is not a contract"):
        stubs.drift(marked_toy_lab)
