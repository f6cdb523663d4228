"""Checks before serving: fail fast, with one line, before a reader is loaded for nothing."""
from __future__ import annotations

import socket
from pathlib import Path

from jarvis.bridge.connection import ChatClient, api_endpoint, check_token
from jarvis.bridge.player import bot_endpoint, check_bot, node_client_command
from jarvis.bridge.reconnect import connect_with_retries, opened
from jarvis.config import BotSettings, BridgeSettings


def check_server(settings: BridgeSettings) -> None:
    """BridgeError when the chat API is unreachable or refuses the token: one session is started, as
    the bridge will start its own."""
    check_token(settings.mc_token)
    connect_with_retries(settings, lambda: opened(lambda: ChatClient.connect(settings)),
                         api_endpoint(settings)).close()


def check_player_bot(settings: BridgeSettings, bot: BotSettings) -> None:
    """BridgeError unless Node.js and mineflayer are installed, the settings usable, and the game port
    reachable (a TCP connection, closed at once: joining is left to the bridge)."""
    check_bot(bot)
    node_client_command(bot, Path("."))
    if bot.realm:
        return
    connect_with_retries(settings, lambda: socket.create_connection((bot.host, bot.port),
                                                                    timeout=settings.io_timeout),
                         bot_endpoint(bot)).close()
