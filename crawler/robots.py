"""robots.txt (RFC 9309) per origin, read with Protego: per-agent groups, ``*`` and ``$`` in
paths, longest match wins, Allow over Disallow on a tie, Crawl-delay and Request-rate.

The standard library's parser ignores wildcards: ``Disallow: /w/*_(classified)`` let it fetch
``/w/Gold_farm_(classified)``. RFC 9309 on fetching the file: follow up to five redirects;
a 4xx answer means no rules ("unavailable"), a 5xx or no answer at all means full disallow
("unreachable").
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Callable, Mapping
from urllib.parse import urlsplit

from protego import Protego

from jarvis.crawler.throttle import Throttle
from jarvis.crawler.urls import normalize_url, origin_of

log = logging.getLogger(__name__)

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
UNREACHABLE = frozenset({"connection error", "timeout"})
_ALLOW_ALL = ""
_DISALLOW_ALL = "User-agent: *\nDisallow: /\n"


@dataclass
class RobotsAnswer:
    """What a GET of robots.txt returned (the part the rules need)."""

    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    error: str | None = None


class RobotsRules:
    """Whether a URL may be fetched, by its origin's robots.txt (fetched once, on first use;
    one thread fetches, the others wait). ``get`` sends one GET and returns a RobotsAnswer."""

    def __init__(self, user_agent: str, get: Callable[[str], RobotsAnswer], throttle: Throttle) -> None:
        self.user_agent = user_agent
        self._get = get
        self._throttle = throttle
        self.unreachable: dict[str, str] = {}     # origin -> why its robots.txt could not be fetched
        self._rules: dict[str, Protego] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def rules(self, origin: str) -> Protego:
        with self._lock:
            lock = self._locks.setdefault(origin, threading.Lock())
        with lock:
            if origin not in self._rules:
                self._rules[origin] = self._load(origin)
            return self._rules[origin]

    def allowed(self, url: str) -> bool:
        return self.rules(origin_of(url)).can_fetch(url, self.user_agent)

    def _load(self, origin: str) -> Protego:
        url = f"{origin}/robots.txt"
        answer = self._get(url)
        for _ in range(5):  # RFC 9309: follow at least five redirects
            location = answer.headers.get("Location")
            if answer.status not in REDIRECT_STATUSES or not location:
                break
            answer = self._get(normalize_url(location, base=url))
        if answer.error in UNREACHABLE:
            self.unreachable[origin] = answer.error
            return Protego.parse(_DISALLOW_ALL)
        if answer.status is not None and 200 <= answer.status < 300 and answer.body is not None:
            rules = Protego.parse(answer.body.decode("utf-8", errors="replace"))
            self._apply_delay(origin, rules)
            return rules
        if answer.status is not None and 400 <= answer.status < 500:
            return Protego.parse(_ALLOW_ALL)     # "unavailable": no rules
        log.warning("robots.txt of %s: %s; treating the site as disallowed", origin,
                    answer.error or f"HTTP {answer.status}")
        return Protego.parse(_DISALLOW_ALL)      # "unreachable" (5xx): assume complete disallow

    def _apply_delay(self, origin: str, rules: Protego) -> None:
        """Crawl-delay, or the spacing a Request-rate asks for, raises the host's delay."""
        delays = [rules.crawl_delay(self.user_agent) or 0.0]
        rate = rules.request_rate(self.user_agent)
        if rate is not None and rate.requests:
            delays.append(rate.seconds / rate.requests)
        if max(delays) > 0:
            self._throttle.set_delay(urlsplit(origin).netloc, float(max(delays)))
