"""HTTP for the crawler, polite and robust, safe to call from several threads.

Polite: robots.txt per origin (RFC 9309), an identifying User-Agent, a delay between requests
to the same host (raised to robots.txt's Crawl-delay), Retry-After honoured on 429/503.
Robust: retries with exponential backoff on 429/5xx/timeouts/connection errors, connect and
read timeouts plus a whole-response deadline, a size cap (the body is streamed and reading
stops past it), redirects followed one hop at a time (loops, endless chains and off-site
targets stop), non-HTML and undecodable bodies refused. Failures come back as a reason string
in ``FetchResult.error``, never as an exception.
"""
from __future__ import annotations

import email.utils
import logging
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

import requests
import urllib3

from crawler.settings import CrawlSettings
from crawler.urls import normalize_url, origin_of

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
UNREACHABLE = frozenset({"connection error", "timeout"})

_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)""", re.IGNORECASE)


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


class _TooLarge(Exception):
    pass


class _TooSlow(Exception):
    pass


class Throttle:
    """Spaces the requests to each host ``delay`` seconds apart (start to start), across threads.
    A Retry-After pauses the whole host, not just the thread that was told."""

    def __init__(self, delay: float, stop: threading.Event) -> None:
        self._default = max(0.0, delay)
        self._delays: dict[str, float] = {}
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()
        self._stop = stop

    def set_delay(self, host: str, delay: float) -> None:
        with self._lock:
            self._delays[host] = max(self._default, delay)

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


class Fetcher:
    """Fetches pages for the crawl. ``stop`` (an Event) cuts waits short when the crawl ends."""

    def __init__(self, settings: CrawlSettings, stop: threading.Event | None = None) -> None:
        self.settings = settings
        self.stop = stop or threading.Event()
        self.throttle = Throttle(settings.delay, self.stop)
        self.traffic = Traffic()
        self.unreachable: dict[str, str] = {}     # origin -> why its robots.txt could not be fetched
        self._traffic_lock = threading.Lock()
        self._local = threading.local()           # one requests.Session per thread
        self._sessions: list[requests.Session] = []
        self._robots: dict[str, RobotFileParser] = {}
        self._robots_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            for session in self._sessions:
                session.close()
            self._sessions.clear()

    # ------------------------------------------------------------------ robots.txt

    def robots(self, origin: str) -> RobotFileParser:
        """The origin's robots.txt rules, fetched on first use (one thread fetches, others wait)."""
        with self._lock:
            lock = self._robots_locks.setdefault(origin, threading.Lock())
        with lock:
            if origin not in self._robots:
                self._robots[origin] = self._load_robots(origin)
            return self._robots[origin]

    def allowed(self, url: str) -> bool:
        if not self.settings.obey_robots:
            return True
        return self.robots(origin_of(url)).can_fetch(self.settings.user_agent, url)

    def _load_robots(self, origin: str) -> RobotFileParser:
        url = f"{origin}/robots.txt"
        parser = RobotFileParser(url)
        answer = self._request(url, {}, html_only=False)
        for _ in range(5):  # RFC 9309: follow at least five redirects
            location = answer.headers.get("Location")
            if answer.status not in REDIRECT_STATUSES or not location:
                break
            answer = self._request(normalize_url(location, base=url), {}, html_only=False)
        if answer.error in UNREACHABLE:
            self.unreachable[origin] = answer.error
            parser.disallow_all = True
        elif answer.status is not None and 200 <= answer.status < 300 and answer.body is not None:
            parser.parse(answer.body.decode("utf-8", errors="replace").splitlines())
            delay = parser.crawl_delay(self.settings.user_agent)
            if delay:
                self.throttle.set_delay(urlsplit(origin).netloc, float(delay))
        elif answer.status is not None and 400 <= answer.status < 500:
            parser.allow_all = True       # "unavailable": no rules
        else:
            log.warning("robots.txt of %s: %s; treating the site as disallowed", origin,
                        answer.error or f"HTTP {answer.status}")
            parser.disallow_all = True    # "unreachable" (5xx): assume complete disallow
        return parser

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
            answer = self._request(current, validator.headers() if validator else {}, html_only=True)
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

    def _request(self, url: str, headers: dict[str, str], html_only: bool) -> _Answer:
        settings = self.settings
        host = urlsplit(url).netloc
        answer = _Answer(error="stopped")
        pause = 0.0
        for attempt in range(settings.retries + 1):
            if attempt:
                with self._traffic_lock:
                    self.traffic.retries += 1
                log.info("retrying %s (%s), attempt %d", url, answer.error, attempt + 1)
            if pause and self.stop.wait(pause):
                return _Answer(error="stopped")
            if self.stop.is_set():
                return _Answer(error="stopped")
            pause = settings.backoff * 2 ** attempt
            self.throttle.wait(host)
            if self.stop.is_set():
                return _Answer(error="stopped")
            try:
                response = self._session().get(url, headers=headers, stream=True, allow_redirects=False,
                                               timeout=(settings.connect_timeout, settings.read_timeout))
            except requests.Timeout:
                answer = _Answer(error="timeout")
                continue
            except requests.ConnectionError:
                answer = _Answer(error="connection error")
                continue
            except requests.RequestException as exc:  # an invalid URL and the like: retrying won't help
                return _Answer(error=f"bad request ({type(exc).__name__})")
            with response:
                answer = _Answer(status=response.status_code, headers=response.headers)
                self._count(_header_bytes(response))
                if not (200 <= response.status_code < 300):
                    self._drain(response)
                if response.status_code in RETRY_STATUSES:
                    answer.error = f"HTTP {response.status_code}"
                    retry_after = _retry_after(response.headers.get("Retry-After"), settings.max_retry_after)
                    if retry_after is not None:  # the server says when: the whole host waits that long
                        self.throttle.pause(host, retry_after)
                        pause = 0.0
                    continue
                if not (200 <= response.status_code < 300):
                    return answer
                mime = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
                if html_only and mime and mime not in HTML_TYPES:
                    answer.error = f"not HTML ({mime})"
                    return answer
                try:
                    answer.body = self._read_body(response)
                except _TooLarge:
                    answer.error = "too large"
                    return answer
                except (_TooSlow, requests.Timeout):
                    answer.error = "timeout"
                    continue
                except requests.exceptions.ContentDecodingError:
                    answer.error = "bad encoding"
                    return answer
                except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError) as exc:
                    answer.error = "timeout" if "timed out" in str(exc) else "connection error"
                    continue
                return answer
        return answer

    def _read_body(self, response: requests.Response) -> bytes:
        """The body, streamed: stops past max_page_bytes or page_deadline, counts wire bytes.
        read1 returns whatever has arrived, so a server that trickles bytes meets the deadline."""
        cap = self.settings.max_page_bytes
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > cap:
            raise _TooLarge
        deadline = time.monotonic() + self.settings.page_deadline
        raw = response.raw
        if hasattr(raw, "read1"):  # urllib3 2
            chunks_in = iter(lambda: raw.read1(64 * 1024, decode_content=True), b"")
        else:
            chunks_in = response.iter_content(64 * 1024)
        chunks: list[bytes] = []
        size = 0
        try:
            for chunk in chunks_in:
                size += len(chunk)
                if size > cap:
                    raise _TooLarge
                if time.monotonic() > deadline:
                    raise _TooSlow
                chunks.append(chunk)
        except urllib3.exceptions.ReadTimeoutError as exc:
            raise requests.Timeout(str(exc)) from exc
        except urllib3.exceptions.DecodeError as exc:
            raise requests.exceptions.ContentDecodingError(str(exc)) from exc
        except (urllib3.exceptions.ProtocolError, urllib3.exceptions.HTTPError, OSError) as exc:
            raise requests.ConnectionError(str(exc)) from exc
        finally:
            wire = raw.tell() if hasattr(raw, "tell") else 0
            self._count(wire or size, request=False)
        return b"".join(chunks)

    def _drain(self, response: requests.Response) -> None:
        """Read a small error or redirect body, so that the connection can be reused."""
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) <= 64 * 1024:
            try:
                response.raw.read(int(declared))
            except (urllib3.exceptions.HTTPError, OSError):
                return
            self._count(int(declared), request=False)

    def _count(self, nbytes: int, request: bool = True) -> None:
        with self._traffic_lock:
            self.traffic.bytes += nbytes
            self.traffic.requests += int(request)


# --------------------------------------------------------------------------- helpers


def decode_html(body: bytes, content_type: str) -> tuple[str | None, str | None]:
    """(text, None), or (None, why) for a body that is binary or not in its declared encoding."""
    if b"\x00" in body[:4096]:
        return None, "not HTML (binary)"
    match = re.search(r"charset\s*=\s*[\"']?([\w.:-]+)", content_type, re.IGNORECASE)
    charset = match.group(1) if match else None
    if charset is None:
        meta = _CHARSET.search(body[:4096])
        charset = meta.group(1).decode("ascii", errors="replace") if meta else "utf-8"
    if body.startswith(b"\xef\xbb\xbf"):
        charset = "utf-8-sig"
    try:
        return body.decode(charset), None
    except LookupError:
        return None, f"bad encoding (unknown charset {charset})"
    except UnicodeDecodeError:
        return None, "bad encoding"


def _retry_after(value: str | None, cap: float) -> float | None:
    """Seconds a Retry-After header asks for (delta-seconds or an HTTP date), capped; None if absent."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        seconds = float(value)
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return min(max(seconds, 0.0), cap)


def _header_bytes(response: requests.Response) -> int:
    status_line = len(f"HTTP/1.1 {response.status_code} {response.reason or ''}\r\n")
    return status_line + sum(len(k) + len(v) + 4 for k, v in response.headers.items()) + 2
