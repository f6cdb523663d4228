"""Resuming: an interrupted crawl continued from its journal (crawler/journal.py).

Every URL the journal records as done is claimed and its record replayed, so that no finished page
is fetched again and the frontier comes back as it was (the journal holds the links each record added
to it). A crawl listed through the MediaWiki API lists the wiki again and queues what is not done.
"""
from __future__ import annotations

import logging

from jarvis.crawler.errors import RETRY_OR_START_OVER, START_OVER, CrawlError
from jarvis.crawler.journal import FetchRecord
from jarvis.crawler.session import CrawlSession
from jarvis.crawler.urls import Scope

log = logging.getLogger(__name__)


def replay(session: CrawlSession, header: dict, records: list[FetchRecord], valid_length: int) -> None:
    """Bring the session to where the interrupted crawl of ``session.out`` stopped, from its journal's
    header, records and the length of its valid prefix (a torn last line is cut off)."""
    out = session.out
    if header.get("start") != session.start_url:
        raise CrawlError(f"the interrupted crawl of {out} started at {header.get('start')}, not {session.start_url}",
                         path=out, remedy=START_OVER)
    session.scope = Scope(origin=header["origin"], article_path=header["article_path"])
    session.learn_site(header.get("site") or "")
    session.journal.reopen(valid_length)
    for record in records:  # claim every URL done first, so that replayed links do not queue them
        document = record.document
        session.claimed.add([record.url, *record.redirects] + ([document.url] if document else []))
    for record in records:
        session.record(record, replayed=True)
    session.report.resumed = len(records)
    if header.get("api"):  # listed through the API: list again, queue what is not done
        if session.settings.obey_robots:
            session.fetcher.robots(session.scope.origin)
        listing = session.list_through_api(header["api"])
        if listing is None:
            raise CrawlError(f"cannot resume the crawl of {out}: its API {header['api']} does not answer",
                             path=out, remedy=RETRY_OR_START_OVER)
        session.queue_listing(listing)
    if session.claimed.claim(session.start_url):
        session.frontier.appendleft(session.start_url)
    log.info("resuming: %d URLs done, %d queued", len(records), len(session.frontier))
