"""HTTP for the crawler, polite and robust, safe to call from several threads.

``Fetcher`` is the one entry point. Like Scrapy's downloader middlewares, each concern is a
small class of its own that the Fetcher composes around a single GET:

- ``RobotsRules`` (robots.py): RFC 9309 robots.txt per origin, wildcards included (Protego);
- ``Throttle`` (throttle.py): a delay between requests to a host, raised to Crawl-delay,
  paused by Retry-After;
- ``RetryPolicy`` (retry.py): urllib3's ``Retry``: 429/5xx, timeouts and connection errors are
  tried again with exponential backoff, Retry-After honoured;
- ``BodyReader`` (bodies.py): the body streamed within a size cap and a whole-response deadline,
  and ``decode_html``: non-HTML and undecodable bodies refused.

Redirects are followed here one hop at a time (loops, endless chains and off-site targets
stop). Failures come back as a reason string (``FetchResult.error``), never as an exception.
"""
from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping
from urllib.parse import urlsplit

import requests
from protego import Protego

from jarvis.crawler.bodies import BodyReader, TooLarge, TooSlow, decode_html
from jarvis.crawler.retry import RETRY_STATUSES, RetryPolicy
from jarvis.crawler.robots import REDIRECT_STATUSES, UNREACHABLE, RobotsAnswer, RobotsRules
from jarvis.crawler.settings import CrawlSettings
from jarvis.crawler.throttle import Throttle
from jarvis.crawler.urls import normalize_url

log = logging.getLogger(__name__)

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
JSON_TYPES = frozenset({"application/json"})

__all__ = ["FetchResult", "Fetcher", "JsonResult", "Traffic", "UNREACHABLE", "Validators", "decode_html"]


@dataclass(frozen=True)
class Validators:
    """What a previous response said about its version, for a conditional request."""

    etag: str | None = None
    last_modified: str | None = None

    def headers(self) -> dict[str, str]:
        headers = {}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers


@dataclass
class FetchResult:
    url: str                                  # as requested
    final_url: str                            # after HTTP redirects
    redirects: list[str] = field(default_factory=list)  # URLs that answered with a redirect, in order
    redirect_to: str | None = None            # a redirect not followed: follow(target) said no
    status: int | None = None
    text: str | None = None                   # the decoded HTML of a 2xx answer
    not_modified: bool = False                # 304 to a conditional request: reuse what we had
    etag: str | None = None
    last_modified: str | None = None
    error: str | None = None                  # why nothing usable came back ("HTTP 500", "timeout", ...)


@dataclass
class JsonResult:
    url: str
    data: Any = None                          # the decoded JSON of a 2xx answer
    error: str | None = None


@dataclass
class Traffic:
    """Requests sent and bytes received (status line, headers and body as sent on the wire)."""

    requests: int = 0
    bytes: int = 0
    not_modified: int = 0
    retries: int = 0


@dataclass
class _Answer:
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    error: str | None = None


class Fetcher:
    """Fetches pages and API answers for the crawl. ``stop`` (an Event) cuts waits short when the crawl ends."""

    def __init__(self, settings: CrawlSettings, stop: threading.Event | None = None) -> None:
        self.settings = settings
        self.stop = stop or threading.Event()
        self.throttle = Throttle(settings.delay, self.stop)
        self.retry = RetryPolicy(settings.retries, settings.backoff, settings.max_retry_after)
        self.bodies = BodyReader(settings.max_page_bytes, settings.page_deadline,
                                 lambda n: self._count(n, request=False))
        self.robots_rules = RobotsRules(settings.user_agent, self._get_robots, self.throttle)
        self.traffic = Traffic()
        self._traffic_lock = threading.Lock()
        self._local = threading.local()           # one requests.Session per thread
        self._sessions: list[requests.Session] = []
        self._lock = threading.Lock()

    @property
    def unreachable(self) -> dict[str, str]:
        """origin -> why its robots.txt could not be fetched"""
        return self.robots_rules.unreachable

    def close(self) -> None:
        with self._lock:
            for session in self._sessions:
                session.close()
            self._sessions.clear()

    # ------------------------------------------------------------------ robots.txt

    def robots(self, origin: str) -> Protego:
        """The origin's robots.txt rules, fetched on first use."""
        return self.robots_rules.rules(origin)

    def allowed(self, url: str) -> bool:
        return not self.settings.obey_robots or self.robots_rules.allowed(url)

    def _get_robots(self, url: str) -> RobotsAnswer:
        answer = self._request(url, {}, accept=None)
        return RobotsAnswer(status=answer.status, headers=answer.headers, body=answer.body, error=answer.error)

    # ------------------------------------------------------------------ pages

    def fetch(self, url: str, in_scope: Callable[[str], bool] | None = None,
              validators: Mapping[str, Validators] | None = None,
              follow: Callable[[str], bool] | None = None) -> FetchResult:
        """GET one page, following redirects that stay in scope (in_scope). A redirect whose
        target follow() declines (the crawl has it already) ends in result.redirect_to.
        Conditional when validators has an entry for the URL that answers (then a 304 comes
        back as not_modified)."""
        redirects: list[str] = []
        current = url
        for _ in range(self.settings.max_redirects + 1):
            result = FetchResult(url=url, final_url=current, redirects=redirects)
            if not self.allowed(current):
                result.error = "robots.txt"
                return result
            validator = validators.get(current) if validators else None
            answer = self._request(current, validator.headers() if validator else {}, accept=HTML_TYPES)
            result.status = answer.status
            if answer.error:
                result.error = answer.error
                return result
            location = answer.headers.get("Location")
            if answer.status in REDIRECT_STATUSES and location:
                target = normalize_url(location, base=current)
                if target == current or target in redirects:
                    result.error = "redirect loop"
                    return result
                if in_scope is not None and not in_scope(target):
                    result.error = "redirect off site"
                    return result
                if follow is not None and not follow(target):
                    result.redirect_to = target
                    return result
                redirects.append(current)
                current = target
                continue
            result.etag = answer.headers.get("ETag")
            result.last_modified = answer.headers.get("Last-Modified")
            if answer.status == 304 and validator is not None:
                result.not_modified = True
                result.etag = result.etag or validator.etag
                result.last_modified = result.last_modified or validator.last_modified
                with self._traffic_lock:
                    self.traffic.not_modified += 1
                return result
            if not (200 <= answer.status < 300):
                result.error = f"HTTP {answer.status}"
                return result
            result.text, result.error = decode_html(answer.body or b"", answer.headers.get("Content-Type", ""))
            return result
        return FetchResult(url=url, final_url=current, redirects=redirects, error="too many redirects")

    def get_json(self, url: str, later: Callable[[Any], bool] | None = None) -> JsonResult:
        """GET a JSON document (no redirects followed). ``later(data)`` says that a 2xx answer asks
        to be tried again (the MediaWiki API's maxlag error): it is retried like a 503."""
        if not self.allowed(url):
            return JsonResult(url, error="robots.txt")

        def decode(answer: _Answer) -> Any:
            try:
                return json.loads((answer.body or b"").decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                return None

        answer = self._request(url, {"Accept": "application/json"}, accept=JSON_TYPES,
                               later=(lambda a: later(decode(a))) if later else None)
        if answer.error:
            return JsonResult(url, error=answer.error)
        if not (200 <= (answer.status or 0) < 300):
            return JsonResult(url, error=f"HTTP {answer.status}")
        data = decode(answer)
        if data is None:
            return JsonResult(url, error="not JSON")
        return JsonResult(url, data=data)

    # ------------------------------------------------------------------ one request, with retries

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            session.headers.update({"User-Agent": self.settings.user_agent,
                                    "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"})
            with self._lock:
                self._sessions.append(session)
            self._local.session = session
        return session

    def _request(self, url: str, headers: dict[str, str], accept: frozenset[str] | None,
                 later: Callable[[_Answer], bool] | None = None) -> _Answer:
        """One GET, tried again as the RetryPolicy says; the answer of the last attempt."""
        host = urlsplit(url).netloc
        retry = self.retry.start()
        while True:
            if self.stop.is_set():
                return _Answer(error="stopped")
            self.throttle.wait(host)
            if self.stop.is_set():
                return _Answer(error="stopped")
            answer, response, error = self._attempt(url, headers, accept)
            forced = answer.error is None and later is not None and later(answer)
            if forced:
                answer.error = "server busy (maxlag)"
            if error is None and not forced and answer.status not in RETRY_STATUSES:
                return answer
            step = self.retry.next(retry, url, response=response, error=error, forced_by_answer=forced)
            if step is None:
                return answer
            retry, wait = step
            with self._traffic_lock:
                self.traffic.retries += 1
            log.info("retrying %s (%s), attempt %d", url, answer.error, len(retry.history) + 1)
            if wait.retry_after is not None:  # the server says when: the whole host waits that long
                self.throttle.pause(host, wait.retry_after)
            elif wait.backoff and self.stop.wait(wait.backoff):
                return _Answer(error="stopped")

    def _attempt(self, url: str, headers: dict[str, str],
                 accept: frozenset[str] | None) -> tuple[_Answer, Any, Exception | None]:
        """One GET: (answer, the urllib3 response if one came, the error worth a retry if any)."""
        settings = self.settings
        try:
            response = self._session().get(url, headers=headers, stream=True, allow_redirects=False,
                                           timeout=(settings.connect_timeout, settings.read_timeout))
        except requests.Timeout as exc:
            return _Answer(error="timeout"), None, exc
        except requests.ConnectionError as exc:
            return _Answer(error="connection error"), None, exc
        except requests.RequestException as exc:  # an invalid URL and the like: retrying won't help
            return _Answer(error=f"bad request ({type(exc).__name__})"), None, None
        with response:
            answer = _Answer(status=response.status_code, headers=response.headers)
            self._count(_header_bytes(response))
            if not (200 <= response.status_code < 300):
                self.bodies.drain(response)
                if response.status_code in RETRY_STATUSES:
                    answer.error = f"HTTP {response.status_code}"
                return answer, response.raw, None
            mime = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
            if accept is not None and mime and mime not in accept:
                expected = "HTML" if accept is HTML_TYPES else "JSON"
                answer.error = f"not {expected} ({mime})"
                return answer, response.raw, None
            try:
                answer.body = self.bodies.read(response)
            except TooLarge:
                answer.error = "too large"
                return answer, response.raw, None
            except (TooSlow, requests.Timeout) as exc:
                answer.error = "timeout"
                return answer, None, exc
            except requests.exceptions.ContentDecodingError:
                answer.error = "bad encoding"
                return answer, response.raw, None
            except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError) as exc:
                answer.error = "timeout" if "timed out" in str(exc) else "connection error"
                return answer, None, exc
            return answer, response.raw, None

    def _count(self, nbytes: int, request: bool = True) -> None:
        with self._traffic_lock:
            self.traffic.bytes += nbytes
            self.traffic.requests += int(request)


def _header_bytes(response: requests.Response) -> int:
    status_line = len(f"HTTP/1.1 {response.status_code} {response.reason or ''}\r\n")
    return status_line + sum(len(k) + len(v) + 4 for k, v in response.headers.items()) + 2
