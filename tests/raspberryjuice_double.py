"""A stand-in Minecraft server for the bridge tests: the RaspberryJuice chat API on real sockets.

It parses commands the way RaspberryJuice does (name up to the first ``(``, arguments up to
the line's last character), keeps one chat-event buffer per connection, answers
``events.chat.posts`` as ``id,message|id,message``, and, like RaspberryJuice, says ``Fail`` to
``world.getPlayerIds`` when nobody is online and nothing at all to ``entity.getName`` for an
entity it does not know. Tests drive it from outside:
``say`` (a player chats), ``drop_clients`` (the server drops the connection),
``drop_at_next`` (it drops it upon a given command), ``go_silent`` (the server
stops answering without closing). It records every line it receives, so tests can
check that nothing but chat lines ever arrived.
"""
from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field

QUERIES = {"events.chat.posts", "entity.getName", "world.getPlayerIds", "world.getPlayerEntityIds"}
COMMANDS = {"chat.post", "events.clear", "events.clearAll"}


@dataclass
class _Session:
    sock: socket.socket
    events: list[str] = field(default_factory=list)
    silent: bool = False


class RaspberryJuiceDouble:
    def __init__(self, players: dict[int, str] | None = None) -> None:
        self.players = dict(players or {})
        self.ghosts: set[int] = set()         # listed as online, unknown to entity.getName (just left)
        self.posts: list[str] = []            # texts of chat.post, in order
        self.lines: list[bytes] = []          # every line received, raw
        self.commands: list[str] = []         # every command name received
        self.connections = 0
        self._sessions: list[_Session] = []
        self._changed = threading.Condition()
        self._closing = False
        self._drop_at: str | None = None
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self.port = self._listener.getsockname()[1]
        self._accepting = threading.Thread(target=self._accept_loop, daemon=True)
        self._accepting.start()

    # ------------------------------------------------------------------ driving it from a test

    def say(self, entity_id: int, message: str) -> None:
        """A player posts ``message`` in chat (every connected API client will see it)."""
        with self._changed:
            for session in self._sessions:
                session.events.append(f"{entity_id},{message}")

    def drop_clients(self) -> None:
        """The server closes every API connection (it keeps listening)."""
        with self._changed:
            sessions, self._sessions = self._sessions, []
        for session in sessions:
            _close(session.sock)

    def drop_at_next(self, command: str) -> None:
        """The next ``command`` (e.g. ``entity.getName``) closes the connection instead of being handled."""
        self._drop_at = command

    def go_silent(self) -> None:
        """Current connections stay open but get no more replies (a hung server or network)."""
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

    def posts_snapshot(self) -> list[str]:
        with self._changed:
            return list(self.posts)

    def close(self) -> None:
        self._closing = True
        self.drop_clients()
        _close(self._listener)
        self._accepting.join(timeout=5)

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
            session = _Session(sock)
            with self._changed:
                self._sessions.append(session)
                self.connections += 1
                self._changed.notify_all()
            threading.Thread(target=self._serve, args=(session,), daemon=True).start()

    def _serve(self, session: _Session) -> None:
        buffer = b""
        while True:
            try:
                data = session.sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                with self._changed:
                    if session in self._sessions:
                        self._sessions.remove(session)
                    self._changed.notify_all()
                _close(session.sock)
                return
            buffer += data
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                reply = self._handle(session, line)
                if reply is not None and not session.silent:
                    try:
                        session.sock.sendall(reply.encode("utf-8", "surrogatepass") + b"\n")  # invalid UTF-8 passes
                    except OSError:
                        pass

    def _handle(self, session: _Session, raw: bytes) -> str | None:
        line = raw.decode("utf-8", errors="replace")
        name, _, rest = line.partition("(")
        args = rest[:-1] if rest.endswith(")") else rest   # RaspberryJuice: up to the last character
        with self._changed:
            self.lines.append(raw)
            self.commands.append(name)
            try:
                if name == self._drop_at:
                    self._drop_at = None
                    if session in self._sessions:
                        self._sessions.remove(session)
                    _close(session.sock)
                    return None
                if name == "chat.post":
                    self.posts.append(args)
                    return None
                if name in ("events.clear", "events.clearAll"):
                    session.events.clear()
                    return None
                if name == "events.chat.posts":
                    reply, session.events = "|".join(session.events), []
                    return reply
                if name == "entity.getName":
                    # Like RaspberryJuice: no reply at all for an entity it does not know.
                    return self.players.get(int(args)) if args.isdigit() else "Fail"
                if name in ("world.getPlayerIds", "world.getPlayerEntityIds"):
                    online = [*self.players, *self.ghosts]
                    return "|".join(str(i) for i in online) if online else "Fail"
                return "Fail"
            finally:
                self._changed.notify_all()


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass
