"""A stand-in Minecraft server for the bridge tests: the RaspberryJuice chat API on real sockets,
behaving as the real plugins do (zhuowei/RaspberryJuice ``RemoteSession``, its Paper fork
RaspberryJuiceReload, and sakebomb/RaspberryJuice 2.x; docs/bridge.md cites the functions),
never kinder:

- A reader thread per connection queues each line; a tick thread (the server's main thread)
  runs every queued line of every connection once per tick (``tick`` seconds, 50 ms as in
  Minecraft) and writes the replies in order. :meth:`lag` stalls the tick (a GC pause, chunk
  generation): nothing is answered until it ends, while chat keeps being queued (chat events
  come from the async chat thread, not the main thread).
- A line without ``(`` (or whose ``(`` is its last character) throws before any command runs:
  no reply at all. Arguments are split like Java's ``split(",")`` (trailing empty strings
  dropped) and ``chat.post`` joins them back, so trailing commas vanish; a ``chat.post`` of
  nothing but commas throws (upstream: ``Fail``).
- ``Fail`` for any command that throws or is not one of the five chat commands below (no
  aliases: ``events.clearAll`` and ``world.getPlayerEntityIds`` do not exist in either plugin).
  ``fail_polls_every=n`` makes every n-th ``events.chat.posts`` answer ``Fail`` (the chat stays
  queued for the next poll); :meth:`fail_next` fails chosen commands.
- dialect ``upstream``: no reply to ``chat.post`` and ``events.clear``; ``entity.getName`` answers
  the tab-list name (colour codes and rank prefixes included), nothing at all for an entity it
  cannot find, ``Fail`` when nobody is online; chat events verbatim.
  dialect ``fork``: ``Success`` to ``chat.post`` and ``events.clear``; ``entity.getName``
  answers the plain name or ``Fail``; ``|`` and ``,`` inside chat events sent as ``\\|`` ``\\,``.
- dialect ``v2`` (2.x, ``RemoteSession.handleLine``/``handleCommand``/``tryAuth``): upstream's
  replies, except that a line without ``(`` or not ending in ``)`` answers ``Fail``, only ``\n``
  ends a line (``\r`` is dropped: ``readBoundedLine``), a line over 16,384 characters closes the
  connection, and ``entity.getName`` answers the tab-list name as plain text (colour codes gone,
  rank prefixes kept) or nothing, also with nobody online. With ``token`` set, ``auth(<token>)``
  answers ``1`` (also once authenticated, and without a token set), a wrong one ``Fail``, and the
  third wrong one closes the connection; every other command before a good ``auth`` answers
  ``Fail``, ``events.clear`` and ``chat.post`` included.
- ``world.getPlayerIds`` answers ``id|id|...`` or ``Fail`` when nobody is online.
- Chat events are kept per connection (a new connection starts empty; ``events.clear`` empties it).

Tests drive it from outside: :meth:`say` (a player chats), :meth:`lag`, :meth:`fail_next`,
:meth:`leave`, :meth:`drop_clients` (the server drops the connection), :meth:`drop_at_next`
(it drops it upon a given command), :meth:`go_silent` (the main thread hangs for good). It
records every line it receives (and, per connection, in ``session_lines``), so tests can check
that nothing but chat lines ever arrived, and that ``auth`` came first.
"""
from __future__ import annotations

import re
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field

CHAT_COMMANDS = {"chat.post", "events.clear", "events.chat.posts", "entity.getName", "world.getPlayerIds"}
DIALECTS = ("upstream", "fork", "v2")
MAX_COMMANDS_PER_TICK = 9000   # RemoteSession.tick defers the rest to the next tick
MAX_LINE_LENGTH = 16384        # 2.x: RemoteSession.MAX_LINE_LENGTH, a longer line closes the connection
MAX_AUTH_FAILURES = 3          # 2.x: RemoteSession.MAX_AUTH_FAILURES
_COLOUR_CODE = re.compile("\u00a7.", re.DOTALL)


@dataclass
class Player:
    name: str
    list_name: str | None = None   # the tab-list name (upstream's entity.getName); None: the name

    @property
    def tab_list_name(self) -> str:
        return self.name if self.list_name is None else self.list_name


@dataclass
class _Session:
    sock: socket.socket
    lines: deque = field(default_factory=deque)          # received, waiting for a tick
    events: deque = field(default_factory=deque)         # (entity id, message, key)
    silent: bool = False
    closed: bool = False
    authenticated: bool = True
    auth_failures: int = 0
    received: list = field(default_factory=list)         # every line of this connection, as received


class RaspberryJuiceDouble:
    def __init__(self, players: dict[int, str | Player] | None = None, *, dialect: str = "upstream",
                 tick: float = 0.05, fail_polls_every: int = 0, token: str = "") -> None:
        if dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {dialect!r}")
        if token and dialect != "v2":
            raise ValueError("only RaspberryJuice 2.x (dialect v2) has an auth token")
        self.dialect = dialect
        self.token = token
        self.session_lines: list[list[str]] = []   # per connection, every line received, in order
        self.auth_lines = 0                        # auth(...) lines received, all connections
        self.players = {pid: p if isinstance(p, Player) else Player(p) for pid, p in (players or {}).items()}
        self.tick = tick
        self.fail_polls_every = fail_polls_every
        self.posts: list[str] = []            # texts broadcast by chat.post, in order
        self.post_times: list[float] = []     # time.monotonic() of each broadcast
        self.lines: list[bytes] = []          # every line received, raw
        self.commands: list[str] = []         # every command name received
        self.replies: list[str] = []          # every reply line sent
        self.exceptions: list[str] = []       # lines that threw outside the command handler (no reply)
        self.failed: list[str] = []           # commands answered Fail
        self.lag_spikes: list[tuple[float, float]] = []   # (start, seconds)
        self.polls = 0
        self.delivered: set[int] = set()      # keys of the chat messages returned by a poll
        self._said = 0
        self.connections = 0
        self._sessions: list[_Session] = []
        self._changed = threading.Condition()
        self._closing = False
        self._drop_at: str | None = None
        self._fail_next: dict[str, int] = {}
        self._reply_next: dict[str, str] = {}
        self._lag_until = 0.0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self.port = self._listener.getsockname()[1]
        self._accepting = threading.Thread(target=self._accept_loop, daemon=True)
        self._accepting.start()
        self._ticking = threading.Thread(target=self._tick_loop, daemon=True)
        self._ticking.start()

    # ------------------------------------------------------------------ driving it from a test

    def say(self, entity_id: int, message: str) -> int:
        """A player posts ``message`` in chat: queued at once for every connection, even during a lag spike.

        Returns the message's key: ``key in delivered`` once a poll returned it to a client.
        """
        with self._changed:
            self._said += 1
            for session in self._sessions:
                session.events.append((entity_id, message, self._said))
            self._changed.notify_all()
            return self._said

    def lag(self, seconds: float) -> None:
        """A lag spike: the main thread stalls for ``seconds`` from now (no command runs, no reply)."""
        with self._changed:
            now = time.monotonic()
            self._lag_until = max(self._lag_until, now + seconds)
            self.lag_spikes.append((now, seconds))

    @property
    def lagging(self) -> bool:
        return time.monotonic() < self._lag_until

    def fail_next(self, command: str, count: int = 1) -> None:
        """The next ``count`` ``command``s throw (answered ``Fail``; a poll keeps the chat queued)."""
        with self._changed:
            self._fail_next[command] = self._fail_next.get(command, 0) + count

    def reply_next(self, command: str, text: str) -> None:
        """The next ``command`` is answered ``text`` instead (garbage from a broken plugin)."""
        with self._changed:
            self._reply_next[command] = text

    def leave(self, entity_id: int) -> None:
        """A player leaves (between two ticks, as on the main thread)."""
        with self._changed:
            self.players.pop(entity_id, None)

    def drop_clients(self) -> None:
        """The server closes every API connection (it keeps listening)."""
        with self._changed:
            sessions, self._sessions = self._sessions, []
            for session in sessions:
                session.closed = True
            self._changed.notify_all()
        for session in sessions:
            _close(session.sock)

    def drop_at_next(self, command: str) -> None:
        """The next ``command`` (e.g. ``entity.getName``) closes the connection instead of being handled."""
        self._drop_at = command

    def go_silent(self) -> None:
        """Current connections stay open but their commands never run again (a hung main thread)."""
        with self._changed:
            for session in self._sessions:
                session.silent = True

    def wait_for(self, condition, timeout: float = 20.0) -> bool:
        """Wait until ``condition()`` is true (re-checked on every change); False at the deadline."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not condition():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(min(remaining, 0.05))
            return True

    def wait_for_clients(self, count: int = 1, timeout: float = 20.0) -> bool:
        return self.wait_for(lambda: len(self._sessions) >= count and self.connections >= count, timeout)

    def polled_on(self, connection: int) -> bool:
        """Whether the ``connection``-th connection (from 1) has polled the chat: from then on, chat
        said reaches it. (`jarvis serve` checks the server with a first session, then serves on a second.)"""
        with self._changed:
            return len(self.session_lines) >= connection and any(
                line.startswith("events.chat.posts(") for line in self.session_lines[connection - 1])

    def posts_snapshot(self) -> list[str]:
        with self._changed:
            return list(self.posts)

    def close(self) -> None:
        self._closing = True
        self.drop_clients()
        _close(self._listener)
        self._accepting.join(timeout=5)
        self._ticking.join(timeout=5)

    def __enter__(self) -> "RaspberryJuiceDouble":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # ------------------------------------------------------------------ the server side

    def _accept_loop(self) -> None:
        while not self._closing:
            try:
                sock, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            sock.settimeout(None)
            session = _Session(sock, authenticated=not self.token)
            with self._changed:
                self.session_lines.append(session.received)
                self._sessions.append(session)
                self.connections += 1
                self._changed.notify_all()
            threading.Thread(target=self._read_loop, args=(session,), daemon=True).start()

    def _read_loop(self, session: _Session) -> None:
        """RemoteSession.InputThread: queue each line (BufferedReader.readLine: \\n, \\r or \\r\\n end a line)."""
        buffer = b""
        while True:
            try:
                data = session.sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                self._drop(session)
                return
            buffer += data
            if self.dialect == "v2":
                if self._read_v2_lines(session, buffer.split(b"\n")):
                    return
                buffer = buffer[buffer.rfind(b"\n") + 1:]
                continue
            with self._changed:
                while True:
                    ends = [i for i in (buffer.find(b"\n"), buffer.find(b"\r")) if i >= 0]
                    if not ends:
                        break
                    end = min(ends)
                    if buffer[end:end + 1] == b"\r" and end + 1 == len(buffer):
                        break   # a \r\n may be split between two reads
                    width = 2 if buffer[end:end + 2] == b"\r\n" else 1
                    session.lines.append(buffer[:end])
                    buffer = buffer[end + width:]

    def _read_v2_lines(self, session: _Session, parts: list[bytes]) -> bool:
        """2.x's readBoundedLine: only \\n ends a line, \\r is dropped; True when the line cap closed it."""
        *lines, rest = parts
        with self._changed:
            for line in lines:
                session.lines.append(line.replace(b"\r", b""))
        if any(len(line) > MAX_LINE_LENGTH for line in lines) or len(rest) > MAX_LINE_LENGTH:
            self._drop(session)
            return True
        return False

    def _drop(self, session: _Session) -> None:
        with self._changed:
            session.closed = True
            if session in self._sessions:
                self._sessions.remove(session)
            self._changed.notify_all()
        _close(session.sock)

    def _tick_loop(self) -> None:
        """The TickHandler: once per tick, every queued line of every connection, replies in order."""
        while not self._closing:
            time.sleep(self.tick)
            while time.monotonic() < self._lag_until and not self._closing:
                time.sleep(min(0.05, max(0.0, self._lag_until - time.monotonic())))
            with self._changed:
                for session in list(self._sessions):
                    if session.silent or session.closed:
                        continue
                    handled = 0
                    while session.lines and handled < MAX_COMMANDS_PER_TICK and not session.closed:
                        self._handle_line(session, session.lines.popleft())
                        handled += 1
                self._changed.notify_all()

    def _handle_line(self, session: _Session, raw: bytes) -> None:
        line = raw.decode("utf-8", errors="replace")
        self.lines.append(raw)
        session.received.append(line)
        open_at = line.find("(")
        if self.dialect == "v2" and (open_at < 0 or not line.endswith(")")):
            self.commands.append(line if open_at < 0 else line[:open_at])   # 2.x: "Ignoring malformed command"
            self._reply(session, "Fail", line[:open_at] if open_at >= 0 else line)
            return
        # handleLine: substring(0, indexOf("(")) and substring(indexOf("(") + 1, length - 1), outside the try.
        if open_at < 0 or open_at + 1 > len(line) - 1:
            self.commands.append(line if open_at < 0 else line[:open_at])
            self.exceptions.append(line)
            return
        name, args = line[:open_at], _java_split(line[open_at + 1:-1])
        self.commands.append(name)
        self.auth_lines += name == "auth"
        if self.dialect == "v2" and name == "auth":   # handleCommand: auth first, then the gate
            self._auth(session, args)
            return
        if not session.authenticated:
            self._reply(session, "Fail", name)
            return
        if name == self._drop_at:
            self._drop_at = None
            session.closed = True
            if session in self._sessions:
                self._sessions.remove(session)
            _close(session.sock)
            return
        try:
            reply = self._command(session, name, args)
        except Exception:  # noqa: BLE001 - handleCommand's catch: any exception is answered Fail
            reply = "Fail"
        if reply is not None:
            self._reply(session, reply, name)

    def _reply(self, session: _Session, reply: str, name: str) -> None:
        if reply == "Fail":
            self.failed.append(name)
        self._send(session, reply)

    def _auth(self, session: _Session, args: list[str]) -> None:
        """RemoteSession.tryAuth: constant-time compare; the third failure closes the connection."""
        if session.authenticated:
            self._send(session, "1")
            return
        if (args[0] if args else "") == self.token:
            session.authenticated = True
            self._send(session, "1")
            return
        session.auth_failures += 1
        self._reply(session, "Fail", "auth")
        if session.auth_failures >= MAX_AUTH_FAILURES:
            self._drop(session)

    def _command(self, session: _Session, name: str, args: list[str]) -> str | None:
        fork = self.dialect == "fork"
        v2 = self.dialect == "v2"
        if name in self._reply_next:
            return self._reply_next.pop(name)
        if self._fail_next.get(name):
            self._fail_next[name] -= 1
            raise RuntimeError("injected")
        if name == "events.chat.posts":
            self.polls += 1
            # upstream's unlocked ArrayDeque; the fork and 2.x cannot fail here, but injecting it
            # into them too keeps the bridge's tests strict.
            if self.fail_polls_every and self.polls % self.fail_polls_every == 0:
                raise RuntimeError("ConcurrentModificationException")   # the queue is left as it was
            events, session.events = list(session.events), deque()
            self.delivered.update(key for _, _, key in events)
            return "|".join(f"{pid},{_escape(msg) if fork else msg}" for pid, msg, _ in events)
        if name == "chat.post":
            if not args:   # upstream builds "" then substring(0, -1) throws; the fork checks isEmpty
                if not fork:
                    raise RuntimeError("StringIndexOutOfBoundsException")
            self.posts.append(",".join(args))
            self.post_times.append(time.monotonic())
            return "Success" if fork else None
        if name == "events.clear":
            session.events.clear()
            return "Success" if fork else None
        if name == "world.getPlayerIds":
            return "|".join(str(pid) for pid in self.players) if self.players else "Fail"
        if name == "entity.getName":
            entity_id = int(args[0])           # NumberFormatException -> Fail
            player = self.players.get(entity_id)
            if player is not None:
                if v2:   # PlainText.plain(p.playerListName()): the list name without its colour codes
                    return _COLOUR_CODE.sub("", player.tab_list_name)
                return player.name if fork else player.tab_list_name
            if fork:
                return "Fail"
            if v2:
                return None   # RaspberryJuicePlugin.getEntity searches the worlds: null, no reply, even with nobody online
            if not self.players:
                raise RuntimeError("NullPointerException (no host player)")
            return None   # upstream logs "not found in entity.getName" and sends nothing
        raise RuntimeError(f"{name} is not supported")

    def _send(self, session: _Session, reply: str) -> None:
        if session.silent or session.closed:
            return
        self.replies.append(reply)
        try:
            session.sock.sendall(reply.encode("utf-8", "surrogatepass") + b"\n")   # invalid UTF-8 passes
        except OSError:
            pass


def raw_exchange(port: int, payload: bytes, expect_lines: int, settle: float = 0.3) -> list[bytes]:
    """Send ``payload`` to an API port as is; the reply lines (waits for ``expect_lines``, then ``settle`` s more)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(payload)
        data = b""
        deadline = time.monotonic() + 5
        while data.count(b"\n") < expect_lines and time.monotonic() < deadline:
            data += sock.recv(65536)
        time.sleep(settle)              # anything more would arrive within a few ticks
        sock.setblocking(False)
        try:
            data += sock.recv(65536)
        except BlockingIOError:
            pass
    return data.split(b"\n")[:-1]


def _java_split(text: str) -> list[str]:
    """Java's ``text.split(",")``: trailing empty strings removed ("" gives [""], "," gives [])."""
    if text == "":
        return [""]
    parts = text.split(",")
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _escape(message: str) -> str:
    """The fork's ChatEvent.getChatPosts: ``|`` and ``,`` inside a message escaped."""
    return message.replace("|", "\\|").replace(",", "\\,")


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass
