"""Running the desk: the pieces put together and served by waitress (a pure-Python production WSGI server)."""
from __future__ import annotations

import logging
import signal
import threading
from dataclasses import dataclass
from pathlib import Path

from jarvis.config import Config
from jarvis.errors import JarvisError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PanelPlan:
    """What `jarvis panel` serves: plain values from the CLI."""

    config: Config
    index_dir: Path
    settings_path: Path | None = None


def build_desk(plan: PanelPlan):
    """The Desk the app serves (checks the token first: no token, no panel)."""
    from jarvis.panel.app import Desk
    from jarvis.panel.auth import TokenGate
    from jarvis.panel.teach import GuideShelf, Teacher
    from jarvis.taught import guide_folder

    TokenGate(plan.config.panel.token, plan.config.panel.min_token_length)   # PanelTokenError, one line
    from datetime import datetime, timezone

    from jarvis.questionlog import ReportError, parse_since

    try:
        parse_since(plan.config.panel.since, datetime.now(timezone.utc))
    except ReportError as exc:
        raise JarvisError(f"[panel] {exc}") from None
    if not Path(plan.index_dir).is_dir():
        raise JarvisError(f"index: {plan.index_dir}: no such index directory")
    teacher = Teacher(GuideShelf(guide_folder(plan.config, plan.index_dir)))
    return Desk(config=plan.config, index_dir=Path(plan.index_dir), log_path=plan.config.question_log_path,
                teacher=teacher, settings_path=plan.settings_path)


class PanelServer:
    """The app on a waitress server, bound at once (port 0 picks a free one); ``run()`` serves until ``close()``."""

    def __init__(self, plan: PanelPlan) -> None:
        from waitress.server import create_server

        from jarvis.panel.app import create_app

        self.desk = build_desk(plan)
        self.app = create_app(self.desk)
        settings = plan.config.panel
        try:
            self._server = create_server(self.app, host=settings.host, port=settings.port, threads=settings.threads,
                                         ident="jarvis-panel", clear_untrusted_proxy_headers=True)
        except OSError as exc:
            raise JarvisError(f"cannot listen on {settings.host}:{settings.port}: {exc.strerror or exc}") from None
        self.host, self.port = settings.host, self._server.effective_port
        self._closing = False
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def run(self) -> None:
        try:
            self._server.run()
        except (OSError, ValueError):
            if not self._closing:     # closing the sockets under the loop's select ends it so
                raise

    def run_in_thread(self) -> threading.Thread:
        self._thread = threading.Thread(target=self.run, name="jarvis-panel", daemon=True)
        self._thread.start()
        return self._thread

    def close(self) -> None:
        self._closing = True
        self._server.close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.desk.close()


def serve_panel(plan: PanelPlan) -> int:
    """`jarvis panel`: serve until SIGINT or SIGTERM."""
    server = PanelServer(plan)
    print(f"jarvis panel: {server.url}/ (index {plan.index_dir}; log {plan.config.question_log_path}; "
          f"guide {server.desk.teacher.shelf.guide}); log in with JARVIS_PANEL_TOKEN", flush=True)
    def on_signal(signum, frame):  # noqa: ARG001
        server._closing = True
        server._server.close()     # waitress's loop ends; run() returns

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.desk.close()
    return 0
