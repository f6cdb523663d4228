"""Blocks and sentences: the units the fallback reader scores.

A block is a paragraph, or a list with its lead-in line ("Killing a zombie gives the following loot:"
and the items after it); sentences are split inside blocks.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from jarvis.crawler.table_rows import parse_row
from jarvis.readers.fallback.trimming import strip_span
from jarvis.crawler.sentences import split_sentences
from jarvis.readers.base import Passage

MAX_LIST_ITEM_WORDS = 40     # a longer paragraph after a lead-in line is prose again, not a list item


@dataclass(frozen=True)
class Sentence:
    passage: Passage
    start: int              # passage.text[start:end] is the sentence
    end: int
    position: int           # 0 for the first answerable sentence of its block

    @property
    def text(self) -> str:
        return self.passage.text[self.start:self.end]


@dataclass(frozen=True)
class Block:
    """A paragraph, or a lead-in line ending with ':' and the list items after it."""

    passages: tuple[Passage, ...]

    @property
    def title(self) -> str:
        return self.passages[0].title

    @property
    def text(self) -> str:
        return " ".join(p.text for p in self.passages)

    @property
    def opens_page(self) -> bool:
        return self.passages[0].index == 0

    @property
    def lead_in(self) -> str:
        """The line that introduces a list ('' for a plain paragraph): read with each item."""
        return self.passages[0].text if len(self.passages) > 1 else ""

    def sentences(self) -> list[Sentence]:
        """The block's sentences that can answer (a lead-in line introduces, it does not answer, and
        a lone label or image caption of a word or two says nothing)."""
        answerable = self.passages[1:] if self.lead_in else [p for p in self.passages if not _is_label(p.text)]
        spans = [(p, start, end) for p in answerable for start, end in sentences_of(p.text)]
        return [Sentence(p, start, end, position) for position, (p, start, end) in enumerate(spans)]


MIN_PROSE_WORDS = 3   # a paragraph of fewer words, without a number, is a label ("Respawn anchor")


def _is_label(text: str) -> bool:
    return len(text.split()) < MIN_PROSE_WORDS and not any(c.isdigit() for c in text)


def split_blocks(passages: Sequence[Passage]) -> list[Block]:
    """Group consecutive passages into blocks: a line ending with ':' takes the short ones after it."""
    blocks: list[list[Passage]] = []
    for passage in passages:
        current = blocks[-1] if blocks else None
        continues_list = (
            current is not None
            and current[0].text.rstrip().endswith(":")
            and (current[-1].title, current[-1].page_rank, current[-1].index + 1)
            == (passage.title, passage.page_rank, passage.index)
            and len(passage.text.split()) <= MAX_LIST_ITEM_WORDS
            and not passage.text.rstrip().endswith(":")
        )
        if continues_list:
            current.append(passage)
        else:
            blocks.append([passage])
    return [Block(tuple(b)) for b in blocks]


def sentences_of(text: str) -> list[tuple[int, int]]:
    """Character ranges of a passage's sentences: a table row is one, whatever its cells say."""
    if parse_row(text) is not None:
        span = strip_span(text, 0, len(text))
        return [span] if span[0] < span[1] else []
    spans = (strip_span(text, start, end) for start, end in split_sentences(text))   # final full stops out
    return [span for span in spans if span[0] < span[1]]
