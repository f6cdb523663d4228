"""Player names are personal data: logs keep a salted hash of them unless the admin asks for names.

    salt = load_salt(config.home)          # created once under $JARVIS_HOME, then always the same
    player_hash("Steve", salt)             # 16 hex digits: the same player, the same hash

The hash is an HMAC-SHA-256 of the name (case-folded: Minecraft names are case-insensitive) keyed
with a random salt that never leaves the machine, cut to 16 hex digits (64 bits). Without the salt
a hash cannot be tied to a name by hashing every known player name; with it (the admin's own
machine) one can check a given name, so deleting the salt file ends that too. Used by the question
log (jarvis/questionlog/) and the chat bridge's log lines.
"""
from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import time
from hashlib import sha256
from pathlib import Path

SALT_FILE = "player-salt"     # under $JARVIS_HOME
SALT_BYTES = 32
HASH_DIGITS = 16


class SaltError(OSError):
    """The salt file exists but cannot be used (a user error: it names the file)."""


def player_hash(name: str, salt: bytes) -> str:
    """A player's name as a salted hash: 16 hex digits, the same for the same name and salt."""
    digest = hmac.new(salt, " ".join(name.split()).casefold().encode("utf-8"), sha256).hexdigest()
    return digest[:HASH_DIGITS]


def load_salt(home: str | os.PathLike) -> bytes:
    """The installation's salt, created (random, readable by its owner only) on first use.

    Safe when several processes start at once: the file is written whole under a temporary name
    and linked into place only if no other process got there first.
    """
    path = Path(home) / SALT_FILE
    for _ in range(50):
        salt = _read_salt(path)
        if salt is not None:
            return salt
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{SALT_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(secrets.token_hex(SALT_BYTES) + "\n")
            with contextlib.suppress(FileExistsError):
                os.link(tmp, path)          # atomic: fails if another process made it first
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
        time.sleep(0.01)
    raise SaltError(f"cannot create the player-name salt {path}")


def _read_salt(path: Path) -> bytes | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SaltError(f"cannot read the player-name salt {path} ({exc}); delete it to make a new one") from None
    try:
        salt = bytes.fromhex(text)
    except ValueError:
        salt = b""
    if len(salt) < 16:
        raise SaltError(f"the player-name salt {path} is damaged; delete it to make a new one "
                        "(hashes logged before will no longer match new ones)")
    return salt
