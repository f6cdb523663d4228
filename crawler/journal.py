"""What a crawl remembers on disk, beside the corpus file it writes.

- ``FILE.journal``: the checkpoint of a crawl in progress. Append-only JSONL: a header line, then
  one line per fetched URL (``FetchRecord``, with the links it added to the frontier), fsync'd in
  batches. A resumed crawl (crawler/resume.py) replays it, so no finished page is fetched again and the frontier comes
  back as it was; a torn last line (kill -9 mid-write) is ignored. Deleted once the corpus is written.
- ``FILE.state.json.gz``: what the last finished crawl saw: every URL it knew (the next crawl
  starts from all of them) and every page's ``Document`` without its paragraphs (those are in the
  corpus): ETag/Last-Modified for conditional requests, and the title and verdict that a 304
  lets the next crawl reuse without the body. After a crawl through the MediaWiki API, also
  where its api.php is and the wiki's clock when the crawl began: an update (crawler/update.py) asks the API for
  the changes since then.
"""
from __future__ import annotations

import gzip
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

JOURNAL_VERSION = 1
STATE_VERSION = 2


def journal_path(out: Path) -> Path:
    return out.with_name(out.name + ".journal")


def state_path(out: Path) -> Path:
    return out.with_name(out.name + ".state.json.gz")


@dataclass
class Document:
    """What one HTML response said: the part of a fetch that a 304 lets the next crawl reuse."""

    url: str                     # where the body came from (after HTTP redirects)
    title: str
    canonical_url: str
    skip: str | None             # why it is no article to store, None if it is one
    sha1: str = ""
    paragraphs: list[str] = field(default_factory=list)  # empty when an earlier record of the page has them
    redirected_from: list[str] = field(default_factory=list)
    etag: str | None = None
    last_modified: str | None = None
    sections: list[list[str]] = field(default_factory=list)  # section path of each paragraph, with them
    page_kind: str = "article"                               # crawler.page_kinds (the JSON key is "kind")
    categories: list[str] = field(default_factory=list)

    def to_json(self, with_paragraphs: bool = True) -> dict:
        data = {"url": self.url, "title": self.title, "canonical_url": self.canonical_url, "skip": self.skip,
                "sha1": self.sha1, "redirected_from": self.redirected_from,
                "etag": self.etag, "last_modified": self.last_modified, "kind": self.page_kind,
                "categories": self.categories}
        if with_paragraphs and self.paragraphs:
            data["paragraphs"] = self.paragraphs
            data["sections"] = self.sections
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Document":
        return cls(url=data["url"], title=data["title"], canonical_url=data["canonical_url"], skip=data["skip"],
                   sha1=data.get("sha1", ""), paragraphs=list(data.get("paragraphs", [])),
                   redirected_from=list(data.get("redirected_from", [])),
                   etag=data.get("etag"), last_modified=data.get("last_modified"),
                   sections=[list(path) for path in data.get("sections", [])], page_kind=data.get("kind", "article"),
                   categories=list(data.get("categories", [])))


@dataclass
class FetchRecord:
    """The outcome of visiting one URL: a document, or why there is none."""

    url: str                                     # as queued
    skip: str | None                             # fetch error, filter verdict or "redirect"; None: an article
    document: Document | None = None
    redirects: list[str] = field(default_factory=list)  # URLs that HTTP-redirected, in order
    redirect_to: str | None = None               # an HTTP redirect to a URL the crawl had already
    not_modified: bool = False                   # reused from the last crawl after a 304
    links: list[str] = field(default_factory=list)  # links to follow; journaled: only those new to the crawl

    def to_json(self) -> dict:
        return {"url": self.url, "skip": self.skip, "redirects": self.redirects, "redirect_to": self.redirect_to,
                "not_modified": self.not_modified, "links": self.links,
                "document": self.document.to_json(with_paragraphs=self.skip is None) if self.document else None}

    @classmethod
    def from_json(cls, data: dict) -> "FetchRecord":
        document = data.get("document")
        return cls(url=data["url"], skip=data.get("skip"), redirects=list(data.get("redirects", [])),
                   redirect_to=data.get("redirect_to"), not_modified=bool(data.get("not_modified")),
                   links=list(data.get("links", [])), document=Document.from_json(document) if document else None)


class Journal:
    """Append-only checkpoint of a crawl in progress (see the module docstring)."""

    def __init__(self, path: Path, fsync_every: int = 20) -> None:
        self.path = path
        self.fsync_every = max(1, fsync_every)
        self._file = None
        self._unsynced = 0

    @staticmethod
    def read(path: Path) -> tuple[dict | None, list[FetchRecord], int]:
        """(header, records, length of the valid prefix in bytes); (None, [], 0) without a journal."""
        if not path.is_file():
            return None, [], 0
        header: dict | None = None
        records: list[FetchRecord] = []
        valid = 0
        with path.open("rb") as fh:
            for raw in fh:
                if not raw.endswith(b"\n"):
                    break  # torn last line: the process died while writing it
                try:
                    data = json.loads(raw)
                    if header is None:
                        if data.get("journal") != JOURNAL_VERSION:
                            break
                        header = data
                    else:
                        records.append(FetchRecord.from_json(data))
                except (ValueError, KeyError, TypeError, AttributeError):
                    log.warning("%s: stopping replay at a damaged line", path)
                    break
                valid += len(raw)
        return header, records, valid

    def start(self, header: dict) -> None:
        """A new journal (replacing any old one) that begins with header."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("wb")
        self._write({"journal": JOURNAL_VERSION, **header})
        self.sync()

    def reopen(self, valid_length: int) -> None:
        """Continue an existing journal after its valid prefix (dropping a torn last line)."""
        self._file = self.path.open("r+b")
        self._file.truncate(valid_length)
        self._file.seek(valid_length)

    def append(self, record: FetchRecord) -> None:
        self._write(record.to_json())
        self._unsynced += 1
        if self._unsynced >= self.fsync_every:
            self.sync()

    def sync(self) -> None:
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._unsynced = 0

    def close(self) -> None:
        if self._file is not None:
            self.sync()
            self._file.close()
            self._file = None

    def remove(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)

    def _write(self, data: dict) -> None:
        # flush() on every line: a killed process loses nothing the OS already has.
        self._file.write(json.dumps(data, ensure_ascii=False).encode("utf-8") + b"\n")
        self._file.flush()


@dataclass
class CrawlState:
    """What a finished crawl leaves for the next one (see the module docstring)."""

    urls: list[str] = field(default_factory=list)            # every URL it fetched or queued
    documents: dict[str, Document] = field(default_factory=dict)  # by the URL the body came from
    api: dict | None = None      # an API crawl: {"url", "since" (the wiki's clock), "rcid" (last change seen), "origin", "article_path", "articlepath", "namespaces" (listed)}


def load_state(path: Path) -> CrawlState:
    """The last finished crawl's state; empty when there is none or it is unreadable."""
    if not path.is_file():
        return CrawlState()
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            data = json.load(fh)
        if data.get("version") != STATE_VERSION:
            return CrawlState()
        api = data.get("api")
        return CrawlState(urls=list(data["urls"]),
                          documents={d["url"]: Document.from_json(d) for d in data["documents"]},
                          api=api if isinstance(api, dict) else None)
    except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
        log.warning("ignoring unreadable crawl state %s (%s); fetching everything", path, exc)
        return CrawlState()


def save_state(path: Path, start_url: str, state: CrawlState) -> None:
    """Write the state atomically (temp file + rename)."""
    tmp = path.with_name(path.name + ".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as fh:
        json.dump({"version": STATE_VERSION, "start": start_url, "urls": state.urls, "api": state.api,
                   "documents": [d.to_json(with_paragraphs=False) for d in state.documents.values()]},
                  fh, ensure_ascii=False)
    os.replace(tmp, path)
