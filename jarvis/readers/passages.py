"""Token-budget passage selection: which paragraphs of the top pages the span reader reads.

The span reader's cost grows with the tokens it runs, and real pages are long (the top 3
pages of a real-wiki question hold ~7,000 words). So before reading, the candidate passages
are ranked (the passage ranker, jarvis/readers/ranking.py) and the best are kept until a token
budget is spent:

    selector = PassageSelector(settings, tokenizer=reader.needs.tokenizer)
    chosen = selector.select(question, passages)      # Selection(passages=[...], tokens=..., ...)
    span = reader.read(question, chosen.passages)

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
from typing import Sequence

from jarvis.config import ReaderSettings, resolved_token_budget
from jarvis.lexical import TermAnalyzer
from jarvis.readers.base import Passage
from jarvis.readers.ranking import Embedder, PassageRanker
from jarvis.readers.span import MAX_QUESTION_SHARE

WORD_OR_MARK = re.compile(r"\w+|[^\w\s]")
TOKENS_PER_WORD = 1.3      # byte-level BPE / WordPiece on wiki English: ~1.2-1.35 tokens a word or mark
ESTIMATED_SPECIAL_TOKENS = 4


@dataclass(frozen=True)
class Selection:
    """What the reader will read: the chosen passages in reading order and their cost."""

    passages: list[Passage]
    tokens: int                 # tokens the reader runs for them (question and special tokens included)
    candidates: int             # passages considered
    budget: int


class PassageSelector:
    """Keeps the best candidate passages (by ``ranker``) within ``settings.token_budget`` tokens."""

    def __init__(self, settings: ReaderSettings, tokenizer=None, embedder: Embedder | None = None,
                 analyzer: TermAnalyzer | None = None, ranker: PassageRanker | None = None) -> None:
        self.settings = settings
        self.tokenizer = tokenizer      # the reader's jarvis.readers.tokens.Tokens: exact counts; None: an estimate
        # The ranker given (the pipeline's), else one with settings.passages' weights.
        self.ranker = ranker or PassageRanker(settings.passages, embedder, analyzer)

    # ------------------------------------------------------------------ the entry point

    def select(self, question: str, passages: Sequence[Passage], budget: int | None = None) -> Selection:
        """The passages to read within ``budget`` tokens (default ``settings.token_budget``), in reading order."""
        budget = resolved_token_budget(self.settings.token_budget) if budget is None else budget
        passages = [p for p in passages if p.text.strip()]
        if not passages:
            return Selection([], 0, 0, budget)
        question_tokens, specials = self._question_tokens(question)
        if budget <= 0:   # no budget: everything, as before selection existed
            lengths = self._passage_tokens([p.text for p in passages])
            return Selection(_reading_order(passages), sum(self.cost(n, question_tokens, specials) for n in lengths),
                             len(passages), budget)
        scores = self.ranker.scores(question, passages)
        order = sorted(range(len(passages)), key=lambda i: (-scores[i], passages[i].page_rank, passages[i].index))
        return self._within(question, passages, order, budget)

    def select_ranked(self, question: str, passages: Sequence[Passage], budget: int | None = None) -> Selection:
        """The passages to read within ``budget`` tokens, taken in the order given (best first: a reranker's),
        returned in reading order."""
        budget = resolved_token_budget(self.settings.token_budget) if budget is None else budget
        passages = [p for p in passages if p.text.strip()]
        if not passages:
            return Selection([], 0, 0, budget)
        if budget <= 0:
            return self.select(question, passages, budget)
        return self._within(question, passages, list(range(len(passages))), budget)

    def _within(self, question: str, passages: Sequence[Passage], order: Sequence[int], budget: int) -> Selection:
        """The passages of ``order`` (best first) taken while they fit the budget."""
        question_tokens, specials = self._question_tokens(question)
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


def _reading_order(passages: Sequence[Passage]) -> list[Passage]:
    return sorted(passages, key=lambda p: (p.page_rank, p.index))
