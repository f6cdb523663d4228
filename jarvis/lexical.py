"""Word matching shared by the offline fallback reader and paragraph pre-ranking.

Words are analysed the way the index analyses them (Whoosh's Porter-stemming analyzer),
so "cows", "cow" and "Cow" match, and "drops" matches "drop". Scores are BM25 over a
small, per-question collection (the paragraphs or sentences of the top pages).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from whoosh.analysis import StemmingAnalyzer
from whoosh.analysis.filters import STOP_WORDS

from jarvis.index.terms import QUESTION_WORDS   # words that shape a question, not its topic

# Irregular forms that Porter stemming leaves apart but a question and its answer share:
# "how much health does a cow HAVE" ~ "a cow HAS 10 health points".
IRREGULAR_STEMS = {
    "has": "have", "had": "have", "having": "have",
    "is": "be", "are": "be", "was": "be", "were": "be", "been": "be", "being": "be",
    "does": "do", "did": "do", "done": "do",
    "gave": "give", "given": "give", "made": "make", "took": "take", "taken": "take",
    "found": "find", "grew": "grow", "grown": "grow", "dropped": "drop",
    # Abbreviations players type for the words the wiki writes (stems as Porter makes them).
    "xp": "experi", "exp": "experi", "hp": "health",
}
# Irregular verb forms -> the plain verb ("pigs can be BRED using carrots" answers "what do you feed
# pigs to BREED them"); stemmed like any word when the analyzer starts. Forms that are also common
# nouns or adjectives ("bit", "saw", "shot", "lit", "fell") are left out.
IRREGULAR_FORMS = {
    "bred": "breed", "fed": "feed", "ate": "eat", "eaten": "eat", "caught": "catch", "dug": "dig",
    "threw": "throw", "thrown": "throw", "drank": "drink", "drunk": "drink", "built": "build",
    "held": "hold", "rode": "ride", "ridden": "ride", "struck": "strike", "fallen": "fall",
    "sold": "sell", "bought": "buy", "brought": "bring", "kept": "keep", "wore": "wear",
    "worn": "wear", "won": "win", "hid": "hide", "hidden": "hide", "broke": "break", "broken": "break",
    "chose": "choose", "chosen": "choose", "flew": "fly", "flown": "fly", "froze": "freeze",
    "frozen": "freeze", "slept": "sleep", "swam": "swim", "stole": "steal",
    "stolen": "steal", "bitten": "bite", "laid": "lay", "hung": "hang", "woke": "wake",
    "burnt": "burn", "sank": "sink", "sunk": "sink", "spun": "spin", "grew": "grow", "blew": "blow",
    "blown": "blow", "sent": "send", "spent": "spend", "paid": "pay", "went": "go", "gone": "go",
    "came": "come", "ran": "run", "seen": "see", "knew": "know", "known": "know", "told": "tell",
    "wrote": "write", "written": "write",
}


@dataclass(frozen=True)
class Word:
    """One word of a text with its stem and where it sits (text[start:end] == surface)."""

    surface: str
    stem: str
    start: int
    end: int

    @property
    def is_stop(self) -> bool:
        lower = self.surface.lower()
        return lower in STOP_WORDS or lower in QUESTION_WORDS


class TermAnalyzer:
    """Splits text into stemmed words. Holds the Whoosh analyzer (it caches stems)."""

    def __init__(self) -> None:
        # No stop list and single letters kept: callers need every word with its offsets.
        self._analyzer = StemmingAnalyzer(stoplist=None, minsize=1)
        self._irregular = {**{form: self._stem(base) for form, base in IRREGULAR_FORMS.items()}, **IRREGULAR_STEMS}

    def _stem(self, word: str) -> str:
        return next(iter(self._analyzer(word, mode="index"))).text

    def words(self, text: str) -> list[Word]:
        words = []
        for token in self._analyzer(text, chars=True, positions=True, mode="index"):
            surface = text[token.startchar:token.endchar]
            stem = self._irregular.get(surface.lower(), token.text)
            words.append(Word(surface, stem, token.startchar, token.endchar))
        return words

    def terms(self, text: str) -> list[str]:
        """Content stems of a text: stop words and question words removed."""
        return [w.stem for w in self.words(text) if not w.is_stop]


def bm25_scores(query_terms: Sequence[str], docs: Sequence[Sequence[str]], k1: float = 1.2,
                b: float = 0.75) -> list[float]:
    """BM25 of each document (a list of stems) for the query, idf taken over ``docs`` itself."""
    if not docs:
        return []
    n_docs = len(docs)
    avg_len = sum(len(d) for d in docs) / n_docs or 1.0
    doc_freq = Counter(term for d in docs for term in set(d))
    unique_query = set(query_terms)
    scores = []
    for doc in docs:
        counts = Counter(doc)
        score = 0.0
        for term in unique_query:
            tf = counts.get(term, 0)
            if not tf:
                continue
            idf = math.log(1.0 + (n_docs - doc_freq[term] + 0.5) / (doc_freq[term] + 0.5))
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / avg_len))
        scores.append(score)
    return scores
