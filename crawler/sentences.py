"""The one sentence splitter of the project: where a wiki text's sentences begin and end.

A sentence ends at . ! ? followed by a space and a capital, digit, quote or bracket, unless the word
before is an abbreviation ("e.g.", "etc."). The crawler reads a page's first sentence with it (what
kind of page it is, crawler/page_kinds.py) and the readers the sentences an answer is read in
(jarvis/readers/base.py, the fallback reader's blocks). It lives in the crawler, the lowest stage,
so that every stage can use it.
"""
from __future__ import annotations

import re

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "approx.", "ca.")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character ranges of the sentences of a text, without surrounding spaces."""
    spans = []
    start = 0
    for match in list(SENTENCE_END.finditer(text)) + [None]:
        end = match.start() if match else len(text)
        if match and text[:end].lower().endswith(ABBREVIATIONS):
            continue
        left, right = start, end
        while left < right and text[left].isspace():
            left += 1
        while right > left and text[right - 1].isspace():
            right -= 1
        if left < right:
            spans.append((left, right))
        start = match.end() if match else end
    return spans


def first_sentence(text: str) -> str:
    """The text's first sentence ("" for a text without one)."""
    spans = split_sentences(text)
    return text[spans[0][0]:spans[0][1]] if spans else ""
