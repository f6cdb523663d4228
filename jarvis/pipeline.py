"""Question in, answer out: retrieval (index.Searcher), reading (span reader or fallback), and how sure.

    jarvis = assemble(config, index_dir)               # jarvis/assembly.py: index, reader, confidence, once
    answer = jarvis.ask("what do cows drop?")          # Answer(text="0-2 leather and 1-3 raw beef", ...)
    answer.confidence, answer.abstained                # 0.81, False (jarvis/answer.py: plain data)

Every answer gets ``confidence``, the estimated probability that it is right: the reader's signals and
the retrieval's (jarvis/confidence) weighed by a model fitted on dev question sets. The answer policy
(jarvis/confidence/policy.py) picks that model and the threshold by the page's site; below the threshold
Jarvis does not state the answer (``abstained``): the reply says it is not sure and points to the page
(jarvis/replies.py). The answer records the policy's rule and threshold (``rule``, ``threshold``).

``Jarvis.ask`` may be called again and again, from one worker thread (the chat bridge) or
several (a lock serialises them: one model, one question at a time). Answers are cached per
normalised question and index version, so a reindex never serves stale answers.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Protocol, Sequence

from jarvis.answer import Answer
from jarvis.crawler.guide import GUIDE_PAGE_KIND, GUIDE_SITE
from jarvis.crawler.sentences import split_sentences
from jarvis.config import ReaderSettings
from jarvis.confidence import (AnswerPolicy, Decision, agreement_signals, answer_signals, place_signals, rerank_signals,
                               retrieval_signals)
from jarvis.index.passages import passage_text
from jarvis.lexical import TermAnalyzer
from jarvis.question_text import check_question, normalize_question, reader_question, reading_form
from jarvis.readers.base import Passage, Reader, Span, sentence_around
from jarvis.readers.passages import PassageSelector
from jarvis.readers.placement import arrange
from jarvis.readers.question_kinds import is_yes_no
from jarvis.readers.rerank import Reranker
from jarvis.readers.ranking import PassageRanker

log = logging.getLogger(__name__)

AGREEMENT_CANDIDATES = 5   # the reader's best spans whose agreement the confidence weighs (signals)


class IndexView(Protocol):
    """The index as one question sees it (index.IndexSnapshot): the live generation, read once."""

    @property
    def version(self) -> str:
        """The generation: answers are cached per version."""

    @property
    def sites(self) -> Sequence[str]:
        """The wikis (and "server guide") it holds."""

    @property
    def glossary(self):
        """The players' words (index.glossary.Glossary) it searches with."""

    def search(self, query, k: int = 3) -> list:
        """The top k pages (index.Hit) for a question, or one read already (``query``), best first."""

    def spelt(self, question: str) -> str:
        """The question's words as it searches them (chat spelling and typos put right)."""

    def query(self, question: str):
        """The question read for searching, once (index.SearchQuery: spelt, expanded, as words)."""

    @property
    def has_passages(self) -> bool:
        """Whether it ranks passages (a passage profile) rather than pages."""

    def passages(self, query, k: int = 30) -> list:
        """The best k passages (index.PassageHit) for a question, or one read already (``query``), best first."""

    def page(self, key: str):
        """A page (index.Hit) by its key, with all its paragraphs."""


class Retriever(Protocol):
    """What the pipeline needs of retrieval: index.Searcher, or any object with these."""

    @property
    def encoder(self):
        """The question encoder of a hybrid index (index.dense.DenseEncoder), or None."""

    def snapshot(self) -> IndexView:
        """The live index generation (its CURRENT pointer read once): one question's view of the index."""

    def search(self, query: str, k: int = 3) -> list:
        """The top k pages (index.Hit) of the live generation, best first."""

    def warm_up(self) -> None: ...

    def close(self) -> None: ...


class Page(Protocol):
    """What the reader needs of a page: index.Hit and crawler.corpus.Page both fit."""

    title: str
    paragraphs: list[str]


@dataclass(frozen=True)
class Judged:
    """The reader's answer, judged by the answer policy."""

    span: Span
    signals: dict           # what the confidence model weighed
    decision: Decision      # the policy's rule, the probability that it is right, and the threshold
    others: tuple[Span, ...] = ()   # the reader's next best candidates, best first
    verdict: str = ""               # a yes/no question: "yes" or "no", as the answer's passage says ("" otherwise)

    @property
    def confidence(self) -> float:
        return self.decision.confidence

    @property
    def threshold(self) -> float:
        return self.decision.threshold


@dataclass
class AskStats:
    """Counters for logs and tests: how many questions, cache hits and reads."""

    asked: int = 0
    cache_hits: int = 0
    reads: int = 0


class AnswerCache:
    """A bounded LRU of answers."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._answers: OrderedDict[tuple, Answer] = OrderedDict()

    def get(self, key: tuple) -> Answer | None:
        answer = self._answers.get(key)
        if answer is not None:
            self._answers.move_to_end(key)
        return answer

    def put(self, key: tuple, answer: Answer) -> None:
        if self.size <= 0:
            return
        self._answers[key] = answer
        self._answers.move_to_end(key)
        while len(self._answers) > self.size:
            self._answers.popitem(last=False)

    def __len__(self) -> int:
        return len(self._answers)


@dataclass
class Jarvis:
    """Retrieval plus reading. Holds the open searcher, the loaded reader and the answer cache.
    Built by ``jarvis.assembly.assemble`` (the one place that knows how the parts fit)."""

    searcher: Retriever
    reader: Reader
    policy: AnswerPolicy            # which confidence model and threshold judge an answer (by its page's site)
    settings: ReaderSettings = field(default_factory=ReaderSettings)
    top_k: int = 3
    # The span reader reads what fits a token budget (jarvis/readers/passages.py): long real pages no longer
    # mean long waits. None: the reader reads every passage given (the fallback ranks them itself).
    selector: PassageSelector | None = None
    # Ranks the paragraphs for the pre-ranking of settings.max_paragraphs (None: one with settings.passages).
    ranker: PassageRanker | None = None
    # Orders an index's best passages before the reader reads them (jarvis/readers/rerank.py); None: their fused order.
    reranker: Reranker | None = None
    owns_searcher: bool = True      # close() closes the searcher (not when a caller shares one)
    stats: AskStats = field(default_factory=AskStats)
    # The admin's taught answers (jarvis/taught.py: TaughtAnswers), consulted before retrieval; None: none.
    taught: object = None

    def __post_init__(self) -> None:
        self._cache = AnswerCache(self.settings.cache_size)
        self._lock = threading.Lock()
        self._analyzer = TermAnalyzer()
        if self.ranker is None:
            self.ranker = PassageRanker(self.settings.passages, analyzer=self._analyzer)

    # ------------------------------------------------------------------ asking

    def ask(self, question: str) -> Answer:
        """Answer one question from the top pages of the index."""
        began = time.perf_counter()
        question = check_question(question)
        with self._lock:
            self.stats.asked += 1
            index = self.searcher.snapshot()   # the index as this question sees it: CURRENT read once
            if self.taught is not None:        # a taught answer is the answer; the reader never sees its page
                consulted = self.taught.consult(question, index, time.perf_counter() - began)
                if consulted.answer is not None:
                    return consulted.answer
                index = consulted.index
            key = (normalize_question(question), index.version, self.top_k, self.reader.name)
            cached = self._cache.get(key)
            if cached is not None:
                self.stats.cache_hits += 1
                return replace(cached, question=question, seconds=time.perf_counter() - began, cached=True)
            query = index.query(reading_form(question))   # spelt and expanded once, for the search and the reading
            pages, passages = self.retrieve(query, index)
            answer = self._read(question, pages, began, index, query, passages)
            self._cache.put(key, answer)
            return answer

    def read_as(self, question: str, index: IndexView, query=None) -> str:
        """What the reader reads: the question in its reading form, spelt as retrieval searched it when the
        settings say so (``ReaderSettings.read_spelt``) and the index can (``query``: as the search read it,
        index.SearchQuery; else spelt now)."""
        if query is not None and self.settings.read_spelt:
            return reading_form(query.spelt)
        return reader_question(question, index, self.settings.read_spelt)

    def hits(self, question, index: IndexView | None = None) -> list:
        """The top pages to read for ``question`` (text, or an index.SearchQuery read already; ``index``: the
        snapshot to search, else the live index). With the server's
        guide in the index, only pages of the side that ranked first are read: the guide's when a guide page
        won the search (its prior makes it win ties, index/settings.py), the wiki's otherwise, so that a
        reader's own preferences (the page named in the question: "diamonds" -> Diamond) cannot undo that
        choice."""
        index = index or self.searcher.snapshot()
        if GUIDE_SITE not in index.sites:
            return index.search(question, k=self.top_k)
        hits = index.search(question, k=2 * self.top_k)
        guide_won = bool(hits) and hits[0].page_kind == GUIDE_PAGE_KIND
        return [hit for hit in hits if (hit.page_kind == GUIDE_PAGE_KIND) == guide_won][:self.top_k]

    def retrieve(self, question, index: IndexView | None = None) -> tuple[list, list[Passage] | None]:
        """The pages and passages to read for ``question`` (text, or an index.SearchQuery read already). An index of
        pages: the top pages (``hits``), every paragraph a candidate (None). An index of passages: its best
        passages, ordered by the reranker when there is one (each ``Passage.score`` its logit; the reranker reads the
        question as the search did), kept to one side when the server's guide is in the index (the side of the best
        passage, as ``hits`` does for pages); the pages are theirs, each ranked by its best passage."""
        index = index or self.searcher.snapshot()
        if not getattr(index, "has_passages", False):
            return self.hits(question, index), None
        query = question if hasattr(question, "words") else index.query(question)
        hits = index.passages(query, self.settings.rerank_depth)
        if not hits:
            return [], []
        scores = None
        if self.reranker is not None:
            scores = self.reranker.run(query.words, [passage_text(h.title, h.section, h.text) for h in hits])
            order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))
            hits = [hits[i] for i in order]
            scores = [scores[i] for i in order]
        if GUIDE_SITE in index.sites:
            guide_won = hits[0].page_kind == GUIDE_PAGE_KIND
            kept = [i for i, h in enumerate(hits) if (h.page_kind == GUIDE_PAGE_KIND) == guide_won]
            hits, scores = [hits[i] for i in kept], [scores[i] for i in kept] if scores is not None else None
        page_order: dict[str, int] = {}
        for hit in hits:
            page_order.setdefault(hit.key, len(page_order))
        passages = [Passage(h.title, h.text, page_order[h.key], h.index, h.url, section=tuple(h.section),
                            page_score=h.page_score, page_kind=h.page_kind, site=h.site,
                            score=scores[i] if scores is not None else h.score)
                    for i, h in enumerate(hits)]
        best = {}
        for i, hit in enumerate(hits):
            best.setdefault(hit.key, (scores[i] if scores is not None else hit.score, hit))
        pages = [replace(index.page(key), score=score, lexical_rank=hit.lexical_rank, dense_rank=hit.dense_rank)
                 for key, (score, hit) in list(best.items())[:self.top_k]]
        return pages, passages

    def read_pages(self, question: str, pages: Sequence[Page]) -> Answer:
        """Answer from the given pages, best first (no retrieval, no cache): the eval's QA mode."""
        began = time.perf_counter()
        question = check_question(question)
        with self._lock:
            return self._read(question, pages, began, self.searcher.snapshot())

    @staticmethod
    def passages_of(pages: Sequence[Page]) -> list[Passage]:
        """Every paragraph of the pages, best page first, with what the reader needs to know of it."""
        return [Passage(page.title, text, rank, index, getattr(page, "url", ""),
                        section=tuple(_section_of(page, index)), page_score=float(getattr(page, "score", 0.0)),
                        page_kind=getattr(page, "page_kind", "article"), site=getattr(page, "site", ""))
                for rank, page in enumerate(pages) for index, text in enumerate(page.paragraphs)]

    def _read(self, question: str, pages: Sequence[Page], began: float, index: IndexView, query=None,
              passages: Sequence[Passage] | None = None) -> Answer:
        self.stats.reads += 1
        titles = tuple(page.title for page in pages)
        several = len(index.sites) > 1
        read = self.read_as(question, index, query)
        # The question with the players' words expanded, as the search expanded it when the reader reads it spelt
        # as searched (the same words); else expanded in judge.
        expanded = query.expanded if query is not None and self.settings.read_spelt else None
        settles = self.reranker is not None and passages is not None and query is not None and is_yes_no(question)
        judged = self.judge(read, pages, index.glossary, expanded, passages, yes_no=query.words if settles else None)
        if judged is None:
            # No answer to state; the best page is still worth pointing to (none when nothing matched).
            log.info("no answer to %r in %s", question, titles)
            top = pages[0] if pages else None
            return Answer(question, "", 0.0, top.title if top else "", self.reader.name,
                          time.perf_counter() - began, url=getattr(top, "url", "") if top else "", pages=titles,
                          site=getattr(top, "site", "") if top else "", several_sites=several)
        span, decision = judged.span, judged.decision
        shown = span if decision.stated else self.unsure_pointer(question, judged, pages)
        read_in = sentence_around(span)   # the span's own sentence: what a stated reply quotes
        return Answer(question, span.text, span.score, shown.passage.title, self.reader.name,
                      time.perf_counter() - began, url=shown.passage.url, pages=titles,
                      sentence=read_in if shown is span else sentence_around(shown), span_sentence=read_in,
                      confidence=decision.confidence,
                      abstained=not decision.stated, site=shown.passage.site, several_sites=several,
                      rule=decision.rule, threshold=decision.threshold, passage=span.passage, start=span.start,
                      end=span.end, signals=judged.signals, others=judged.others, verdict=judged.verdict)

    def unsure_pointer(self, question: str, judged: Judged, pages: Sequence[Page]) -> Span:
        """What a "not sure" reply points to and quotes (``ReaderSettings.unsure_page``): "answer", the unsure
        answer itself; "top", the page retrieval ranked first: on it the reader's best candidate, else its
        passage that best fits the question (its first sentence)."""
        span = judged.span
        if self.settings.unsure_page != "top" or not pages or pages[0].title == span.passage.title:
            return span
        top = pages[0].title
        on_top = next((o for o in judged.others if o.passage.title == top), None)
        if on_top is not None:
            return on_top
        passages = [p for p in self.passages_of(pages[:1]) if p.text.strip()]
        if not passages:
            return span
        best = max(zip(self.ranker.scores(question, passages), range(len(passages))), key=lambda pair: (pair[0], -pair[1]))
        passage = passages[best[1]]
        end = next((e for _, e in split_sentences(passage.text)), len(passage.text))
        return Span(passage.text[:end], 0.0, passage, 0, end)

    def judge(self, question: str, pages: Sequence[Page], glossary=None, expanded: str | None = None,
              ranked: Sequence[Passage] | None = None, yes_no: str | None = None) -> Judged | None:
        """The reader's answer in the pages with its confidence and the signals it was computed from (what
        ``ask`` answers with; ``jarvis calibrate`` fits the confidence model on them); None when none.
        ``glossary``: the index's players' words (index.glossary.Glossary; None: the live index's);
        ``expanded``: the question expanded with them already (None: expanded here). ``ranked``: the passages
        retrieval chose, best first (``retrieve``); None: every paragraph of the pages. ``yes_no``: a yes/no question
        as the reranker reads it: what the answer's passage says to it (the reranker's yes/no head) is the verdict,
        and its probability a signal."""
        if ranked is not None:
            if self.settings.max_paragraphs:   # the best N passages only
                ranked = list(ranked)[:self.settings.max_paragraphs]
            passages = self.selector.select_ranked(question, ranked).passages if self.selector is not None \
                else list(ranked)
        else:
            passages = self.passages_of(pages)
            if self.settings.max_paragraphs:   # paragraph pre-ranking: the best N, in reading order
                passages = self.ranker.best(question, passages, self.settings.max_paragraphs)
            if self.selector is not None:
                passages = self.selector.select(question, passages).passages
        candidates = self._candidates(question, passages) if passages else []
        if not candidates:
            return None
        candidates = self.choose(candidates)
        candidates = arrange(question, candidates, self.settings.placement)
        span = candidates[0]
        if expanded is None:
            glossary = glossary if glossary is not None else self.searcher.snapshot().glossary
            expanded = glossary.expand(question) if glossary is not None else question
        signals = self.signals(question, pages, span, expanded, candidates[1:])
        if ranked is not None:
            signals.update(rerank_signals(span, ranked))
        verdict = ""
        if yes_no is not None:
            said = self.reranker.verdict(yes_no, passage_text(span.passage.title, span.passage.section, span.passage.text))
            if said is not None:
                verdict = said[0]
                signals.update({"yes_no": 1.0, "verdict_p": said[1]})
        return Judged(span, signals, self.policy.judge(span.passage.site, signals), tuple(candidates[1:]), verdict)

    def choose(self, candidates: Sequence[Span]) -> list[Span]:
        """The reader's candidates in the order of the final choice: its margin over no answer (``span_minus_null``)
        plus ``rerank_weight`` times its passage's score (the reranker's logit; the fusion's score without a
        reranker), when the weight is not 0 and the passages came from a passage index; else as read."""
        weight = self.settings.rerank_weight
        if not weight or any(c.passage.score is None or "span_minus_null" not in c.signals for c in candidates):
            return list(candidates)
        return sorted(candidates, key=lambda c: -(c.signals["span_minus_null"] + weight * c.passage.score))

    def _candidates(self, question: str, passages: Sequence[Passage]) -> list[Span]:
        """The reader's answer first, then its next best candidates (``Reader.candidates``)."""
        return self.reader.candidates(question, passages, AGREEMENT_CANDIDATES)

    def signals(self, question: str, pages: Sequence[Page], span: Span, expanded: str,
                others: Sequence[Span] = ()) -> dict[str, float]:
        """Everything the confidence model weighs: the retrieval's, the answer's (the question with the wiki's
        words for its players' words, ``expanded``), where it was read, how far the reader's other candidates
        (``others``) back it, and the reader's own."""
        return {**retrieval_signals(pages, span.passage.title),
                **answer_signals(question, span.text, span.passage.title, self._analyzer, expanded),
                **place_signals(question, span),
                **agreement_signals(span.text, span.passage.title, [(o.text, o.passage.title) for o in others]),
                **span.signals}

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        if self.owns_searcher:
            self.searcher.close()

    def __enter__(self) -> "Jarvis":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _section_of(page: Page, index: int) -> list[str]:
    sections = getattr(page, "sections", None) or ()
    return sections[index] if index < len(sections) else []
