"""From fetch records to corpus pages: one page per content, every title that reached it an alias.

Two steps. URLs whose canonical URL is the same are one page (wiki redirects, HTTP redirects,
the page itself). Pages whose normalized content is the same (same sha1) are one corpus page
(duplicate copies, like Workbench and Crafting table). The corpus page's title is the title of
one of those pages, chosen by what the page says about itself, not by crawl order:
1. the title that comes first in the lead paragraph ("A crafting table is ..."), as wiki
   articles name their subject in the first sentence (a longer title wins a tie);
2. then the title spelled as the lead spells it (after the first letter), then the one in
   sentence case (fewer capitals): "Crafting table" over its copy "Crafting Table";
3. then the title with more redirects pointing to it;
4. then alphabetical order.
The result does not depend on which URL the crawl happened to reach first.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable
from urllib.parse import urlsplit

from jarvis.crawler.corpus import Page
from jarvis.crawler.journal import Document, FetchRecord
from jarvis.crawler.urls import Scope, normalize_url


@dataclass
class _CanonicalPage:
    document: Document
    names: list[str] = field(default_factory=list)  # other titles that led here (redirects, other URLs)


def identity(url: str) -> str:
    """What identifies a page across hosts: its canonical URL's path (the test and resumed
    crawls may see the same wiki on another port)."""
    return urlsplit(normalize_url(url)).path


def alias_names(record: FetchRecord, scope: Scope) -> list[str]:
    """Titles, other than the page's own, that led to the record's page: wiki redirects, HTTP
    redirects, and the URL it was served under if that is not its canonical URL."""
    names = [t for t in map(scope.title_of, record.redirects) if t]
    document = record.document
    if document is None:  # a redirect to a page fetched elsewhere
        return names + [t for t in [scope.title_of(record.url)] if t]
    names += document.redirected_from
    if identity(document.url) != identity(document.canonical_url):
        title = scope.title_of(document.url)
        if title:
            names.append(title)
    return names


@dataclass
class BuiltCorpus:
    pages: list[Page]                                        # sorted by title
    broken_redirects: dict[str, str] = field(default_factory=dict)  # URL -> "redirect loop" or "dead redirect"


def build_pages(records: Iterable[FetchRecord], scope: Scope, max_pages: int | None = None) -> BuiltCorpus:
    """Corpus pages from a crawl's records (see the module docstring)."""
    records = list(records)
    canonical: dict[str, _CanonicalPage] = {}
    for record in records:
        document = record.document
        if record.skip is not None or document is None:
            continue
        key = identity(document.canonical_url)
        entry = canonical.get(key)
        if entry is None:
            entry = canonical[key] = _CanonicalPage(document)
        elif document.sha1 != entry.document.sha1 and identity(document.url) == key:
            entry.document = document  # the page changed during the crawl: its own URL has the last word
        entry.names += alias_names(record, scope)

    broken = {}
    by_url = _records_by_url(records)
    for record in records:
        if record.redirect_to is None:
            continue
        target = _follow_redirects(record, by_url)
        if not isinstance(target, FetchRecord):
            broken[record.url] = target
        elif target.skip is None and target.document is not None:
            canonical[identity(target.document.canonical_url)].names += alias_names(record, scope)

    by_content: dict[str, list[_CanonicalPage]] = {}
    for entry in canonical.values():
        by_content.setdefault(entry.document.sha1, []).append(entry)

    pages = []
    for sha1, members in by_content.items():
        chosen = min(members, key=_title_rank).document
        names = [name for m in members for name in m.names] + [m.document.title for m in members]
        pages.append(Page(title=chosen.title, url=chosen.canonical_url, paragraphs=list(chosen.paragraphs),
                          aliases=unique_aliases(names, chosen.title), sha1=sha1,
                          sections=([list(path) for path in chosen.sections]
                                    if len(chosen.sections) == len(chosen.paragraphs) else None),
                          page_kind=chosen.page_kind, categories=list(chosen.categories)))
    if max_pages is not None:
        pages = pages[:max_pages]
    return BuiltCorpus(sorted(pages, key=lambda p: (p.title.casefold(), p.title)), broken)


def _records_by_url(records: list[FetchRecord]) -> dict[str, FetchRecord]:
    """Each URL the crawl requested -> the record of that request (every URL is requested once)."""
    by_url: dict[str, FetchRecord] = {}
    for record in records:
        urls = [record.url, *record.redirects] + ([record.document.url] if record.document else [])
        for url in urls:
            by_url.setdefault(url, record)
    return by_url


def _follow_redirects(record: FetchRecord, by_url: dict[str, FetchRecord]) -> FetchRecord | str:
    """The record a chain of redirect records ends at, or why there is none."""
    visited = set()
    current = record
    while current.redirect_to is not None:
        if current.url in visited:
            return "redirect loop"
        visited.add(current.url)
        target = by_url.get(current.redirect_to)
        if target is None:
            return "dead redirect"  # its target was never fetched (the crawl stopped first)
        current = target
    return current


def unique_aliases(names: Iterable[str], title: str) -> list[str]:
    """Names other than title, each once, sorted. Case counts: "Crafting Table" is an alias of
    "Crafting table" (a reader may type either; the wiki has both pages)."""
    names = {" ".join(n.split()) for n in names if n and n.strip()}
    return sorted(names - {title}, key=lambda n: (n.casefold(), n))


def _title_rank(entry: _CanonicalPage) -> tuple:
    title = entry.document.title
    lead = entry.document.paragraphs[0] if entry.document.paragraphs else ""
    match = re.search(rf"(?<!\w){re.escape(title)}(?!\w)", lead, re.IGNORECASE)
    if match is None:
        position, same_spelling = len(lead) + 1, False
    else:
        position, same_spelling = match.start(), lead[match.start() + 1:match.end()] == title[1:]
    capitals = sum(c.isupper() for c in title)
    return (position, -len(title), not same_spelling, capitals, -len(entry.names), title)
