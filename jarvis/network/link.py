"""The connection to Redis: the URL (its secret never logged), the client, reconnecting with backoff.

    link = RedisLink(settings)            # settings: jarvis.config.RedisSettings
    link.check()                          # one PING: NetworkError (one line) for a wrong password, no server, ...
    link.client.xadd(...)                 # a redis-py client; every pooled connection is thread-safe
    link.where                            # "redis://127.0.0.1:6379/0": what messages name (no password)

The password comes with the URL (``redis://:PASSWORD@host``, ``redis://USER:PASSWORD@host`` for an ACL user)
or from ``RedisSettings.password`` (``JARVIS_REDIS_PASSWORD``); ``rediss://`` speaks TLS (certificates as
redis-py's URL options say: ``?ssl_ca_certs=/path/ca.pem``). No message, log line or repr shows the
password: :func:`redact` takes it out of the URL, and :meth:`RedisLink.describe` out of any error text.
"""
from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from jarvis.logs import format_event
from jarvis.config import RedisSettings
from jarvis.errors import JarvisError

log = logging.getLogger(__name__)

SCHEMES = ("redis", "rediss")
NAME = re.compile(r"[A-Za-z0-9_.:{}-]{1,64}")   # key prefixes and group names: no spaces, no glob characters
# Redis errors that mean "the connection is gone or not there yet": reconnect with backoff.
LOST = (redis.ConnectionError, redis.TimeoutError)


class NetworkError(JarvisError):
    """Redis cannot be used: not reachable, the password refused, a bad URL. One line, no secret in it."""


class RedisURLError(NetworkError):
    """A URL that is not a Redis URL."""


@dataclass(frozen=True)
class ParsedURL:
    scheme: str
    host: str
    port: int
    db: int
    username: str
    password: str


def parse_url(url: str) -> ParsedURL:
    """The parts of a ``redis://`` or ``rediss://`` URL; RedisURLError (naming the URL without its password)."""
    try:
        parts = urlsplit(url)
        port = parts.port or 6379
    except ValueError as exc:
        raise RedisURLError(f"{redact(url)}: not a Redis URL ({exc})") from None
    if parts.scheme not in SCHEMES:
        raise RedisURLError(f"{redact(url)}: not a Redis URL (redis://HOST[:PORT][/DB] or rediss:// for TLS)")
    if not parts.hostname:
        raise RedisURLError(f"{redact(url)}: no host (redis://HOST[:PORT][/DB])")
    path = parts.path.strip("/")
    if path and not path.isdigit():
        raise RedisURLError(f"{redact(url)}: the database must be a number (redis://HOST:PORT/0)")
    return ParsedURL(parts.scheme, parts.hostname, port, int(path or 0), parts.username or "", parts.password or "")


def redact(url: str) -> str:
    """The URL as messages may show it: the password replaced by ``***`` (the user name kept)."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        user = parts.username or ""
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    except ValueError:
        return "<a Redis URL that cannot be parsed>"


def check_names(settings: RedisSettings) -> None:
    """NetworkError for a key prefix or group name Redis keys should not have."""
    for what, value in (("prefix", settings.prefix), ("group", settings.group)):
        if not NAME.fullmatch(value):
            raise NetworkError(f"[redis] {what}: {value!r} is not a usable name (1-64 letters, digits, _ . : - {{ }})")


class RedisLink:
    """One Redis client (a pool of connections) for a worker or a bridge, with the settings it was made with."""

    def __init__(self, settings: RedisSettings, *, block_seconds: float = 1.0) -> None:
        if not settings.url:
            raise NetworkError("no Redis URL: set JARVIS_REDIS_URL (or [redis] url in the settings file)")
        check_names(settings)
        self.settings = settings
        parsed = parse_url(settings.url)
        self.where = redact(settings.url)
        self._secret = parsed.password or settings.password
        extra = {} if parsed.password or not settings.password else {"password": settings.password}
        # One quick retry on a broken pooled connection (a restarted server); longer outages are the callers'
        # backoff loops. Blocking reads wait block_seconds: the socket waits that much longer.
        self.client = redis.Redis.from_url(
            settings.url, decode_responses=True, socket_connect_timeout=settings.io_timeout,
            socket_timeout=settings.io_timeout + block_seconds, retry=Retry(NoBackoff(), 1),
            health_check_interval=30, **extra)

    def describe(self, exc: BaseException) -> str:
        """An error as one line that names the server and never the password."""
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if self._secret:
            text = text.replace(self._secret, "***")
        return text

    def check(self, attempts: int | None = None, stopping=None) -> None:
        """PING until it answers: ``attempts`` tries (default: settings.connect_attempts; 0: forever) with
        backoff while the server cannot be reached; NetworkError at once for a refused password or user."""
        attempts = self.settings.connect_attempts if attempts is None else attempts
        backoff = Backoff(self.settings)
        tried = 0
        while True:
            tried += 1
            try:
                self.client.ping()
                return
            except redis.AuthenticationError as exc:
                raise NetworkError(f"Redis at {self.where} refused the credentials ({self.describe(exc)}): check the "
                                   "password in JARVIS_REDIS_URL or JARVIS_REDIS_PASSWORD") from None
            except redis.ResponseError as exc:   # NOAUTH, NOPERM, WRONGPASS from servers that say it so
                raise NetworkError(f"Redis at {self.where} refused the connection: {self.describe(exc)}") from None
            except LOST as exc:
                if attempts and tried >= attempts:
                    hint = " (TLS: rediss:// needs a server that speaks TLS)" if self.where.startswith("rediss") else ""
                    raise NetworkError(f"cannot reach Redis at {self.where} after {tried} attempt(s): "
                                       f"{self.describe(exc)}{hint}") from None
                delay = backoff.next()
                log.info(format_event("redis_connect_failed", where=self.where, attempt=tried,
                                      error=self.describe(exc), retry_in_s=delay))
                if stopping is not None:
                    if stopping.wait(delay):
                        raise NetworkError("stopped before Redis answered") from None
                else:
                    time.sleep(delay)

    def close(self) -> None:
        self.client.close()


class Backoff:
    """Exponential backoff: reconnect_min_delay doubling up to reconnect_max_delay; reset() after a success."""

    def __init__(self, settings: RedisSettings) -> None:
        self.low, self.high = settings.reconnect_min_delay, settings.reconnect_max_delay
        self._delay = 0.0

    def next(self) -> float:
        self._delay = min(self.high, self._delay * 2) if self._delay else self.low
        return self._delay

    def reset(self) -> None:
        self._delay = 0.0

