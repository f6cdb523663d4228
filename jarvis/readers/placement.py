"""Where an answer was read, weighed against how sure the reader is of it.

The reader ranks its candidate spans by how far each beats its window's no-answer score. For "what do sheep
drop" that put a colour's spawn chance ("Pink — Chance: 0.164%", a row of the Spawning table) above the
sentence under Drops that says what a sheep drops: the row's words overlap the question's more. A span read
in a table row, or in a section that never holds what the question asks for, gives way here to a candidate
read in prose under a section that holds it (``section_fit``, readers/question_kinds.py: "Drops" for a drops
question, "Spawning" for a where question), when the reader was nearly as sure of that one: its margin at
most ``PlacementSettings.slack`` below.

Two more rules of where, both without a slack (``arrange`` applies the three):
- a span read in the sentence that introduces a list ("Blaze rods are essential for the rest of the game:")
  gives way to every candidate read elsewhere: what that sentence announces is in the list after it, and the
  span it gives ("essential for the rest of the game") answers nothing. Not for a question of quantity: the
  opening sentence may count what follows ("There are seven types of heads:");
- the same answer read on two pages is cited from the page retrieval ranked higher ("0-2 rotten flesh" is on
  Zombie and on Zombie villager: "what do zombies drop" cites Zombie).

Pure functions of the candidates: no model runs here.
"""
from __future__ import annotations

import re
from typing import Sequence

from jarvis.config import PlacementSettings
from jarvis.crawler.sentences import split_sentences
from jarvis.readers.base import Span
from jarvis.readers.question_kinds import QUANTITY, answer_kind, question_topics, section_fit

# A table row as the crawler writes it (crawler/extract.py): "Subject — Header: value; Header: value."
TABLE_ROW = re.compile(r"^[^—\n]{1,80} — [^:;\n]{1,60}: ")


def is_table_row(paragraph: str) -> bool:
    return bool(TABLE_ROW.match(paragraph))


def placement_fit(question: str, span: Span) -> float:
    """How surely the span's section holds what the question asks for (1 .. -1, 0: nothing says)."""
    kind = answer_kind(question)
    kinds = [kind] if kind else question_topics(question)
    return max((section_fit(k, span.passage.section) for k in kinds), default=0.0)


def _margin(span: Span) -> float:
    return span.signals.get("span_minus_null", span.score)


def misplaced(question: str, span: Span) -> bool:
    """Read where the question's kind is not written: a section that never holds it, or a table row in a
    section that does not say it holds it."""
    fit = placement_fit(question, span)
    return fit < 0 or (fit <= 0 and is_table_row(span.passage.text))


def prefer_placed(question: str, candidates: Sequence[Span], settings: PlacementSettings) -> list[Span]:
    """The candidates with a well-placed one moved first when the best is misplaced (see the module)."""
    candidates = list(candidates)
    if not settings.enabled or len(candidates) < 2 or not misplaced(question, candidates[0]):
        return candidates
    best = _margin(candidates[0])
    for i, span in enumerate(candidates[1:], 1):
        if (best - _margin(span) <= settings.slack and placement_fit(question, span) > 0
                and not is_table_row(span.passage.text)):
            return [span, *candidates[:i], *candidates[i + 1:]]
    return candidates


def introduces_a_list(span: Span) -> bool:
    """Read in its passage's last sentence, which ends in a colon: the sentence that announces a list."""
    text = span.passage.text.rstrip()
    if not text.endswith(":"):
        return False
    last = max((start for start, _ in split_sentences(text)), default=0)
    return span.start >= last


def demote_list_openers(question: str, candidates: Sequence[Span]) -> list[Span]:
    """The candidates with those read in a list's opening sentence moved after all others, unless the question
    asks for a quantity (see the module)."""
    if answer_kind(question) == QUANTITY:
        return list(candidates)
    openers = [introduces_a_list(span) for span in candidates]
    return [s for s, o in zip(candidates, openers) if not o] + [s for s, o in zip(candidates, openers) if o]


def _answer_key(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def cite_best_ranked(candidates: Sequence[Span]) -> list[Span]:
    """The candidates with the best one's answer read on a page ranked higher (``Passage.page_rank``) moved first."""
    candidates = list(candidates)
    if len(candidates) < 2:
        return candidates
    key, rank = _answer_key(candidates[0].text), candidates[0].passage.page_rank
    same = [i for i, span in enumerate(candidates[1:], 1)
            if _answer_key(span.text) == key and span.passage.page_rank < rank]
    if not key or not same:
        return candidates
    best = min(same, key=lambda i: (candidates[i].passage.page_rank, i))
    return [candidates[best], *candidates[:best], *candidates[best + 1:]]


def arrange(question: str, candidates: Sequence[Span], settings: PlacementSettings) -> list[Span]:
    """The reader's candidates in the order where they were read makes of them: the three rules of the module,
    or as read when ``settings.enabled`` is off."""
    if not settings.enabled:
        return list(candidates)
    return cite_best_ranked(prefer_placed(question, demote_list_openers(question, candidates), settings))
