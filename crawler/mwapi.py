"""The client side of the MediaWiki Action API: which pages a wiki has, what redirects to them,
their categories, and what changed since a given time, in as few requests as the API allows.

- ``find_site_name``: the wiki's name as a page states it (RLCONF's ``wgSiteName``), for crawls without an API.
- ``find_api_url``: where a page says its wiki's ``api.php`` is (``<link rel="EditURI">``, else
  RLCONF's ``wgScriptPath``); a page that says it is MediaWiki but names no API gets one probe of
  ``/api.php``.
- ``WikiApi.listing()``: every article (``generator=allpages``, namespace 0, no redirects) with
  ``prop=info|categories|redirects`` in the same queries, plus ``meta=siteinfo`` (the wiki's name too): a few hundred
  pages per request, aliases without downloading a single redirect page; then the same for each
  spin-off game's namespace (``siprop=namespaces`` names them), whose pages a link crawl stores too.
- ``WikiApi.changes_since(t)``: ``list=recentchanges`` (edits, new pages, moves, deletions).
- ``WikiApi.pages(titles)``: the same page facts for up to 50 titles a request, redirects resolved.

Every request sends ``maxlag`` (a busy wiki answers "later", and the Fetcher waits as the
``Retry-After`` says) and follows ``continue`` until the answer is complete.
"""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Iterator
from urllib.parse import urlencode, urljoin, urlsplit, urlunsplit

from jarvis.crawler.fetch import Fetcher

log = logging.getLogger(__name__)

TITLES_PER_QUERY = 50            # MediaWiki's limit for titles= (without apihighlimits)
_LINK_TAG = re.compile(r"<link\b[^>]*>", re.IGNORECASE)
_ATTRIBUTE = re.compile(r"""([\w-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""")
_SCRIPT_PATH = re.compile(r'"wgScriptPath"\s*:\s*"((?:[^"\\]|\\.)*)"')
_SITE_NAME = re.compile(r'"wgSiteName"\s*:\s*("(?:[^"\\]|\\.)*")')
_GENERATOR = re.compile(r"""<meta\s[^>]*name=["']generator["'][^>]*content=["']MediaWiki""", re.IGNORECASE)


class ApiError(Exception):
    """The API did not answer usefully (HTTP error, not JSON, an error code)."""


def find_api_url(html: str, page_url: str) -> str | None:
    """The wiki's api.php as the page names it, or a guess worth one probe; None for a page
    that does not look like MediaWiki at all."""
    head = html[:200_000]
    for tag in _LINK_TAG.findall(head):
        attributes = {m.group(1).lower(): next(g for g in m.groups()[1:] if g is not None)
                      for m in _ATTRIBUTE.finditer(tag)}
        if attributes.get("rel", "").lower() == "edituri" and attributes.get("href"):
            parts = urlsplit(urljoin(page_url, attributes["href"]))
            return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    parts = urlsplit(page_url)
    match = _SCRIPT_PATH.search(head)
    if match:
        return f"{parts.scheme}://{parts.netloc}{match.group(1)}/api.php"
    if _GENERATOR.search(head):
        return f"{parts.scheme}://{parts.netloc}/api.php"
    return None


def find_site_name(html: str) -> str:
    """The wiki's name as a MediaWiki page states it (RLCONF's ``wgSiteName``), or "" when it does not."""
    match = _SITE_NAME.search(html[:200_000])
    if match is None:
        return ""
    try:
        name = json.loads(match.group(1))
    except ValueError:
        return ""
    return " ".join(name.split()) if isinstance(name, str) else ""


@dataclass
class PageFacts:
    """What the API says about one page."""

    title: str
    pageid: int = 0
    revid: int = 0
    redirects: list[str] = field(default_factory=list)    # titles that redirect here (namespace 0)
    categories: list[str] = field(default_factory=list)   # names without "Category:"


@dataclass
class Listing:
    articlepath: str                                     # "/w/$1"
    server_time: str                                     # the wiki's clock when the listing began
    mainpage: str
    pages: dict[str, PageFacts] = field(default_factory=dict)  # title -> facts
    namespaces: list[int] = field(default_factory=lambda: [0])  # the namespaces listed (0 and spin-offs')
    sitename: str = ""                                   # the wiki's name, as siteinfo says it


@dataclass
class Resolved:
    """``pages(titles)``: the pages the titles lead to, and which titles lead nowhere."""

    pages: dict[str, PageFacts] = field(default_factory=dict)   # existing target title -> facts
    missing: set[str] = field(default_factory=set)
    redirected: dict[str, str] = field(default_factory=dict)    # redirect title -> target title


class WikiApi:
    """One wiki's api.php, through the crawl's Fetcher (robots, throttle, retries, traffic count)."""

    def __init__(self, fetcher: Fetcher, api_url: str, maxlag: int = 5) -> None:
        self.fetcher = fetcher
        self.url = api_url
        self.maxlag = maxlag

    def query(self, params: dict[str, str]) -> Iterator[dict]:
        """Each answer of a query, following ``continue`` to the end. ApiError when one fails."""
        base = {"action": "query", "format": "json", "formatversion": "2", "maxlag": str(self.maxlag), **params}
        cont: dict[str, str] = {}
        while True:
            data = self._get({**base, **cont})
            yield data
            if "continue" not in data:
                return
            cont = {k: str(v) for k, v in data["continue"].items()}

    def _get(self, params: dict[str, str]) -> dict:
        result = self.fetcher.get_json(f"{self.url}?{urlencode(params)}", later=_is_maxlag)
        if result.error:
            raise ApiError(result.error)
        data = result.data
        if not isinstance(data, dict):
            raise ApiError("not an API answer")
        if "error" in data:
            error = data["error"] if isinstance(data["error"], dict) else {}
            raise ApiError(f"API error {error.get('code', '?')}: {error.get('info', '')}".strip())
        return data

    def listing(self, also_namespaces: tuple[str, ...] = ()) -> Listing:
        """Every article of the wiki with its redirects and categories (see the module docstring),
        and the pages of the namespaces named in also_namespaces (the spin-off games' namespaces,
        which a link crawl stores too): one more listing for each such namespace the wiki has."""
        listing: Listing | None = None
        wanted = {_folded(name) for name in also_namespaces}
        extra: list[int] = []
        pages = {"generator": "allpages", "gapfilterredir": "nonredirects", "gaplimit": "max",
                 "prop": "info|categories|redirects", "cllimit": "max", "rdlimit": "max", "rdnamespace": "0",
                 "rdprop": "title"}
        for data in self.query({"meta": "siteinfo", "siprop": "general|namespaces", "gapnamespace": "0", **pages}):
            query = data.get("query", {})
            if listing is None:
                general = query.get("general")
                if not isinstance(general, dict) or "articlepath" not in general:
                    raise ApiError("no siteinfo in the answer")
                sitename = general.get("sitename")
                listing = Listing(articlepath=general["articlepath"], server_time=general.get("time", ""),
                                  mainpage=general.get("mainpage", ""),
                                  sitename=" ".join(sitename.split()) if isinstance(sitename, str) else "")
                namespaces = query.get("namespaces") if isinstance(query.get("namespaces"), dict) else {}
                extra = sorted(n["id"] for n in namespaces.values() if isinstance(n, dict) and isinstance(n.get("id"), int)
                               and n["id"] > 0 and {_folded(n.get("name") or ""), _folded(n.get("canonical") or "")} & wanted)
            _merge_pages(listing.pages, query.get("pages", []))
        assert listing is not None
        listing.namespaces = [0, *extra]
        for namespace in extra:
            for data in self.query({"gapnamespace": str(namespace), **pages}):
                _merge_pages(listing.pages, data.get("query", {}).get("pages", []))
        return listing

    def pages(self, titles: list[str], namespaces: tuple[int, ...] = (0,)) -> Resolved:
        """Facts about the pages that titles lead to, 50 titles a request, redirects resolved;
        pages outside namespaces count as missing."""
        resolved = Resolved()
        titles = sorted(set(titles))
        for start in range(0, len(titles), TITLES_PER_QUERY):
            batch = titles[start:start + TITLES_PER_QUERY]
            for data in self.query({"titles": "|".join(batch), "redirects": "1", "prop": "info|categories|redirects",
                                    "cllimit": "max", "rdlimit": "max", "rdnamespace": "0", "rdprop": "title"}):
                query = data.get("query", {})
                for item in query.get("redirects", []):
                    resolved.redirected[item["from"]] = item["to"]
                existing = [p for p in query.get("pages", []) if not p.get("missing") and not p.get("invalid")]
                resolved.missing.update(p["title"] for p in query.get("pages", []) if p.get("missing"))
                resolved.missing.update(p["title"] for p in existing if p.get("ns") not in namespaces)
                _merge_pages(resolved.pages, [p for p in existing if p.get("ns") in namespaces and not p.get("redirect")])
        return resolved

    def changes_since(self, timestamp: str, namespaces: tuple[int, ...] = (0,)) -> tuple[list[dict], str]:
        """Recent changes in the namespaces (the listed ones) from timestamp on, oldest first, and
        the wiki's clock at the time of asking (where the next update starts)."""
        changes: list[dict] = []
        now = ""
        for data in self.query({"meta": "siteinfo", "siprop": "general", "list": "recentchanges",
                                "rcstart": timestamp, "rcdir": "newer", "rcnamespace": "|".join(map(str, namespaces)), "rclimit": "max",
                                "rctype": "edit|new|log", "rcprop": "title|ids|timestamp|loginfo|redirect"}):
            query = data.get("query", {})
            now = now or query.get("general", {}).get("time", "")
            changes.extend(query.get("recentchanges", []))
        return changes, now


def changed_titles(changes: list[dict]) -> tuple[set[str], set[str]]:
    """(titles whose content may have changed, every title a change touched): edits and new
    pages name one title, a move two (the old one becomes a redirect), a deletion one."""
    content: set[str] = set()
    touched: set[str] = set()
    for change in changes:
        title = change.get("title")
        if not title:
            continue
        touched.add(title)
        if change.get("type") in ("edit", "new"):
            content.add(title)
        elif change.get("logtype") == "move":
            target = (change.get("logparams") or {}).get("target_title")
            if target and (change.get("logparams") or {}).get("target_ns", 0) == 0:
                touched.add(target)
                content.add(target)
        elif change.get("logtype") == "delete" and change.get("logaction") in ("restore", "revision"):
            content.add(title)
    return content, touched


def _merge_pages(pages: dict[str, PageFacts], items: list[dict]) -> None:
    """Merge one answer's pages into pages: a continued answer repeats a page with more of its
    redirects or categories."""
    for item in items:
        title = item.get("title")
        if not title:
            continue
        facts = pages.setdefault(title, PageFacts(title=title))
        facts.pageid = item.get("pageid", facts.pageid)
        facts.revid = item.get("lastrevid", facts.revid)
        facts.redirects += [r["title"] for r in item.get("redirects", []) if r.get("title")]
        facts.categories += [c["title"].partition(":")[2] for c in item.get("categories", []) if c.get("title")]


def _folded(name: str) -> str:
    return " ".join(name.replace("_", " ").split()).casefold()


def _is_maxlag(data: object) -> bool:
    return isinstance(data, dict) and isinstance(data.get("error"), dict) and data["error"].get("code") == "maxlag"
