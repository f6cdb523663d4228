"""The sample wiki as a whole: articles plus the pages around them that a real wiki has.

``SampleWiki.load()`` reads the article sources and ``site.yaml`` (Main Page text,
disambiguation pages, duplicate titles, and the non-article pages a crawler has to leave
out: spin-off games, talk, user, help and project pages). Category, file and navbox
template pages are derived from the articles. Rendering lives in ``render.py``.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import yaml

from jarvis.crawler.corpus import normalize_text
from jarvis_lab.samplewiki.source import (
    GROUPS, Article, Block, Inlines, Link, SourceError, Text, iter_block_inlines, iter_links, load_articles,
    parse_body,
)
from jarvis_lab.samplewiki.titles import (
    MAIN_PAGE, SPINOFF_NAMESPACES, namespace_number, normalize_title, split_namespace,
)

WIKI_DIR = Path(__file__).resolve().parent
ARTICLES_DIR = WIKI_DIR / "articles"
SITE_FILE = WIKI_DIR / "site.yaml"
DISAMBIGUATION_CATEGORY = "Disambiguation pages"
NAVBOX_TITLES = {group: f"Template:Navbox {group}" for group in GROUPS}
_MARKUP_LEFTOVER = re.compile(r"\[\[|\]\]|\*\*|</?[A-Za-z][^>]*>")   # markup the parser did not take


@dataclass(frozen=True)
class NavboxRow:
    label: str            # a category, or "Other names"
    titles: list[str]     # article titles (or, for "Other names", alias titles)


class SampleWiki:
    """Every page of the sample wiki, by title, and how the titles relate."""

    def __init__(self, articles: list[Article], main_page: list[Block], disambiguations: dict[str, list[Block]],
                 duplicates: dict[str, str], pages: dict[str, list[Block]], site_mtime: float = 0.0) -> None:
        self.articles: dict[str, Article] = {a.title: a for a in articles}
        self.main_page = main_page
        self.disambiguations = disambiguations          # title -> body
        self.duplicates = duplicates                    # duplicate title -> article title
        self.pages = pages                              # other page title -> body
        self.site_mtime = site_mtime
        self._source_articles = articles                # kept for problems(): titles may collide
        self.reindex()

    def reindex(self) -> None:
        """Derive redirects, categories, files and navbox templates from the articles (again,
        after an article was added, changed, moved or deleted)."""
        articles = list(self.articles.values())
        self.redirects: dict[str, str] = {}             # redirect title -> article title
        for article in articles:
            for name in article.redirects:
                self.redirects.setdefault(normalize_title(name), article.title)
        self.categories: dict[str, list[str]] = {}      # category name -> member titles
        for title, categories in self._categorized():
            for name in categories:
                self.categories.setdefault(normalize_title(name), []).append(title)
        self.files = {self.file_title(a.title): a.title for a in articles if a.infobox}
        used_groups = {a.group for a in articles}
        self.templates = {NAVBOX_TITLES[g]: g for g in GROUPS if g in used_groups}   # navbox template -> group
        self.newest_mtime = max([self.site_mtime] + [a.mtime for a in articles])

    @classmethod
    def load(cls, articles_dir: Path = ARTICLES_DIR, site_file: Path = SITE_FILE) -> "SampleWiki":
        articles = load_articles(articles_dir)
        site_file = Path(site_file)
        if not site_file.is_file():
            raise SourceError(f"sample wiki site file not found: {site_file}")
        try:
            site = yaml.load(site_file.read_text(encoding="utf-8"), Loader=yaml.BaseLoader) or {}
        except yaml.YAMLError as exc:
            raise SourceError(f"{site_file}: {' '.join(str(exc).split())}") from exc

        def bodies(key: str) -> dict[str, list[Block]]:
            return {normalize_title(title): parse_body(text, f"{site_file} ({key}: {title})")
                    for title, text in (site.get(key) or {}).items()}

        return cls(
            articles,
            main_page=parse_body(site.get("main_page", ""), f"{site_file} (main_page)"),
            disambiguations=bodies("disambiguations"),
            duplicates={normalize_title(k): normalize_title(v) for k, v in (site.get("duplicates") or {}).items()},
            pages=bodies("pages"),
            site_mtime=site_file.stat().st_mtime,
        )

    # ------------------------------------------------------------------ titles

    @staticmethod
    def file_title(article_title: str) -> str:
        return f"File:{article_title}.png"

    def _categorized(self) -> Iterator[tuple[str, list[str]]]:
        for article in self.articles.values():
            yield article.title, article.categories
        for title, target in self.duplicates.items():
            if target in self.articles:
                yield title, self.articles[target].categories
        for title in self.disambiguations:
            yield title, [DISAMBIGUATION_CATEGORY]

    def category_names(self, title: str) -> list[str]:
        """Categories a page is in, in the order its source lists them."""
        if title in self.articles:
            return [normalize_title(c) for c in self.articles[title].categories]
        if title in self.duplicates:
            return self.category_names(self.duplicates[title])
        if title in self.disambiguations:
            return [DISAMBIGUATION_CATEGORY]
        return []

    def kind(self, title: str) -> str | None:
        """What a (normalized) title is: article, redirect, duplicate, main, disambiguation, page,
        category, file, template; None if the wiki has no such page."""
        if title in self.articles:
            return "article"
        if title in self.redirects:
            return "redirect"
        if title in self.duplicates:
            return "duplicate"
        if title == MAIN_PAGE:
            return "main"
        if title in self.disambiguations:
            return "disambiguation"
        if title in self.pages:
            return "page"
        if title in self.files:
            return "file"
        namespace, rest = split_namespace(title)
        if namespace == "Category" and rest in self.categories:
            return "category"
        if title in self.templates:
            return "template"
        return None

    def exists(self, title: str) -> bool:
        return self.kind(title) is not None

    def page_titles(self) -> list[str]:
        """Every page with content of its own (redirect titles aside)."""
        return [*self.articles, *self.duplicates, MAIN_PAGE, *self.disambiguations, *self.pages,
                *(f"Category:{name}" for name in self.categories), *self.files, *self.templates]

    def aliases(self, article_title: str) -> list[str]:
        """Every other title that shows this article's content: redirects, then duplicates."""
        return ([t for t, target in self.redirects.items() if target == article_title]
                + [t for t, target in self.duplicates.items() if target == article_title])

    # ------------------------------------------------------------------ generated parts of articles

    def generated_hatnotes(self, article_title: str) -> list[Inlines]:
        """Hatnotes the wiki adds on top of the writer's: spin-off counterparts, disambiguation pages."""
        notes: list[Inlines] = []
        for namespace in SPINOFF_NAMESPACES:
            counterpart = f"{namespace}:{article_title}"
            if counterpart in self.pages:
                notes.append((Text(f"For the {namespace} counterpart, see "), Link(counterpart, "", counterpart), Text(".")))
        for title, blocks in self.disambiguations.items():
            if article_title in {normalize_title(link.target) for link in _block_links(blocks)}:
                notes.append((Text("For other uses, see "), Link(title, "", title), Text(".")))
        return notes

    def navbox_rows(self, group: str) -> list[NavboxRow]:
        """A navbox per group: its articles by first category, then every other name they go by,
        so that following links from any article of the group reaches every alias."""
        by_category: dict[str, list[str]] = {}
        for article in self.articles.values():
            if article.group == group:
                by_category.setdefault(article.categories[0] if article.categories else group.title(), []).append(article.title)
        rows = [NavboxRow(label, sorted(titles)) for label, titles in sorted(by_category.items())]
        aliases = sorted(alias for row in rows for title in row.titles for alias in self.aliases(title))
        if aliases:
            rows.append(NavboxRow("Other names", aliases))
        return rows

    # ------------------------------------------------------------------ links

    def links_from(self, title: str) -> set[str]:
        """Normalized titles linked from a page's content (what Special:WhatLinksHere reports)."""
        kind = self.kind(title)
        links: list[Link] = []
        if kind in ("article", "duplicate"):
            article = self.articles[self.duplicates.get(title, title)]
            links.extend(article.links())
            for note in self.generated_hatnotes(article.title):
                links.extend(iter_links(note))
            names = {t for row in self.navbox_rows(article.group) for t in row.titles}
            return {normalize_title(link.target) for link in links} | names
        if kind == "main":
            names = {t for g in self.templates.values() for row in self.navbox_rows(g) for t in row.titles}
            return {normalize_title(link.target) for link in _block_links(self.main_page)} | names
        blocks = self.disambiguations.get(title) or self.pages.get(title) or []
        return {normalize_title(link.target) for link in _block_links(blocks)}

    # ------------------------------------------------------------------ checks

    def problems(self) -> list[str]:
        """Everything wrong with the sources, one line each (empty when all is well)."""
        return self.source_problems() + self.shared_paragraphs()

    def source_problems(self) -> list[str]:
        """Titles, groups, links, markup and site.yaml entries that are wrong."""
        problems: list[str] = []
        taken: Counter[str] = Counter()
        for article in self._source_articles:
            where = article.path.name if article.path else article.title
            taken[article.title] += 1
            if article.path and article.path.stem.replace("_", " ") != article.title:
                problems.append(f"{where}: title {article.title!r} does not match the file name")
            if normalize_title(article.title) != article.title:
                problems.append(f"{where}: title {article.title!r} is not a normal wiki title")
            if namespace_number(article.title) != 0:
                problems.append(f"{where}: title {article.title!r} is in a namespace, not an article")
            if article.group not in GROUPS:
                problems.append(f"{where}: group {article.group!r} is not one of {', '.join(GROUPS)}")
            if not article.paragraphs():
                problems.append(f"{where}: no paragraphs")
            for name in article.redirects:
                taken[normalize_title(name)] += 1
            for link in article.links():
                if not self.exists(normalize_title(link.target)):
                    problems.append(f"{where}: link to missing page [[{link.target}]]")
            for text in article.paragraphs():
                leftover = _MARKUP_LEFTOVER.search(text)
                if leftover:
                    problems.append(f"{where}: unsupported markup {leftover.group()!r} in: {text[:60]}...")
        for title in [MAIN_PAGE, *self.duplicates, *self.disambiguations, *self.pages]:
            taken[title] += 1
        problems += [f"title {title!r} is used {n} times (articles, redirects, site.yaml)"
                     for title, n in taken.items() if n > 1]
        for title, target in self.duplicates.items():
            if target not in self.articles:
                problems.append(f"site.yaml: duplicate {title!r} of missing article {target!r}")
        for title in [*self.duplicates, *self.disambiguations]:
            if namespace_number(title) != 0:
                problems.append(f"site.yaml: {title!r} must be in the article namespace")
        for title in self.pages:
            namespace, rest = split_namespace(title)
            if namespace_number(title) == 0:
                problems.append(f"site.yaml: page {title!r} must be in a namespace (it is not an article)")
            if namespace in SPINOFF_NAMESPACES and rest not in self.articles:
                problems.append(f"site.yaml: spin-off page {title!r} has no article {rest!r} to link it from")
        for title, blocks in [(MAIN_PAGE, self.main_page), *self.disambiguations.items(), *self.pages.items()]:
            for link in _block_links(blocks):
                if not self.exists(normalize_title(link.target)):
                    problems.append(f"site.yaml: {title}: link to missing page [[{link.target}]]")
        return problems

    def shared_paragraphs(self) -> list[str]:
        """Paragraphs (normalized) that two articles share: each article's text must be its own."""
        seen: dict[str, str] = {}
        problems = []
        for article in self.articles.values():
            for text in dict.fromkeys(normalize_text(p) for p in article.paragraphs()):
                if text in seen:
                    problems.append(f"{article.title!r} and {seen[text]!r} share a paragraph: {text[:60]}...")
                else:
                    seen[text] = article.title
        return problems


def _block_links(blocks: list[Block]) -> Iterator[Link]:
    for inlines in iter_block_inlines(blocks):
        yield from iter_links(inlines)

