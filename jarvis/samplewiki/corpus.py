"""The bundled corpus: one corpus page per article, generated from the article sources.

It is the data a crawl of the served sample wiki yields (same titles, aliases and
paragraphs), with canonical URLs on the default port of ``jarvis sample-wiki``.
"""
from __future__ import annotations

from pathlib import Path

from crawler.corpus import Page, write_corpus
from jarvis.config import BUNDLED_CORPUS
from jarvis.samplewiki.server import DEFAULT_PORT
from jarvis.samplewiki.site import SampleWiki
from jarvis.samplewiki.titles import url_path

DEFAULT_BASE_URL = f"http://127.0.0.1:{DEFAULT_PORT}"


def corpus_pages(wiki: SampleWiki | None = None, base_url: str = DEFAULT_BASE_URL) -> list[Page]:
    """Pages of the corpus, by title. Aliases: the article's redirect titles, then its duplicate titles."""
    wiki = SampleWiki.load() if wiki is None else wiki
    base_url = base_url.rstrip("/")
    return [Page(title=title, url=base_url + url_path(title), paragraphs=article.paragraphs(),
                 aliases=wiki.aliases(title))
            for title, article in sorted(wiki.articles.items())]


def build_corpus(out: Path = BUNDLED_CORPUS, wiki: SampleWiki | None = None,
                 base_url: str = DEFAULT_BASE_URL) -> int:
    """Write the corpus JSONL (atomically); returns the number of pages."""
    return write_corpus(corpus_pages(wiki, base_url), out)
