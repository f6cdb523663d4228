"""Article sources: ``articles/*.md`` parsed into dataclasses (format: ``articles/README.md``).

The format is a small, fixed subset of Markdown with wiki links, so it gets a small parser
of its own rather than a CommonMark library: CommonMark would also read ``*``, ``_``,
backticks, entities and lazy continuation lines, and every one of those would have to be
turned back off to keep the text of a paragraph exactly what the writer wrote.

Blocks: ``## Heading`` / ``### Subheading``, paragraphs (lines up to a blank line), list
items (``- item`` or ``1. item``, one line each; an indented line continues an item) and
pipe tables. Inline: ``[[Title]]``, ``[[Title|text]]``, ``**bold**``, ``<ref>note</ref>``.

The text of a paragraph (what the corpus stores; the crawler's extractor follows the same
paragraph contract on the served HTML) is :func:`plain_text`, whitespace-collapsed: links
become their text, bold its text, references vanish without touching the characters around.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Union

import yaml

from jarvis.errors import JarvisError

GROUPS = ("mobs", "blocks", "items", "biomes", "structures", "world")
FRONT_MATTER_KEYS = {"title", "group", "redirects", "categories", "hatnote", "infobox"}


class SourceError(JarvisError):
    """An article source that cannot be parsed (names the file and line)."""


# --------------------------------------------------------------------------- inline markup


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Bold:
    children: tuple["Inline", ...]


@dataclass(frozen=True)
class Link:
    target: str        # page title as written, e.g. "passive mob" or "Cow"
    anchor: str        # section after '#', or ""
    label: str         # the text shown


@dataclass(frozen=True)
class Ref:
    note: tuple["Inline", ...]   # the reference text, shown in the page's reference list


Inline = Union[Text, Bold, Link, Ref]
Inlines = tuple[Inline, ...]

_INLINE = re.compile(
    r"\[\[(?P<target>[^\[\]|]+)(?:\|(?P<label>[^\[\]]*))?\]\]"   # [[Title]] or [[Title|text]]
    r"|\*\*(?P<bold>.+?)\*\*"                                    # **bold**
    r"|<ref(?:\s[^>]*)?>(?P<note>.*?)</ref>"                     # <ref>note</ref>
    r"|<ref(?:\s[^>]*)?/>",                                      # <ref name="x" /> (a repeated reference)
    re.DOTALL,
)


def parse_inline(text: str) -> Inlines:
    """Inline markup of one paragraph, list item, heading or cell."""
    parts: list[Inline] = []
    pos = 0
    for match in _INLINE.finditer(text):
        if match.start() > pos:
            parts.append(Text(text[pos:match.start()]))
        if match.group("target") is not None:
            target, _, anchor = match.group("target").partition("#")
            label = match.group("label")
            parts.append(Link(target.strip(), anchor.strip(), label if label else match.group("target")))
        elif match.group("bold") is not None:
            parts.append(Bold(parse_inline(match.group("bold"))))
        else:
            parts.append(Ref(parse_inline(match.group("note") or "")))
        pos = match.end()
    if pos < len(text):
        parts.append(Text(text[pos:]))
    return tuple(parts)


def plain_text(inlines: Inlines) -> str:
    """The text a reader sees, without references (not yet whitespace-collapsed)."""
    out = []
    for part in inlines:
        if isinstance(part, Text):
            out.append(part.text)
        elif isinstance(part, Link):
            out.append(part.label)
        elif isinstance(part, Bold):
            out.append(plain_text(part.children))
    return "".join(out)


def collapse_whitespace(text: str) -> str:
    return " ".join(text.split())


def iter_links(inlines: Inlines) -> Iterator[Link]:
    for part in inlines:
        if isinstance(part, Link):
            yield part
        elif isinstance(part, Bold):
            yield from iter_links(part.children)
        elif isinstance(part, Ref):
            yield from iter_links(part.note)


# --------------------------------------------------------------------------- blocks


@dataclass(frozen=True)
class Heading:
    level: int          # 2 for "##", 3 for "###"
    inlines: Inlines


@dataclass(frozen=True)
class Paragraph:
    inlines: Inlines


@dataclass(frozen=True)
class ListBlock:
    ordered: bool
    items: tuple[Inlines, ...]


@dataclass(frozen=True)
class Table:
    header: tuple[Inlines, ...]
    rows: tuple[tuple[Inlines, ...], ...]


Block = Union[Heading, Paragraph, ListBlock, Table]

_HEADING = re.compile(r"^(#+)\s+(.*?)\s*#*\s*$")
_LIST_ITEM = re.compile(r"^(?:(?P<bullet>[-*])|(?P<number>\d+)[.)])\s+(?P<text>.*)$")
_TABLE_SEPARATOR = re.compile(r"^\s*:?-+:?\s*$")
_CELL_SPLIT = re.compile(r"\|(?![^\[]*\]\])")   # a pipe that is not inside [[...|...]]


def _table_cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return [cell.strip() for cell in _CELL_SPLIT.split(line)]


def _table(lines: list[str]) -> Table:
    rows = [_table_cells(line) for line in lines]
    rows = [row for row in rows if not all(_TABLE_SEPARATOR.match(cell) for cell in row)]
    parsed = [tuple(parse_inline(cell) for cell in row) for row in rows]
    return Table(header=parsed[0] if parsed else (), rows=tuple(parsed[1:]))


def parse_body(text: str, where: str = "<text>", first_line: int = 1) -> list[Block]:
    """Blocks of an article body; ``where``/``first_line`` only name places in errors."""
    blocks: list[Block] = []
    paragraph: list[str] = []
    items: list[str] = []
    ordered = False
    table: list[str] = []

    def flush() -> None:
        nonlocal items, paragraph, table
        if paragraph:
            blocks.append(Paragraph(parse_inline("\n".join(paragraph))))
        if items:
            blocks.append(ListBlock(ordered, tuple(parse_inline(item) for item in items)))
        if table:
            blocks.append(_table(table))
        paragraph, items, table = [], [], []

    for lineno, line in enumerate(text.splitlines(), first_line):
        stripped = line.strip()
        item = _LIST_ITEM.match(stripped)
        if not stripped:
            if paragraph or table:
                flush()             # a list stays open across blank lines between its items
        elif stripped.startswith("#"):
            heading = _HEADING.match(stripped)
            level = len(heading.group(1)) if heading else 0
            if level not in (2, 3):
                raise SourceError(f"{where}:{lineno}: only '## Section' and '### Subsection' headings are allowed")
            flush()
            blocks.append(Heading(level, parse_inline(heading.group(2))))
        elif stripped.startswith("|"):
            if not table:
                flush()
            table.append(stripped)
        elif item and not line[:1].isspace():
            is_ordered = item.group("number") is not None
            if paragraph or table or (items and is_ordered != ordered):
                flush()
            ordered = is_ordered
            items.append(item.group("text"))
        elif items and line[:1].isspace():
            items[-1] += "\n" + stripped        # an indented line continues the list item
        else:
            if items or table:
                flush()
            paragraph.append(stripped)
    flush()
    return blocks


def block_paragraphs(blocks: list[Block]) -> list[str]:
    """The corpus paragraphs of a body: each paragraph and each list item, tables and headings left out."""
    texts: list[str] = []
    for block in blocks:
        if isinstance(block, Paragraph):
            texts.append(collapse_whitespace(plain_text(block.inlines)))
        elif isinstance(block, ListBlock):
            texts.extend(collapse_whitespace(plain_text(item)) for item in block.items)
    return [text for text in texts if text]


def iter_block_inlines(blocks: list[Block]) -> Iterator[Inlines]:
    for block in blocks:
        if isinstance(block, (Heading, Paragraph)):
            yield block.inlines
        elif isinstance(block, ListBlock):
            yield from block.items
        elif isinstance(block, Table):
            yield from block.header
            for row in block.rows:
                yield from row


# --------------------------------------------------------------------------- articles


@dataclass
class Article:
    title: str
    group: str
    blocks: list[Block]
    redirects: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    hatnote: Inlines = ()
    infobox: dict[str, Inlines] = field(default_factory=dict)
    path: Path | None = None
    mtime: float = 0.0              # of the source file: the page's Last-Modified

    def paragraphs(self) -> list[str]:
        return block_paragraphs(self.blocks)

    def links(self) -> Iterator[Link]:
        """Every link written in the source: hatnote, infobox and body."""
        yield from iter_links(self.hatnote)
        for value in self.infobox.values():
            yield from iter_links(value)
        for inlines in iter_block_inlines(self.blocks):
            yield from iter_links(inlines)


def _string_list(value: object, key: str, where: str) -> list[str]:
    if value in (None, ""):
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SourceError(f"{where}: '{key}' must be a list of titles")
    return [v.strip() for v in value if v.strip()]


def parse_article(text: str, path: Path | None = None, mtime: float = 0.0) -> Article:
    where = str(path) if path else "<article>"
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise SourceError(f"{where}:1: an article starts with '---' front matter")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise SourceError(f"{where}: front matter is not closed with '---'") from None
    try:
        # BaseLoader keeps every value a string: "Yes" stays "Yes", "2.50" stays "2.50".
        meta = yaml.load("\n".join(lines[1:end]), Loader=yaml.BaseLoader) or {}
    except yaml.YAMLError as exc:
        raise SourceError(f"{where}: bad front matter: {' '.join(str(exc).split())}") from exc
    if not isinstance(meta, dict):
        raise SourceError(f"{where}: front matter must be 'key: value' lines")
    unknown = set(meta) - FRONT_MATTER_KEYS
    if unknown:
        raise SourceError(f"{where}: unknown front matter key(s): {', '.join(sorted(unknown))}")
    title = str(meta.get("title", "")).strip()
    if not title:
        raise SourceError(f"{where}: front matter has no 'title'")
    infobox = meta.get("infobox") or {}
    if not isinstance(infobox, dict):
        raise SourceError(f"{where}: 'infobox' must be 'key: value' lines")
    return Article(
        title=title,
        group=str(meta.get("group", "")).strip(),
        blocks=parse_body("\n".join(lines[end + 1:]), where, first_line=end + 2),
        redirects=_string_list(meta.get("redirects"), "redirects", where),
        categories=_string_list(meta.get("categories"), "categories", where),
        hatnote=parse_inline(str(meta.get("hatnote") or "")),
        infobox={str(k): parse_inline(str(v)) for k, v in infobox.items()},
        path=path,
        mtime=mtime,
    )


def load_articles(articles_dir: Path) -> list[Article]:
    """Every ``*.md`` article in the folder (README.md aside), sorted by title."""
    articles_dir = Path(articles_dir)
    if not articles_dir.is_dir():
        raise SourceError(f"article folder not found: {articles_dir}")
    articles = []
    for path in sorted(articles_dir.glob("*.md")):
        if path.name == "README.md":
            continue
        articles.append(parse_article(path.read_text(encoding="utf-8"), path, path.stat().st_mtime))
    return sorted(articles, key=lambda a: a.title)
