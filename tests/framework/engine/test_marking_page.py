"""The marking page (``autograder mark``) in a real browser: Playwright driving the system's
Chromium (``.ci/run`` installs Debian's package where it is missing).

Three students marked with the keyboard and the form, the page reloaded and the marks still
there; two TAs at once, neither losing a mark; a hostile answer (a script, an image, an event
handler, a flood of output, HTML and SVG outputs) shown as inert text.  The output folder is
made as ``grade`` makes it (``manual.extract`` on the toy lab with a written question),
without grading anything: the page reads only the answers and the record.
"""

from __future__ import annotations

import base64
import json
import shutil
import threading
from pathlib import Path

import pytest

from autograder.batch import manual, record
from autograder.core import labs

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (.ci/run installs Debian's "
                                                         "chromium package; `apt-get install chromium`)")

WRITTEN = (Path(__file__).parents[1] / "fixtures" / "written_question.toml").read_text() + '''
[[questions]]
id = "second"
title = "A second written answer"
points = 1
manual = true
'''

HOSTILE_TEXT = ('<script>window.__pwned = "script"</script> <img src=x onerror="window.__pwned=\'img\'"> '
                '![tracker](http://127.0.0.1:9/pixel.png) [click](javascript:window.__pwned=1) '
                '<style>body{display:none}</style>')
PNG_1x1 = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")).decode()


def notebook(essay: str, second: str = "A short one.", outputs: list | None = None) -> bytes:
    cells = [
        {"cell_type": "markdown", "id": "t", "metadata": {}, "source": "# Toy lab"},
        {"cell_type": "code", "id": "c", "metadata": {}, "execution_count": 1, "source": "print(norm)",
         "outputs": outputs if outputs is not None else [{"output_type": "stream", "name": "stdout",
                                                          "text": "measured 10.0\n"}]},
        {"cell_type": "markdown", "id": "a", "metadata": {"tags": ["answer:essay"]}, "source": essay},
        {"cell_type": "markdown", "id": "b", "metadata": {"tags": ["answer:second"]}, "source": second},
    ]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


HOSTILE_OUTPUTS = [
    {"output_type": "stream", "name": "stdout", "text": "flood " * 250_000},  # 1.5 MB: under the 2 MiB a file may be
    {"output_type": "display_data", "metadata": {},
     "data": {"text/html": "<script>window.__pwned='html-output'</script><b>bold</b>",
              "image/svg+xml": "<svg onload=\"window.__pwned='svg'\"></svg>",
              "application/javascript": "window.__pwned='js-output'",
              "text/plain": "<IPython.core.display.HTML object>"}},
    {"output_type": "display_data", "metadata": {}, "data": {"image/png": PNG_1x1, "text/plain": "<Figure>"}},
    {"output_type": "display_data", "metadata": {}, "data": {"image/png": base64.b64encode(b"<svg/>").decode()}},
    {"output_type": "error", "ename": "ValueError", "evalue": "x",
     "traceback": ["\x1b[0;31mValueError\x1b[0m: <script>window.__pwned='traceback'</script>"]},
]


@pytest.fixture
def marking(toy_root, tmp_path):
    """(base URL, output folder) of a served page over four students, one of them hostile."""
    from werkzeug.serving import make_server

    from autograder.batch.marking.app import create_app

    lab_dir = toy_root / "assignments" / "labx_toy"
    toml = lab_dir / "lab.toml"
    toml.write_text(toml.read_text().replace("[[variants]]", WRITTEN + "\n[[variants]]", 1))
    (lab_dir / "labx_toy.ipynb").write_bytes(notebook("*Your answer here.*", "*Your answer here.*", []))
    lab = labs.get("labx", toy_root)
    out = tmp_path / "out"
    handed_in = {
        "s1_an": {"labx_toy.ipynb": notebook("Because of **Pythagoras**.")},
        "s2_binh": {"labx_toy.ipynb": notebook("It is the length.")},
        "s3_chi": {"labx_toy.ipynb": notebook("No idea, sorry.")},
        "s4_mallory": {"labx_toy.ipynb": notebook(HOSTILE_TEXT, outputs=HOSTILE_OUTPUTS)},
    }
    manual.extract(out, lab.manifest, lab_dir, handed_in)
    server = make_server("127.0.0.1", 0, create_app(lab, out), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", out
    server.shutdown()


@pytest.fixture
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        yield b
        b.close()


def _name(page, who: str):
    page.fill("#marker", who)
    page.dispatch_event("#marker", "change")


def test_three_students_marked_reload_and_the_marks_are_kept(marking, browser):
    base, out = marking
    page = browser.new_context().new_page()
    page.goto(base + "/")
    assert page.inner_text("#submission") == "s1_an"  # the first unmarked answer of the first question
    assert "Pythagoras" in page.inner_text(".answer")
    assert "says why" in page.inner_text(".rubric")
    assert "measured 10.0" in page.inner_text(".notebook")  # the student's own notebook, with its outputs
    _name(page, "TA Lan")
    for sub, points, comment in (("s1_an", "2", "Good."), ("s2_binh", "1,5", "Say why."), ("s3_chi", "0", "")):
        assert page.inner_text("#submission") == sub
        page.fill("#points", points)
        page.fill("#comment", comment)
        with page.expect_navigation():
            page.keyboard.press("Control+Enter")  # save, then the next student
    assert page.inner_text("#submission") == "s4_mallory"
    page.goto(base + "/q/essay/s1_an")
    assert page.input_value("#points") == "2" and page.input_value("#comment") == "Good."
    assert "TA Lan" in page.inner_text("#status")
    assert page.inner_text("#marked") == "3" and page.inner_text("#to-mark") == "1"
    page.goto(base + "/q/essay/s2_binh")
    assert page.input_value("#points") == "1.5"
    marks = record.read_marks(out)
    assert {k: (e.points, e.comment, e.marker) for k, e in marks.items()} == {
        ("s1_an", "essay"): (2.0, "Good.", "TA Lan"), ("s2_binh", "essay"): (1.5, "Say why.", "TA Lan"),
        ("s3_chi", "essay"): (0.0, "", "TA Lan")}
    # the keys move between students and questions
    page.keyboard.press("ArrowRight")
    page.wait_for_url("**/q/essay/s3_chi")
    page.keyboard.press("]")
    page.wait_for_url("**/q/second/s3_chi")
    page.keyboard.press("p")
    page.wait_for_url("**/q/second/s2_binh")


def test_two_tas_at_once_lose_neither_mark(marking, browser):
    base, out = marking
    lan, minh = browser.new_context().new_page(), browser.new_context().new_page()
    lan.goto(base + "/q/essay/s1_an")
    minh.goto(base + "/q/essay/s1_an")  # both opened the same answer
    _name(lan, "Lan")
    _name(minh, "Minh")
    lan.fill("#points", "2")
    lan.click("#save")
    lan.wait_for_url("**/q/essay/s2_binh")
    minh.fill("#points", "1")
    minh.click("#save")  # Minh's page still shows no mark: his save must not silently replace Lan's
    minh.wait_for_selector("#status.conflict")
    assert "Lan marked this 2" in minh.inner_text("#status")
    assert record.read_marks(out)[("s1_an", "essay")].points == 2.0
    # meanwhile each marks other students: both kept
    lan.fill("#points", "1")
    lan.click("#save")
    lan.wait_for_url("**/q/essay/s3_chi")
    minh.goto(base + "/q/second/s1_an")
    minh.fill("#points", "1")
    minh.click("#save")
    minh.wait_for_url("**/q/second/s2_binh")
    marks = record.read_marks(out)
    assert {k: (e.points, e.marker) for k, e in marks.items()} == {
        ("s1_an", "essay"): (2.0, "Lan"), ("s2_binh", "essay"): (1.0, "Lan"), ("s1_an", "second"): (1.0, "Minh")}
    # a conflict settled on purpose: saving again replaces the other marker's mark
    minh.goto(base + "/q/essay/s1_an")
    minh.fill("#points", "1")
    minh.click("#save")
    minh.wait_for_selector("#status.conflict")
    minh.click("#save")
    minh.wait_for_url("**/q/essay/s2_binh")
    assert record.read_marks(out)[("s1_an", "essay")].marker == "Minh"


def test_a_hostile_answer_renders_inert(marking, browser):
    base, _out = marking
    context = browser.new_context()
    requests = []
    context.on("request", lambda r: requests.append(r.url))
    page = context.new_page()
    page.goto(base + "/q/essay/s4_mallory")
    assert page.evaluate("window.__pwned") is None  # nothing of the student's ran
    answer = page.inner_text(".answer")
    assert "<script>" in answer and "onerror" in answer  # shown as the text it is
    assert page.locator(".answer script, .answer img, .answer a, .answer style").count() == 0
    assert page.locator("script").count() == 1  # the page's own, from this server
    srcs = page.eval_on_selector_all("img", "els => els.map(e => e.getAttribute('src'))")
    assert len(srcs) == 1 and srcs[0].startswith("data:image/png;base64,")  # the real PNG; the fake one not shown
    notebook_text = page.inner_text(".notebook")
    assert "more characters not shown" in notebook_text  # the flood is cut
    assert "text/html" in notebook_text and "image/svg+xml" in notebook_text  # named, never rendered
    assert "ValueError: <script>" in notebook_text  # a traceback: its colours gone, its text as text
    assert page.locator(".notebook b, .notebook svg").count() == 0
    assert all(url.startswith(base) or url.startswith("data:") for url in requests), requests
    assert page.is_visible("#mark-form")  # a student's <style> hides nothing
