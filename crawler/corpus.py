"""The corpus: the data format between the crawler and the index (docs/data-formats.md).

One page per JSONL line: ``{"title", "url", "aliases", "paragraphs", "sha1"}``, plus the optional
keys of the structure-aware crawl (old corpora without them still load):

- ``"sections"``: one section path per paragraph (same length as ``paragraphs``): the heading
  texts from h2 down, e.g. ``["Drops", "On death"]``; ``[]`` for the lead;
- ``"kind"``: what the page is, one of ``PAGE_KINDS`` (``"article"`` when absent);
- ``"categories"``: the categories the page shows (absent when it shows none);
- ``"site"``: the name of the wiki the page comes from (MediaWiki's ``sitename``), or ``"server guide"``
  for a page of a server's own Markdown guide; absent when unknown.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator


# What a page is (crawler.page_kinds decides): an article about Minecraft itself, or something a plain
# question should not be answered from unless it asks for it.
# "server": a page of the server's own guide (crawler.guide), not of a wiki.
PAGE_KINDS = ("article", "tutorial", "joke", "removed", "spinoff", "version", "disambiguation", "server")


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
    sections: list[list[str]] | None = None  # section path of each paragraph ([] = lead); None: all lead
    page_kind: str = "article"      # one of PAGE_KINDS (the JSON key is "kind")
    categories: list[str] = field(default_factory=list)  # as the page shows them
    site: str = ""                  # the wiki's name ("Minecraft Wiki") or "server guide"; "" unknown

    def __post_init__(self) -> None:
        if not self.sha1:
            self.sha1 = content_sha1(self.paragraphs)
        if self.sections is None or (len(self.sections) != len(self.paragraphs) and not any(self.sections)):
            # All-lead paths say nothing: they follow the paragraphs (also through dataclasses.replace).
            self.sections = [[] for _ in self.paragraphs]
        if len(self.sections) != len(self.paragraphs):
            raise ValueError(f'"sections" has {len(self.sections)} entries for {len(self.paragraphs)} paragraphs')
        if self.page_kind not in PAGE_KINDS:
            raise ValueError(f'"kind" must be one of {", ".join(PAGE_KINDS)}, got {self.page_kind!r}')

    def to_json(self) -> dict:
        data = {"title": self.title, "url": self.url, "aliases": list(self.aliases),
                "paragraphs": list(self.paragraphs), "sha1": self.sha1,
                "sections": [list(path) for path in self.sections], "kind": self.page_kind}
        if self.categories:
            data["categories"] = list(self.categories)
        if self.site:
            data["site"] = self.site
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Page":
        """A page from one parsed JSONL line; a missing or mistyped field is a ValueError naming it."""
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, got {type(data).__name__}")
        return cls(title=_string_field(data, "title"), url=_string_field(data, "url", default=""),
                   paragraphs=_strings_field(data, "paragraphs"),
                   aliases=_strings_field(data, "aliases", default=[]),
                   sha1=_string_field(data, "sha1", default=""),
                   sections=_sections_field(data), page_kind=_string_field(data, "kind", default="article"),
                   categories=_strings_field(data, "categories", default=[]),
                   site=_string_field(data, "site", default=""))


def _sections_field(data: dict) -> list[list[str]] | None:
    """data["sections"], a list of lists of strings (its length is checked by Page); None when missing."""
    if "sections" not in data:
        return None
    value = data["sections"]
    if not isinstance(value, list) or not all(
            isinstance(path, list) and all(isinstance(name, str) for name in path) for path in value):
        raise ValueError('"sections" must be a list of lists of strings (one section path per paragraph)')
    return [list(path) for path in value]


def _string_field(data: dict, key: str, default: str | None = None) -> str:
    """data[key], a string; default when missing (required when default is None)."""
    if key not in data:
        if default is None:
            raise ValueError(f'no "{key}" field')
        return default
    if not isinstance(data[key], str):
        raise ValueError(f'"{key}" must be a string, got {type(data[key]).__name__}')
    return data[key]


def _strings_field(data: dict, key: str, default: list[str] | None = None) -> list[str]:
    """data[key], a list of strings; default when missing (required when default is None).
    A bare string is iterable too: unchecked, "text" would become four one-letter paragraphs."""
    if key not in data:
        if default is None:
            raise ValueError(f'no "{key}" field')
        return list(default)
    value = data[key]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f'"{key}" must be a list of strings')
    return list(value)


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
    # Bytes in, decoded line by line, so that text that is not UTF-8 is an error naming its line.
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CorpusError(f"{path}:{lineno}: not UTF-8 text ({exc.reason} at byte {exc.start + 1} of the line)") from exc
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
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            for page in pages:
                fh.write(json.dumps(page.to_json(), ensure_ascii=False) + "\n")
                count += 1
        os.replace(tmp, path)
    except BaseException:
        # A failed write (disk full, path is a directory, Ctrl-C) leaves no half-written temp file.
        if not tmp.is_dir():
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise
    return count
