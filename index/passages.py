"""Passages: the units retrieval ranks and the reader reads.

A passage is one paragraph of a page as the crawler wrote it: a prose paragraph, a list item, or a content
table's row with its header row (crawler/table_rows.py makes each one paragraph). It is named by its page and
its position there, and read with a header naming the page and the section it sits in, so that "They drop
0-2 leather" says which mob:

    passage_text("Cow", ["Drops"], "An adult cow drops 0-2 leather.")  ->  "Cow > Drops: An adult cow drops 0-2 leather."

That one text is what the passage encoder embeds, what the reranker scores and (jarvis/readers/context.py)
what the reader reads, so that each model sees at run time exactly what it was trained on.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Sequence

HEADER_SEPARATOR = " > "
_WORDS = re.compile(r"\w+")


def context_header(title: str, section: Sequence[str]) -> str:
    """"Cow > Drops: " for a paragraph of the Drops section of Cow; "Cow: " for its lead."""
    return HEADER_SEPARATOR.join((title, *section)) + ": "


def passage_text(title: str, section: Sequence[str], text: str) -> str:
    """A passage as the models read it: its header, then its text (line breaks of table cells as spaces)."""
    return context_header(title, section) + " ".join(text.split())


def passage_fingerprint(title: str, section: Sequence[str], text: str) -> str:
    """Changes whenever what a passage's vector is made of changes (an incremental build reuses the rest)."""
    return hashlib.sha1(passage_text(title, section, text).encode("utf-8")).hexdigest()[:16]


def simplify_title(title: str) -> str:
    """'Jack_o\\'Lantern (block)' -> 'Jack o Lantern block': words only, for the title field."""
    return " ".join(_WORDS.findall(title.replace("_", " ")))


@dataclass(frozen=True)
class PageFacts:
    """What searching needs to know of a page without loading its stored fields (one row of a generation's
    page table): its key (index.sources.page_key), title, kind, site and the fingerprint it was indexed at."""

    key: str
    title: str
    kind: str
    site: str
    fingerprint: str
    paragraphs: int

    def to_row(self) -> list:
        return [self.key, self.title, self.kind, self.site, self.fingerprint, self.paragraphs]

    @classmethod
    def from_row(cls, row: Sequence) -> "PageFacts":
        key, title, kind, site, fingerprint, paragraphs = row
        return cls(key, title, kind, site, fingerprint, int(paragraphs))
