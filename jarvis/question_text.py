"""A question's text: checked (``check_question``), normalised (``normalize_question``: one question however
it is cased, spaced or ended), and in the form Jarvis reads it (``reading_form``, ``reader_question``). The
one normaliser of the answer cache, `jarvis report` and the desk's groups.
"""
from __future__ import annotations

import re
import unicodedata

from jarvis.errors import JarvisError

MAX_QUESTION_CHARS = 500   # a chat line is at most 256; anything far longer is not a question
READ_WITH = "?"            # the closing mark every question is read with (reading_form)


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
    """One question however it is cased, spaced or ended: the answer cache's key, and how `jarvis report` and
    the desk group the questions asked."""
    return re.sub(r"\s+", " ", question.casefold()).strip().rstrip("?!. ")


def reading_form(question: str) -> str:
    """The question as Jarvis reads it: case and closing punctuation do not change what is asked, so
    "What do cows drop?", "what do cows drop" and "WHAT DO COWS DROP!" are read (searched, read and
    judged) the same way and get the same answer. The player's own words stay the answer's ``question``."""
    return normalize_question(question) + READ_WITH


def reader_question(question: str, index, read_spelt: bool = True) -> str:
    """The question as the reader reads it: spelt as ``index`` searches it (when ``read_spelt``), in its
    reading form. What answering reads (``Jarvis.read_as``) and what training examples carry."""
    return reading_form(index.spelt(question) if read_spelt else question)
