"""Content tables as citable text: one text per data row, where the table was.

Two steps, so that the sample wiki's corpus builder (which has tables as cell strings, not HTML)
writes exactly what the crawler extracts:
1. ``html_grid``: an HTML ``<table>`` -> a ``Grid`` (header rows and data rows of cell strings,
   ``rowspan``/``colspan`` spread over the cells they cover, footnote markers stripped), or None
   for a table used for layout (its prose is read as ordinary paragraphs instead);
2. ``row_texts``: a ``Grid`` -> one text per data row, in one of the ``TABLE_MODES`` (the row format is
   crawler/table_rows.py's, which the readers parse):
   - ``"sentences"``: "Header: cell; Header: cell." (cells without a header as they are);
   - ``"text"``: the row's subject first (its first non-empty cell, the item or the property
     of a transposed table), then the other cells with their headers:
     "Raw Beef — Roll Chance: 100%; Quantity: Default 1–3, Looting I 1–4."
   A row whose only text is a recipe's ingredients (the wiki draws the recipe itself as an image)
   is about the page it is on: "Golden Apple — Ingredients: Gold Ingot+ Apple."
   Multi-row headers join top-down ("Quantity, Default" in sentences); an empty cell (an image,
   a blank) gives nothing; a cell repeated by a colspan under the same header counts once.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from bs4 import CData, NavigableString, Tag

from jarvis.crawler.settings import TABLE_MODES  # noqa: F401 - re-exported: the modes are settings
from jarvis.crawler.table_rows import LABEL_SEPARATOR, as_sentence, cells_text, labelled, row_text

# Footnote markers the wiki leaves in cells: "[d 1]", "[note 1]", "[i 2]", "[A]", "[a]", "[1]"
# (not "[sic]" and not a bracketed word).
FOOTNOTE_MARKER = re.compile(r"\[(?:(?:note|n|d|i|e|c|t|fn)\s?\d{1,3}|[A-Za-z]|\d{1,3})\]")
_WHITESPACE = re.compile(r"\s+")
_BLOCK_TAGS = ("p", "ul", "ol", "table", "div", "dl", "h2", "h3", "h4", "h5", "h6")
# Column headers of a recipe's ingredient list: on the wiki's crafting, smelting and brewing tables
# the recipe is an image beside it, so the ingredients are the row's only text.
INGREDIENTS_HEADER = re.compile(r"^(ingredients?|materials?)\b", re.IGNORECASE)


@dataclass
class Grid:
    """A table's cells as strings, spans spread out: every row as wide as the table."""

    header: list[list[str]] = field(default_factory=list)  # header rows, top first
    rows: list[list[str]] = field(default_factory=list)    # data rows
    row_headers: bool = False     # data rows start with a header cell (a transposed table)


def cell_text(text: str) -> str:
    """A cell's text: footnote markers gone, whitespace collapsed."""
    return _WHITESPACE.sub(" ", FOOTNOTE_MARKER.sub("", text)).strip()


def html_grid(table: Tag) -> Grid | None:
    """The grid of a content table; None for a layout table (a single column, or cells holding
    paragraphs, lists or other tables)."""
    rows = [row for row in table.find_all("tr") if row.find_parent("table") is table]
    cells = [row.find_all(["th", "td"], recursive=False) for row in rows]
    if not any(cells) or max(len(row) for row in cells) < 2:
        return None
    if any(cell.find(_BLOCK_TAGS) is not None for row in cells for cell in row):
        return None
    grid: list[list[str]] = []
    is_header: list[bool] = []
    pending: dict[int, tuple[int, str]] = {}   # column -> (rows still covered by a rowspan, text)
    for row in cells:
        out: list[str] = []
        for cell in row:
            while len(out) in pending:
                out.append(_take_rowspan(pending, len(out)))
            text = cell_text(_text_of(cell))
            span = _span(cell, "colspan")
            down = _span(cell, "rowspan")
            for _ in range(span):
                if down > 1:
                    pending[len(out)] = (down - 1, text)
                out.append(text)
        while len(out) in pending:
            out.append(_take_rowspan(pending, len(out)))
        grid.append(out)
        is_header.append(bool(row) and all(cell.name == "th" for cell in row))
    width = max(len(row) for row in grid)
    grid = [row + [""] * (width - len(row)) for row in grid]
    top = 0
    while top < len(grid) and is_header[top]:
        top += 1
    data_cells = [row for row in cells[top:] if row]
    row_headers = bool(data_cells) and all(row[0].name == "th" for row in data_cells)
    return Grid(header=grid[:top], rows=grid[top:], row_headers=row_headers)


def row_texts(grid: Grid, mode: str, subject: str = "") -> list[str]:
    """One text per data row that says something: two cells or more, or the ingredients of a
    recipe drawn as an image, which are about ``subject`` (see the module docstring)."""
    headers = column_headers(grid.header)
    texts = []
    for row in grid.rows:
        pairs = _pairs(row, headers)
        if len(pairs) == 1 and subject and _is_ingredients(pairs[0]):
            pairs = [((), subject), *pairs]
        if len(pairs) < 2:
            continue  # an empty row, or a label across the table ("Java Edition:"): no fact
        if mode == "text":
            (_, subject), rest = pairs[0], pairs[1:]
            text = row_text(subject, _grouped(rest))
        else:
            text = cells_text([labelled(", ".join(h), v) for h, v in pairs])
        texts.append(as_sentence(text))
    return texts


def _is_ingredients(pair: tuple[tuple[str, ...], str]) -> bool:
    """Whether a lone (header, cell) pair is a recipe's ingredient list (not a header repeated as a label)."""
    header, text = pair
    return bool(header) and INGREDIENTS_HEADER.match(header[0]) is not None and text not in header


def column_headers(header_rows: list[list[str]]) -> list[tuple[str, ...]]:
    """Each column's header: the texts of the header rows above it, top-down, each once."""
    width = max((len(row) for row in header_rows), default=0)
    headers = []
    for column in range(width):
        parts: list[str] = []
        for row in header_rows:
            text = row[column] if column < len(row) else ""
            if text and text not in parts:
                parts.append(text)
        headers.append(tuple(parts))
    return headers


def _grouped(pairs: list[tuple[tuple[str, ...], str]]) -> list[str]:
    """The cells of "Roll Chance: 100%; Quantity: Default 1–3, Looting I 1–4": cells under one spanning
    header share it."""
    parts: list[str] = []
    previous_top = None
    for header, text in pairs:
        if len(header) > 1 and header[0] == previous_top:
            parts[-1] += f", {' '.join(header[1:])} {text}"
            continue
        if len(header) > 1:
            parts.append(f"{header[0]}{LABEL_SEPARATOR}{' '.join(header[1:])} {text}")
        else:
            parts.append(labelled(header[0] if header else "", text))
        previous_top = header[0] if len(header) > 1 else None
    return parts


def _pairs(row: list[str], headers: list[tuple[str, ...]]) -> list[tuple[tuple[str, ...], str]]:
    """(header, cell) of the row's non-empty cells; a cell repeated under the same header (a
    colspan under a colspan header, spread out) once."""
    pairs: list[tuple[tuple[str, ...], str]] = []
    for column, text in enumerate(row):
        if not text:
            continue
        header = headers[column] if column < len(headers) else ()
        if pairs and pairs[-1] == (header, text):
            continue
        pairs.append((header, text))
    return pairs


def _text_of(cell: Tag) -> str:
    """A cell's text; a line break counts as a space ("Diamond Ore<br>Deepslate Diamond Ore")."""
    return "".join(" " if isinstance(part, Tag) else str(part) for part in cell.descendants
                   if type(part) in (NavigableString, CData) or isinstance(part, Tag) and part.name == "br")


def _span(cell: Tag, attribute: str) -> int:
    try:
        return max(1, min(int(str(cell.get(attribute, "1")).strip() or 1), 1000))
    except ValueError:
        return 1


def _take_rowspan(pending: dict[int, tuple[int, str]], column: int) -> str:
    left, text = pending[column]
    if left <= 1:
        del pending[column]
    else:
        pending[column] = (left - 1, text)
    return text
