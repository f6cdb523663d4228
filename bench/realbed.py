"""The real-wiki test bed as a corpus with section paths, and the pages a question reads.

`../shared/realwiki/pages.json.gz` (see its README; CC BY-NC-SA, read at run time only) holds
pages as sections of blocks. ``write_corpus`` turns it into corpus JSONL the way the crawler
would: p and li blocks are paragraphs, a table is one paragraph per data row
("header: cell; header: cell; ..."), hatnotes are left out; every paragraph gets its section's
heading path (``"sections"``, parallel to ``"paragraphs"``). Used by bench/bench_reader.py.
"""
from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REALWIKI = ROOT.parent / "shared" / "realwiki" / "pages.json.gz"
REALBED_URL = "https://minecraft.wiki/w/"


def table_rows(rows: list[list[str]]) -> list[str]:
    """One text per data row: "header: cell; ..." (the first row is the header; empty cells dropped)."""
    if not rows:
        return []
    header, texts = rows[0], []
    for row in rows[1:] or rows[:1]:
        cells = []
        for i, cell in enumerate(row):
            cell = " ".join(cell.split())
            if not cell:
                continue
            name = " ".join(header[i].split()) if i < len(header) and rows[1:] else ""
            cells.append(f"{name}: {cell}" if name and name != cell else cell)
        if cells:
            texts.append("; ".join(cells))
    return texts


def page_record(page: dict) -> dict:
    """A corpus JSONL record (title, url, aliases, paragraphs, sections, kind) of one test-bed page."""
    paragraphs, sections = [], []
    for section in page["sections"]:
        for kind, content in section["blocks"]:
            texts = [content] if kind in ("p", "li") else table_rows(content) if kind == "table" else []
            for text in texts:
                text = " ".join(str(text).split())
                if text:
                    paragraphs.append(text)
                    sections.append(list(section["path"]))
    return {"title": page["title"], "url": REALBED_URL + page["slug"], "aliases": page.get("aliases", []),
            "paragraphs": paragraphs, "sections": sections, "kind": "article"}


def write_corpus(target: Path, source: Path = REALWIKI) -> Path:
    """The test bed as corpus JSONL at ``target`` (written once; pages without text are left out)."""
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        pages = json.load(handle)
    partial = target.with_suffix(".partial")
    with partial.open("w", encoding="utf-8") as out:
        for page in pages:
            record = page_record(page)
            if record["paragraphs"]:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
    partial.replace(target)
    return target


@dataclass(frozen=True)
class CorpusPage:
    title: str
    url: str
    paragraphs: list[str]
    sections: list[tuple[str, ...]]
    aliases: tuple[str, ...] = ()


def find_page(pages: dict[str, CorpusPage], title: str) -> CorpusPage | None:
    """The page a question names: by title or alias, case-insensitively (None when the corpus lacks it)."""
    if not title:
        return None
    wanted = title.casefold()
    return next((page for page in pages.values()
                 if page.title.casefold() == wanted or any(a.casefold() == wanted for a in page.aliases)), None)


def load_sections(corpus: Path) -> dict[str, CorpusPage]:
    """Title -> page with the section path of each paragraph ([] paths when the corpus has none)."""
    pages = {}
    with corpus.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                data = json.loads(line)
                paragraphs = data["paragraphs"]
                sections = data.get("sections") or [[] for _ in paragraphs]
                pages[data["title"]] = CorpusPage(data["title"], data.get("url", ""), paragraphs,
                                                  [tuple(s) for s in sections], tuple(data.get("aliases", [])))
    return pages
