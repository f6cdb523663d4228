"""Question in, answer out: retrieval (index.Searcher), reading (span reader or fallback), and how sure.

    jarvis = assemble(config, index_dir)               # jarvis/assembly.py: index, reader, confidence, once
    answer = jarvis.ask("what do cows drop?")          # Answer(text="0-2 leather and 1-3 raw beef", ...)
    answer.confidence, answer.abstained, answer.reply  # 0.81, False, '0-2 leather ... (source: Cow)'

Every answer gets ``confidence``, the estimated probability that it is right: the reader's signals and
the retrieval's (jarvis/confidence) weighed by a model fitted on dev question sets. Below
``ReaderSettings.answer_threshold`` Jarvis does not state the answer (``abstained``): the reply says it is
not sure and points to the page (jarvis/replies.py).

``Jarvis.ask`` may be called again and again, from one worker thread (the chat bridge) or
several (a lock serialises them: one model, one question at a time). Answers are cached per
normalised question and index version, so a reindex never serves stale answers.
"""
from __future__ import annotations

import logging
import re
import threading
import time
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Protocol, Sequence

from jarvis.crawler.guide import GUIDE_PAGE_KIND, GUIDE_SITE
from jarvis.crawler.sentences import split_sentences
from jarvis.config import ReaderSettings
from jarvis.confidence import (ConfidenceModel, agreement_signals, answer_signals, place_signals, rerank_signals,
                               retrieval_signals)
from jarvis.errors import JarvisError
from jarvis.index.passages import passage_text
from jarvis.lexical import TermAnalyzer
from jarvis.readers.base import Passage, Reader, Span, sentence_around
from jarvis.readers.passages import PassageSelector
from jarvis.readers.placement import prefer_placed
from jarvis.readers.question_kinds import is_yes_no
from jarvis.readers.rerank import Reranker
from jarvis.readers.ranking import PassageRanker
from jarvis.replies import REPLY_BUDGET, compose_reply

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 500   # a chat line is at most 256; anything far longer is not a question
READ_WITH = "?"            # the closing mark every question is read with (reading_form)
AGREEMENT_CANDIDATES = 5   # the reader's best spans whose agreement the confidence weighs (signals)


class QuestionError(JarvisError):
    """An empty or unusable question."""


def check_question(text: str) -> str:
    """The question, cleaned (control characters out, whitespace collapsed); a user error if unusable."""
    if not isinstance(text, str):
        raise QuestionError("the question must be text")
    cleaned = "".join(" " if unicodedata.category(c).startswith("C") else c for c in text)
    cleaned = re.sub(r"\s+", " ", cleaned).strip()
    if not cleaned:
        raise QuestionError("empty question: ask something, e.g. jarvis ask \"what do cows drop?\"")
    if len(cleaned) > MAX_QUESTION_CHARS:
        raise QuestionError(f"question too long ({len(cleaned)} characters, at most {MAX_QUESTION_CHARS})")
    if not any(c.isalnum() for c in cleaned):
        raise QuestionError("the question has no words")
    return cleaned


def normalize_question(question: str) -> str:
    """The answer cache's key: case, spacing and closing punctuation do not change the question."""
    return re.sub(r"\s+", " ", question.casefold()).strip().rstrip("?!. ")


def reading_form(question: str) -> str:
    """The question as Jarvis reads it: case and closing punctuation do not change what is asked, so
    "What do cows drop?", "what do cows drop" and "WHAT DO COWS DROP!" are read (searched, read and
    judged) the same way and get the same answer. The player's own words stay the answer's ``question``."""
    return normalize_question(question) + READ_WITH


def reader_question(question: str, index, read_spelt: bool = True) -> str:
    """The question as the reader reads it: spelt as ``index`` searches it (when ``read_spelt``), in its
    reading form. What answering reads (``Pipeline.read_as``) and what training examples carry."""
    return reading_form(index.spelt(question) if read_spelt else question)


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

    def search(self, query: str, k: int = 3) -> list:
        """The top k pages (index.Hit), best first."""

    def spelt(self, question: str) -> str:
        """The question's words as it searches them (chat spelling and typos put right)."""

    @property
    def has_passages(self) -> bool:
        """Whether it ranks passages (a passage profile) rather than pages."""

    def passages(self, query: str, k: int = 30) -> list:
        """The best k passages (index.PassageHit), best first."""

    def page(self, key: str):
        """A page (index.Hit) by its key, with all its paragraphs."""

    def query_words(self, query: str) -> str:
        """The words it searches and embeds for a question (what the reranker reads as the question)."""


class Searcher(Protocol):
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
class Answer:
    question: str
    text: str               # the best answer span, stated or not; "" when the reader found none
    score: float            # the reader's score of the span (its own scale)
    title: str              # the page stated or pointed to; "" when no page matched
    reader: str             # "roberta-base-squad2", "fallback:minilm", ...
    seconds: float
    url: str = ""
    pages: tuple[str, ...] = ()   # titles of the pages read, best first
    cached: bool = False
    sentence: str = ""      # the sentence the span was read in ("" when none)
    confidence: float = 0.0  # the estimated probability that ``text`` is right
    abstained: bool = True   # not stated as fact: below the answer threshold, or no span at all
    site: str = ""                # the page's wiki, or "server guide"; "" when no page matched
    several_sites: bool = False   # the index holds more than one site: replies name the page's site
    # What the confidence was computed from (jarvis/confidence): for `jarvis calibrate` and for debugging.
    signals: dict = field(default_factory=dict, compare=False, repr=False)
    # The reader's next best candidates (readers.base.Span), best first: what else the pages might say.
    others: tuple = field(default=(), compare=False, repr=False)
    verdict: str = ""       # a yes/no question: "yes" or "no", what the answer's passage says ("" otherwise)

    @property
    def found(self) -> bool:
        return bool(self.text)

    @property
    def source(self) -> str:
        """The source as a reply names it: the page, and its site when the index holds several
        ("Cow, Minecraft Wiki"; "Land claims, server guide"); "" when no page matched."""
        if not self.title:
            return ""
        return f"{self.title}, {self.site}" if self.several_sites and self.site else self.title

    @property
    def reply(self) -> str:
        """What the chat shows, without "[Jarvis] name: " (jarvis/replies.py)."""
        return compose_reply(self, REPLY_BUDGET)

    def to_json(self) -> dict:
        return {"answer": self.text, "score": round(self.score, 4), "title": self.title, "reader": self.reader,
                "seconds": round(self.seconds, 3), "found": self.found, "url": self.url,
                "pages": list(self.pages), "cached": self.cached, "confidence": round(self.confidence, 4),
                "abstained": self.abstained, "reply": self.reply, "sentence": self.sentence, "site": self.site}

    def describe(self) -> str:
        lines = [self.reply]
        if self.found:
            lines.append(f"  answer: {self.text}" + (" (not stated: below the answer threshold)" if self.abstained
                                                      else ""))
        if self.title:
            lines.append(f"  page: {self.source}" + (f" ({self.url})" if self.url else ""))
        else:
            read = ", ".join(self.pages) if self.pages else "no page matched"
            lines.append(f"  pages read: {read}")
        timing = f"{self.seconds:.2f} s" + (", cached" if self.cached else "")
        lines.append(f"  confidence: {self.confidence:.2f}, reader: {self.reader}, {timing}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Judged:
    """The reader's answer, judged by the confidence model."""

    span: Span
    signals: dict           # what the confidence model weighed
    confidence: float       # the probability that it is right
    threshold: float        # from this confidence up, the answer is stated
    others: tuple[Span, ...] = ()   # the reader's next best candidates, best first
    verdict: str = ""               # a yes/no question: "yes" or "no", as the answer's passage says ("" otherwise)


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

    searcher: Searcher
    reader: Reader
    confidence: ConfidenceModel
    settings: ReaderSettings = field(default_factory=ReaderSettings)
    # The confidence of answers read on the server's own guide pages, fitted on guide questions (the guide says
    # what its author meant; wiki questions say nothing of it). None: the wiki model judges them too.
    guide_confidence: ConfidenceModel | None = None
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
            key = (normalize_question(question), index.version, self.top_k, self.reader.name)
            cached = self._cache.get(key)
            if cached is not None:
                self.stats.cache_hits += 1
                return replace(cached, question=question, seconds=time.perf_counter() - began, cached=True)
            pages, passages = self.retrieve(reading_form(question), index)
            answer = self._read(question, pages, began, index, passages)
            self._cache.put(key, answer)
            return answer

    def read_as(self, question: str, index: IndexView) -> str:
        """What the reader reads: the question in its reading form, spelt as retrieval searched it when the
        settings say so (``ReaderSettings.read_spelt``) and the index can."""
        return reader_question(question, index, self.settings.read_spelt)

    def hits(self, question: str, index: IndexView | None = None) -> list:
        """The top pages to read (``index``: the snapshot to search, else the live index). With the server's
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

    def retrieve(self, question: str, index: IndexView | None = None) -> tuple[list, list[Passage] | None]:
        """The pages and passages to read. An index of pages: the top pages (``hits``), every paragraph a candidate
        (None). An index of passages: its best passages, ordered by the reranker when there is one (each
        ``Passage.score`` its logit), kept to one side when the server's guide is in the index (the side of the best
        passage, as ``hits`` does for pages); the pages are theirs, each ranked by its best passage."""
        index = index or self.searcher.snapshot()
        if not getattr(index, "has_passages", False):
            return self.hits(question, index), None
        hits = index.passages(question, self.settings.rerank_depth)
        if not hits:
            return [], []
        scores = None
        if self.reranker is not None:
            scores = self.reranker.run(index.query_words(question),
                                       [passage_text(h.title, h.section, h.text) for h in hits])
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

    def _read(self, question: str, pages: Sequence[Page], began: float, index: IndexView,
              passages: Sequence[Passage] | None = None) -> Answer:
        self.stats.reads += 1
        titles = tuple(page.title for page in pages)
        several = len(index.sites) > 1
        settles = self.reranker is not None and passages is not None and is_yes_no(question)
        judged = self.judge(self.read_as(question, index), pages, index.glossary, passages,
                            yes_no=index.query_words(reading_form(question)) if settles else None)
        if judged is None:
            # No answer to state; the best page is still worth pointing to (none when nothing matched).
            log.info("no answer to %r in %s", question, titles)
            top = pages[0] if pages else None
            return Answer(question, "", 0.0, top.title if top else "", self.reader.name,
                          time.perf_counter() - began, url=getattr(top, "url", "") if top else "", pages=titles,
                          site=getattr(top, "site", "") if top else "", several_sites=several)
        span = judged.span
        abstained = judged.confidence < judged.threshold
        shown = self.unsure_pointer(question, judged, pages) if abstained else span
        return Answer(question, span.text, span.score, shown.passage.title, self.reader.name,
                      time.perf_counter() - began, url=shown.passage.url, pages=titles,
                      sentence=sentence_around(shown), confidence=judged.confidence,
                      abstained=abstained, site=shown.passage.site,
                      several_sites=several, signals=judged.signals, others=judged.others, verdict=judged.verdict)

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

    def confidence_for(self, span: Span) -> ConfidenceModel:
        """The model that judges an answer: the guide's for a guide page (when there is one), else the wiki's."""
        if span.passage.site == GUIDE_SITE and self.guide_confidence is not None:
            return self.guide_confidence
        return self.confidence

    def answer_threshold(self, model: ConfidenceModel) -> float:
        """Below this confidence an answer is not stated: the setting when given, else the model's own."""
        explicit = self.settings.answer_threshold
        return explicit if explicit is not None else model.threshold

    def judge(self, question: str, pages: Sequence[Page], glossary=None,
              ranked: Sequence[Passage] | None = None, yes_no: str | None = None) -> Judged | None:
        """The reader's answer in the pages with its confidence and the signals it was computed from (what
        ``ask`` answers with; ``jarvis calibrate`` fits the confidence model on them); None when none.
        ``glossary``: the index's players' words (index.glossary.Glossary; None: the live index's). ``ranked``:
        the passages retrieval chose, best first (``retrieve``); None: every paragraph of the pages. ``yes_no``: a
        yes/no question as the reranker reads it: what the answer's passage says to it (the reranker's yes/no head)
        is the verdict, and its probability a signal."""
        if ranked is not None:
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
        candidates = prefer_placed(question, candidates, self.settings.placement)
        span = candidates[0]
        if glossary is None:
            glossary = self.searcher.snapshot().glossary
        signals = self.signals(question, pages, span, glossary, candidates[1:])
        if ranked is not None:
            signals.update(rerank_signals(span, ranked))
        verdict = ""
        if yes_no is not None:
            said = self.reranker.verdict(yes_no, passage_text(span.passage.title, span.passage.section, span.passage.text))
            if said is not None:
                verdict = said[0]
                signals.update({"yes_no": 1.0, "verdict_p": said[1]})
        model = self.confidence_for(span)
        return Judged(span, signals, model.predict(signals), self.answer_threshold(model), tuple(candidates[1:]),
                      verdict)

    def choose(self, candidates: Sequence[Span]) -> list[Span]:
        """The reader's candidates in the order of the final choice: its margin over no answer (``span_minus_null``)
        plus ``rerank_weight`` times its passage's reranker logit, when the passages were reranked; else as read."""
        weight = self.settings.rerank_weight
        if not weight or any(c.passage.score is None or "span_minus_null" not in c.signals for c in candidates):
            return list(candidates)
        return sorted(candidates, key=lambda c: -(c.signals["span_minus_null"] + weight * c.passage.score))

    def _candidates(self, question: str, passages: Sequence[Passage]) -> list[Span]:
        """The reader's answer first, then its next best candidates (a reader that has only one: its answer)."""
        several = getattr(self.reader, "candidates", None)
        if several is not None:
            return several(question, passages, AGREEMENT_CANDIDATES)
        span = self.reader.read(question, passages)
        return [span] if span is not None else []

    def signals(self, question: str, pages: Sequence[Page], span: Span, glossary,
                others: Sequence[Span] = ()) -> dict[str, float]:
        """Everything the confidence model weighs: the retrieval's, the answer's (the question read with
        ``glossary``, the index's players' words), where it was read, how far the reader's other candidates
        (``others``) back it, and the reader's own."""
        expanded = glossary.expand(question) if glossary is not None else question
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
