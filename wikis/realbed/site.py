"""Serves the test bed as minecraft.wiki does: MediaWiki 1.43, Vector 2022 skin.

- ``/w/Title`` (underscores; a title with spaces gets a 301 to it): ``#firstHeading``,
  ``#mw-content-text > .mw-parser-output``, RLCONF, canonical link, and chrome around the content
  (header, sidebar table of contents, page tools, footer).
- Content: headings as ``div.mw-heading.mw-headingN > hN`` plus an ``[edit]`` link (h2..h6 from the
  section path's depth), ``p``, consecutive ``li`` as one ``ul``, tables as ``table.wikitable``
  (first row ``th``; an empty header cell after a filled one joins it as a colspan; a second row
  that only subdivides such spans is a second header row, the other headers span both rows; equal
  first cells of consecutive data rows merge into a rowspan; an empty first cell under a spanning
  header is an image), hatnotes as ``div.hatnote``, reference markers in prose as
  ``sup.reference`` with a reference list; and what must not become content: a fake infobox, an
  image with a caption, a navbox.
- Redirects: every alias serves its page with "(Redirected from X)" and the target's canonical
  URL (``?redirect=no`` shows the redirect itself).
- ``/w/Main_Page`` links every page and one alias in three (the bed has no links between pages);
  unknown titles are 404; ``/robots.txt`` has wildcard rules (ROBOTS_TXT).
- ``/api.php``: the Action API subset of wikis/actionapi over the bed (``RealBedStore``, store.py):
  pages, aliases as redirects, recent changes of ``edit``/``delete`` made at run time.
"""
from __future__ import annotations

import json
import re
import threading
import zlib
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

import jinja2
from markupsafe import Markup

from jarvis.config import REALBED_PAGES, REALBED_PORT, SAMPLE_WIKI_HOST
from jarvis_lab.realbed.bed import BedPage, RealBed
from jarvis_lab.realbed.store import RealBedStore
from jarvis_lab.samplewiki.body import esc, esc_attr, unique_anchor, wrap_parser_output
from jarvis_lab.samplewiki.render import API_PATH, MEDIAWIKI_VERSION, edited_date
from jarvis_lab.samplewiki.server import STATIC_DIR, Response, SiteServer
from jarvis_lab.samplewiki.titles import MAIN_PAGE, SITE_NAME, css_class, dbkey, index_php, namespace_number, url_path
from jarvis_lab.actionapi import ActionApi

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
# minecraft.wiki-style rules with wildcards (RFC 9309). The last one matches real pages of the bed:
# the project namespace's sandbox pages ("Minecraft Wiki:Sandbox/Tutorials/..."), which a polite
# crawler must not fetch. api.php is open to crawlers (the cheap way to read the wiki): its
# Allow rule is longer than "/*?action=", so it wins (RFC 9309's longest match).
ROBOTS_TXT = """\
# robots.txt of the Jarvis real-wiki test bed (rules in the style of minecraft.wiki's)
User-agent: *
Allow: /api.php?action=
Disallow: /index.php
Disallow: /*?action=
Disallow: /*&action=
Disallow: /*?oldid=
Disallow: /w/Special:*
Disallow: /w/Special%3A*
Disallow: /w/*:Sandbox
Allow: /load.php

User-agent: BadBot
Disallow: /
"""
ALIASES_LINKED = 3          # the Main Page links one alias in this many (crc32 of the alias picks which)
NAVBOX_NEIGHBOURS = 4       # pages each navbox links on either side, in title order
_REFERENCE = re.compile(r"\[(?:\d{1,3}|[a-z]|note \d{1,3}|n \d{1,3})\]")
_CODE = re.compile(r"`([^`]+)`")
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


class RealBedSite:
    """Answers request targets with responses; knows nothing of sockets."""

    def __init__(self, bed: RealBed, base_url: str) -> None:
        self.bed = bed
        self.base_url = base_url.rstrip("/")
        self.templates = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES_DIR), autoescape=True,
                                            undefined=jinja2.StrictUndefined)
        self.titles = sorted(bed.pages, key=str.casefold)
        self._bodies: dict[str, tuple[str, list[dict]]] = {}   # title -> (content HTML, TOC entries)
        self._lock = threading.Lock()
        self.static = {"css": (STATIC_DIR / "wiki.css").read_bytes(), "png": (STATIC_DIR / "placeholder.png").read_bytes()}
        self.store = RealBedStore(bed, self.content_html, self.base_url)
        self.api = ActionApi(self.store)

    def content_html(self, title: str) -> str:
        """The .mw-parser-output of a page of the bed or of the main page."""
        return self._main_page() if title == MAIN_PAGE else self._body(self.bed.pages[title])[0]

    def respond(self, target: str) -> Response:
        parts = urlsplit(target)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        path = parts.path
        if path == "/robots.txt":
            return Response(200, ROBOTS_TXT.encode(), "text/plain; charset=UTF-8", last_modified=self.bed.mtime)
        if path in ("", "/", "/w", "/w/"):
            return self._redirect(url_path(MAIN_PAGE))
        if path == API_PATH:
            answer = self.api.respond(query)
            return Response(answer.status, answer.body, answer.content_type, headers=tuple(answer.headers.items()))
        if path == "/load.php":
            return Response(200, self.static["css"], "text/css; charset=utf-8", last_modified=self.bed.mtime)
        if path.startswith("/images/") or path == "/favicon.ico":
            return Response(200, self.static["png"], "image/png", last_modified=self.bed.mtime)
        if path == "/index.php" and "title" in query:
            key = dbkey(query["title"])
        elif path.startswith("/w/"):
            key = unquote(path[3:])
            if " " in key:  # MediaWiki sends a title with spaces to its URL with underscores
                return self._redirect(url_path(key) + (f"?{parts.query}" if parts.query else ""))
        else:
            return Response(404, b"<!DOCTYPE html><html><body><h1>Not Found</h1></body></html>")
        if "action" in query or "oldid" in query:
            return self._message(key, "View source", "The test bed keeps one revision of each page and cannot be edited.")
        if key == dbkey(MAIN_PAGE):
            return self._page(MAIN_PAGE, self._main_page(), [], namespace=0)
        found = self.bed.lookup(key)
        if found is None:
            search = url_path(f"Special:Search/{key}")
            content = ('<div class="noarticletext mw-content-ltr" dir="ltr" lang="en"><p>There is currently no text in '
                       f'this page. You can <a href="{esc_attr(search)}">search for this page title</a> in other pages.'
                       '</p></div>')
            return self._page(key.replace("_", " "), content, [], status=404, canonical=False)
        title, alias = found
        if alias is not None and query.get("redirect") == "no":
            content = wrap_parser_output(f'<div class="redirectMsg"><p>Redirect to:</p><ul class="redirectText"><li>'
                                         f'<a href="{esc_attr(url_path(title))}">{esc(title)}</a></li></ul></div>')
            return self._page(alias, content, [], subtitle='<span id="redirectsub">Redirect page</span>')
        content, toc = self._body(self.bed.pages[title])
        subtitle = ""
        if alias is not None:
            link = (f'<a href="{esc_attr(url_path(alias))}?redirect=no" class="mw-redirect" title="{esc_attr(alias)}">'
                    f'{esc(alias)}</a>')
            subtitle = f'<span class="mw-redirectedfrom">(Redirected from {link})</span>'
        return self._page(title, content, toc, subtitle=subtitle, redirected_from=alias)

    # ------------------------------------------------------------------ changes at run time

    def edit(self, title: str, text: str) -> None:
        """Replace a page's text (one paragraph a line); recorded in list=recentchanges."""
        self.store.edit(title, text)
        with self._lock:
            self._bodies.clear()    # the page, and the navboxes that name it

    def delete(self, title: str) -> None:
        """Delete a page with its aliases; recorded in list=recentchanges."""
        self.store.delete(title)
        with self._lock:
            self.titles = sorted(self.bed.pages, key=str.casefold)
            self._bodies.clear()

    # ------------------------------------------------------------------ whole pages

    def _redirect(self, path: str) -> Response:
        location = self.base_url + path
        body = f'<!DOCTYPE html><html><body><p>Moved to <a href="{esc_attr(location)}">{esc(location)}</a>.</p></body></html>'
        return Response(301, body.encode(), location=location)

    def _message(self, key: str, heading: str, message: str) -> Response:
        return self._page(key.replace("_", " "), f"<p>{esc(message)}</p>", [], heading=heading, canonical=False)

    def _page(self, title: str, content: str, toc: list[dict], *, status: int = 200, subtitle: str = "",
              redirected_from: str | None = None, heading: str | None = None, canonical: bool = True,
              namespace: int | None = None) -> Response:
        number = namespace_number(title) if namespace is None else namespace
        prefix, colon, rest = title.partition(":") if number != 0 else ("", "", title)
        ids = self.store.page_id(title) if status == 200 else 0
        rlconf = {
            "wgBreakFrames": False, "wgCanonicalNamespace": dbkey(prefix), "wgCanonicalSpecialPageName": False,
            "wgNamespaceNumber": number, "wgPageName": dbkey(title), "wgTitle": rest,
            "wgCurRevisionId": ids, "wgRevisionId": ids, "wgArticleId": ids, "wgIsArticle": status == 200,
            "wgIsRedirect": False, "wgAction": "view", "wgUserName": None, "wgUserGroups": ["*"],
            "wgCategories": [], "wgPageContentLanguage": "en", "wgPageContentModel": "wikitext",
            "wgRelevantPageName": dbkey(title), "wgRelevantArticleId": ids, "wgIsProbablyEditable": False,
            "wgSiteName": SITE_NAME, "wgArticlePath": "/w/$1", "wgScriptPath": "", "wgServer": self.base_url,
            "wgIsMainPage": title == MAIN_PAGE, "wgVector2022PreviewPages": [],
        }
        if redirected_from:
            rlconf["wgRedirectedFrom"] = dbkey(redirected_from)
            rlconf["wgInternalRedirectTargetUrl"] = url_path(title)
        title_html = (f'<span class="mw-page-title-namespace">{esc(prefix)}</span><span class="mw-page-title-separator">:'
                      f'</span><span class="mw-page-title-main">{esc(rest)}</span>' if colon
                      else f'<span class="mw-page-title-main">{esc(title)}</span>')
        page_html = self.templates.get_template("page.html").render(
            html_title=f"{heading or title} – {SITE_NAME}",
            rlconf_json=Markup(json.dumps(rlconf, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")),
            mediawiki_version=MEDIAWIKI_VERSION, robots="max-image-preview:standard" if status == 200 else "noindex,nofollow",
            canonical_url=self.base_url + url_path(title) if canonical else "",
            namespace=number, page_class=css_class(title), site_name=SITE_NAME, page_name=dbkey(title),
            page_path=url_path(title), toc=toc, heading_html=Markup(esc(heading) if heading else title_html),
            subtitle_html=Markup(subtitle), content_html=Markup(content), last_edited=edited_date(self.bed.mtime))
        return Response(status, page_html.encode("utf-8"), last_modified=self.bed.mtime if status == 200 else None)

    def _main_page(self) -> str:
        aliases = sorted((alias for page in self.bed.pages.values() for alias in page.aliases
                          if zlib.crc32(alias.encode("utf-8")) % ALIASES_LINKED == 0), key=str.casefold)
        articles = "".join(f"<li>{_link(title)}</li>" for title in self.titles)
        others = "".join(f'<li>{_link(alias, css="mw-redirect")}</li>' for alias in aliases)
        return wrap_parser_output(
            f"<p>This is the Jarvis test bed: {len(self.titles)} pages of the Minecraft Wiki served on this machine "
            "for tests and measurement. The pages link nowhere, so this page links all of them.\n</p>"
            f'<div class="mw-heading mw-heading2"><h2 id="Pages">Pages</h2></div><ul>{articles}</ul>'
            f'<div class="mw-heading mw-heading2"><h2 id="Other_names">Other names</h2></div><ul>{others}</ul>')

    # ------------------------------------------------------------------ article bodies

    def _body(self, page: BedPage) -> tuple[str, list[dict]]:
        with self._lock:
            cached = self._bodies.get(page.title)
        if cached is None:
            cached = _ArticleBody(page, self._neighbours(page.title)).render()
            with self._lock:
                self._bodies[page.title] = cached
        return cached

    def _neighbours(self, title: str) -> list[str]:
        i = self.titles.index(title)
        return self.titles[max(0, i - NAVBOX_NEIGHBOURS):i] + self.titles[i + 1:i + 1 + NAVBOX_NEIGHBOURS]


class _ArticleBody:
    """The .mw-parser-output of one test-bed page, as MediaWiki 1.43 writes it."""

    def __init__(self, page: BedPage, neighbours: list[str]) -> None:
        self.page = page
        self.neighbours = neighbours
        self.anchors: set[str] = set()
        self.toc: list[dict] = []
        self.notes = 0
        self.edit = 0
        self.navboxes = False    # the last table was a navbox: the page's navboxes have begun

    def render(self) -> tuple[str, list[dict]]:
        out: list[str] = []
        previous: tuple[str, ...] = ()
        for index, section in enumerate(self.page.sections):
            path = section.path
            common = 0
            while common < min(len(path), len(previous)) and path[common] == previous[common]:
                common += 1
            if path and common == len(path):
                common -= 1  # the same section path again: its heading again
            for depth in range(common, len(path)):
                out.append(self.heading(path[depth], depth + 2))
            if index == 0:
                out += [self.hatnote(v) for k, v in section.blocks if k == "hatnote"]
                out.append(self.infobox())
                out += self.blocks([b for b in section.blocks if b[0] != "hatnote"])
            else:
                if index == 1:
                    out.append(self.figure())
                out += self.blocks(list(section.blocks))
            previous = path
        if self.notes:
            items = "".join(f'<li id="cite_note-{n}"><span class="mw-cite-backlink"><a href="#cite_ref-{n}">↑</a></span> '
                            f'<span class="reference-text">Reference {n}, not kept by the test bed.</span></li>'
                            for n in range(1, self.notes + 1))
            out.append(f'<div class="mw-references-wrap"><ol class="references">{items}</ol></div>')
        out.append(self.navbox())
        return wrap_parser_output("\n".join(out)), self.toc

    def blocks(self, blocks: list[tuple[str, object]]) -> list[str]:
        out: list[str] = []
        items: list[str] = []
        for kind, value in blocks:
            if kind != "li" and items:
                out.append("<ul>" + "".join(items) + "</ul>")
                items = []
            if kind == "li":
                items.append(f"<li>{self.prose(str(value))}</li>")
            elif kind == "p":
                out.append(f"<p>{self.prose(str(value))}\n</p>")
            elif kind == "hatnote":
                out.append(self.hatnote(str(value)))
            elif kind == "table":
                rows = value  # type: ignore[assignment]
                self.navboxes = is_navbox(rows, self.navboxes)
                out.append(navbox_html(rows) if self.navboxes else table_html(rows))
        if items:
            out.append("<ul>" + "".join(items) + "</ul>")
        return out

    def heading(self, text: str, level: int) -> str:
        level = min(level, 6)
        anchor = unique_anchor(text, self.anchors)
        self.edit += 1
        self.toc.append({"anchor": anchor, "level": level - 1, "number": str(len(self.toc) + 1), "text": text})
        edit = index_php(self.page.title, action="edit", section=str(self.edit))
        return (f'<div class="mw-heading mw-heading{level}"><h{level} id="{esc_attr(anchor)}">{esc(text)}</h{level}>'
                f'<span class="mw-editsection"><span class="mw-editsection-bracket">[</span><a href="{esc_attr(edit)}" '
                f'title="Edit section: {esc_attr(text)}"><span>edit</span></a><span class="mw-editsection-bracket">]'
                f'</span></span></div>')

    def prose(self, text: str) -> str:
        """Paragraph text: reference markers become sup.reference, `code` becomes <code>."""
        out, pos = [], 0
        for match in _REFERENCE.finditer(text):
            self.notes += 1
            out.append(_inline(text[pos:match.start()]))
            out.append(f'<sup id="cite_ref-{self.notes}" class="reference"><a href="#cite_note-{self.notes}">'
                       f'<span class="cite-bracket">&#91;</span>{esc(match.group()[1:-1])}'
                       f'<span class="cite-bracket">&#93;</span></a></sup>')
            pos = match.end()
        out.append(_inline(text[pos:]))
        return "".join(out)

    @staticmethod
    def hatnote(text: str) -> str:
        return f'<div role="note" class="hatnote navigation-not-searchable">{_inline(text)}</div>'

    def infobox(self) -> str:
        tables = sum(1 for s in self.page.sections for kind, _ in s.blocks if kind == "table")
        rows = "".join(f"<tr><th>{esc(k)}</th><td><p>{esc(v)}</p></td></tr>" for k, v in [
            ("Sections", str(len(self.page.sections))), ("Tables", str(tables)),
            ("Other names", ", ".join(self.page.aliases) or "none")])
        return (f'<div class="notaninfobox"><div class="infobox-title">{esc(self.page.title)}</div>'
                f'<div class="infobox-imagearea">{_image(self.page.title)}</div>'
                f'<table class="infobox-rows"><tbody>{rows}</tbody></table></div>')

    def figure(self) -> str:
        return (f'<figure class="mw-default-size" typeof="mw:File/Thumb">{_image(self.page.title)}'
                f'<figcaption>Picture of {esc(self.page.title)} in the test bed.</figcaption></figure>')

    def navbox(self) -> str:
        links = "".join(f"<li>{_link(title)}</li>" for title in self.neighbours)
        return ('<div role="navigation" class="navbox" aria-labelledby="Test_bed_pages"><table class="navbox-inner">'
                '<tbody><tr><th colspan="2" class="navbox-title"><div id="Test_bed_pages">Nearby pages</div></th></tr>'
                f'<tr><th class="navbox-group">Pages</th><td class="navbox-list hlist"><ul>{links}</ul></td></tr>'
                '</tbody></table></div>')


def table_html(rows: list[list[str]]) -> str:
    """A test-bed table (rows of cell strings, header first) as the wiki's wikitable markup."""
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    rows = [list(row) + [""] * (width - len(row)) for row in rows]
    groups = _header_groups(rows[0])
    two_rows = len(rows) > 2 and _is_sub_header(rows[1], groups)
    head = []
    for start, span, text in groups:
        subdivided = two_rows and any(rows[1][start:start + span])
        attrs = (f' colspan="{span}"' if span > 1 else "") + (' rowspan="2"' if two_rows and not subdivided else "")
        head.append(f"<th{attrs}>{_cell(text)}\n</th>")
    lines = ["<tr>" + "".join(head) + "</tr>"]
    if two_rows:
        sub = [f"<th>{_cell(rows[1][c])}\n</th>" for start, span, _ in groups
               if any(rows[1][start:start + span]) for c in range(start, start + span)]
        lines.append("<tr>" + "".join(sub) + "</tr>")
    data = rows[2:] if two_rows else rows[1:]
    image_column = bool(groups) and groups[0][1] > 1   # "Item" over an icon and a name
    covered = 0
    for i, row in enumerate(data):
        cells = []
        for c, text in enumerate(row):
            if c == 0 and covered:
                covered -= 1
                continue
            if c == 0 and text:
                span = 1
                while i + span < len(data) and data[i + span][0] == text:
                    span += 1
                covered = span - 1
                rowspan = f' rowspan="{span}"' if span > 1 else ""
                cells.append(f"<td{rowspan}>{_cell(text)}\n</td>")
            elif not text and c == 0 and image_column:
                cells.append(f"<td>{_image('')}</td>")
            else:
                cells.append(f"<td>{_cell(text)}\n</td>")
        lines.append("<tr>" + "".join(cells) + "</tr>")
    return '<table class="wikitable">\n<tbody>' + "\n".join(lines) + "</tbody></table>"


def is_navbox(rows: list[list[str]], after_navbox: bool = False) -> bool:
    """A navbox the bed's crawl saved as a table: a title row over two columns, then rows of a short
    group name and a list of page names ("Utilities" | "Boat<br/>Bucket<br/>..."); after a navbox,
    any two-column table of short group names (the crawl split nested groups into tables of their
    own). The live wiki marks these ``.navbox``, so the mirror does too."""
    if not rows or any(len(row) != 2 or len(row[0].split()) > 6 for row in rows):
        return False
    if after_navbox:
        return True
    if len(rows) < 2 or not rows[0][0] or rows[0][1]:
        return False
    return any(_BREAK.search(cell) or (len(cell.split()) > 8 and ". " not in cell) for _, cell in rows[1:])


def navbox_html(rows: list[list[str]]) -> str:
    title = rows[0][0]
    lines = [f'<tr><th colspan="2" class="navbox-title">{_inline(title)}</th></tr>']
    for group, cell in rows[1:]:
        items = "".join(f"<li>{_inline(item.strip())}</li>" for item in _BREAK.split(cell) if item.strip())
        lines.append(f'<tr><th scope="row" class="navbox-group">{_inline(group)}</th>'
                     f'<td class="navbox-list hlist"><ul>{items}</ul></td></tr>')
    return f'<div role="navigation" class="navbox"><table class="navbox-inner"><tbody>{"".join(lines)}</tbody></table></div>'


def _header_groups(header: list[str]) -> list[tuple[int, int, str]]:
    """(first column, span, text): a filled header cell and the empty cells after it."""
    groups: list[tuple[int, int, str]] = []
    for column, text in enumerate(header):
        if text or not groups or groups[-1][2] == "":
            groups.append((column, 1, text))
        else:
            start, span, label = groups[-1]
            groups[-1] = (start, span + 1, label)
    return groups


def _is_sub_header(row: list[str], groups: list[tuple[int, int, str]]) -> bool:
    """A second row that only names the columns under spanning headers ("Default", "Looting I")."""
    subdivides = False
    for start, span, _ in groups:
        cells = row[start:start + span]
        if span > 1 and all(cells):
            subdivides = True
        elif any(cells):
            return False
    return subdivides


def _inline(text: str) -> str:
    return _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", esc(text))


def _cell(text: str) -> str:
    return "<br>".join(_inline(part) for part in _BREAK.split(text))


def _link(title: str, css: str = "") -> str:
    attrs = f' class="{css}"' if css else ""
    return f'<a href="{esc_attr(url_path(title))}"{attrs} title="{esc_attr(title)}">{esc(title)}</a>'


def _image(title: str) -> str:
    return ('<span typeof="mw:File"><a href="/w/File:Test_bed.png" class="mw-file-description">'
            f'<img alt="{esc_attr(title)}" src="/images/Test_bed.png" decoding="async" width="32" height="32" '
            'class="mw-file-element"></a></span>')


# --------------------------------------------------------------------------- serving


class RealBedServer(SiteServer):
    """The test bed over HTTP."""

    def __init__(self, host: str, port: int, bed: RealBed) -> None:
        super().__init__(host, port, lambda base_url: RealBedSite(bed, base_url), "the real-wiki test bed")


def start_realbed_wiki(pages: str | Path = REALBED_PAGES, host: str = SAMPLE_WIKI_HOST,
                       port: int = 0) -> tuple[RealBedServer, str]:
    """Serve the test bed from a daemon thread; returns (server, base URL). Stop it with ``server.shutdown()``.
    Raises RealBedMissing when the pages file is not there."""
    server = RealBedServer(host, port, RealBed.load(pages))
    server.serve_in_thread("realbed-wiki")
    return server, server.base_url


def serve_realbed_wiki(pages: str | Path = REALBED_PAGES, host: str = SAMPLE_WIKI_HOST,
                       port: int = REALBED_PORT) -> None:
    """Serve the test bed until Ctrl-C."""
    bed = RealBed.load(pages)
    server = RealBedServer(host, port, bed)
    print(f"Real-wiki test bed at {server.base_url}{url_path(MAIN_PAGE)} ({len(bed.pages)} pages, "
          f"{sum(len(p.aliases) for p in bed.pages.values())} redirects); Ctrl-C stops it.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("Test bed stopped.", flush=True)
    finally:
        server.server_close()
