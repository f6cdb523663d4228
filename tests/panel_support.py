"""Shared pieces of the desk's tests: a question log written by the real QuestionLog, a copy of the bundled
index the panel may teach into, and the panel over real HTTP on 127.0.0.1.

    desk_plan(tmp_path, index_dir) -> PanelPlan          # JARVIS_HOME = tmp_path / "home", port 0
    with running_panel(plan) as panel: panel.url ...     # waitress in a thread, closed on leaving
"""
from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator

from jarvis.config import Config, LogSettings, PanelSettings
from jarvis.answer import Answer
from jarvis.replies import compose_reply

TOKEN = "panel-test-token-7f3a9c1e55d2"
# Questions as players type them, the answers Jarvis gave (the real Answer type), and feedback.
XSS_QUESTION = "<script>alert('pwned')</script> what do pigs drop?"
XSS_IMG = 'how do i tame a cat <img src=x onerror="alert(1)">'
LOGGED = [
    # question, answer text, page, confidence, abstained, player, feedback
    ("what do cows drop?", "0-2 Leather and 1-3 Raw beef", "Cow", 0.91, False, "Steve", "thanks"),
    ("what do sheep drop?", "Pink", "Sheep", 0.81, False, "Alex", "wrong"),
    ("how many eyes of ender to fill a portal?", "2", "Eye of Ender", 0.62, False, "Alex", None),
    ("how do i claim land?", "", "", 0.0, True, "Notch", None),
    ("how do i claim land", "", "", 0.0, True, "Herobrine", None),
    ("where do witches spawn?", "swamp huts", "Witch", 0.44, True, "Steve", None),
    (XSS_QUESTION, "", "", 0.0, True, "Mallory", None),
    (XSS_IMG, "", "", 0.0, True, "Mallory", None),
]


def panel_config(home: Path, token: str = TOKEN, player_names: bool = True, **panel) -> Config:
    config = Config(home=home, log=LogSettings(player_names=player_names))
    return replace(config, panel=replace(PanelSettings(), token=token, port=0, **panel))


def write_log(config: Config) -> None:
    """The LOGGED questions, through the real question log (as serve writes them)."""
    from jarvis.questionlog import open_question_log

    question_log = open_question_log(config)
    for question, text, page, confidence, abstained, player, feedback in LOGGED:
        answer = Answer(question=question, text=text, score=1.0, title=page, reader="test", seconds=0.3,
                        confidence=confidence, abstained=abstained, site="Sample Wiki" if page else "")
        entry = question_log.record(question, answer, reply=compose_reply(answer), player=player,
                                    latency=0.3 + 0.1 * len(question) / 10, origin="serve")
        if feedback:
            question_log.mark(entry, feedback, player=player)


LONG_QUESTION = "jarvis" + "x" * 474          # 480 characters, no break: a player's junk in the log
TERMINAL = ["what is a creeper?", "\u00ff\u00fePNG zzqx"]   # the admin's own asks (`jarvis ask`), one of them junk


def write_extra_log(config: Config) -> None:
    """Beside LOGGED: a 480-character unbroken question (with as long a reply) and the admin's terminal asks."""
    from jarvis.questionlog import open_question_log

    question_log = open_question_log(config)
    junk = Answer(question=LONG_QUESTION, text="", score=0.0, title="Zzz" + "y" * 300, reader="test", seconds=0.2,
                  sentence="q" * 400, confidence=0.1, abstained=True, site="Sample Wiki")
    question_log.record(LONG_QUESTION, junk, reply=compose_reply(junk), player="Griefer", latency=0.2,
                        origin="serve")
    for question in TERMINAL:
        answer = Answer(question=question, text="", score=0.0, title="", reader="test", seconds=0.2)
        question_log.record(question, answer, reply=compose_reply(answer), latency=0.2, origin="ask")


def copy_index(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


@contextmanager
def running_panel(plan) -> Iterator:
    from jarvis.panel import PanelServer

    server = PanelServer(plan)
    server.run_in_thread()
    try:
        yield server
    finally:
        server.close()


def http(method: str, url: str, token: str | None = None, body: dict | None = None,
         headers: dict | None = None, timeout: float = 120) -> tuple[int, dict, str]:
    """(status, headers, text) of a request over real HTTP; no redirect is followed."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode("utf-8")
