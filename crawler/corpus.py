"""The corpus: the data format between the crawler and the index (see DESIGN.md).

One page per JSONL line: ``{"title", "url", "aliases", "paragraphs", "sha1"}``.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator


class CorpusError(Exception):
    """A corpus file that is missing or malformed."""

    user_error = True


@dataclass
class Page:
    title: str                      # canonical title, sentence case as the wiki writes it
    url: str                        # canonical URL
    paragraphs: list[str]           # prose paragraphs and list items, reading order, text only
    aliases: list[str] = field(default_factory=list)  # other titles that reached this content
    sha1: str = ""                  # of the normalized content; filled in if empty

    def __post_init__(self) -> None:
        if not self.sha1:
            self.sha1 = content_sha1(self.paragraphs)

    def to_json(self) -> dict:
        return {"title": self.title, "url": self.url, "aliases": list(self.aliases),
                "paragraphs": list(self.paragraphs), "sha1": self.sha1}

    @classmethod
    def from_json(cls, data: dict) -> "Page":
        return cls(title=data["title"], url=data.get("url", ""), paragraphs=list(data["paragraphs"]),
                   aliases=list(data.get("aliases", [])), sha1=data.get("sha1", ""))


def normalize_text(text: str) -> str:
    """Content normalization for deduplication: Unicode NFC, collapsed whitespace, case-folded."""
    text = unicodedata.normalize("NFC", text)
    return re.sub(r"\s+", " ", text).strip().casefold()


def content_sha1(paragraphs: Iterable[str]) -> str:
    """Identity of a page's content: same normalized paragraphs, same sha1."""
    joined = "\n".join(normalize_text(p) for p in paragraphs if p.strip())
    return hashlib.sha1(joined.encode("utf-8")).hexdigest()


def iter_corpus(path: str | os.PathLike) -> Iterator[Page]:
    """Pages of a corpus JSONL file; a bad line is an error naming its line number."""
    path = Path(path)
    if not path.is_file():
        raise CorpusError(f"corpus file not found: {path}")
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield Page.from_json(json.loads(line))
            except (ValueError, KeyError, TypeError) as exc:
                raise CorpusError(f"{path}:{lineno}: not a corpus page ({exc})") from exc


def read_corpus(path: str | os.PathLike) -> list[Page]:
    return list(iter_corpus(path))


def write_corpus(pages: Iterable[Page], path: str | os.PathLike) -> int:
    """Write pages as JSONL atomically (temp file + rename). Returns the page count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    count = 0
    with tmp.open("w", encoding="utf-8") as fh:
        for page in pages:
            fh.write(json.dumps(page.to_json(), ensure_ascii=False) + "\n")
            count += 1
    os.replace(tmp, path)
    return count
