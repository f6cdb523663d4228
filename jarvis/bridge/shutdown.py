"""Shutting down: the answer in progress may finish, the last lines are flushed, the connection closed.

On a stop (SIGINT/SIGTERM, ``Bridge.stop()``) the answering thread gets ``io_timeout`` seconds to finish the
answer it is computing; questions still waiting (in the queue, or in a worker pool) are not
answered, and the chat is told how many ("Going offline, 2 question(s) left unanswered, sorry.").
The lines waiting are then sent for at most ``io_timeout`` seconds, as fast as the transport may
(the player bot paces its messages); chat read meanwhile is dropped. A connection that dies during
the flush ends it. The counts go to the log (``event=stopped``).
"""
from __future__ import annotations

import queue
import time
from dataclasses import asdict

from jarvis.bridge.answering import AnswerThread
from jarvis.bridge.chat import Question
from jarvis.bridge.events import BridgeStats, log_event
from jarvis.bridge.reply_layout import ReplyLayout
from jarvis.bridge.outbox import Outbox
from jarvis.bridge.reconnect import Link
from jarvis.bridge.transport import ConnectionLost, OutLine, PollFailed, Transport
from jarvis.config import BridgeSettings

FLUSH_PAUSE = 0.1             # seconds between exchanges while waiting for the last lines' delivery


def going_offline(left: int) -> str:
    return f"Going offline, {left} question(s) left unanswered, sorry."


def shut_down(settings: BridgeSettings, *, answering: AnswerThread | None, questions: queue.Queue[Question], done: bool,
              link: Link, outbox: Outbox, layout: ReplyLayout, stats: BridgeStats) -> None:
    """Stop serving (see the module doc). ``answering``: None when it never started; ``done``: stopped
    because max_questions were answered (nothing is left to wait for or to say)."""
    if answering is not None and not done:
        answering.join(timeout=settings.io_timeout)   # an answer in progress may finish
    left = questions.qsize() + (answering.unanswered if answering is not None else 0)
    if link.client is not None:
        if left and not done:
            outbox.put(layout.notice(going_offline(left)))
        lines = outbox.take()
        try:
            if lines:   # the chat read with them is dropped: we are stopping
                flush(link.client, lines, settings.io_timeout)
        except (ConnectionLost, PollFailed):
            pass
        outbox.confirm()
    link.close()
    log_event("stopped", **asdict(stats), unanswered=left)


def flush(client: Transport, lines: list[OutLine], seconds: float) -> None:
    """Send the last lines: at most ``seconds``, as fast as the transport may."""
    deadline = time.monotonic() + seconds
    pending = lines
    while True:
        client.exchange(pending)
        pending = []
        if all(line.delivered for line in lines) or time.monotonic() >= deadline:
            return
        time.sleep(FLUSH_PAUSE)
