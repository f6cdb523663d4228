"""What a span reader reads for one passage: a short header naming the page and its section, then the passage.

Jarvis's own reader (jarvis/training) is trained on exactly these texts and reads exactly these, so the one
function here serves both. The header tells the model which page and section a paragraph comes from ("They
drop 0-2 leather" says nothing of cows without it), which is what lets it say "not here" to a paragraph of
the wrong page. Answers are only ever taken from the passage part, never from the header.

    text, offset = reader_context(passage.title, passage.section, passage.text)
    text[offset:] == passage.text
"""
from __future__ import annotations

from typing import Sequence

HEADER_SEPARATOR = " > "


def context_header(title: str, section: Sequence[str]) -> str:
    """"Cow > Drops: " for a paragraph of the Drops section of Cow; "Cow: " for its lead."""
    return HEADER_SEPARATOR.join((title, *section)) + ": "


def reader_context(title: str, section: Sequence[str], text: str) -> tuple[str, int]:
    """The text to read and where the passage starts in it."""
    header = context_header(title, section)
    return header + text, len(header)
