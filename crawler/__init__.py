"""The crawler stage: a MediaWiki site -> corpus JSONL (docs/data-formats.md, docs/crawler.md).

Public API:
- ``crawl(start_url, out_path, settings, max_pages=, resume=, progress=, update=) -> CrawlReport``: through
  the MediaWiki Action API where the wiki has one (``crawler.mwapi``), else by following links;
  ``update`` fetches only what changed since the last crawl (docs/crawler-api.md)
- ``extract_article(html, url, tables=) -> ExtractedPage | None``: one page's title, paragraphs and section paths
- ``classify_page(title, ...) -> str``: the page's kind, one of ``PAGE_KINDS``
- ``CrawlSettings``, ``CrawlReport``, ``CrawlError`` (user error), ``Page`` and the corpus helpers
"""
from importlib import import_module

# Imported on first use (PEP 562): `from crawler.settings import CrawlSettings` or `from crawler import Page`
# must not pull in requests, BeautifulSoup and the whole crawl (a cold `jarvis ask` needs none of it).
_HOMES = {
    "PAGE_KINDS": "crawler.corpus", "CorpusError": "crawler.corpus", "Page": "crawler.corpus",
    "content_sha1": "crawler.corpus", "iter_corpus": "crawler.corpus", "read_corpus": "crawler.corpus",
    "write_corpus": "crawler.corpus",
    "CrawlError": "crawler.crawl", "CrawlReport": "crawler.crawl", "crawl": "crawler.crawl",
    "ExtractedPage": "crawler.extract", "extract_article": "crawler.extract",
    "skip_reason": "crawler.filters", "classify_page": "crawler.kinds", "CrawlSettings": "crawler.settings",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'crawler' has no attribute {name!r}")
