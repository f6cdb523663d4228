"""The words an index searches by: Whoosh's Porter-stemming analyzer (lower case, Whoosh's stop list, stems),
the same analysis as the page index's fields (profiles.py), with a cache per word: stemming through Whoosh
costs ~15 us a word, and a corpus repeats its words (the real bed: 2.7 million words, 60,000 distinct)."""
from __future__ import annotations

import re

from whoosh.analysis import StemmingAnalyzer

# Whoosh's RegexTokenizer pattern (the analyzer's first stage): analysing word by word gives exactly the
# analyzer's terms, since every later stage works on one token at a time.
TOKEN = re.compile(r"\w+(?:\.?\w+)*")
CACHE_LIMIT = 500_000

# Words that shape a question but say nothing about its topic (Whoosh's stop list lacks the question words
# themselves): a query weighs them down (QUESTION_WEIGHT), so "where do blazes spawn" is not answered by
# "beaches where turtles do not spawn". The readers' word matching (jarvis/lexical.py) drops the same words.
# The weight, 0.3 against 1.0 on the choice sets f1+f2 (lexical profile): a gold passage in the first 5 0.774
# against 0.762, in 30 0.906 against 0.902, the page in the top 3 0.843 against 0.848.
QUESTION_WORDS = frozenset(
    "what which who whom whose where when why how much many do does did doing done i me my "
    "there their they them it its get gets got much some any one".split()
)
QUESTION_WEIGHT = 0.3


class Terms:
    """Text in, index terms out (``terms("Cows drop leather")`` -> ``["cow", "drop", "leather"]``)."""

    def __init__(self) -> None:
        self._analyzer = StemmingAnalyzer()
        self._cache: dict[str, tuple[str, ...]] = {}

    def __call__(self, text: str) -> list[str]:
        out: list[str] = []
        for match in TOKEN.finditer(text):
            word = match.group()
            terms = self._cache.get(word)
            if terms is None:
                if len(self._cache) >= CACHE_LIMIT:
                    self._cache.clear()
                terms = self._cache[word] = tuple(t.text for t in self._analyzer(word))
            out.extend(terms)
        return out

    def query(self, text: str) -> list[tuple[str, float]]:
        """The terms a query searches by, each with its weight: QUESTION_WEIGHT for a term of QUESTION_WORDS
        (they still tell "where" from "when", but never outweigh the topic), 1 for the rest."""
        return [(term, QUESTION_WEIGHT if word.lower() in QUESTION_WORDS else 1.0)
                for word in TOKEN.findall(text) for term in self(word)]
