"""What every reader reads and returns, and the errors of loading one.

``Passage`` (one paragraph of a retrieved page), ``Span`` (an answer: the passage and the characters
of it that answer), ``Reader`` (the protocol the pipeline needs), and the errors of loading a reader.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

from jarvis.errors import JarvisError


class ModelUnavailableError(JarvisError):
    """The QA model cannot be loaded (not downloaded and no network, bad path, not a QA model)."""


class ReaderSettingsError(JarvisError):
    """Reader settings that cannot work (an unknown backend): a configuration mistake, no fallback."""


@dataclass(frozen=True)
class Passage:
    """One paragraph of a retrieved page: the unit the readers read."""

    title: str          # the page it comes from
    text: str
    page_rank: int      # 0 for the top search hit
    index: int          # position of the paragraph in its page
    url: str = ""
    section: tuple[str, ...] = ()   # heading path of the paragraph in its page; () for the lead
    page_score: float = 0.0         # the retriever's score of the page (its own scale)
    page_kind: str = "article"      # the page's kind as the corpus labels it
    site: str = ""                  # the page's wiki, or "server guide"


@dataclass(frozen=True)
class Span:
    """A reader's answer: ``passage.text[start:end] == text``."""

    text: str
    score: float                    # the reader's own scale (span readers: start + end logit)
    passage: Passage
    start: int
    end: int
    null_score: float | None = None  # the no-answer score of the window it came from


class Reader(Protocol):
    """What the pipeline needs from a reader (span reader or fallback)."""

    name: str

    def read(self, question: str, passages: Sequence[Passage]) -> Span | None:
        """The best answer in the passages, or None when the reader does not know."""
