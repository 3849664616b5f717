"""`autograder similarity`: copies are flagged through renamed variables and stripped comments,
independent solutions and untouched stubs are not, the CSV is safe in a spreadsheet, and bad
input exits 2.

The toy contract (two one-line functions) is too small for fingerprints to mean anything, so
these tests give the toy lab (a private copy) a longer marked reference, and write realistic
student files from its stub: seven functions, 60 to 90 lines a file.
"""

from __future__ import annotations

import csv
import io
import zipfile
from pathlib import Path

import pytest

from autograder.batch import similarity
from autograder.core import stubs
from autograder.cli import main
from autograder.grading import staging

REFERENCE = '''\
"""Toy lab: small numerical helpers (the contract; its stub is generated from this file)."""
import numpy as np


def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise a + b, float64."""
    ### BEGIN SOLUTION
    left = np.asarray(a, dtype=np.float64)
    right = np.asarray(b, dtype=np.float64)
    return left + right
    ### END SOLUTION


def norm(x: np.ndarray) -> float:
    """Euclidean norm of x, as a Python float."""
    ### BEGIN SOLUTION
    values = np.asarray(x, dtype=np.float64).ravel()
    total = 0.0
    for v in values:  # accumulate the squares one by one
        total += v * v
    return float(np.sqrt(total))
    ### END SOLUTION


def softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax of z along ``axis``, float64; subtract the maximum first so exp never overflows."""
    ### BEGIN SOLUTION
    z = np.asarray(z, dtype=np.float64)
    shifted = z - np.max(z, axis=axis, keepdims=True)  # numerical stability
    exps = np.exp(shifted)
    return exps / np.sum(exps, axis=axis, keepdims=True)
    ### END SOLUTION


def moving_average(x: np.ndarray, window: int) -> np.ndarray:
    """Means of every ``window`` consecutive values of x (len(x) - window + 1 of them).

    Raises ValueError when window < 1."""
    ### BEGIN SOLUTION
    if window < 1:
        raise ValueError("window must be at least 1")
    data = np.asarray(x, dtype=np.float64)
    csum = np.cumsum(np.insert(data, 0, 0.0))  # csum[i] = sum of the first i values
    out = (csum[window:] - csum[:-window]) / window
    return out
    ### END SOLUTION


def clip_by_norm(g: np.ndarray, max_norm: float) -> np.ndarray:
    """g scaled down so that its norm is at most max_norm (a copy of g when it already is)."""
    ### BEGIN SOLUTION
    g = np.asarray(g, dtype=np.float64)
    current = norm(g)
    if current <= max_norm or current == 0.0:
        return g.copy()
    scale = max_norm / current
    return g * scale
    ### END SOLUTION


def pairwise_distances(points: np.ndarray) -> np.ndarray:
    """The n x n matrix of Euclidean distances between the rows of ``points``."""
    ### BEGIN SOLUTION
    pts = np.asarray(points, dtype=np.float64)
    n = pts.shape[0]
    result = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):  # the matrix is symmetric: fill both halves at once
            d = norm(pts[i] - pts[j])
            result[i, j] = d
            result[j, i] = d
    return result
    ### END SOLUTION


def sgd_step(params: list, grads: list, lr: float, momentum: float, velocity: list) -> tuple[list, list]:
    """One step of SGD with (heavy-ball) momentum: v <- momentum * v + g; p <- p - lr * v.

    Returns the new parameters and the new velocities, as lists; the inputs are not changed."""
    ### BEGIN SOLUTION
    new_params, new_velocity = [], []
    for p, g, v in zip(params, grads, velocity):
        v = momentum * v + g
        new_velocity.append(v)
        new_params.append(p - lr * v)
    return new_params, new_velocity
    ### END SOLUTION
'''

# A copy of the reference's code with every local renamed, its comments stripped and its
# layout changed: what a student who copied a classmate and "disguised" it hands in.
DISGUISED = [
    """\
    first = np.asarray(a, dtype=np.float64)
    second = np.asarray(b,dtype=np.float64)
    return first+second""",
    """\
    vals = np.asarray(x, dtype=np.float64).ravel()
    acc = 0.0
    for item in vals:
        acc += item * item
    return float(np.sqrt(acc))""",
    """\
    z = np.asarray(z, dtype=np.float64)
    moved = z - np.max(z, axis=axis,
                       keepdims=True)
    e = np.exp(moved)
    return e / np.sum(e, axis=axis, keepdims=True)""",
    """\
    if window < 1:
        raise ValueError("the window is too small")
    arr = np.asarray(x, dtype=np.float64)
    running = np.cumsum(np.insert(arr, 0, 0.0))
    res = (running[window:] - running[:-window]) / window
    return res""",
    """\
    g = np.asarray(g, dtype=np.float64)
    length = norm(g)
    if length <= max_norm or length == 0.0:
        return g.copy()
    factor = max_norm / length
    return g * factor""",
    """\
    p = np.asarray(points, dtype=np.float64)
    count = p.shape[0]
    dist = np.zeros((count, count))
    for r in range(count):
        for c in range(r + 1, count):
            dd = norm(p[r] - p[c])
            dist[r, c] = dd
            dist[c, r] = dd
    return dist""",
    """\
    out_p, out_v = [], []
    for w, dw, vel in zip(params, grads, velocity):
        vel = momentum * vel + dw
        out_v.append(vel)
        out_p.append(w - lr * vel)
    return out_p, out_v""",
]

# Correct too, written independently, in another style.
INDEPENDENT = [
    """\
    # numpy broadcasts and converts for us
    return np.add(np.array(a, dtype=float), np.array(b, dtype=float))""",
    """\
    return float(np.linalg.norm(np.asarray(x, dtype=float)))""",
    """\
    arr = np.array(z, dtype=float)
    m = arr.max(axis=axis, keepdims=True)
    e = np.exp(arr - m)
    s = e.sum(axis=axis, keepdims=True)
    return e / s""",
    """\
    arr = list(map(float, x))
    if window <= 0:
        raise ValueError(f"bad window {window}")
    averages = []
    for start in range(len(arr) - window + 1):
        chunk = arr[start:start + window]
        averages.append(sum(chunk) / window)
    return np.array(averages)""",
    """\
    vec = np.array(g, dtype=float)
    size = np.sqrt((vec ** 2).sum())
    factor = min(1.0, max_norm / size) if size > 0 else 1.0
    return vec * factor""",
    """\
    pts = np.array(points, dtype=float)
    diff = pts[:, None, :] - pts[None, :, :]  # every pair of rows at once
    return np.sqrt((diff ** 2).sum(axis=-1))""",
    """\
    velocity = [momentum * vel + grad for vel, grad in zip(velocity, grads)]
    params = [param - lr * vel for param, vel in zip(params, velocity)]
    return params, velocity""",
]


def filled(stub: str, bodies: list[str]) -> str:
    """The stub with its n-th ``raise NotImplementedError`` replaced by the n-th body."""
    parts = stub.split(f"    {stubs.STUB_BODY}\n")
    assert len(parts) == len(bodies) + 1, "one body per function to write"
    return parts[0] + "".join(body + "\n" + rest for body, rest in zip(bodies, parts[1:]))


@pytest.fixture
def lab(toy_root, toy_lab):
    (toy_lab.solution_dir / "toy.py").write_text(REFERENCE, encoding="utf-8")
    return toy_lab


@pytest.fixture
def texts(lab):
    stub = stubs.texts(lab)["toy.py"]
    return {
        "stub": stub,
        "reference": stubs.unmarked(REFERENCE),  # alice hands in the reference's code, comments and all
        "disguised": filled(stub, DISGUISED),
        "independent": filled(stub, INDEPENDENT),
    }


def put(folder: Path, name: str, text: str, *, as_zip: bool = False) -> None:
    if as_zip:  # as a zip tool makes it: one top folder, and a stray file that is not compared
        with zipfile.ZipFile(folder / f"{name}.zip", "w") as z:
            z.writestr(f"{name}/toy.py", text)
            z.writestr(f"{name}/conftest.py", text)
    else:
        (folder / name).mkdir(parents=True)
        (folder / name / "toy.py").write_text(text, encoding="utf-8")


@pytest.fixture
def batch(tmp_path, texts) -> Path:
    subs = tmp_path / "subs"
    subs.mkdir()
    put(subs, "alice", texts["reference"])
    put(subs, "bob", texts["disguised"], as_zip=True)
    put(subs, "carol", texts["independent"])
    put(subs, "stub1", texts["stub"])
    put(subs, "stub2", texts["stub"])
    return subs


def test_the_student_files_are_long_enough(texts):
    for name in ("reference", "disguised", "independent"):
        assert len(texts[name].splitlines()) >= 60, name
        assert len(texts[name].splitlines()) - len(texts["stub"].splitlines()) >= 15, name


def scores(report) -> dict[frozenset, tuple[float, float]]:
    return {frozenset((m.a, m.b)): (m.similarity_a, m.similarity_b) for m in report.matches}


def test_disguised_copy_flagged_independent_and_stubs_not(lab, batch):
    report = similarity.compare(lab, staging.discover(batch))
    assert report.submissions == ["alice", "bob", "carol", "stub1", "stub2"]
    assert report.pairs_compared == 10
    flagged = scores(report)
    assert set(flagged) == {frozenset(("alice", "bob"))}, flagged
    assert min(flagged[frozenset(("alice", "bob"))]) >= 0.9  # renamed, no comments, reformatted: still a copy
    assert report.pairs_flagged == 1
    assert report.matches[0].file == "toy.py" and report.matches[0].tokens > 100


def test_what_is_shared_below_the_threshold(lab, batch):
    """At threshold 0 every pair that shares anything is listed: the independent solution
    shares little with the others, and the untouched stubs share nothing at all."""
    report = similarity.compare(lab, staging.discover(batch), threshold=0.0)
    shared = scores(report)
    for other in ("alice", "bob"):
        assert max(shared.get(frozenset(("carol", other)), (0.0, 0.0))) < 0.3
    assert not [pair for pair in shared if pair & {"stub1", "stub2"}]  # the stub is boilerplate


def test_boilerplate_is_what_keeps_stubs_apart(lab, batch, monkeypatch):
    """Without the stub as boilerplate, the shared contract makes the two stubs identical."""
    monkeypatch.setattr(similarity, "boilerplate", lambda lab: {f: "" for f in lab.manifest.student_files})
    flagged = scores(similarity.compare(lab, staging.discover(batch)))
    assert flagged[frozenset(("stub1", "stub2"))] == (1.0, 1.0)


def test_command_writes_csv_and_html(lab, batch, texts, tmp_path, capsys):
    put(batch, "=cmd|x", texts["disguised"])  # a name a spreadsheet would run as a formula
    out = tmp_path / "sim"
    assert main(["similarity", "labx", str(batch), "--out", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    assert "\n" not in line
    assert "15 pairs of 6 submissions compared, 3 flagged" in line
    assert str(out / "similarity.csv") in line and str(out / "similarity.html") in line

    raw = (out / "similarity.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    assert list(rows[0]) == similarity.COLUMNS
    pairs = {frozenset((r["submission_a"], r["submission_b"])) for r in rows}
    assert pairs == {frozenset(p) for p in (("alice", "bob"), ("alice", "'=cmd|x"), ("bob", "'=cmd|x"))}
    assert not [r for r in rows for v in r.values() if v.startswith(("=", "+", "-", "@"))]
    score = [max(float(r["similarity_a"]), float(r["similarity_b"])) for r in rows]
    assert score == sorted(score, reverse=True) and min(score) >= similarity.THRESHOLD

    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert "<mark>" in page and "=cmd|x" in page
    assert not [bad for bad in ("<script", "<link", "http://", "https://", "src=") if bad in page]


def test_threshold_option(lab, batch, tmp_path, capsys):
    """A lower threshold lists the little the independent solution shares with the copies (the
    stubs still share nothing); one outside 0..1 is a usage error."""
    assert main(["similarity", "labx", str(batch), "--out", str(tmp_path / "o"), "--threshold", "0.1"]) == 0
    assert "10 pairs of 5 submissions compared, 3 flagged in 1 case(s) (similarity >= 0.1)" in capsys.readouterr().out
    rows = list(csv.DictReader(io.StringIO((tmp_path / "o" / "similarity.csv").read_text(encoding="utf-8-sig"))))
    assert [frozenset((r["submission_a"], r["submission_b"])) for r in rows][1:] == [
        frozenset(("alice", "carol")), frozenset(("bob", "carol"))]
    with pytest.raises(SystemExit) as usage:
        main(["similarity", "labx", str(batch), "--out", str(tmp_path / "o"), "--threshold", "2"])
    assert usage.value.code == 2


def test_html_escapes_student_text(lab):
    m = similarity.Match("<script>a</script>", "b&c", "toy.py", 0.9, 0.8, 120, "x &lt; 1", "y")
    report = similarity.Report(lab, ["<script>a</script>", "b&c"], 0.5, 25, 25, [m],
                               {"<img src=x>": ["file toy.py is missing from the submission"]})
    page = similarity.html_text(report)
    assert "<script>" not in page and "&lt;script&gt;a&lt;/script&gt;" in page
    assert "b&amp;c" in page and "<img" not in page and "&lt;img src=x&gt;" in page


def test_missing_file_is_reported_not_compared(lab, batch, tmp_path):
    (batch / "dave").mkdir()
    (batch / "dave" / "other.py").write_text("x = 1\n")
    report = similarity.compare(lab, staging.discover(batch))
    assert "dave" in report.submissions and report.pairs_compared == 15
    assert report.problems == {"dave": ["file toy.py is missing from the submission"]}
    assert "dave" in similarity.html_text(report)


@pytest.mark.parametrize("case", ["unknown lab", "missing folder", "one submission", "no submission"])
def test_errors_exit_2(lab, batch, tmp_path, capsys, case):
    one = tmp_path / "one"
    put(one, "alice", "x = 1\n")
    (tmp_path / "empty").mkdir()
    args = {"unknown lab": ["nolab", str(batch)],
            "missing folder": ["labx", str(tmp_path / "nowhere")],
            "one submission": ["labx", str(one)],
            "no submission": ["labx", str(tmp_path / "empty")]}[case]
    assert main(["similarity", *args, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("autograder similarity: ") and "\n" not in err
    assert {"unknown lab": "no lab 'nolab'", "missing folder": "no folder",
            "one submission": "1 submission", "no submission": "0 submission"}[case] in err
    assert not (tmp_path / "out").exists()


def test_copies_are_grouped_into_cases_with_their_shared_passages(lab, batch, texts, tmp_path):
    """Five copies of one file (every pair flagged) are one case of five, not ten findings; a second
    pair of copies is a second case; each member's file shows what it shares inside its case."""
    put(batch, "dan", texts["reference"] + "\n\ndef extra(x):\n    return [v * 2 for v in x]\n")
    put(batch, "eve", texts["disguised"], as_zip=True)
    put(batch, "fay", texts["disguised"].replace("    ", "        "))  # reindented
    put(batch, "gus", texts["independent"])  # copies carol's: the second case
    report = similarity.compare(lab, staging.discover(batch))
    assert [c.members for c in report.clusters] == [["alice", "bob", "dan", "eve", "fay"], ["carol", "gus"]]
    ring, pair = report.clusters
    assert ring.pairs == 10 and pair.pairs == 1 and report.pairs_flagged == 11
    assert {who for who, _f in ring.passages} == set(ring.members)
    assert all("<mark>" in html for html in ring.passages.values())
    rows = list(csv.DictReader(io.StringIO(similarity.csv_text(report)[1:])))
    assert [r["case"] for r in rows] == ["1"] * 10 + ["2"]
    page = similarity.html_text(report)
    assert "<b>Case 1</b>: 5 submissions (alice, bob, dan, eve, fay), 10 flagged pair(s)" in page
    assert "<b>Case 2</b>: 2 submissions (carol, gus), 1 flagged pair(s)" in page
    assert main(["similarity", "labx", str(batch), "--out", str(tmp_path / "o")]) == 0
