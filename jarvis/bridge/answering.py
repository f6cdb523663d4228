"""Answering: what the bridge asks for an answer, and the worker thread that asks it.

The bridge needs one thing of whatever answers: :class:`Answerer`, ``ask(question) -> answer``.
``jarvis.pipeline.Jarvis`` is one (in-process); another (a pool of workers behind a queue) is
handed to :func:`jarvis.bridge.serve` the same way, and nothing in the bridge changes.
:class:`AnswerFunction` makes a plain function one.

The :class:`Worker` answers the queued questions one at a time, in order, so each player's answers
come in the order asked; a slow answer never stalls the chat (the poller goes on). Every answer,
on every transport, passes :meth:`Worker.reply_to`: it goes to the question log, the event log,
and the reply layout. An answerer that raises does not stop the bridge: a user error (a question
too long) is said as it is, anything else as "something went wrong".
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import Callable, Protocol

from jarvis.bridge.chat import AnswerLike, Question
from jarvis.bridge.events import PlayerNames, log_event
from jarvis.bridge.feedback import Feedback
from jarvis.bridge.layout import ReplyLayout
from jarvis.bridge.outbox import Outbox
from jarvis.bridge.transport import OutLine, StopFlag
from jarvis.errors import first_line

log = logging.getLogger(__name__)

SOMETHING_WENT_WRONG = "sorry, something went wrong answering that"


class Answerer(Protocol):
    """What the bridge asks for an answer (jarvis.pipeline.Jarvis is one). Called from the worker
    thread only; may take seconds; raises on a question it cannot take."""

    def ask(self, question: str) -> AnswerLike: ...


@dataclass(frozen=True)
class AnswerFunction:
    """A plain ``question -> answer`` function as an :class:`Answerer`."""

    function: Callable[[str], AnswerLike]

    def ask(self, question: str) -> AnswerLike:
        return self.function(question)


class Worker:
    """The worker thread (see the module doc): questions from ``questions``, reply lines to ``outbox``."""

    def __init__(self, answerer: Answerer, questions: queue.Queue[Question], *, layout: ReplyLayout,
                 outbox: Outbox, feedback: Feedback, names: PlayerNames, stopping: StopFlag) -> None:
        self.answerer = answerer
        self.questions = questions
        self.layout = layout
        self.outbox = outbox
        self.feedback = feedback
        self.names = names
        self.stopping = stopping
        self.busy = False                    # inside ask() (read at shutdown: one more left unanswered)
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._work, name="jarvis-bridge-worker", daemon=True)
        self._thread.start()

    def join(self, timeout: float) -> None:
        """Wait at most ``timeout`` seconds for the answer in progress (after a stop)."""
        if self._thread is not None:
            self._thread.join(timeout=timeout)

    def _work(self) -> None:
        while not self.stopping.is_set():
            try:
                question = self.questions.get(timeout=0.2)
            except queue.Empty:
                continue
            self.busy = True
            lines = self.reply_to(question)
            self.busy = False
            self.outbox.put(lines)

    def reply_to(self, question: Question) -> list[OutLine]:
        """Ask, log, lay out: the chat lines that answer ``question``."""
        began = time.monotonic()
        try:
            answer = self.answerer.ask(question.text)
        except Exception as exc:  # noqa: BLE001 - a bad question or a reader bug must not stop the bridge
            if getattr(exc, "user_error", False):
                message = first_line(exc)
                log_event("answer_failed", player=self.names(question.player), question=question.text,
                          error=message)
            else:
                log.exception("answering %r failed", question.text)
                message = SOMETHING_WENT_WRONG
            self.feedback.record(question, None, message)
            return self.layout.lines_for(question, message)
        self.feedback.record(question, answer)
        log_event("answered", player=self.names(question.player), question=question.text, found=bool(answer.found),
                  answer=answer.text, title=answer.title, reader=answer.reader, private=question.private,
                  answer_ms=round((time.monotonic() - began) * 1000),
                  waited_ms=round((began - question.seen_at) * 1000))
        return self.layout.answer_reply(question, answer)
