"""Every lab's manifest parses and is consistent with its files."""

import copy

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
        assert not v.patch or (lab.solution_dir / v.patch).is_file(), f"variant patch {v.patch} missing"
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


# -- strict: a typo anywhere is an error that names the key, its table and the file ------
BASE = {"title": "t", "student_files": ["a.py"], "questions": [{"id": "q", "title": "Q", "points": 1}],
        "variants": [{"id": "v", "file": "a.py", "patch": "p", "loses": ["q"]}], "limits": {"timeout_s": 5}}


def _with(**changes):
    """BASE with ``where=(key, value)`` set, where is "top", "limits", "question", "variant" or "sandbox"."""
    data = copy.deepcopy(BASE)
    tables = {"top": data, "limits": data["limits"], "question": data["questions"][0], "variant": data["variants"][0],
              "sandbox": data.setdefault("sandbox", {})}
    for where, (key, value) in changes.items():
        tables[where][key] = value
    return data


@pytest.mark.parametrize("where, key, table", [
    ("limits", "timeot_s", "[limits]"),
    ("top", "visiblity", "the top level"),
    ("top", "sandbx", "the top level"),  # an unknown table is an unknown key too
    ("sandbox", "preloads", "[sandbox]"),
    ("question", "point", '[[questions]] #1 (id "q")'),
    ("variant", "loose", '[[variants]] #1 (id "v")'),
])
def test_unknown_keys_are_errors(where, key, table):
    with pytest.raises(manifest.ManifestError) as exc:
        manifest.parse(_with(**{where: (key, 1)}), "lab2_optimizers")
    assert str(exc.value).startswith(f'lab2_optimizers/lab.toml: unknown key "{key}" in {table}; known: ')


@pytest.mark.parametrize("where, key, value, kind", [
    ("limits", "memory_mb", "3G", "an integer"),
    ("limits", "memory_mb", 30.5, "an integer"),
    ("limits", "timeout_s", True, "a number"),
    ("top", "student_files", "a.py", "a list of strings"),
    ("top", "limits", 3, "a table"),
    ("top", "questions", {"id": "q"}, "an array of tables"),
    ("question", "points", "7", "a number"),
    ("question", "section", 3, "a string or a list of strings"),
    ("variant", "loses", "q", "a list of strings"),
    ("sandbox", "preload", "numpy", "a list of strings"),
])
def test_wrong_types_are_errors_not_type_errors(where, key, value, kind):
    with pytest.raises(manifest.ManifestError, match=f'x/lab.toml: key "{key}" in .* must be {kind}, not '):
        manifest.parse(_with(**{where: (key, value)}), "x")


def test_limits_must_be_positive_and_files_plain_and_few():
    with pytest.raises(manifest.ManifestError, match='key "cpu_s" in \\[limits\\] must be positive'):
        manifest.parse(_with(limits=("cpu_s", 0)), "x")
    with pytest.raises(manifest.ManifestError, match="plain file names, not '../a.py'"):
        manifest.parse(_with(top=("support_files", ["../a.py"])), "x")
    many = [f"s{i}.py" for i in range(manifest.MAX_FILES)]
    with pytest.raises(manifest.ManifestError, match=f"at most {manifest.MAX_FILES} student and support files"):
        manifest.parse(_with(top=("support_files", many)), "x")


def test_a_lab_may_name_its_own_preload_list_of_module_names():
    assert manifest.parse(_with(), "x").preload is None  # the course's
    assert manifest.parse(_with(sandbox=("preload", [])), "x").preload == ()  # nothing at all
    assert manifest.parse(_with(sandbox=("preload", ["numpy", "concurrent.futures"])), "x").preload == (
        "numpy", "concurrent.futures")
    for bad in ("", "os; import shutil", "../numpy", "numpy.", "a..b", "1numpy"):
        with pytest.raises(manifest.ManifestError, match='key "preload" in \\[sandbox\\] must list module names'):
            manifest.parse(_with(sandbox=("preload", ["numpy", bad])), "x")


def test_the_zygote_imports_each_lab_s_list_or_else_the_course_s():
    from autograder.core import course
    from autograder.sandbox.backend import preload_list

    by = {l.short: l.manifest for l in LABS}
    course_list = list(course.load().preload)
    assert preload_list() == course_list == preload_list(by["lab1"]) == preload_list(by["lab2"], by["lab3"])
    own = list(by["lab4"].preload)
    assert preload_list(by["lab4"]) == own and "torch" not in own and "numpy" in own
    assert preload_list(by["lab4"], by["lab1"]) == list(dict.fromkeys(own + course_list))  # one zygote for both


def test_a_valid_manifest_has_no_extra_field_and_load_names_a_toml_error(tmp_path):
    m = manifest.parse(_with(), "x")
    assert m.limits.timeout_s == 5 and not hasattr(m, "extra")
    (tmp_path / "labz").mkdir()
    (tmp_path / "labz" / "lab.toml").write_text('title = "t"\n[limits\n')
    with pytest.raises(manifest.ManifestError, match="labz/lab.toml: "):
        manifest.load(tmp_path / "labz" / "lab.toml")


def test_every_real_lab_and_the_toy_lab_parse():
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    paths = sorted(root.glob("assignments/*/lab.toml")) + [
        Path(__file__).resolve().parents[1] / "fixtures" / "toyroot" / "assignments" / "labx_toy" / "lab.toml"]
    assert len(paths) == 5
    for p in paths:
        assert manifest.load(p).questions


def test_graders_per_core_sets_a_batchs_default_jobs(monkeypatch):
    """A lab whose tests mostly sleep asks for more graders than cores; --jobs still wins."""
    from autograder.commands import default_jobs

    with pytest.raises(manifest.ManifestError, match='key "graders_per_core" in .* must be an integer'):
        manifest.parse(_with(limits=("graders_per_core", 1.5)), "x")
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1, 2})
    by_lab = {l.short: l for l in LABS}
    assert default_jobs([by_lab["lab2"]]) == 3 and default_jobs() == 3
    assert by_lab["lab4"].manifest.limits.graders_per_core == 2
    assert default_jobs([by_lab["lab4"]]) == 6 and default_jobs(LABS) == 6
