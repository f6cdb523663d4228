"""Token-budget passage selection: which paragraphs of the top pages the span reader reads.

The span reader's cost grows with the tokens it runs, and real pages are long (the top 3
pages of a real-wiki question hold ~7,000 words). So before reading, the candidate passages
are ranked and the best are kept until a token budget is spent:

    selector = PassageSelector(settings, tokenizer=reader.tokens, embedder=embedder)
    chosen = selector.select(question, passages)      # Selection(passages=[...], tokens=..., ...)
    span = reader.read(question, chosen.passages)

Ranking (weights in ``PassageSettings``), every part scaled to [0, 1]:
- BM25 of the passage (its text and section headings) against the question, over the candidates;
- cosine similarity of question and passage embeddings, when an embedder is given (duck-typed:
  ``embedder.embed(texts) -> unit vectors``); only the best ``dense_candidates`` by the other
  parts are embedded, so the embedder's cost is bounded too;
- the section path matched to the question's kind: a drops question prefers "Drops", a
  where/spawn question "Spawning" / "Natural generation" / "Location", a craft/get question
  "Obtaining" / "Crafting", "what is X" the page's lead;
- the page: its retrieval score relative to the top page (its rank when there are no scores);
- the lead paragraphs of a page whose title the question names.

The cost of a passage is what the reader will run for it: question + special tokens + passage
tokens, for every window of a passage longer than the reader's window (counted with the
reader's tokenizer, or estimated from words without one). Passages are taken best first while
they fit; the chosen ones are returned in reading order (page rank, then position in the page).
The total never exceeds the budget: when not even the best passage fits, it is cut to fit.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Protocol, Sequence

from jarvis.config import PassageSettings, ReaderSettings
from jarvis.lexical import TermAnalyzer, bm25_scores
from jarvis.readers.base import Passage
from jarvis.readers.sections import SECTIONS
from jarvis.readers.span import MAX_QUESTION_SHARE

# Question kinds and the section headings (any level of the path, case-insensitive) that answer them:
# the patterns here, the headings in data/sections.yaml (passage_sections). A question may have several
# kinds ("where can I find and mine diamonds").
LEAD = "lead"
QUESTION_PATTERNS = (
    ("drops", r"\b(drops?|dropped|loot)\b|\bwhat do(es)? (an? |the )?\w+( \w+)? (give|leave)\b"),
    ("spawning", r"\b(\w*spawn\w*|where|find|found|located?|generates?|generation|biomes?)\b"),
    ("obtaining", r"\b(craft|crafts|crafted|crafting|make|made|obtain|obtained|get|smelt|smelted|brew|recipe|"
                  r"pick up|collect|gather|harvest)\b"),
    ("breeding", r"\b(breed|breeding|feed|tame|taming)\b"),
    ("usage", r"\b(use|used|uses|usage|for what)\b"),
    ("mining", r"\b(mine|mined|mining|break|tool|pickaxe|axe|shovel|hoe)\b"),
    (LEAD, r"^\s*(what|who)( i|')s\b|^\s*what are\b|^\s*(define|describe)\b"),
)
_HEADINGS = SECTIONS["passage_sections"]
SECTION_KINDS: tuple[tuple[str, re.Pattern, frozenset[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE), frozenset(h.lower() for h in _HEADINGS.get(kind, ())))
    for kind, pattern in QUESTION_PATTERNS
)
# Questions that ask for a duration or a number, and the passages that hold one (tables hold many).
CONTENT_KINDS: tuple[tuple[re.Pattern, re.Pattern], ...] = (
    (re.compile(r"\bhow long\b|\bduration\b", re.IGNORECASE),
     re.compile(r"\b\d+:\d\d\b|\b\d+(\.\d+)? ?(seconds?|minutes?|hours?|days?|ticks?)\b|\b(duration|length)\b",
                re.IGNORECASE)),
    (re.compile(r"\bhow (much|many|far|high|often)\b|\b(what|which) (y[- ])?(level|layer|height)\b|\bchance\b",
                re.IGNORECASE),
     re.compile(r"\d")),
)
WORD_OR_MARK = re.compile(r"\w+|[^\w\s]")
TOKENS_PER_WORD = 1.3      # byte-level BPE / WordPiece on wiki English: ~1.2-1.35 tokens a word or mark
ESTIMATED_SPECIAL_TOKENS = 4


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


@dataclass(frozen=True)
class Selection:
    """What the reader will read: the chosen passages in reading order and their cost."""

    passages: list[Passage]
    tokens: int                 # tokens the reader runs for them (question and special tokens included)
    candidates: int             # passages considered
    budget: int


def question_kinds(question: str) -> list[str]:
    """The kinds of the question, e.g. ["drops"] for "what do cows drop?"; [] for none."""
    return [kind for kind, pattern, _ in SECTION_KINDS if pattern.search(question)]


def section_matches(kinds: Sequence[str], passage: Passage) -> bool:
    """Whether the passage's section answers a question of these kinds (the lead for "what is X")."""
    if LEAD in kinds and not passage.section:
        return True
    headings = {h.lower() for h in passage.section}
    return any(headings & wanted for kind, _, wanted in SECTION_KINDS if kind in kinds)


class PassageSelector:
    """Ranks candidate passages and keeps the best within ``settings.token_budget`` tokens."""

    def __init__(self, settings: ReaderSettings, tokenizer=None, embedder: Embedder | None = None,
                 analyzer: TermAnalyzer | None = None) -> None:
        self.settings = settings
        self.weights: PassageSettings = settings.passages
        self.tokenizer = tokenizer      # the reader's jarvis.readers.tokens.Tokens: exact counts; None: an estimate
        self.embedder = embedder
        self.terms = CachedTerms(analyzer or TermAnalyzer())

    # ------------------------------------------------------------------ the entry point

    def select(self, question: str, passages: Sequence[Passage], budget: int | None = None) -> Selection:
        """The passages to read within ``budget`` tokens (default ``settings.token_budget``), in reading order."""
        budget = self.settings.token_budget if budget is None else budget
        passages = [p for p in passages if p.text.strip()]
        if not passages:
            return Selection([], 0, 0, budget)
        question_tokens, specials = self._question_tokens(question)
        if budget <= 0:   # no budget: everything, as before selection existed
            lengths = self._passage_tokens([p.text for p in passages])
            return Selection(_reading_order(passages), sum(self.cost(n, question_tokens, specials) for n in lengths),
                             len(passages), budget)
        scores = self.scores(question, passages)
        order = sorted(range(len(passages)), key=lambda i: (-scores[i], passages[i].page_rank, passages[i].index))
        chosen, spent = [], 0
        for i in order:
            left = budget - spent
            if left <= question_tokens + specials:
                break
            # Every whitespace-separated word is at least one token: a passage whose words alone overflow
            # is skipped without tokenizing it (most of a long page, once the budget is nearly spent).
            if self.cost(len(passages[i].text.split()), question_tokens, specials) > left:
                continue
            cost = self.cost(self._passage_tokens([passages[i].text])[0], question_tokens, specials)
            if cost <= left:
                chosen.append(passages[i])
                spent += cost
        if not chosen:
            cut, cut_cost = self._cut_to_fit(passages[order[0]], budget, question_tokens, specials)
            if cut is not None:
                chosen, spent = [cut], cut_cost
        return Selection(_reading_order(chosen), spent, len(passages), budget)

    # ------------------------------------------------------------------ ranking

    def scores(self, question: str, passages: Sequence[Passage]) -> list[float]:
        """The ranking score of each passage (higher first)."""
        w = self.weights
        query = self.terms(question)
        docs = [self.terms(" ".join((*p.section, p.text))) for p in passages]
        lexical = _relative(bm25_scores(query, docs))
        kinds = question_kinds(question)
        page = self._page_prior(passages)
        section = [page[i] * float(section_matches(kinds, p)) for i, p in enumerate(passages)]
        headings = _relative(bm25_scores(query, [self.terms(" ".join(p.section)) for p in passages]))
        heading = [page[i] * headings[i] for i in range(len(passages))]
        asked = [holds for wants, holds in CONTENT_KINDS if wants.search(question)]
        content = [page[i] * float(any(h.search(p.text) for h in asked)) for i, p in enumerate(passages)]
        named = self._named_pages(query, passages)
        # A page's opening paragraphs say what it is, where it is found and what it does: the answer to
        # many questions, however they are worded, on the pages that matter most.
        lead = [page[i] * float(not p.section) / (1 + p.index) ** 0.5 for i, p in enumerate(passages)]
        title = [float(p.title in named) * lead[i] for i, p in enumerate(passages)]
        scores = [w.bm25_weight * lexical[i] + w.section_weight * section[i] + w.page_weight * page[i]
                  + w.heading_weight * heading[i] + w.content_weight * content[i] + w.lead_weight * lead[i] + w.title_weight * title[i]
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

    # ------------------------------------------------------------------ cost

    def cost(self, passage_tokens: int, question_tokens: int, specials: int) -> int:
        """Tokens the reader runs for a passage: every window holds the question, special tokens and up
        to ``room`` passage tokens; consecutive windows overlap by ``doc_stride`` tokens."""
        room = max(1, self.settings.max_seq_len - question_tokens - specials)
        windows = 1 if passage_tokens <= room else 1 + math.ceil(
            (passage_tokens - room) / max(1, room - self.settings.doc_stride))
        overlap = (windows - 1) * min(self.settings.doc_stride, room - 1)
        return windows * (question_tokens + specials) + passage_tokens + overlap

    def _question_tokens(self, question: str) -> tuple[int, int]:
        """Question tokens (capped as the reader caps them) and special tokens per window."""
        cap = int(self.settings.max_seq_len * MAX_QUESTION_SHARE)
        if self.tokenizer is None:
            return min(cap, _estimate_tokens(question)), ESTIMATED_SPECIAL_TOKENS
        return min(cap, self.tokenizer.count([question])[0]), self.tokenizer.specials

    def _passage_tokens(self, texts: list[str]) -> list[int]:
        if self.tokenizer is None:
            return [_estimate_tokens(text) for text in texts]
        return self.tokenizer.count(texts)

    def _cut_to_fit(self, passage: Passage, budget: int, question_tokens: int,
                    specials: int) -> tuple[Passage | None, int]:
        """The passage's opening, as much as one window within the budget holds (None if nothing fits)."""
        room = min(budget, self.settings.max_seq_len) - question_tokens - specials
        if room <= 0:
            return None, 0
        if self.tokenizer is not None:
            offsets = self.tokenizer.offsets(passage.text)
            end = offsets[min(room, len(offsets)) - 1][1] if offsets else 0
            kept = min(room, len(offsets))
        else:
            marks = list(WORD_OR_MARK.finditer(passage.text))
            kept_marks = int(room / TOKENS_PER_WORD)
            end = marks[kept_marks - 1].end() if kept_marks and marks else 0
            kept = _estimate_tokens(passage.text[:end])
        if end <= 0:
            return None, 0
        return replace(passage, text=passage.text[:end]), question_tokens + specials + kept


def _estimate_tokens(text: str) -> int:
    return math.ceil(len(WORD_OR_MARK.findall(text)) * TOKENS_PER_WORD)


def _relative(values: list[float]) -> list[float]:
    best = max(values, default=0.0)
    return [v / best if best > 0 else 0.0 for v in values]


def _reading_order(passages: Sequence[Passage]) -> list[Passage]:
    return sorted(passages, key=lambda p: (p.page_rank, p.index))
