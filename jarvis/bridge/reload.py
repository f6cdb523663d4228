"""Reloading (SIGHUP): the settings file read again, applied where that needs no reconnection.

What SIGHUP may change is :data:`RELOADABLE`; any other change (the server's address, the
dialect, the token, the bot's account, the transport itself, and what the caller reports: the
reader, the index, the question log) is logged as needing a restart and left as it is. Settings
that do not load, or that could not work, are refused whole (``event=reload_failed``) and the
settings in use stay. The signal handler only asks (:meth:`ReloadRequest.ask`, no lock); the
poller reloads at its next turn.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, fields, replace
from typing import Callable, TypeVar

from jarvis.bridge.connection import check_token
from jarvis.bridge.events import log_event
from jarvis.bridge.player import check_bot
from jarvis.config import BotSettings, BridgeSettings
from jarvis.errors import JarvisError, first_line

# What SIGHUP may change without a reconnection; anything else is logged as needing a restart.
RELOADABLE = {
    "bridge": ("poll_interval", "queue_size", "per_player_rate", "max_line", "max_reply_lines", "slow_after",
               "dead_after", "reconnect_min_delay", "reconnect_max_delay", "io_timeout"),
    "bot": ("reply", "whisper_command", "max_message", "max_messages", "messages_per_second", "burst",
            "public_patterns", "whisper_patterns", "join_timeout"),
}


@dataclass(frozen=True)
class Fresh:
    """The settings as the file now says."""

    bridge: BridgeSettings
    bot: BotSettings | None                   # None: no player bot (the plugin API)
    others: tuple[str, ...] = ()              # other settings that changed (reader, index, ...): need a restart


# Reads the settings file again: Fresh, JarvisError when it no longer loads, ReloadSkipped when there is none.
Reloader = Callable[[], Fresh]


class ReloadSkipped(JarvisError):
    """There is nothing to reload (the message says why: serve was started without a settings file)."""


class ReloadRequest:
    """A reload asked for by a signal handler: a plain attribute, no lock (see transport.StopFlag)."""

    def __init__(self) -> None:
        self._asked = False

    def ask(self) -> None:
        self._asked = True

    def asked(self) -> bool:
        return self._asked

    def take(self) -> bool:
        """True once per request."""
        asked, self._asked = self._asked, False
        return asked


@dataclass(frozen=True)
class Reloaded:
    """The settings to run with now, and what changed."""

    bridge: BridgeSettings
    bot: BotSettings | None
    changed: list[str]


def reload_settings(bridge: BridgeSettings, bot: BotSettings | None, source: Reloader | None) -> Reloaded | None:
    """The settings in use with the reloadable changes ``source`` brings applied; None when nothing was
    applied (no source, or the new settings refused). Logs what changed and what needs a restart."""
    if source is None:
        log_event("reload_skipped", logging.WARNING, why="no settings file to read")
        return None
    try:
        fresh = source()
        check_token(fresh.bridge.mc_token)
        if fresh.bot is not None:
            check_bot(fresh.bot)
    except ReloadSkipped as exc:
        log_event("reload_skipped", logging.WARNING, why=first_line(exc))
        return None
    except JarvisError as exc:
        log_event("reload_failed", logging.ERROR, error=first_line(exc), kept="the settings in use")
        return None
    changed, restart = [], list(fresh.others)
    new_bridge = _apply("bridge", bridge, fresh.bridge, changed, restart)
    new_bot = bot
    if (bot is None) != (fresh.bot is None):
        restart.append("bot (the transport)")
    elif bot is not None and fresh.bot is not None:
        new_bot = _apply("bot", bot, fresh.bot, changed, restart)
    log_event("reloaded", changed=changed)
    if restart:
        log_event("reload_needs_restart", logging.WARNING, settings=restart)
    return Reloaded(new_bridge, new_bot, changed)


Settings = TypeVar("Settings", BridgeSettings, BotSettings)


def _apply(section: str, old: Settings, new: Settings, changed: list[str], restart: list[str]) -> Settings:
    """``old`` with the reloadable changes of ``new``; each change named in ``changed`` or ``restart``."""
    result = old
    for field in fields(old):
        value = getattr(new, field.name)
        if getattr(old, field.name) == value:
            continue
        if field.name in RELOADABLE[section]:
            result = replace(result, **{field.name: value})
            changed.append(f"{section}.{field.name}")
        else:
            restart.append(f"{section}.{field.name}")
    return result
