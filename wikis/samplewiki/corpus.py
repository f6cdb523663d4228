"""The bundled corpus: one corpus page per article (and per spin-off page), generated from the sources.

It is the data a crawl of the served sample wiki yields with the crawler's default settings
(same titles, aliases, paragraphs, section paths, page kinds and categories; content tables
as the crawler's default ``tables`` mode writes them), with canonical URLs on the default port
of ``jarvis sample-wiki``.
"""
from __future__ import annotations

from pathlib import Path

from jarvis.crawler.corpus import Page, write_corpus
from jarvis.crawler.page_kinds import classify_page
from jarvis.crawler.settings import CrawlSettings
from jarvis.crawler.tables import Grid, cell_text, row_texts
from jarvis.config import BUNDLED_CORPUS
from jarvis_lab.samplewiki.server import DEFAULT_PORT
from jarvis_lab.samplewiki.site import SampleWiki
from jarvis_lab.samplewiki.source import Block, Heading, ListBlock, Paragraph, Table, collapse_whitespace, plain_text
from jarvis_lab.samplewiki.titles import SITE_NAME, SPINOFF_NAMESPACES, namespace_number, split_namespace, url_path

DEFAULT_BASE_URL = f"http://127.0.0.1:{DEFAULT_PORT}"


def corpus_pages(wiki: SampleWiki | None = None, base_url: str = DEFAULT_BASE_URL,
                 tables: str = CrawlSettings.tables) -> list[Page]:
    """Pages of the corpus, by title. Aliases: the article's redirect titles, then its duplicate titles."""
    wiki = SampleWiki.load() if wiki is None else wiki
    base_url = base_url.rstrip("/")
    pages = []
    for title, article in sorted(wiki.articles.items()):
        hatnotes = [plain_text(note) for note in wiki.generated_hatnotes(title)]
        hatnotes += [plain_text(article.hatnote)] if article.hatnote else []
        pages.append(_page(title, base_url, article.blocks, tables, wiki.aliases(title), wiki.category_names(title),
                           hatnotes))
    for title, blocks in sorted(wiki.pages.items()):
        if split_namespace(title)[0] in SPINOFF_NAMESPACES:   # kept by the crawler, labelled "spinoff"
            pages.append(_page(title, base_url, blocks, tables, [], wiki.category_names(title), []))
    return sorted(pages, key=lambda p: (p.title.casefold(), p.title))


def _page(title: str, base_url: str, blocks: list[Block], tables: str, aliases: list[str],
          categories: list[str], hatnotes: list[str]) -> Page:
    paragraphs, sections = block_sections(blocks, tables)
    lead = next((text for text, path in zip(paragraphs, sections) if not path), "")
    kind = classify_page(title, namespace=namespace_number(title), categories=categories, lead=lead, hatnotes=hatnotes)
    return Page(title=title, url=base_url + url_path(title), paragraphs=paragraphs, aliases=aliases,
                sections=sections, page_kind=kind, categories=categories, site=SITE_NAME)


def block_sections(blocks: list[Block], tables: str = CrawlSettings.tables) -> tuple[list[str], list[list[str]]]:
    """(paragraphs, section path of each) of a body, as the crawler extracts them from its HTML:
    paragraphs and list items; content tables as crawler.tables writes them (or not at all)."""
    paragraphs: list[str] = []
    sections: list[list[str]] = []
    path: list[tuple[int, str]] = []
    for block in blocks:
        texts: list[str] = []
        if isinstance(block, Heading):
            while path and path[-1][0] >= block.level:
                path.pop()
            path.append((block.level, collapse_whitespace(plain_text(block.inlines))))
        elif isinstance(block, Paragraph):
            texts = [collapse_whitespace(plain_text(block.inlines))]
        elif isinstance(block, ListBlock):
            texts = [collapse_whitespace(plain_text(item)) for item in block.items]
        elif isinstance(block, Table) and tables != "drop" and len(block.header or block.rows[0]) >= 2:
            header = [[cell_text(plain_text(cell)) for cell in block.header]] if block.header else []
            rows = [[cell_text(plain_text(cell)) for cell in row] for row in block.rows]
            texts = row_texts(Grid(header=header, rows=rows), tables)
        for text in texts:
            if text:
                paragraphs.append(text)
                sections.append([name for _, name in path])
    return paragraphs, sections


def build_corpus(out: Path = BUNDLED_CORPUS, wiki: SampleWiki | None = None,
                 base_url: str = DEFAULT_BASE_URL) -> int:
    """Write the corpus JSONL (atomically); returns the number of pages."""
    return write_corpus(corpus_pages(wiki, base_url), out)
