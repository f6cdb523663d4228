"""Where an answer was read, weighed against how sure the reader is of it.

The reader ranks its candidate spans by how far each beats its window's no-answer score. For "what do sheep
drop" that put a colour's spawn chance ("Pink — Chance: 0.164%", a row of the Spawning table) above the
sentence under Drops that says what a sheep drops: the row's words overlap the question's more. A span read
in a table row, or in a section that never holds what the question asks for, gives way here to a candidate
read in prose under a section that holds it (``section_fit``, readers/question_kinds.py: "Drops" for a drops
question, "Spawning" for a where question), when the reader was nearly as sure of that one: its margin at
most ``PlacementSettings.slack`` below.

Pure functions of the candidates: no model runs here.
"""
from __future__ import annotations

import re
from typing import Sequence

from jarvis.config import PlacementSettings
from jarvis.readers.base import Span
from jarvis.readers.question_kinds import answer_kind, question_topics, section_fit

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
