"""The update mode: a corpus crawled through the MediaWiki API brought up to date with what changed.

The API says what changed since the last crawl (list=recentchanges); only the pages whose content
changed are fetched, the aliases of the others are taken from the API, pages that are gone (deleted,
or now a redirect) are dropped. Without an API crawl to update, or when the last crawl is older than
the wiki's recent changes reach, the update is a full crawl with conditional requests (crawler/run.py).
An update journals nothing: it is short, and interrupted it is simply run again.
"""
from __future__ import annotations

import calendar
import logging
import time
from dataclasses import dataclass, replace

from jarvis.crawler.corpus import CorpusError, iter_corpus, write_corpus
from jarvis.crawler.dedupe import build_pages
from jarvis.crawler.errors import FULL_CRAWL, CrawlError
from jarvis.crawler.journal import CrawlState, Document, FetchRecord, load_state, save_state, state_path
from jarvis.crawler.mwapi import ApiError, WikiApi, changed_titles
from jarvis.crawler.crawl_report import CrawlReport
from jarvis.crawler.run import check_reachable, run_crawl
from jarvis.crawler.session import CrawlSession
from jarvis.crawler.urls import Scope, article_url

log = logging.getLogger(__name__)

# What the last crawl stored of each article: its paragraphs and their section paths, by content sha1.
OldTexts = dict[str, tuple[list[str], list[list[str]]]]


@dataclass
class _Changes:
    """The last crawl's documents with the changes applied that need no fetch, and what to fetch."""

    documents: dict[str, Document]
    fetch: list[str]          # URLs of the pages whose content changed
    removed: int              # pages gone
    rows: int = 0             # rows of recent changes read
    now: str = ""             # the wiki's clock when they were read
    last_rcid: int = 0        # the last change seen


def update_crawl(session: CrawlSession) -> CrawlReport:
    """Bring the corpus of the last API crawl of ``session.out`` up to date (see the module docstring)."""
    out = session.out
    state = load_state(state_path(out))
    if not state.documents:
        raise CrawlError(f"needs an earlier crawl of {out} (none found)", setting="update", path=out,
                         remedy=FULL_CRAWL)
    if state.api is None or not session.settings.use_api:
        log.info("the last crawl of %s followed links: updating with conditional requests", out)
        return run_crawl(session, resume=False)
    if _too_old(state.api.get("since", ""), session.settings.changes_max_age_days):
        log.warning("the last crawl of %s is older than the wiki's recent changes: crawling it all again", out)
        return run_crawl(session, resume=False)
    previous = _old_texts(session, state)
    session.scope = Scope(origin=state.api["origin"], article_path=state.api["article_path"])
    session.api = WikiApi(session.fetcher, state.api["url"], session.settings.maxlag)
    session.journaling = False
    try:
        changes = _fetch_changes(session, state, previous)
    except ApiError as exc:
        raise CrawlError(f"cannot update through {state.api['url']} ({exc})", path=out, remedy=FULL_CRAWL) from exc
    finally:
        session.close()
    return _write(session, state, changes)


def _old_texts(session: CrawlSession, state: CrawlState) -> OldTexts:
    """The texts of the last corpus by content sha1; learns the site it names."""
    previous: OldTexts = {}
    sites = set()
    try:
        for page in iter_corpus(session.out):
            previous[page.sha1] = (page.paragraphs, page.sections)
            sites.add(page.site)
    except CorpusError as exc:
        raise CrawlError(f"cannot update {session.out}: {exc}", path=session.out, remedy=FULL_CRAWL) from exc
    session.learn_site(state.api.get("sitename") or (sites.pop() if len(sites) == 1 else ""))
    return previous


def _fetch_changes(session: CrawlSession, state: CrawlState, previous: OldTexts) -> _Changes:
    """Ask the API what changed, apply what needs no fetch, fetch the rest."""
    check_reachable(session)
    changes, now = session.api.changes_since(state.api["since"], tuple(state.api.get("namespaces", [0])))
    # rcstart is inclusive (whole seconds): leave out the rows the last update saw already.
    seen_rcid = int(state.api.get("rcid") or 0)
    changes = [c for c in changes if int(c.get("rcid") or 0) > seen_rcid]
    last_rcid = max([seen_rcid, *(int(c.get("rcid") or 0) for c in changes)])
    applied = _apply_changes(session, state, changes, previous)
    applied.rows, applied.now, applied.last_rcid = len(changes), now, last_rcid
    session.report.changes, session.report.removed = len(changes), applied.removed
    session.start_bar("update", disable=not applied.fetch)
    session.claimed.add([url for url in applied.documents if url not in applied.fetch])
    for url in applied.fetch:
        if session.claimed.claim(url):
            session.frontier.append(url)
    session.crawl_frontier()
    return applied


def _write(session: CrawlSession, state: CrawlState, changes: _Changes) -> CrawlReport:
    """Write the updated corpus and the state the next update starts from."""
    records = session.records
    # A page that could not be fetched now (timeout, 5xx) keeps its old text, and the next
    # update asks for the same changes again.
    failed = [url for url in changes.fetch if url in records and records[url].document is None]
    session.report.skipped.update(records.pop(url).skip for url in failed)
    kept = [FetchRecord(url=url, skip=doc.skip, document=doc) for url, doc in changes.documents.items()
            if url not in records]
    every = kept + list(records.values())
    pages = session.with_site(build_pages(every, session.scope).pages)
    write_corpus(pages, session.out)
    if failed:
        log.warning("%d changed pages could not be fetched; the next update tries them again", len(failed))
        session.api_state = dict(state.api)
    else:
        session.api_state = {**state.api, "since": changes.now or state.api["since"], "rcid": changes.last_rcid}
    save_state(state_path(session.out), session.start_url, CrawlState(
        urls=sorted({*state.urls, *records}),
        documents={r.document.url: r.document for r in every if r.document}, api=session.api_state))
    return session.finish(pages)


def _apply_changes(session: CrawlSession, state: CrawlState, changes: list[dict], previous: OldTexts) -> _Changes:
    """The last crawl's documents with the changes applied where no fetch is needed (aliases,
    pages gone), the URLs to fetch, and how many pages are gone."""
    articlepath = state.api["articlepath"]
    scope = session.scope
    url_of = lambda title: article_url(scope.origin, articlepath, title)  # noqa: E731
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
    titles_of = {url: scope.title_of(url) for url in documents}
    ask = set(touched) | {titles_of[by_alias[t]] for t in touched if t in by_alias and titles_of[by_alias[t]]}
    ask |= {titles_of[url] for url in stale if titles_of[url]}
    if not ask:
        return _Changes(documents, [], 0)
    resolved = session.api.pages(sorted(ask), tuple(state.api.get("namespaces", [0])))
    removed = 0
    for title in ask:
        if title in resolved.missing or title in resolved.redirected:
            removed += documents.pop(url_of(title), None) is not None
    fetch = []
    for title, facts in resolved.pages.items():
        url = url_of(title)
        session.api_pages[url] = facts
        doc = documents.get(url)
        if doc is None or title in content or url in stale:
            fetch.append(url)
        else:
            doc.redirected_from = list(dict.fromkeys(facts.redirects))
    return _Changes(documents, fetch, removed)


def _too_old(since: str, max_age_days: float) -> bool:
    """Whether the wiki's recent changes may no longer reach back to ``since`` (unreadable: too old)."""
    try:
        then = calendar.timegm(time.strptime(since, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return True
    return time.time() - then > max_age_days * 86400
