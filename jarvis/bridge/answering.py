"""Answering: what the bridge asks for an answer, and the answering thread that asks it.

The bridge needs one thing of whatever answers: :class:`Answerer`, ``ask(question) -> answer``.
``jarvis.pipeline.Jarvis`` is one (in-process); :class:`AnswerFunction` makes a plain function one.
A pool of workers behind a queue (``jarvis.network.PoolClient``, ``serve`` through the pool) is
handed to the bridge the same way, as a :class:`QueuedAnswerer`: the answering thread hands it each
question and goes on at once; the pool delivers the answer later, from its own thread, and may
send one short notice first (the "busy" notice) when no answer comes soon. The pool keeps each
player's answers in the order asked.

The :class:`AnswerThread` answers the queued questions one at a time, in order, so each player's answers
come in the order asked; a slow answer never stalls the chat (the poller goes on). Every answer,
on every transport, in-process or from a pool, goes the same way: laid out as chat lines (the reply
layout), then to the question log (with what those lines show) and the event log. An answerer that raises does not stop the bridge: a user error (a question
too long) is said as it is, anything else as "something went wrong".
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Protocol

from jarvis.bridge.chat import Question
from jarvis.bridge.events import PlayerNames, log_event
from jarvis.bridge.feedback import Feedback
from jarvis.bridge.reply_layout import ReplyLayout
from jarvis.bridge.outbox import Outbox
from jarvis.bridge.transport import OutLine, StopFlag
from jarvis.errors import first_line

if TYPE_CHECKING:
    from jarvis.answer import Answer   # one answer type: in process or through the pool (jarvis.network)

log = logging.getLogger(__name__)

SOMETHING_WENT_WRONG = "sorry, something went wrong answering that"


class Answerer(Protocol):
    """What the bridge asks for an answer (jarvis.pipeline.Jarvis is one). Called from the answering
    thread only; may take seconds; raises on a question it cannot take."""

    def ask(self, question: str) -> Answer: ...


class QueuedAnswerer(Protocol):
    """An answerer that answers later, from its own thread (a worker pool). ``submit`` returns at once;
    ``deliver`` is called once, with the answer or the exception that stopped it; ``notify`` at most
    once, before it, with a one-line notice. ``waiting``: questions submitted, not delivered yet."""

    def submit(self, question: Question, deliver: Callable[[Answer | Exception], None],
               notify: Callable[[str], None]) -> None: ...

    @property
    def waiting(self) -> int: ...


@dataclass(frozen=True)
class AnswerFunction:
    """A plain ``question -> answer`` function as an :class:`Answerer`."""

    function: Callable[[str], Answer]

    def ask(self, question: str) -> Answer:
        return self.function(question)


class AnswerThread:
    """The answering thread (see the module doc): questions from ``questions``, reply lines to ``outbox``."""

    def __init__(self, answerer: Answerer | QueuedAnswerer, questions: queue.Queue[Question], *, layout: ReplyLayout,
                 outbox: Outbox, feedback: Feedback, names: PlayerNames, stopping: StopFlag) -> None:
        self.answerer = answerer
        self.questions = questions
        self.layout = layout
        self.outbox = outbox
        self.feedback = feedback
        self.names = names
        self.stopping = stopping
        self.busy = False                    # inside ask() (read at shutdown: one more left unanswered)
        self.pool: QueuedAnswerer | None = answerer if hasattr(answerer, "submit") else None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._work, name="jarvis-bridge-answering", daemon=True)
        self._thread.start()

    def join(self, timeout: float) -> None:
        """Wait at most ``timeout`` seconds for the answer in progress (after a stop)."""
        if self._thread is not None:
            self._thread.join(timeout=timeout)

    @property
    def unanswered(self) -> int:
        """Questions taken from the queue whose answer is not laid out yet (read at shutdown)."""
        return int(self.busy) + (self.pool.waiting if self.pool is not None else 0)

    def _work(self) -> None:
        while not self.stopping.is_set():
            try:
                question = self.questions.get(timeout=0.2)
            except queue.Empty:
                continue
            if self.pool is not None:
                self.pool.submit(question, *self._pool_callbacks(question))
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
            return self._failed(question, exc)
        return self._answered(question, answer, began)

    def _pool_callbacks(self, question: Question) -> tuple[Callable[[Answer | Exception], None],
                                                             Callable[[str], None]]:
        """What the pool calls from its own thread: the answer (or what stopped it), and a one-line notice."""
        began = time.monotonic()

        def deliver(result: Answer | Exception) -> None:
            lines = (self._failed(question, result) if isinstance(result, Exception)
                     else self._answered(question, result, began))
            self.outbox.put(lines)

        def notify(text: str) -> None:
            self.outbox.put(self.layout.lines_for(question, text, max_lines=1, answered=False))

        return deliver, notify

    def _answered(self, question: Question, answer: Answer, began: float) -> list[OutLine]:
        lines = self.layout.answer_reply(question, answer)
        self.feedback.record(question, answer, lines)
        log_event("answered", player=self.names(question.player), question=question.text, found=bool(answer.found),
                  answer=answer.text, title=answer.title, reader=answer.reader, private=question.private,
                  answer_ms=round((time.monotonic() - began) * 1000),
                  waited_ms=round((began - question.seen_at) * 1000))
        return lines

    def _failed(self, question: Question, exc: Exception) -> list[OutLine]:
        """A user error (a question too long, no worker in time) is said as it is; anything else is not."""
        if getattr(exc, "user_error", False):
            message = first_line(exc)
            log_event("answer_failed", player=self.names(question.player), question=question.text, error=message)
        else:
            log.error("answering %r failed", question.text, exc_info=exc)
            message = SOMETHING_WENT_WRONG
        lines = self.layout.lines_for(question, message)
        self.feedback.record(question, None, lines, message)
        return lines
