"""Trimming: the part of an answer sentence that answers.

When the question ends with its own verb or property ("what do cows DROP", "where do zombies SPAWN",
"how much health does it HAVE") the answer starts after that word in the sentence; otherwise after the
first "is"/"has" following the subject ("A creeper IS a green, silent hostile mob ..."). It ends with the
clause (and at most ``max_words`` words).
"""
from __future__ import annotations

import re
from typing import Sequence

from jarvis.lexical import Word

MAX_ANSWER_WORDS = 25
# ", emitting particles as it dies", ", increasing the damage": a comma before an -ing word opens a new
# clause, unless the word is a noun ("mining fatigue", "string") or an item of a list ("lava, drowning and
# freezing").
PARTICIPLE_CLAUSE = (r",\s+(?=(?!(?:during|nothing|something|anything|everything|string|building|ceiling|morning|"
                     r"evening|fishing|mining|crafting|smelting|brewing|trading|enchanting|including)\b)"
                     r"[a-z]\w+ing\b(?!\s*(?:,|and\b|or\b)))")
# Where an answer clause stops: a semicolon, a dash, a full stop, a comma before a new clause, or an
# aside in brackets ("(see image on the right)", "(2.5 hearts)"; no gold answer holds one).
CLAUSE_END = re.compile(r"\s*(;|\s[-\u2013\u2014]\s|\.(\s|$)|,\s+(?=(but|which|while|so|although|though|"
                        r"because|unless|where|when|whereas|as|if|since|except|instead|otherwise|including)\b)|"
                        + PARTICIPLE_CLAUSE + r"|\s\()")
AND_CLAUSE = re.compile(r",\s+and\s")
# Words that only glue a question together; never the question's own verb or property.
FUNCTION_WORDS = frozenset("a an the of in on at to for from with by into onto about and or you your i we "
                           "my me it its they them their this that these those there can could should would "
                           "will shall may might must what which who whom whose where when why how much many "
                           "do does did up down out off over away".split())
COPULAS = frozenset({"be", "have"})

def answer_start(question: list[Word], words: list[Word], subject: set[str]) -> int | None:
    """Index of the sentence word the answer starts at, or None for the whole sentence."""
    asked = [w.stem for w in question if w.surface.lower() not in FUNCTION_WORDS and w.stem not in subject]
    # "what do cows DROP", "how do you TAME a wolf": start after the question's own verb or
    # property, the last word that is not about the subject, when the rest still says something.
    if asked:
        for i, word in enumerate(words[:-1]):
            if word.stem == asked[-1] and says_something(words[i + 1:i + 4]):
                return i + 1
    # "what is a creeper": after the first "is"/"has" that follows a mention of the subject.
    seen_subject = False
    for i, word in enumerate(words[:-1]):
        seen_subject = seen_subject or word.stem in subject or word.surface.lower() in ("it", "they")
        if seen_subject and word.stem in COPULAS:
            return i + 1
    return None


def says_something(words: Sequence[Word]) -> bool:
    return any(not w.is_stop and w.surface.lower() not in FUNCTION_WORDS for w in words)


def clause_end(text: str, start: int, end: int) -> int:
    """End of the clause that starts at ``start`` (and at most MAX_ANSWER_WORDS words)."""
    match = CLAUSE_END.search(text, start, end)
    if match:
        end = match.start()
    # ", and" starts a new clause unless it closes a list ("a, b, and c").
    match = AND_CLAUSE.search(text, start, end)
    if match and "," not in text[start:match.start()]:
        end = match.start()
    words = list(re.finditer(r"\S+", text[start:end]))
    if len(words) > MAX_ANSWER_WORDS:
        end = start + words[MAX_ANSWER_WORDS - 1].end()
    return end


LEADING_COPULA = re.compile(r"(?:is|are|was|were)\s+(?=\S)", re.IGNORECASE)


def answer_opening(text: str, sentence_start: int, start: int, sentence_end: int) -> int:
    """Where an answer cut at ``start`` opens: after a bracket the cut fell in ("Glimmer huts (also known
    as lake | huts) are small cabins ...", "45[JE | only] seconds"), and after a copula left at its
    front ("are misty biomes" -> "misty biomes")."""
    for left, right in ("()", "[]"):
        opened = text.rfind(left, sentence_start, start)
        if opened >= 0 and text.rfind(right, opened, start) < 0:
            closed = text.find(right, start, sentence_end)
            if closed >= 0:
                start = closed + 1
    while start < len(text) and (text[start].isspace() or text[start] in ",;:-"):
        start += 1
    copula = LEADING_COPULA.match(text, start)
    return copula.end() if copula else start


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Drop surrounding spaces and separators (keeps closing brackets and a minus sign, drops a final
    full stop)."""
    while start < end and (text[start].isspace() or text[start] in ",;:"
                           or text[start] == "-" and not text[start + 1:start + 2].isdigit()):
        start += 1
    while end > start and (text[end - 1].isspace() or text[end - 1] in ",;:."):
        end -= 1
    marker = EDITION_MARKER.search(text, start, end)   # "bamboo jungles[Java Edition only]"
    if marker and marker.start() > start:
        return strip_span(text, start, marker.start())
    return start, end


# An edition marker at the end of a span: "\u200c[JE only]", "[Java Edition only]", "[BE only]".
EDITION_MARKER = re.compile(r"\u200c?\[[^\]]{1,40}\bonly\]$")
