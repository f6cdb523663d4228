"""A third transport, written the way a new one is added: this one module and one registry line.

A chat relay (the shape of a Discord channel that relays the same questions): Jarvis connects to it over TCP
and speaks JSON lines. The relay sends what players say, ``{"from": "Steve", "text": "jarvis, ...", "dm":
false}`` (``dm``: a direct message to Jarvis), and takes Jarvis's messages, ``{"to": null | "Steve", "text":
"..."}`` (``to``: a direct message back). A message is at most ``max_line`` characters and an answer at most
``max_lines`` messages; a direct message costs no characters (no command to put before it); a line counts as
delivered once the relay has taken it (it acknowledges each message with ``{"ack": n}``).

``RELAY`` is the transport's kind (jarvis.bridge.transport.TransportKind); ``RelayServer`` is the relay, run on
127.0.0.1 by the tests. The registry line, in a test: ``monkeypatch.setitem(TRANSPORTS, RELAY.name, RELAY)``
(in the product: one more entry in jarvis/bridge/transports.py).
"""
from __future__ import annotations

import json
import select
import socket
import threading
import time
from dataclasses import dataclass
from typing import Sequence

from jarvis.bridge.chat import Question, ReplyStyle
from jarvis.bridge.reconnect import connect_with_retries
from jarvis.bridge.transport import ConnectContext, ConnectionLost, Endpoint, OutLine, SettingError, Transport
from jarvis.bridge.wire import ChatPost, chat_safe
from jarvis.config import BridgeSettings


@dataclass(frozen=True)
class RelaySettings:
    host: str = ""              # "" = no relay (the registry picks another transport)
    port: int = 0
    max_line: int = 120         # characters a message
    max_lines: int = 3          # messages an answer


class RelayTransport:
    """One connection to the relay (jarvis.bridge.transport.Transport)."""

    dialect = "relay"

    def __init__(self, sock: socket.socket, settings: RelaySettings) -> None:
        self.socket = sock
        self.settings = settings
        self._buffer = b""
        self._sent = 0
        self._unacknowledged: dict[int, OutLine] = {}

    def start_session(self) -> None:
        """Nothing to forget: the relay sends only what is said after Jarvis joined."""

    def exchange(self, lines: Sequence[OutLine]) -> list[ChatPost]:
        for line in lines:
            self._sent += 1
            self._unacknowledged[self._sent] = line
            self._send({"n": self._sent, "to": line.to, "text": chat_safe(line.text)[:self.settings.max_line]})
        posts = []
        for event in self._events():
            if "ack" in event:
                acknowledged = self._unacknowledged.pop(event["ack"], None)
                if acknowledged is not None:
                    acknowledged.delivered = True
            elif event.get("from"):
                posts.append(ChatPost(-1, str(event.get("text", "")), player=str(event["from"]),
                                      private=bool(event.get("dm"))))
        return posts

    def player_name(self, entity_id: int) -> str | None:  # noqa: ARG002 - every post names its player
        return None

    def retune(self, bridge: BridgeSettings, settings: RelaySettings) -> None:  # noqa: ARG002 - the relay's own
        self.settings = settings

    def close(self) -> None:
        try:
            self.socket.close()
        except OSError:
            pass

    def _send(self, message: dict) -> None:
        try:
            self.socket.sendall((json.dumps(message) + "\n").encode("utf-8"))
        except OSError as exc:
            raise ConnectionLost(f"the relay is gone: {exc}") from exc

    def _events(self) -> list[dict]:
        while select.select([self.socket], [], [], 0.05)[0]:
            try:
                data = self.socket.recv(65536)
            except OSError as exc:
                raise ConnectionLost(f"the relay is gone: {exc}") from exc
            if not data:
                raise ConnectionLost("the relay closed the connection")
            self._buffer += data
        *complete, self._buffer = self._buffer.split(b"\n")
        return [json.loads(line) for line in complete if line.strip()]


class Relay:
    """The relay's kind: everything the bridge knows of this transport."""

    name = "relay"
    settings_type = RelaySettings
    section = "relay"
    reloadable = ("max_line", "max_lines")

    def asked_for(self, settings: RelaySettings | None) -> bool:
        return settings is not None and bool(settings.host)

    def check(self, settings: RelaySettings) -> None:
        if not 20 <= settings.max_line <= 2000:
            raise SettingError("relay", "max_line", f"{settings.max_line} is not within 20-2000")

    def describe(self, bridge: BridgeSettings, settings: RelaySettings) -> str:  # noqa: ARG002
        return f"the relay at {settings.host}:{settings.port}"

    def endpoint(self, bridge: BridgeSettings, settings: RelaySettings) -> Endpoint:  # noqa: ARG002
        return Endpoint(settings.host, settings.port, self.name, "the relay", "is the relay running?")

    def check_reachable(self, bridge: BridgeSettings, settings: RelaySettings) -> None:
        connect_with_retries(bridge, lambda: socket.create_connection((settings.host, settings.port),
                                                                      timeout=bridge.io_timeout),
                             self.endpoint(bridge, settings)).close()

    def style(self, bridge: BridgeSettings, settings: RelaySettings) -> ReplyStyle:  # noqa: ARG002
        return ReplyStyle("", settings.max_line, settings.max_lines)

    def whisper_to(self, settings: RelaySettings, question: Question) -> str | None:  # noqa: ARG002
        return question.player if question.private else None

    def whisper_overhead(self, settings: RelaySettings, player: str) -> int:  # noqa: ARG002 - a DM has no command
        return 0

    def connect(self, bridge: BridgeSettings, settings: RelaySettings, context: ConnectContext) -> Transport:  # noqa: ARG002
        return RelayTransport(socket.create_connection((settings.host, settings.port), timeout=bridge.io_timeout),
                              settings)


RELAY = Relay()


class RelayServer:
    """The relay on 127.0.0.1: ``say`` what a player says (``dm=True``: to Jarvis alone), ``posts`` what Jarvis
    said, as ``(to, text)``."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.posts: list[tuple[str | None, str]] = []
        self._clients: list[socket.socket] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def say(self, player: str, text: str, dm: bool = False) -> None:
        assert self.wait_for(lambda: self._clients), "Jarvis never joined the relay"
        with self._lock:
            for client in list(self._clients):
                try:
                    client.sendall((json.dumps({"from": player, "text": text, "dm": dm}) + "\n").encode("utf-8"))
                except OSError:   # a connection that is gone (a reachability check, a dropped one)
                    self._clients.remove(client)

    def wait_for(self, condition, timeout: float = 20.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if condition():
                return True
            time.sleep(0.02)
        return False

    def _accept(self) -> None:
        self.listener.settimeout(0.2)
        while not self._stop.is_set():
            try:
                client, _ = self.listener.accept()
            except (TimeoutError, OSError):
                continue
            with self._lock:
                self._clients.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        buffer = b""
        while not self._stop.is_set():
            try:
                data = client.recv(65536)
            except OSError:
                data = b""
            if not data:
                with self._lock:
                    if client in self._clients:
                        self._clients.remove(client)
                return
            buffer += data
            *complete, buffer = buffer.split(b"\n")
            for line in complete:
                message = json.loads(line)
                with self._lock:
                    self.posts.append((message["to"], message["text"]))
                    client.sendall((json.dumps({"ack": message["n"]}) + "\n").encode("utf-8"))

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            for client in self._clients:
                client.close()
        self.listener.close()

    def __enter__(self) -> "RelayServer":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
