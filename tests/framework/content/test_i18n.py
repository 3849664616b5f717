"""Vietnamese and English: the catalogs are complete, the language is chosen in
the documented order, and check, grade and the sandbox all speak it."""

from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path

import pytest

from autograder.authoring import catalogs
from autograder.core import stubs
from autograder.core import i18n, labs
from autograder.cli import main

REPO = Path(__file__).resolve().parents[3]


# -- the catalogs ---------------------------------------------------------------------
def test_catalogs_are_complete():
    """Every marked message and every lab.toml title has a Vietnamese translation
    with the same placeholders, and no catalog keeps unused entries."""
    found = catalogs.problems(REPO)
    assert not found, "\n".join(found[:30]) + "\nrun `autograder translations`, then translate"


def test_completeness_check_can_fail(tmp_path, monkeypatch):
    """A dropped placeholder, an empty translation and a stale entry are each reported."""
    from babel.messages.pofile import read_po, write_po

    locale = tmp_path / "locale"
    locale.mkdir()
    with open(i18n.ENGINE_LOCALE / "vi.po", "rb") as f:
        cat = read_po(f, locale="vi")
    cat["{name}() is not implemented yet"].string = "chưa được cài đặt"  # {name} lost
    cat["the worker stopped answering"].string = ""
    cat.add("a message nobody uses", "một thông báo không ai dùng")
    with open(locale / "vi.po", "wb") as f:
        write_po(f, cat)
    monkeypatch.setattr(i18n, "ENGINE_LOCALE", locale)
    found = "\n".join(catalogs.problems(REPO, only="autograder"))
    assert "placeholders of '{name}() is not implemented yet' differ" in found
    assert "no translation of 'the worker stopped answering'" in found
    assert "'a message nobody uses' is no longer used" in found


def test_messages_babel_cannot_extract_are_reported(tmp_path):
    (tmp_path / "t.py").write_text('from autograder.core.i18n import _\n'
                                   'a = _(f"gradient of {n}")\n'
                                   'b = f"{_(\'tied\')} weights"\n'
                                   'c = _("ok {x}").format(x=1)\n')
    found = catalogs.unextractable(tmp_path)
    assert [f.split(":")[1] for f in found] == ["2", "3"], found


def test_placeholders_keep_their_format_specs():
    assert catalogs.placeholders("{ratio:.2f}× {what}") == {"ratio:.2f", "what:"}
    assert catalogs.placeholders("{ratio}× {what}") != catalogs.placeholders("{ratio:.2f}× {what}")


# -- choosing the language ------------------------------------------------------------
@pytest.mark.parametrize(("cli", "environ", "expected"), [
    ("vi", {i18n.ENV: "en", "LANG": "en_US.UTF-8"}, "vi"),  # --lang first
    (None, {i18n.ENV: "vi", "LANG": "en_US.UTF-8"}, "vi"),  # then $IRONLAW_LANG
    (None, {"JPY_SESSION_NAME": "/x/lab2_optimizers.vi.ipynb", "LANG": "en_US.UTF-8"}, "vi"),  # a *.vi notebook
    (None, {"LC_ALL": "vi_VN.UTF-8", "LANG": "en_US.UTF-8"}, "vi"),  # then the locale
    (None, {"LANG": "de_DE.UTF-8"}, "en"),  # a language without a catalog
    (None, {}, "en"),  # else English
])
def test_language_order(cli, environ, expected):
    assert i18n.resolve(cli, environ) == expected


def test_unknown_language_is_refused():
    with pytest.raises(SystemExit):
        main(["check", "lab2", "--lang", "fr"])


def test_language_block_restores_the_environment(monkeypatch):
    with i18n.language("vi"):  # the autouse fixture set $IRONLAW_LANG=en
        assert i18n._("the hidden tests") == "các bài kiểm thử ẩn"
    assert os.environ[i18n.ENV] == "en" and i18n._("the hidden tests") == "the hidden tests"
    monkeypatch.delenv(i18n.ENV)
    with i18n.language("vi"):
        pass
    assert i18n.ENV not in os.environ


# -- what a student reads ---------------------------------------------------------------
def test_check_lab2_in_vietnamese_uses_the_glossary(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.setenv("IRONLAW_ROOT", str(REPO))
    assert main(["check", "lab2", "--lang", "vi"]) == 1
    out = capsys.readouterr().out
    assert "chưa được cài đặt" in out and "bài kiểm thử công khai" in out and "sẽ chạy khi chấm điểm" in out
    for term in ("bộ tối ưu", "tích luỹ gradient"):  # docs/chapter.md, Glossary: in the question titles
        assert term in out, term
    assert "not implemented yet" not in out
    assert main(["check", "lab2"]) == 1  # the default stays English
    assert "not implemented yet" in capsys.readouterr().out


def test_notebook_check_speaks_the_notebook_language(monkeypatch):
    """grader.check in a *.vi.ipynb under Jupyter: Vietnamese without any setting."""
    from autograder.grading import notebook

    monkeypatch.delenv(i18n.ENV)
    monkeypatch.setenv("JPY_SESSION_NAME", "/home/sv/lab2_optimizers.vi.ipynb")
    lab2 = labs.get("lab2", REPO)
    with pytest.raises(AssertionError) as err:
        notebook.check(lab2.name, "update_rules", code_dir=lab2.assignment_dir, root=REPO)
    assert "bài kiểm thử công khai của câu 'update_rules' không đạt" in str(err.value)
    assert "sgd_step() chưa được cài đặt" in str(err.value)


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox needs root (as on CI)")
def test_grade_writes_feedback_in_the_chosen_language(toy_root, tmp_path):
    """Messages made in the sandboxed worker and in the grader both follow --lang;
    switching the language regrades instead of keeping the old feedback."""
    subs = tmp_path / "subs"
    (subs / "stub").mkdir(parents=True)
    shutil.copy(toy_root / "assignments" / "labx_toy" / "toy.py", subs / "stub" / "toy.py")
    (subs / "empty").mkdir()
    out = tmp_path / "out"
    assert main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "1", "--lang", "vi"]) == 0
    stub = (out / "feedback" / "stub.md").read_text(encoding="utf-8")
    assert "Điểm: 0 / 5" in stub and "add() chưa được cài đặt" in stub and "bài kiểm thử công khai" in stub
    assert "bài nộp thiếu tệp toy.py" in (out / "feedback" / "empty.md").read_text(encoding="utf-8")
    assert main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "1", "--lang", "en",
                 "--change-settings"]) == 0  # the record kept vi: a new language is a change of settings
    stub = (out / "feedback" / "stub.md").read_text(encoding="utf-8")
    assert "Score: 0 / 5" in stub and "add() is not implemented yet" in stub


# -- the stubs ------------------------------------------------------------------------------
SUMMARY = "Tóm tắt (tiếng Việt):"


def _functions_to_write(text: str):
    tree = ast.parse(text)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(
                isinstance(n, ast.Raise) and "NotImplementedError" in ast.unparse(n) for n in ast.walk(node)):
            yield node.name, ast.get_docstring(node) or ""
    yield "module", ast.get_docstring(tree) or ""


@pytest.mark.parametrize("lab", labs.all_labs(REPO), ids=lambda l: l.short)
def test_every_stub_function_has_a_vietnamese_summary(lab):
    """The English docstring stays the contract; a short Vietnamese summary follows it.
    Checked on the stubs the reference generates (``autograder stubs``: the summaries are
    written in the reference, the one source)."""
    missing, seen = [], 0
    for path, text in stubs.generate(lab).items():
        for name, doc in _functions_to_write(text):
            seen += name != "module"
            english = doc.split(SUMMARY)[0].strip()
            if SUMMARY not in doc or not english or doc.index(SUMMARY) < len(english):
                missing.append(f"{path.name}:{name}")
    assert seen >= len(lab.manifest.student_files), "every stub has functions to write"
    assert not missing, f"no '{SUMMARY}' after the English docstring: {missing}"
