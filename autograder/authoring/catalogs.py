"""The message catalogs' contents: what the code marks, what the PO files hold.

Babel extracts every ``_("...")`` and ``N_("...")`` from the sources, every
``tr("...")`` (``autograder.grading.notebook_text``: what a notebook's code
cells print and draw) from the notebook sources ``<lab>.nb.py``, and each
lab's titles from its ``lab.toml`` (a student reads them in ``check`` and in
the feedback).  The engine's catalog holds the engine's messages; a
lab's catalog holds its own, less those the engine already translates.

:func:`problems` is what ``tests/framework/content/test_i18n.py`` asserts is empty:
a marked message without a translation, a fuzzy one, a translation whose
placeholders differ from its English, or an entry the code no longer uses.
"""

from __future__ import annotations

import ast
import datetime
import io
import json
import string
from dataclasses import dataclass
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

from autograder import __version__
from autograder.authoring import notebooks
from autograder.core import chapter, i18n, labs

ENGINE = "autograder"  # the engine's domain
KEYWORDS = {"_": None, "N_": None, "tr": None}  # tr: autograder.grading.notebook_text
METHODS = [("**/locale/**", "ignore"), ("**.py", "python")]  # a notebook source <lab>.nb.py is Python
STAMP = datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc)  # fixed: no churn in the PO headers
TRANSLATED = tuple(lang for lang in i18n.LANGS if lang != i18n.DEFAULT)


@dataclass(frozen=True)
class Domain:
    """One catalog: where it lives, and the folders whose messages it holds."""

    name: str
    locale_dir: Path
    sources: tuple[Path, ...]
    lab: labs.Lab | None = None
    root: Path | None = None  # the project: the engine's domain reads its course file

    def po(self, lang: str) -> Path:
        return self.locale_dir / f"{lang}.po"


def domains(root: Path | None = None) -> list[Domain]:
    root = root or labs.find_root()
    out = [Domain(ENGINE, i18n.ENGINE_LOCALE, (Path(i18n.__file__).parents[1],), root=root)]
    for lab in labs.all_labs(root):
        out.append(Domain(lab.name, lab.assignment_dir / i18n.LAB_LOCALE,
                          (lab.assignment_dir, lab.hidden_tests_dir, lab.solution_dir), lab))
    return out


def extract_notebook(fileobj, keywords, comment_tags, options):
    """A Babel extraction method for a built notebook (``.ipynb``): the messages
    of its code cells, with line numbers counted through the cells in order."""
    from babel.messages.extract import extract_python

    nb = json.loads(fileobj.read().decode("utf-8"))
    offset = 0
    for cell in nb.get("cells", []):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if cell.get("cell_type") == "code":
            # IPython magics (%autoreload, !pip) are not Python: blank them, keeping the line count
            code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n"))
            for lineno, funcname, messages, comments in extract_python(
                    io.BytesIO(code.encode("utf-8")), keywords, comment_tags, options):
                yield lineno + offset, funcname, messages, comments
        offset += source.count("\n") + 1


SHIPPED_METHODS = [*METHODS, ("**.ipynb", extract_notebook)]  # the bundle ships notebooks built, not their sources


def extract(domain: Domain, methods=METHODS) -> dict[str, list[str]]:
    """msgid -> where it is used ("file:line")."""
    found: dict[str, list[str]] = {}
    for folder in domain.sources:
        if not folder.is_dir():
            continue
        for filename, lineno, message, _comments, _context in extract_from_dir(
                folder, methods, keywords=KEYWORDS, strip_comment_tags=True):
            if isinstance(message, str) and message:
                found.setdefault(message, []).append(f"{folder.name}/{filename}:{lineno}")
    if domain.name == ENGINE:  # the chapter's section titles: the engine shows them in feedback
        where = f"assignments/{chapter.FILE}"
        for title in (s.title for s in chapter.load(domain.root).sections):
            found.setdefault(title, []).append(where)
    if domain.lab is not None:
        m = domain.lab.manifest
        # titles, and what a prediction cell prints of its lab.toml (its prompt and choices: grading/predictions.py)
        for title in (m.title, *(q.title for q in m.questions), *(t for p in m.predictions for t in p.texts)):
            found.setdefault(title, []).append(f"{domain.lab.name}/lab.toml")
    for path in _commented(domain):  # "# tr:" comments in notebook code cells (authoring/notebooks.py)
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for message in notebooks.comment_messages(line):
                found.setdefault(message, []).append(f"{path.parent.name}/{path.name}:{i}")
    return found


def _commented(domain: Domain) -> list[Path]:
    """The notebook sources whose ``# tr:`` comments go into ``domain``'s catalog: a lab's own
    source; for the engine, the setup and hand-in cells every notebook gets."""
    if domain.lab is not None:
        paths = [notebooks.source_path(domain.lab.assignment_dir, domain.lab.name)]
    elif domain.name == ENGINE and domain.root is not None:
        paths = [domain.root / "assignments" / name for name in (notebooks.SETUP_FILE, notebooks.HANDIN_FILE)]
    else:  # a folder's messages alone (the hidden tests')
        paths = []
    return [p for p in paths if p.is_file()]


def wanted(root: Path | None = None) -> dict[Domain, dict[str, list[str]]]:
    """Each domain's messages; a lab's exclude those the engine's catalog has."""
    ds = domains(root)
    result = {d: extract(d) for d in ds}
    engine = set(result[ds[0]])
    for d in ds[1:]:
        result[d] = {k: v for k, v in result[d].items() if k not in engine}
    return result


def read(path: Path, lang: str) -> Catalog:
    if not path.is_file():
        return Catalog(locale=lang)
    with open(path, "rb") as f:
        return read_po(f, locale=lang)


def placeholders(text: str) -> set[str]:
    """The named fields of a str.format template, with their format specs."""
    try:
        return {f"{name}:{spec}" for _lit, name, spec, _conv in string.Formatter().parse(text) if name is not None}
    except ValueError as exc:
        return {f"<unparsable: {exc}>"}


def unextractable(folder: Path) -> list[str]:
    """Marked messages Babel cannot see, so no catalog would ever hold them:
    ``_("literal")`` inside an f-string, or ``_()`` around an f-string or a ``+``.
    (``_(variable)`` is fine: a title from lab.toml, a template marked with ``N_``.)"""
    out = []
    for path in sorted(folder.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue  # a negative variant may not parse on purpose
        in_fstring = {id(n) for j in ast.walk(tree) if isinstance(j, ast.JoinedStr) for n in ast.walk(j)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in KEYWORDS:
                arg = node.args[0] if node.args else None
                literal = isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                if (id(node) in in_fstring and literal) or isinstance(arg, (ast.JoinedStr, ast.BinOp)):
                    out.append(f"{path}:{node.lineno}: {node.func.id}() needs one plain string literal "
                               "(use named placeholders and .format(), outside any f-string)")
    return out


def problems(root: Path | None = None, only: str | None = None) -> list[str]:
    """Everything wrong with the catalogs (``only``: one domain's, by name)."""
    out = []
    for domain, messages in wanted(root).items():
        if only and domain.name != only:
            continue
        for folder in domain.sources:
            out += unextractable(folder) if folder.is_dir() else []
        for lang in TRANSLATED:
            cat = read(domain.po(lang), lang)
            have = {m.id: m for m in cat if m.id}
            for msgid, where in sorted(messages.items()):
                m = have.get(msgid)
                if m is None or not m.string:
                    out.append(f"{domain.po(lang)}: no translation of {msgid!r} (used at {where[0]})")
                elif m.fuzzy:
                    out.append(f"{domain.po(lang)}: fuzzy translation of {msgid!r}")
                elif placeholders(m.string) != placeholders(msgid):
                    out.append(f"{domain.po(lang)}: placeholders of {msgid!r} differ: "
                               f"{sorted(placeholders(msgid))} vs {sorted(placeholders(m.string))}")
            for msgid in sorted(set(have) - set(messages)):
                out.append(f"{domain.po(lang)}: {msgid!r} is no longer used; remove it")
    return out


def update(root: Path | None = None, only: str | None = None) -> list[Path]:
    """Add new messages (untranslated) to every PO file and drop unused ones
    (``only``: just one domain's file, by name)."""
    written = []
    for domain, messages in wanted(root).items():
        if only and domain.name != only:
            continue
        for lang in TRANSLATED:
            path = domain.po(lang)
            old = read(path, lang)
            new = Catalog(locale=lang, project="Iron Law Labs", domain=domain.name, fuzzy=False,
                          version=__version__, creation_date=STAMP, revision_date=STAMP,
                          header_comment=f"# {domain.name}: messages in {lang}. Fill msgstr; keep every {{placeholder}}.")
            for msgid, where in sorted(messages.items()):
                prev = old.get(msgid)
                new.add(msgid, prev.string if prev else "", locations=[(w.rsplit(":", 1)[0], None) for w in where[:3]],
                        flags=prev.flags if prev else ())
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "wb") as f:
                write_po(f, new, width=100, omit_header=False, sort_output=True, include_lineno=False)
            written.append(path)
    return written


def student_subset(po: Path, lab: labs.Lab, shipped_dir: Path) -> bytes:
    """A lab's PO file as the student bundle carries it: only the messages of
    what ships (public tests, the built notebooks' code cells, lab.toml titles),
    none only the hidden tests use."""
    shipped = extract(Domain(lab.name, po.parent, (shipped_dir,), lab), methods=SHIPPED_METHODS)
    with open(po, "rb") as f:
        cat = read_po(f)
    for msgid in [m.id for m in cat if m.id and m.id not in shipped]:
        del cat[msgid]
    buf = io.BytesIO()
    write_po(buf, cat, width=100, sort_output=True, include_lineno=False)
    return buf.getvalue()
