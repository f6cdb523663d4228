"""Table rows as the crawler writes them (crawler/tables.py, ``--tables text``):

    "Raw Beef — Roll Chance: 100%; Quantity: Default 1–3, Looting I 1–4."

the row's subject (its first cell: the item, the ingredients, the property), then "Header: value"
cells. The reader answers from a row with a part of it, never the whole line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

SUBJECT_SEPARATOR = " \u2014 "           # " — "
_CELL = re.compile(r"\s*([^;:]{1,60}?):\s+([^;]+?)\s*(?:;|\.?$)")


@dataclass(frozen=True)
class Cell:
    header_start: int
    header_end: int
    value_start: int
    value_end: int


@dataclass(frozen=True)
class Row:
    subject_start: int       # text[subject_start:subject_end] is what the row is about
    subject_end: int
    cells: tuple[Cell, ...]


def parse_row(text: str) -> Row | None:
    """The parts of a table row's text, or None when the text is not a table row."""
    split = text.find(SUBJECT_SEPARATOR)
    if split <= 0:
        return None
    cells = []
    position = split + len(SUBJECT_SEPARATOR)
    while position < len(text):
        match = _CELL.match(text, position)
        if match is None:
            break
        cells.append(Cell(match.start(1), match.end(1), match.start(2), match.end(2)))
        position = match.end()
    return Row(0, split, tuple(cells))
