"""Reloading (SIGHUP): the settings file read again, applied where that needs no reconnection.

What SIGHUP may change is :data:`RELOADABLE` of the bridge's own settings and the transport kind's
``reloadable`` of its own; any other change (the server's address, the dialect, the token, the bot's
account, the transport itself, and what the caller reports: the reader, the index, the question log)
is logged as needing a restart and left as it is. Settings
that do not load, or that could not work, are refused whole (``event=reload_failed``) and the
settings in use stay. The signal handler only asks (:meth:`ReloadRequest.ask`, no lock); the
poller reloads at its next turn.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, fields, replace
from typing import Callable, TypeVar

from jarvis.bridge.events import log_event
from jarvis.bridge.transport import TransportChoice
from jarvis.config import BridgeSettings
from jarvis.errors import JarvisError, first_line

# What SIGHUP may change of the bridge's own settings without a reconnection; a transport's kind names its own
# (TransportKind.reloadable). Anything else is logged as needing a restart.
RELOADABLE = ("poll_interval", "queue_size", "per_player_rate", "reconnect_min_delay", "reconnect_max_delay",
              "io_timeout")


@dataclass(frozen=True)
class Fresh:
    """The settings as the file now says: the bridge's, and the transport they ask for (checked when chosen,
    jarvis.bridge.transports.pick)."""

    bridge: BridgeSettings
    transport: TransportChoice
    others: tuple[str, ...] = ()              # other settings that changed (reader, index, ...): need a restart


# Reads the settings file again: Fresh, JarvisError when it no longer loads (or its settings cannot work),
# ReloadSkipped when there is none.
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
    transport: TransportChoice
    changed: list[str]


def reload_settings(bridge: BridgeSettings, transport: TransportChoice, source: Reloader | None) -> Reloaded | None:
    """The settings in use with the reloadable changes ``source`` brings applied; None when nothing was
    applied (no source, or the new settings refused). Logs what changed and what needs a restart."""
    if source is None:
        log_event("reload_skipped", logging.WARNING, why="no settings file to read")
        return None
    try:
        fresh = source()
    except ReloadSkipped as exc:
        log_event("reload_skipped", logging.WARNING, why=first_line(exc))
        return None
    except JarvisError as exc:
        log_event("reload_failed", logging.ERROR, error=first_line(exc), kept="the settings in use")
        return None
    changed, restart = [], list(fresh.others)
    kind = transport.kind
    shares_the_table = kind.section == "bridge"    # the plugin API's settings are the bridge's own
    new_bridge = _apply("bridge", bridge, fresh.bridge, RELOADABLE + (kind.reloadable if shares_the_table else ()),
                        changed, restart)
    if fresh.transport.name != transport.name:
        restart.append(f"the transport ({transport.name} -> {fresh.transport.name})")
        new_transport = transport if not shares_the_table else TransportChoice(kind, new_bridge)
    elif shares_the_table:
        new_transport = TransportChoice(kind, new_bridge)
    else:   # each field comes from settings checked once, in use or fresh: no check again
        new_transport = TransportChoice(kind, _apply(kind.section, transport.settings, fresh.transport.settings,
                                                     kind.reloadable, changed, restart))
    log_event("reloaded", changed=changed)
    if restart:
        log_event("reload_needs_restart", logging.WARNING, settings=restart)
    return Reloaded(new_bridge, new_transport, changed)


Settings = TypeVar("Settings")


def _apply(section: str, old: Settings, new: Settings, reloadable: tuple[str, ...], changed: list[str],
           restart: list[str]) -> Settings:
    """``old`` with the ``reloadable`` changes of ``new``; each change named in ``changed`` or ``restart``."""
    result = old
    for field in fields(old):
        value = getattr(new, field.name)
        if getattr(old, field.name) == value:
            continue
        if field.name in reloadable:
            result = replace(result, **{field.name: value})
            changed.append(f"{section}.{field.name}")
        else:
            restart.append(f"{section}.{field.name}")
    return result
