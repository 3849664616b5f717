"""The marking page's Flask application: what each route shows, and the one save.

- ``GET /``: the first question, at its first unmarked answer.
- ``GET /q/<question>/<submission>``: one answer to mark (the page).
- ``POST /api/mark``: one mark (points and comment, or none: taken away) for one
  (submission, question), by the marker named in the request, through
  ``record.merge_marks``: the marks file's own writer, under the record's lock.  A mark that
  another marker gave differently since the page was loaded is not replaced: the answer is a
  conflict (409) with the mark on record, and the TA saves again to replace it.

It serves only 127.0.0.1.  Every response carries a Content-Security-Policy that allows the
page's own script and style and nothing else (no inline script, no remote address, images
only from ``data:``), so a student's text can neither run nor fetch anything even if it
slipped through ``render``.  A save must carry the page's token in a header of its own, which
a page of another origin cannot send without a CORS preflight that this app never answers; and
a request whose ``Host`` is not this machine's own name (DNS rebinding) is refused.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from flask import Flask, abort, jsonify, redirect, render_template, request, url_for
from markupsafe import Markup

from autograder.batch import manual, predictions_report, record
from autograder.batch.marking import render
from autograder.core.labs import Lab

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
TOKEN_HEADER = "X-Marking-Token"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")  # the names a request to this machine carries in Host


@dataclass(frozen=True)
class Marking:
    """What the page reads: the lab, the output folder, the submissions with answers to mark."""
    lab: Lab
    out: Path

    @property
    def manifest(self):
        return self.lab.manifest

    def submissions(self) -> list[str]:
        folder = self.out / manual.FOLDER / manual.ANSWERS
        return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []

    def notebooks(self, sub: str) -> list[tuple[str, bytes]]:
        folder = self.out / manual.FOLDER / manual.NOTEBOOKS / sub
        return [(p.name, p.read_bytes()) for p in sorted(folder.iterdir()) if p.is_file()] if folder.is_dir() else []


def _entry_json(e: record.Entry | None) -> dict | None:
    return None if e is None else {"points": e.points, "comment": e.comment, "marker": e.marker, "at": e.at}


def _points(raw, question) -> float | None:
    """The points a save sends: None to take the mark away, else a number in the question's range."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    try:
        value = float(str(raw).replace(",", "."))  # "1,5" as a Vietnamese keyboard types it
    except ValueError:
        abort(400, f"points {raw!r} is not a number")
    if not 0 <= value <= question.points:
        abort(400, f"points {raw!r} is outside 0 to {question.points:g}")
    return value


def create_app(lab: Lab, out: Path, *, marker: str = "") -> Flask:
    """The page for ``lab``'s written answers in the output folder ``out`` (a ``grade`` run's)."""
    here = Path(__file__).parent
    app = Flask(__name__, template_folder=str(here / "templates"), static_folder=str(here / "static"))
    state = Marking(lab, Path(out))
    token = secrets.token_urlsafe(24)
    app.config.update(MAX_CONTENT_LENGTH=64 * 1024, JSON_SORT_KEYS=False)

    def question(qid: str):
        for q in state.manifest.manual:
            if q.id == qid:
                return q
        abort(404, f"no question {qid!r} marked by hand")

    def progress(qid: str, subs: list[str], marks) -> dict:
        done = sum((s, qid) in marks for s in subs)
        return {"marked": done, "to_mark": len(subs) - done, "total": len(subs)}

    @app.before_request
    def this_machine_only():
        # DNS rebinding: a page of another site whose name is made to resolve to 127.0.0.1 reaches this
        # server (on its default port) as its own origin, so it could read the page's token and save with
        # it.  Its requests carry its own name in Host: only this machine's names are served.
        if request.host.rsplit(":", 1)[0].lower() not in LOCAL_HOSTS:
            abort(400, "this page is served to this machine only: open it at http://127.0.0.1:<port>/")

    @app.after_request
    def headers(response):
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.get("/")
    def home():
        subs, manual_qs = state.submissions(), state.manifest.manual
        if not manual_qs or not subs:
            return render_template("empty.html", lab=lab.manifest.title, questions=len(manual_qs))
        marks = record.read_marks(state.out)
        q = manual_qs[0]
        first = next((s for s in subs if (s, q.id) not in marks), subs[0])
        return redirect(url_for("page", qid=q.id, sub=first))

    @app.get("/q/<qid>/<sub>")
    def page(qid: str, sub: str):
        q = question(qid)
        subs = state.submissions()
        if sub not in subs:
            abort(404, f"no submission {sub!r} with answers in {state.out}")
        rec = manual._record(state.out, sub)
        context = predictions_report.context(state.out, state.manifest, qid, [sub])
        given, absent = manual._answers(rec, qid), manual.missing(rec, qid)
        parts = []
        for part in dict.fromkeys([p for _n, p, _t in given] + absent):
            parts.append({
                "name": part, "label": manual._part_label(state.manifest, part) if part else "",
                "context": render.markdown(context[(sub, part)].lstrip("> ")) if (sub, part) in context else None,
                "missing": part in absent,
                "answers": [{"notebook": n, "html": render.markdown(t)} for n, p, t in given if p == part],
            })
        marks = record.read_marks(state.out)
        i = subs.index(sub)
        qs = state.manifest.manual
        qi = [x.id for x in qs].index(qid)
        nav = {
            "prev": url_for("page", qid=qid, sub=subs[i - 1]) if i > 0 else "",
            "next": url_for("page", qid=qid, sub=subs[i + 1]) if i + 1 < len(subs) else "",
            "next_unmarked": next((url_for("page", qid=qid, sub=s) for s in subs[i + 1:] + subs[:i]
                                   if (s, qid) not in marks), ""),
            "prev_question": url_for("page", qid=qs[qi - 1].id, sub=sub) if qi > 0 else "",
            "next_question": url_for("page", qid=qs[qi + 1].id, sub=sub) if qi + 1 < len(qs) else "",
        }
        notebooks = [{"name": name, "html": render.notebook(data)} for name, data in state.notebooks(sub)]
        entry = marks.get((sub, qid))
        return render_template(
            "page.html", lab=lab.manifest.title, question=q, questions=qs, sub=sub, subs=subs, index=i,
            parts=parts, handed_in=bool(rec.get("notebooks")), unread=rec.get("unread", []), notebooks=notebooks,
            entry=entry, seen=Markup(json.dumps(_entry_json(entry))), progress=progress(qid, subs, marks), nav=nav,
            token=token, marker=marker, rubric=render.markdown(q.rubric) if q.rubric else None)

    @app.post("/api/mark")
    def save():
        if request.headers.get(TOKEN_HEADER) != token:
            abort(403, "this page's token is missing: reload the page")
        body = request.get_json(silent=True)
        if not isinstance(body, dict):
            abort(400, "a JSON object is expected")
        sub, qid = str(body.get("submission", "")), str(body.get("question", ""))
        q = question(qid)
        subs = state.submissions()
        if sub not in subs:
            abort(404, f"no submission {sub!r}")
        who = str(body.get("marker", "")).strip()[:80]
        if not who:
            abort(400, "say who marks (the name box at the top of the page)")
        points = _points(body.get("points"), q)
        comment = str(body.get("comment", ""))[:4000]
        replace = bool(body.get("replace"))
        key = (sub, qid)
        prefer = "new" if replace else None
        if points is None:  # removing another marker's mark is a conflict too, decided under the record's lock
            merge = record.merge_marks(state.out, {}, remove=frozenset({key}), remover=who, prefer=prefer)
        else:
            entry = record.Entry(points, comment, who, record.now())
            merge = record.merge_marks(state.out, {key: entry}, prefer=prefer)
        if merge.conflicts and not replace:
            return jsonify(conflict=_entry_json(merge.conflicts[0][2])), 409
        marks = record.read_marks(state.out)
        return jsonify(entry=_entry_json(marks.get(key)), progress=progress(qid, subs, marks))

    @app.errorhandler(400)
    @app.errorhandler(403)
    @app.errorhandler(404)
    def error(exc):
        if request.path.startswith("/api/"):
            return jsonify(error=exc.description), exc.code
        return render_template("error.html", message=exc.description), exc.code

    return app
