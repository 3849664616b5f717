"""``autograder mutants``: which mutants are made, how equivalents are marked, what the score says."""

from __future__ import annotations

import pytest

from autograder.core import labs
from autograder.cli import main
from autograder.authoring import mutants

SOURCE = '''"""Module docstring: 1 + 1 is never mutated."""


def f(x: int = 2, *, scale: float = 1.0) -> float:
    """Docstring, not code: x * 2."""
    if x < 3 and not scale:
        return -x
    y = x // 2
    y += 1
    return f"{x + 1}" if x == 0 else y ** 2
'''


def test_each_operator_makes_its_mutants_and_nothing_in_text_or_annotations():
    made = {(m.line, m.operator, m.original, m.mutated) for m in mutants.mutants_of("m.py", SOURCE)}
    expected = {
        (4, "constant", "2", "3"), (4, "constant", "1.0", "0.0"),  # defaults; annotations untouched
        (6, "comparison", "x < 3", "x <= 3"), (6, "constant", "3", "4"),
        (6, "boolean", "x < 3 and (not scale)", "x < 3 or not scale"), (6, "boolean", "not scale", "scale"),
        (7, "negation", "-x", "x"), (7, "return", "return -x", "return None"),
        (8, "arithmetic", "x // 2", "x / 2"), (8, "constant", "2", "3"),
        (9, "arithmetic", "y += 1", "y -= 1"), (9, "constant", "1", "0"),
        (10, "comparison", "x == 0", "x != 0"), (10, "constant", "0", "1"),
        (10, "arithmetic", "y ** 2", "y * 2"), (10, "constant", "2", "3"),
    }
    missing = expected - made
    assert not missing, missing
    texts = [m for m in made if m[0] in (1, 5)]  # docstrings
    assert not texts, texts
    assert not [m for m in made if "x - 1" in m[3] or "x + 2" in m[3]], "an f-string was mutated"
    for m in mutants.mutants_of("m.py", SOURCE):
        compile(m.source, "m.py", "exec")  # every mutant is valid Python, the rest of the file as it was
        assert m.source.count("\n") == SOURCE.count("\n")


def test_the_toy_suite_kills_every_mutant(toy_root, capsys):
    assert main(["mutants", "labx", "--no-sandbox"]) == 0
    out = capsys.readouterr().out
    assert "killed 5 / 5 mutants, 0 equivalent: mutation score 5/5 = 100.0%" in out


def _weaken_norm_tests(toy_root):
    """The hidden norm tests check only the type, so mutants of norm()'s arithmetic survive."""
    test = toy_root / "tests" / "labx_toy" / "test_toy.py"
    text = test.read_text()
    for line in ('assert_scalar(student.norm(x=x), reference.norm(x=x), what="norm", case="length 7", rtol=1e-12)',
                 'assert_scalar(student.norm(x=[3.0, 4.0]), 5.0, what="norm", case="(3, 4)", rtol=1e-12)'):
        assert line in text
        text = text.replace(line, "assert isinstance(student.norm(x=[3.0, 4.0]), float)")
    test.write_text(text)


def test_survivors_are_listed_and_fail_until_marked_equivalent(toy_root, capsys):
    _weaken_norm_tests(toy_root)
    assert main(["mutants", "labx", "--no-sandbox"]) == 1
    out = capsys.readouterr().out
    assert "survivors (" in out and "toy.py:15 " in out
    lab = labs.get("labx", toy_root)
    survivors = [m for m in mutants.all_mutants(lab) if m.line == 15 and m.operator != "return"]  # None: not a float
    entries = "".join(
        f'[[mutant]]\nfile = "toy.py"\nline = 15\noriginal = {mutants.toml_str(m.original)}\n'
        f'mutated = {mutants.toml_str(m.mutated)}\nwhy = "not tested in this fixture"\n\n' for m in survivors)
    (lab.solution_dir / mutants.EQUIVALENTS_FILE).write_text(entries)
    assert main(["mutants", "labx", "--no-sandbox"]) == 0
    out = capsys.readouterr().out
    assert f"{len(survivors)} equivalent" in out and "equivalent (marked, survived)" in out


def test_a_killed_mutant_marked_equivalent_is_an_error(toy_root, capsys):
    lab = labs.get("labx", toy_root)
    add = next(m for m in mutants.all_mutants(lab) if m.mutated == "np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)")
    (lab.solution_dir / mutants.EQUIVALENTS_FILE).write_text(
        f'[[mutant]]\nfile = "toy.py"\nline = {add.line}\noriginal = {mutants.toml_str(add.original)}\n'
        f'mutated = {mutants.toml_str(add.mutated)}\nwhy = "wrongly marked"\n')
    assert main(["mutants", "labx", "--no-sandbox"]) == 1
    assert "marked equivalent in equivalent_mutants.toml but killed (1)" in capsys.readouterr().out


@pytest.mark.parametrize("text, error", [
    ('[[mutant]]\nfile = "toy.py"\nline = 6\noriginal = "a"\nmutated = "b"\n', "missing key 'why'"),
    ('[[mutant]]\nfile = "toy.py"\nline = 6\noriginal = "a"\nmutated = "b"\nwhy = "x"\nwhen = 1\n', "unknown key 'when'"),
    ('[[mutant]]\nfile = "other.py"\nline = 6\noriginal = "a"\nmutated = "b"\nwhy = "x"\n', "not one of the lab's student files"),
    ('[[mutant]]\nfile = "toy.py"\nline = "6"\noriginal = "a"\nmutated = "b"\nwhy = "x"\n', "line must be an integer"),
    ('[[mutant]]\nfile = "toy.py"\nline = 6\noriginal = "a"\nmutated = "b"\nwhy = " "\n', "'why' is empty"),
    ('[[mutant]]\nfile = "toy.py"\nline = 6\noriginal = "a"\nmutated = "b"\nwhy = "x"\n', "no mutant toy.py:6"),
    ('[[mutants]]\n', "unknown key 'mutants'"),
])
def test_the_equivalents_file_is_strict(toy_root, text, error):
    lab = labs.get("labx", toy_root)
    (lab.solution_dir / mutants.EQUIVALENTS_FILE).write_text(text)
    with pytest.raises(mutants.EquivalentsError, match=error):
        mutants.load_equivalents(lab, mutants.all_mutants(lab))
