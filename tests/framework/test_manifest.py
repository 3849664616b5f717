"""Every lab's manifest parses and is consistent with its files."""

import pytest

from autograder.core import labs, manifest

LABS = labs.all_labs()


def test_all_four_labs_exist():
    assert [l.name for l in LABS] == ["lab1_iron_law", "lab2_optimizers", "lab3_memory", "lab4_data_movement"]


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_manifest_matches_files(lab):
    m = lab.manifest
    assert m.title and m.questions and m.student_files
    for f in m.student_files:
        assert (lab.assignment_dir / f).is_file(), f"stub {f} missing"
        assert (lab.solution_dir / f).is_file(), f"reference {f} missing"
    for f in m.support_files:
        assert (lab.assignment_dir / f).is_file(), f"support file {f} missing"
    for v in m.variants:
        assert (lab.solution_dir / v.patch).is_file(), f"variant patch {v.patch} missing"
    assert len(m.variants) >= 2, "each lab ships at least two negative variants"
    assert lab.hidden_tests_dir.is_dir() and lab.public_tests_dir.is_dir()
    assert (lab.assignment_dir / f"{lab.name}.ipynb").is_file()


def test_manifest_errors_name_the_problem():
    base = {"title": "t", "student_files": ["a.py"], "questions": [{"id": "q", "title": "Q", "points": 1}]}
    with pytest.raises(manifest.ManifestError, match="missing required key 'points'"):
        manifest.parse({**base, "questions": [{"id": "q", "title": "Q"}]}, "x")
    with pytest.raises(manifest.ManifestError, match="unknown questions"):
        manifest.parse({**base, "variants": [{"id": "v", "file": "a.py", "patch": "p", "loses": ["nope"]}]}, "x")
    with pytest.raises(manifest.ManifestError, match="not a student file"):
        manifest.parse({**base, "variants": [{"id": "v", "file": "b.py", "patch": "p", "loses": ["q"]}]}, "x")
    with pytest.raises(manifest.ManifestError, match="duplicate"):
        manifest.parse({**base, "questions": base["questions"] * 2}, "x")


def test_short_names():
    assert labs.get("lab2").name == "lab2_optimizers"
    with pytest.raises(KeyError):
        labs.get("lab9")
