"""The player-bot transport: Jarvis joins the game server as a player.

It works on any Java server the client supports (mineflayer: 1.8 to 1.21.4), with or without
plugins: vanilla, Fabric, NeoForge, Paper, Realms. A small Node.js process
(``playerbot/client.js``, mineflayer) holds the game connection and speaks JSON lines with
:class:`PlayerBot` (this module's :class:`jarvis.bridge.transport.Transport`; :data:`PLAYER_BOT` is its
:class:`~jarvis.bridge.transport.TransportKind`, ``bot``, with ``[bot]``'s settings) on its stdin/stdout;
its options are one JSON object, its only argument. One process per connection, started again on
every reconnection. Everything that is policy lives here, in Python, where it is tested: which chat
line is a question and from whom (:class:`ChatRules`), what is sent and how fast
(:class:`SendPacer`), when a line counts as delivered.

Why a Node process and not the ``javascript`` package (JSPyBridge), which mineflayer's docs
show: JSPyBridge installs node modules at run time (``npm install`` on first ``require``), into
its own folder, from the internet; a game server's machine often has no internet, and a
version pinned by our lock file is what was tested. A child process speaking JSON lines needs
no Python dependency, is restarted clean after a kick (no JavaScript state survives a broken
connection), cannot take the Python process down with it, and can be driven and inspected in a
test line by line.

What the transport guarantees (the chat contract; vanilla's rules, as mcserver/vanilla_chat.js
enforces them in the test server):
- no message over ``max_message`` (256) UTF-16 units, a whisper's ``/msg NAME `` included; no
  line break, control character or section sign (``wire.chat_safe``);
- never a command a player wrote: a public message never starts with ``/`` (a leading slash is
  made ``∕``), and the only command sent is its own ``/msg NAME text``, with NAME a player's name
  read from the server; the Node client refuses anything else a second time;
- its own send rate (a token bucket, under vanilla's spam kick: each message or command adds 20
  to a counter that drops by 1 a tick, over 200 kicks), held while the server lags: a stalled
  server runs no ticks, so messages queued in it all count at once when it wakes (the client
  reports a stall after 1.5 s without a packet; a server sends the time every second);
- a line counts as delivered when the server echoes it back (vanilla shows a player their own
  chat and "You whisper to …") or after ``CONFIRM_AFTER`` seconds of a server that is up and
  not lagging since it was written (a server handles a client's packets in order, every tick);
  lines not delivered when the connection drops are sent again after the reconnection (at
  least once, as with the plugin API);
- an answer to a player who is not in the game (a server restart disconnects everyone; Jarvis
  is often back first) waits for them, ``HOLD_FOR_ABSENT`` seconds at most, when the tab list
  has shown that player before (a name read from a plugin's chat format may be a nickname the
  tab list never shows: not held).
"""
from __future__ import annotations

import json
import logging
import os
import queue
import re
import shutil
import socket
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from jarvis.bridge.chat import Question, ReplyStyle
from jarvis.bridge.reconnect import connect_with_retries
from jarvis.bridge.transport import (BotError, ConnectContext, ConnectionLost, Endpoint, OutLine, SettingError,
                                     StopFlag, Transport, WireStats)
from jarvis.bridge.wire import ChatPost, chat_safe
from jarvis.logs import format_event
from jarvis.config import REPLY_MODES, BotSettings, BridgeSettings

log = logging.getLogger(__name__)

CLIENT_DIR = Path(__file__).resolve().parent / "playerbot"
CLIENT_SCRIPT = CLIENT_DIR / "client.js"
CONFIRM_AFTER = 2.0                 # seconds after which a written line without an echo counts as delivered
HOLD_FOR_ABSENT = 120.0             # seconds an answer waits for its asker to be back in the game
QUIT_GRACE = 3.0                    # seconds the client gets to leave the server before it is killed
USERNAME = re.compile(r"[A-Za-z0-9_]{1,16}")
COMMAND_NEUTRALISER = "\u2215"      # DIVISION SLASH: looks like "/", runs nothing
SPAM_KICK = "disconnect.spam"       # vanilla's translation key ("Kicked for spamming")
WHISPER_COMMANDS = ("msg", "tell", "w")

# Vanilla's chat types and translation keys (player_chat packets; older servers send the same as text components).
PUBLIC_CHAT = "minecraft:chat"
WHISPER_IN = "minecraft:msg_command_incoming"
WHISPER_OUT = "minecraft:msg_command_outgoing"
OTHER_VANILLA_TYPES = {"minecraft:emote_command", "minecraft:say_command", "minecraft:team_msg_command_incoming",
                       "minecraft:team_msg_command_outgoing"}
TRANSLATED = {"chat.type.text": "public", "commands.message.display.incoming": "whisper",
              "commands.message.display.outgoing": "whisper_echo"}


def utf16_len(text: str) -> int:
    """Length as Minecraft counts it (Java's String.length: UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def neutralise_command(text: str) -> str:
    """A public message that cannot run a command: a leading ``/`` becomes ``∕``."""
    return COMMAND_NEUTRALISER + text[1:] if text.startswith("/") else text


def whisper_overhead(command: str, player: str) -> int:
    """Characters ``/msg NAME `` takes from a whispered message's 256."""
    return len(f"/{command} {player} ")


@dataclass(frozen=True)
class Echo:
    """Our own message, as the server showed it back: ``to`` is the whisper's target (None: public)."""

    to: str | None
    text: str


class ChatRules:
    """Which chat line is a player's public message, a whisper to the bot, or the bot's own echo.

    Vanilla (1.19+) sends players' messages as ``player_chat`` packets with a chat type and the
    sender's name: read as they are, never from the text. Servers and plugins that send chat as
    plain system text (chat plugins, 1.18 and older: with a translation key) go through the
    configured patterns (``BotSettings.public_patterns`` / ``whisper_patterns``, with the groups
    ``name`` and ``message``; ``{me}`` is the bot's name), whispers first.
    """

    def __init__(self, settings: BotSettings, me: str) -> None:
        self.me = me
        self.public = [self._compile(p, "public_patterns") for p in settings.public_patterns]
        self.whisper = [self._compile(p, "whisper_patterns") for p in settings.whisper_patterns]

    def _compile(self, pattern: str, setting: str) -> re.Pattern:
        return compile_pattern(pattern, self.me, setting)

    def read(self, event: dict) -> ChatPost | Echo | None:
        if event.get("source") == "player":
            return self._player_chat(event)
        translate, args = event.get("translate"), event.get("args") or []
        kind = TRANSLATED.get(translate) if len(args) >= 2 else None
        if kind is not None:
            return self._message(kind, str(args[0]), str(args[1]))
        text = str(event.get("text") or "")
        for kind, patterns in (("whisper", self.whisper), ("public", self.public)):
            for pattern in patterns:
                match = pattern.match(text)
                if match:
                    return self._message(kind, match.group("name"), match.group("message"))
        return None

    def _player_chat(self, event: dict) -> ChatPost | Echo | None:
        chat_type = event.get("chat_type")
        # The account's name (the tab list, by the sender's UUID) before the name as shown (a nickname)
        sender = event.get("sender_username") or event.get("sender") or ""
        content = str(event.get("content") or "")
        if chat_type == PUBLIC_CHAT:
            return self._message("public", sender, content)
        if chat_type == WHISPER_IN:
            return self._message("whisper", sender, content)
        if chat_type == WHISPER_OUT:
            return self._message("whisper_echo", str(event.get("target") or ""), content)
        if chat_type in OTHER_VANILLA_TYPES:
            return None   # /me, /say, team messages: not questions
        # A type of the server's own (Paper's chat renderers send the rendered line, e.g. "[Admin]
        # Steve: hi", as a raw type): read as text, as plugin chat is.
        return self.read({"source": "system", "text": event.get("text") or content})

    def _message(self, kind: str, name: str, message: str) -> ChatPost | Echo | None:
        name = account_name(name)
        if kind == "whisper_echo":
            return Echo(name, message) if name else None
        if name is None:
            return None   # nobody we could whisper to or name
        if name.casefold() == self.me.casefold():
            return Echo(None, message) if kind == "public" else None
        return ChatPost(-1, message, player=name, private=kind == "whisper")


def account_name(shown: str) -> str | None:
    """The user name in a name as shown: ``Steve``, or the last name-like word (``[Admin] Steve``)."""
    shown = chat_safe(shown or "")
    if USERNAME.fullmatch(shown):
        return shown
    words = [word for word in shown.split(" ") if USERNAME.fullmatch(word)]
    return words[-1] if words else None


def compile_pattern(pattern: str, me: str, setting: str) -> re.Pattern:
    """A chat pattern with ``{me}`` filled in; SettingError naming the setting when it is unusable."""
    try:
        compiled = re.compile(pattern.replace("{me}", re.escape(me)))
    except re.error as exc:
        raise SettingError("bot", setting, f"not a regular expression: {pattern!r} ({exc})") from None
    if not {"name", "message"} <= set(compiled.groupindex):
        raise SettingError("bot", setting, f"{pattern!r} needs the groups (?P<name>...) and (?P<message>...)")
    return compiled


def bot_endpoint(bot: BotSettings) -> Endpoint:
    """The game server's address, as errors and log lines name it."""
    return Endpoint(bot.host, bot.port, "bot", "the game server", "is it running, and is that its game port?",
                    "a player bot")


def check_bot(bot: BotSettings) -> None:
    """SettingError for player-bot settings that cannot work (one line naming the setting)."""
    if bot.reply not in REPLY_MODES:
        raise SettingError("bot", "reply", f"{bot.reply!r} is not one of {', '.join(REPLY_MODES)}")
    if bot.whisper_command not in WHISPER_COMMANDS:
        raise SettingError("bot", "whisper_command",
                           f"{bot.whisper_command!r} is not one of {', '.join(WHISPER_COMMANDS)}")
    if not USERNAME.fullmatch(bot.username):
        raise SettingError("bot", "username", f"{bot.username!r} is not a Minecraft name (1-16 letters, digits or _)")
    if not 40 <= bot.max_message <= 256:
        raise SettingError("bot", "max_message", f"{bot.max_message} is not within 40-256 (vanilla's limit is 256)")
    for setting in ("public_patterns", "whisper_patterns"):
        for pattern in getattr(bot, setting):
            compile_pattern(pattern, bot.username, setting)


class SendPacer:
    """A token bucket: ``burst`` messages at once, then ``rate`` a second."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = max(1, burst)
        self.clock = clock
        self.tokens = float(self.burst)
        self.updated = clock()

    paused = False

    def pause(self) -> None:
        """The server lags: nothing goes, and the time it lags earns nothing (its ticks stand still too)."""
        self._refill()
        self.paused = True

    def resume(self) -> None:
        self.updated = self.clock()
        self.paused = False

    def take(self) -> bool:
        """One message may go now (and is counted), or not yet."""
        if self.paused:
            return False
        self._refill()
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def retune(self, rate: float, burst: int) -> None:
        self._refill()
        self.rate, self.burst = rate, max(1, burst)
        self.tokens = min(self.tokens, self.burst)

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now


@dataclass
class _InFlight:
    line: OutLine
    id: int
    sent_at: float | None = None
    queued_at: float = 0.0

    @property
    def addressee(self) -> str | None:
        """The player the line is for: a whisper's target, or the asker of a public answer."""
        if self.line.to is not None:
            return self.line.to
        return self.line.question.player if self.line.question is not None else None


def node_client_command(settings: BotSettings, profiles: Path) -> list[str]:
    """The command that starts the Node client; BotError when Node.js or mineflayer is missing."""
    node = shutil.which("node")
    if node is None:
        raise BotError("the player bot needs Node.js 20+ (`node` is not on the PATH)")
    if not (CLIENT_DIR / "node_modules" / "mineflayer").is_dir():
        raise BotError(f"the player bot needs mineflayer: run `make setup` (or `npm ci` in {CLIENT_DIR})")
    options = {"host": settings.host, "port": settings.port, "username": settings.username, "auth": settings.auth,
               "profiles": str(profiles), "version": settings.version, "realm": settings.realm}
    return [node, str(CLIENT_SCRIPT), json.dumps(options)]


class PlayerBot:
    """One game connection as a player (see the module doc). The bridge's poller is its only user."""

    dialect = "bot"

    def __init__(self, process: subprocess.Popen, settings: BotSettings, me: str, *, stats: WireStats,
                 events: "queue.Queue[dict]", stderr: deque, online: set[str] = frozenset(),
                 seen: set[str] | None = None) -> None:
        self.process = process
        self.online = {name.casefold() for name in online}      # the tab list now
        self.seen = seen if seen is not None else set()          # every name the tab list ever showed (this run)
        self.seen.update(self.online)
        self.settings = settings
        self.me = me
        self.stats = stats
        self.rules = ChatRules(settings, me)
        self.pacer = SendPacer(settings.messages_per_second, settings.burst)
        self._events = events
        self._stderr = stderr
        self._waiting: deque[_InFlight] = deque()       # not written yet (the pacer decides when)
        self._written: dict[int, _InFlight] = {}        # written, not delivered yet
        self._sent_ids: dict[int, _InFlight] = {}       # asked to write, "sent" not reported yet
        self._next_id = 0
        self._kicked: str | None = None
        self._ended: str | None = None          # why the connection ended, raised at the next exchange
        self._resumed_at = 0.0                  # when the server last came back from a lag spike

    # ------------------------------------------------------------------ connecting

    @classmethod
    def connect(cls, settings: BotSettings, *, profiles: Path, stats: WireStats | None = None,
                stopping: StopFlag | None = None, seen: set[str] | None = None) -> "PlayerBot":
        """Start the client and wait until it has joined; OSError when it cannot (retried by the bridge)."""
        stats = stats if stats is not None else WireStats()
        stopping = stopping or StopFlag()
        command = node_client_command(settings, profiles)
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, encoding="utf-8", errors="replace", bufsize=1,
                                   env={**os.environ, "NODE_NO_WARNINGS": "1"})
        events: queue.Queue[dict] = queue.Queue()
        stderr: deque[str] = deque(maxlen=20)
        threading.Thread(target=_read_events, args=(process.stdout, events), daemon=True,
                         name="jarvis-bot-events").start()
        threading.Thread(target=_read_stderr, args=(process.stderr, stderr), daemon=True,
                         name="jarvis-bot-stderr").start()
        deadline = time.monotonic() + settings.join_timeout
        failure = None
        online: set[str] = set()   # the tab list as it arrives while joining
        try:
            while failure is None:
                if stopping.is_set():
                    failure = "stopping"
                    break
                try:
                    event = events.get(timeout=max(0.05, min(0.25, deadline - time.monotonic())))
                except queue.Empty:
                    if time.monotonic() >= deadline:
                        failure = f"not joined within {settings.join_timeout:g} s"
                    continue
                kind = event.get("event")
                if kind == "player_joined":
                    online.add(str(event.get("name")))
                elif kind == "player_left":
                    online.discard(str(event.get("name")))
                elif kind == "ready":
                    me = str(event.get("username") or settings.username)
                    bot = cls(process, settings, me, stats=stats, events=events, stderr=stderr,
                              online=online | set(event.get("online") or ()), seen=seen)
                    _log("joined", host=settings.host, port=settings.port, version=event.get("version"))
                    return bot
                if kind == "msa_code":
                    _log("microsoft_sign_in", logging.WARNING, message=event.get("message"),
                         url=event.get("verification_uri"), code=event.get("user_code"))
                    deadline = max(deadline, time.monotonic() + 15 * 60)   # a person is typing the code in
                elif kind == "kicked":
                    failure = f"kicked while joining: {event.get('reason')}"
                    stats.kicks += 1
                elif kind == "error" and event.get("fatal"):
                    raise BotError(f"the player bot cannot start: {event.get('message')}")
                elif kind == "error":
                    failure = str(event.get("message"))
                elif kind in ("end", "eof"):
                    failure = failure or str(event.get("reason") or "the client ended")
        except BaseException:
            _stop_process(process)
            raise
        _stop_process(process)
        detail = f"; client said: {' | '.join(stderr)}" if stderr and "Error" in " ".join(stderr) else ""
        if _is_version_error(failure):
            raise BotError(f"the player bot cannot join {settings.host}:{settings.port}: {failure}")
        raise ConnectionRefusedError(f"cannot join {settings.host}:{settings.port} as a player: {failure}{detail}")

    def start_session(self) -> None:
        """Nothing to clear: a player sees only chat said after it joined."""

    # ------------------------------------------------------------------ the poller's exchange

    def exchange(self, lines: Sequence[OutLine]) -> list[ChatPost]:
        """Queue ``lines``, read what happened, send what the pacer allows.

        Marks ``line.delivered`` on the lines the server took; ConnectionLost when the connection ended.
        """
        now = time.monotonic()
        for line in lines:
            self._next_id += 1
            self._waiting.append(_InFlight(line, self._next_id, queued_at=now))
        posts = self._read_events()
        self._confirm_by_time()
        while self._waiting and self._ended is None:
            flight = self._next_to_send()
            if flight is None or not self.pacer.take():
                break
            self._waiting.remove(flight)
            self._write(flight)
        return posts

    def _next_to_send(self) -> _InFlight | None:
        """The oldest line whose player is here (or was never seen in the tab list, or waited long enough)."""
        now = time.monotonic()
        held = set()
        for flight in self._waiting:
            who = flight.addressee
            key = who.casefold() if who else None
            if key in held:
                continue          # a player's lines go in order
            if key is None or key in self.online or key not in self.seen or now - flight.queued_at >= HOLD_FOR_ABSENT:
                return flight
            held.add(key)
        return None

    def _read_events(self) -> list[ChatPost]:
        """Chat read since the last call. The end of the connection is raised at the next call, so
        that chat read just before it (a server that wakes from a freeze and then kicks) is kept."""
        if self._ended is not None:
            raise ConnectionLost(self._ended)
        posts: list[ChatPost] = []
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                break
            kind = event.get("event")
            if kind == "chat":
                found = self.rules.read(event)
                if isinstance(found, Echo):
                    self._confirm_echo(found)
                elif found is not None:
                    posts.append(found)
            elif kind == "sent":
                flight = self._sent_ids.pop(event.get("id"), None)
                if flight is not None:
                    flight.sent_at = time.monotonic()
                    self._written[flight.id] = flight
            elif kind == "refused":
                flight = self._sent_ids.pop(event.get("id"), None)
                self.stats.refused_lines += 1
                _log("send_refused", logging.ERROR, why=event.get("why"))
                if flight is not None:
                    flight.line.delivered = True   # it can never be sent: not again either
            elif kind == "kicked":
                self._kicked = str(event.get("reason") or "")
                self.stats.kicks += 1
                spam = event.get("translate") == SPAM_KICK or "spam" in self._kicked.lower()
                if spam:
                    self.stats.spam_kicks += 1
                _log("kicked", logging.WARNING, reason=self._kicked, spam=spam)
            elif kind == "player_joined" and event.get("name"):
                self.online.add(str(event["name"]).casefold())
                self.seen.add(str(event["name"]).casefold())
            elif kind == "player_left" and event.get("name"):
                self.online.discard(str(event["name"]).casefold())
            elif kind == "stalled":
                self.pacer.pause()
                _log("server_slow", logging.WARNING, waiting_s=1.5)
            elif kind == "back":
                self.pacer.resume()
                self._resumed_at = time.monotonic()
                stalled = float(event.get("stalled_ms") or 0) / 1000
                self.stats.stalls += 1
                self.stats.longest_stall_s = max(self.stats.longest_stall_s, stalled)
                _log("server_back", logging.WARNING, stalled_s=stalled)
            elif kind == "error":
                _log("bot_error", logging.WARNING, error=event.get("message"))
            elif kind in ("end", "eof"):
                why = f"kicked: {self._kicked}" if self._kicked is not None else str(event.get("reason") or "ended")
                self._ended = f"the game connection ended ({why})"
                break
        if self._ended is None and self.process.poll() is not None and self._events.empty():
            self._ended = f"the player bot's client exited with status {self.process.returncode}"
        if self._ended is not None and not posts:
            raise ConnectionLost(self._ended)
        return posts

    def _write(self, flight: _InFlight) -> None:
        line = flight.line
        text = chat_safe(line.text)
        if line.to is None:
            request = {"op": "say", "id": flight.id, "text": neutralise_command(text)}
        else:
            request = {"op": "whisper", "id": flight.id, "to": line.to, "text": text,
                       "command": self.settings.whisper_command}
        self._sent_ids[flight.id] = flight
        try:
            self.process.stdin.write(json.dumps(request, ensure_ascii=False) + "\n")
            self.process.stdin.flush()
        except (OSError, ValueError) as exc:
            raise ConnectionLost(f"the player bot's client is gone: {exc}") from exc

    def _confirm_echo(self, echo: Echo) -> None:
        for flight in sorted(self._written.values(), key=lambda f: f.id):
            line = flight.line
            same_target = (line.to is None and echo.to is None) or (
                line.to is not None and echo.to is not None and line.to.casefold() == echo.to.casefold())
            if same_target and chat_safe(echo.text) == _as_sent(line):
                self._deliver(flight)
                return

    def _confirm_by_time(self) -> None:
        if self.pacer.paused:
            return                # a lagging server has not handled anything since
        now = time.monotonic()
        for flight in [f for f in self._written.values() if now - max(f.sent_at, self._resumed_at) >= CONFIRM_AFTER]:
            self._deliver(flight)

    def _deliver(self, flight: _InFlight) -> None:
        flight.line.delivered = True
        self._written.pop(flight.id, None)

    def player_name(self, entity_id: int) -> str | None:  # noqa: ARG002 - every post names its player already
        """None: the bot reads each player's name with the message (``ChatPost.player``)."""
        return None

    def retune(self, bridge: BridgeSettings, settings: BotSettings) -> None:  # noqa: ARG002 - the bot's own
        """New rates and patterns without reconnecting (SIGHUP)."""
        self.settings = settings
        self.rules = ChatRules(settings, self.me)
        self.pacer.retune(settings.messages_per_second, settings.burst)

    def close(self) -> None:
        _stop_process(self.process)


class PlayerBotKind:
    """The player bot as the bridge knows it (jarvis.bridge.transport.TransportKind): asked for when ``[bot]``
    names a host or a Realm. Its messages carry its name already (no prefix), at most ``max_message`` UTF-16
    units a message with a whisper's ``/msg NAME `` counted, at most ``max_messages`` an answer; where an answer
    goes follows ``reply`` (``same``: a whisper by whisper, public chat in public; ``private``; ``public``)."""

    name = "bot"
    settings_type = BotSettings
    section = "bot"
    reloadable = ("reply", "whisper_command", "max_message", "max_messages", "messages_per_second", "burst",
                  "public_patterns", "whisper_patterns", "join_timeout")

    def asked_for(self, settings: BotSettings | None) -> bool:
        return settings is not None and bool(settings.host or settings.realm)

    def check(self, settings: BotSettings) -> None:
        check_bot(settings)

    def describe(self, bridge: BridgeSettings, settings: BotSettings) -> str:  # noqa: ARG002 - the bot's own
        where = settings.realm or f"{settings.host}:{settings.port}"
        return f"the player bot, {settings.username} at {where} ({settings.auth}), replies {settings.reply}"

    def endpoint(self, bridge: BridgeSettings, settings: BotSettings) -> Endpoint:  # noqa: ARG002 - the bot's own
        return bot_endpoint(settings)

    def check_reachable(self, bridge: BridgeSettings, settings: BotSettings) -> None:
        """BotError unless Node.js and mineflayer are installed; the game port reachable (a TCP connection, closed
        at once: joining is left to the bridge)."""
        node_client_command(settings, Path("."))
        if settings.realm:
            return
        connect_with_retries(bridge, lambda: socket.create_connection((settings.host, settings.port),
                                                                      timeout=bridge.io_timeout),
                             bot_endpoint(settings)).close()

    def style(self, bridge: BridgeSettings, settings: BotSettings) -> ReplyStyle:  # noqa: ARG002 - the bot's own
        return ReplyStyle("", settings.max_message, settings.max_messages)

    def whisper_to(self, settings: BotSettings, question: Question) -> str | None:
        if question.player is None:
            return None
        if settings.reply == "private" or (settings.reply == "same" and question.private):
            return question.player
        return None

    def whisper_overhead(self, settings: BotSettings, player: str) -> int:
        return whisper_overhead(settings.whisper_command, player)

    def connect(self, bridge: BridgeSettings, settings: BotSettings, context: ConnectContext) -> Transport:  # noqa: ARG002
        return PlayerBot.connect(settings, profiles=context.home / "microsoft", stats=context.stats,
                                 stopping=context.stopping, seen=context.kept.setdefault("seen", set()))


PLAYER_BOT = PlayerBotKind()


def _as_sent(line: OutLine) -> str:
    text = chat_safe(line.text)
    return neutralise_command(text) if line.to is None else text


def _read_events(stream, events: "queue.Queue[dict]") -> None:
    for raw in stream:
        raw = raw.strip()
        if not raw:
            continue
        try:
            event = json.loads(raw)
        except json.JSONDecodeError:
            continue                       # a library printing to stdout: not ours
        if isinstance(event, dict):
            events.put(event)
    events.put({"event": "eof"})


def _read_stderr(stream, lines: deque) -> None:
    for raw in stream:
        if raw.strip():
            lines.append(raw.strip()[:300])


def _stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        try:
            process.stdin.write(json.dumps({"op": "quit"}) + "\n")
            process.stdin.flush()
        except (OSError, ValueError):
            pass
        try:
            process.wait(QUIT_GRACE)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    try:
        process.stdin.close()   # stdout and stderr end with the process; their reader threads close them
    except (OSError, ValueError):
        pass


def _is_version_error(failure: str | None) -> bool:
    return bool(failure) and "is not supported" in failure and "version" in failure.lower()


def _log(event: str, level: int = logging.INFO, **fields: object) -> None:
    if log.isEnabledFor(level):
        log.log(level, format_event(event, **fields))
