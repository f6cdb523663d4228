"""A worker of the pool: answers questions from the Redis stream with its own loaded index and reader.

    worker = PoolWorker(RedisLink(settings), jarvis.ask, reader_name=jarvis.reader.name)
    worker.run()            # until stop() (SIGTERM through the CLI): the question in hand is finished first

The stream ``<prefix>:questions`` is read with the consumer group ``settings.group``; any number of
workers, on any machines that reach Redis, share it, each question going to one of them:

- ``XREADGROUP ... >``: one new question at a time (the others stay in the stream for the other workers);
- the reply is written to the asking client's reply stream and the question acknowledged in one
  transaction (``MULTI XADD EXPIRE XACK EXEC``): a question is acknowledged only with its answer written;
- every ``claim_after / 2`` seconds, ``XAUTOCLAIM``: questions left pending longer than ``claim_after`` by a
  worker that died (or hangs) are claimed and answered here. Its own pending questions (a worker that lost
  its connection, or was restarted under the same name) are read again first (``XREADGROUP ... 0``);
- a question older than ``max_age`` (by Redis's clock: its stream id is the time it was added) is dropped
  with a log line and acknowledged, not answered minutes late;
- a question delivered more than ``max_attempts`` times (it crashed the reader, or killed the workers
  that read it) is answered "I don't know" and acknowledged. A reader's exception counts as an attempt
  at once (``XCLAIM ... RETRYCOUNT``); a killed worker's, when the question is claimed;
- Redis gone (restarted, network down): the worker reconnects with backoff; the answer in hand is written
  when Redis is back. With Redis's append-only file, questions and pending entries survive its restart.

The index is the worker's own: the searcher re-reads the live generation of the index directory on its
own, so a rebuild (``jarvis index``, or a crawl's update into the index) is picked up as ``serve`` does.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import time
from dataclasses import dataclass, fields, replace
from typing import Callable

import redis

from jarvis.bridge.transport import StopFlag
from jarvis.logs import format_event
from jarvis.config import RedisSettings
from jarvis.errors import JarvisError, first_line
from jarvis.network.link import LOST, Backoff, RedisLink
from jarvis.network.messages import (UNREADABLE, BadMessage, QuestionMessage, ReplyMessage, questions_key,
                                 replies_key)
from jarvis.answer import Answer
from jarvis.question_text import QuestionError

log = logging.getLogger(__name__)

Answerer = Callable[[str], Answer]
# SIGHUP: the [redis] settings as the file now says, and the names of other settings that changed (need a restart).
Reloader = Callable[[], tuple[RedisSettings, list[str]]]
RELOADABLE = ("max_age", "claim_after", "max_attempts", "max_replies", "reply_ttl")
BLOCK_MS = 1000                      # XREADGROUP waits this long for a question before looking around
CLOCK_EVERY = 60.0                   # seconds between readings of Redis's clock
CONSUMER_IDLE_FORGET = 3600.0        # consumers idle this long with nothing pending are removed from the group


@dataclass
class WorkerStats:
    answered: int = 0        # replies written (the poison and unreadable ones included)
    claimed: int = 0         # questions claimed from a silent worker
    dropped_old: int = 0     # questions older than max_age, dropped
    poison: int = 0          # answered "I don't know" after max_attempts deliveries
    failures: int = 0        # reader exceptions (each one an attempt)
    unreadable: int = 0      # entries that were not questions, or not usable text
    reconnects: int = 0
    reloads: int = 0


def _event(event: str, level: int = logging.INFO, **fields: object) -> None:
    if log.isEnabledFor(level):
        log.log(level, format_event(event, **fields))


def consumer_name() -> str:
    """A worker's name in the group: host, process, and a random part (a restarted process is a new worker)."""
    return f"{socket.gethostname()[:40]}-{os.getpid()}-{os.urandom(2).hex()}"


class PoolWorker:
    """Reads questions from the stream, answers them, writes the replies; see the module docstring."""

    def __init__(self, link: RedisLink, answer: Answerer, *, reader_name: str, name: str | None = None,
                 max_questions: int | None = None, reload: Reloader | None = None) -> None:
        self.link = link
        self.settings = link.settings
        self.name = name or consumer_name()
        self.stats = WorkerStats()
        self.max_questions = max_questions
        self._answer = answer
        self._reader_name = reader_name
        self._stream = questions_key(self.settings.prefix)
        self._stopping = StopFlag()       # set by stop(), from any thread or a signal handler: takes no lock
        self._reload_source = reload
        self._reload_requested = False
        self._clock_offset = 0.0          # Redis's clock minus ours, in seconds
        self._clock_read_at = -CLOCK_EVERY
        self._claim_at = 0.0
        self._claim_cursor = "0-0"
        self._forget_at = 0.0
        self._ready = threading.Event()   # connected and in the group (for tests and the CLI's first log line)

    # ------------------------------------------------------------------ control

    def stop(self) -> None:
        """Stop after the question in hand (from any thread; a signal handler may call it)."""
        self._stopping.set()

    def request_reload(self) -> None:
        """Read the settings again at the next turn (SIGHUP; safe from a signal handler: no lock)."""
        self._reload_requested = True

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def wait_ready(self, timeout: float) -> bool:
        return self._ready.wait(timeout)

    def run(self) -> None:
        """Serve until stop() or max_questions; reconnects whenever Redis is lost."""
        backoff = Backoff(self.settings)
        connected_once = False
        while not self._stopping.is_set() and not self._done():
            try:
                self._join_group()
                if connected_once:
                    self.stats.reconnects += 1
                    _event("redis_back", logging.WARNING, worker=self.name)
                connected_once = True
                self._ready.set()
                backoff.reset()
                self._own_pending()          # what this worker had taken before a lost connection
                while not self._stopping.is_set() and not self._done():
                    self._turn()
            except LOST as exc:
                delay = backoff.next()
                _event("redis_lost", logging.WARNING, worker=self.name, error=self.link.describe(exc),
                       retry_in_s=delay)
                self._stopping.wait(delay)
            except redis.ResponseError as exc:
                if "NOGROUP" not in str(exc):
                    raise
                _event("group_missing", logging.WARNING, worker=self.name, stream=self._stream)   # created again
        _event("worker_stopped", worker=self.name, **vars(self.stats))

    def _done(self) -> bool:
        return self.max_questions is not None and self.stats.answered >= self.max_questions

    # ------------------------------------------------------------------ one turn

    def _join_group(self) -> None:
        """The consumer group exists (from the stream's start: questions added before any worker are read)."""
        try:
            self.link.client.xgroup_create(self._stream, self.settings.group, id="0", mkstream=True)
            _event("group_created", stream=self._stream, group=self.settings.group)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    def _turn(self) -> None:
        if self._reload_requested:
            self._reload()
        now = time.monotonic()
        if now >= self._claim_at:
            self._claim_at = now + max(0.05, self.settings.claim_after / 2)
            self._claim()
        if now >= self._forget_at:
            self._forget_at = now + CONSUMER_IDLE_FORGET / 4
            self._forget_dead_consumers()
        entries = self.link.client.xreadgroup(self.settings.group, self.name, {self._stream: ">"}, count=1,
                                              block=BLOCK_MS)
        for _, messages in entries or []:
            for entry_id, entry in messages:
                self._handle(entry_id, entry, deliveries=1)

    def _own_pending(self) -> None:
        """Questions delivered to this worker and not acknowledged (read before a lost connection)."""
        entries = self.link.client.xreadgroup(self.settings.group, self.name, {self._stream: "0"}, count=100)
        for _, messages in entries or []:
            for entry_id, entry in messages:
                if self._stopping.is_set():
                    return
                self._handle(entry_id, entry, deliveries=self._deliveries(entry_id))

    def _claim(self) -> None:
        """Questions pending on a silent worker for claim_after seconds: claim them (XAUTOCLAIM) and answer."""
        min_idle = int(self.settings.claim_after * 1000)
        result = self.link.client.xautoclaim(self._stream, self.settings.group, self.name, min_idle,
                                             start_id=self._claim_cursor, count=10)
        self._claim_cursor = result[0] if result[0] else "0-0"
        for entry_id, entry in result[1]:
            self.stats.claimed += 1
            deliveries = self._deliveries(entry_id)
            _event("claimed", worker=self.name, entry=entry_id, deliveries=deliveries)
            if self._stopping.is_set():
                return   # it stays pending on this worker: claimed again by another one
            self._handle(entry_id, entry, deliveries=deliveries)

    def _deliveries(self, entry_id: str) -> int:
        pending = self.link.client.xpending_range(self._stream, self.settings.group, min=entry_id, max=entry_id,
                                                  count=1)
        return int(pending[0]["times_delivered"]) if pending else 1

    # ------------------------------------------------------------------ one question

    def _handle(self, entry_id: str, fields: dict | None, deliveries: int) -> None:
        if not fields:          # trimmed from the stream while pending: nothing to answer
            self.link.client.xack(self._stream, self.settings.group, entry_id)
            return
        try:
            question = QuestionMessage.parse(fields)
        except BadMessage as exc:
            self.stats.unreadable += 1
            _event("unreadable", logging.WARNING, worker=self.name, entry=entry_id, why=str(exc))
            self.link.client.xack(self._stream, self.settings.group, entry_id)
            return
        age = self._age(entry_id)
        if age > self.settings.max_age:
            self.stats.dropped_old += 1
            _event("dropped_old", logging.WARNING, worker=self.name, question_id=question.id, age_s=age,
                   max_age_s=self.settings.max_age, player=question.player or None)
            self.link.client.xack(self._stream, self.settings.group, entry_id)
            return
        reply = self._answer_with_attempts(question, entry_id, deliveries)
        self._deliver(entry_id, question, reply)

    def _answer_with_attempts(self, question: QuestionMessage, entry_id: str, deliveries: int) -> ReplyMessage:
        attempts = deliveries
        while True:
            if attempts > self.settings.max_attempts:
                self.stats.poison += 1
                _event("poison", logging.ERROR, worker=self.name, question_id=question.id, question=question.text,
                       attempts=attempts - 1)
                return ReplyMessage(question.id, self.name, attempts - 1, self._dont_know(question.text))
            began = time.perf_counter()
            try:
                answer = self._answer(question.text)
            except QuestionError as exc:
                self.stats.unreadable += 1
                _event("unreadable", logging.WARNING, worker=self.name, question_id=question.id, why=first_line(exc))
                return ReplyMessage(question.id, self.name, attempts, None, UNREADABLE)
            except Exception:  # noqa: BLE001 - a reader that crashes on one question must not stop the worker
                self.stats.failures += 1
                log.exception("answering question %s (attempt %d of %d) failed", question.id, attempts,
                              self.settings.max_attempts)
                attempts += 1
                if attempts <= self.settings.max_attempts:
                    self._count_attempt(entry_id, attempts)
                continue
            _event("answered", worker=self.name, question_id=question.id, player=question.player or None,
                   found=answer.found, attempts=attempts, answer_ms=round((time.perf_counter() - began) * 1000))
            return ReplyMessage(question.id, self.name, attempts, answer)

    def _count_attempt(self, entry_id: str, attempts: int) -> None:
        """Record another delivery in Redis, so that a worker that dies on the next try leaves the right count."""
        self.link.client.xclaim(self._stream, self.settings.group, self.name, 0, [entry_id], retrycount=attempts,
                                justid=True)

    def _dont_know(self, question: str) -> Answer:
        return Answer(question=question, text="", score=0.0, title="", reader=self._reader_name, seconds=0.0)

    def _deliver(self, entry_id: str, question: QuestionMessage, reply: ReplyMessage) -> None:
        """Write the reply and acknowledge the question in one transaction; until Redis takes it, keep trying
        (the answer in hand is not lost to a Redis restart)."""
        key = replies_key(self.settings.prefix, question.client)
        backoff = Backoff(self.settings)
        failed = False
        while True:
            try:
                with self.link.client.pipeline(transaction=True) as pipe:
                    pipe.xadd(key, reply.fields(), maxlen=self.settings.max_replies, approximate=True)
                    pipe.expire(key, max(1, int(self.settings.reply_ttl)))
                    pipe.xack(self._stream, self.settings.group, entry_id)
                    pipe.execute()
                self.stats.answered += 1
                if failed:
                    self.stats.reconnects += 1
                    _event("redis_back", logging.WARNING, worker=self.name, question_id=question.id)
                return
            except LOST as exc:
                if self._stopping.is_set():
                    _event("reply_not_written", logging.WARNING, worker=self.name, question_id=question.id,
                           why="stopping while Redis is away: another worker will claim it")
                    return
                failed = True
                delay = backoff.next()
                _event("reply_waiting_for_redis", logging.WARNING, worker=self.name, question_id=question.id,
                       error=self.link.describe(exc), retry_in_s=delay)
                self._stopping.wait(delay)

    # ------------------------------------------------------------------ housekeeping

    def _reload(self) -> None:
        """Apply the [redis] settings that need no reconnection (RELOADABLE); log the others as needing a restart."""
        self._reload_requested = False
        if self._reload_source is None:
            _event("reload_skipped", logging.WARNING,
                   why="no settings file to read (the worker was started without one)")
            return
        try:
            fresh, others = self._reload_source()
        except JarvisError as exc:
            _event("reload_failed", logging.ERROR, error=first_line(exc), kept="the settings in use")
            return
        changed, restart = [], list(others)
        for field in fields(fresh):
            old, new = getattr(self.settings, field.name), getattr(fresh, field.name)
            if old == new:
                continue
            if field.name in RELOADABLE:
                self.settings = replace(self.settings, **{field.name: new})
                changed.append(f"redis.{field.name}")
            else:
                restart.append(f"redis.{field.name}")
        self.stats.reloads += 1
        _event("reloaded", worker=self.name, changed=changed)
        if restart:
            _event("reload_needs_restart", logging.WARNING, settings=restart)

    def _age(self, entry_id: str) -> float:
        """Seconds since the question was added, by Redis's clock (stream ids are its milliseconds)."""
        now = time.monotonic()
        if now - self._clock_read_at >= CLOCK_EVERY:
            seconds, micros = self.link.client.time()
            self._clock_offset = seconds + micros / 1e6 - time.time()
            self._clock_read_at = now
        added = int(entry_id.split("-")[0]) / 1000
        return time.time() + self._clock_offset - added

    def _forget_dead_consumers(self) -> None:
        """Consumers (dead workers) idle for an hour with nothing pending leave the group: it stays small."""
        for consumer in self.link.client.xinfo_consumers(self._stream, self.settings.group):
            if (consumer["name"] != self.name and consumer["pending"] == 0
                    and consumer["idle"] >= CONSUMER_IDLE_FORGET * 1000):
                self.link.client.xgroup_delconsumer(self._stream, self.settings.group, consumer["name"])
