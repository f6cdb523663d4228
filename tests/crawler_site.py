"""A tiny local web site for the crawler tests: MediaWiki-shaped pages, hostile answers on demand,
and a log of every request it received. Runs a real HTTP server on 127.0.0.1 in a thread."""
from __future__ import annotations

import hashlib
import html
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

LAST_MODIFIED = "Wed, 01 May 2024 12:00:00 GMT"


@dataclass
class Reply:
    """One answer. ``body`` may be a list of chunks (sent one by one, ``chunk_delay`` apart)."""

    status: int = 200
    body: bytes | list[bytes] = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0            # seconds before answering
    chunk_delay: float = 0.0
    validators: bool = True       # send ETag/Last-Modified and answer If-None-Match with 304
    length: bool = True           # send Content-Length (else: close the connection after the body)


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    at: float                     # time.monotonic() when it arrived


class LocalSite:
    """Routes by path (with query). A route is a Reply, or a list of Replies served in turn
    (the last one repeats). Unknown paths get a 404."""

    def __init__(self) -> None:
        self.routes: dict[str, Reply | list[Reply]] = {}
        self.requests: list[Request] = []
        self._served: dict[str, int] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.base_url = ""

    # ------------------------------------------------------------------ content

    def add(self, path: str, reply: Reply | list[Reply]) -> None:
        self.routes[path] = reply

    def add_article(self, title: str, paragraphs: list[str], **kwargs) -> None:
        self.add(article_path(title), Reply(body=article_html(title, paragraphs, **kwargs).encode("utf-8"),
                                            headers={"Content-Type": "text/html; charset=UTF-8"}))

    # ------------------------------------------------------------------ requests seen

    def paths(self) -> list[str]:
        with self._lock:
            return [r.path for r in self.requests]

    def count(self, path: str) -> int:
        return self.paths().count(path)

    # ------------------------------------------------------------------ server

    def __enter__(self) -> "LocalSite":
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # else every keep-alive answer waits 40 ms for a delayed ACK

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                site._answer(self)

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        host, port = self._server.server_address[:2]
        self.base_url = f"http://{host}:{port}"
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self.requests.append(Request(handler.path, dict(handler.headers), time.monotonic()))
            route = self.routes.get(handler.path)
            if isinstance(route, list):
                turn = self._served.get(handler.path, 0)
                self._served[handler.path] = turn + 1
                route = route[min(turn, len(route) - 1)]
        reply = route or Reply(404, b"<html><body>no such page</body></html>", {"Content-Type": "text/html"})
        try:
            self._send(handler, reply)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeouts, size cap): that is what some tests want

    def _send(self, handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.delay:
            time.sleep(reply.delay)
        chunks = reply.body if isinstance(reply.body, list) else [reply.body]
        headers = dict(reply.headers)
        if reply.validators and reply.status == 200:
            etag = '"' + hashlib.sha1(b"".join(chunks)).hexdigest()[:16] + '"'
            headers.setdefault("ETag", etag)
            headers.setdefault("Last-Modified", LAST_MODIFIED)
            if handler.headers.get("If-None-Match") == headers["ETag"]:
                handler.send_response(304)
                handler.send_header("ETag", headers["ETag"])
                handler.send_header("Content-Length", "0")
                handler.end_headers()
                return
        handler.send_response(reply.status)
        for name, value in headers.items():
            handler.send_header(name, value)
        if reply.length:
            handler.send_header("Content-Length", str(sum(len(c) for c in chunks)))
        else:
            handler.send_header("Connection", "close")
            handler.close_connection = True
        handler.end_headers()
        for chunk in chunks:
            handler.wfile.write(chunk)
            handler.wfile.flush()
            if reply.chunk_delay:
                time.sleep(reply.chunk_delay)


# --------------------------------------------------------------------------- MediaWiki-shaped HTML


def article_path(title: str) -> str:
    return "/w/" + quote(title.replace(" ", "_"), safe=";@$!*(),/~:'")


def link(title: str, text: str | None = None) -> str:
    return f'<a href="{article_path(title)}" title="{html.escape(title)}">{html.escape(text or title)}</a>'


def article_html(title: str, paragraphs: list[str], *, links: tuple[str, ...] = (), canonical: str | None = None,
                 namespace: int | None = 0, main_page: bool = False, categories: tuple[str, ...] = (),
                 redirected_from: str | None = None, items: tuple[str, ...] = (), body_extra: str = "",
                 rlconf: bool = True) -> str:
    """A page the way MediaWiki renders it: RLCONF, canonical link, #firstHeading, chrome around and
    inside the article body. ``paragraphs`` are raw HTML; ``links`` go in a navbox (chrome)."""
    config = {"wgCanonicalNamespace": "", "wgNamespaceNumber": namespace, "wgPageName": title.replace(" ", "_"),
              "wgTitle": title, "wgIsMainPage": main_page, "wgArticlePath": "/w/$1", "wgCategories": list(categories)}
    script = f"<script>RLCONF={json.dumps(config)};RLSTATE={{}};</script>" if rlconf and namespace is not None else ""
    subtitle = (f'<span class="mw-redirectedfrom">(Redirected from <a href="/w/{quote(redirected_from)}'
                f'?redirect=no" class="mw-redirect">{html.escape(redirected_from)}</a>)</span>'
                if redirected_from else "")
    navbox = ("<table class=\"navbox\"><tr><td>" + " · ".join(link(t) for t in links) + "</td></tr></table>"
              if links else "")
    body = "\n".join(f"<p>{p}</p>" for p in paragraphs)
    if items:
        body += "\n<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>"
    catlinks = "".join(f'<li><a href="/w/Category:{quote(c)}">{html.escape(c)}</a></li>' for c in categories)
    return f"""<!DOCTYPE html>
<html><head><meta charset="UTF-8"><title>{html.escape(title)} - Test Wiki</title>{script}
<link rel="canonical" href="{canonical or article_path(title)}"></head>
<body><div id="mw-navigation"><ul><li><a href="/w/Special:Random">Random page</a></li>
<li><a href="/w/Main_Page">Main page</a></li></ul></div>
<div id="content"><h1 id="firstHeading">{html.escape(title)}</h1>
<div id="contentSub">{subtitle}</div>
<div id="mw-content-text"><div class="mw-parser-output">
<div class="hatnote">For other uses, see {link("Talk:" + title)}.</div>
<table class="infobox"><tr><th>Health</th><td>10</td></tr></table>
<div id="toc" class="toc"><ul><li>1 Contents</li></ul></div>
<h2><span class="mw-headline">Section</span><span class="mw-editsection">[<a href="/w/index.php?title={quote(title)}&amp;action=edit">edit</a>]</span></h2>
{body}
{body_extra}
{navbox}
</div></div>
<div id="catlinks"><ul>{catlinks}</ul></div></div>
<footer><a href="/w/Minecraft_Wiki:About">About</a></footer></body></html>"""
