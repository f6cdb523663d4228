"""What every reader reads and returns, and the errors of loading one.

``Passage`` (one paragraph of a retrieved page), ``Span`` (an answer: the passage and the characters
of it that answer), ``Reader`` (the protocol the pipeline needs), ``sentence_around`` (the sentence an
answer was read in, split by crawler.sentences, the one splitter), and the errors of loading a reader.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence

from jarvis.crawler.sentences import split_sentences
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
    # How well retrieval found this passage answering the question: the reranker's logit (jarvis/readers/rerank.py)
    # when one scored it; None when passages came by page.
    score: float | None = None


@dataclass(frozen=True)
class Span:
    """A reader's answer: ``passage.text[start:end] == text``."""

    text: str
    score: float                    # the reader's own scale (span readers: start + end logit)
    passage: Passage
    start: int
    end: int
    null_score: float | None = None  # the no-answer score of the window it came from
    # The sentence of passage.text the span was read in, as a character range (None: the pipeline finds it).
    sentence: tuple[int, int] | None = None
    # What the reader knows of how sure it is, for the confidence model (jarvis/confidence): its scores,
    # margins over the runner-up, whether the kind of phrase asked for was found... Names are the reader's.
    signals: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ReaderNeeds:
    """What a reader asks of the pipeline, declared by the reader instead of probed for."""

    # Read only the passages a token budget allows (jarvis/readers/passages.py), counted with ``tokenizer``
    # (None: estimated from words) for windows of ``max_seq_len`` tokens overlapping by ``doc_stride``.
    passage_selection: bool = False
    tokenizer: object = None
    max_seq_len: int = 384
    doc_stride: int = 128
    token_budget: int | None = None   # the reader's own budget (its card's); None: DEFAULT_TOKEN_BUDGET


class Reader(Protocol):
    """What the pipeline needs from a reader (span reader or fallback): what it calls, and nothing it probes for."""

    name: str               # what Answer.reader shows ("jarvis-minilm-qa+int8", "fallback:minilm")
    id: str                 # stable, however it runs: its confidence models are found by it ("jarvis-minilm-qa")
    needs: ReaderNeeds      # what it asks of the pipeline (passage selection, its tokenizer and window)

    def warm_up(self) -> None:
        """Load what the first question would otherwise wait for (the assembly calls it once, before any)."""

    def read(self, question: str, passages: Sequence[Passage]) -> Span | None:
        """The best answer in the passages, or None when the reader does not know."""

    def candidates(self, question: str, passages: Sequence[Passage], n: int) -> list[Span]:
        """The ``n`` best answers in the passages, best first ([] when none): the first is ``read``'s, the
        others are what the pipeline weighs its agreement with (jarvis/confidence) and places by section."""


def sentence_around(span: Span) -> str:
    """The sentence a span was read in: the reader's own (``span.sentence``), else the sentences of its
    passage that the span touches."""
    text = span.passage.text
    if span.sentence is not None:
        start, end = span.sentence
    else:
        touched = [(s, e) for s, e in split_sentences(text) if s < span.end and e > span.start]
        start, end = (touched[0][0], touched[-1][1]) if touched else (span.start, span.end)
    return text[start:end].strip()
