"""The real-wiki test bed as the product sees it: the crawler's crawl of its local mirror, and the page a
question names.

`../shared/realwiki/pages.json.gz` (see its README; CC BY-NC-SA, read at run time only) is served by the lab's
mirror (jarvis_lab.realbed) and crawled by Jarvis's own crawler (``jarvis.eval.realbed.realbed_corpus``, as
``jarvis eval --realbed`` does, cached under $JARVIS_HOME): the corpus a user's crawl of the live wiki gives,
content tables included ("Subject — Header: value; …"). Used by bench/bench_reader.py.
"""
from __future__ import annotations

from pathlib import Path

from jarvis.config import Config
from jarvis.crawler.corpus import Page, read_corpus

REALWIKI = Config().realbed_pages


def realbed_corpus() -> Path:
    """The test bed's corpus, crawled once with the configured crawl settings (a user error without ../shared)."""
    from jarvis.eval.realbed import realbed_corpus as crawled

    config = Config.from_env()
    return crawled(config.home, config.realbed_pages, config.crawl, progress=False)


def load_sections(corpus: Path) -> dict[str, Page]:
    """Title -> page (each paragraph with its section path) of a corpus JSONL."""
    return {page.title: page for page in read_corpus(corpus)}


def find_page(pages: dict[str, Page], title: str) -> Page | None:
    """The page a question names: by title or alias, case-insensitively (None when the corpus lacks it)."""
    if not title:
        return None
    wanted = title.casefold()
    return next((page for page in pages.values()
                 if page.title.casefold() == wanted or any(a.casefold() == wanted for a in page.aliases)), None)
