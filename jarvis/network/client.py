"""The asking side of the pool: questions onto the stream, replies back, each delivered once.

    pool = PoolClient(RedisLink(settings), player_id=...)    # one per process (a bridge, a `jarvis ask`)
    pool.start()
    answer = pool.ask("what do cows drop?")                   # `jarvis ask` through the pool: waits for the reply
    pool.submit(question, deliver, notify)                    # the chat bridge: returns at once (below)
    pool.close()

``submit(question, deliver, notify)`` is what the chat bridge hands each accepted question to
(``question``: its text, its player, its player key). Later, from the pool's own thread:

- ``deliver(answer)`` once, with the worker's answer rebuilt as a ``jarvis.answer.Answer`` (the bridge
  composes the chat lines with its own rules), or ``deliver(exc)`` with a user error: the question cannot
  be asked (too long, no words), no worker answered within ``max_age`` (then the player is told so rather
  than left waiting), or the pool already holds ``max_waiting`` questions of this process;
- ``notify(text)`` at most once, when no answer came within ``busy_after``: the "busy" notice. The
  question stays in the stream, and its answer is delivered when it comes.

Guarantees: at least once through Redis (workers re-answer what a dead worker left), at most once to the
chat: a question id is delivered once, however many workers answered it (a claim of a question whose first
worker was only slow). One player's answers are delivered in the order asked, except past a question whose
"busy" notice was given (the player was told it will come later).

Redis lost: a question that could not be added is kept and added when Redis is back (until it is too old);
the replies are read on from the last one seen, so nothing written before a restart is missed (Redis's
append-only file keeps them). The pool's thread reads replies with ``XREAD BLOCK`` and keeps the clocks
(busy notices, expiry) even while Redis is away.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, replace
from typing import Callable, Hashable, Protocol

from jarvis.logs import format_event
from jarvis.errors import JarvisError
from jarvis.network.link import LOST, Backoff, RedisLink
from jarvis.network.messages import (BadMessage, QuestionMessage, ReplyMessage, new_id, questions_key, replies_key)
from jarvis.answer import Answer
from jarvis.question_text import QuestionError, check_question

log = logging.getLogger(__name__)

BLOCK_MS = 200                 # XREAD waits this long for replies before the clocks are looked at
REPLY_GRACE = 10.0             # a ticket outlives max_age by this much (at most half max_age): an answer
                               # begun just in time may still come
REMEMBERED = 4096              # settled question ids kept to tell a second answer from a stranger's
BUSY_NOTICE = "busy right now, your answer will follow as soon as it is ready"


class Asked(Protocol):
    """What the pool needs of a question: the chat bridge's Question fits (text, player, key)."""

    text: str
    player: str | None
    key: Hashable


@dataclass(frozen=True)
class _PlainQuestion:
    text: str
    player: str | None = None
    key: Hashable = None


class PoolTimeout(JarvisError):
    """No worker answered in time."""


class PoolBusy(JarvisError):
    """This process has max_waiting questions in the pool already."""


Deliver = Callable[[Answer | Exception], None]
Notify = Callable[[str], None]


@dataclass
class PoolStats:
    asked: int = 0              # questions submitted
    added: int = 0              # ... added to the stream (a retry after a lost connection counts once more)
    answered: int = 0           # answers delivered (each question id at most once)
    duplicates: int = 0         # second answers to a question already delivered (ignored)
    late: int = 0               # answers that came after the question expired (ignored: the player was told)
    strays: int = 0             # replies to no question of ours
    busy_notices: int = 0
    expired: int = 0            # questions no worker answered within max_age (the player was told)
    bad_replies: int = 0        # replies that were not what a worker writes (dropped)
    refused: int = 0            # turned away: max_waiting reached, or not a question
    reconnects: int = 0


@dataclass(eq=False)
class _Ticket:
    id: str
    question: Asked
    asked_at: float                       # time.monotonic()
    deliver: Deliver
    notify: Notify | None
    added: bool = False                   # in the stream (XADD answered)
    unsent: bool = False                  # its XADD failed (Redis away): the pool's thread adds it later
    noticed: bool = False                 # the busy notice went out
    result: Answer | Exception | None = None
    worker: str = ""


class PoolClient:
    """The asking side of the worker pool; see the module docstring. Thread-safe."""

    def __init__(self, link: RedisLink, *, player_id: Callable[[str | None], str] | None = None,
                 origin: str = "serve") -> None:
        self.link = link
        self.settings = link.settings
        self.client_id = new_id()
        self.stats = PoolStats()
        self._player_id = player_id or (lambda name: "")
        self._origin = origin
        self._stream = questions_key(self.settings.prefix)
        self._replies = replies_key(self.settings.prefix, self.client_id)
        self._last_reply = "0-0"
        self._lock = threading.Lock()
        self._tickets: dict[str, _Ticket] = {}
        self._order: dict[Hashable, deque[_Ticket]] = {}
        self._settled: OrderedDict[str, str] = OrderedDict()   # question id -> "answered" or "expired"
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None
        self.expire_after = self.settings.max_age + min(REPLY_GRACE, self.settings.max_age / 2)

    # ------------------------------------------------------------------ lifetime

    def start(self) -> "PoolClient":
        """Check Redis (NetworkError, one line, for a refused password or no server), then read replies."""
        self.link.check()
        try:
            self.link.client.xgroup_create(self._stream, self.settings.group, id="0", mkstream=True)
        except Exception as exc:  # noqa: BLE001 - BUSYGROUP: the workers made it; anything else shows at the first XADD
            if "BUSYGROUP" not in str(exc):
                log.debug("consumer group not created: %s", self.link.describe(exc))
        self._thread = threading.Thread(target=self._run, name="jarvis-pool-replies", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        if self._thread is not None:
            self._thread.join(timeout=self.settings.io_timeout + BLOCK_MS / 1000 + 1)
        self.link.close()
        log.info(format_event("pool_closed", client=self.client_id, waiting=self.waiting, **vars(self.stats)))

    def __enter__(self) -> "PoolClient":
        return self if self._thread is not None else self.start()

    def __exit__(self, *exc_info) -> None:
        self.close()

    @property
    def waiting(self) -> int:
        """Questions in the pool not delivered yet."""
        with self._lock:
            return len(self._tickets)

    # ------------------------------------------------------------------ asking

    def submit(self, question: Asked, deliver: Deliver, notify: Notify | None = None) -> None:
        """Send ``question`` to the pool; ``deliver`` gets its answer (or a user error) once, later."""
        try:
            text = check_question(question.text)   # what a worker would refuse is refused here, in words
        except QuestionError as exc:
            self.stats.refused += 1
            deliver(exc)
            return
        ticket = _Ticket(new_id(), question, time.monotonic(), deliver, notify)
        with self._lock:
            if len(self._tickets) >= self.settings.max_waiting:
                full = True
            else:
                full = False
                self._tickets[ticket.id] = ticket
                if question.key is not None:
                    self._order.setdefault(question.key, deque()).append(ticket)
                self.stats.asked += 1
        if full:
            self.stats.refused += 1
            deliver(PoolBusy("busy, ask again in a moment"))
            return
        self._add(ticket, text)

    def ask(self, text: str, timeout: float | None = None, notify: Notify | None = None) -> Answer:
        """Ask and wait for the answer (``jarvis ask`` through the pool); ``seconds`` is the whole round trip.
        PoolTimeout when no worker answered within ``timeout`` (default: max_age and a grace)."""
        done = threading.Event()
        box: list[Answer | Exception] = []
        began = time.perf_counter()

        def deliver(result: Answer | Exception) -> None:
            box.append(result)
            done.set()

        self.submit(_PlainQuestion(text), deliver, notify)
        if not done.wait(self.expire_after + 1 if timeout is None else timeout):
            raise PoolTimeout(self._timeout_message())
        result = box[0]
        if isinstance(result, PoolTimeout):
            raise PoolTimeout(self._timeout_message())
        if isinstance(result, Exception):
            raise result
        return replace(result, seconds=time.perf_counter() - began)

    def _add(self, ticket: _Ticket, text: str | None = None) -> None:
        """XADD the question; a lost connection leaves it for the pool's thread to add when Redis is back."""
        try:
            self._xadd(ticket, text)
        except LOST as exc:
            ticket.unsent = True
            log.info(format_event("question_not_added_yet", question_id=ticket.id, error=self.link.describe(exc)))

    def _xadd(self, ticket: _Ticket, text: str | None = None) -> None:
        question = ticket.question
        message = QuestionMessage(ticket.id, text or check_question(question.text), self.client_id,
                                  self._player_id(question.player) or "", self._origin)
        self.link.client.xadd(self._stream, message.fields(), maxlen=self.settings.max_stream, approximate=True)
        ticket.added, ticket.unsent = True, False
        self.stats.added += 1

    # ------------------------------------------------------------------ the pool's thread

    def _run(self) -> None:
        backoff = Backoff(self.settings)
        lost = False
        while not self._closing.is_set():
            try:
                if lost:
                    self.link.client.ping()
                    lost = False
                    backoff.reset()
                    self.stats.reconnects += 1
                    log.warning(format_event("redis_back", client=self.client_id, waiting=self.waiting))
                self._add_unsent()
                self._read_replies()
            except LOST as exc:
                if not lost:
                    log.warning(format_event("redis_lost", client=self.client_id, error=self.link.describe(exc),
                                             waiting=self.waiting))
                lost = True
                self._keep_time()
                self._closing.wait(backoff.next())
                continue
            except Exception:  # noqa: BLE001 - a bug here must not leave players without answers for good
                log.exception("the pool's reply reader failed; going on")
                self._closing.wait(1.0)
            self._keep_time()

    def _add_unsent(self) -> None:
        with self._lock:
            unsent = [t for t in self._tickets.values() if t.unsent]   # never one whose first XADD is under way
        for ticket in unsent:
            self._xadd(ticket)     # LOST: back to the backoff, the rest still unsent

    def _read_replies(self) -> None:
        entries = self.link.client.xread({self._replies: self._last_reply}, count=100, block=BLOCK_MS)
        for _, messages in entries or []:
            for entry_id, fields in messages:
                self._last_reply = entry_id
                self._on_reply(fields)

    def _on_reply(self, fields: dict) -> None:
        qid = fields.get("id", "")
        with self._lock:
            ticket = self._tickets.get(qid)
        if ticket is None:
            settled = self._settled.get(qid)
            if settled == "answered":
                self.stats.duplicates += 1
                log.info(format_event("duplicate_answer", question_id=qid, worker=fields.get("worker")))
            elif settled == "expired":
                self.stats.late += 1
                log.warning(format_event("answer_after_expiry", question_id=qid, worker=fields.get("worker")))
            else:
                self.stats.strays += 1
                log.info(format_event("stray_reply", question_id=qid))
            return
        try:
            reply = ReplyMessage.parse(fields, check_question(ticket.question.text))
        except BadMessage as exc:
            self.stats.bad_replies += 1
            log.warning(format_event("bad_reply", question_id=qid, why=str(exc), worker=fields.get("worker")))
            return     # another worker's answer, or the expiry, settles it
        result: Answer | Exception = reply.answer if reply.answer is not None else QuestionError(
            "sorry, that could not be read as a question")
        self._settle(ticket, result, reply.worker)

    def _settle(self, ticket: _Ticket, result: Answer | Exception, worker: str = "") -> None:
        with self._lock:
            if self._tickets.pop(ticket.id, None) is None:
                return
            ticket.result, ticket.worker = result, worker
            self._settled[ticket.id] = "expired" if isinstance(result, PoolTimeout) else "answered"
            while len(self._settled) > REMEMBERED:
                self._settled.popitem(last=False)
            key = ticket.question.key
            ready = [ticket] if key is None else self._releasable(key)
        for done in ready:
            self._hand_over(done)

    def _releasable(self, key: Hashable) -> list[_Ticket]:
        """Settled tickets of one player that may be delivered now, in the order asked (holding the lock).
        Every ticket with a key is in its player's queue from submit() until released here."""
        queue = self._order.get(key)
        if not queue:
            return []
        ready = []
        for waiting in list(queue):
            if waiting.result is not None:
                ready.append(waiting)
                queue.remove(waiting)
            elif not waiting.noticed:
                break        # an earlier question of this player, not answered and not excused by a notice
        if not queue:
            del self._order[key]
        return ready

    def _hand_over(self, ticket: _Ticket) -> None:
        result = ticket.result
        if isinstance(result, Answer):
            self.stats.answered += 1
        try:
            ticket.deliver(result)
        except Exception:  # noqa: BLE001 - the receiver's bug must not stop the pool
            log.exception("delivering the answer to question %s failed", ticket.id)

    def _keep_time(self) -> None:
        """Busy notices for questions waiting busy_after, expiry for those waiting longer than max_age."""
        now = time.monotonic()
        notices, expired, freed = [], [], set()
        with self._lock:
            for ticket in list(self._tickets.values()):
                waited = now - ticket.asked_at
                if waited > self.expire_after:
                    expired.append(ticket)
                elif waited > self.settings.busy_after and not ticket.noticed:
                    ticket.noticed = True
                    notices.append(ticket)
                    # later answers of this player no longer wait for this one
                    if ticket.question.key is not None:
                        freed.add(ticket.question.key)
        for ticket in notices:
            self.stats.busy_notices += 1
            log.info(format_event("busy_notice", question_id=ticket.id, waited_s=now - ticket.asked_at,
                                  added=ticket.added))
            if ticket.notify is not None:
                try:
                    ticket.notify(BUSY_NOTICE)
                except Exception:  # noqa: BLE001
                    log.exception("the busy notice for question %s failed", ticket.id)
        for key in freed:
            with self._lock:
                ready = self._releasable(key)
            for done in ready:
                self._hand_over(done)
        for ticket in expired:
            self.stats.expired += 1
            log.warning(format_event("no_answer_in_time", question_id=ticket.id, max_age_s=self.settings.max_age,
                                     added=ticket.added))
            self._settle(ticket, PoolTimeout("sorry, no answer came in time: please ask again later"))

    def _timeout_message(self) -> str:
        return (f"no worker answered within {self.expire_after:g} s through Redis at "
                f"{self.link.where} (is a `jarvis worker` running?)")
