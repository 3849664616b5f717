"""A student's notebook and answers as HTML that does nothing: text, never markup of theirs.

Whatever a student hands in is shown to a TA's browser, so nothing of theirs may become a
tag, a script, a style, a link or a request:

- Markdown is rendered by markdown-it with raw HTML, links, autolinks and images switched
  off: ``<script>`` shows as text, ``![x](http://...)`` as the words, and no address of theirs
  is ever fetched or clickable.
- Code and text outputs are escaped (Jinja's ``escape``) and cut at :data:`MAX_OUTPUT`
  characters each, :data:`MAX_NOTEBOOK` in all, so a flooded output cannot stall the page.
- Rich outputs: a PNG or JPEG is shown from its own bytes (a ``data:`` URL, checked to be that
  image type by its first bytes, at most :data:`MAX_IMAGE` bytes); HTML, SVG, JavaScript and
  widget outputs are never rendered, only named, with their plain-text alternative if any.

The page's Content-Security-Policy (``marking/app.py``) is the second wall: no inline script,
no remote anything, so an escaping slip still runs nothing.
"""

from __future__ import annotations

import base64
import binascii
import re

from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from autograder.batch import manual
from autograder.core import untrusted

MAX_OUTPUT = 20_000  # characters of one output shown; the rest is counted, not shown
MAX_NOTEBOOK = 400_000  # characters of a whole notebook shown
MAX_IMAGE = 1_000_000  # bytes of one image shown
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]?")  # a traceback's terminal colours (linear: no nested repeats)
IMAGES = {"image/png": b"\x89PNG\r\n\x1a\n", "image/jpeg": b"\xff\xd8\xff"}

_markdown = MarkdownIt("commonmark", {"html": False}).disable(["image", "link", "autolink", "html_inline",
                                                               "html_block"])


def markdown(text: str) -> Markup:
    """A student's Markdown as inert HTML (see the module docstring)."""
    return Markup(_markdown.render(text[:MAX_OUTPUT]))


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value if isinstance(value, str) else ""


def _cut(text: str, budget: list[int]) -> Markup:
    """``text`` escaped, cut to what is left of the notebook's budget and :data:`MAX_OUTPUT`."""
    room = max(0, min(MAX_OUTPUT, budget[0]))
    budget[0] -= min(len(text), room)
    shown = escape(text[:room])
    if len(text) > room:
        shown += escape(f"\n[... {len(text) - room:,} more characters not shown]")
    return Markup(shown)


def _image(mime: str, data) -> Markup | None:
    raw = _text(data).strip()
    if len(raw) > MAX_IMAGE * 4 // 3 + 4:
        return None
    try:
        decoded = base64.b64decode(raw, validate=False)
    except (binascii.Error, ValueError):
        return None
    if not decoded.startswith(IMAGES[mime]):
        return None
    return Markup('<img class="output-image" alt="" src="data:{};base64,{}">').format(
        mime, base64.b64encode(decoded).decode("ascii"))


def _output(output: dict, budget: list[int]) -> Markup:
    kind = output.get("output_type")
    if kind == "stream":
        return Markup('<pre class="output">{}</pre>').format(_cut(_text(output.get("text")), budget))
    if kind == "error":
        lines = output.get("traceback") if isinstance(output.get("traceback"), list) else []
        text = "\n".join(t for t in lines if isinstance(t, str)) or f"{output.get('ename')}: {output.get('evalue')}"
        return Markup('<pre class="output error">{}</pre>').format(_cut(ANSI.sub("", text), budget))
    data = output.get("data") if isinstance(output.get("data"), dict) else {}
    for mime in IMAGES:
        if mime in data and (img := _image(mime, data[mime])) is not None:
            return img
    shown = Markup()
    if "text/plain" in data:
        shown += Markup('<pre class="output">{}</pre>').format(_cut(_text(data["text/plain"]), budget))
    others = sorted(m for m in data if m != "text/plain" and m not in IMAGES)
    if others:
        shown += Markup('<p class="not-shown">{}</p>').format(f"[{', '.join(others)} output not shown]")
    return shown


def notebook(data: bytes) -> Markup:
    """A handed-in notebook, its cells and their outputs, as inert HTML; a notebook that cannot be
    read (``core/untrusted.py``: size, depth and count bounded) is one line that says why."""
    try:
        nb = untrusted.load_json(data, max_depth=manual.MAX_NESTING)
    except untrusted.Unreadable as exc:
        return Markup('<p class="not-shown">{}</p>').format(f"This notebook could not be read: {exc}")
    cells = nb.get("cells") if isinstance(nb, dict) and isinstance(nb.get("cells"), list) else []
    budget = [MAX_NOTEBOOK]
    html = Markup()
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        source = _text(cell.get("source"))
        tags = (cell.get("metadata") or {}).get("tags") if isinstance(cell.get("metadata"), dict) else None
        tag = " ".join(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else ""
        if cell.get("cell_type") == "markdown":
            body = markdown(source) if budget[0] > 0 else Markup()
            budget[0] -= min(len(source), MAX_OUTPUT)
            html += Markup('<section class="cell markdown" data-tags="{}">{}</section>').format(tag, body)
        elif cell.get("cell_type") == "code":
            outputs = cell.get("outputs") if isinstance(cell.get("outputs"), list) else []
            shown = Markup().join(_output(o, budget) for o in outputs if isinstance(o, dict))
            html += Markup('<section class="cell code" data-tags="{}"><pre class="source">{}</pre>{}</section>'
                           ).format(tag, _cut(source, budget), shown)
    return html
