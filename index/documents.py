"""Corpus pages in, Whoosh documents out: the one place that decides what gets indexed."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from crawler.corpus import CorpusError, Page, iter_corpus

from index.profiles import IndexProfile
from index.sources import page_key

if TYPE_CHECKING:
    from index.sources import LoadedCorpus

log = logging.getLogger(__name__)


def load_corpus(path: str | os.PathLike) -> "LoadedCorpus":
    """Read and check one corpus file (missing, malformed or empty: CorpusError, a user error)."""
    from index.sources import load_sources

    return load_sources(path)


def load_corpus_pages(path: str | os.PathLike) -> list[Page]:
    """The pages of a corpus file, unique titles, corpus order (a CorpusError when there are none)."""
    path = Path(path)
    if path.is_dir():
        raise CorpusError(f"{path} is a directory, not a corpus JSONL file")
    pages: dict[str, Page] = {}
    for page in iter_corpus(path):
        title = page.title.strip()
        if not title:
            log.warning("%s: skipping a page without a title (%s)", path, page.url)
        elif title in pages:
            log.warning("%s: duplicate title %r, keeping the first", path, title)
        else:
            page.title = title
            pages[title] = page
    if not pages:
        raise CorpusError(f"corpus {path} has no pages")
    return list(pages.values())


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def simplify_title(title: str) -> str:
    """'Jack_o\\'Lantern (block)' -> 'Jack o Lantern block': words only, for the title field."""
    return " ".join(re.findall(r"\w+", title.replace("_", " ")))


def page_fingerprint(page: Page) -> str:
    """Changes when anything indexed changes: the paragraphs, title, aliases or URL.

    Computed from the paragraphs themselves, not the corpus's "sha1" field: a corpus edited by
    hand keeps its stale sha1. Exact text, not content_sha1 (which ignores case and spacing),
    because the paragraphs are stored and shown to the reader as written.
    """
    key = [page.paragraphs, page.title, page.url, sorted(page.aliases)]
    if any(page.sections) or page.kind != "article":   # pages without them keep their old fingerprints
        key += [page.sections, page.kind]
    key = json.dumps(key, ensure_ascii=False)
    return hashlib.sha1(key.encode("utf-8")).hexdigest()


def to_document(page: Page, profile: IndexProfile) -> dict[str, str]:
    """The Whoosh fields of a page under a profile."""
    doc = {
        "key": page_key(page),
        "site": page.site,
        "title": page.title,
        "url": page.url,
        "aliases": json.dumps(page.aliases, ensure_ascii=False),
        "paragraphs": json.dumps(page.paragraphs, ensure_ascii=False),
        "sections": json.dumps(page.sections, ensure_ascii=False),
        "kind": page.kind,
        "fingerprint": page_fingerprint(page),
        "content": "\n".join(page.paragraphs),
    }
    if profile.title_field:
        doc["simple_title"] = "\n".join(simplify_title(t) for t in [page.title, *page.aliases])
    return doc
