"""Politeness in time: requests to one host spaced ``delay`` seconds apart, across threads."""
from __future__ import annotations

import threading
import time


class Throttle:
    """Spaces the requests to each host ``delay`` seconds apart (start to start), across threads.
    robots.txt's Crawl-delay raises a host's delay; a Retry-After pauses the whole host, not just
    the thread that was told."""

    def __init__(self, delay: float, stop: threading.Event) -> None:
        self._default = max(0.0, delay)
        self._delays: dict[str, float] = {}
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()
        self._stop = stop

    def set_delay(self, host: str, delay: float) -> None:
        with self._lock:
            self._delays[host] = max(self._default, delay)

    def delay(self, host: str) -> float:
        with self._lock:
            return self._delays.get(host, self._default)

    def wait(self, host: str) -> None:
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next.get(host, now))
            self._next[host] = start + self._delays.get(host, self._default)
        if start > now:
            self._stop.wait(start - now)

    def pause(self, host: str, seconds: float) -> None:
        with self._lock:
            self._next[host] = max(self._next.get(host, 0.0), time.monotonic() + seconds)
