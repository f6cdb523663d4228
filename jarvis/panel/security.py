"""Who may use the desk, as the web application applies it: every request's check, the login form, the
security headers (the rules themselves: auth.py).

Every route but the login form answers 401 without the token (``Authorization: Bearer``) or a logged-in
session, and shows nothing of the log; the login form is the 401 page of every route a browser asks for.
Past the login limit an attempt waits before its token is checked (auth.LoginLimiter); the right token still
gets in.
"""
from __future__ import annotations

import base64
import hashlib
import logging
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from flask import Blueprint, Flask, Response, g, jsonify, redirect, render_template, request, session, url_for
from markupsafe import Markup

from jarvis.config import PanelSettings
from jarvis.panel.auth import LoginLimiter, TokenGate, bearer_token, new_csrf_token, same_token
from jarvis.panel.web import STYLESHEET, wants_json

log = logging.getLogger(__name__)

GATE = "jarvis_gate"                 # app.extensions key of the Gatekeeper
OPEN_ENDPOINTS = {"login.login"}     # answers without a login (the form itself: 401 until logged in)
BEARER_REALM = 'Bearer realm="jarvis panel"'

blueprint = Blueprint("login", __name__)


@dataclass
class Gatekeeper:
    """The token's check and the login limit of one app."""

    settings: PanelSettings
    gate: TokenGate
    limiter: LoginLimiter

    @classmethod
    def of(cls, settings: PanelSettings) -> "Gatekeeper":
        return cls(settings, TokenGate(settings.token, settings.min_token_length),
                   LoginLimiter(settings.login_attempts, settings.login_window, settings.login_delay,
                                settings.login_max_delay))

    def check(self, given: str | None) -> bool | None:
        """Whether ``given`` is the token, after the wait the client's earlier failures impose; None when the
        attempt is refused without a check (another of the client's attempts is waiting)."""
        client = request.remote_addr or "?"
        wait = self.limiter.admit(client)
        if wait is None:
            return None
        try:
            if wait:
                time.sleep(wait)
            right = self.gate.accepts(given)
        finally:
            if wait:
                self.limiter.done(client)
        (self.limiter.succeeded if right else self.limiter.failed)(client)
        return right

    def retry_after(self) -> float:
        return max(1.0, self.limiter.hold_back(request.remote_addr or "?"))


def gatekeeper() -> Gatekeeper:
    from flask import current_app

    return current_app.extensions[GATE]


def init_app(app: Flask, settings: PanelSettings) -> None:
    """The checks and headers of every request, and the login form."""
    app.extensions[GATE] = Gatekeeper.of(settings)
    style_hash = base64.b64encode(hashlib.sha256(STYLESHEET.encode("utf-8")).digest()).decode()
    policy = (f"default-src 'none'; style-src 'sha256-{style_hash}'; img-src 'self' data:; form-action 'self'; "
              "frame-ancestors 'none'; base-uri 'none'")
    app.before_request(authenticate)

    @app.after_request
    def secure_headers(response: Response) -> Response:
        response.headers["Content-Security-Policy"] = policy
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        log.info("%s %s %s %s", request.method, request.path, response.status_code, g.get("via") or "-")
        return response

    app.register_blueprint(blueprint)


def authenticate():
    """Every request but the login form's: the bearer token, or a logged-in session (and a form's CSRF token)."""
    g.via = None
    if request.endpoint in OPEN_ENDPOINTS:
        return None
    keeper = gatekeeper()
    header = request.headers.get("Authorization")
    if header is not None:
        right = keeper.check(bearer_token(header))
        if right is None:
            return refuse(429, "too many wrong tokens: one attempt at a time, try again in a moment",
                          keeper.retry_after())
        if right:
            g.via = "token"
            return None
        return refuse(401, "wrong or missing token (Authorization: Bearer <JARVIS_PANEL_TOKEN>)")
    logged_in = session.get("auth") is True and time.time() - float(session.get("at", 0)) < \
        keeper.settings.session_hours * 3600
    if not logged_in:
        session.pop("auth", None)
        if wants_json():
            return refuse(401, "no token (Authorization: Bearer <JARVIS_PANEL_TOKEN>)")
        return login_response("", 401)
    g.via = "session"
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        given = request.form.get("csrf") or request.headers.get("X-CSRF-Token")
        if not same_token(given, session.get("csrf")):
            return refuse_csrf()
    return None


def refuse(status: int, message: str, retry_after: float | None = None) -> Response:
    """A refusal: JSON for the API and scripts, the login form (with ``message`` as its error) for a browser."""
    if wants_json() or request.headers.get("Authorization"):
        response = jsonify({"error": message})
        response.status_code = status
    else:
        response = login_response(message, status)
    if status == 401:
        response.headers["WWW-Authenticate"] = BEARER_REALM
    if retry_after:
        response.headers["Retry-After"] = str(int(retry_after) + 1)
    return response


def refuse_csrf() -> Response:
    if wants_json():
        response = jsonify({"error": "no or wrong CSRF token: send the page's form again"})
        response.status_code = 403
        return response
    return Response(render_template("error.html", title="Refused", css=Markup(STYLESHEET), csrf="", index=None,
                                    message="This form had no valid CSRF token (it did not come from this "
                                            "panel's page). Nothing was changed.", active=""),
                    status=403, mimetype="text/html")


def login_response(error: str, status: int) -> Response:
    """The login form; ``error``: what went wrong ("" before any attempt: no error is shown)."""
    if not session.get("csrf"):
        session["csrf"] = new_csrf_token()
    target = request.full_path.rstrip("?") if request.method == "GET" and request.endpoint != "login.login" else "/"
    html = render_template("login.html", error=error, next=target, csrf=session["csrf"], css=Markup(STYLESHEET))
    response = Response(html, status=status, mimetype="text/html")
    if status == 401:
        response.headers["WWW-Authenticate"] = BEARER_REALM
    return response


@blueprint.route("/login", methods=["GET", "POST"])
def login():
    if request.method == "GET":
        if session.get("auth") is True:
            return redirect(url_for("pages.today"), 303)
        return login_response("", 401)
    if not same_token(request.form.get("csrf"), session.get("csrf")):
        return refuse_csrf()
    keeper = gatekeeper()
    right = keeper.check(request.form.get("token", ""))
    if right is None:
        wait = keeper.retry_after()
        response = login_response(f"Another login attempt is being checked: try again in {int(wait) + 1} s.", 429)
        response.headers["Retry-After"] = str(int(wait) + 1)
        return response
    if not right:
        return login_response("Wrong token.", 401)
    session.clear()
    session.permanent = True
    session.update(auth=True, at=time.time(), csrf=new_csrf_token())
    return redirect(_same_site(request.form.get("next", "/")), 303)


@blueprint.post("/logout")
def logout():
    session.clear()
    return redirect(url_for("login.login"), 303)


def _same_site(target: str) -> str:
    """Where to go after the login: a path of this panel, never another site."""
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return "/"
    return target
