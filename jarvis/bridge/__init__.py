"""The in-game chat bridge: Minecraft chat in, Jarvis's answers out.

    from jarvis.bridge import serve
    serve(BridgeSettings(mc_host="localhost", mc_port=4711), jarvis)   # until SIGINT/SIGTERM
    serve(config.bridge, jarvis, transport=pick(config))   # the transport the settings ask for: the player bot
                                                           # when [bot] names a host, else the plugin API

``jarvis`` is anything with ``ask(question) -> answer`` (:class:`Answerer`), or a worker pool that
answers later (:class:`QueuedAnswerer`: jarvis.network.PoolClient). Modules, one job each:

- service.py: ``Bridge`` (puts the parts together, runs the poller) and ``serve`` (signals);
- transport.py: the ``TransportKind`` and ``Transport`` protocols, ``TransportChoice``, ``Connector``,
  ``OutLine`` and the typed errors; connection.py implements them for the plugin API (replies once per
  tick, ``Fail``, three dialects, 2.x's auth token, stalls), player.py for the player bot (a mineflayer
  client process, ``playerbot/client.js``; which chat line is whose question; vanilla's chat rules);
- transports.py: the registry of transports, and ``pick``, the one the settings ask for;
- dispatch.py: which post is a question, the per-player rate, the bounded queue, refusals;
- answering.py: the ``Answerer`` and ``QueuedAnswerer`` protocols and the answering thread that asks them;
- feedback.py: the question log, and "jarvis, wrong" / "jarvis thanks";
- reply_layout.py: reply layout (the transport's line style; public or whisper);
- outbox.py: lines to post, and lines posted but not confirmed yet;
- reconnect.py: connecting with backoff, reconnecting; reload.py: SIGHUP; shutdown.py: the last flush;
- events.py: log lines, ``BridgeStats``, players named by salted hashes;
- chat.py: the chat contract (which messages are questions, how replies look);
- wire.py: parsing chat events (the dialects), the one sanitizer for everything sent (log lines: jarvis/logs.py).
"""
from jarvis.bridge.answering import AnswerFunction, Answerer, QueuedAnswerer
from jarvis.bridge.chat import PREFIX, Question, ReplyStyle, addressed_question, answer_lines, reply_lines
from jarvis.bridge.connection import PLUGIN_API, BridgeConnection, ChatClient, check_token, plain_player_name
from jarvis.bridge.events import BridgeStats
from jarvis.bridge.reply_layout import ReplyLayout
from jarvis.bridge.player import PLAYER_BOT, PlayerBot, check_bot
from jarvis.bridge.reconnect import Announcer, connect_with_retries
from jarvis.bridge.reload import Fresh, Reloader, ReloadSkipped
from jarvis.bridge.service import Bridge, serve
from jarvis.bridge.transport import (AuthRefused, BotError, BridgeError, ConnectContext, ConnectionLost, Connector,
                                     Endpoint, OutLine, PollFailed, ServerUnreachable, SettingError, Transport,
                                     TransportChoice, TransportKind, choose)
from jarvis.bridge.transports import TRANSPORTS, pick
from jarvis.logs import format_event
from jarvis.bridge.wire import DIALECTS, FORK, UPSTREAM, V2, ChatPost, chat_line, chat_safe, parse_chat_posts

__all__ = [
    "DIALECTS", "FORK", "UPSTREAM", "V2", "PLAYER_BOT", "PLUGIN_API", "PREFIX", "TRANSPORTS", "Announcer", "AnswerFunction",
    "Answerer", "AuthRefused", "BotError", "Bridge", "BridgeConnection", "BridgeError", "BridgeStats", "ChatClient",
    "ChatPost", "ConnectContext", "ConnectionLost", "Connector", "Endpoint", "Fresh", "OutLine", "PlayerBot",
    "PollFailed", "QueuedAnswerer", "Question", "ReloadSkipped", "Reloader", "ReplyLayout", "ReplyStyle",
    "ServerUnreachable", "SettingError", "Transport", "TransportChoice", "TransportKind", "addressed_question",
    "answer_lines", "chat_line", "chat_safe", "check_bot", "check_token", "choose", "connect_with_retries",
    "format_event", "parse_chat_posts", "pick", "plain_player_name", "reply_lines", "serve",
]
