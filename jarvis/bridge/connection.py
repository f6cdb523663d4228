"""The connection to the server's Minecraft Pi / RaspberryJuice API, made safe for a long-running bot.

``mcpi`` is used where it works: its ``Connection.send`` formats commands (``name(args)\\n``,
UTF-8) and its ``Minecraft`` object provides the calls (``postToChat``, ``entity.getName``,
``events.clearAll``). :class:`BridgeConnection` replaces the parts of ``mcpi.connection.Connection``
that break a bot that must run for days:

- ``__init__``: mcpi connects with no timeout (an unreachable host hangs); here a timeout.
- ``drain()``: once the server closes the socket, ``select`` keeps reporting it readable and
  ``recv`` keeps returning ``b""``: mcpi's loop spins forever. Here ``b""`` or a socket error
  raises :class:`ConnectionLost`.
- ``receive()``: mcpi opens a new text-mode file per call (bytes buffered past the first line
  are lost; no timeout; the locale's encoding). Here one byte buffer, UTF-8, a deadline, and
  :class:`ConnectionLost` on end of stream or error (:class:`ReplyTimeout` on timeout).
- ``_send()``: socket errors become :class:`ConnectionLost`.
- ``events.chat.posts`` is parsed by :func:`jarvis.bridge.wire.parse_chat_posts`, not mcpi's
  ``pollChatPosts`` (which raises on a ``|`` in a message and loses the batch).

:class:`ChatClient` is the handful of calls the bridge needs, and the last place every outgoing
chat line passes through :func:`jarvis.bridge.wire.chat_safe`.
"""
from __future__ import annotations

import logging
import select
import socket
import time

from mcpi.connection import Connection, RequestError
from mcpi.minecraft import Minecraft

from jarvis.bridge.wire import ChatPost, chat_safe, parse_chat_posts
from jarvis.errors import JarvisError

log = logging.getLogger(__name__)

MAX_REPLY_BYTES = 1 << 20   # a reply line longer than this is not the protocol we speak
MAX_NAME_CHARS = 32


class BridgeError(JarvisError):
    """The Minecraft server cannot be reached (at start-up)."""


class ConnectionLost(ConnectionError):
    """The server closed the connection, or stopped answering within the timeout."""


class ReplyTimeout(ConnectionLost):
    """No reply within the timeout (the server may be hung, or may never answer this request)."""


class BridgeConnection(Connection):
    """``mcpi.connection.Connection`` with timeouts and dead-connection detection (see module doc)."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        # Not calling Connection.__init__: it connects without a timeout.
        self.socket = socket.create_connection((host, port), timeout=timeout)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timeout = timeout
        self.lastSent = b""
        self._buffer = bytearray()

    def drain(self) -> None:
        """Discard what arrived unasked (a late reply); raise ConnectionLost if the server is gone."""
        self._buffer.clear()
        while select.select([self.socket], [], [], 0.0)[0]:
            stale = self._recv()
            log.debug("discarded %d stale bytes after %r", len(stale), self.lastSent[:60])

    def _send(self, s: bytes) -> None:
        self.drain()
        self.lastSent = s
        try:
            self.socket.settimeout(self.timeout)
            self.socket.sendall(s)
        except OSError as exc:
            raise ConnectionLost(f"cannot send to the server: {exc}") from exc

    def receive(self) -> str:
        """The next reply line (without its newline); RequestError when the server says Fail."""
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ReplyTimeout(f"no reply from the server within {self.timeout:g} s")
            self.socket.settimeout(remaining)
            self._buffer += self._recv()
            if len(self._buffer) > MAX_REPLY_BYTES:
                raise ConnectionLost("the server sent a reply line longer than 1 MiB")
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer = bytearray(rest)
        reply = line.decode("utf-8", errors="replace").rstrip("\r")
        if reply == Connection.RequestFailed:
            raise RequestError(f"{self.lastSent.strip()!r} failed")
        return reply

    def _recv(self) -> bytes:
        try:
            data = self.socket.recv(65536)
        except socket.timeout as exc:
            raise ReplyTimeout(f"no reply from the server within {self.timeout:g} s") from exc
        except OSError as exc:
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
    """The API calls the bridge makes, on one :class:`BridgeConnection`."""

    def __init__(self, connection: BridgeConnection) -> None:
        self.connection = connection
        self.mc = Minecraft(connection)

    @classmethod
    def connect(cls, host: str, port: int, timeout: float) -> "ChatClient":
        """Open a connection; raises OSError (ConnectionRefusedError, timeout, ...) when it cannot."""
        return cls(BridgeConnection(host, port, timeout))

    def post(self, line: str) -> None:
        """Post one chat line (sanitized again here: nothing unsanitized ever reaches the socket)."""
        self.mc.postToChat(chat_safe(line))

    def poll_chat(self) -> list[ChatPost]:
        """Chat posted since the last poll."""
        return parse_chat_posts(self.connection.sendReceive(b"events.chat.posts"))

    def player_name(self, entity_id: int) -> str | None:
        """The player's name; None when the entity is not an online player.

        RaspberryJuice sends no reply at all to ``entity.getName`` for an unknown entity (a
        player who left since chatting), so only online players are asked about, and a
        timeout on this one request means "unknown", not a dead connection.
        """
        if entity_id not in self.player_ids():
            return None
        try:
            name = self.mc.entity.getName(entity_id)
        except RequestError:
            return None
        except ReplyTimeout:
            log.info("no name for entity %d (the player left?)", entity_id)
            return None
        return chat_safe(name)[:MAX_NAME_CHARS] or None

    def player_ids(self) -> set[int]:
        """Entity ids of the players online (RaspberryJuice answers Fail when there are none)."""
        try:
            reply = self.connection.sendReceive(b"world.getPlayerIds")
        except RequestError:
            return set()
        return {int(part) for part in reply.split("|") if part.isascii() and part.isdigit()}

    def clear_events(self) -> None:
        """Forget chat posted before now (mcpi sends ``events.clear``)."""
        self.mc.events.clearAll()

    def close(self) -> None:
        self.connection.close()
