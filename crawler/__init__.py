"""The crawler stage: a MediaWiki site -> corpus JSONL (docs/data-formats.md, docs/crawler.md).

Public API:
- ``crawl(start_url, out_path, settings, max_pages=, resume=, progress=, update=) -> CrawlReport``: through
  the MediaWiki Action API where the wiki has one (``crawler.mwapi``), else by following links;
  ``update`` fetches only what changed since the last crawl (docs/crawler-api.md)
- ``extract_article(html, url, tables=) -> ExtractedPage | None``: one page's title, paragraphs and section paths
- ``classify_page(title, ...) -> str``: the page's kind, one of ``PAGE_KINDS``
- ``CrawlSettings``, ``CrawlReport``, ``CrawlError`` (user error), ``Page`` and the corpus helpers
"""
from jarvis.crawler.corpus import PAGE_KINDS, CorpusError, Page, content_sha1, iter_corpus, read_corpus, write_corpus
from jarvis.crawler.crawl import CrawlError, CrawlReport, crawl
from jarvis.crawler.extract import ExtractedPage, extract_article
from jarvis.crawler.filters import skip_reason
from jarvis.crawler.page_kinds import classify_page
from jarvis.crawler.settings import CrawlSettings

__all__ = [
    "PAGE_KINDS", "classify_page", "CorpusError", "CrawlError", "CrawlReport", "CrawlSettings", "ExtractedPage", "Page", "content_sha1",
    "crawl", "extract_article", "iter_corpus", "read_corpus", "skip_reason", "write_corpus",
]
