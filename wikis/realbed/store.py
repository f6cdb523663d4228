"""The real-wiki test bed as a ``PageStore`` for the Action API (wikis/actionapi), with edits at run time.

Titles are the bed's own (as the mirror's URLs spell them); each alias is a redirect page to its
page; the bed has no categories. Page ids are given in title order, so that no two pages share
one (the mirror's RLCONF shows the same ids). The bed is static: list=recentchanges is empty until
a test changes a page through ``edit`` or ``delete``, which record the change as MediaWiki does
(wikis/actionapi/changes.py).
"""
from __future__ import annotations

import dataclasses
import threading
import time
from typing import Callable

from jarvis_lab.realbed.bed import BedPage, RealBed, RealBedError, Section
from jarvis_lab.samplewiki.store import site_info
from jarvis_lab.samplewiki.titles import MAIN_PAGE, dbkey, namespace_number, normalize_title
from jarvis_lab.actionapi import LoggedStore, StoredPage


class RealBedStore(LoggedStore):
    """Implements jarvis_lab.actionapi.PageStore over a RealBed; ``content_html(title)`` renders a page's
    ``.mw-parser-output`` (the mirror's renderer)."""

    def __init__(self, bed: RealBed, content_html: Callable[[str], str], server: str) -> None:
        super().__init__(site_info(server))
        self.bed = bed
        self.content_html = content_html
        self.mtimes: dict[str, float] = {}             # title -> when a test last changed the page
        self._lock = threading.RLock()
        self._index()

    def _index(self) -> None:
        """Every title (the main page, pages, aliases) by namespace, redirects by target, and page ids."""
        redirects = {alias: title for key, (title, alias) in self.bed.by_key.items() if alias is not None}
        every = sorted({MAIN_PAGE, *self.bed.pages, *redirects}, key=str.casefold)
        self.redirects = redirects
        self.ids = {title: number for number, title in enumerate(every, start=1)}
        by_namespace: dict[int, list[str]] = {}
        for title in every:
            by_namespace.setdefault(namespace_number(title), []).append(title)
        self.by_namespace = by_namespace

    # ------------------------------------------------------------------ PageStore

    def titles(self, namespace: int) -> list[str]:
        with self._lock:
            return list(self.by_namespace.get(namespace, []))

    def page(self, title: str) -> StoredPage | None:
        with self._lock:
            pageid = self.ids.get(title)
            if pageid is None:
                return None
            target = self.redirects.get(title)
            if target is not None:
                length = len(f"#REDIRECT [[{target}]]")
            elif title == MAIN_PAGE:
                length = len(self.content_html(title))
            else:
                length = sum(len(str(value)) for section in self.bed.pages[title].sections
                             for _, value in section.blocks)
            return StoredPage(pageid=self.log.page_id(title, pageid), title=title, ns=namespace_number(title),
                              revid=self.log.revision(title, pageid), touched=self.mtimes.get(title, self.bed.mtime),
                              length=length, redirect_to=target)

    def parser_output(self, title: str) -> str:
        return self.content_html(title)

    def normalize(self, title: str) -> str:
        """The bed's own spelling of a title (its URL key, first letter as typed or capitalized),
        else MediaWiki's normal form."""
        with self._lock:
            found = self.bed.lookup(dbkey(title))
        if found is not None:
            page, alias = found
            return alias or page
        return normalize_title(title)

    def page_id(self, title: str) -> int:
        """The id the API gives the page (0 for a title the bed does not have)."""
        with self._lock:
            return self.ids.get(title, 0)

    # ------------------------------------------------------------------ changes at run time

    def edit(self, title: str, text: str) -> set[str]:
        """Replace a page's text with paragraphs (one a line, in its lead section); returns the
        titles whose views changed (the page and its aliases)."""
        with self._lock:
            page = self._page(title)
            paragraphs = [line.strip() for line in text.splitlines() if line.strip()]
            if not paragraphs:
                raise RealBedError(f"cannot edit {page.title!r}: no text")
            self.bed.pages[page.title] = dataclasses.replace(
                page, sections=(Section((), tuple(("p", line) for line in paragraphs)),))
            self.mtimes[page.title] = time.time()
            self.record_edit(page.title, namespace_number(page.title), self.ids[page.title])
            return {page.title, *page.aliases}

    def delete(self, title: str) -> set[str]:
        """Delete a page with its aliases (redirects); returns their titles."""
        with self._lock:
            page = self._page(title)
            gone = [page.title, *(alias for alias, target in self.redirects.items() if target == page.title)]
            del self.bed.pages[page.title]
            self.bed.reindex()
            self._index()
            for name in gone:
                self.log.deleted(name, namespace_number(name))
            return set(gone)

    def _page(self, title: str) -> BedPage:
        found = self.bed.lookup(dbkey(title))
        if found is None or found[1] is not None:
            raise RealBedError(f"no page {title!r} in the test bed to change")
        return self.bed.pages[found[0]]
