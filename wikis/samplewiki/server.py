"""Serves the sample wiki over HTTP the way the Minecraft Wiki's MediaWiki answers.

URLs: ``/w/Title_with_underscores`` (a title not in normal form gets a 301 to it), redirects
served with status 200 and "(Redirected from X)", ``/w/X?redirect=no`` for the redirect itself,
``/index.php?title=X&action=...``, ``/api.php`` (the Action API subset of wikis/actionapi), ``/`` -> 301
``/w/Main_Page``, ``/robots.txt``, unknown
titles -> 404 with the wiki's "There is currently no text in this page". Every 200 page has an
``ETag`` (hash of the bytes served) and ``Last-Modified`` (the source file's mtime), and answers
``If-None-Match`` / ``If-Modified-Since`` with ``304 Not Modified``.

Pages are rendered once at start-up and served from memory; Special: pages and the few
query-dependent views are rendered per request.
"""
from __future__ import annotations

import errno
import hashlib
import logging
import threading
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Protocol
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from jarvis.config import SAMPLE_WIKI_HOST, SAMPLE_WIKI_PORT
from jarvis.errors import JarvisError
from jarvis_lab.samplewiki.render import API_PATH, HtmlPage, Renderer
from jarvis_lab.samplewiki.site import SampleWiki
from jarvis_lab.samplewiki.special import Redirect, special_page
from jarvis_lab.samplewiki.store import SampleWikiStore
from jarvis_lab.actionapi import ActionApi
from jarvis_lab.samplewiki.titles import MAIN_PAGE, dbkey, namespace_number, normalize_title, split_namespace, url_path

log = logging.getLogger(__name__)

DEFAULT_HOST = SAMPLE_WIKI_HOST
DEFAULT_PORT = SAMPLE_WIKI_PORT
STATIC_DIR = Path(__file__).resolve().parent / "static"
HTML = "text/html; charset=UTF-8"
# Crawlers stay out of the endless and the personal parts, as on the real wiki; api.php is open
# to them (it is the cheap way to read the wiki).
ROBOTS_TXT = """\
# robots.txt of the Jarvis sample wiki
User-agent: *
Disallow: /index.php
Disallow: /load.php
Disallow: /w/Special:
Disallow: /w/Special%3A

User-agent: BadBot
Disallow: /
"""


class SampleWikiError(JarvisError):
    """The sample wiki cannot be served (port in use, bad sources)."""


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes = b""
    content_type: str = HTML
    location: str | None = None
    last_modified: float | None = None     # set on cacheable pages: they get ETag and Last-Modified
    headers: tuple[tuple[str, str], ...] = ()   # more headers (the API's Retry-After)
    etag: str | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if self.last_modified is not None:
            object.__setattr__(self, "etag", '"' + hashlib.sha1(self.body).hexdigest()[:20] + '"')

    @classmethod
    def page(cls, page: HtmlPage) -> "Response":
        cacheable = page.last_modified if page.status == 200 else None
        return cls(page.status, page.html.encode("utf-8"), last_modified=cacheable)

    def not_modified(self, if_none_match: str | None, if_modified_since: str | None) -> bool:
        """RFC 9110: If-None-Match decides when present, else If-Modified-Since (one-second resolution)."""
        if self.etag is None or self.last_modified is None:
            return False
        if if_none_match is not None:
            tags = [tag.strip() for tag in if_none_match.split(",")]
            return "*" in tags or any(tag.removeprefix("W/") == self.etag for tag in tags)
        if if_modified_since:
            try:
                since = parsedate_to_datetime(if_modified_since).timestamp()
            except (TypeError, ValueError, IndexError):
                return False
            return int(self.last_modified) <= since
        return False


class SampleWikiSite:
    """Answers request targets (path + query) with responses; knows nothing of sockets."""

    def __init__(self, wiki: SampleWiki, base_url: str) -> None:
        self.wiki = wiki
        self.base_url = base_url.rstrip("/")
        self.renderer = Renderer(wiki, self.base_url)
        self.store = SampleWikiStore(wiki, self.renderer, self.base_url)
        self.api = ActionApi(self.store)
        self.pages = {title: Response.page(self.renderer.page(title)) for title in wiki.page_titles()}
        self.redirected = {name: Response.page(self.renderer.page(target, redirected_from=name))
                           for name, target in wiki.redirects.items()}
        self.static = {
            "css": (STATIC_DIR / "wiki.css").read_bytes(),
            "png": (STATIC_DIR / "placeholder.png").read_bytes(),
        }

    def respond(self, target: str) -> Response:
        parts = urlsplit(target)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        path = parts.path
        if path == "/robots.txt":
            return Response(200, ROBOTS_TXT.encode(), "text/plain; charset=UTF-8", last_modified=self.wiki.newest_mtime)
        if path in ("", "/", "/w", "/w/"):
            return self._redirect(url_path(MAIN_PAGE), 301)
        if path.startswith("/w/"):
            return self._title(unquote(path[3:]), query, normalize_url=True)
        if path == "/index.php":
            if "title" not in query and "search" in query:
                query["title"] = "Special:Search"
            return self._title(query.get("title", MAIN_PAGE), query, normalize_url=False)
        if path == API_PATH:
            answer = self.api.respond(query)
            return Response(answer.status, answer.body, answer.content_type, headers=tuple(answer.headers.items()))
        if path == "/load.php":
            return Response(200, self.static["css"], "text/css; charset=utf-8", last_modified=self.wiki.newest_mtime)
        if path.startswith("/images/") or path == "/favicon.ico":
            return Response(200, self.static["png"], "image/png", last_modified=self.wiki.newest_mtime)
        return Response(404, b"<!DOCTYPE html><html><head><title>404 Not Found</title></head><body><h1>Not Found</h1>"
                             b"<p>The requested URL was not found on this server.</p></body></html>")

    # ------------------------------------------------------------------ changes at run time

    def edit(self, title: str, text: str) -> None:
        """Replace an article's body (sources' markup); recorded in list=recentchanges."""
        self._refresh(self.store.edit(title, text))

    def create(self, title: str, text: str, group: str, categories: tuple[str, ...] = ()) -> None:
        self._refresh(self.store.create(title, text, group, categories))

    def move(self, old: str, new: str) -> None:
        """Rename an article, leaving a redirect behind."""
        self._refresh(self.store.move(old, new))

    def delete(self, title: str) -> None:
        """Delete an article with its redirects and duplicates."""
        self._refresh(self.store.delete(title))

    def _refresh(self, titles: set[str]) -> None:
        """Render the changed pages again (their titles may have appeared or gone)."""
        pages, redirected = dict(self.pages), dict(self.redirected)
        for title in titles:
            pages.pop(title, None)
            redirected.pop(title, None)
            kind = self.wiki.kind(title)
            if kind == "redirect":
                redirected[title] = Response.page(self.renderer.page(self.wiki.redirects[title], redirected_from=title))
            elif kind is not None:
                pages[title] = Response.page(self.renderer.page(title))
        self.pages, self.redirected = pages, redirected   # swapped whole: requests in flight see one or the other

    def _redirect(self, path: str, status: int) -> Response:
        location = self.base_url + path
        body = f'<!DOCTYPE html><html><body><p>Moved to <a href="{location}">{location}</a>.</p></body></html>'
        return Response(status, body.encode(), location=location)

    def _title(self, raw: str, query: dict[str, str], normalize_url: bool) -> Response:
        title = normalize_title(raw)
        if not title:
            return self._redirect(url_path(MAIN_PAGE), 301)
        if normalize_url and raw != dbkey(title):
            # MediaWiki sends a non-normal title ("cow", "Crafting%20table") to its normal URL.
            return self._redirect(url_path(title) + (f"?{urlencode(query)}" if query else ""), 301)
        if namespace_number(title) < 0:
            answer = special_page(self.renderer, split_namespace(title)[1], query)
            if isinstance(answer, Redirect):
                return self._redirect(answer.location, answer.status)
            return Response.page(answer)
        action = query.get("action", "view")
        if action != "view":
            return Response.page(self._action_page(title, action))
        if title in self.wiki.redirects:
            if query.get("redirect") == "no":
                return Response.page(self.renderer.redirect_page(title))
            return self.redirected[title]
        if title in self.pages:
            return self.pages[title]
        return Response.page(self.renderer.missing_page(title))

    def _action_page(self, title: str, action: str) -> HtmlPage:
        messages = {
            "edit": (f"View source for {title}", "You do not have permission to edit this page: the sample wiki is "
                     "generated from the article files that ship with Jarvis; edit those instead."),
            "history": (f"{title}: Revision history", "The sample wiki keeps one revision of each page."),
            "info": (f'Information for "{title}"', "Each page of the sample wiki is generated from a source file."),
        }
        if action not in messages:
            return self.renderer.message_page(title, "No such action", "The action specified by the URL is not "
                                              "recognized by the wiki.", status=404, action=action)
        heading, message = messages[action]
        return self.renderer.message_page(title, heading, message, action=action)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"         # keep-alive, as a crawler's session expects
    server_version = "MediaWiki-sample"
    sys_version = ""
    timeout = 30                          # an idle keep-alive connection gives its thread back
    disable_nagle_algorithm = True        # headers and body go out at once, no delayed-ACK stall per page

    server: "SiteServer"

    def version_string(self) -> str:
        return self.server_version

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        self._answer(send_body=True)

    def do_HEAD(self) -> None:  # noqa: N802 - http.server API
        self._answer(send_body=False)

    def _answer(self, send_body: bool) -> None:
        response = self.server.site.respond(self.path)
        not_modified = response.not_modified(self.headers.get("If-None-Match"), self.headers.get("If-Modified-Since"))
        self.send_response(304 if not_modified else response.status)
        if response.etag:
            self.send_header("ETag", response.etag)
            self.send_header("Last-Modified", formatdate(response.last_modified, usegmt=True))
            self.send_header("Cache-Control", "private, must-revalidate, max-age=0")
            self.send_header("Vary", "Accept-Encoding, Cookie")
        if response.location:
            self.send_header("Location", response.location)
        for name, value in response.headers:
            self.send_header(name, value)
        if not not_modified:
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(response.body)))
            if response.content_type == HTML:
                self.send_header("Content-Language", "en")
        self.end_headers()
        if send_body and not not_modified:
            self.wfile.write(response.body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server API
        log.debug("%s %s", self.address_string(), format % args)


class SiteServer(ThreadingHTTPServer):
    """A threading HTTP server answering with ``site.respond(target)`` (a ``Response``), as a
    MediaWiki site does; ``shutdown()`` also closes its socket. ``make_site`` gets the base URL."""

    daemon_threads = True

    def __init__(self, host: str, port: int, make_site: Callable[[str], "Site"], name: str) -> None:
        try:
            super().__init__((host, port), _Handler)
        except OSError as exc:
            reason = "the port is in use; pick another with --port" if exc.errno == errno.EADDRINUSE else exc.strerror
            raise SampleWikiError(f"cannot serve {name} on {host}:{port}: {reason}") from exc
        try:
            self.site = make_site(self.base_url)
        except BaseException:
            self.server_close()
            raise

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        if host in ("0.0.0.0", "::"):
            host = "127.0.0.1"            # canonical links must name a reachable host
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def shutdown(self) -> None:
        super().shutdown()
        self.server_close()

    def serve_in_thread(self, name: str) -> None:
        """Serve from a daemon thread; stop with ``shutdown()``."""
        threading.Thread(target=self.serve_forever, name=name, daemon=True).start()


class Site(Protocol):
    def respond(self, target: str) -> Response: ...


class SampleWikiServer(SiteServer):
    """The sample wiki over HTTP."""

    def __init__(self, host: str, port: int, wiki: SampleWiki | None = None) -> None:
        super().__init__(host, port, lambda base_url: SampleWikiSite(SampleWiki.load() if wiki is None else wiki,
                                                                     base_url), "the sample wiki")


def start_sample_wiki(host: str = DEFAULT_HOST, port: int = 0,
                      wiki: SampleWiki | None = None) -> tuple[SampleWikiServer, str]:
    """Serve the sample wiki from a daemon thread; returns (server, base URL). Stop it with ``server.shutdown()``."""
    server = SampleWikiServer(host, port, wiki)
    server.serve_in_thread("sample-wiki")
    return server, server.base_url


def serve_sample_wiki(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
    """Serve the sample wiki until Ctrl-C."""
    server = SampleWikiServer(host, port)
    print(f"Sample wiki at {server.base_url}{url_path(MAIN_PAGE)} ({len(server.site.wiki.articles)} articles); "
          "Ctrl-C stops it.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("Sample wiki stopped.", flush=True)
    finally:
        server.server_close()
