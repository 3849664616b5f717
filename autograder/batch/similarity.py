"""Similarity between the submissions of one batch: ``autograder similarity LAB SUBS --out DIR``.

It flags, it never grades: nothing here reads or changes a score, and a
flagged pair is only a pair for a person to look at.

What is compared.  Each entry of the batch folder is staged exactly as the
grader stages it (:func:`autograder.batch.platforms.stage`: the lab's
declared ``student_files`` only, found the same way), and every pair of
submissions is compared file by file: ``optimizers.py`` with
``optimizers.py``, never with ``accumulation.py``.  The comparison is
copydetect's (https://github.com/blingenf/copydetect): the code is
tokenized with Pygments and filtered, so that comments and whitespace are
dropped and every variable, attribute and function name becomes one letter
(``V``, ``F``), and strings become ``S``.  Renaming variables, stripping or
rewriting comments and reformatting do not change what is compared.  The
filtered text is cut into k-grams, hashed, and winnowed into fingerprints.

What is not evidence (boilerplate).  Every student starts from the same
stub, so the untouched contract (module docstring, imports, signatures,
docstrings, given helpers) is in every file; the reference's reviewed
public lines (``solutions/<lab>/public_lines.txt``: code the notebook shows
on purpose) are in many.  Their k-grams are given to copydetect as
boilerplate and dropped from every file's fingerprints before comparing, so
two untouched stubs share nothing and a score measures only what students
wrote themselves.

The numbers.

- ``noise`` (copydetect's noise threshold, k; :data:`NOISE`): the length, in
  characters of *filtered* code, of the shortest run two files must share for
  it to count.  Filtered code is dense (``x = np.sqrt(a)`` is ``V=V.V(V)``, 8
  characters), so 25 is roughly one to two lines of real code: shorter runs
  are common idioms every solution shares.
- ``guarantee`` (copydetect's guarantee threshold; :data:`GUARANTEE`): a
  shared run at least this long is always found.  Between ``noise`` and
  ``guarantee`` winnowing keeps one fingerprint per window of
  ``guarantee - noise + 1`` k-grams, so it may miss some; equal values (the
  default) keep every k-gram, the most sensitive setting, and a class's
  batch is small enough for it.
- ``similarity_a`` (and ``_b``): the share of submission a's own
  (non-boilerplate) tokens that lie in runs it shares with b.  The two
  differ when one file is longer: a student who copied a whole file and
  added code has a lower share than the one copied from.
- ``threshold`` (:data:`THRESHOLD`, 0.5): a file pair is flagged when
  either share reaches it.  On the course's own labs, independently written
  correct solutions (``solutions/<lab>/alternatives/``) share at most about
  40% of their tokens (the formulas every solution writes), while
  submissions that differ from one another by a line or two share 65 to
  100%; 0.5 sits between them.  A submission pair is flagged when one of its
  files is.

Cases.  Flagged pairs are grouped into cases: the connected groups of
submissions joined by flagged pairs (a ring of five copies is one case of
five, with its ten or fewer pairs, never ten separate findings).  For each
member of a case, the report shows its files with every passage it shares
with any other member highlighted (the union of its pairs' shared runs).
"""

from __future__ import annotations

import csv
import html
import io
import itertools
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from copydetect import CodeFingerprint, compare_files
from copydetect import defaults as copydetect_defaults
from copydetect.utils import highlight_overlap

from autograder.batch import platforms
from autograder.batch.gradebook import text_cell
from autograder.core import stubs
from autograder.core import labs, untrusted
from autograder.core.files import atomic_write
from autograder.grading import staging

NOISE = copydetect_defaults.NOISE_THRESHOLD  # 25 filtered characters
GUARANTEE = copydetect_defaults.GUARANTEE_THRESHOLD  # 25: every k-gram is a fingerprint
THRESHOLD = 0.5
PUBLIC_LINES = "public_lines.txt"  # solutions/<lab>/: code the public material shows on purpose
CSV_NAME, HTML_NAME = "similarity.csv", "similarity.html"
COLUMNS = ["case", "submission_a", "submission_b", "file", "similarity_a", "similarity_b", "matched_tokens"]


@dataclass(frozen=True)
class Match:
    """One file of one pair of submissions, with what they share."""
    a: str
    b: str
    file: str
    similarity_a: float
    similarity_b: float
    tokens: int  # filtered tokens of a that lie in shared runs
    code_a: str = field(default="", repr=False, compare=False)  # a's file, shared runs highlighted (HTML)
    code_b: str = field(default="", repr=False, compare=False)
    slices_a: np.ndarray | None = field(default=None, repr=False, compare=False)  # copydetect's shared runs of a
    slices_b: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def score(self) -> float:
        return max(self.similarity_a, self.similarity_b)


@dataclass
class Case:
    """A connected group of submissions joined by flagged pairs: one thing for a person to read."""
    members: list[str]  # sorted
    matches: list[Match]  # its flagged file pairs, highest score first
    passages: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)  # (member, file) -> HTML

    @property
    def score(self) -> float:
        return max(m.score for m in self.matches)

    @property
    def pairs(self) -> int:
        return len({(m.a, m.b) for m in self.matches})


@dataclass
class Report:
    lab: labs.Lab
    submissions: list[str]
    threshold: float
    noise: int
    guarantee: int
    matches: list[Match]  # flagged file pairs, highest score first
    problems: dict[str, list[str]]  # submission -> what staging could not find or read
    clusters: list[Case] = field(default_factory=list)  # the cases: largest first, then highest score

    def __post_init__(self):
        if self.matches and not self.clusters:  # made from matches alone: the cases without their passages
            self.clusters = cases(self.matches, {})

    def case_of(self, submission: str) -> int:
        """The number (from 1) of the case a flagged submission is in."""
        return next(n for n, c in enumerate(self.clusters, 1) if submission in c.members)

    @property
    def pairs_compared(self) -> int:
        n = len(self.submissions)
        return n * (n - 1) // 2

    @property
    def pairs_flagged(self) -> int:
        return len({(m.a, m.b) for m in self.matches})


def boilerplate(lab: labs.Lab) -> dict[str, str]:
    """Student file name -> the text whose k-grams are not evidence: its stub, and the
    lab's reviewed public lines (every file may hold those)."""
    texts = stubs.texts(lab)
    for f in lab.manifest.student_files:  # no solutions/ here: the stub on disk, if any
        if f not in texts and (lab.assignment_dir / f).is_file():
            texts[f] = (lab.assignment_dir / f).read_text(encoding="utf-8", errors="replace")
    public = lab.solution_dir / PUBLIC_LINES
    shared = public.read_text(encoding="utf-8") if public.is_file() else ""
    return {f: texts.get(f, "") + "\n" + shared for f in lab.manifest.student_files}


def _hashes(name: str, text: str, noise: int) -> np.ndarray:
    """Every k-gram of ``text`` (window 1, as copydetect fingerprints its boilerplate)."""
    return np.unique(np.array(sorted(CodeFingerprint(name, noise, 1, fp=io.StringIO(text)).hashes)))


def collect(lab: labs.Lab, entries: list[staging.Entry]) -> tuple[dict[str, dict[str, str]], dict[str, list[str]]]:
    """Submission id -> {student file -> text}, staged as the grader stages them; and each one's problems."""
    files = tuple(lab.manifest.student_files)
    texts, problems = {}, {}
    with tempfile.TemporaryDirectory(prefix="similarity-") as tmp:
        for n, entry in enumerate(entries):
            try:  # as `grade` stages it, within an entry's CPU budget (staging says what it cut)
                with untrusted.budget():
                    staged = platforms.stage(lab, entry, Path(tmp) / str(n))
            except untrusted.OverBudget as exc:  # stopped in staging's own bookkeeping: nothing of it compared
                texts[entry.id], problems[entry.id] = {}, [str(exc)]
                continue
            texts[entry.id] = {f: (staged.directory / f).read_bytes().decode("utf-8", "replace")
                               for f in files if (staged.directory / f).is_file()}
            if staged.problems:
                problems[entry.id] = list(staged.problems)
    return texts, problems


def compare(lab: labs.Lab, entries: list[staging.Entry], *, threshold: float = THRESHOLD,
            noise: int = NOISE, guarantee: int = GUARANTEE) -> Report:
    """Compare every pair of ``entries``, file by file; the file pairs at or above ``threshold``."""
    if guarantee < noise:
        raise ValueError(f"the guarantee threshold ({guarantee}) is below the noise threshold ({noise})")
    texts, problems = collect(lab, entries)
    window = guarantee - noise + 1
    prints: dict[str, dict[str, CodeFingerprint]] = {}
    for f, text in boilerplate(lab).items():
        ignore = _hashes(f, text, noise)
        for sub, files in texts.items():
            if f in files:
                prints.setdefault(sub, {})[f] = CodeFingerprint(f, noise, window, boilerplate=ignore,
                                                                fp=io.StringIO(files[f]))
    matches = []
    ids = [e.id for e in entries]
    raw: dict[tuple[str, str], str] = {}
    for a, b in itertools.combinations(ids, 2):
        for f in lab.manifest.student_files:
            fa, fb = prints.get(a, {}).get(f), prints.get(b, {}).get(f)
            if fa is None or fb is None:
                continue
            tokens, (sim_a, sim_b), (slices_a, slices_b) = compare_files(fa, fb)
            if tokens and max(sim_a, sim_b) >= threshold:
                matches.append(Match(a, b, f, float(sim_a), float(sim_b), int(tokens),
                                     _highlighted(fa.raw_code, slices_a), _highlighted(fb.raw_code, slices_b),
                                     slices_a, slices_b))
                raw[(a, f)], raw[(b, f)] = fa.raw_code, fb.raw_code
    matches.sort(key=lambda m: (-m.score, m.a, m.b, m.file))
    return Report(lab, ids, threshold, noise, guarantee, matches, problems, cases(matches, raw))


def cases(matches: list[Match], raw: dict[tuple[str, str], str]) -> list[Case]:
    """The connected groups of the flagged pairs (union-find), each member's files with every
    passage it shares inside its group highlighted; largest first, then highest score."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for m in matches:
        parent[root(m.a)] = root(m.b)
    groups: dict[str, list[Match]] = {}
    for m in matches:
        groups.setdefault(root(m.a), []).append(m)
    found = []
    for ms in groups.values():
        shared: dict[tuple[str, str], list[np.ndarray]] = {}
        for m in ms:
            shared.setdefault((m.a, m.file), []).append(m.slices_a)
            shared.setdefault((m.b, m.file), []).append(m.slices_b)
        passages = {k: _highlighted(raw[k], _union(v)) for k, v in sorted(shared.items()) if k in raw}
        found.append(Case(sorted({x for m in ms for x in (m.a, m.b)}), ms, passages))
    return sorted(found, key=lambda c: (-len(c.members), -c.score, c.members))


def _union(slices: list[np.ndarray | None]) -> np.ndarray:
    """copydetect's runs (2 x n: starts, ends) of several pairs as one sorted set of disjoint runs."""
    runs = sorted((int(s), int(e)) for a in slices if a is not None and a.size for s, e in zip(a[0], a[1]))
    merged: list[list[int]] = []
    for s, e in runs:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return np.array(merged, dtype=int).T.reshape(2, -1)


def _highlighted(code: str, slices) -> str:
    if slices is None or not np.asarray(slices).size:
        return html.escape(code)
    text, _ = highlight_overlap(code, slices, "<mark>", "</mark>", escape_html=True)
    return text


def csv_text(report: Report) -> str:
    """similarity.csv: a BOM (so a spreadsheet reads it as UTF-8), then one row per flagged file pair,
    by case (its number in the report), highest share first within it."""
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(COLUMNS)
    for m in sorted(report.matches, key=lambda m: (report.case_of(m.a), -m.score, m.a, m.b, m.file)):
        out.writerow([str(report.case_of(m.a)), text_cell(m.a), text_cell(m.b), text_cell(m.file),
                      f"{m.similarity_a:.3f}", f"{m.similarity_b:.3f}", str(m.tokens)])
    return "\ufeff" + buf.getvalue()


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1400px; padding: 0 1em; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .2em .6em; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.pair { display: flex; gap: 1em; } .pair > div { flex: 1; min-width: 0; }
pre { background: #f7f7f7; padding: .5em; overflow-x: auto; font-size: 85%; }
mark { background: #f2c6b6; } details { margin: .6em 0; } summary { cursor: pointer; }
.note { color: #555; }
"""


def html_text(report: Report) -> str:
    """similarity.html: one self-contained page (inline style, no script, nothing fetched)."""
    e = html.escape
    m_ = report.lab.manifest
    head = [f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>Similarity: {e(m_.title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>",
            f"<h1>Similarity report: {e(m_.title)}</h1>",
            f"<p>{report.pairs_compared} pairs of {len(report.submissions)} submissions compared; "
            f"<b>{report.pairs_flagged}</b> flagged (a file with similarity &ge; {report.threshold:.0%} "
            f"on either side), in <b>{len(report.clusters)}</b> case(s).</p>",
            "<p class=\"note\">This report flags; it does not grade. A flagged pair is a pair to read, "
            "not a finding: shared code can have innocent causes (a study group's discussion, a "
            "common tutorial). Compared: each declared student file, as the grader stages it, with "
            "the same file of every other submission; the stub's text and the lab's public lines "
            "are boilerplate and never count. Variable names, comments and layout do not matter. "
            f"Copydetect, noise threshold {report.noise}, guarantee threshold {report.guarantee} "
            "(characters of normalized code).</p>"]
    body = []
    if report.clusters:
        body.append(f"<h2>Cases</h2>\n<p class=\"note\">{len(report.clusters)} case(s): each is a group of "
                    "submissions joined by flagged pairs, to read together. Under each member, its files with "
                    "every passage it shares with another member highlighted.</p>")
        for n, c in enumerate(report.clusters, 1):
            body.append(f"<details id=\"case{n}\" open><summary><b>Case {n}</b>: {len(c.members)} submissions "
                        f"({e(', '.join(c.members))}), {c.pairs} flagged pair(s), highest {c.score:.0%}</summary>")
            for member in c.members:
                for (who, f), code in c.passages.items():
                    if who == member:
                        body.append(f"<h3>{e(member)}: {e(f)}</h3><pre><code>{code}</code></pre>")
            body.append("</details>")
    if report.matches:
        body.append("<h2>Flagged file pairs</h2>\n<table>\n<tr><th>#</th><th>case</th><th>submission a</th>"
                    "<th>submission b</th><th>file</th><th>a shares</th><th>b shares</th>"
                    "<th>matched tokens</th></tr>")
        for n, m in enumerate(report.matches, 1):
            body.append(f"<tr><td><a href=\"#m{n}\">{n}</a></td><td><a href=\"#case{report.case_of(m.a)}\">"
                        f"{report.case_of(m.a)}</a></td><td>{e(m.a)}</td><td>{e(m.b)}</td>"
                        f"<td>{e(m.file)}</td><td class=\"n\">{m.similarity_a:.0%}</td>"
                        f"<td class=\"n\">{m.similarity_b:.0%}</td><td class=\"n\">{m.tokens}</td></tr>")
        body.append("</table>\n<h2>Shared code</h2>\n<p class=\"note\">Highlighted: the runs each file "
                    "shares with the other (boilerplate excluded).</p>")
        for n, m in enumerate(report.matches, 1):
            body.append(f"<details id=\"m{n}\"><summary>#{n} {e(m.a)} and {e(m.b)}: {e(m.file)} "
                        f"({m.similarity_a:.0%} / {m.similarity_b:.0%})</summary>\n<div class=\"pair\">"
                        f"<div><h3>{e(m.a)}</h3><pre><code>{m.code_a}</code></pre></div>"
                        f"<div><h3>{e(m.b)}</h3><pre><code>{m.code_b}</code></pre></div></div></details>")
    else:
        body.append("<p>No pair reaches the threshold.</p>")
    if report.problems:
        body.append("<h2>Files not compared</h2>\n<ul>")
        for sub, problems in sorted(report.problems.items()):
            body.append(f"<li>{e(sub)}: {e('; '.join(problems))}</li>")
        body.append("</ul>")
    return "\n".join(head + body + ["</body>\n</html>\n"])


def write(report: Report, out_dir: Path) -> tuple[Path, Path]:
    """Write similarity.csv and similarity.html in ``out_dir``; their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = out_dir / CSV_NAME, out_dir / HTML_NAME
    atomic_write(paths[0], csv_text(report))
    atomic_write(paths[1], html_text(report))
    return paths
