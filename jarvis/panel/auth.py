"""Who may use the desk: the token, the browser's session, CSRF tokens and the login limit.

- The token (``JARVIS_PANEL_TOKEN``) is kept only as its SHA-256; a given token is hashed and compared in
  constant time (``hmac.compare_digest``). It is never logged, never put in a cookie, never written.
- A script sends it as ``Authorization: Bearer <token>``. A browser types it once in the login form and gets
  a session cookie (Flask's signed cookie, HttpOnly, SameSite=Strict, Secure behind TLS) that holds only
  "logged in", the login time and a random CSRF token; the signing key is random per start of the panel.
- Every form carries the session's CSRF token; a POST without it (or with another) is refused.
- Failed logins and wrong bearer tokens are counted per client; past ``attempts`` in ``window`` seconds the
  client gets 429 until the window has passed (a guess a second is far too slow for a 16+ character token).
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import defaultdict, deque

from jarvis.errors import JarvisError


class PanelTokenError(JarvisError):
    """No usable token: the panel does not start."""


def token_digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


class TokenGate:
    """Checks a given token against the panel's (of which it keeps only the hash)."""

    def __init__(self, token: str, min_length: int = 16) -> None:
        if not token:
            raise PanelTokenError("no token: set JARVIS_PANEL_TOKEN (at least "
                                  f"{min_length} characters, e.g. `python3 -c 'import secrets; "
                                  "print(secrets.token_urlsafe(24))'`); the panel never starts without one")
        if len(token) < min_length:
            raise PanelTokenError(f"JARVIS_PANEL_TOKEN is too short ({len(token)} characters; at least {min_length})")
        self._digest = token_digest(token)

    def __repr__(self) -> str:
        return "TokenGate(<hidden>)"

    def accepts(self, given: str | None) -> bool:
        if not given:
            return False
        return hmac.compare_digest(token_digest(given), self._digest)


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, else None."""
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return value.strip() or None


def new_csrf_token() -> str:
    return secrets.token_urlsafe(32)


def same_token(given: str | None, expected: str | None) -> bool:
    return bool(given) and bool(expected) and hmac.compare_digest(given.encode(), expected.encode())


class LoginLimiter:
    """Failed attempts per client in a sliding window. Thread-safe (waitress serves on several threads)."""

    def __init__(self, attempts: int, window: float, clock=time.monotonic) -> None:
        self.attempts, self.window, self._clock = attempts, window, clock
        self._failures: dict[str, deque] = defaultdict(deque)
        self._lock = threading.Lock()

    def _trim(self, client: str, now: float) -> deque:
        failures = self._failures[client]
        while failures and failures[0] <= now - self.window:
            failures.popleft()
        return failures

    def retry_after(self, client: str) -> float:
        """Seconds until the client may try again (0: it may now)."""
        with self._lock:
            now = self._clock()
            failures = self._trim(client, now)
            if len(failures) < self.attempts:
                return 0.0
            return max(0.0, failures[0] + self.window - now)

    def failed(self, client: str) -> None:
        with self._lock:
            now = self._clock()
            self._trim(client, now).append(now)
            if len(self._failures) > 10_000:      # bound the memory a flood of addresses can take
                for key in [k for k, v in self._failures.items() if not v]:
                    del self._failures[key]

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._failures.pop(client, None)
