"""The crawl's entry point: ``crawl()`` checks its arguments and runs one of the modes.

- crawler/run.py: a crawl from the start page through the MediaWiki Action API or by following links,
  with conditional requests for a site crawled before; crawler/resume.py continues an interrupted one
  from its journal;
- crawler/update.py: a corpus crawled through the API brought up to date with the recent changes.

They share one ``CrawlSession`` (crawler/session.py): the state, the worker pool, the journal.
"""
from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from jarvis.crawler.errors import CrawlError
from jarvis.crawler.crawl_report import CrawlReport
from jarvis.crawler.run import run_crawl
from jarvis.crawler.session import CrawlSession
from jarvis.crawler.settings import TABLE_MODES, CrawlSettings
from jarvis.crawler.update import update_crawl
from jarvis.crawler.urls import normalize_url

__all__ = ["CrawlError", "CrawlReport", "crawl"]


def crawl(start_url: str, out_path: str | Path, settings: CrawlSettings | None = None, *,
          max_pages: int | None = None, resume: bool = False, progress: bool = True,
          update: bool = False, site: str = "") -> CrawlReport:
    """Crawl the wiki at start_url into the corpus JSONL out_path (written atomically at the end).

    Where the wiki has the MediaWiki Action API, its articles are listed through it (aliases
    and categories included) and each is fetched once; elsewhere, links are followed.
    With resume, an interrupted crawl of out_path continues from its journal. A crawl of a
    site crawled before sends conditional requests and reuses what did not change. With
    update, a corpus crawled through the API is brought up to date with only the pages
    changed since (list=recentchanges); without an API, update is a conditional recrawl.
    Every page records the wiki's name (``site``): as given, else as the wiki states it (siteinfo's
    ``sitename`` through the API, ``wgSiteName`` on a page otherwise).
    Raises CrawlError (a user error) when the crawl cannot start.
    """
    settings = settings or CrawlSettings()
    out_path = Path(out_path)
    check_arguments(start_url, out_path, settings, max_pages)
    if update and resume:
        raise CrawlError("update and resume do not go together: an update is short, run it again")
    session = CrawlSession(normalize_url(start_url), out_path, settings, max_pages, progress, " ".join(site.split()))
    if update:
        return update_crawl(session)
    return run_crawl(session, resume)


def check_arguments(start_url: str, out: Path, settings: CrawlSettings, max_pages: int | None) -> None:
    """A CrawlError naming the argument or setting that cannot work, before any request."""
    parts = urlsplit(start_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CrawlError(f"the start URL must be an http(s) URL, got {start_url!r}")
    check_out_path(out)
    if max_pages is not None and max_pages < 1:
        raise CrawlError(f"must be at least 1, got {max_pages}", setting="max_pages")
    if settings.workers < 1:
        raise CrawlError(f"must be at least 1, got {settings.workers}", setting="workers")
    if settings.delay is not None and settings.delay < 0:
        raise CrawlError(f"cannot be negative, got {settings.delay}", setting="delay")
    if settings.tables not in TABLE_MODES:
        raise CrawlError(f"must be one of {', '.join(TABLE_MODES)}, got {settings.tables!r}", setting="tables")


def check_out_path(out: Path) -> None:
    """Refuse an out path the corpus cannot be written to before any request, not after the crawl."""
    if out.is_dir():
        raise CrawlError(f"{out} is a directory; give the corpus file to write, e.g. {out / 'corpus.jsonl'}",
                         setting="out_path", path=out)
    folder = out.absolute().parent
    while not folder.exists() and folder != folder.parent:  # write_corpus creates the missing folders
        folder = folder.parent
    if not folder.is_dir():
        raise CrawlError(f"{out} cannot be written: {folder} is not a directory", setting="out_path", path=out)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise CrawlError(f"{out} cannot be written: {folder} is not writable", setting="out_path", path=out)
