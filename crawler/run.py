"""The crawl mode: a new crawl from the start page, or an interrupted one resumed (crawler/resume.py).

A new crawl fetches the start page (its failure is the caller's error), learns the wiki's scope and,
where the wiki has the MediaWiki Action API, lists every article through it; else it follows links.
A site crawled before is revalidated with conditional requests: what answers 304 is reused from the
last corpus. The corpus is written atomically at the end, with the state the next crawl or update needs.
"""
from __future__ import annotations

import logging

from jarvis.crawler.corpus import CorpusError, iter_corpus, write_corpus
from jarvis.crawler.dedupe import build_pages
from jarvis.crawler.errors import CrawlError
from jarvis.crawler.extract import extract_article
from jarvis.crawler.fetch import UNREACHABLE, Validators
from jarvis.crawler.journal import CrawlState, Journal, load_state, save_state, state_path
from jarvis.crawler.mwapi import find_api_url, find_site_name
from jarvis.crawler.crawl_report import CrawlReport
from jarvis.crawler.resume import replay
from jarvis.crawler.session import CrawlSession
from jarvis.crawler.urls import Scope

log = logging.getLogger(__name__)


def run_crawl(session: CrawlSession, resume: bool) -> CrawlReport:
    """Crawl the wiki into ``session.out``: the interrupted crawl of it when ``resume`` (and there is
    one), else a new one."""
    seeds = _load_previous_crawl(session)
    header, records, valid_length = Journal.read(session.journal.path)
    try:
        if resume and header is not None:
            replay(session, header, records, valid_length)
        else:
            if resume:
                log.warning("no interrupted crawl of %s to resume; starting a new crawl", session.out)
            elif header is not None:
                log.warning("discarding the interrupted crawl of %s (resuming would have continued it)", session.out)
            _start(session, seeds)
        # The bar starts once the crawl has: a start that fails prints one line, no bar.
        session.start_bar("crawl", initial=len(session.records))
        session.crawl_frontier()
    finally:
        session.close()

    built = build_pages(session.records.values(), session.scope, session.max_pages)
    pages = session.with_site(built.pages)
    write_corpus(pages, session.out)
    if session.settings.conditional:
        documents = {r.document.url: r.document for r in session.records.values() if r.document}
        save_state(state_path(session.out), session.start_url,
                   CrawlState(urls=session.claimed.all(), documents=documents, api=session.api_state))
    session.journal.remove()

    session.report.skipped.update(built.broken_redirects.values())
    session.report.limit_reached = session.full()
    return session.finish(pages)


def check_reachable(session: CrawlSession) -> None:
    """Read the site's robots.txt (when obeyed); a CrawlError when its host cannot be reached."""
    origin = session.scope.origin
    if session.settings.obey_robots:
        session.fetcher.robots(origin)
        if origin in session.fetcher.unreachable:
            raise CrawlError(f"cannot reach {origin} ({session.fetcher.unreachable[origin]})")


def _start(session: CrawlSession, seeds: list[str]) -> None:
    """Fetch the start page (its failure is the user's error) and learn the crawl's scope.
    ``seeds``: every URL the last crawl knew (a recrawl starts from them too)."""
    check_reachable(session)
    origin, start_url = session.scope.origin, session.start_url
    session.claimed.claim(start_url)
    result = session.fetcher.fetch(start_url, follow=session.claimed.claim)
    if result.error:
        if result.error in UNREACHABLE:
            raise CrawlError(f"cannot reach {origin} ({result.error})")
        raise CrawlError(f"cannot crawl from {start_url}: {result.error}")
    page = extract_article(result.text or "", result.final_url, tables=session.settings.tables)
    if page is None:
        raise CrawlError(f"{start_url} is not a MediaWiki page (no #firstHeading, no article body)")
    session.scope = Scope.from_url(result.final_url, page.article_path)
    session.learn_site(find_site_name(result.text or ""))
    api_url = find_api_url(result.text or "", result.final_url) if session.settings.use_api else None
    listing = session.list_through_api(api_url) if api_url else None
    log.info("crawling %s%s* %s", session.scope.origin, session.scope.article_path,
             f"as listed by {api_url}" if listing else "by following links")
    session.journal.start({"start": start_url, "origin": session.scope.origin,
                           "article_path": session.scope.article_path,
                           "api": session.api.url if session.api else None, "site": session.site})
    if listing is not None:
        session.queue_listing(listing)   # first: the start page is recorded with its API facts too
    record = session.record_of(result, page)
    if listing is None:
        # A recrawl also starts from every URL the last crawl knew: pages answering 304 bring
        # no links, and their links were among those URLs.
        record.links += [url for url in seeds if session.scope.contains(url)]
    session.record(record)


def _load_previous_crawl(session: CrawlSession) -> list[str]:
    """Validators and documents of the last finished crawl of out, for conditional requests, and every
    URL it knew. A stored article is only reusable if its paragraphs are still in the old corpus."""
    if not session.settings.conditional:
        return []
    state = load_state(state_path(session.out))
    if not state.documents:
        return state.urls
    paragraphs: dict[str, tuple[list[str], list[list[str]]]] = {}
    if session.out.is_file():
        try:
            paragraphs = {page.sha1: (page.paragraphs, page.sections) for page in iter_corpus(session.out)}
        except CorpusError as exc:
            log.warning("not reusing the old corpus (%s); fetching everything", exc)
    for url, document in state.documents.items():
        if not (document.etag or document.last_modified) or url == session.start_url:
            continue
        if document.skip is None:
            if document.sha1 not in paragraphs:
                continue
            document.paragraphs, document.sections = paragraphs[document.sha1]
        session.previous[url] = document
        session.validators[url] = Validators(document.etag, document.last_modified)
    log.info("recrawl: %d pages can be revalidated with conditional requests", len(session.validators))
    return state.urls
