"""Who may use the desk: the token, the browser's session, CSRF tokens and the login limit.

- The token (``JARVIS_PANEL_TOKEN``) is kept only as its SHA-256; a given token is hashed and compared in
  constant time (``hmac.compare_digest``). It is never logged, never put in a cookie, never written.
- A script sends it as ``Authorization: Bearer <token>``. A browser types it once in the login form and gets
  a session cookie (Flask's signed cookie, HttpOnly, SameSite=Strict, Secure behind TLS) that holds only
  "logged in", the login time and a random CSRF token; the signing key is random per start of the panel.
- Every form carries the session's CSRF token; a POST without it (or with another) is refused.
- Failed logins and wrong bearer tokens are counted per client. Past ``attempts`` in ``window`` seconds, each
  further attempt of that client is held back before its token is checked: ``delay`` seconds, doubling with
  each further failure up to ``max_delay``, one attempt at a time (a second one meanwhile gets 429). Guessing
  is slowed to one guess per ``max_delay``, and the right token still gets in, after that wait: an admin who
  mistyped the token five times is never locked out.
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
    """Failed attempts per client in a sliding window, and the wait of the attempts past them (the module
    docstring). Thread-safe (waitress serves on several threads)."""

    def __init__(self, attempts: int, window: float, delay: float = 1.0, max_delay: float = 30.0,
                 max_waiting: int = 2, clock=time.monotonic) -> None:
        self.attempts, self.window, self._clock = attempts, window, clock
        self.delay, self.max_delay, self.max_waiting = delay, max_delay, max_waiting
        self._failures: dict[str, deque] = defaultdict(deque)
        self._waiting: set[str] = set()
        self._lock = threading.Lock()

    def _trim(self, client: str, now: float) -> deque:
        failures = self._failures[client]
        while failures and failures[0] <= now - self.window:
            failures.popleft()
        return failures

    def hold_back(self, client: str) -> float:
        """Seconds the client's next attempt waits before its token is checked (0: none)."""
        with self._lock:
            over = len(self._trim(client, self._clock())) - self.attempts
            return 0.0 if over < 0 else min(self.delay * 2 ** over, self.max_delay)

    def admit(self, client: str) -> float | None:
        """Take the client's next attempt: the seconds it waits before its check (``done`` afterwards), or None
        when it is refused now (429): another attempt of the client is waiting, or too many clients' are."""
        wait = self.hold_back(client)
        if not wait:
            return 0.0
        with self._lock:
            if client in self._waiting or len(self._waiting) >= self.max_waiting:
                return None
            self._waiting.add(client)
        return wait

    def done(self, client: str) -> None:
        """The attempt ``admit`` held back has been checked."""
        with self._lock:
            self._waiting.discard(client)

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
