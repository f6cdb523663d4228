"""The desk's web application (Flask): the pages, the JSON API, and who may use them (auth.py).

    app = create_app(desk)          # desk: a Desk (the settings, the index, the log, the teacher)

Every route but the login form's POST answers 401 without the token (``Authorization: Bearer``) or a
logged-in session, and shows nothing of the log; the login form is the 401 page of every route a
browser asks for. Templates are Jinja2 with autoescaping: whatever a player typed or a wiki says is
text. The pages run no script at all; the Content-Security-Policy allows none, and only the panel's own
stylesheet (by its hash).
"""
from __future__ import annotations

import base64
import hashlib
import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import urlsplit

from flask import Flask, Response, abort, g, jsonify, redirect, render_template, request, session, url_for
from markupsafe import Markup

from jarvis.config import Config
from jarvis.panel import charts, log_view, settings_edit
from jarvis.panel.auth import LoginLimiter, TokenGate, bearer_token, new_csrf_token, same_token
from jarvis.panel.teach import TeachError, Teacher

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
STYLESHEET = (HERE / "static" / "panel.css").read_text(encoding="utf-8")
OPEN_ENDPOINTS = {"login"}          # answers without a login (the form itself: 401 until logged in)
MAX_JSON = 64 * 1024


@dataclass
class Desk:
    """What the app serves: plain values, built by serve_panel (or a test)."""

    config: Config
    index_dir: Path
    log_path: Path
    teacher: Teacher
    settings_path: Path | None = None
    _searcher: object = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def searcher(self):
        from jarvis.index import Searcher

        with self._lock:
            if self._searcher is None:
                self._searcher = Searcher(self.index_dir, self.config.retrieval)
            return self._searcher

    def rows(self) -> tuple[list[log_view.Row], int]:
        return log_view.load_rows(self.log_path, self.config.log.backups, self.config.panel.likely_wrong_below)

    def close(self) -> None:
        self.teacher.rebuilder.close()
        if self._searcher is not None:
            self._searcher.close()


def create_app(desk: Desk) -> Flask:
    settings = desk.config.panel
    gate = TokenGate(settings.token, settings.min_token_length)
    limiter = LoginLimiter(settings.login_attempts, settings.login_window)
    app = Flask(__name__, template_folder=str(HERE / "templates"), static_folder=None)
    app.config.update(
        SECRET_KEY=__import__("secrets").token_bytes(32),   # per start: a restart logs every browser out
        SESSION_COOKIE_NAME="jarvis_panel",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_SECURE=settings.secure_cookie,
        PERMANENT_SESSION_LIFETIME=timedelta(hours=settings.session_hours),
        MAX_CONTENT_LENGTH=MAX_JSON,
        JSON_SORT_KEYS=False,
    )
    app.json.ensure_ascii = False
    if settings.trusted_proxies:
        from werkzeug.middleware.proxy_fix import ProxyFix

        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.trusted_proxies, x_proto=settings.trusted_proxies,
                                x_host=settings.trusted_proxies)
    style_hash = base64.b64encode(hashlib.sha256(STYLESHEET.encode("utf-8")).digest()).decode()
    policy = (f"default-src 'none'; style-src 'sha256-{style_hash}'; img-src 'self' data:; form-action 'self'; "
              "frame-ancestors 'none'; base-uri 'none'")
    app.extensions["jarvis_desk"] = desk

    def client() -> str:
        return request.remote_addr or "?"

    def wants_json() -> bool:
        return request.path.startswith("/api/")

    def refuse(status: int, message: str, retry_after: float | None = None) -> Response:
        if wants_json() or request.headers.get("Authorization"):
            response = jsonify({"error": message})
            response.status_code = status
        else:
            response = Response(login_page(message), status=status, mimetype="text/html")
        if status == 401:
            response.headers["WWW-Authenticate"] = 'Bearer realm="jarvis panel"'
        if retry_after:
            response.headers["Retry-After"] = str(int(retry_after) + 1)
        return response

    def login_page(message: str = "") -> str:
        if not session.get("csrf"):
            session["csrf"] = new_csrf_token()
        target = request.full_path.rstrip("?") if request.method == "GET" and request.endpoint != "login" else "/"
        return render_template("login.html", message=message, next=target, csrf=session["csrf"],
                               css=Markup(STYLESHEET))

    @app.before_request
    def authenticate():
        g.via = None
        if request.endpoint in OPEN_ENDPOINTS:
            return None
        header = request.headers.get("Authorization")
        if header is not None:
            wait = limiter.retry_after(client())
            if wait:
                return refuse(429, "too many wrong tokens: try again later", wait)
            if gate.accepts(bearer_token(header)):
                g.via = "token"
                return None
            limiter.failed(client())
            return refuse(401, "wrong or missing token (Authorization: Bearer <JARVIS_PANEL_TOKEN>)")
        logged_in = session.get("auth") is True and time.time() - float(session.get("at", 0)) < \
            settings.session_hours * 3600
        if not logged_in:
            session.pop("auth", None)
            return refuse(401, "log in with the panel's token" if not wants_json() else
                          "no token (Authorization: Bearer <JARVIS_PANEL_TOKEN>)")
        g.via = "session"
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            given = request.form.get("csrf") or request.headers.get("X-CSRF-Token")
            if not same_token(given, session.get("csrf")):
                return refuse_csrf()
        return None

    def refuse_csrf() -> Response:
        if wants_json():
            response = jsonify({"error": "no or wrong CSRF token: send the page's form again"})
            response.status_code = 403
            return response
        return Response(render_template("error.html", title="Refused", css=Markup(STYLESHEET), csrf="",
                                        message="This form had no valid CSRF token (it did not come from this "
                                                "panel's page). Nothing was changed.", active=""),
                        status=403, mimetype="text/html")

    @app.after_request
    def secure_headers(response: Response) -> Response:
        response.headers["Content-Security-Policy"] = policy
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        log.info("%s %s %s %s", request.method, request.path, response.status_code, g.get("via") or "-")
        return response

    def page(template: str, **values) -> str:
        return render_template(template, css=Markup(STYLESHEET), csrf=session.get("csrf", ""),
                               build=desk.teacher.rebuilder.status, **values)

    def since_arg(default: str) -> tuple[str, datetime | None]:
        from jarvis.questionlog import parse_since

        text = request.args.get("since", default) or default
        try:
            return text, parse_since(text, datetime.now(timezone.utc))
        except Exception as exc:  # noqa: BLE001 - a ReportError: the message says what is expected
            abort(Response(jsonify_error(str(exc)), status=400, mimetype="application/json") if wants_json()
                  else Response(f"bad since: {exc}", status=400, mimetype="text/plain"))

    def jsonify_error(message: str) -> str:
        import json

        return json.dumps({"error": message}, ensure_ascii=False)

    # ------------------------------------------------------------------ login

    @app.route("/login", methods=["GET", "POST"])
    def login():
        if request.method == "GET":
            if session.get("auth") is True:
                return redirect(url_for("today"), 303)
            return Response(login_page(), status=401, mimetype="text/html",
                            headers={"WWW-Authenticate": 'Bearer realm="jarvis panel"'})
        wait = limiter.retry_after(client())
        if wait:
            return Response(login_page(f"Too many attempts: try again in {int(wait) + 1} s."), status=429,
                            mimetype="text/html", headers={"Retry-After": str(int(wait) + 1)})
        if not same_token(request.form.get("csrf"), session.get("csrf")):
            return refuse_csrf()
        if not gate.accepts(request.form.get("token", "")):
            limiter.failed(client())
            return Response(login_page("Wrong token."), status=401, mimetype="text/html",
                            headers={"WWW-Authenticate": 'Bearer realm="jarvis panel"'})
        limiter.succeeded(client())
        session.clear()
        session.permanent = True
        session.update(auth=True, at=time.time(), csrf=new_csrf_token())
        target = request.form.get("next", "/")
        parts = urlsplit(target)
        if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
            target = "/"
        return redirect(target, 303)

    @app.post("/logout")
    def logout():
        session.clear()
        return redirect(url_for("login"), 303)

    # ------------------------------------------------------------------ pages

    @app.get("/")
    def today():
        since_text, since = since_arg(settings.since)
        rows, corrupt = desk.rows()
        window = log_view.select(rows, since=since)
        unit, points = log_view.buckets(window)
        times = log_view.latencies(window)
        return page("today.html", active="today", since=since_text, counts=log_view.counts(window),
                    rate_chart=charts.answer_rate_chart(points, unit), unit=unit,
                    latency_chart=charts.latency_chart(times), latency=_latency(times), corrupt=corrupt,
                    needs=log_view.grouped(log_view.select(window, "needs"))[:8],
                    pages=_top_pages(window))

    @app.get("/questions")
    def questions():
        view = request.args.get("view", "all")
        if view not in log_view.VIEWS:
            view = "all"
        text = request.args.get("q", "")[:200]
        since_text, since = since_arg("all")
        rows, _ = desk.rows()
        chosen = log_view.select(rows, view, text, since)
        groups = log_view.grouped(chosen)
        return page("questions.html", active="needs" if view == "needs" else "questions", view=view, views=log_view.VIEW_NAMES, q=text,
                    since=since_text, groups=groups[:200], total=len(chosen), shown_groups=min(len(groups), 200),
                    all_counts=log_view.counts(log_view.select(rows, since=since)),
                    likely_below=settings.likely_wrong_below)

    @app.get("/teach")
    def teach_form():
        question = request.args.get("question", "")[:300]
        candidates = _candidates(desk, question) if question.strip() else []
        editing = None
        if request.args.get("edit"):
            try:
                editing = desk.teacher.shelf.get(request.args["edit"])
            except TeachError:
                editing = None
        return page("teach.html", active="teach", question=question, candidates=candidates,
                    taught=desk.teacher.shelf.all(), editing=editing, guide=desk.teacher.shelf.guide,
                    message=request.args.get("saved", ""))

    @app.post("/teach")
    def teach_save():
        answer = request.form.get("answer", "").strip() or request.form.get("sentence", "")
        try:
            taught, _ = desk.teacher.teach(request.form.get("question", ""), answer, request.form.get("title", ""),
                                           who="admin (panel)", answer_id=request.form.get("id") or None)
        except TeachError as exc:
            return Response(page("teach.html", active="teach", question=request.form.get("question", ""),
                                 candidates=[], taught=desk.teacher.shelf.all(), editing=None,
                                 guide=desk.teacher.shelf.guide, message="", error=str(exc)),
                            status=400, mimetype="text/html")
        return redirect(url_for("teach_form", saved=taught.title), 303)

    @app.post("/teach/<answer_id>/remove")
    def teach_remove(answer_id: str):
        try:
            taught, _ = desk.teacher.remove(answer_id)
        except TeachError:
            abort(404)
        return redirect(url_for("teach_form", saved=f"removed: {taught.title}"), 303)

    @app.route("/settings", methods=["GET", "POST"])
    def settings_page():
        error, saved = "", False
        if request.method == "POST":
            changes = {("reader", "answer_threshold"): request.form.get("answer_threshold", ""),
                       ("bot", "reply"): request.form.get("reply", "")}
            try:
                settings_edit.update(desk.settings_path, changes)
                saved = True
            except settings_edit.SettingsEditError as exc:
                error = str(exc)
        config = desk.config
        if desk.settings_path is not None and desk.settings_path.is_file():
            from jarvis.settings_file import SettingsError, load_settings_file

            try:
                config, _ = load_settings_file(desk.settings_path, Config.from_env())
            except SettingsError as exc:
                error = error or str(exc)
        live = _live(desk)
        return Response(page("settings.html", active="settings", editable=settings_edit.current(desk.settings_path,
                                                                                              config),
                             path=desk.settings_path, error=error, saved=saved, live=live,
                             index_dir=desk.index_dir, log_path=desk.log_path, panel=settings),
                        status=400 if error and request.method == "POST" else 200, mimetype="text/html")

    # ------------------------------------------------------------------ API

    @app.get("/api/report")
    def api_report():
        from jarvis.questionlog import ReportError, build_report, read_log

        since_text, since = since_arg("7d")
        try:
            contents = read_log(desk.log_path, desk.config.log.backups)
        except ReportError as exc:
            return jsonify({"error": str(exc)}), 404
        return jsonify(build_report(contents, since, datetime.now(timezone.utc)).to_json())

    @app.get("/api/questions")
    def api_questions():
        view = request.args.get("view", "all")
        if view not in log_view.VIEWS:
            return jsonify({"error": f"view must be one of {', '.join(log_view.VIEWS)}"}), 400
        try:
            limit = max(1, min(1000, int(request.args.get("limit", "100"))))
        except ValueError:
            return jsonify({"error": "limit must be a whole number"}), 400
        _, since = since_arg("all")
        rows, corrupt = desk.rows()
        chosen = log_view.select(rows, view, request.args.get("q", "")[:200], since,
                                 player=request.args.get("player", ""), origin=request.args.get("origin", ""),
                                 page=request.args.get("page", ""))
        if request.args.get("grouped") in ("1", "true", "yes"):
            groups = log_view.grouped(chosen)
            return jsonify({"total": len(chosen), "groups": [grp.to_json() for grp in groups[:limit]]})
        return jsonify({"total": len(chosen), "corrupt_lines": corrupt,
                        "questions": [row.to_json() for row in chosen[:limit]]})

    @app.get("/api/answers")
    def api_answers():
        return jsonify({"answers": [a.to_json() for a in desk.teacher.shelf.all()],
                        "index": desk.teacher.rebuilder.status.to_json()})

    @app.post("/api/answers")
    def api_teach():
        data = request.get_json(silent=True)
        if not isinstance(data, dict):
            return jsonify({"error": 'send JSON: {"question": ..., "answer": ...[, "title": ...]}'}), 400
        wait = data.get("wait", True) is not False
        try:
            taught, used = desk.teacher.teach(data.get("question"), data.get("answer"), data.get("title") or "",
                                              who=str(data.get("who") or "admin (api)"), wait=wait)
        except TeachError as exc:
            return jsonify({"error": str(exc)}), 400
        status = desk.teacher.rebuilder.status
        body = {**taught.to_json(), "index": status.to_json(), "in_index": used}
        if wait and not used and status.state == "failed":
            body["error"] = f"saved, but the index build failed: {status.error}"
        response = jsonify(body)
        # 201: saved and (unless "wait": false) in the live index; 202: saved, the build still running after
        # [panel] build_timeout; 500: saved, the build failed (the page and GET /api/index say why).
        response.status_code = 201 if used or not wait else 500 if status.state == "failed" else 202
        response.headers["Location"] = url_for("api_answer", answer_id=taught.id)
        return response

    @app.get("/api/answers/<answer_id>")
    def api_answer(answer_id: str):
        try:
            return jsonify(desk.teacher.shelf.get(answer_id).to_json())
        except TeachError as exc:
            return jsonify({"error": str(exc)}), 404

    @app.delete("/api/answers/<answer_id>")
    def api_forget(answer_id: str):
        try:
            taught, used = desk.teacher.remove(answer_id, wait=True)
        except TeachError as exc:
            return jsonify({"error": str(exc)}), 404
        return jsonify({**taught.to_json(), "removed": True, "index": desk.teacher.rebuilder.status.to_json()})

    @app.get("/api/index")
    def api_index():
        return jsonify(desk.teacher.rebuilder.status.to_json())

    @app.errorhandler(404)
    def not_found(_):
        if wants_json():
            return jsonify({"error": "not found"}), 404
        return page("error.html", active="", title="Not found", message="No such page."), 404

    @app.errorhandler(413)
    def too_large(_):
        return jsonify({"error": f"request larger than {MAX_JSON} bytes"}), 413

    return app


def _latency(values: list[float]) -> dict:
    import statistics

    if not values:
        return {"p50": None, "p95": None, "n": 0}
    if len(values) == 1:
        return {"p50": values[0], "p95": values[0], "n": 1}
    q = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": round(q[49], 3), "p95": round(q[94], 3), "n": len(values)}


def _top_pages(rows: list[log_view.Row]) -> list[tuple[str, str, int]]:
    from collections import Counter

    counted = Counter((r.page, r.site) for r in rows if r.page and r.outcome == "answered")
    return [(page, site, n) for (page, site), n in counted.most_common(6)]


def _live(desk: Desk):
    from jarvis.index.layout import IndexDir

    return IndexDir(desk.index_dir).live_or_none()


def _candidates(desk: Desk, question: str, limit: int = 12) -> list[dict]:
    """Sentences of the pages the index finds for a question, those sharing most words with it first: what the
    admin may pick as the answer."""
    from jarvis.crawler.sentences import split_sentences
    from jarvis.lexical import TermAnalyzer

    try:
        hits = desk.searcher().search(question, k=3)
    except Exception as exc:  # noqa: BLE001 - no candidates is not an error of the page
        log.warning("no sentences to pick from: %s", exc)
        return []
    analyzer = TermAnalyzer()
    words = set(analyzer.terms(question))
    found = []
    for rank, hit in enumerate(hits):
        for paragraph in hit.paragraphs:
            for start, end in split_sentences(paragraph):
                sentence = paragraph[start:end]
                if 20 <= len(sentence) <= 400:
                    overlap = len(words & set(analyzer.terms(sentence)))
                    found.append({"sentence": sentence, "page": hit.title, "site": hit.site,
                                  "score": overlap - 0.3 * rank})
    found.sort(key=lambda c: -c["score"])
    seen, out = set(), []
    for candidate in found:
        if candidate["sentence"] not in seen:
            seen.add(candidate["sentence"])
            out.append(candidate)
        if len(out) >= limit:
            break
    return out
