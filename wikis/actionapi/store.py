"""What a wiki must offer for ``ActionApi`` to serve it: a small, read-only page store.

Titles are in MediaWiki's normal form with their namespace prefix ("Cow", "Category:Passive mobs").
The store knows nothing of HTTP or JSON; ``ActionApi`` does the rest (limits, continuation,
redirect resolution, maxlag).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol


def api_timestamp(seconds: float) -> str:
    """ISO 8601 in UTC, whole seconds, as the API writes timestamps: "2024-05-01T12:00:00Z"."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


@dataclass(frozen=True)
class SiteInfo:
    """meta=siteinfo&siprop=general."""

    sitename: str
    mainpage: str                    # title of the main page
    server: str                      # "https://minecraft.wiki" (scheme and host of the wiki)
    articlepath: str = "/w/$1"
    scriptpath: str = ""             # api.php lives at server + scriptpath + "/api.php"
    generator: str = "MediaWiki 1.43.1"
    lang: str = "en"
    namespaces: tuple[tuple[int, str], ...] = ((0, ""),)   # siprop=namespaces: (number, name), articles' first


@dataclass(frozen=True)
class StoredPage:
    """One page as the API describes it (prop=info, prop=categories; redirects by redirect_to)."""

    pageid: int
    title: str
    ns: int
    revid: int
    touched: float                   # seconds since the epoch
    length: int                      # bytes of wikitext (any stable size will do)
    redirect_to: str | None = None   # target title when the page is a redirect
    categories: tuple[str, ...] = ()  # category names without the "Category:" prefix, hidden ones too


@dataclass(frozen=True)
class Change:
    """One row of list=recentchanges. type: "new", "edit" or "log"; log rows have logtype
    ("move", "delete") and logaction ("move", "delete", "restore"); a move's logparams has
    target_ns and target_title."""

    rcid: int
    type: str
    ns: int
    title: str
    pageid: int
    revid: int
    old_revid: int
    timestamp: float
    redirect: bool = False           # the page is a redirect now
    logid: int = 0
    logtype: str | None = None
    logaction: str | None = None
    logparams: dict = field(default_factory=dict)


class PageStore(Protocol):
    """The wiki behind an ActionApi. Every method is read-only and safe to call from several threads."""

    def site_info(self) -> SiteInfo: ...

    def titles(self, namespace: int) -> list[str]:
        """Every existing page in the namespace, redirects included, any order."""
        ...

    def page(self, title: str) -> StoredPage | None:
        """The page with this normal-form title, None if there is none."""
        ...

    def parser_output(self, title: str) -> str:
        """The rendered content of an existing non-redirect page: its ``<div class="mw-parser-output">``."""
        ...

    def normalize(self, title: str) -> str:
        """MediaWiki's normal form of a title as a client spelled it ("cow" -> "Cow")."""
        ...

    def changes(self) -> list[Change]:
        """The recent changes, oldest first."""
        ...

    def lag(self) -> float:
        """Replication lag in seconds (0 for a single database): above the client's maxlag, the API says wait."""
        ...
