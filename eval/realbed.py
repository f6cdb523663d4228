"""The real-wiki test bed as an evaluation corpus: ``../shared/realwiki`` served by the local mirror
(jarvis_lab.realbed), crawled by our crawler exactly as a user would crawl the live wiki, kept under
``$JARVIS_HOME/realbed/`` and made again only when the pages file, the crawl settings or the extractor change.
"""
from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict, replace
from pathlib import Path

from jarvis.crawler.extract import EXTRACTOR_VERSION
from jarvis.crawler.settings import CrawlSettings
from jarvis.index.sources import file_sha256

log = logging.getLogger(__name__)

MAIN_PAGE_PATH = "/w/Main_Page"
HELDOUT_FILE = "heldout_pages.txt"   # beside pages.json.gz: the pages no model is trained or fitted on


def heldout_titles(pages: Path) -> set[str]:
    """The titles of the test bed's held-out pages (empty when the list is not there)."""
    path = Path(pages).parent / HELDOUT_FILE
    if not path.is_file():
        return set()
    return {line.strip() for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")}


def realbed_corpus(home: Path, pages: Path, settings: CrawlSettings, progress: bool = True) -> Path:
    """The corpus of a crawl of the test bed (a user error when the pages file is absent)."""
    from jarvis.crawler import crawl
    from jarvis_lab.realbed import start_realbed_wiki

    settings = replace(settings, delay=0.0)   # our own local site
    key = hashlib.sha1(json.dumps([file_sha256(Path(pages)), asdict(settings), EXTRACTOR_VERSION], sort_keys=True, default=str)
                       .encode("utf-8")).hexdigest()[:12]
    corpus = home / "realbed" / key / "corpus.jsonl"
    if corpus.is_file():
        return corpus
    server, base_url = start_realbed_wiki(pages)   # RealBedMissing (a user error) without ../shared
    try:
        log.info("crawling the real-wiki test bed at %s into %s", base_url, corpus)
        report = crawl(base_url + MAIN_PAGE_PATH, corpus, settings, progress=progress)
        log.info("%s", report.summary())
    finally:
        server.shutdown()   # closes its socket too
    return corpus
