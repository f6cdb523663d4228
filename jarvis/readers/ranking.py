"""The passage ranker: which paragraphs of the top pages are about the question.

    ranker = PassageRanker(settings.passages)
    ranker.scores(question, passages)          # one score per passage, higher first
    ranker.best(question, passages, 12)        # the 12 best, in reading order

It ranks for the pipeline's paragraph pre-ranking (``ReaderSettings.max_paragraphs``), for the span
reader's token budget (jarvis/readers/passages.py: the best passages are read while they fit) and for
the training examples of a reader (jarvis/training). Ranking (weights in ``PassageSettings``), every
part scaled to [0, 1]:
- BM25 of the passage (its text and section headings) against the question, over the candidates;
- cosine similarity of question and passage embeddings, when an embedder is given (duck-typed:
  ``embedder.embed(texts) -> unit vectors``); only the best ``dense_candidates`` by the other
  parts are embedded, so the embedder's cost is bounded too;
- the section path matched to what the question asks for (the question classifier,
  jarvis/readers/question_kinds.py): a drops question prefers "Drops", a where/spawn question "Spawning" /
  "Natural generation" / "Location", a craft/get question "Obtaining" / "Crafting", "what is X" the
  page's lead;
- what a how-long / how-many question asks for: a passage holding a duration, a number;
- the page: its retrieval score relative to the top page (its rank when there are no scores);
- the lead paragraphs of a page whose title the question names.

The fallback reader ranks blocks and sentences its own way (jarvis/readers/fallback/reader.py), with
weights tuned with its sentence choice; it shares ``relative`` and BM25 (jarvis/lexical.py) with this.
"""
from __future__ import annotations

import re
from typing import Protocol, Sequence

from jarvis.config import PassageSettings
from jarvis.lexical import TermAnalyzer, bm25_scores
from jarvis.readers.base import Passage
from jarvis.readers.question_kinds import in_answer_section, measure_patterns, question_topics

# Whoosh's RegexTokenizer pattern (the analyzer's first stage): splitting with it and analysing word by
# word gives exactly the analyzer's terms, since every later stage works on one token at a time.
ANALYZER_TOKEN = re.compile(r"\w+(?:\.?\w+)*")
STEM_CACHE_SIZE = 200_000


class CachedTerms:
    """TermAnalyzer.terms with a per-word cache: a question's pages hold ~20,000 words, and stemming
    each through Whoosh costs ~0.3 s; looking words up costs ~10 ms."""

    def __init__(self, analyzer: TermAnalyzer) -> None:
        self.analyzer = analyzer
        self._stems: dict[str, tuple[str, ...]] = {}

    def __call__(self, text: str) -> list[str]:
        terms: list[str] = []
        for match in ANALYZER_TOKEN.finditer(text):
            word = match.group()
            stems = self._stems.get(word)
            if stems is None:
                if len(self._stems) >= STEM_CACHE_SIZE:
                    self._stems.clear()
                stems = self._stems[word] = tuple(self.analyzer.terms(word))
            terms.extend(stems)
        return terms


class Embedder(Protocol):
    def embed(self, texts: Sequence[str]):
        """Unit vectors (rows of a 2-D array or tensor), one per text."""


class PassageRanker:
    """Scores candidate passages for a question (see the module docstring)."""

    def __init__(self, weights: PassageSettings | None = None, embedder: Embedder | None = None,
                 analyzer: TermAnalyzer | None = None) -> None:
        self.weights = weights or PassageSettings()
        self.embedder = embedder
        self.terms = CachedTerms(analyzer or TermAnalyzer())

    def best(self, question: str, passages: Sequence[Passage], n: int) -> list[Passage]:
        """The ``n`` best passages, in the order given (reading order); all of them when there are no more."""
        if len(passages) <= n:
            return list(passages)
        scores = self.scores(question, passages)
        keep = sorted(range(len(passages)), key=lambda i: (-scores[i], i))[:n]
        return [passages[i] for i in sorted(keep)]

    def scores(self, question: str, passages: Sequence[Passage]) -> list[float]:
        """The ranking score of each passage (higher first)."""
        w = self.weights
        query = self.terms(question)
        docs = [self.terms(" ".join((*p.section, p.text))) for p in passages]
        lexical = relative(bm25_scores(query, docs))
        topics = question_topics(question)
        page = self._page_prior(passages)
        section = [page[i] * float(in_answer_section(topics, p.section)) for i, p in enumerate(passages)]
        headings = relative(bm25_scores(query, [self.terms(" ".join(p.section)) for p in passages]))
        heading = [page[i] * headings[i] for i in range(len(passages))]
        asked = measure_patterns(question)
        content = [page[i] * float(any(h.search(p.text) for h in asked)) for i, p in enumerate(passages)]
        named = self._named_pages(query, passages)
        # A page's opening paragraphs say what it is, where it is found and what it does: the answer to
        # many questions, however they are worded, on the pages that matter most.
        lead = [page[i] * float(not p.section) / (1 + p.index) ** 0.5 for i, p in enumerate(passages)]
        title = [float(p.title in named) * lead[i] for i, p in enumerate(passages)]
        scores = [w.bm25_weight * lexical[i] + w.section_weight * section[i] + w.page_weight * page[i]
                  + w.heading_weight * heading[i] + w.content_weight * content[i] + w.lead_weight * lead[i]
                  + w.title_weight * title[i]
                  for i in range(len(passages))]
        if self.embedder is not None and w.dense_weight:
            top = sorted(range(len(passages)), key=lambda i: -scores[i])[:max(1, w.dense_candidates)]
            similarity = self._similarity(question, [passages[i] for i in top])
            for i, s in zip(top, similarity):
                scores[i] += w.dense_weight * max(0.0, s)
        return scores

    def _similarity(self, question: str, passages: Sequence[Passage]) -> list[float]:
        vectors = self.embedder.embed([question, *(p.text for p in passages)])
        q = vectors[0]
        return [float(sum(a * b for a, b in zip(q, v))) if not hasattr(q, "dot") else float(q.dot(v))
                for v in vectors[1:]]

    @staticmethod
    def _page_prior(passages: Sequence[Passage]) -> list[float]:
        """The page's score relative to the best page; 1/(1+rank) when the retriever gave no scores."""
        best = max(p.page_score for p in passages)
        rank = [1.0 / (1 + p.page_rank) for p in passages]
        if best > 0:   # both: close scores still leave the top page ahead
            return [r * max(0.0, p.page_score) / best for r, p in zip(rank, passages)]
        return rank

    def _named_pages(self, query: Sequence[str], passages: Sequence[Passage]) -> set[str]:
        """Titles all of whose words the question holds ("what do cows drop" names "Cow")."""
        words = set(query)
        named = set()
        for title in {p.title for p in passages}:
            terms = self.terms(title)
            if terms and set(terms) <= words:
                named.add(title)
        return named


def relative(values: list[float]) -> list[float]:
    """Each value over the largest (all 0 when none is positive)."""
    best = max(values, default=0.0)
    return [v / best if best > 0 else 0.0 for v in values]
