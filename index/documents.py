"""Corpus pages in, Whoosh documents out: the one place that decides what gets indexed."""
from __future__ import annotations

import hashlib
import json

from jarvis.crawler.corpus import Page
from jarvis.index.passages import simplify_title
from jarvis.index.profiles import IndexProfile
from jarvis.index.sources import page_key




def page_fingerprint(page: Page) -> str:
    """Changes when anything indexed changes: the paragraphs, title, aliases or URL.

    Computed from the paragraphs themselves, not the corpus's "sha1" field: a corpus edited by
    hand keeps its stale sha1. Exact text, not content_sha1 (which ignores case and spacing),
    because the paragraphs are stored and shown to the reader as written.
    """
    key = [page.paragraphs, page.title, page.url, sorted(page.aliases)]
    if any(page.sections) or page.page_kind != "article":   # pages without them keep their old fingerprints
        key += [page.sections, page.page_kind]
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
        "kind": page.page_kind,
        "fingerprint": page_fingerprint(page),
    }
    if profile.passages:
        return doc            # stored only: the passages are searched in their own index (sparse.py)
    doc["content"] = "\n".join(page.paragraphs)
    if profile.title_field:
        doc["simple_title"] = "\n".join(simplify_title(t) for t in [page.title, *page.aliases])
    return doc
