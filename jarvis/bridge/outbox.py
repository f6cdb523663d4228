"""The outbox: chat lines waiting to be posted, and lines posted but not confirmed yet.

Any thread may add lines (the answering thread its answers, the poller its notices); only the poller takes
them, hands them to the transport and confirms what the transport marked ``delivered``. Lines not
confirmed when the connection drops go back to the front (at least once: a line may show twice,
never not at all). An answer counts as delivered when its last line is.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from typing import Callable

from jarvis.bridge.events import BridgeStats, PlayerNames, log_event
from jarvis.bridge.transport import STOP_SLICE, OutLine, StopFlag


class Outbox:
    """Lines out, and the questions whose answers are still to be delivered (see the module doc)."""

    def __init__(self, stats: BridgeStats, names: PlayerNames) -> None:
        self.stats = stats
        self.names = names
        self.answers_due = 0                   # accepted questions whose answer is not delivered yet
        self._waiting: deque[OutLine] = deque()
        self._lock = threading.Lock()
        self._unconfirmed: list[OutLine] = []  # the poller's only
        self._wake = threading.Event()         # lines were added

    def put(self, lines: list[OutLine], *, first: bool = False) -> None:
        """Lines to post (``first``: before those already waiting); from any thread."""
        with self._lock:
            if first:
                self._waiting.extendleft(reversed(lines))
            else:
                self._waiting.extend(lines)
        self._wake.set()

    def take(self) -> list[OutLine]:
        """Every waiting line, now being posted (unconfirmed until the transport delivers it)."""
        self._wake.clear()
        with self._lock:
            lines = list(self._waiting)
            self._waiting.clear()
        now = time.monotonic()
        for line in lines:
            line.sent_at = now
        self._unconfirmed.extend(lines)
        return lines

    def confirm(self) -> None:
        """Count the lines the transport delivered; the others stay unconfirmed (sent again after a drop)."""
        waiting = []
        for line in self._unconfirmed:
            if not line.delivered:
                waiting.append(line)
                continue
            self.stats.lines_sent += 1
            if line.question is not None and line.last:
                self.stats.answered += 1
                self.answers_due -= 1
                log_event("reply", player=self.names(line.question.player), player_id=line.question.player_id,
                          private=line.to is not None,
                          latency_ms=round((time.monotonic() - line.question.seen_at) * 1000))
        self._unconfirmed = waiting

    def resend_unconfirmed(self) -> None:
        """The connection dropped: lines not confirmed may not have arrived; post them again, first."""
        self.put(self._unconfirmed, first=True)
        self._unconfirmed = []

    def wait(self, seconds: float, stopping: StopFlag, interrupted: Callable[[], bool]) -> None:
        """Until lines are added after the last take(), ``stopping`` is set, ``interrupted()`` is true,
        or ``seconds`` have passed.

        In short slices: a stop or a reload may be asked from a signal handler, which must not take
        the wake event's lock, so neither sets it.
        """
        end = time.monotonic() + seconds
        while not (stopping.is_set() or interrupted()):
            left = end - time.monotonic()
            if left <= 0 or self._wake.wait(min(left, STOP_SLICE)):
                return
