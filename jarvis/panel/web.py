"""What every view of the desk shares: the desk it serves, its pages' frame, the time window asked for.

    desk()                       # the Desk of the running app (app.extensions["jarvis_desk"])
    page("today.html", ...)      # a page in the desk's frame: its stylesheet, the CSRF token, the index shown
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from flask import Response, abort, current_app, render_template, request, session
from markupsafe import Markup

HERE = Path(__file__).resolve().parent
STYLESHEET = (HERE / "static" / "panel.css").read_text(encoding="utf-8")
DESK = "jarvis_desk"            # app.extensions key of the Desk
# How the desk says a time window ("since"): the Overview page's heading and the choices of its menu.
WINDOWS = {"24h": "the last 24 hours", "7d": "the last 7 days", "30d": "the last 30 days", "all": "all time"}
_UNITS = {"m": "minute", "h": "hour", "d": "day", "w": "week"}


def desk():
    return current_app.extensions[DESK]


def wants_json() -> bool:
    return request.path.startswith("/api/")


def page(template: str, **values) -> str:
    """A page of the desk: the template with the stylesheet, the session's CSRF token and the live index."""
    return render_template(template, css=Markup(STYLESHEET), csrf=session.get("csrf", ""),
                           index=desk().live_generation(), **values)


def json_error(message: str) -> str:
    return json.dumps({"error": message}, ensure_ascii=False)


def since_arg(default: str) -> tuple[str, datetime | None]:
    """The ``since`` argument (default ``default``) and the time it stands for; a 400 when it is unusable."""
    from jarvis.questionlog import parse_since

    text = request.args.get("since", default) or default
    try:
        return text, parse_since(text, datetime.now(timezone.utc))
    except Exception as exc:  # noqa: BLE001 - a ReportError: the message says what is expected
        abort(Response(json_error(str(exc)), status=400, mimetype="application/json") if wants_json()
              else Response(f"bad since: {exc}", status=400, mimetype="text/plain"))


def window_words(since: str) -> str:
    """A ``since`` as a heading says it: "7d" -> "the last 7 days", "all" -> "all time", a date -> "since ..."."""
    if since in WINDOWS:
        return WINDOWS[since]
    text = since.strip()
    if text[:-1].isdigit() and text[-1:] in _UNITS:
        number, unit = int(text[:-1]), _UNITS[text[-1]]
        return f"the last {number} {unit}" + ("s" if number != 1 else "") if number != 1 else f"the last {unit}"
    return f"since {text}"
