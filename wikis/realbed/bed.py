"""The real-wiki test bed's data: ``pages.json.gz`` (1,923 real Minecraft Wiki pages, CC BY-NC-SA,
kept beside the repository in ``../shared/realwiki/``, never inside it) loaded as titles, aliases
and sections. Its format is described in that folder's README; in short, one object per page:
``{"title", "slug", "aliases": [...], "sections": [{"path": [...], "blocks": [[kind, value], ...]}]}``
with block kinds ``p``, ``li``, ``hatnote`` (text) and ``table`` (rows of cell strings).
"""
from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path

from jarvis.config import REALBED_PAGES
from jarvis.errors import JarvisError
from jarvis_lab.samplewiki.titles import dbkey

BLOCK_KINDS = ("p", "li", "hatnote", "table")


class RealBedMissing(JarvisError):
    """The test bed's pages file is not there (a fresh clone has no ../shared)."""


class RealBedError(JarvisError):
    """The test bed's pages file is there but cannot be read."""


@dataclass(frozen=True)
class Section:
    path: tuple[str, ...]                         # heading texts from h2 down; () for the lead
    blocks: tuple[tuple[str, object], ...]        # (kind, text or rows)


@dataclass(frozen=True)
class BedPage:
    title: str
    aliases: tuple[str, ...]
    sections: tuple[Section, ...]


@dataclass
class RealBed:
    """Pages by title and every title (own or alias) by its URL key (``dbkey``)."""

    pages: dict[str, BedPage]
    by_key: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # key -> (page title, alias or None)
    mtime: float = 0.0

    def __post_init__(self) -> None:
        self.reindex()

    def reindex(self) -> None:
        """Build by_key again from pages (after a page changed or went)."""
        self.by_key.clear()
        for title in self.pages:
            self.by_key.setdefault(dbkey(title), (title, None))
        for title, page in self.pages.items():
            for alias in page.aliases:
                self.by_key.setdefault(dbkey(alias), (title, alias))  # a title wins over an alias

    @classmethod
    def load(cls, path: str | Path = REALBED_PAGES) -> "RealBed":
        path = Path(path)
        if not path.is_file():
            raise RealBedMissing(f"the real-wiki test bed is not there: {path} (it lives in ../shared/realwiki "
                                 "beside the repository; give another file with --pages)")
        try:
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                data = json.load(fh)
            pages = [_page(item) for item in data]
        except (OSError, EOFError, ValueError, KeyError, TypeError) as exc:
            raise RealBedError(f"cannot read the test bed {path}: {' '.join(str(exc).split())}") from exc
        return cls({page.title: page for page in pages}, mtime=path.stat().st_mtime)

    def lookup(self, key: str) -> tuple[str, str | None] | None:
        """(page title, alias that led there or None) for a URL key, MediaWiki's first-letter
        capitalization tried too; None for an unknown title."""
        found = self.by_key.get(key)
        if found is None and key[:1].islower():
            found = self.by_key.get(key[:1].upper() + key[1:])
        return found


def _page(item: dict) -> BedPage:
    sections = []
    for section in item["sections"]:
        blocks = []
        for kind, value in section["blocks"]:
            if kind not in BLOCK_KINDS:
                raise ValueError(f"unknown block kind {kind!r} in {item['title']!r}")
            blocks.append((kind, value))
        sections.append(Section(tuple(section["path"]), tuple(blocks)))
    return BedPage(title=item["title"], aliases=tuple(item.get("aliases", [])), sections=tuple(sections))
