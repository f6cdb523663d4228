"""The crawl: from a start URL, follow article links through a MediaWiki site into a corpus.

One coordinator (the calling thread) owns all crawl state: the frontier, the records, the
journal. A small pool of worker threads fetches and extracts pages (``_visit``) and hands
back ``FetchRecord``s; only the coordinator records them, so no state is shared between
threads except the read-only recrawl cache.
"""
from __future__ import annotations

import calendar
import logging
import os
import sys
import threading
import time
from collections import Counter, deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

from tqdm import tqdm

from crawler.corpus import CorpusError, content_sha1, iter_corpus, write_corpus
from crawler.dedupe import build_pages, identity
from crawler.extract import ExtractedPage, extract_article
from crawler.fetch import UNREACHABLE, FetchResult, Fetcher, Validators
from crawler.filters import FOLLOW_LINKS_OF, followable_links, page_kind, skip_reason
from crawler.journal import (CrawlState, Document, FetchRecord, Journal, journal_path, load_state, save_state,
                             state_path)
from crawler.mwapi import ApiError, Listing, PageFacts, WikiApi, changed_titles, find_api_url, find_site_name
from crawler.settings import CrawlSettings
from crawler.tables import TABLE_MODES
from crawler.urls import Scope, article_url, host_of, is_loopback, normalize_url

log = logging.getLogger(__name__)


class CrawlError(Exception):
    """A crawl that cannot start: bad arguments, unreachable start host, a start page that fails."""

    user_error = True


@dataclass
class CrawlReport:
    out_path: Path
    stored: int = 0                 # corpus pages written
    aliases: int = 0                # alias titles over all pages
    visited: int = 0                # URLs fetched in this run
    resumed: int = 0                # URLs replayed from an interrupted crawl's journal
    not_modified: int = 0           # 304 answers to conditional requests
    requests: int = 0               # HTTP requests sent (retries, redirects and robots.txt included)
    retries: int = 0
    bytes: int = 0                  # received: status lines, headers, bodies
    seconds: float = 0.0
    limit_reached: bool = False     # stopped at --max-pages
    skipped: Counter = field(default_factory=Counter)  # reason -> URLs
    api: str | None = None          # the api.php the crawl listed the wiki with (None: links followed)
    changes: int | None = None      # an update: rows of recent changes read (None: a full crawl)
    removed: int = 0                # an update: pages gone (deleted, or now a redirect)
    site: str = ""                  # the wiki's name recorded on every page ("" when it said none)
    delay: float = 0.0              # seconds between request starts to the wiki's host (Crawl-delay included)
    local: bool = False             # the wiki is on this machine (a loopback host: no delay unless one is given)

    @property
    def requests_per_page(self) -> float:
        return self.requests / self.stored if self.stored else float(self.requests)

    @property
    def pages_per_second(self) -> float:
        return self.visited / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> str:
        lines = [f"stored {self.stored} pages with {self.aliases} aliases in {self.out_path}"
                 + (f" (site: {self.site})" if self.site else " (no site name: the wiki states none)")
                 + (" (--max-pages reached)" if self.limit_reached else "")]
        if self.changes is not None:
            lines.append(f"update through {self.api}: {self.changes} recent changes, {self.visited} pages fetched, "
                         f"{self.removed} removed")
        elif self.api:
            lines.append(f"listed through the MediaWiki API at {self.api} "
                         f"({self.requests_per_page:.2f} requests per stored page)")
        visited = f"visited {self.visited} URLs in {self.seconds:.1f} s ({self.pages_per_second:.1f} pages/s)"
        if self.resumed:
            visited += f", {self.resumed} more replayed from the interrupted crawl"
        spacing = (f"{self.delay:g} s apart" if self.delay else "no delay") + (
            " (the wiki is on this machine)" if self.local else "")
        lines.append(f"{visited}; {self.requests} requests, {spacing}, {_size(self.bytes)} received, "
                     f"{self.not_modified} not modified, {self.retries} retries")
        if self.skipped:
            reasons = ", ".join(f"{n} {reason}" for reason, n in self.skipped.most_common())
            lines.append(f"skipped {sum(self.skipped.values())} URLs: {reasons}")
        else:
            lines.append("skipped nothing")
        return "\n".join(lines)


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
    _check_arguments(start_url, out_path, settings, max_pages)
    if update and resume:
        raise CrawlError("--update and --resume do not go together: an update is short, run it again")
    site = " ".join(site.split())
    job = _Crawl(normalize_url(start_url), out_path, settings, max_pages, progress, site)
    if update:
        return job.update()
    return job.run(resume)


def _check_arguments(start_url: str, out: Path, settings: CrawlSettings, max_pages: int | None) -> None:
    parts = urlsplit(start_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CrawlError(f"the start URL must be an http(s) URL, got {start_url!r}")
    _check_out_path(out)
    if max_pages is not None and max_pages < 1:
        raise CrawlError(f"--max-pages must be at least 1, got {max_pages}")
    if settings.workers < 1:
        raise CrawlError(f"--workers must be at least 1, got {settings.workers}")
    if settings.delay is not None and settings.delay < 0:
        raise CrawlError(f"--delay cannot be negative, got {settings.delay}")
    if settings.tables not in TABLE_MODES:
        raise CrawlError(f"--tables must be one of {', '.join(TABLE_MODES)}, got {settings.tables!r}")


def _check_out_path(out: Path) -> None:
    """Refuse an --out the corpus cannot be written to before any request, not after the crawl."""
    if out.is_dir():
        raise CrawlError(f"--out {out} is a directory; give the corpus file to write, e.g. {out / 'corpus.jsonl'}")
    folder = out.absolute().parent
    while not folder.exists() and folder != folder.parent:  # write_corpus creates the missing folders
        folder = folder.parent
    if not folder.is_dir():
        raise CrawlError(f"cannot write --out {out}: {folder} is not a directory")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise CrawlError(f"cannot write --out {out}: {folder} is not writable")


class _UrlClaims:
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


class _Crawl:
    def __init__(self, start_url: str, out: Path, settings: CrawlSettings, max_pages: int | None,
                 progress: bool, site: str = "") -> None:
        self.start_url = start_url
        self.out = out
        self.settings = settings
        self.max_pages = max_pages
        self.progress = progress
        self.stop = threading.Event()
        self.fetcher = Fetcher(settings, self.stop)
        self.journal = Journal(journal_path(out), settings.checkpoint_every)
        self.scope = Scope.from_url(start_url)
        self.records: dict[str, FetchRecord] = {}
        self.claimed = _UrlClaims()             # URLs fetched or queued
        self.frontier: deque[str] = deque()
        self.contents: set[str] = set()         # sha1 of the articles so far (for --max-pages)
        self.page_sha1: dict[str, str] = {}     # canonical page -> sha1 of the paragraphs kept for it
        self.skipped = 0
        self.previous: dict[str, Document] = {}    # the last crawl's documents, reusable after a 304
        self.validators: dict[str, Validators] = {}
        self.seeds: list[str] = []              # every URL the last crawl knew
        self.report = CrawlReport(out_path=out)
        self.bar: tqdm | None = None
        self.api: WikiApi | None = None         # set when the wiki is listed through its API
        self.api_state: dict | None = None      # what the next --update needs
        self.api_pages: dict[str, PageFacts] = {}  # page URL -> what the API says about it
        self.journaling = True
        self.site_given = site                  # --site: wins over what the wiki says
        self.site = site                        # the name recorded on every page

    # ------------------------------------------------------------------ the run

    def run(self, resume: bool) -> CrawlReport:
        began = time.monotonic()
        self._load_previous_crawl()
        header, records, valid_length = Journal.read(self.journal.path)
        try:
            if resume and header is not None:
                self._replay(header, records, valid_length)
            else:
                if resume:
                    log.warning("no interrupted crawl of %s to resume; starting a new crawl", self.out)
                elif header is not None:
                    log.warning("discarding the interrupted crawl of %s (use --resume to continue it)", self.out)
                self._start()
            # The bar starts once the crawl has: a start that fails prints one line, no bar.
            self.bar = tqdm(desc="crawl", unit="page", file=sys.stderr, disable=not self.progress,
                            dynamic_ncols=True, initial=len(self.records))
            self._crawl_frontier()
        finally:
            self.stop.set()
            if self.bar is not None:
                self.bar.close()
            self.journal.close()
            self.fetcher.close()

        built = build_pages(self.records.values(), self.scope, self.max_pages)
        pages = self._with_site(built.pages)
        write_corpus(pages, self.out)
        if self.settings.conditional:
            documents = {r.document.url: r.document for r in self.records.values() if r.document}
            save_state(state_path(self.out), self.start_url,
                       CrawlState(urls=self.claimed.all(), documents=documents, api=self.api_state))
        self.journal.remove()

        self.report.skipped.update(built.broken_redirects.values())
        self.report.limit_reached = self._full()
        return self._finish(pages, began)

    def _with_site(self, pages: list) -> list:
        for page in pages:
            page.site = self.site
        return pages

    def _learn_site(self, stated: str) -> None:
        """The wiki's name as the wiki states it, unless --site gave one."""
        if not self.site_given and stated:
            self.site = stated

    def _finish(self, pages: list, began: float) -> CrawlReport:
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
        host = host_of(self.start_url)
        report.delay, report.local = self.fetcher.throttle.delay(host), is_loopback(host)
        report.seconds = time.monotonic() - began
        log.info("crawl finished: %s", report.summary().replace("\n", "; "))
        return report

    def update(self) -> CrawlReport:
        """Bring the corpus of the last API crawl of out up to date: ask the API what changed
        since that crawl (list=recentchanges), fetch only the pages whose content changed, take
        the aliases of the others from the API, drop pages that are gone. Without an API crawl
        to update, this is a full crawl with conditional requests."""
        began = time.monotonic()
        state = load_state(state_path(self.out))
        if not state.documents:
            raise CrawlError(f"--update needs an earlier crawl of {self.out} (none found); run without --update first")
        if state.api is None or not self.settings.use_api:
            log.info("the last crawl of %s followed links: updating with conditional requests", self.out)
            return self.run(resume=False)
        if self._too_old(state.api.get("since", "")):
            log.warning("the last crawl of %s is older than the wiki's recent changes: crawling it all again", self.out)
            return self.run(resume=False)
        try:
            previous, sites = {}, set()
            for page in iter_corpus(self.out):
                previous[page.sha1] = (page.paragraphs, page.sections)
                sites.add(page.site)
        except CorpusError as exc:
            raise CrawlError(f"cannot update {self.out}: {exc}; run without --update for a full crawl") from exc
        self._learn_site(state.api.get("sitename") or (sites.pop() if len(sites) == 1 else ""))
        self.scope = Scope(origin=state.api["origin"], article_path=state.api["article_path"])
        self.api = WikiApi(self.fetcher, state.api["url"], self.settings.maxlag)
        self.journaling = False   # an update is short: interrupted, it is simply run again
        try:
            if self.settings.obey_robots:
                self.fetcher.robots(self.scope.origin)
                if self.scope.origin in self.fetcher.unreachable:
                    raise CrawlError(f"cannot reach {self.scope.origin} ({self.fetcher.unreachable[self.scope.origin]})")
            changes, now = self.api.changes_since(state.api["since"], tuple(state.api.get("namespaces", [0])))
            # rcstart is inclusive (whole seconds): leave out the rows the last update saw already.
            seen_rcid = int(state.api.get("rcid") or 0)
            changes = [c for c in changes if int(c.get("rcid") or 0) > seen_rcid]
            last_rcid = max([seen_rcid, *(int(c.get("rcid") or 0) for c in changes)])
            documents, fetch, removed = self._apply_changes(state, changes, previous)
            self.report.changes, self.report.removed = len(changes), removed
            self.bar = tqdm(desc="update", unit="page", file=sys.stderr, disable=not self.progress or not fetch,
                            dynamic_ncols=True)
            self.claimed.add([url for url in documents if url not in fetch])
            for url in fetch:
                if self.claimed.claim(url):
                    self.frontier.append(url)
            self._crawl_frontier()
        except ApiError as exc:
            raise CrawlError(f"cannot update through {state.api['url']} ({exc}); run without --update "
                             "for a full crawl") from exc
        finally:
            self.stop.set()
            if self.bar is not None:
                self.bar.close()
            self.fetcher.close()
        # A page that could not be fetched now (timeout, 5xx) keeps its old text, and the next
        # update asks for the same changes again.
        failed = [url for url in fetch if url in self.records and self.records[url].document is None]
        self.report.skipped.update(self.records.pop(url).skip for url in failed)
        kept = [FetchRecord(url=url, skip=doc.skip, document=doc) for url, doc in documents.items()
                if url not in self.records]
        records = kept + list(self.records.values())
        pages = self._with_site(build_pages(records, self.scope).pages)
        write_corpus(pages, self.out)
        if failed:
            log.warning("%d changed pages could not be fetched; the next --update tries them again", len(failed))
            self.api_state = dict(state.api)
        else:
            self.api_state = {**state.api, "since": now or state.api["since"], "rcid": last_rcid}
        save_state(state_path(self.out), self.start_url, CrawlState(
            urls=sorted({*state.urls, *self.records}),
            documents={r.document.url: r.document for r in records if r.document}, api=self.api_state))
        return self._finish(pages, began)

    def _apply_changes(self, state: CrawlState, changes: list[dict],
                       previous: dict[str, tuple[list[str], list[list[str]]]]
                       ) -> tuple[dict[str, Document], list[str], int]:
        """The last crawl's documents with the changes applied where no fetch is needed (aliases,
        pages gone), the URLs to fetch, and how many pages are gone."""
        articlepath = state.api["articlepath"]
        url_of = lambda title: article_url(self.scope.origin, articlepath, title)  # noqa: E731
        documents = {url: replace(doc) for url, doc in state.documents.items()}
        stale = set()                                    # articles whose text the old corpus lost
        for url, doc in documents.items():
            if doc.skip is None:
                if doc.sha1 in previous:   # the text and its section paths, as the last crawl stored them
                    paragraphs, sections = previous[doc.sha1]
                    doc.paragraphs, doc.sections = list(paragraphs), [list(path) for path in sections]
                else:
                    stale.add(url)
        content, touched = changed_titles(changes)
        # A redirect that changed (new, retargeted, deleted) also changes the aliases of the page
        # it pointed to: ask about that page too.
        by_alias = {alias: url for url, doc in documents.items() for alias in doc.redirected_from}
        titles_of = {url: self.scope.title_of(url) for url in documents}
        ask = set(touched) | {titles_of[by_alias[t]] for t in touched if t in by_alias and titles_of[by_alias[t]]}
        ask |= {titles_of[url] for url in stale if titles_of[url]}
        if not ask:
            return documents, [], 0
        resolved = self.api.pages(sorted(ask), tuple(state.api.get("namespaces", [0])))
        removed = 0
        for title in ask:
            if title in resolved.missing or title in resolved.redirected:
                removed += documents.pop(url_of(title), None) is not None
        fetch = []
        for title, facts in resolved.pages.items():
            url = url_of(title)
            self.api_pages[url] = facts
            doc = documents.get(url)
            if doc is None or title in content or url in stale:
                fetch.append(url)
            else:
                doc.redirected_from = list(dict.fromkeys(facts.redirects))
        return documents, fetch, removed

    def _too_old(self, since: str) -> bool:
        try:
            then = calendar.timegm(time.strptime(since, "%Y-%m-%dT%H:%M:%SZ"))
        except ValueError:
            return True
        return time.time() - then > self.settings.changes_max_age_days * 86400

    def _start(self) -> None:
        """Fetch the start page (its failure is the user's error) and learn the crawl's scope."""
        origin = self.scope.origin
        if self.settings.obey_robots:
            self.fetcher.robots(origin)
            if origin in self.fetcher.unreachable:
                raise CrawlError(f"cannot reach {origin} ({self.fetcher.unreachable[origin]})")
        self.claimed.claim(self.start_url)
        result = self.fetcher.fetch(self.start_url, follow=self.claimed.claim)
        if result.error:
            if result.error in UNREACHABLE:
                raise CrawlError(f"cannot reach {origin} ({result.error})")
            raise CrawlError(f"cannot crawl from {self.start_url}: {result.error}")
        page = extract_article(result.text or "", result.final_url, tables=self.settings.tables)
        if page is None:
            raise CrawlError(f"{self.start_url} is not a MediaWiki page (no #firstHeading, no article body)")
        self.scope = Scope.from_url(result.final_url, page.article_path)
        self._learn_site(find_site_name(result.text or ""))
        api_url = find_api_url(result.text or "", result.final_url) if self.settings.use_api else None
        listing = self._list_through_api(api_url) if api_url else None
        log.info("crawling %s%s* %s", self.scope.origin, self.scope.article_path,
                 f"as listed by {api_url}" if listing else "by following links")
        self.journal.start({"start": self.start_url, "origin": self.scope.origin,
                            "article_path": self.scope.article_path, "api": self.api.url if self.api else None,
                            "site": self.site})
        if listing is not None:
            self._queue_listing(listing)   # first: the start page is recorded with its API facts too
        record = self._record_of(result, page)
        if listing is None:
            # A recrawl also starts from every URL the last crawl knew: pages answering 304 bring
            # no links, and their links were among those URLs.
            record.links += [url for url in self.seeds if self.scope.contains(url)]
        self._record(record)

    # ------------------------------------------------------------------ the MediaWiki API

    def _list_through_api(self, api_url: str) -> Listing | None:
        """Every article of the wiki as its API lists it, or None (then links are followed)."""
        api = WikiApi(self.fetcher, api_url, self.settings.maxlag)
        try:
            listing = api.listing(also_namespaces=self.settings.spin_off_namespaces)
        except ApiError as exc:
            log.info("no usable MediaWiki API at %s (%s): following links", api_url, exc)
            return None
        self.api = api
        self._learn_site(listing.sitename)
        self.scope = Scope.from_url(self.scope.origin + "/", listing.articlepath.replace("$1", ""))
        self.api_state = {"url": api_url, "since": listing.server_time, "rcid": 0, "origin": self.scope.origin,
                          "article_path": self.scope.article_path, "articlepath": listing.articlepath,
                          "namespaces": listing.namespaces, "sitename": listing.sitename}
        return listing

    def _queue_listing(self, listing: Listing) -> None:
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

    def _replay(self, header: dict, records: list[FetchRecord], valid_length: int) -> None:
        if header.get("start") != self.start_url:
            raise CrawlError(f"the interrupted crawl of {self.out} started at {header.get('start')}, "
                             f"not {self.start_url}; run without --resume to start over")
        self.scope = Scope(origin=header["origin"], article_path=header["article_path"])
        self._learn_site(header.get("site") or "")
        self.journal.reopen(valid_length)
        for record in records:  # claim every URL done first, so that replayed links do not queue them
            document = record.document
            self.claimed.add([record.url, *record.redirects] + ([document.url] if document else []))
        for record in records:
            self._record(record, replayed=True)
        self.report.resumed = len(records)
        if header.get("api"):  # listed through the API: list again, queue what is not done
            if self.settings.obey_robots:
                self.fetcher.robots(self.scope.origin)
            listing = self._list_through_api(header["api"])
            if listing is None:
                raise CrawlError(f"cannot resume the crawl of {self.out}: its API {header['api']} does not answer; "
                                 "try again later, or run without --resume to start over")
            self._queue_listing(listing)
        if self.claimed.claim(self.start_url):
            self.frontier.appendleft(self.start_url)
        log.info("resuming: %d URLs done, %d queued", len(records), len(self.frontier))

    def _crawl_frontier(self) -> None:
        workers = self.settings.workers
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="crawl")
        in_flight: dict[Future, str] = {}
        try:
            while True:
                while self.frontier and len(in_flight) < 2 * workers and not self._full():
                    url = self.frontier.popleft()
                    in_flight[pool.submit(self._visit, url, self.scope)] = url
                if not in_flight:
                    break
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in done:
                    del in_flight[future]
                    self._record(future.result())
                self._show_progress(len(done), len(in_flight))
        finally:
            self.stop.set()  # on Ctrl-C: workers stop waiting and retrying
            pool.shutdown(wait=False, cancel_futures=True)

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
            return self._record_of(result, page, scope)
        except Exception as exc:  # noqa: BLE001 - one bad page must never end the crawl
            log.warning("skipped %s: %s: %s", url, type(exc).__name__, exc, exc_info=log.isEnabledFor(logging.DEBUG))
            return FetchRecord(url=url, skip=f"error ({type(exc).__name__})")

    def _record_of(self, result: FetchResult, page: ExtractedPage, scope: Scope | None = None) -> FetchRecord:
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
            kind=page_kind(page, self.settings), categories=page.categories,
            redirected_from=page.redirected_from, etag=result.etag, last_modified=result.last_modified)
        # Through the API the listing has every page: links are not followed.
        links = followable_links(page, scope, self.settings) if skip in FOLLOW_LINKS_OF and self.api is None else []
        return FetchRecord(url=result.url, skip=skip, document=document, redirects=result.redirects, links=links)

    # ------------------------------------------------------------------ bookkeeping (coordinator)

    def _record(self, record: FetchRecord, replayed: bool = False) -> None:
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

    def _full(self) -> bool:
        return self.max_pages is not None and len(self.contents) >= self.max_pages

    def _show_progress(self, done: int, in_flight: int) -> None:
        self.bar.update(done)
        self.bar.set_postfix(stored=len(self.contents), queued=len(self.frontier) + in_flight, skipped=self.skipped,
                             refresh=False)

    def _load_previous_crawl(self) -> None:
        """Validators and documents of the last finished crawl of out, for conditional requests.
        A stored article is only reusable if its paragraphs are still in the old corpus."""
        if not self.settings.conditional:
            return
        state = load_state(state_path(self.out))
        self.seeds = state.urls
        documents = state.documents
        if not documents:
            return
        paragraphs: dict[str, tuple[list[str], list[list[str]]]] = {}
        if self.out.is_file():
            try:
                paragraphs = {page.sha1: (page.paragraphs, page.sections) for page in iter_corpus(self.out)}
            except CorpusError as exc:
                log.warning("not reusing the old corpus (%s); fetching everything", exc)
        for url, document in documents.items():
            if not (document.etag or document.last_modified) or url == self.start_url:
                continue
            if document.skip is None:
                if document.sha1 not in paragraphs:
                    continue
                document.paragraphs, document.sections = paragraphs[document.sha1]
            self.previous[url] = document
            self.validators[url] = Validators(document.etag, document.last_modified)
        log.info("recrawl: %d pages can be revalidated with conditional requests", len(self.validators))


def _size(nbytes: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if nbytes < 1024 or unit == "GB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024
    return f"{nbytes} B"
