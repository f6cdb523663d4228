"""Reconnecting: the connection in use, opened with retries, lost, and made again.

At start-up the server is tried ``connect_attempts`` times (0: forever) with exponential backoff
(urllib3's ``Retry`` policy: the second attempt at once, then ``reconnect_min_delay`` doubling up
to ``reconnect_max_delay``); when every attempt fails, :class:`ServerUnreachable` says where and
how often. After a connection that worked is lost it is tried forever, with the same backoff.
Only an OSError is retried: a refused token (:class:`AuthRefused`) or a player bot that cannot
run here (:class:`BotError`) ends the bridge at once.

Besides the log, the admin is told in plain lines (an :class:`Announcer`, which `jarvis serve` prints without
``-v``): when the connection is made (with what answers), lost, and made again.

Chat typed while the connection is down never reaches Jarvis (the plugins keep events per
connection, a player sees only chat said after it joined); the notice after a reconnection asks
players to ask again, and says how many answers are still to come.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Callable, TypeVar

from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

from jarvis.bridge.events import BridgeStats, log_event
from jarvis.bridge.transport import Connector, Endpoint, ServerUnreachable, StopFlag, Transport
from jarvis.config import BridgeSettings

Connection = TypeVar("Connection")


def connect_with_retries(settings: BridgeSettings, connect: Callable[[], Connection], endpoint: Endpoint,
                         stopping: StopFlag | None = None, attempts: int | None = None,
                         failed_event: str = "connect_failed") -> Connection | None:
    """``connect()``, tried ``attempts`` times (default ``connect_attempts``; 0: forever) with
    exponential backoff (see the module doc); ServerUnreachable when all fail.

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
                raise ServerUnreachable(endpoint, attempt, exc) from exc
            delay = retry.get_backoff_time()
            # INFO (-v): a start-up failure ends as one error line; retries are not user news.
            log_event(failed_event, attempt=attempt, error=exc, retry_in_s=delay)
            stopping.wait(delay)
    return None


@dataclass(frozen=True)
class Announcer:
    """What the admin reads about the connection: ``say`` gets one line each time it is made, lost or made again;
    ``answering`` says what answers ("index DIR, reader NAME"), on the first line."""

    say: Callable[[str], None]
    answering: str = ""

    def connected(self, endpoint: Endpoint, dialect: str | None) -> None:
        how = f", {dialect}" if dialect and dialect != endpoint.transport else ""
        self.say(f"connected to {_where(endpoint)} ({_transport(endpoint)}{how})"
                 + (f"; answering from {self.answering}" if self.answering else ""))

    def lost(self, endpoint: Endpoint, error: BaseException) -> None:
        self.say(f"lost the connection to {_where(endpoint)} ({error or type(error).__name__}); trying again")

    def back(self, endpoint: Endpoint, down_s: float) -> None:
        self.say(f"connected again to {_where(endpoint)} after {down_s:.1f} s")


def _where(endpoint: Endpoint) -> str:
    host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
    return f"{endpoint.what} at {host}:{endpoint.port}"


def _transport(endpoint: Endpoint) -> str:
    return endpoint.label or endpoint.transport


def opened(connect: Connector) -> Transport:
    """A new connection with the chat posted before now forgotten (not for this run)."""
    client = connect()
    try:
        client.start_session()
    except BaseException:
        client.close()
        raise
    return client


class Link:
    """The connection in use (``client``, None while it is down); only the poller touches it."""

    def __init__(self, connect: Connector, endpoint: Endpoint, *, stats: BridgeStats, stopping: StopFlag,
                 announcer: Announcer | None = None) -> None:
        self.connect = connect
        self.announcer = announcer
        self.endpoint = endpoint
        self.stats = stats
        self.stopping = stopping
        self.client: Transport | None = None
        self.connected = threading.Event()
        self._lost_at = 0.0

    def open(self, settings: BridgeSettings) -> bool:
        """Connect at start-up (ServerUnreachable after ``connect_attempts``); False when stopped first."""
        client = connect_with_retries(settings, self._session, self.endpoint, self.stopping)
        if client is None:
            return False
        self.client = client
        log_event("connected", host=self.endpoint.host, port=self.endpoint.port, transport=self.endpoint.transport)
        if self.announcer is not None:
            self.announcer.connected(self.endpoint, client.dialect)
        self.connected.set()
        return True

    def lost(self, exc: BaseException, open_answers: int) -> None:
        """The connection is gone (or no longer to be trusted): close it."""
        self.connected.clear()
        if self.client is not None:
            self.client.close()
            self.client = None
        self._lost_at = time.monotonic()
        self.stats.disconnects += 1
        log_event("disconnected", logging.INFO if self.announcer is not None else logging.WARNING, error=exc,
                  open_questions=open_answers)
        if self.announcer is not None:
            self.announcer.lost(self.endpoint, exc)

    def reconnect(self, settings: BridgeSettings, open_answers: int) -> bool:
        """Connect again, trying forever; False when stopped first."""
        client = connect_with_retries(settings, self._session, self.endpoint, self.stopping, attempts=0,
                                      failed_event="reconnect_failed")
        if client is None:
            return False
        self.client = client
        self.stats.reconnects += 1
        self.connected.set()
        down = time.monotonic() - self._lost_at
        log_event("reconnected", logging.INFO if self.announcer is not None else logging.WARNING, down_s=down,
                  open_questions=open_answers)
        if self.announcer is not None:
            self.announcer.back(self.endpoint, down)
        return True

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        self.connected.clear()

    def _session(self) -> Transport:
        client = opened(self.connect)
        log_event("session", dialect=client.dialect)
        return client


def back_notice(open_answers: int) -> str:
    """What the chat is told after a reconnection."""
    follow = f", {open_answers} answer(s) to follow" if open_answers else ""
    return (f"Back after a lost connection: nothing was lost{follow}. Questions asked while I was away did not "
            "reach me, please ask again.")
