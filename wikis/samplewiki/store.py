"""The sample wiki as a ``PageStore`` for the Action API (wikis/actionapi), with edits at run time.

Tests and benchmarks change the wiki while it is served (``edit``, ``create``, ``move``,
``delete``), as editors change a real wiki: each change gets a new revision id and a row in
list=recentchanges, the way MediaWiki records it (a move is a "move" log row and leaves a
redirect behind; redirects that pointed at the old title are fixed by edits of their own; a
deletion is a "delete" log row, for the page and for the redirects and duplicates of it).
Each method returns the titles whose pages must be rendered again.
"""
from __future__ import annotations

import dataclasses
import threading
import time

from jarvis_lab.samplewiki.render import Renderer, page_id
from jarvis_lab.samplewiki.site import SampleWiki
from jarvis_lab.samplewiki.source import Article, SourceError, parse_body
from jarvis_lab.samplewiki.titles import MAIN_PAGE, NAMESPACES, SITE_NAME, namespace_number, normalize_title
from jarvis_lab.actionapi import LoggedStore, SiteInfo, StoredPage


def site_info(server: str) -> SiteInfo:
    """The site info of the wikis served here (the sample wiki, the real-wiki test bed): the Minecraft Wiki's."""
    return SiteInfo(sitename=SITE_NAME, mainpage=MAIN_PAGE, server=server,
                    namespaces=tuple((number, name) for name, number in NAMESPACES.items() if number >= 0))


class SampleWikiStore(LoggedStore):
    """Implements jarvis_lab.actionapi.PageStore over a SampleWiki and its Renderer."""

    def __init__(self, wiki: SampleWiki, renderer: Renderer, server: str) -> None:
        super().__init__(site_info(server))
        self.wiki = wiki
        self.renderer = renderer
        self.server = server
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ PageStore

    def titles(self, namespace: int) -> list[str]:
        with self._lock:
            every = [*self.wiki.page_titles(), *self.wiki.redirects]
        return [title for title in every if namespace_number(title) == namespace]

    def page(self, title: str) -> StoredPage | None:
        with self._lock:
            kind = self.wiki.kind(title)
            if kind is None:
                return None
            pageid = self._page_id(title)
            redirect_to = self.wiki.redirects.get(title) if kind == "redirect" else None
            length = len(f"#REDIRECT [[{redirect_to}]]") if redirect_to else len(self.renderer.content_html(title))
            return StoredPage(pageid=pageid, title=title, ns=namespace_number(title),
                              revid=self.log.revision(title, pageid), touched=self.renderer.last_modified(title),
                              length=length, redirect_to=redirect_to, categories=tuple(self.wiki.category_names(title)))

    def parser_output(self, title: str) -> str:
        with self._lock:
            return self.renderer.content_html(title)

    def normalize(self, title: str) -> str:
        return normalize_title(title)

    # ------------------------------------------------------------------ changes at run time

    def edit(self, title: str, text: str) -> set[str]:
        """Replace an article's body (the sources' markup, see articles/README.md)."""
        with self._lock:
            article = self._article(title)
            self._replace(dataclasses.replace(article, blocks=parse_body(text, f"edit of {title}"), mtime=time.time()))
            self._edited(article.title)
            return self._affected(article.title)

    def create(self, title: str, text: str, group: str, categories: tuple[str, ...] = ()) -> set[str]:
        """A new article."""
        with self._lock:
            title = normalize_title(title)
            if self.wiki.exists(title):
                raise SourceError(f"cannot create {title!r}: the page exists")
            if namespace_number(title) != 0:
                raise SourceError(f"cannot create {title!r}: not in the article namespace")
            article = Article(title=title, group=group, blocks=parse_body(text, f"new page {title}"),
                              categories=list(categories), mtime=time.time())
            self._replace(article)
            self._edited(title, new=True)
            return self._affected(title)

    def move(self, old: str, new: str) -> set[str]:
        """Rename an article; the old title becomes a redirect to the new one."""
        with self._lock:
            article = self._article(old)
            old, new = article.title, normalize_title(new)
            if self.wiki.exists(new):
                raise SourceError(f"cannot move {old!r} to {new!r}: the target exists")
            pageid = self._page_id(old)
            self.log.moved(old, new, namespace_number(old), namespace_number(new), pageid,
                           self.log.revision(old, pageid))
            del self.wiki.articles[old]
            self._replace(dataclasses.replace(article, title=new, redirects=[old, *article.redirects], mtime=time.time()))
            for title, target in list(self.wiki.duplicates.items()):
                if target == old:
                    self.wiki.duplicates[title] = new
            for name in map(normalize_title, article.redirects):   # double redirects fixed at once, each by an edit
                self._edited(name, redirect=True)
            return self._affected(new) | {old}

    def delete(self, title: str) -> set[str]:
        """Delete an article, with the redirects and duplicate pages of it."""
        with self._lock:
            article = self._article(title)
            gone = [article.title, *map(normalize_title, article.redirects),
                    *(t for t, target in self.wiki.duplicates.items() if target == article.title)]
            del self.wiki.articles[article.title]
            for name in gone:
                self.wiki.duplicates.pop(name, None)
            self.wiki.reindex()
            for name in gone:
                self.log.deleted(name, namespace_number(name))
            return set(gone)

    # ------------------------------------------------------------------ helpers

    def _page_id(self, title: str) -> int:
        return self.log.page_id(title, page_id(title))

    def _edited(self, title: str, new: bool = False, redirect: bool = False) -> None:
        self.record_edit(title, namespace_number(title), page_id(title), new=new, redirect=redirect)

    def _article(self, title: str) -> Article:
        title = normalize_title(title)
        if title not in self.wiki.articles:
            raise SourceError(f"no article {title!r} to change")
        return self.wiki.articles[title]

    def _replace(self, article: Article) -> None:
        self.wiki.articles[article.title] = article
        self.wiki.reindex()
        self.renderer.forget(article.title)

    def _affected(self, title: str) -> set[str]:
        """The pages that show an article's content: itself, its duplicates, its redirects' views."""
        return {title, *self.wiki.aliases(title)}
