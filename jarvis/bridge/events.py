"""What the bridge tells its log: one line an event, the counts, and how players are named there.

Every event is one line, ``event=<name> key=value ...`` (strings JSON-quoted: wire.format_event);
players are named by a salted hash (jarvis/privacy.py) unless the admin asks for names
(``[log] player_names``). :class:`BridgeStats` is what ``event=stopped`` counts.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from jarvis.bridge.transport import WireStats
from jarvis.logs import format_event
from jarvis.privacy import player_hash

log = logging.getLogger("jarvis.bridge")   # the bridge's own events, whichever module notes them


@dataclass
class BridgeStats(WireStats):
    polls: int = 0
    failed_polls: int = 0       # polls answered Fail (survived: the chat is read by the next poll)
    errors: int = 0             # unexpected errors in the poller (logged with a traceback, survived)
    questions: int = 0          # messages addressed to Jarvis
    accepted: int = 0           # queued for an answer
    refused: int = 0            # turned away with a notice (rate limit or queue full)
    answered: int = 0           # answers delivered (confirmed by the server)
    lines_sent: int = 0         # chat lines delivered
    max_waiting: int = 0        # the most questions ever waiting in the queue
    disconnects: int = 0
    reconnects: int = 0
    reloads: int = 0            # settings reloaded (SIGHUP)


def log_event(event: str, level: int = logging.INFO, **fields: object) -> None:
    """One log line for ``event`` (see the module doc)."""
    if log.isEnabledFor(level):
        log.log(level, format_event(event, **fields))


@dataclass(frozen=True)
class PlayerNames:
    """A player as log lines name them: a salted hash unless the admin asked for names."""

    salt: bytes = b""
    plain: bool = False

    def __call__(self, name: str | None) -> str | None:
        if name is None or self.plain:
            return name
        return player_hash(name, self.salt)
