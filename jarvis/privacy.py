"""Player names out of the logs: a salted hash names a player without saying who.

    salt = load_salt(config.home)          # $JARVIS_HOME/player-salt, made once (random, 32 bytes)
    player_hash("Steve", salt)             # 'p-3f9c0a1b2c4d5e6f': the same player, the same hash

The salt stays on the machine that runs Jarvis, so a log shared for a bug report cannot be
turned back into names by hashing a list of known players. Every log line and record that
names a player (the chat bridge's events, the question log) uses this one helper, so one
player has one hash everywhere on a server.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

SALT_FILE = "player-salt"
SALT_BYTES = 32
HASH_CHARS = 16


def player_hash(name: str, salt: bytes) -> str:
    """A stable pseudonym for ``name`` (HMAC-SHA256 with ``salt``): ``p-`` and 16 hex characters."""
    digest = hmac.new(salt, name.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
    return "p-" + digest[:HASH_CHARS]


def load_salt(home: Path) -> bytes:
    """The salt kept in ``home`` (Jarvis's home, ``$JARVIS_HOME``); made at first use, readable by its owner only."""
    path = Path(home) / SALT_FILE
    try:
        salt = path.read_bytes()
        if len(salt) >= 16:
            return salt
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    salt = secrets.token_bytes(SALT_BYTES)
    # Written beside, then renamed: two processes starting at once both end up with one salt file.
    tmp = path.with_name(f"{SALT_FILE}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(salt)
    try:
        os.link(tmp, path)           # fails if another process made it first: use theirs
    except FileExistsError:
        salt = path.read_bytes()
    finally:
        tmp.unlink(missing_ok=True)
    return salt
