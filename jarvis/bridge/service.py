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
- Every event is one log line, ``event=<name> key=value ...`` (strings JSON-quoted); players are
  named by a salted hash (jarvis/privacy.py) unless the admin asks for names
  (``[log] player_names``).

Two transports, one bridge: the RaspberryJuice API (``connection.ChatClient``: broadcasts only)
and the player bot (``player.PlayerBot``: joins as a player, reads whispers, answers a whisper by
whisper). Both offer ``start_session()``, ``exchange(lines) -> posts`` (marking the lines the
server took as delivered) and ``close()``; how replies look is the transport's ``ReplyStyle``.
SIGHUP (through :func:`serve`) reloads what can change without a reconnection.
"""
from __future__ import annotations

import logging
import queue
import signal
import threading
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Callable, Iterator

from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

from mcpi.connection import RequestError

from jarvis.bridge.chat import (HELP, PREFIX, AnswerLike, ReplyStyle, addressed_question, answer_lines, echo,
                                feedback_kind, reply_lines)
from jarvis.bridge.connection import (AUTO, STOP_SLICE, BridgeError, ChatClient, ConnectionLost, StopFlag, WireStats,
                                      check_token)
from jarvis.bridge.wire import DIALECTS, ChatPost, format_event
from jarvis.config import REPLY_MODES, BotSettings, BridgeSettings
from jarvis.errors import JarvisError, first_line
from jarvis.privacy import player_hash

log = logging.getLogger(__name__)

Answerer = Callable[[str], AnswerLike]   # question -> answer, e.g. jarvis.pipeline.Jarvis.ask
# Or a pool that answers later, from its own thread (jarvis.network.PoolClient, `serve --redis`):
# submit(question, deliver(answer or error), notify(notice text)); waiting: questions not delivered yet.
Connector = Callable[[], ChatClient]    # opens a new connection; raises OSError when it cannot
# The settings as the file now says: the bridge's, the bot's (None: no bot), and the names of the
# other settings that changed (the reader, the index, ...), which need a restart.
Reloader = Callable[[], tuple[BridgeSettings, "BotSettings | None", list[str]]]

# What SIGHUP may change without a reconnection; anything else is logged as needing a restart.
RELOADABLE = {
    "bridge": ("poll_interval", "queue_size", "per_player_rate", "max_line", "max_reply_lines", "slow_after",
               "dead_after", "reconnect_min_delay", "reconnect_max_delay", "io_timeout"),
    "bot": ("reply", "whisper_command", "max_message", "max_messages", "messages_per_second", "burst",
            "public_patterns", "whisper_patterns", "join_timeout"),
}

MAX_TRACKED_PLAYERS = 1024    # rate-limit and name entries kept before old ones are pruned


@dataclass(frozen=True)
class Question:
    player_id: int
    player: str | None      # the name, when the server told it
    text: str
    seen_at: float          # time.monotonic() when the poller read it
    private: bool = False   # whispered to the player bot
    key: int | str = 0      # one player across polls: the bot's name (case-folded) or the plugin's entity id


@dataclass
class OutLine:
    """A chat line waiting to be posted (or posted, waiting for confirmation)."""

    text: str
    question: Question | None = None   # the question answered, on every line of an answer
    last: bool = False                 # the last line of an answer
    sent_at: float = 0.0
    to: str | None = None              # whispered to this player (player bot); None: public
    delivered: bool = False            # the transport says the server took it


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
    reloads: int = 0            # settings reloaded (SIGHUP)


def _log_event(event: str, level: int = logging.INFO, **fields: object) -> None:
    if log.isEnabledFor(level):
        log.log(level, format_event(event, **fields))


class Bridge:
    """The chat bridge. ``run()`` serves in the calling thread until ``stop()`` (or max_questions)."""

    def __init__(self, settings: BridgeSettings, answer: Answerer, *, connect: Connector | None = None,
                 max_questions: int | None = None, bot: BotSettings | None = None, salt: bytes = b"",
                 log_player_names: bool = False, profiles: Path | None = None, reload: Reloader | None = None,
                 question_log=None) -> None:
        if settings.dialect not in (AUTO, *DIALECTS):
            raise BridgeError(f"unknown API dialect {settings.dialect!r} (choose from auto, {', '.join(DIALECTS)})")
        check_token(settings.mc_token)
        if bot is not None:
            check_bot(bot)
        self.settings = settings
        self.bot = bot
        self.max_questions = max_questions
        self.stats = BridgeStats()
        self._answer = answer
        self._pool = answer if hasattr(answer, "submit") else None
        self._salt = salt
        self._log_player_names = log_player_names
        self._reload_source = reload
        self._reload_requested = False
        self._signals: list[str] = []        # signals received, not logged yet (see on_signal)
        self._stopping = StopFlag()          # set by stop(), from any thread or a signal handler
        if connect is None and bot is not None:
            from jarvis.bridge.player import PlayerBot

            seen: set[str] = set()   # players the tab list has shown, across reconnections
            connect = lambda: PlayerBot.connect(self.bot, profiles=profiles or Path("."), stats=self.stats,  # noqa: E731
                                                stopping=self._stopping, seen=seen)
        self._connect = connect or (lambda: ChatClient.connect(self.settings, stats=self.stats, stopping=self._stopping))
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
        # The question log (jarvis.questionlog.QuestionLog, None: off), and each player's last logged
        # answer (entry id, when) for "jarvis, wrong" / "jarvis thanks"; written by the worker.
        self._log = question_log
        self._last_logged: dict[int | str, tuple[str, float]] = {}
        self._last_logged_lock = threading.Lock()

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
        """Ask the bridge to stop (from any thread, or a signal handler: it takes no lock)."""
        self._stopping.set()

    def request_reload(self) -> None:
        """Reload the settings at the poller's next turn (safe from a signal handler: it takes no lock)."""
        self._reload_requested = True

    def on_signal(self, name: str) -> None:
        """Note a signal for the log (from a signal handler: logging there could deadlock or raise)."""
        self._signals.append(name)    # one atomic step, no lock

    @property
    def style(self) -> ReplyStyle:
        """How replies look on this transport (read each time: a reload may change it)."""
        if self.bot is not None:
            return ReplyStyle("", self.bot.max_message, self.bot.max_messages, self.bot.whisper_command)
        return ReplyStyle(PREFIX, self.settings.max_line, self.settings.max_reply_lines)

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
            self._log_signals()
            if self._reload_requested:
                self._reload()
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
            self._wait_for_work(self.settings.poll_interval)

    def _wait_for_work(self, seconds: float) -> None:
        """Until the worker has lines to post, a stop or a reload is asked, or ``seconds`` have passed.
        In short slices: stop() and request_reload() may come from a signal handler, which must not
        take the wake event's lock, so they do not set it."""
        end = time.monotonic() + seconds
        while not (self._stopping.is_set() or self._reload_requested):
            left = end - time.monotonic()
            if left <= 0 or self._wake.wait(min(left, STOP_SLICE)):
                return

    def _log_signals(self) -> None:
        while self._signals:
            _log_event("signal", signal=self._signals.pop(0))

    @property
    def _server(self) -> tuple[str, int, str]:
        """Where this transport connects: host, port, and what to call it in an error."""
        if self.bot is not None:
            return self.bot.host, self.bot.port, "the game server (as a player)"
        return self.settings.mc_host, self.settings.mc_port, "the Minecraft server's chat API"

    def _connect_at_start(self) -> ChatClient | None:
        client = connect_with_retries(self.settings, self._connect_fresh, self._stopping, server=self._server)
        if client is not None:
            host, port, _ = self._server
            _log_event("connected", host=host, port=port, transport="bot" if self.bot else "api")
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
            posts = self._client.exchange(lines)
        finally:
            self._confirm()   # what the transport says the server took (the plugin API: all, Fail included)
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
                self._send_later(self._refusal_notice(entries))

    def _on_post(self, post: ChatPost, now: float, refusals: dict) -> None:
        text = addressed_question(post.message)
        if text is None and post.private:   # a whisper to the bot is a question, "jarvis," or not
            text = post.message.strip()
        if text is None:
            return
        name = post.player if post.player is not None else self._player_name(post.entity_id)
        key = name.casefold() if post.player is not None else post.entity_id   # one rate per player
        question = Question(post.entity_id, name, text, now, private=post.private, key=key)
        if self._log is not None and self._on_feedback(question):
            return
        self.stats.questions += 1
        last = self._last_accepted.get(key)
        if last is not None and now - last < self.settings.per_player_rate:
            refusals.setdefault(key, []).append((question, "rate"))
            return
        if not text:
            self._remember_accept(key, now)
            self._send_later(self._lines_for(question, HELP, answered=False))
            return
        try:
            self._questions.put_nowait(question)
        except queue.Full:
            refusals.setdefault(key, []).append((question, "busy"))
            return
        self._remember_accept(key, now)
        self._open += 1
        self.stats.accepted += 1
        self.stats.max_waiting = max(self.stats.max_waiting, self._questions.qsize())
        _log_event("question", player=self._who(question.player), player_id=question.player_id, question=text,
                   private=question.private, waiting=self._questions.qsize())

    def _on_feedback(self, question: Question) -> bool:
        """Mark the player's last answer in the log when the message is feedback on it; True if it was."""
        kind = feedback_kind(question.text)
        if kind is None:
            return False
        with self._last_logged_lock:
            entry_id, answered_at = self._last_logged.pop(question.key, ("", 0.0))
        if entry_id and question.seen_at - answered_at <= self._log.settings.feedback_window:
            self._log.mark(entry_id, kind, player=question.player)
            _log_event("feedback", player=self._who(question.player), player_id=question.player_id, feedback=kind)
            if kind == "wrong":
                self._send_later(self._lines_for(question, "noted, the admin will see it. Thanks!", answered=False))
        elif kind == "wrong":
            self._send_later(self._lines_for(question, "no answer of mine in the last minute to mark", answered=False))
        return True

    def _refusal_notice(self, entries: list[tuple[Question, str]]) -> list[OutLine]:
        """One notice per player and poll, however many questions it turns away."""
        question = entries[0][0]
        self.stats.refused += len(entries)
        for refused, reason in entries:
            _log_event("refused", player=self._who(refused.player), player_id=refused.player_id,
                       question=refused.text, reason=reason)
        if all(reason == "rate" for _, reason in entries):
            why = f"one question every {self.settings.per_player_rate:g} s please"
        else:
            why = "busy"
        what = echo(question.text) if len(entries) == 1 else f"{len(entries)} questions"
        return self._lines_for(question, f"{why}, ask again in a moment (not taken: {what})", max_lines=1,
                               answered=False)

    # ------------------------------------------------------------------ what the chat shows

    def _destination(self, question: Question | None) -> str | None:
        """Whom a reply is whispered to (None: said in public). The plugin API can only broadcast."""
        if self.bot is None or question is None or question.player is None:
            return None
        mode = self.bot.reply
        if mode == "private" or (mode == "same" and question.private):
            return question.player
        return None

    def _lines_for(self, question: Question | None, text: str, *, source: str | None = None,
                   max_lines: int | None = None, answered: bool = True) -> list[OutLine]:
        """``text`` (a notice, or why a question could not be answered; naming ``source`` if given) as
        this transport's chat lines, to where ``question`` gets its answer."""
        return self._out_lines(question, answered, max_lines, lambda addressee, width, lines, prefix: reply_lines(
            text, player=addressee, source=source, max_line=width, max_lines=lines, prefix=prefix))

    def _answer_reply(self, question: Question, answer: AnswerLike) -> list[OutLine]:
        """The answer's reply (jarvis/replies.py: stated, not sure, or I don't know) as chat lines."""
        return self._out_lines(question, True, None, lambda addressee, width, lines, prefix: answer_lines(
            answer, player=addressee, max_line=width, max_lines=lines, prefix=prefix))

    def _out_lines(self, question: Question | None, answered: bool, max_lines: int | None,
                   compose: Callable[[str | None, int, int, str], list[str]]) -> list[OutLine]:
        """``compose(addressee, line width, line count, prefix)`` fitted to this transport and destination."""
        style = self.style
        to = self._destination(question)
        limit = style.max_line
        if to is not None:
            from jarvis.bridge.player import whisper_overhead

            limit -= whisper_overhead(style.whisper_command, to)
        addressee = question.player if question is not None and to is None else None
        lines = _fit(lambda width: compose(addressee, width, max_lines or style.max_lines, style.prefix),
                     limit, style.prefix)
        return [OutLine(line, question if answered else None, last=answered and i == len(lines) - 1, to=to)
                for i, line in enumerate(lines)]

    def _who(self, name: str | None) -> str | None:
        """A player as log lines name them: a salted hash unless the admin asked for names."""
        if name is None or self._log_player_names:
            return name
        return player_hash(name, self._salt)

    def _player_name(self, entity_id: int) -> str | None:
        if entity_id not in self._names:
            if len(self._names) >= MAX_TRACKED_PLAYERS:
                self._names.clear()
            self._names[entity_id] = self._client.player_name(entity_id) if entity_id >= 0 else None
        return self._names[entity_id]

    def _remember_accept(self, key: int | str, now: float) -> None:
        if len(self._last_accepted) >= MAX_TRACKED_PLAYERS:
            horizon = now - self.settings.per_player_rate
            self._last_accepted = {k: t for k, t in self._last_accepted.items() if t > horizon}
        self._last_accepted[key] = now

    def _confirm(self) -> None:
        """Count the lines the transport delivered; the others stay unconfirmed (sent again after a drop)."""
        waiting = []
        for line in self._unconfirmed:
            if not line.delivered:
                waiting.append(line)
                continue
            self.stats.lines_sent += 1
            if line.question is not None and line.last:
                self.stats.answered += 1
                self._open -= 1
                _log_event("reply", player=self._who(line.question.player), player_id=line.question.player_id,
                           private=line.to is not None,
                           latency_ms=round((time.monotonic() - line.question.seen_at) * 1000))
        self._unconfirmed = waiting

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
                                      failed_event="reconnect_failed", server=self._server)
        if client is None:
            return False
        self._client = client
        self.stats.reconnects += 1
        self._connected.set()
        _log_event("reconnected", logging.WARNING, down_s=time.monotonic() - self._lost_at,
                   open_questions=self._open)
        self._send_later(self._back_notice(), first=True)
        return True

    def _back_notice(self) -> list[OutLine]:
        follow = f", {self._open} answer(s) to follow" if self._open else ""
        return self._lines_for(None, f"Back after a lost connection: nothing was lost{follow}. Questions asked "
                               "while I was away did not reach me, please ask again.", answered=False)

    # ------------------------------------------------------------------ worker

    def _work(self) -> None:
        while not self._stopping.is_set():
            try:
                question = self._questions.get(timeout=0.2)
            except queue.Empty:
                continue
            if self._pool is not None:
                self._pool.submit(question, *self._pool_callbacks(question))
                continue
            self._answering = True
            lines = self._answer_lines(question)
            self._answering = False
            self._send_later(lines)

    def _pool_callbacks(self, question: Question):
        """What the pool calls from its thread: the answer (or error) as lines, and a one-line notice."""
        began = time.monotonic()
        return (lambda result: self._send_later(self._answer_lines(question, result, began)),
                lambda text: self._send_later(self._lines_for(question, text, max_lines=1, answered=False)))

    def _answer_lines(self, question: Question, result=None, began: float | None = None) -> list[OutLine]:
        began = time.monotonic() if began is None else began
        try:
            answer = self._answer(question.text) if result is None else result
            if isinstance(answer, Exception):
                raise answer
        except Exception as exc:  # noqa: BLE001 - a bad question or a reader bug must not stop the bridge
            if getattr(exc, "user_error", False):
                message = first_line(exc)
                _log_event("answer_failed", player=self._who(question.player), question=question.text, error=message)
            else:
                log.exception("answering %r failed", question.text)
                message = "sorry, something went wrong answering that"
            self._log_answer(question, None, message)
            return self._lines_for(question, message)
        self._log_answer(question, answer)
        self._on_answered(question, answer, began)
        return self._answer_reply(question, answer)

    def _on_answered(self, question: Question, answer: AnswerLike, began: float) -> None:
        """Every answer, on every transport, passes here."""
        _log_event("answered", player=self._who(question.player), question=question.text, found=bool(answer.found),
                   answer=answer.text, title=answer.title, reader=getattr(answer, "reader", None),
                   private=question.private, answer_ms=round((time.monotonic() - began) * 1000),
                   waited_ms=round((began - question.seen_at) * 1000))

    # ------------------------------------------------------------------ reloading (SIGHUP)

    def _reload(self) -> None:
        """Apply what the settings file now says, where that needs no reconnection; log the rest."""
        self._reload_requested = False
        if self._reload_source is None:
            _log_event("reload_skipped", logging.WARNING, why="no settings file to read (serve --config FILE)")
            return
        try:
            settings, bot, others = self._reload_source()
            check_token(settings.mc_token)
            if bot is not None:
                check_bot(bot)
        except JarvisError as exc:
            _log_event("reload_failed", logging.ERROR, error=first_line(exc), kept="the settings in use")
            return
        changed, restart = [], list(others)
        new_settings = self.settings
        for name, old, new in _changes(self.settings, settings):
            if name in RELOADABLE["bridge"]:
                new_settings = replace(new_settings, **{name: new})
                changed.append(f"bridge.{name}")
            else:
                restart.append(f"bridge.{name}")
        new_bot = self.bot
        if (self.bot is None) != (bot is None):
            restart.append("bot (the transport)")
        elif bot is not None:
            for name, old, new in _changes(self.bot, bot):
                if name in RELOADABLE["bot"]:
                    new_bot = replace(new_bot, **{name: new})
                    changed.append(f"bot.{name}")
                else:
                    restart.append(f"bot.{name}")
        self.settings, self.bot = new_settings, new_bot
        with self._questions.mutex:
            self._questions.maxsize = new_settings.queue_size
        if self._client is not None and hasattr(self._client, "retune"):
            self._client.retune(new_bot if self.bot is not None else new_settings)
        self.stats.reloads += 1
        _log_event("reloaded", changed=changed)
        if restart:
            _log_event("reload_needs_restart", logging.WARNING, settings=restart)

    def _log_answer(self, question: Question, answer, error: str = "") -> None:
        if self._log is None:
            return
        entry_id = self._log.record(question.text, answer, player=question.player, origin="serve", error=error,
                                    latency=time.monotonic() - question.seen_at)
        if answer is not None:
            with self._last_logged_lock:
                if len(self._last_logged) >= MAX_TRACKED_PLAYERS:
                    self._last_logged.clear()
                self._last_logged[question.key] = (entry_id, time.monotonic())

    # ------------------------------------------------------------------ shutting down

    def _shut_down(self) -> None:
        self._stopping.set()
        self._log_signals()
        done = self.max_questions is not None and self.stats.answered >= self.max_questions
        if self._worker is not None and not done:
            self._worker.join(timeout=self.settings.io_timeout)   # an answer in progress may finish
        left = self._questions.qsize() + int(self._answering) + (self._pool.waiting if self._pool else 0)
        if self._client is not None:
            if left and not done:
                self._send_later(self._lines_for(None, f"Going offline, {left} question(s) left unanswered, "
                                                       "sorry.", answered=False))
            with self._outbox_lock:
                lines = list(self._outbox)
                self._outbox.clear()
            self._unconfirmed.extend(lines)
            try:
                if lines:   # the chat read with them is dropped: we are stopping
                    self._flush(lines)
            except (ConnectionLost, RequestError):
                pass
            self._confirm()
            self._client.close()
            self._client = None
        self._connected.clear()
        _log_event("stopped", **asdict(self.stats), unanswered=left)


    def _flush(self, lines: list[OutLine]) -> None:
        """Send the last lines before stopping: at most io_timeout, as fast as the transport may."""
        deadline = time.monotonic() + self.settings.io_timeout
        pending = lines
        while True:
            self._client.exchange(pending)
            pending = []
            if all(line.delivered for line in lines) or time.monotonic() >= deadline:
                return
            time.sleep(0.1)


def _fit(compose: Callable[[int], list[str]], limit: int, prefix: str) -> list[str]:
    """``compose(width)`` within ``limit`` as Minecraft counts characters (UTF-16 units: an emoji is two)."""
    width = limit
    while True:
        lines = compose(width)
        over = max(len(line.encode("utf-16-le")) // 2 - limit for line in lines)
        if over <= 0 or width <= len(prefix) + 20:
            return lines
        width -= over


def _changes(old, new) -> list[tuple[str, object, object]]:
    return [(f.name, getattr(old, f.name), getattr(new, f.name)) for f in fields(old)
            if getattr(old, f.name) != getattr(new, f.name)]


def check_bot(bot: BotSettings) -> None:
    """BridgeError for player-bot settings that cannot work (one line naming the setting)."""
    from jarvis.bridge.player import USERNAME, WHISPER_COMMANDS, compile_pattern

    if bot.reply not in REPLY_MODES:
        raise BridgeError(f"[bot] reply: {bot.reply!r} is not one of {', '.join(REPLY_MODES)}")
    if bot.whisper_command not in WHISPER_COMMANDS:
        raise BridgeError(f"[bot] whisper_command: {bot.whisper_command!r} is not one of {', '.join(WHISPER_COMMANDS)}")
    if not USERNAME.fullmatch(bot.username):
        raise BridgeError(f"[bot] username: {bot.username!r} is not a Minecraft name (1-16 letters, digits or _)")
    if not 40 <= bot.max_message <= 256:
        raise BridgeError(f"[bot] max_message: {bot.max_message} is not within 40-256 (vanilla's limit is 256)")
    for setting in ("public_patterns", "whisper_patterns"):
        for pattern in getattr(bot, setting):
            compile_pattern(pattern, bot.username, setting)


def connect_with_retries(settings: BridgeSettings, connect: Connector, stopping: StopFlag | None = None,
                         attempts: int | None = None, failed_event: str = "connect_failed",
                         server: tuple[str, int, str] | None = None) -> ChatClient | None:
    """``connect()``, tried ``attempts`` times (default ``connect_attempts``; 0: forever) with
    exponential backoff (urllib3's ``Retry`` policy: the second attempt at once, then
    ``reconnect_min_delay`` doubling up to ``reconnect_max_delay``); BridgeError when all fail.

    None when ``stopping`` is set before a connection is made.
    """
    stopping = stopping or StopFlag()
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
                if server is not None and server[2].startswith("the game server"):
                    raise BridgeError(f"cannot reach the game server at {server[0]}:{server[1]} after {attempt} "
                                      f"attempt(s): {exc} (is it running, and is that its game port?)") from exc
                raise BridgeError(
                    f"cannot reach the Minecraft server's chat API at {settings.mc_host}:{settings.mc_port} "
                    f"after {attempt} attempt(s): {exc} (is the server running with the RaspberryJuice "
                    "plugin, or mcserver/server.js?)") from exc
            delay = retry.get_backoff_time()
            # INFO (-v): a start-up failure ends as one BridgeError line; retries are not user news.
            _log_event(failed_event, attempt=attempt, error=exc, retry_in_s=delay)
            stopping.wait(delay)
    return None


def check_player_bot(settings: BridgeSettings, bot: BotSettings) -> None:
    """Fail fast for the player bot: Node.js and mineflayer installed, the settings usable, the game
    port reachable (a TCP connection, closed at once: joining is left to the bridge)."""
    import socket

    from jarvis.bridge.player import node_client_command

    check_bot(bot)
    node_client_command(bot, Path("."))
    if bot.realm:
        return

    def reach():
        sock = socket.create_connection((bot.host, bot.port), timeout=settings.io_timeout)
        return _Closed(sock)

    connect_with_retries(settings, reach, server=(bot.host, bot.port, "the game server (as a player)")).close()


class _Closed:
    def __init__(self, sock) -> None:
        self.sock = sock

    def close(self) -> None:
        self.sock.close()


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
def _handle_signals(bridge: Bridge) -> Iterator[None]:
    """SIGINT/SIGTERM stop the bridge cleanly (a second SIGINT interrupts at once); SIGHUP reloads."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum, frame):  # noqa: ARG001 - signal API
        # Nothing here may take a lock the interrupted main thread could hold (an Event's, logging's):
        # plain attributes only; the poller logs the signal and acts on it at its next turn.
        if bridge.stopping and signum == signal.SIGINT:
            raise KeyboardInterrupt
        if signum == getattr(signal, "SIGHUP", None):
            bridge.request_reload()
        else:
            bridge.stop()
        bridge.on_signal(signal.Signals(signum).name)

    wanted = [signal.SIGINT, signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
    previous = {sig: signal.signal(sig, handle) for sig in wanted}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def serve(settings: BridgeSettings, jarvis, max_questions: int | None = None, *, bot: BotSettings | None = None,
          salt: bytes = b"", log_player_names: bool = False, profiles: Path | None = None,
          reload: Reloader | None = None, question_log=None) -> int:
    """Run the chat bridge for ``jarvis`` (a jarvis.pipeline.Jarvis, any question -> answer callable, or a pool).

    ``bot``: join as a player (the player-bot transport) instead of using the plugin API; ``salt``
    names players in the log lines (jarvis/privacy.py) unless ``log_player_names``; ``profiles``:
    where the bot's Microsoft sign-in is cached; ``reload``: what SIGHUP reads (the settings file as
    it is now); ``question_log``: a jarvis.questionlog.QuestionLog that gets every question and answer.
    """
    answer = jarvis if hasattr(jarvis, "submit") else getattr(jarvis, "ask", jarvis)
    bridge = Bridge(settings, answer, max_questions=max_questions, bot=bot, salt=salt,
                    log_player_names=log_player_names, profiles=profiles, reload=reload, question_log=question_log)
    with _handle_signals(bridge):
        bridge.run()
    return 0
