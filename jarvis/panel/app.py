"""The desk's web application (Flask): the pages, the JSON API, and who may use them.

    app = create_app(desk)          # desk: a Desk (the settings, the index, the log, the teacher)

One blueprint a part: security.py (every request's check, the login form, the headers; the rules in auth.py),
pages.py (Overview, Questions, Settings), teaching.py (the Teach page), api.py (the JSON API); web.py holds
what they share. Templates are Jinja2 with autoescaping: whatever a player typed or a wiki says is text. The
pages run no script at all; the Content-Security-Policy allows none, and only the panel's own stylesheet (by
its hash).
"""
from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from flask import Flask, jsonify

from jarvis.config import Config, PanelSettings
from jarvis.panel import api, log_view, pages, security, teaching
from jarvis.panel.teach import Teacher
from jarvis.panel.web import DESK, HERE, page, wants_json

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
    _taught: object = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def searcher(self):
        from jarvis.index import Searcher

        with self._lock:
            if self._searcher is None:
                self._searcher = Searcher(self.index_dir, self.config.retrieval)
            return self._searcher

    def live_generation(self):
        """The index's live generation (None when there is none)."""
        from jarvis.index.layout import IndexDir

        return IndexDir(self.index_dir).live_or_none()

    def taught_when(self, question: str) -> str | None:
        """When the taught answer that answers ``question`` now was saved (None: none does), matched as
        `jarvis ask` matches it on this index."""
        from jarvis.taught import TaughtAnswers

        with self._lock:
            if self._taught is None:
                self._taught = TaughtAnswers(self.teacher.shelf.guide, self.index_dir)
        found = self._taught.matcher(self.searcher().snapshot()).match(question)
        return found.taught.when if found is not None else None

    def rows(self) -> tuple[list[log_view.Row], int]:
        return log_view.load_rows(self.log_path, self.config.log.backups, self.config.panel.likely_wrong_below,
                                  taught=self.taught_when)

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()


def create_app(desk: Desk) -> Flask:
    settings = desk.config.panel
    app = Flask(__name__, template_folder=str(HERE / "templates"), static_folder=None)
    _configure(app, settings)
    app.extensions[DESK] = desk
    security.init_app(app, settings)
    for part in (pages, teaching, api):
        app.register_blueprint(part.blueprint)

    @app.errorhandler(404)
    def not_found(_):
        if wants_json():
            return jsonify({"error": "not found"}), 404
        return page("error.html", active="", title="Not found", message="No such page."), 404

    @app.errorhandler(413)
    def too_large(_):
        return jsonify({"error": f"request larger than {MAX_JSON} bytes"}), 413

    return app


def _configure(app: Flask, settings: PanelSettings) -> None:
    app.config.update(
        SECRET_KEY=secrets.token_bytes(32),   # per start: a restart logs every browser out
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
