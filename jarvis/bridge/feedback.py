"""Feedback and the question log: every question and its answer are recorded, and "jarvis, wrong" /
"jarvis thanks" marks the player's last answer.

Feedback counts only within the log's ``feedback_window`` of the answer (a minute by default) and
only for the player who got it; it is not a question (not rate-limited, not counted). "wrong" is
acknowledged in chat ("noted"), or told that there is nothing to mark; "thanks" is marked quietly.
With the question log off, "jarvis, wrong" is an ordinary question.
"""
from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from jarvis.bridge.chat import MAX_TRACKED_PLAYERS, Question, feedback_kind
from jarvis.bridge.events import PlayerNames, log_event
from jarvis.bridge.reply_layout import ReplyLayout
from jarvis.bridge.outbox import Outbox
from jarvis.bridge.transport import OutLine

if TYPE_CHECKING:
    from jarvis.answer import Answer   # one answer type: in process or through the pool (jarvis.network)
    from jarvis.questionlog import QuestionLog


NOTED = "noted, the admin will see it. Thanks!"
NOTHING_TO_MARK = "no answer of mine in the last minute to mark"


class Feedback:
    """The question log's writer for the bridge, and chat feedback on answers (see the module doc)."""

    def __init__(self, question_log: QuestionLog | None, layout: ReplyLayout, outbox: Outbox,
                 names: PlayerNames) -> None:
        self.question_log = question_log
        self.layout = layout
        self.outbox = outbox
        self.names = names
        # Each player's last logged answer (entry id, when): written by the answering thread, read by the poller.
        self._last_logged: dict[int | str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def record(self, question: Question, answer: Answer | None, lines: list[OutLine], error: str = "") -> None:
        """Log a question with its answer, or with the error that stopped it, and what ``lines`` (the chat
        lines that answer it) showed the player (the answering thread)."""
        if self.question_log is None:
            return
        entry_id = self.question_log.record(question.text, answer, reply=self.layout.shown(question, lines),
                                            player=question.player, origin="serve", error=error,
                                            latency=time.monotonic() - question.seen_at)
        if answer is not None:
            with self._lock:
                if len(self._last_logged) >= MAX_TRACKED_PLAYERS:
                    self._last_logged.clear()
                self._last_logged[question.key] = (entry_id, time.monotonic())

    def handle(self, question: Question) -> bool:
        """Mark the player's last answer when the message is feedback on it; True if it was feedback."""
        if self.question_log is None:
            return False
        kind = feedback_kind(question.text)
        if kind is None:
            return False
        with self._lock:
            entry_id, answered_at = self._last_logged.pop(question.key, ("", 0.0))
        if entry_id and question.seen_at - answered_at <= self.question_log.settings.feedback_window:
            self.question_log.mark(entry_id, kind, player=question.player)
            log_event("feedback", player=self.names(question.player), player_id=question.player_id, feedback=kind)
            if kind == "wrong":
                self.outbox.put(self.layout.lines_for(question, NOTED, answered=False))
        elif kind == "wrong":
            self.outbox.put(self.layout.lines_for(question, NOTHING_TO_MARK, answered=False))
        return True
