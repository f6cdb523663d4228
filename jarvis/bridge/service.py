"""The chat bridge: reads the game chat, answers the questions addressed to Jarvis.

Two threads, so that a slow answer never stalls the chat:

    poller (owns the connection)                      answering thread
    ─ poll chat every poll_interval ──▶ bounded queue ──▶ answerer.ask(question) ─┐
    ─ post reply lines ◀───────────────── outbox ◀──────── reply lines ◀──────────┘

:class:`Bridge` puts the parts together and runs the poller; each job is a module of its own:

- transport.py: the :class:`~jarvis.bridge.transport.TransportKind` and :class:`~jarvis.bridge.transport.Transport`
  protocols and the typed errors; connection.py (the plugin API) and player.py (the player bot) implement
  them, transports.py picks one;
- dispatch.py: which post is a question, the per-player rate, the bounded queue, refusals;
- answering.py: the :class:`~jarvis.bridge.answering.Answerer` protocol and the answering thread
  (or a worker pool, :class:`~jarvis.bridge.answering.QueuedAnswerer`: the thread hands it each question);
- feedback.py: the question log, and "jarvis, wrong" / "jarvis thanks";
- reply_layout.py: what replies look like on the transport and where they go (public or whisper);
- outbox.py: lines waiting to be posted, and lines posted but not confirmed (at least once);
- reconnect.py: connecting with backoff, losing the connection, reconnecting;
- reload.py: SIGHUP, the settings file applied where that needs no reconnection;
- shutdown.py: the last answer, the last lines, the counts.

Each poll is one ``exchange``: the lines waiting go out and the chat said since comes back; the
transport marks the lines the server took as delivered. Nothing the server does stops the bridge:
``Fail`` (PollFailed: the chat stays queued for the next poll), garbage, stray replies, stalls are
logged and counted (:class:`~jarvis.bridge.events.BridgeStats`); a lagging server is waited for.
Only a connection that is really gone (ConnectionLost), or a bug in the poller (logged with its
traceback), makes it reconnect. Signals are only noted by their handlers (no lock taken); the
poller acts on them at its next turn.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from jarvis.bridge.answering import Answerer, QueuedAnswerer, AnswerThread
from jarvis.bridge.dispatch import Dispatcher
from jarvis.bridge.events import BridgeStats, PlayerNames, log_event
from jarvis.bridge.feedback import Feedback
from jarvis.bridge.reply_layout import ReplyLayout
from jarvis.bridge.outbox import Outbox
from jarvis.bridge.reconnect import Announcer, Link, back_notice
from jarvis.bridge.reload import Reloader, ReloadRequest, reload_settings
from jarvis.bridge.shutdown import shut_down
from jarvis.bridge.transport import (ConnectContext, ConnectionLost, Connector, PollFailed, StopFlag, Transport,
                                     TransportChoice)
from jarvis.bridge.transports import default_transport
from jarvis.config import BridgeSettings
from jarvis.process_signals import handle_signals

if TYPE_CHECKING:
    from jarvis.questionlog import QuestionLog

log = logging.getLogger(__name__)

ERRORS_BEFORE_SKIPPING = 3    # poller failures in a row before the post at the head of the inbox is dropped


class Bridge:
    """The chat bridge. ``run()`` serves in the calling thread until ``stop()`` (or max_questions).

    ``transport``: the transport to serve on, its settings checked (jarvis.bridge.transports.pick; default:
    the plugin API with ``settings``, checked here); ``connect``: opens its connections instead (tests);
    ``salt`` names players in the log lines (jarvis/privacy.py) unless ``log_player_names``; ``home``: where
    a transport keeps what outlives a run (the bot's Microsoft sign-in); ``reload``: what SIGHUP reads;
    ``question_log``: gets every question and answer, and chat feedback; ``announcer``: told in plain words
    when the connection is made, lost and made again.
    """

    def __init__(self, settings: BridgeSettings, answerer: Answerer | QueuedAnswerer, *,
                 transport: TransportChoice | None = None, connect: Connector | None = None,
                 max_questions: int | None = None, salt: bytes = b"", log_player_names: bool = False,
                 home: Path | None = None, reload: Reloader | None = None,
                 question_log: QuestionLog | None = None, announcer: Announcer | None = None) -> None:
        self.settings = settings
        self.transport = transport if transport is not None else default_transport(settings)
        self.max_questions = max_questions
        self.stats = BridgeStats()
        self._stopping = StopFlag()          # set by stop(), from any thread or a signal handler
        self._reload = ReloadRequest()       # set by request_reload(), likewise
        self._reload_source = reload
        self._signals: list[str] = []        # signals received, not logged yet (see on_signal)
        # What a transport's connections get: the counts, the stop flag, and what it keeps across reconnections.
        self._context = ConnectContext(self.stats, self._stopping, home or Path("."))
        names = PlayerNames(salt, log_player_names)
        self.layout = ReplyLayout(settings, self.transport)
        self.outbox = Outbox(self.stats, names)
        self.feedback = Feedback(question_log, self.layout, self.outbox, names)
        self.dispatcher = Dispatcher(settings, layout=self.layout, outbox=self.outbox, feedback=self.feedback,
                                     stats=self.stats, names=names)
        self.answering = AnswerThread(answerer, self.dispatcher.questions, layout=self.layout, outbox=self.outbox,
                             feedback=self.feedback, names=names, stopping=self._stopping)
        endpoint = self.transport.kind.endpoint(settings, self.transport.settings)
        self.link = Link(connect or self._open_transport, endpoint, stats=self.stats, stopping=self._stopping,
                         announcer=announcer)

    # ------------------------------------------------------------------ control

    @property
    def connected(self) -> bool:
        return self.link.connected.is_set()

    def wait_connected(self, timeout: float) -> bool:
        return self.link.connected.wait(timeout)

    @property
    def client(self) -> Transport | None:
        """The connection in use (None while it is down)."""
        return self.link.client

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def stop(self) -> None:
        """Ask the bridge to stop (from any thread, or a signal handler: it takes no lock)."""
        self._stopping.set()

    def request_reload(self) -> None:
        """Reload the settings at the poller's next turn (safe from a signal handler: it takes no lock)."""
        self._reload.ask()

    def on_signal(self, name: str) -> None:
        """Note a signal for the log (from a signal handler: logging there could deadlock or raise)."""
        self._signals.append(name)    # one atomic step, no lock

    def run(self) -> None:
        """Connect (ServerUnreachable after ``connect_attempts`` failures), then serve until stopped."""
        if not self.link.open(self.settings):
            return
        self.answering.start()
        try:
            self._serve()
        finally:
            self._shut_down()

    # ------------------------------------------------------------------ the poller (the connection's thread)

    def _open_transport(self) -> Transport:
        """A new connection on the transport, with its settings as they are now (a reload may have changed
        them)."""
        return self.transport.kind.connect(self.settings, self.transport.settings, self._context)

    def _serve(self) -> None:
        errors_in_a_row = 0
        while not self._stopping.is_set():
            self._log_signals()
            if self._reload.take():
                self._apply_reload()
            client = self.link.client
            if client is None:
                if not self._reconnect():
                    return
                continue
            try:
                self._poll(client)
                errors_in_a_row = 0
            except ConnectionLost as exc:
                self._on_lost(exc)
                continue
            except PollFailed as exc:   # the poll threw on the server; the chat stays queued there
                self.stats.failed_polls += 1
                log_event("poll_failed", logging.WARNING, error=exc, failed_polls=self.stats.failed_polls)
            except Exception as exc:  # noqa: BLE001 - a bug or garbage must not stop the bot
                self.stats.errors += 1
                errors_in_a_row += 1
                log.exception("the poller failed; reconnecting")
                if errors_in_a_row >= ERRORS_BEFORE_SKIPPING:   # a post that fails every time: skip it
                    self.dispatcher.skip_first()
                self._on_lost(exc)
                continue
            if self._answered_enough():
                log_event("max_questions", answered=self.stats.answered)
                return
            self.outbox.wait(self.settings.poll_interval, self._stopping, self._reload.asked)

    def _poll(self, client: Transport) -> None:
        lines = self.outbox.take()
        self.stats.polls += 1
        try:
            posts = client.exchange(lines)
        finally:
            self.outbox.confirm()   # what the transport says the server took (the plugin API: all, Fail included)
        self.dispatcher.receive(posts, time.monotonic())
        self.dispatcher.dispatch(client.player_name)

    def _on_lost(self, exc: Exception) -> None:
        self.link.lost(exc, self.outbox.answers_due)
        self.dispatcher.forget_names()
        self.outbox.resend_unconfirmed()   # they may not have arrived: post them again

    def _reconnect(self) -> bool:
        if not self.link.reconnect(self.settings, self.outbox.answers_due):
            return False
        self.outbox.put(self.layout.notice(back_notice(self.outbox.answers_due)), first=True)
        return True

    def _apply_reload(self) -> None:
        reloaded = reload_settings(self.settings, self.transport, self._reload_source)
        if reloaded is None:
            return
        self.settings, self.transport = reloaded.bridge, reloaded.transport
        self.layout.retune(self.settings, self.transport)
        self.dispatcher.retune(self.settings)
        if self.link.client is not None:
            self.link.client.retune(self.settings, self.transport.settings)
        self.stats.reloads += 1

    def _log_signals(self) -> None:
        while self._signals:
            log_event("signal", signal=self._signals.pop(0))

    def _answered_enough(self) -> bool:
        return self.max_questions is not None and self.stats.answered >= self.max_questions

    def _shut_down(self) -> None:
        self._stopping.set()
        self._log_signals()
        shut_down(self.settings, answering=self.answering, questions=self.dispatcher.questions,
                  done=self._answered_enough(), link=self.link, outbox=self.outbox, layout=self.layout,
                  stats=self.stats)


def serve(settings: BridgeSettings, answerer: Answerer | QueuedAnswerer, max_questions: int | None = None, *,
          transport: TransportChoice | None = None, salt: bytes = b"", log_player_names: bool = False,
          home: Path | None = None, reload: Reloader | None = None, question_log: QuestionLog | None = None,
          announcer: Announcer | None = None) -> int:
    """Run the chat bridge until SIGINT/SIGTERM (or ``max_questions`` answers): questions go to
    ``answerer`` (a jarvis.pipeline.Jarvis, or any :class:`~jarvis.bridge.answering.Answerer`), or to a
    worker pool (a :class:`~jarvis.bridge.answering.QueuedAnswerer`: jarvis.network.PoolClient).

    ``transport``: the transport to serve on (jarvis.bridge.transports.pick: the player bot, the plugin API);
    the other keywords are :class:`Bridge`'s.
    """
    bridge = Bridge(settings, answerer, transport=transport, max_questions=max_questions, salt=salt,
                    log_player_names=log_player_names, home=home, reload=reload, question_log=question_log,
                    announcer=announcer)
    with handle_signals(bridge, noted=bridge.on_signal):
        bridge.run()
    return 0
