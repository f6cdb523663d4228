"""What every mode of a crawl shares: its state, the frontier loop, visiting one URL, recording it.

One coordinator (the calling thread) owns all crawl state: the frontier, the records, the journal. A
small pool of worker threads fetches and extracts pages (``_visit``) and hands back ``FetchRecord``s;
only the coordinator records them, so no state is shared between threads except the read-only recrawl
cache and the URL claims (``UrlClaims``, locked). The modes drive a session: a crawl (crawler/run.py,
new or resumed: crawler/resume.py) and an update through the API (crawler/update.py).
"""
from __future__ import annotations

import logging
import sys
import threading
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

from tqdm import tqdm

from jarvis.crawler.corpus import Page, content_sha1
from jarvis.crawler.dedupe import identity
from jarvis.crawler.extract import ExtractedPage, extract_article
from jarvis.crawler.fetch import FetchResult, Fetcher, Validators
from jarvis.crawler.filters import FOLLOW_LINKS_OF, followable_links, page_kind, skip_reason
from jarvis.crawler.journal import Document, FetchRecord, Journal, journal_path
from jarvis.crawler.mwapi import ApiError, Listing, PageFacts, WikiApi
from jarvis.crawler.crawl_report import CrawlReport
from jarvis.crawler.settings import CrawlSettings
from jarvis.crawler.urls import Scope, article_url, is_loopback, normalize_url

log = logging.getLogger(__name__)


class UrlClaims:
    """URLs the crawl has fetched or queued. Thread-safe: a worker that meets a redirect claims
    its target before following it, so no URL is ever requested twice."""

    def __init__(self) -> None:
        self._urls: set[str] = set()
        self._lock = threading.Lock()

    def claim(self, url: str) -> bool:
        """True if url was not claimed yet (and now is)."""
        with self._lock:
            if url in self._urls:
                return False
            self._urls.add(url)
            return True

    def add(self, urls: list[str]) -> None:
        with self._lock:
            self._urls.update(urls)

    def all(self) -> list[str]:
        with self._lock:
            return sorted(self._urls)

    def __contains__(self, url: str) -> bool:
        with self._lock:
            return url in self._urls


class CrawlSession:
    """The state of one crawl of ``start_url`` into ``out`` and the work every mode does with it."""

    def __init__(self, start_url: str, out: Path, settings: CrawlSettings, max_pages: int | None,
                 progress: bool, site: str = "") -> None:
        self.start_url = start_url
        self.out = out
        self.settings = settings
        self.max_pages = max_pages
        self.progress = progress
        self.began = time.monotonic()
        self.stop = threading.Event()
        self.fetcher = Fetcher(settings, self.stop)
        self.journal = Journal(journal_path(out), settings.checkpoint_every)
        self.journaling = True                  # an update journals nothing: interrupted, it is run again
        self.scope = Scope.from_url(start_url)
        self.records: dict[str, FetchRecord] = {}
        self.claimed = UrlClaims()              # URLs fetched or queued
        self.frontier: deque[str] = deque()
        self.contents: set[str] = set()         # sha1 of the articles so far (for max_pages)
        self.page_sha1: dict[str, str] = {}     # canonical page -> sha1 of the paragraphs kept for it
        self.skipped = 0
        self.previous: dict[str, Document] = {}    # the last crawl's documents, reusable after a 304
        self.validators: dict[str, Validators] = {}
        self.report = CrawlReport(out_path=out)
        self.bar: tqdm | None = None
        self.api: WikiApi | None = None         # set when the wiki is listed through its API
        self.api_state: dict | None = None      # what the next update needs
        self.api_pages: dict[str, PageFacts] = {}  # page URL -> what the API says about it
        self.site_given = site                  # the name the caller gave: wins over what the wiki says
        self.site = site                        # the name recorded on every page

    # ------------------------------------------------------------------ the site and the report

    def learn_site(self, stated: str) -> None:
        """The wiki's name as the wiki states it, unless the caller gave one."""
        if not self.site_given and stated:
            self.site = stated

    def with_site(self, pages: list[Page]) -> list[Page]:
        for page in pages:
            page.site = self.site
        return pages

    def start_bar(self, desc: str, disable: bool = False, initial: int = 0) -> None:
        self.bar = tqdm(desc=desc, unit="page", file=sys.stderr, disable=disable or not self.progress,
                        dynamic_ncols=True, initial=initial)

    def close(self) -> None:
        """Stop the workers' waits, close the bar, the journal and the connections."""
        self.stop.set()
        if self.bar is not None:
            self.bar.close()
        self.journal.close()
        self.fetcher.close()

    def finish(self, pages: list[Page]) -> CrawlReport:
        """The report of a crawl or an update that wrote pages."""
        report = self.report
        report.site = self.site
        report.stored = len(pages)
        report.aliases = sum(len(p.aliases) for p in pages)
        report.skipped.update(r.skip for r in self.records.values() if r.skip not in (None, "redirect"))
        traffic = self.fetcher.traffic
        report.requests, report.bytes = traffic.requests, traffic.bytes
        report.not_modified, report.retries = traffic.not_modified, traffic.retries
        report.api = self.api.url if self.api else None
        host = urlsplit(self.start_url).netloc
        report.delay, report.local = self.fetcher.throttle.delay(host), is_loopback(host)
        report.seconds = time.monotonic() - self.began
        log.info("crawl finished: %s", report.summary().replace("\n", "; "))
        return report

    # ------------------------------------------------------------------ the MediaWiki API

    def list_through_api(self, api_url: str) -> Listing | None:
        """Every article of the wiki as its API lists it, or None (then links are followed)."""
        api = WikiApi(self.fetcher, api_url, self.settings.maxlag)
        try:
            listing = api.listing(also_namespaces=self.settings.spin_off_namespaces)
        except ApiError as exc:
            log.info("no usable MediaWiki API at %s (%s): following links", api_url, exc)
            return None
        self.api = api
        self.learn_site(listing.sitename)
        self.scope = Scope.from_url(self.scope.origin + "/", listing.articlepath.replace("$1", ""))
        self.api_state = {"url": api_url, "since": listing.server_time, "rcid": 0, "origin": self.scope.origin,
                          "article_path": self.scope.article_path, "articlepath": listing.articlepath,
                          "namespaces": listing.namespaces, "sitename": listing.sitename}
        return listing

    def queue_listing(self, listing: Listing) -> None:
        """Queue every listed page not fetched yet; remember its aliases and categories."""
        for title, facts in listing.pages.items():
            url = article_url(self.scope.origin, listing.articlepath, title)
            self.api_pages[url] = facts
            if self.claimed.claim(url):
                self.frontier.append(url)

    def _with_api_facts(self, url: str, page: ExtractedPage) -> ExtractedPage:
        """The page with the redirects to it (its aliases) and its categories as the API listed them."""
        facts = self.api_pages.get(url)
        if facts is None:
            return page
        redirected = list(dict.fromkeys([*page.redirected_from, *facts.redirects]))
        return replace(page, redirected_from=redirected, categories=page.categories or list(facts.categories))

    # ------------------------------------------------------------------ the frontier (coordinator)

    def crawl_frontier(self) -> None:
        """Visit the frontier with the worker pool until it is empty or the page limit is reached."""
        workers = self.settings.workers
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="crawl")
        in_flight: dict[Future, str] = {}
        try:
            while True:
                while self.frontier and len(in_flight) < 2 * workers and not self.full():
                    url = self.frontier.popleft()
                    in_flight[pool.submit(self._visit, url, self.scope)] = url
                if not in_flight:
                    break
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in done:
                    del in_flight[future]
                    self.record(future.result())
                self._show_progress(len(done), len(in_flight))
        finally:
            self.stop.set()  # on Ctrl-C: workers stop waiting and retrying
            pool.shutdown(wait=False, cancel_futures=True)

    def full(self) -> bool:
        return self.max_pages is not None and len(self.contents) >= self.max_pages

    def _show_progress(self, done: int, in_flight: int) -> None:
        self.bar.update(done)
        self.bar.set_postfix(stored=len(self.contents), queued=len(self.frontier) + in_flight, skipped=self.skipped,
                             refresh=False)

    # ------------------------------------------------------------------ one URL (worker threads)

    def _visit(self, url: str, scope: Scope) -> FetchRecord:
        """Fetch, extract and judge one URL. Never raises: a failure is a skip reason."""
        try:
            result = self.fetcher.fetch(url, in_scope=scope.contains, validators=self.validators,
                                        follow=self.claimed.claim)
            if result.error:
                if result.error != "stopped":
                    log.warning("skipped %s: %s", url, result.error)
                return FetchRecord(url=url, skip=result.error, redirects=result.redirects)
            if result.redirect_to:
                return FetchRecord(url=url, skip="redirect", redirects=result.redirects,
                                   redirect_to=result.redirect_to)
            if result.not_modified:
                document = replace(self.previous[result.final_url], etag=result.etag,
                                   last_modified=result.last_modified)
                return FetchRecord(url=url, skip=document.skip, document=document, redirects=result.redirects,
                                   not_modified=True)
            page = extract_article(result.text or "", result.final_url, tables=self.settings.tables)
            if page is None:
                log.warning("skipped %s: not a wiki page", url)
                return FetchRecord(url=url, skip="not a wiki page", redirects=result.redirects)
            return self.record_of(result, page, scope)
        except Exception as exc:  # noqa: BLE001 - one bad page must never end the crawl
            log.warning("skipped %s: %s: %s", url, type(exc).__name__, exc, exc_info=log.isEnabledFor(logging.DEBUG))
            return FetchRecord(url=url, skip=f"error ({type(exc).__name__})")

    def record_of(self, result: FetchResult, page: ExtractedPage, scope: Scope | None = None) -> FetchRecord:
        """The record of a fetched wiki page: its document, its verdict and the links to follow."""
        scope = scope or self.scope
        page = self._with_api_facts(result.final_url, page)
        skip = skip_reason(page, self.settings)
        if skip is not None:
            log.debug("not stored: %s (%s)", page.title, skip)
        article = skip is None
        document = Document(
            url=result.final_url, title=page.title, canonical_url=page.url, skip=skip,
            sha1=content_sha1(page.paragraphs) if article else "",
            paragraphs=page.paragraphs if article else [], sections=page.sections if article else [],
            page_kind=page_kind(page, self.settings), categories=page.categories,
            redirected_from=page.redirected_from, etag=result.etag, last_modified=result.last_modified)
        # Through the API the listing has every page: links are not followed.
        links = followable_links(page, scope, self.settings) if skip in FOLLOW_LINKS_OF and self.api is None else []
        return FetchRecord(url=result.url, skip=skip, document=document, redirects=result.redirects, links=links)

    # ------------------------------------------------------------------ bookkeeping (coordinator)

    def record(self, record: FetchRecord, replayed: bool = False) -> None:
        """Keep a record: claim its links, journal it (with the links new to the crawl), then
        queue them, so that a resumed crawl finds the frontier as it was."""
        if record.skip == "stopped":
            return  # cut short by Ctrl-C: not done, a resumed crawl fetches it
        self.claimed.add([record.url, *record.redirects])
        redirect_target = record.redirect_to if record.redirect_to and self.claimed.claim(record.redirect_to) else None
        document = record.document
        if document is not None:
            key = identity(document.canonical_url)
            canonical = normalize_url(self.scope.origin + key)
            # Reached through a wiki redirect: the canonical URL has this content, no need to fetch it.
            self.claimed.add([document.url] + ([canonical] if self.scope.contains(canonical) else []))
            if record.skip is None:
                self.contents.add(document.sha1)
                if self.page_sha1.get(key) == document.sha1:
                    document.paragraphs, document.sections = [], []  # kept once per page, not once per redirect
                else:
                    self.page_sha1[key] = document.sha1
        record.links = [link for link in record.links if self.claimed.claim(link)]
        if not replayed:
            if self.journaling:
                self.journal.append(record)
            self.report.visited += 1
        self.records[record.url] = record
        self.skipped += record.skip not in (None, "redirect")
        if redirect_target:
            self.frontier.appendleft(redirect_target)  # claimed by a worker that did not finish
        self.frontier.extend(record.links)
        record.links = []  # journaled; the frontier has them now
