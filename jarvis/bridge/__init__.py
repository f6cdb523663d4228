"""The in-game chat bridge: Minecraft chat in, Jarvis's answers out.

    from jarvis.bridge import serve
    serve(BridgeSettings(mc_host="localhost", mc_port=4711), jarvis)   # until SIGINT/SIGTERM

Modules, outermost first:
- service.py: ``Bridge`` (poller thread + bounded queue + worker; reconnects) and ``serve``;
- chat.py: the chat contract (which messages are questions, how replies look);
- connection.py: the API connection (mcpi, with its broken parts replaced) and ``ChatClient``;
- wire.py: parsing chat events and the one sanitizer for everything sent.
"""
from jarvis.bridge.chat import PREFIX, addressed_question, answer_lines, reply_lines
from jarvis.bridge.connection import BridgeConnection, BridgeError, ChatClient, ConnectionLost
from jarvis.bridge.service import Bridge, BridgeStats, Question, check_server, connect_with_retries, format_event, serve
from jarvis.bridge.wire import ChatPost, chat_safe, parse_chat_posts

__all__ = [
    "PREFIX", "Bridge", "BridgeConnection", "BridgeError", "BridgeStats", "ChatClient", "ChatPost",
    "ConnectionLost", "Question", "addressed_question", "answer_lines", "chat_safe", "check_server",
    "connect_with_retries", "format_event",
    "parse_chat_posts", "reply_lines", "serve",
]
