"""The admin's web desk (`jarvis panel`): what players asked, what needs the admin, and teaching Jarvis.

    from jarvis.panel import PanelPlan, serve_panel
    serve_panel(PanelPlan(config, index_dir, settings_path))     # until SIGINT/SIGTERM

app.py is the Flask application (the Desk it serves, create_app), one blueprint a part: security.py (every
request's check, the login form), pages.py (Overview, Questions, Settings), teaching.py (the Teach page),
api.py (the JSON API), with web.py what they share; auth.py who may use it (token, session, CSRF, the held-back
guessing), log_view.py the question log as rows and views, teach.py the taught answers' files (which
jarvis/taught.py matches), settings_edit.py the settings it may write, charts.py its inline SVG charts.
The contract: docs/panel.md and DESIGN.md's "Desk contract".
"""
from __future__ import annotations

from jarvis.panel.auth import PanelTokenError
from jarvis.panel.server import PanelPlan, PanelServer, serve_panel

__all__ = ["PanelPlan", "PanelServer", "PanelTokenError", "serve_panel"]
