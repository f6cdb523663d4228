"""The in-game chat bridge: Minecraft chat in, Jarvis's answers out.

    from jarvis.bridge import serve
    serve(BridgeSettings(mc_host="localhost", mc_port=4711), jarvis)   # until SIGINT/SIGTERM
    serve(BridgeSettings(), jarvis, bot=BotSettings(host="mc.example.org"))   # as a player

Modules, outermost first:
- service.py: ``Bridge`` (poller thread + bounded queue + worker; reconnects; SIGHUP reload) and ``serve``;
- chat.py: the chat contract (which messages are questions, how replies look);
- connection.py: the plugin API's connection as the real plugins behave (replies once per tick,
  ``Fail``, three dialects, 2.x's auth token, stalls) and ``ChatClient``;
- player.py: the player-bot transport (a mineflayer client process, ``playerbot/client.js``;
  which chat line is whose question; vanilla's chat rules);
- wire.py: parsing chat events (the dialects), the one sanitizer for everything sent, log lines.
"""
from jarvis.bridge.chat import PREFIX, ReplyStyle, addressed_question, answer_lines, reply_lines
from jarvis.bridge.connection import (AuthRefused, BridgeConnection, BridgeError, ChatClient, ConnectionLost, check_token,
                                     plain_player_name)
from jarvis.bridge.service import (Bridge, BridgeStats, Question, check_bot, check_player_bot, check_server,
                                  connect_with_retries, serve)
from jarvis.bridge.wire import DIALECTS, FORK, UPSTREAM, V2, ChatPost, chat_line, chat_safe, format_event, parse_chat_posts

__all__ = [
    "DIALECTS", "FORK", "UPSTREAM", "V2", "PREFIX", "AuthRefused", "Bridge", "BridgeConnection", "BridgeError", "BridgeStats", "ChatClient", "ChatPost",
    "ConnectionLost", "Question", "check_bot", "check_player_bot", "addressed_question", "answer_lines", "chat_safe", "check_server", "check_token",
    "chat_line", "connect_with_retries", "format_event", "plain_player_name",
    "parse_chat_posts", "reply_lines", "ReplyStyle", "serve",
]
