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
