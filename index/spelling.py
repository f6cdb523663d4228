"""Chat spelling and typos in questions, read against the index's own words.

Players type "wat do endermn drop" and "can u tame a zombi horse in survivl". BM25F finds nothing for a
misspelt name, and the page vectors drift with it, so a question's words are put right before searching:

1. chat spellings ("u", "wat", "dose", "b4") become the words they stand for (``data/chat_words.tsv``,
   general chat usage, not tuned to any question set);
2. a word the index has never seen (not in its vocabulary, ``Vocabulary``) becomes the index word closest
   to it by optimal-string-alignment distance (a swap of two letters counts one), at most 1 edit for
   words of 4-5 letters and 2 for longer ones; among equally close words the most frequent wins, and a
   word of a page title counts as frequent. Numbers, short words and known words are left alone.

The vocabulary is written with each index generation (``VOCABULARY_FILE``: word, count), so a search
needs no pass over the pages; the edit-distance search is rapidfuzz's (C++), a few milliseconds a word.
"""
from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

log = logging.getLogger(__name__)

VOCABULARY_FILE = "vocabulary.tsv"
CHAT_WORDS_FILE = Path(__file__).resolve().parent / "data" / "chat_words.tsv"
TITLE_WORD_COUNT = 50        # a word of a page title or alias counts as if the pages said it this often
SEEN_MAX = 20_000            # unknown words remembered with their correction
MIN_COUNT = 2                # words the pages say once are too often the wiki's own typos: not a target
_WORD = re.compile(r"[^\W_]+(?:['.][^\W_]+)*")   # "don't", "1.21" and "1.0.21" are one word each


def words_of(text: str) -> list[str]:
    """The lower-cased words of a text (letters and digits; an inner apostrophe or dot kept: "don't", "1.21")."""
    return _WORD.findall(text.casefold())


def _load_chat_words(path: Path = CHAT_WORDS_FILE) -> dict[str, str]:
    table: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        chat, _, meant = line.partition("\t")
        table[chat.strip().casefold()] = meant.strip()
    return table


CHAT_WORDS: dict[str, str] = _load_chat_words()


def vocabulary_counts(pages: Iterable) -> Counter:
    """Word counts of the pages (``title``, ``aliases``, ``paragraphs``): what ``Vocabulary`` is made of."""
    counts: Counter = Counter()
    for page in pages:
        for text in page.paragraphs:
            counts.update(w for w in words_of(text) if not w.isdigit())
        for name in (page.title, *page.aliases):
            for word in words_of(name):
                if not word.isdigit():
                    counts[word] += TITLE_WORD_COUNT
    return counts


def write_vocabulary(directory: Path, counts: Counter) -> None:
    lines = (f"{word}\t{count}" for word, count in sorted(counts.items()) if count >= MIN_COUNT)
    (directory / VOCABULARY_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")


@dataclass
class Vocabulary:
    """The words an index knows, with how often its pages use them."""

    counts: dict[str, int]
    _words: list[str] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._words = list(self.counts)

    @classmethod
    def load(cls, directory: Path) -> "Vocabulary | None":
        """The generation's vocabulary; None when it has none (built before spelling was read)."""
        path = directory / VOCABULARY_FILE
        if not path.is_file():
            return None
        counts: dict[str, int] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            word, _, count = line.partition("\t")
            if word and count.isdigit():
                counts[word] = int(count)
        return cls(counts)

    def __contains__(self, word: str) -> bool:
        return word in self.counts

    def closest(self, word: str) -> str | None:
        """The known word nearest to ``word`` within its allowed edits, or None."""
        from rapidfuzz import process
        from rapidfuzz.distance import OSA

        allowed = max_edits(word)
        if allowed == 0 or not self._words:
            return None
        found = process.extract(word, self._words, scorer=OSA.distance, score_cutoff=allowed, limit=None)
        if not found:
            return None
        # Fewest edits first; then the same first letter (typos rarely change it); then the most used.
        best = min(found, key=lambda hit: (hit[1], hit[0][0] != word[0], -self.counts[hit[0]]))
        return best[0]


def max_edits(word: str) -> int:
    if len(word) < 4 or word.isdigit() or any(c.isdigit() for c in word):
        return 0
    return 1 if len(word) <= 5 else 2


@dataclass(frozen=True)
class Correction:
    """A question's words as searched: ``text`` and what was changed (``fixes``: (typed, read) pairs)."""

    text: str
    fixes: tuple[tuple[str, str], ...] = ()


class Speller:
    """Puts a question's chat spelling and typos right against one index's vocabulary."""

    def __init__(self, vocabulary: Vocabulary | None, chat_words: dict[str, str] | None = None,
                 keep: Sequence[str] = ()) -> None:
        self.vocabulary = vocabulary
        self.chat_words = CHAT_WORDS if chat_words is None else chat_words
        self.keep = {w.casefold() for w in keep}     # words never corrected (a glossary's players' words)
        self._seen: dict[str, str | None] = {}

    def correct(self, text: str) -> Correction:
        """``text`` with chat spellings spelt out and unknown words replaced by the index's nearest ones."""
        out: list[str] = []
        fixes: list[tuple[str, str]] = []
        for word in words_of(text):
            read = self.chat_words.get(word)
            if read is None and self.vocabulary is not None and word not in self.keep and word not in self.vocabulary:
                if word not in self._seen:
                    if len(self._seen) >= SEEN_MAX:
                        self._seen.clear()   # a long-running serve: the memo stays bounded
                    self._seen[word] = self.vocabulary.closest(word)
                read = self._seen[word]
            if read and read != word:
                fixes.append((word, read))
                out.append(read)
            else:
                out.append(word)
        return Correction(" ".join(out), tuple(fixes))
