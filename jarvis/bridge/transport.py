"""The transport: how the bridge reaches the game server, written down.

Two interfaces. A :class:`TransportKind` is what the bridge knows of a transport, declared by its module: its
name, its settings' type and table, how wide its lines are and how many an answer may take (``style``), how it
whispers (``whisper_to``, ``whisper_overhead``), what its settings must be (``check``), whether its server can
be reached (``check_reachable``) and how to open a connection (``connect``). jarvis/bridge/transports.py
holds the registry and picks one; a :class:`TransportChoice` is a kind with its settings, checked once by
``choose``. A :class:`Transport` is one open connection. Two kinds ship:

- :data:`jarvis.bridge.connection.PLUGIN_API` (``api``), connections :class:`~jarvis.bridge.connection.ChatClient`:
  the RaspberryJuice plugin API (three dialects, 2.x's auth token); it can only broadcast;
- :data:`jarvis.bridge.player.PLAYER_BOT` (``bot``), connections :class:`~jarvis.bridge.player.PlayerBot`: Jarvis
  joins the server as a player (a mineflayer client process); it reads whispers and answers by whisper.

Adding a transport is one module (its kind, its connection) and one line in the registry; tests/relay_transport.py
is one.

The bridge's poller is a transport's only user, from one thread. A :data:`Connector` opens one
(OSError when it cannot: retried with backoff), ``start_session()`` forgets the chat posted before,
and then each poll is one ``exchange(lines)``: the lines go out, the chat said since the last poll
comes back, and the lines the server took are marked ``delivered`` (the others are sent again
after a reconnection: at least once).

The errors, typed so that nobody has to read a message to tell them apart:

- :class:`ConnectionLost` (an OSError kind): the connection is gone; the bridge reconnects.
- :class:`PollFailed`: the server answered the poll ``Fail``; the chat stays queued there.
- :class:`BridgeError` (a user error) and its kinds: :class:`SettingError` (which setting, what is
  wrong), :class:`ServerUnreachable` (which server, how many attempts), :class:`AuthRefused` (was
  a token given), :class:`BotError` (the player bot cannot run here). None of them is an OSError,
  so none is retried. They carry data; jarvis/cli/play.py words them with its flag names.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol, Sequence

from jarvis.errors import JarvisError

if TYPE_CHECKING:
    from jarvis.bridge.chat import Question, ReplyStyle
    from jarvis.bridge.wire import ChatPost
    from jarvis.config import BridgeSettings

STOP_SLICE = 0.1                        # seconds between looks at a StopFlag while waiting


class StopFlag:
    """A request to stop that a signal handler may make: a plain attribute, no lock.

    threading.Event.set() takes the event's lock; a SIGTERM that lands while the main thread holds
    that lock (inside wait() or clear()) would deadlock in the handler and `jarvis serve` would never
    stop. Setting an attribute is atomic; waiting polls in short sleeps, which signals interrupt.
    """

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set

    def wait(self, timeout: float) -> bool:
        """True as soon as it is set; False after ``timeout`` seconds."""
        end = time.monotonic() + timeout
        while not self._set:
            left = end - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(left, STOP_SLICE))
        return True


@dataclass
class WireStats:
    """What the server did that a naive client would not survive; kept across reconnections."""

    fails: int = 0              # `Fail` replies (to polls, names, acknowledgements)
    strays: int = 0             # reply lines that belonged to no command (ignored)
    garbage: int = 0            # replies that were not in the expected format
    stalls: int = 0             # replies that took longer than slow_after
    longest_stall_s: float = 0.0
    kicks: int = 0              # the player bot kicked off the server (spam_kicks: for spamming)
    spam_kicks: int = 0
    refused_lines: int = 0      # lines the player bot's client refused to send (none, unless a bug)


@dataclass
class OutLine:
    """A chat line waiting to be posted (or posted, waiting for confirmation)."""

    text: str
    question: Question | None = None   # the question answered, on every line of an answer
    last: bool = False                 # the last line of an answer
    sent_at: float = 0.0
    to: str | None = None              # whispered to this player (player bot); None: public
    delivered: bool = False            # the transport says the server took it


@dataclass(frozen=True)
class Endpoint:
    """Where a transport connects, as an error or a log line names it."""

    host: str
    port: int
    transport: str              # the kind's name: "api", "bot"
    what: str                   # "the Minecraft server's chat API", "the game server"
    hint: str                   # what to check when it cannot be reached
    label: str = ""             # how `jarvis serve` names the transport ("the plugin API"); "": its name


class Transport(Protocol):
    """One connection to the game server, as the bridge's poller uses it (see the module doc)."""

    @property
    def dialect(self) -> str | None:
        """What the server speaks, for the log: the API dialect learned or set ("upstream", "fork", "v2"), "bot"
        for the player bot."""

    def start_session(self) -> None:
        """Forget the chat posted before now (and, for the API, learn the dialect). AuthRefused when
        the server refuses us; ConnectionLost when the connection dies."""

    def exchange(self, lines: Sequence[OutLine]) -> list[ChatPost]:
        """Send ``lines``, read the chat said since the last call; mark the lines the server took as
        ``delivered``. ConnectionLost when the connection is gone; PollFailed when the server
        answered the poll ``Fail`` (the lines were delivered, the chat stays queued there)."""

    def player_name(self, entity_id: int) -> str | None:
        """The name of the player behind a post's entity id; None when the server does not say."""

    def retune(self, bridge: BridgeSettings, settings) -> None:
        """Settings reloaded (SIGHUP): the bridge's and the transport's own (its kind's settings type); each
        transport takes up what it uses, without reconnecting."""

    def close(self) -> None:
        """End the connection (never raises)."""


Connector = Callable[[], Transport]   # opens a new connection; OSError when it cannot (retried)


@dataclass
class ConnectContext:
    """What the bridge gives a kind's ``connect``: its counters and stop flag, a folder for what outlives a run
    (the player bot's Microsoft sign-in), and ``kept``, what a transport keeps across its reconnections in one
    run (the player bot's tab list)."""

    stats: WireStats
    stopping: StopFlag
    home: Path = Path(".")
    kept: dict = field(default_factory=dict)


class TransportKind(Protocol):
    """What the bridge knows of a transport (see the module doc). ``settings`` below are of ``settings_type``;
    ``bridge`` the bridge's own (jarvis.config.BridgeSettings)."""

    name: str                      # the registry's key: "api", "bot"
    settings_type: type            # its settings (BridgeSettings for the plugin API, whose table it shares)
    section: str                   # the settings file's table of them ("bridge", "bot")
    reloadable: tuple[str, ...]    # which of them SIGHUP may change without a reconnection

    def asked_for(self, settings) -> bool:
        """Whether these settings ask for this transport (the registry picks the one asked for)."""

    def check(self, settings) -> None:
        """SettingError (or another BridgeError) for settings that can never work; no I/O."""

    def describe(self, bridge: BridgeSettings, settings) -> str:
        """Where it would join, in one phrase ("the plugin API at localhost:4711 (auto)")."""

    def endpoint(self, bridge: BridgeSettings, settings) -> Endpoint:
        """Where it connects, as errors and log lines name it."""

    def check_reachable(self, bridge: BridgeSettings, settings) -> None:
        """BridgeError unless its server can be reached now (before a reader is loaded for nothing)."""

    def style(self, bridge: BridgeSettings, settings) -> ReplyStyle:
        """How its lines look: their prefix, how wide they are, how many an answer may take."""

    def whisper_to(self, settings, question: Question) -> str | None:
        """Whom the reply to ``question`` is whispered to; None: said in public (the asker named in it)."""

    def whisper_overhead(self, settings, player: str) -> int:
        """Characters a whisper to ``player`` takes from a line (its command)."""

    def connect(self, bridge: BridgeSettings, settings, context: ConnectContext) -> Transport:
        """A new connection; OSError when it cannot be made now (retried with backoff)."""


@dataclass(frozen=True)
class TransportChoice:
    """A transport kind with its settings (made by ``choose``, which checks them)."""

    kind: TransportKind
    settings: object

    @property
    def name(self) -> str:
        return self.kind.name


def choose(kind: TransportKind, settings) -> TransportChoice:
    """``kind`` with ``settings``, checked: once per start (and once per reload), by whoever chooses."""
    if not isinstance(settings, kind.settings_type):
        raise TypeError(f"the {kind.name} transport takes {kind.settings_type.__name__}, not {type(settings).__name__}")
    kind.check(settings)
    return TransportChoice(kind, settings)


class PollFailed(Exception):
    """The server answered a poll ``Fail`` (the command threw on its side); survived."""


class ConnectionLost(ConnectionError):
    """The server closed the connection (or, with ``dead_after`` set, sent nothing for that long)."""


class ReplyTimeout(ConnectionLost):
    """No reply within the time allowed (``dead_after``, or the deadline of a last flush)."""


class BridgeError(JarvisError):
    """The bridge cannot run as set up: a user error (one line, no traceback). Its message names a setting
    at fault as the settings file does ("[bridge] mc_port: ...", "the mc_token setting"); ``setting`` says
    which, as data, for a front end that has words of its own for it."""

    def worded(self, name=str, remedies=None) -> str:   # noqa: ARG002 - the message is whole as it is
        return self.what


class SettingError(BridgeError):
    """A setting that cannot work: ``[section] setting: problem``."""

    def __init__(self, section: str, setting: str, problem: str) -> None:
        super().__init__(f"[{section}] {setting}: {problem}")
        self.section = section
        self.setting = setting
        self.problem = problem


class ServerUnreachable(BridgeError):
    """The server could not be reached in ``attempts`` tries (at start-up)."""

    def __init__(self, endpoint: Endpoint, attempts: int, cause: OSError) -> None:
        super().__init__(f"cannot reach {endpoint.what} at {endpoint.host}:{endpoint.port} after {attempts} "
                         f"attempt(s): {cause} ({endpoint.hint})")
        self.endpoint = endpoint
        self.attempts = attempts
        self.cause = cause


class AuthRefused(BridgeError):
    """RaspberryJuice 2.x refused the session: the token is wrong (``token_given``), or one is needed
    and none was given. Never retried: another try would only bring the plugin's lockout nearer."""

    def __init__(self, token_given: bool) -> None:
        if token_given:
            message = ("the server refused the API token (the mc_token setting): it must equal auth-token in "
                       "the RaspberryJuice plugin's config.yml")
        else:
            message = ("the server's RaspberryJuice 2.x asks for an API token: set the mc_token setting to the "
                       "auth-token in the plugin's config.yml")
        super().__init__(message)
        self.setting = "mc_token"
        self.token_given = token_given


class BotError(BridgeError):
    """The player bot cannot run here at all (no Node.js, mineflayer not installed, a game version its
    client does not speak): not retried."""
