"""The format of a content table's row as text, written by the crawler (crawler/tables.py, table mode
"text") and read by the readers (the fallback reader answers from a row with a part of it, never the
whole line). One module owns both directions, so that what is written is what is parsed:

    "Raw Beef — Roll Chance: 100%; Quantity: Default 1–3, Looting I 1–4."

the row's subject (its first cell: the item, the ingredients, the property), then "Header: value"
cells. The "sentences" mode writes the cells alone ("Header: cell; Header: cell.").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

SUBJECT_SEPARATOR = " \u2014 "     # " — ": between a row's subject and its cells
CELL_SEPARATOR = "; "              # between cells
LABEL_SEPARATOR = ": "             # between a cell's header and its value
_C, _L = re.escape(CELL_SEPARATOR.strip()), re.escape(LABEL_SEPARATOR.strip())
_CELL = re.compile(rf"\s*([^{_C}{_L}]{{1,60}}?){_L}\s+([^{_C}]+?)\s*(?:{_C}|\.?$)")


def labelled(header: str, value: str) -> str:
    """A cell: "Header: value" (the value alone without a header, or when it repeats the header)."""
    return f"{header}{LABEL_SEPARATOR}{value}" if header and header != value else value


def cells_text(cells: list[str]) -> str:
    return CELL_SEPARATOR.join(cells)


def row_text(subject: str, cells: list[str]) -> str:
    """A row led by its subject: "Subject — Header: value; Header: value" (no cells: the subject alone)."""
    return subject + (SUBJECT_SEPARATOR + cells_text(cells) if cells else "")


def as_sentence(text: str) -> str:
    """A row's text ends as a sentence does."""
    return text if text.endswith((".", "!", "?")) else text + "."


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
    """The parts of a row's text written by ``row_text``, or None when the text is not such a row."""
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
