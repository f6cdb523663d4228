"""Politeness in time: requests to one host spaced apart, across threads.

The spacing of a host: the delay given, raised by its robots.txt's Crawl-delay; without one (``None``),
none at all for a host on this machine (a loopback address: your own wiki, where waiting only slows you
down, and a Crawl-delay written for a public server does not apply), ``POLITE_DELAY`` raised by
Crawl-delay for every other host.
"""
from __future__ import annotations

import threading
import time

from jarvis.crawler.settings import POLITE_DELAY
from jarvis.crawler.urls import is_loopback


class Throttle:
    """Spaces the requests to each host (a URL's netloc) apart, start to start, across threads (see the
    module docstring for how far). A Retry-After pauses the whole host, not just the thread that was told."""

    def __init__(self, delay: float | None, stop: threading.Event) -> None:
        self._given = None if delay is None else max(0.0, delay)
        self._delays: dict[str, float] = {}
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()
        self._stop = stop

    def _default(self, host: str) -> float:
        if self._given is not None:
            return self._given
        return 0.0 if is_loopback(host) else POLITE_DELAY

    def set_delay(self, host: str, delay: float) -> None:
        """robots.txt asks for ``delay`` seconds between requests to host (its Crawl-delay or Request-rate)."""
        if self._given is None and is_loopback(host):
            return
        with self._lock:
            self._delays[host] = max(self._default(host), delay)

    def delay(self, host: str) -> float:
        with self._lock:
            return self._delays.get(host, self._default(host))

    def wait(self, host: str) -> None:
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next.get(host, now))
            self._next[host] = start + self._delays.get(host, self._default(host))
        if start > now:
            self._stop.wait(start - now)

    def pause(self, host: str, seconds: float) -> None:
        with self._lock:
            self._next[host] = max(self._next.get(host, 0.0), time.monotonic() + seconds)
