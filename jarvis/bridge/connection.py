"""The connection to the server's Minecraft Pi / RaspberryJuice API, as the real plugins behave.

What the plugins do (read in their sources; docs/bridge.md cites the functions):

- A reader thread queues every received line; the server's main thread runs the queue once per
  tick (20 a second) and replies in order, one reply queue per connection. A lagging server (GC
  pauses, chunk generation) delays every reply by seconds; the connection is still alive.
- Any command that throws is answered ``Fail`` — ``events.chat.posts`` included (upstream drains
  a chat queue that the async chat thread fills without a lock).
- A line without ``(`` throws before the command is dispatched: no reply at all.
- upstream (zhuowei/RaspberryJuice) sends nothing back for ``chat.post`` and ``events.clear``;
  the fork for current Paper (RaspberryJuiceReload) answers them ``Success``.
- upstream's ``entity.getName`` answers nothing for an entity it cannot find (it answers
  ``Fail`` only when nobody is online); the fork answers ``Fail``.
- 2.x (sakebomb/RaspberryJuice, ``v2``) replies as upstream does, except that its
  ``entity.getName`` answers nothing even with nobody online, and it has an ``auth(<token>)``
  handshake: with an ``auth-token`` set, every command before a good ``auth`` answers ``Fail``
  (``events.clear`` included), and three bad ``auth`` lines close the connection.

A session starts with ``auth(<token>)`` alone (the token may be empty): 2.x answers ``1`` (no
token needed, or the token is good) and the dialect is known; the older plugins do not know the
command and answer ``Fail``, as 2.x does to a bad token. Then ``events.clear`` + a poll: the fork
acknowledges the clear with ``Success``; upstream answers the poll; 2.x refusing answers both
``Fail``, and keeps answering polls ``Fail`` (upstream almost never does: it is a race), which
ends the session with :class:`AuthRefused`. One ``auth`` line per connection, never retried:
the plugin's lockout (three bad lines) is never reached.

So this connection never guesses which reply belongs to which command. Every batch of commands
is written at once and each command gets an *expectation*: a reply, an acknowledgement (fork
only), or a name whose reply depends on the player-id list read just before it. Replies are
consumed strictly in order; a ``Success`` where a reply is due is an acknowledgement (it gives
the fork away), a reply where an acknowledgement is due means the server does not acknowledge
(upstream). Slow is not dead: a reply is waited for as long as TCP says the server is there
(keepalive probes find a vanished host); a wait longer than ``slow_after`` is logged and
counted as a stall. Only end of stream, a socket error, or ``dead_after`` seconds without a
byte (when set) raise :class:`ConnectionLost`.

:class:`ChatClient` is this module's :class:`jarvis.bridge.transport.Transport` and :data:`PLUGIN_API` its
:class:`~jarvis.bridge.transport.TransportKind` (``api``, the default: its settings are ``[bridge]``'s). ``mcpi`` formats
the arguments (``flatten_parameters_to_bytestring``); its own ``Connection`` (no timeouts, a spin
on a closed socket, one reply per request assumed) is not used for I/O.
"""
from __future__ import annotations

import logging
import re
import select
import socket
import time
import unicodedata
from typing import Sequence

from mcpi.util import flatten_parameters_to_bytestring

from jarvis.bridge.chat import PREFIX, Question, ReplyStyle
from jarvis.bridge.reconnect import connect_with_retries, opened
from jarvis.bridge.transport import (AuthRefused, BridgeError, ConnectContext, ConnectionLost, Endpoint, OutLine,
                                     PollFailed, ReplyTimeout, SettingError, StopFlag, Transport, WireStats)
from jarvis.bridge.wire import DIALECTS, FORK, UPSTREAM, V2, ChatPost, chat_line, chat_safe, parse_chat_posts
from jarvis.logs import format_event
from jarvis.config import BridgeSettings

log = logging.getLogger(__name__)

MAX_REPLY_BYTES = 1 << 20   # a reply line longer than this is not the protocol we speak
MAX_NAME_CHARS = 32
FAIL = "Fail"
SUCCESS = "Success"
AUTH_OK = "1"                           # 2.x's reply to a good auth(<token>) (and to any auth without a token set)
AUTO = "auto"
REFUSED_POLLS = 3                       # polls answered Fail in a row after a refused auth: 2.x refusing us
_WAIT_SLICE = 0.25                      # seconds per select(): how fast a stop request is noticed
_USERNAME = re.compile(r"[A-Za-z0-9_]{2,16}")
_PLAYER_IDS = re.compile(r"[0-9]+(\|[0-9]+)*")


class BridgeConnection:
    """One API connection: batched commands, replies matched to their commands (see the module doc)."""

    def __init__(self, host: str, port: int, settings: BridgeSettings, *, stats: WireStats | None = None,
                 stopping: StopFlag | None = None) -> None:
        self.socket = socket.create_connection((host, port), timeout=settings.io_timeout)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        _set_keepalive(self.socket, settings.keepalive)
        self.settings = settings
        self.stats = stats or WireStats()
        self.stopping = stopping or StopFlag()
        self.dialect: str | None = None if settings.dialect == AUTO else settings.dialect
        self.deadline: float | None = None     # absolute time.monotonic() after which waiting stops
        self._buffer = bytearray()

    # ------------------------------------------------------------------ commands

    @staticmethod
    def command(name: str, *args: object) -> bytes:
        return name.encode("ascii") + b"(" + flatten_parameters_to_bytestring(args) + b")\n"

    def exchange(self, commands: list[tuple[bytes, str]]) -> list[str | None]:
        """Send ``(line, kind)`` commands in one write; the replies of those that have one, in order.

        kind: ``reply`` (always answered), ``ack`` (answered ``Success`` by the fork only; no
        entry in the result), ``name`` (``entity.getName`` right after ``world.getPlayerIds``:
        None when upstream will not answer because the player is not online).
        """
        self._discard_strays()
        self._send(b"".join(line for line, _ in commands))
        expected = [kind for _, kind in commands]
        results: list[str | None] = []
        unexpected_acks = 0   # acknowledgements not waited for (upstream assumed) that may still come
        i = 0
        while i < len(expected):
            kind = expected[i]
            if kind == "ack":
                if self.dialect in (UPSTREAM, V2):
                    unexpected_acks += 1
                    i += 1
                    continue
                line = self._read_line()
                if line == SUCCESS:
                    self._learn(FORK, "the server acknowledged a command with Success")
                    i += 1
                elif line == FAIL and self.dialect == FORK:
                    self.stats.fails += 1
                    _log("command_failed", logging.WARNING, command=commands[i][0][:40])
                    i += 1
                else:   # no acknowledgement: this line answers the next command
                    self._learn(UPSTREAM, "the server sent a reply where the fork acknowledges")
                    expected = expected[:i] + [k for k in expected[i:] if k != "ack"]
                    self._push_back(line)
                continue
            if kind == "name" and self.dialect != FORK and not _answers_name(results[-1], commands[i][0], self.dialect):
                results.append(None)
                i += 1
                continue
            line = self._read_line()
            if line == SUCCESS and kind == "reply" and (unexpected_acks or self.dialect != FORK):
                # An acknowledgement we did not wait for (the fork after all), or a stray one: never
                # a reply to a poll or a player list, so never taken for this command's.
                if unexpected_acks:
                    unexpected_acks -= 1
                    self._learn(FORK, "an unexpected Success reply")
                else:
                    self.stats.strays += 1
                continue
            results.append(line)
            i += 1
        return results

    def probe(self) -> None:
        """Start the session (see the module doc): ``auth``, then forget earlier chat
        (``events.clear``) and learn the dialect if unknown. AuthRefused when 2.x refuses us."""
        token = self.settings.mc_token
        # Alone, and first: nothing is sent before auth, and nothing more before its answer.
        auth = self.exchange([(self.command("auth", token), "reply")])[0]
        authenticated = auth == AUTH_OK
        if authenticated:
            self._learn(V2, "the server answered auth")
        elif auth != FAIL:
            self.stats.garbage += 1
            _log("garbage_reply", logging.WARNING, reply=auth[:120])
        reply = self.poll_raw(acknowledged=[self.command("events.clear")])
        if self.dialect is None:   # the poll right after the clear came first: nothing acknowledged it
            self._learn(UPSTREAM, "no acknowledgement of events.clear")
        if authenticated:
            return
        if reply == FAIL:
            # 2.x refusing answers Fail to everything; upstream answers a poll Fail only when chat
            # arrives while it drains its queue, which does not happen several times in a row.
            for _ in range(REFUSED_POLLS - 1):
                if self.poll_raw() != FAIL:
                    break
            else:
                self._refused(token)
        if self.dialect == V2:   # auth refused, yet polls answered: not 2.x at all
            self._learn(UPSTREAM, "the server does not know auth()")
        if token:
            _log("auth_unused", logging.WARNING, dialect=self.dialect,
                 why="the server's plugin has no auth command (RaspberryJuice before 2.x): the token is not used")

    def _refused(self, token: str) -> None:
        raise AuthRefused(token_given=bool(token))

    def poll_raw(self, acknowledged: list[bytes] = ()) -> str:
        """Send ``acknowledged`` commands then ``events.chat.posts``; the poll's reply (may be ``Fail``)."""
        batch = [(line, "ack") for line in acknowledged] + [(self.command("events.chat.posts"), "reply")]
        return self.exchange(batch)[-1]

    def _learn(self, dialect: str, why: str) -> None:
        if self.dialect == dialect:
            return
        level = logging.INFO if self.dialect is None else logging.WARNING
        _log("dialect", level, dialect=dialect, was=self.dialect or AUTO, why=why)
        self.dialect = dialect

    # ------------------------------------------------------------------ bytes

    def _send(self, data: bytes) -> None:
        try:
            self.socket.settimeout(self.settings.io_timeout if self.deadline is None
                                   else max(0.1, self.deadline - time.monotonic()))
            self.socket.sendall(data)
        except OSError as exc:
            raise ConnectionLost(f"cannot send to the server: {exc}") from exc

    def _discard_strays(self) -> None:
        """Every reply due was read: bytes still waiting belong to no command (say, a line break a
        chat plugin let into a chat event, sent on by the API as a second line). Dropped, counted."""
        while select.select([self.socket], [], [], 0.0)[0]:
            self._buffer += self._recv()
        if self._buffer:
            count = max(1, self._buffer.count(b"\n"))
            self.stats.strays += count
            _log("stray_reply", logging.WARNING, lines=count, text=bytes(self._buffer[:80]))
            self._buffer.clear()

    def _push_back(self, line: str) -> None:
        self._buffer[:0] = line.encode("utf-8", "replace") + b"\n"

    def _read_line(self) -> str:
        """The next reply line; waits as long as the connection lives (see the module doc)."""
        began = time.monotonic()
        slow = False
        while b"\n" not in self._buffer:
            now = time.monotonic()
            if self.stopping.is_set() and self.deadline is None:
                self.deadline = now + self.settings.io_timeout   # stopping: a last reply is waited for briefly
            waited = now - began
            if self.deadline is not None and now >= self.deadline:
                raise ReplyTimeout("no reply before the deadline")
            if self.settings.dead_after and waited >= self.settings.dead_after:
                raise ReplyTimeout(f"no reply from the server within {self.settings.dead_after:g} s")
            if not slow and waited >= self.settings.slow_after:
                slow = True
                _log("server_slow", logging.WARNING, waiting_s=waited)
            try:
                readable = select.select([self.socket], [], [], _WAIT_SLICE)[0]
            except (OSError, ValueError) as exc:
                raise ConnectionLost(f"connection error: {exc}") from exc
            if readable:
                self._buffer += self._recv()
                if len(self._buffer) > MAX_REPLY_BYTES and b"\n" not in self._buffer:
                    raise ConnectionLost("the server sent a reply line longer than 1 MiB")
        if slow:
            waited = time.monotonic() - began
            self.stats.stalls += 1
            self.stats.longest_stall_s = max(self.stats.longest_stall_s, waited)
            _log("server_back", logging.WARNING, stalled_s=waited)
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer = bytearray(rest)
        return line.decode("utf-8", errors="replace").rstrip("\r")

    def _recv(self) -> bytes:
        try:
            data = self.socket.recv(65536)
        except OSError as exc:   # reset, or keepalive probes unanswered (ETIMEDOUT)
            raise ConnectionLost(f"connection error: {exc}") from exc
        if not data:
            raise ConnectionLost("the server closed the connection")
        return data

    def close(self) -> None:
        try:
            self.socket.close()
        except OSError:
            pass


class ChatClient:
    """The plugin API transport: the calls the bridge makes, on one :class:`BridgeConnection`."""

    def __init__(self, connection: BridgeConnection) -> None:
        self.connection = connection

    @classmethod
    def connect(cls, settings: BridgeSettings, *, stats: WireStats | None = None,
                stopping: StopFlag | None = None) -> "ChatClient":
        """Open a connection; raises OSError (ConnectionRefusedError, timeout, ...) when it cannot."""
        return cls(BridgeConnection(settings.mc_host, settings.mc_port, settings, stats=stats, stopping=stopping))

    @property
    def dialect(self) -> str | None:
        return self.connection.dialect

    def start_session(self) -> None:
        """Forget chat posted before now, learn the dialect."""
        self.connection.probe()

    def post_and_poll(self, lines: list[str]) -> list[ChatPost]:
        """Post ``lines`` (sanitized here: nothing unsanitized reaches the socket), then read the chat.

        The poll's reply comes after every line was handled (one queue, in order), so when this
        returns, the lines were delivered. PollFailed when the server answered the poll ``Fail``.
        """
        posts = [self.connection.command("chat.post", text) for text in map(chat_line, lines) if text]
        reply = self.connection.poll_raw(acknowledged=posts)
        if reply == FAIL:
            self.connection.stats.fails += 1
            raise PollFailed("the server answered Fail to events.chat.posts")
        found = parse_chat_posts(reply, self.connection.dialect or UPSTREAM)
        if any(post.entity_id < 0 for post in found):
            self.connection.stats.garbage += 1
            _log("garbage_reply", logging.WARNING, reply=reply[:120])
        return found

    def exchange(self, lines: Sequence[OutLine]) -> list[ChatPost]:
        """The bridge's poll: post ``lines`` and read the chat. Every line is delivered once the poll
        is answered, ``Fail`` included (the server ran the lines before it)."""
        try:
            posts = self.post_and_poll([line.text for line in lines])
        except PollFailed:
            _deliver(lines)
            raise
        _deliver(lines)
        return posts

    def retune(self, bridge: BridgeSettings, settings: BridgeSettings) -> None:  # noqa: ARG002 - one table, both
        """New thresholds (slow_after, dead_after) without reconnecting (SIGHUP)."""
        self.connection.settings = settings

    def player_name(self, entity_id: int) -> str | None:
        """The player's name (tab-list decorations removed); None when the server does not know it."""
        conn = self.connection
        ids, name = conn.exchange([(conn.command("world.getPlayerIds"), "reply"),
                                   (conn.command("entity.getName", entity_id), "name")])
        if name is None or name == FAIL:
            if name == FAIL:
                conn.stats.fails += 1
            return None
        return plain_player_name(name)

    def close(self) -> None:
        self.connection.close()


def _deliver(lines: Sequence[OutLine]) -> None:
    for line in lines:
        line.delivered = True


def api_endpoint(settings: BridgeSettings) -> Endpoint:
    """The plugin API's address, as errors and log lines name it."""
    return Endpoint(settings.mc_host, settings.mc_port, "api", "the Minecraft server's chat API",
                    "is the server running with the RaspberryJuice plugin, or mcserver/server.js?", "the plugin API")


class PluginApi:
    """The RaspberryJuice plugin API as the bridge knows it (jarvis.bridge.transport.TransportKind): the default
    transport. Its settings are the bridge's own ([bridge]: mc_host, mc_port, dialect, mc_token, max_line,
    max_reply_lines, ...); it broadcasts ``[Jarvis] `` lines and cannot whisper."""

    name = "api"
    settings_type = BridgeSettings
    section = "bridge"
    reloadable = ("max_line", "max_reply_lines", "slow_after", "dead_after")

    def asked_for(self, settings: BridgeSettings | None) -> bool:  # noqa: ARG002 - the default: always there
        return True

    def check(self, settings: BridgeSettings) -> None:
        if settings.dialect not in (AUTO, *DIALECTS):
            raise SettingError("bridge", "dialect", f"unknown API dialect {settings.dialect!r} "
                                                    f"(choose from {AUTO}, {', '.join(DIALECTS)})")
        check_token(settings.mc_token)

    def describe(self, bridge: BridgeSettings, settings: BridgeSettings) -> str:  # noqa: ARG002 - one table
        return f"the plugin API at {settings.mc_host}:{settings.mc_port} ({settings.dialect})"

    def endpoint(self, bridge: BridgeSettings, settings: BridgeSettings) -> Endpoint:  # noqa: ARG002 - one table
        return api_endpoint(settings)

    def check_reachable(self, bridge: BridgeSettings, settings: BridgeSettings) -> None:  # noqa: ARG002
        """One session is started and closed, as the bridge will start its own (AuthRefused: the token)."""
        connect_with_retries(settings, lambda: opened(lambda: ChatClient.connect(settings)),
                             api_endpoint(settings)).close()

    def style(self, bridge: BridgeSettings, settings: BridgeSettings) -> ReplyStyle:  # noqa: ARG002 - one table
        return ReplyStyle(PREFIX, settings.max_line, settings.max_reply_lines)

    def whisper_to(self, settings: BridgeSettings, question: Question) -> str | None:  # noqa: ARG002
        return None           # the plugin API can only broadcast

    def whisper_overhead(self, settings: BridgeSettings, player: str) -> int:  # noqa: ARG002 - never whispers
        return 0

    def connect(self, bridge: BridgeSettings, settings: BridgeSettings, context: ConnectContext) -> Transport:  # noqa: ARG002
        return ChatClient.connect(settings, stats=context.stats, stopping=context.stopping)


PLUGIN_API = PluginApi()


def check_token(token: str) -> None:
    """BridgeError for a token the plugin could never accept: its arguments are split at commas
    (so ``auth(a,b)`` compares ``a``), and a line break or control character would end or garble the line."""
    if "," in token:
        raise BridgeError("the API token contains a comma: RaspberryJuice splits arguments at commas, so it can "
                          "never match (choose an auth-token without one)")
    if any(unicodedata.category(char) == "Cc" for char in token) or token != token.strip():
        raise BridgeError("the API token contains a line break, a control character or surrounding spaces: "
                          "it cannot be sent on one line as the plugin reads it")


def plain_player_name(list_name: str) -> str | None:
    """A name fit to address a player: colour codes gone, and of ``§c[Admin] §fSteve`` the ``Steve``.

    upstream answers ``entity.getName`` with the tab-list name, which permission and rank
    plugins decorate; the last word that looks like a Minecraft user name is the player.
    """
    text = chat_safe(list_name)
    words = text.split(" ")
    if len(words) > 1 and _USERNAME.fullmatch(words[-1]):
        text = words[-1]
    return text[:MAX_NAME_CHARS] or None


def _answers_name(player_ids: str | None, name_command: bytes, dialect: str | None = UPSTREAM) -> bool:
    """Whether upstream (or 2.x) replies to this ``entity.getName`` given the id list read in the same batch.

    Both ran in the same tick on the main thread (one write, one queue), so the online set is the
    same: an online player's name comes back; for anyone else nothing comes back, except that
    with nobody online upstream's lookup throws and the reply is ``Fail`` (2.x's
    ``RaspberryJuicePlugin.getEntity`` searches the worlds instead and finds nothing: no reply).
    """
    if player_ids is None:
        return True
    if player_ids == FAIL:
        return dialect != V2
    if not _PLAYER_IDS.fullmatch(player_ids):
        return True   # not an id list: garbage; the server replied to this batch its own way
    entity_id = name_command[name_command.index(b"(") + 1:-2].decode("ascii")
    return entity_id in player_ids.split("|")


def _set_keepalive(sock: socket.socket, seconds: float) -> None:
    """TCP keepalive: a host that vanished (no FIN, no RST) is found in about 4 x ``seconds``."""
    if seconds <= 0:
        return
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for option, value in (("TCP_KEEPIDLE", seconds), ("TCP_KEEPINTVL", seconds), ("TCP_KEEPCNT", 3)):
        if hasattr(socket, option):
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, option), max(1, int(value)))


def _log(event: str, level: int = logging.INFO, **fields: object) -> None:
    if log.isEnabledFor(level):
        log.log(level, format_event(event, **fields))
