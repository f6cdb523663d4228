"""The chat bridge: reads the game chat, answers the questions addressed to Jarvis.

Two threads, so that a slow answer never stalls the chat:

    poller (owns the connection)                      worker
    ─ poll chat every poll_interval ──▶ bounded queue ──▶ answer(question) ─┐
    ─ post reply lines ◀───────────────── outbox ◀──────── reply lines ◀────┘

- The poller is the only thread that touches the socket. It turns away a question with a
  polite notice when the player asked less than ``per_player_rate`` seconds ago or the queue
  (``queue_size``) is full; nothing is dropped silently. One worker answers in order, so each
  player's answers come in the order asked.
- Each poll is one write: the lines waiting to be posted, then ``events.chat.posts``. The
  server runs its queue in order, so the poll's reply (even ``Fail``) means the lines before it
  were delivered. When the connection dies, unconfirmed lines go back to the outbox (at least
  once: a line may show twice, never not at all), posts read but not yet handled stay in the
  inbox, the poller reconnects with exponential backoff (urllib3's Retry policy,
  ``reconnect_min_delay`` .. ``reconnect_max_delay``), keeps every queued question, and tells the chat nothing was lost.
  Chat typed while the connection is down never reaches Jarvis (the plugins keep events per
  connection); the notice asks players to ask again.
- Nothing the server does stops the bridge: ``Fail`` (a poll that threw: the chat stays queued
  for the next poll), garbage, stray replies, stalls are logged and counted (:class:`BridgeStats`);
  a lagging server is waited for, so chat typed during a stall is answered after it. Only a
  connection that is really gone (closed, reset, keepalive unanswered) makes it reconnect.
- Every event is one log line, ``event=<name> key=value ...`` (strings JSON-quoted).
"""
from __future__ import annotations

import logging
import queue
import signal
import threading
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Callable, Iterator

from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

from jarvis.bridge.chat import HELP, AnswerLike, addressed_question, answer_lines, echo, reply_lines
from mcpi.connection import RequestError

from jarvis.bridge.connection import AUTO, BridgeError, ChatClient, ConnectionLost, WireStats, check_token
from jarvis.bridge.wire import DIALECTS, ChatPost, format_event
from jarvis.config import BridgeSettings
from jarvis.errors import first_line

log = logging.getLogger(__name__)

Answerer = Callable[[str], AnswerLike]   # question -> answer, e.g. jarvis.pipeline.Jarvis.ask
Connector = Callable[[], ChatClient]    # opens a new connection; raises OSError when it cannot

MAX_TRACKED_PLAYERS = 1024    # rate-limit and name entries kept before old ones are pruned


@dataclass(frozen=True)
class Question:
    player_id: int
    player: str | None      # the name, when the server told it
    text: str
    seen_at: float          # time.monotonic() when the poller read it


@dataclass
class OutLine:
    """A chat line waiting to be posted (or posted, waiting for confirmation)."""

    text: str
    question: Question | None = None   # the question answered, on every line of an answer
    last: bool = False                 # the last line of an answer
    sent_at: float = 0.0


@dataclass
class BridgeStats(WireStats):
    polls: int = 0
    failed_polls: int = 0       # polls answered Fail (survived: the chat is read by the next poll)
    errors: int = 0             # unexpected errors in the poller (logged with a traceback, survived)
    questions: int = 0          # messages addressed to Jarvis
    accepted: int = 0           # queued for an answer
    refused: int = 0            # turned away with a notice (rate limit or queue full)
    answered: int = 0           # answers delivered (confirmed by the server)
    lines_sent: int = 0         # chat lines delivered
    max_waiting: int = 0        # the most questions ever waiting in the queue
    disconnects: int = 0
    reconnects: int = 0


def _log_event(event: str, level: int = logging.INFO, **fields: object) -> None:
    if log.isEnabledFor(level):
        log.log(level, format_event(event, **fields))


class Bridge:
    """The chat bridge. ``run()`` serves in the calling thread until ``stop()`` (or max_questions)."""

    def __init__(self, settings: BridgeSettings, answer: Answerer, *, connect: Connector | None = None,
                 max_questions: int | None = None) -> None:
        if settings.dialect not in (AUTO, *DIALECTS):
            raise BridgeError(f"unknown API dialect {settings.dialect!r} (choose from auto, {', '.join(DIALECTS)})")
        check_token(settings.mc_token)
        self.settings = settings
        self.max_questions = max_questions
        self.stats = BridgeStats()
        self._answer = answer
        self._stopping = threading.Event()
        self._connect = connect or (lambda: ChatClient.connect(settings, stats=self.stats, stopping=self._stopping))
        self._questions: queue.Queue[Question] = queue.Queue(maxsize=settings.queue_size)
        self._outbox: deque[OutLine] = deque()
        self._outbox_lock = threading.Lock()
        self._inbox: deque[tuple[ChatPost, float]] = deque()   # posts read, not handled yet (with when)
        self._unconfirmed: list[OutLine] = []
        self._wake = threading.Event()       # the worker has lines to post
        self._connected = threading.Event()
        self._client: ChatClient | None = None
        self._names: dict[int, str | None] = {}
        self._last_accepted: dict[int, float] = {}
        self._open = 0                        # accepted questions whose answer is not delivered yet
        self._lost_at = 0.0
        self._worker: threading.Thread | None = None
        self._answering = False               # the worker is inside answer() (read at shutdown)

    # ------------------------------------------------------------------ control

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def wait_connected(self, timeout: float) -> bool:
        return self._connected.wait(timeout)

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def stop(self) -> None:
        """Ask the bridge to stop (from any thread or a signal handler)."""
        self._stopping.set()
        self._wake.set()

    def run(self) -> None:
        """Connect (BridgeError after ``connect_attempts`` failures), then serve until stopped."""
        self._client = self._connect_at_start()
        if self._client is None:
            return
        self._worker = threading.Thread(target=self._work, name="jarvis-bridge-worker", daemon=True)
        self._worker.start()
        try:
            self._serve()
        finally:
            self._shut_down()

    # ------------------------------------------------------------------ poller (the connection's thread)

    def _serve(self) -> None:
        errors_in_a_row = 0
        while not self._stopping.is_set():
            if self._client is None:
                if not self._reconnect():
                    return
                continue
            self._wake.clear()
            try:
                self._poll()
                errors_in_a_row = 0
            except ConnectionLost as exc:
                self._on_lost(exc)
                continue
            except RequestError as exc:   # the poll threw on the server; the chat stays queued there
                self.stats.failed_polls += 1
                _log_event("poll_failed", logging.WARNING, error=exc, failed_polls=self.stats.failed_polls)
            except Exception as exc:  # noqa: BLE001 - a bug or garbage must not stop the bot
                self.stats.errors += 1
                errors_in_a_row += 1
                log.exception("the poller failed; reconnecting")
                if errors_in_a_row >= 3 and self._inbox:   # a post that fails every time: skip it
                    post, _ = self._inbox.popleft()
                    _log_event("post_skipped", logging.ERROR, player_id=post.entity_id, message=post.message)
                self._on_lost(exc)
                continue
            if self.max_questions is not None and self.stats.answered >= self.max_questions:
                _log_event("max_questions", answered=self.stats.answered)
                return
            self._wake.wait(self.settings.poll_interval)

    def _connect_at_start(self) -> ChatClient | None:
        client = connect_with_retries(self.settings, self._connect_fresh, self._stopping)
        if client is not None:
            _log_event("connected", host=self.settings.mc_host, port=self.settings.mc_port)
            self._connected.set()
        return client

    def _connect_fresh(self) -> ChatClient:
        """A new connection with the chat posted before now forgotten (not for this run)."""
        client = self._connect()
        try:
            client.start_session()
        except BaseException:
            client.close()
            raise
        _log_event("session", dialect=client.dialect)
        return client

    def _poll(self) -> None:
        with self._outbox_lock:
            lines = list(self._outbox)
            self._outbox.clear()
        now = time.monotonic()
        for line in lines:
            line.sent_at = now
        self._unconfirmed.extend(lines)
        self.stats.polls += 1
        try:
            posts = self._client.post_and_poll([line.text for line in lines])
        except RequestError:
            self._confirm()   # Fail is still a reply: the lines before the poll were handled
            raise
        self._confirm()   # the server answered: every line posted before the poll was delivered
        now = time.monotonic()
        self._inbox.extend((post, now) for post in posts)
        refusals: dict[int, list[tuple[Question, str]]] = {}
        try:
            while self._inbox:
                post, seen_at = self._inbox[0]
                self._on_post(post, seen_at, refusals)   # ConnectionLost here: the post stays for later
                self._inbox.popleft()
        finally:
            for entries in refusals.values():
                self._send_later([OutLine(self._refusal_notice(entries))])

    def _on_post(self, post: ChatPost, now: float, refusals: dict) -> None:
        text = addressed_question(post.message)
        if text is None:
            return
        question = Question(post.entity_id, self._player_name(post.entity_id), text, now)
        self.stats.questions += 1
        last = self._last_accepted.get(post.entity_id)
        if last is not None and now - last < self.settings.per_player_rate:
            refusals.setdefault(post.entity_id, []).append((question, "rate"))
            return
        if not text:
            self._remember_accept(post.entity_id, now)
            self._send_later([OutLine(line) for line in reply_lines(HELP, player=question.player,
                                                                     max_line=self.settings.max_line)])
            return
        try:
            self._questions.put_nowait(question)
        except queue.Full:
            refusals.setdefault(post.entity_id, []).append((question, "busy"))
            return
        self._remember_accept(post.entity_id, now)
        self._open += 1
        self.stats.accepted += 1
        self.stats.max_waiting = max(self.stats.max_waiting, self._questions.qsize())
        _log_event("question", player=question.player, player_id=question.player_id, question=text,
                   waiting=self._questions.qsize())

    def _refusal_notice(self, entries: list[tuple[Question, str]]) -> str:
        """One notice per player and poll, however many questions it turns away."""
        question = entries[0][0]
        self.stats.refused += len(entries)
        for refused, reason in entries:
            _log_event("refused", player=refused.player, player_id=refused.player_id, question=refused.text,
                       reason=reason)
        if all(reason == "rate" for _, reason in entries):
            why = f"one question every {self.settings.per_player_rate:g} s please"
        else:
            why = "busy"
        what = echo(question.text) if len(entries) == 1 else f"{len(entries)} questions"
        return reply_lines(f"{why}, ask again in a moment (not taken: {what})", player=question.player,
                           max_line=self.settings.max_line, max_lines=1)[0]

    def _player_name(self, entity_id: int) -> str | None:
        if entity_id not in self._names:
            if len(self._names) >= MAX_TRACKED_PLAYERS:
                self._names.clear()
            self._names[entity_id] = self._client.player_name(entity_id) if entity_id >= 0 else None
        return self._names[entity_id]

    def _remember_accept(self, entity_id: int, now: float) -> None:
        if len(self._last_accepted) >= MAX_TRACKED_PLAYERS:
            horizon = now - self.settings.per_player_rate
            self._last_accepted = {k: t for k, t in self._last_accepted.items() if t > horizon}
        self._last_accepted[entity_id] = now

    def _confirm(self) -> None:
        for line in self._unconfirmed:
            self.stats.lines_sent += 1
            if line.question is not None and line.last:
                self.stats.answered += 1
                self._open -= 1
                _log_event("reply", player=line.question.player, player_id=line.question.player_id,
                           latency_ms=round((line.sent_at - line.question.seen_at) * 1000))
        self._unconfirmed.clear()

    def _send_later(self, lines: list[OutLine], *, first: bool = False) -> None:
        with self._outbox_lock:
            if first:
                self._outbox.extendleft(reversed(lines))
            else:
                self._outbox.extend(lines)
        self._wake.set()

    # ------------------------------------------------------------------ losing and regaining the server

    def _on_lost(self, exc: Exception) -> None:
        self._connected.clear()
        self._client.close()
        self._client = None
        self._names.clear()
        self._send_later(self._unconfirmed, first=True)   # they may not have arrived: post them again
        self._unconfirmed = []
        self._lost_at = time.monotonic()
        self.stats.disconnects += 1
        _log_event("disconnected", logging.WARNING, error=exc, open_questions=self._open)

    def _reconnect(self) -> bool:
        client = connect_with_retries(self.settings, self._connect_fresh, self._stopping, attempts=0,
                                      failed_event="reconnect_failed")
        if client is None:
            return False
        self._client = client
        self.stats.reconnects += 1
        self._connected.set()
        _log_event("reconnected", logging.WARNING, down_s=time.monotonic() - self._lost_at,
                   open_questions=self._open)
        self._send_later([OutLine(line) for line in self._back_notice()], first=True)
        return True

    def _back_notice(self) -> list[str]:
        follow = f", {self._open} answer(s) to follow" if self._open else ""
        return reply_lines(f"Back after a lost connection: nothing was lost{follow}. Questions asked while "
                           "I was away did not reach me, please ask again.", max_line=self.settings.max_line)

    # ------------------------------------------------------------------ worker

    def _work(self) -> None:
        while not self._stopping.is_set():
            try:
                question = self._questions.get(timeout=0.2)
            except queue.Empty:
                continue
            self._answering = True
            lines = self._answer_lines(question)
            self._answering = False
            self._send_later([OutLine(text, question, last=(i == len(lines) - 1)) for i, text in enumerate(lines)])

    def _answer_lines(self, question: Question) -> list[str]:
        settings = self.settings
        began = time.monotonic()
        try:
            answer = self._answer(question.text)
        except Exception as exc:  # noqa: BLE001 - a bad question or a reader bug must not stop the bridge
            if getattr(exc, "user_error", False):
                message = first_line(exc)
                _log_event("answer_failed", player=question.player, question=question.text, error=message)
            else:
                log.exception("answering %r failed", question.text)
                message = "sorry, something went wrong answering that"
            return reply_lines(message, player=question.player, max_line=settings.max_line,
                               max_lines=settings.max_reply_lines)
        _log_event("answered", player=question.player, question=question.text, found=bool(answer.found),
                   answer=answer.text, title=answer.title, reader=getattr(answer, "reader", None),
                   answer_ms=round((time.monotonic() - began) * 1000),
                   waited_ms=round((began - question.seen_at) * 1000))
        return answer_lines(answer, player=question.player, max_line=settings.max_line,
                            max_lines=settings.max_reply_lines)

    # ------------------------------------------------------------------ shutting down

    def _shut_down(self) -> None:
        self._stopping.set()
        done = self.max_questions is not None and self.stats.answered >= self.max_questions
        if self._worker is not None and not done:
            self._worker.join(timeout=self.settings.io_timeout)   # an answer in progress may finish
        left = self._questions.qsize() + int(self._answering)
        if self._client is not None:
            if left and not done:
                notice = reply_lines(f"Going offline, {left} question(s) left unanswered, sorry.",
                                     max_line=self.settings.max_line)
                self._send_later([OutLine(line) for line in notice])
            with self._outbox_lock:
                lines = list(self._outbox)
                self._outbox.clear()
            try:
                if lines:   # the chat read with them is dropped: we are stopping
                    self._client.post_and_poll([line.text for line in lines])
                self._unconfirmed.extend(lines)
                self._confirm()
            except (ConnectionLost, RequestError):
                pass
            self._client.close()
            self._client = None
        self._connected.clear()
        _log_event("stopped", **asdict(self.stats), unanswered=left)


def connect_with_retries(settings: BridgeSettings, connect: Connector, stopping: threading.Event | None = None,
                         attempts: int | None = None, failed_event: str = "connect_failed") -> ChatClient | None:
    """``connect()``, tried ``attempts`` times (default ``connect_attempts``; 0: forever) with
    exponential backoff (urllib3's ``Retry`` policy: the second attempt at once, then
    ``reconnect_min_delay`` doubling up to ``reconnect_max_delay``); BridgeError when all fail.

    None when ``stopping`` is set before a connection is made.
    """
    stopping = stopping or threading.Event()
    attempts = settings.connect_attempts if attempts is None else attempts
    retry = Retry(total=attempts - 1 if attempts else None, connect=None, read=None, redirect=None, status=None,
                  other=None, backoff_factor=settings.reconnect_min_delay / 2, backoff_max=settings.reconnect_max_delay)
    attempt = 0
    while not stopping.is_set():
        attempt += 1
        try:
            return connect()
        except OSError as exc:
            try:
                retry = retry.increment(error=exc)
            except MaxRetryError:
                raise BridgeError(
                    f"cannot reach the Minecraft server's chat API at {settings.mc_host}:{settings.mc_port} "
                    f"after {attempt} attempt(s): {exc} (is the server running with the RaspberryJuice "
                    "plugin, or mcserver/server.js?)") from exc
            delay = retry.get_backoff_time()
            # INFO (-v): a start-up failure ends as one BridgeError line; retries are not user news.
            _log_event(failed_event, attempt=attempt, error=exc, retry_in_s=delay)
            stopping.wait(delay)
    return None


def check_server(settings: BridgeSettings) -> None:
    """Fail fast with BridgeError when the chat API is unreachable or refuses the token (before loading
    a model for nothing): one session is started, as the bridge will start its own."""
    check_token(settings.mc_token)

    def start() -> ChatClient:
        client = ChatClient.connect(settings)
        try:
            client.start_session()
        except BaseException:
            client.close()
            raise
        return client

    connect_with_retries(settings, start).close()


@contextmanager
def _stop_on_signals(bridge: Bridge) -> Iterator[None]:
    """SIGINT/SIGTERM stop the bridge cleanly; a second SIGINT interrupts at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum, frame):  # noqa: ARG001 - signal API
        if bridge.stopping and signum == signal.SIGINT:
            raise KeyboardInterrupt
        _log_event("signal", signal=signal.Signals(signum).name)
        bridge.stop()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def serve(settings: BridgeSettings, jarvis, max_questions: int | None = None) -> int:
    """Run the chat bridge for ``jarvis`` (a jarvis.pipeline.Jarvis, or any question -> answer callable)."""
    answer = getattr(jarvis, "ask", jarvis)
    bridge = Bridge(settings, answer, max_questions=max_questions)
    with _stop_on_signals(bridge):
        bridge.run()
    return 0
