"""The dispatcher: which chat post is a question, and whether it is taken now.

The poller hands it the posts each poll read (:meth:`Dispatcher.receive`), then has them handled
(:meth:`Dispatcher.dispatch`):

- a message addressed to Jarvis (``jarvis, …``; a whisper to the player bot, "jarvis" or not) is a
  question; feedback on an answer goes to the question log instead (jarvis/bridge/feedback.py);
- per-player rate: a player who had a question taken less than ``per_player_rate`` seconds ago is
  turned away (the cooldown), as is anyone while the bounded queue (``queue_size``) is full;
  nothing is dropped silently: one polite notice per player and poll, however many it turns away;
- ``jarvis`` alone gets the help line; everything else waits in the queue for the answering thread.

A post stays in the inbox until it is handled: when the connection dies during a name lookup, it
is handled after the reconnection. Names are looked up once per entity id (the plugin API; the
player bot reads them with the message) and forgotten at a reconnection.
"""
from __future__ import annotations

import logging
import queue
from collections import deque
from typing import Callable

from jarvis.bridge.chat import HELP, MAX_TRACKED_PLAYERS, Question, addressed_question, echo
from jarvis.bridge.events import BridgeStats, PlayerNames, log_event
from jarvis.bridge.feedback import Feedback
from jarvis.bridge.reply_layout import ReplyLayout
from jarvis.bridge.outbox import Outbox
from jarvis.bridge.transport import OutLine
from jarvis.bridge.wire import ChatPost
from jarvis.config import BridgeSettings


RATE = "rate"                 # why a question was turned away: asked too soon after the last one
BUSY = "busy"                 # the queue is full

NameLookup = Callable[[int], str | None]   # entity id -> the player's name (the transport's player_name)


class Dispatcher:
    """Posts in, questions to the queue, refusals out (see the module doc)."""

    def __init__(self, settings: BridgeSettings, *, layout: ReplyLayout, outbox: Outbox, feedback: Feedback,
                 stats: BridgeStats, names: PlayerNames) -> None:
        self.per_player_rate = settings.per_player_rate
        self.questions: queue.Queue[Question] = queue.Queue(maxsize=settings.queue_size)
        self.layout = layout
        self.outbox = outbox
        self.feedback = feedback
        self.stats = stats
        self.names = names
        self._inbox: deque[tuple[ChatPost, float]] = deque()   # posts read, not handled yet (with when)
        self._player_names: dict[int, str | None] = {}
        self._last_accepted: dict[int | str, float] = {}

    def retune(self, settings: BridgeSettings) -> None:
        """Settings reloaded (SIGHUP): the rate and the queue's size apply from the next post."""
        self.per_player_rate = settings.per_player_rate
        with self.questions.mutex:
            self.questions.maxsize = settings.queue_size

    # ------------------------------------------------------------------ the poller's calls

    def receive(self, posts: list[ChatPost], now: float) -> None:
        self._inbox.extend((post, now) for post in posts)

    def dispatch(self, lookup: NameLookup) -> None:
        """Handle every post in the inbox; ``lookup`` names a post's player when the post does not."""
        refusals: dict[int | str, list[tuple[Question, str]]] = {}
        try:
            while self._inbox:
                post, seen_at = self._inbox[0]
                self._on_post(post, seen_at, refusals, lookup)   # ConnectionLost here: the post stays for later
                self._inbox.popleft()
        finally:
            for entries in refusals.values():
                self.outbox.put(self._refusal_notice(entries))

    def skip_first(self) -> None:
        """Drop the post at the head of the inbox (it made the poller fail again and again)."""
        if self._inbox:
            post, _ = self._inbox.popleft()
            log_event("post_skipped", logging.ERROR, player_id=post.entity_id, message=post.message)

    @property
    def pending(self) -> bool:
        """Posts read and not handled yet."""
        return bool(self._inbox)

    def forget_names(self) -> None:
        """A new connection: entity ids may name other players now."""
        self._player_names.clear()

    # ------------------------------------------------------------------ one post

    def _on_post(self, post: ChatPost, now: float, refusals: dict, lookup: NameLookup) -> None:
        text = addressed_question(post.message)
        if text is None and post.private:   # a whisper to the bot is a question, "jarvis," or not
            text = post.message.strip()
        if text is None:
            return
        name = post.player if post.player is not None else self._player_name(post.entity_id, lookup)
        key = name.casefold() if post.player is not None else post.entity_id   # one rate per player
        question = Question(post.entity_id, name, text, now, private=post.private, key=key)
        if self.feedback.handle(question):
            return
        self.stats.questions += 1
        last = self._last_accepted.get(key)
        if last is not None and now - last < self.per_player_rate:
            refusals.setdefault(key, []).append((question, RATE))
            return
        if not text:
            self._remember_accept(key, now)
            self.outbox.put(self.layout.lines_for(question, HELP, answered=False))
            return
        try:
            self.questions.put_nowait(question)
        except queue.Full:
            refusals.setdefault(key, []).append((question, BUSY))
            return
        self._remember_accept(key, now)
        self.outbox.answers_due += 1
        self.stats.accepted += 1
        self.stats.max_waiting = max(self.stats.max_waiting, self.questions.qsize())
        log_event("question", player=self.names(question.player), player_id=question.player_id, question=text,
                  private=question.private, waiting=self.questions.qsize())

    def _refusal_notice(self, entries: list[tuple[Question, str]]) -> list[OutLine]:
        """One notice per player and poll, however many questions it turns away."""
        question = entries[0][0]
        self.stats.refused += len(entries)
        for refused, reason in entries:
            log_event("refused", player=self.names(refused.player), player_id=refused.player_id,
                      question=refused.text, reason=reason)
        if all(reason == RATE for _, reason in entries):
            why = f"one question every {self.per_player_rate:g} s please"
        else:
            why = "busy"
        what = echo(question.text) if len(entries) == 1 else f"{len(entries)} questions"
        return self.layout.lines_for(question, f"{why}, ask again in a moment (not taken: {what})", max_lines=1,
                                     answered=False)

    def _player_name(self, entity_id: int, lookup: NameLookup) -> str | None:
        if entity_id not in self._player_names:
            if len(self._player_names) >= MAX_TRACKED_PLAYERS:
                self._player_names.clear()
            self._player_names[entity_id] = lookup(entity_id) if entity_id >= 0 else None
        return self._player_names[entity_id]

    def _remember_accept(self, key: int | str, now: float) -> None:
        if len(self._last_accepted) >= MAX_TRACKED_PLAYERS:
            horizon = now - self.per_player_rate
            self._last_accepted = {k: t for k, t in self._last_accepted.items() if t > horizon}
        self._last_accepted[key] = now
