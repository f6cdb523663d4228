"""Special: pages, rendered per request because they depend on the query.

Only the ones the skin links to exist; any other name gets MediaWiki's "No such special page"
(404). robots.txt keeps crawlers out of Special: as the real wiki does.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from jarvis_lab.samplewiki.body import Body, esc
from jarvis_lab.samplewiki.render import HtmlPage, PageView, Renderer, edited_date
from jarvis_lab.samplewiki.source import Link
from jarvis_lab.samplewiki.titles import MAIN_PAGE, normalize_title, url_path


@dataclass(frozen=True)
class Redirect:
    """An HTTP redirect answer (Special:Random, Special:Search with an exact title)."""
    location: str       # a path on this site
    status: int = 302


Answer = HtmlPage | Redirect


def special_page(renderer: Renderer, name: str, query: dict[str, str]) -> Answer:
    """Special:Name[/subpage]; ``query`` holds the request's parameters (first value of each)."""
    page, _, subpage = name.partition("/")
    handler = _HANDLERS.get(page.casefold())
    if handler is None:
        return renderer.message_page(f"Special:{name}", "No such special page", "You have requested an invalid "
                                     "special page. A list of valid special pages can be found at Special pages.",
                                     status=404)
    return handler(_Special(renderer, f"Special:{_CANONICAL[page.casefold()]}"), subpage, query)


class _Special:
    def __init__(self, renderer: Renderer, title: str) -> None:
        self.renderer = renderer
        self.wiki = renderer.wiki
        self.title = title
        self.body = Body(renderer.wiki, title)

    def link(self, title: str) -> str:
        return self.body.link(Link(title, "", title))

    def page(self, heading: str, content: str) -> HtmlPage:
        return self.renderer.view(PageView(title=self.title, heading=heading, content_html=content,
                                           robots="noindex,nofollow", last_modified=self.wiki.newest_mtime))

    def list_page(self, heading: str, intro: str, items: list[str]) -> HtmlPage:
        lines = "".join(f"<li>{item}</li>" for item in items)
        return self.page(heading, f'<p>{esc(intro)}\n</p><ul class="special">{lines}</ul>')


def _random(special: _Special, subpage: str, query: dict[str, str]) -> Answer:
    return Redirect(url_path(random.choice(sorted(special.wiki.articles))))


def _recent_changes(special: _Special, subpage: str, query: dict[str, str]) -> Answer:
    articles = sorted(special.wiki.articles.values(), key=lambda a: (-a.mtime, a.title))[:50]
    items = [f"{esc(edited_date(a.mtime))} . . {special.link(a.title)}" for a in articles]
    return special.list_page("Recent changes", "The most recently changed articles of this wiki.", items)


def _categories(special: _Special, subpage: str, query: dict[str, str]) -> Answer:
    names = sorted(special.wiki.categories, key=str.casefold)
    items = [f"{special.link('Category:' + n)} ({len(special.wiki.categories[n])} members)" for n in names]
    return special.list_page("Categories", "The following categories exist in the wiki.", items)


def _special_pages(special: _Special, subpage: str, query: dict[str, str]) -> Answer:
    items = [f'<a href="{url_path("Special:" + n)}" title="Special:{n}">{esc(n)}</a>' for n in sorted(_CANONICAL.values())]
    return special.list_page("Special pages", "The special pages of this wiki.", items)


def _what_links_here(special: _Special, subpage: str, query: dict[str, str]) -> Answer:
    target = normalize_title(subpage or query.get("target", ""))
    if not target:
        return special.page("What links here", "<p>Give a page title: Special:WhatLinksHere/Title.\n</p>")
    wiki = special.wiki
    sources = [t for t in [*wiki.articles, *wiki.duplicates, MAIN_PAGE, *wiki.disambiguations, *wiki.pages]
               if target in wiki.links_from(t)]
    return special.list_page(f'Pages that link to "{target}"', f"The following pages link to {target}:",
                             [special.link(t) for t in sorted(sources)])


def _search(special: _Special, subpage: str, query: dict[str, str]) -> Answer:
    text = " ".join((query.get("search") or subpage).split())
    wiki = special.wiki
    exact = normalize_title(text) if text else ""
    if exact and wiki.exists(exact):
        return Redirect(url_path(exact))            # MediaWiki's "Go": an exact title opens the page
    words = text.casefold().split()
    names = [*wiki.articles, *wiki.redirects, *wiki.duplicates]
    hits = sorted(t for t in names if words and all(w in t.casefold() for w in words))
    return special.list_page("Search results", f'Pages whose title matches "{text}":' if text else "Search the wiki.",
                             [special.link(t) for t in hits])


def _no_accounts(special: _Special, subpage: str, query: dict[str, str]) -> Answer:
    return special.page("Accounts", "<p>This sample wiki has no user accounts; it cannot be edited.\n</p>")


_HANDLERS: dict[str, Callable[[_Special, str, dict[str, str]], Answer]] = {
    "random": _random, "recentchanges": _recent_changes, "categories": _categories,
    "specialpages": _special_pages, "whatlinkshere": _what_links_here, "search": _search,
    "userlogin": _no_accounts, "createaccount": _no_accounts, "mytalk": _no_accounts,
    "mycontributions": _no_accounts,
}
_CANONICAL = {name.casefold(): name for name in (
    "Random", "RecentChanges", "Categories", "SpecialPages", "WhatLinksHere", "Search", "UserLogin",
    "CreateAccount", "MyTalk", "MyContributions")}
