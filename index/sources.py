"""What an index is built from: one or more wiki corpora and, optionally, the server's own guide.

Every page of an index belongs to a *site*: the wiki it comes from, or the server guide. A corpus
names its wiki on its pages (the crawl records MediaWiki's ``sitename``); a name given with the
source wins over that; a corpus that names none (an older crawl, a corpus made by hand) is named
after its pages' host ("minecraft.wiki"), else its file name. Site names are compared
case-insensitively: two corpora that name the same wiki are a clash, an error before anything is
built (their pages could not be told apart in a reply), and so is a wiki named like the guide.
Pages with the same title on two sites stay two pages: an index keys its pages by (site, title).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence, Union
from urllib.parse import urlsplit

from jarvis.crawler.corpus import CorpusError, Page, iter_corpus
from jarvis.crawler.guide import GUIDE_SITE, check_docs_url, guide_files, read_guide
from jarvis.index.layout import IndexDir

log = logging.getLogger(__name__)


class SiteClashError(CorpusError):
    """Two sources of one index name the same site (a user error)."""

    def __init__(self, message: str, path: Path | None = None) -> None:
        super().__init__(message)
        self.path = path      # the corpus whose name clashes (the CLI says how to rename it)


@dataclass(frozen=True)
class CorpusSource:
    """A corpus JSONL file (crawler.corpus), and the name of its wiki if the caller gives one."""

    path: Path
    site: str = ""            # "": the name the corpus records, else its host or file name


@dataclass(frozen=True)
class GuideSource:
    """A directory of Markdown files: the server's own guide (crawler.guide), and the guide's web address
    if it has one (``docs_url``: a page's URL is docs_url + its name, unless its front matter gives one)."""

    path: Path
    docs_url: str = ""


Source = Union[CorpusSource, GuideSource]


@dataclass
class LoadedCorpus:
    path: Path                 # the first source's path (what a single-corpus index was built from)
    sha256: str                # of the sources' bytes: ensure_index rebuilds when it changes
    pages: list[Page]          # unique (site, title), source order; every page's site set
    sites: list[str]           # the sites, in source order
    sources: list[dict]        # what jarvis-index.json records: [{"corpus": path, "site": name} | {"docs": path[, "docs_url"]}]


def as_sources(sources: str | os.PathLike | Source | Sequence[str | os.PathLike | Source]) -> list[Source]:
    """A corpus path, a source, or a list of them, as a list of sources."""
    if isinstance(sources, (str, os.PathLike, CorpusSource, GuideSource)):
        sources = [sources]
    return [s if isinstance(s, (CorpusSource, GuideSource)) else CorpusSource(Path(s)) for s in sources]


def page_key(page: Page) -> str:
    """A page's identity in an index: its site and title (a JSON pair: unambiguous, readable)."""
    return json.dumps([page.site, page.title], ensure_ascii=False)


def load_sources(sources: str | os.PathLike | Source | Sequence[str | os.PathLike | Source]) -> LoadedCorpus:
    """Read and check every source (missing, malformed, empty, clashing: CorpusError, a user error)."""
    sources = as_sources(sources)
    if not sources:
        raise CorpusError("nothing to index: give a corpus or a guide directory")
    guides = [s for s in sources if isinstance(s, GuideSource)]
    if len(guides) > 1:
        raise CorpusError(f"one guide directory per index, got {len(guides)}")
    pages: list[Page] = []
    digests: list[str] = []
    owner: dict[str, tuple[str, Path]] = {GUIDE_SITE.casefold(): (GUIDE_SITE, guides[0].path)} if guides else {}
    seen_paths: dict[Path, Path] = {}
    recorded: list[dict] = []
    for source in sources:
        resolved = source.path.resolve()
        if resolved in seen_paths:
            raise CorpusError(f"{source.path} is given twice")
        seen_paths[resolved] = source.path
        if isinstance(source, GuideSource):
            guide = read_guide(source.path, source.docs_url)
            if not guide:
                raise CorpusError(f"guide directory {source.path} has no Markdown page with text")
            pages += guide
            digests.append(_guide_sha256(source.path, source.docs_url))
            recorded.append({"docs": str(resolved), **({"docs_url": source.docs_url} if source.docs_url else {})})
            continue
        corpus_pages, sha256 = load_corpus_pages(source.path), file_sha256(source.path)
        given = " ".join(source.site.split())
        fallback = given or default_site(source.path, corpus_pages)
        named = [replace(page, site=given or page.site or fallback) for page in corpus_pages]
        for site in dict.fromkeys(page.site for page in named):
            _check_site(site, source.path, owner)
        pages += named
        digests.append(sha256 if not given else hashlib.sha256(f"{sha256} {given}".encode()).hexdigest())
        recorded.append({"corpus": str(resolved), "site": given})
    if len(digests) == 1 and isinstance(sources[0], CorpusSource) and not sources[0].site:
        sha256 = digests[0]       # one corpus: its file's hash, as before (ensure_index compares it)
    else:
        sha256 = hashlib.sha256(" ".join(digests).encode()).hexdigest()
    sites = list(dict.fromkeys(page.site for page in pages))
    return LoadedCorpus(path=sources[0].path, sha256=sha256, pages=pages, sites=sites, sources=recorded)


def recorded_sources(recorded: list[dict]) -> list[Source]:
    """The sources a generation's metadata records, as sources again."""
    sources: list[Source] = []
    for entry in recorded:
        if "docs" in entry:
            sources.append(GuideSource(Path(entry["docs"]), entry.get("docs_url", "")))
        elif "corpus" in entry:
            sources.append(CorpusSource(Path(entry["corpus"]), entry.get("site", "")))
    return sources


def extended_sources(index_dir: str | os.PathLike, corpus: str | os.PathLike) -> list[Source] | None:
    """The sources the live index records when it was built from ``corpus`` and more (a guide added to the
    default index, say), all still there; None otherwise. ``ensure_index`` keeps such an index, and rebuilds it
    from all of them, not from the corpus alone (which would drop what was added)."""
    live = IndexDir(index_dir).live_or_none()
    recorded = recorded_sources(live.meta.sources) if live is not None else []
    wanted = Path(corpus).resolve()
    if len(recorded) < 2 or not any(isinstance(s, CorpusSource) and s.path == wanted for s in recorded):
        return None
    if not all(s.path.is_dir() if isinstance(s, GuideSource) else s.path.is_file() for s in recorded):
        return None
    return recorded


def sources_sha256(sources: Sequence[Source]) -> str:
    """What ``load_sources(sources).sha256`` would be, from the files' bytes alone (no page is parsed)."""
    digests = []
    for source in sources:
        if isinstance(source, GuideSource):
            digests.append(_guide_sha256(source.path, check_docs_url(source.docs_url)))
            continue
        sha256, given = file_sha256(source.path), " ".join(source.site.split())
        digests.append(sha256 if not given else hashlib.sha256(f"{sha256} {given}".encode()).hexdigest())
    if len(digests) == 1 and isinstance(sources[0], CorpusSource) and not sources[0].site:
        return digests[0]
    return hashlib.sha256(" ".join(digests).encode()).hexdigest()


def sources_with(index_dir: str | os.PathLike, corpus: str | os.PathLike) -> list[Source]:
    """What to rebuild an index from after its corpus was crawled again: every source the live index
    records when that corpus is one of them (the other wikis and the guide stay), else the corpus alone."""
    live = IndexDir(index_dir).live_or_none()
    recorded = recorded_sources(live.meta.sources) if live is not None else []
    wanted = Path(corpus).resolve()
    if any(isinstance(s, CorpusSource) and s.path == wanted for s in recorded):
        return recorded
    return [CorpusSource(Path(corpus))]


def load_corpus_pages(path: str | os.PathLike) -> list[Page]:
    """The pages of a corpus file, unique titles, corpus order (a CorpusError when there are none)."""
    path = Path(path)
    if path.is_dir():
        raise CorpusError(f"{path} is a directory, not a corpus JSONL file")
    pages: dict[str, Page] = {}
    for page in iter_corpus(path):
        title = page.title.strip()
        if not title:
            log.warning("%s: skipping a page without a title (%s)", path, page.url)
        elif title in pages:
            log.warning("%s: duplicate title %r, keeping the first", path, title)
        else:
            page.title = title
            pages[title] = page
    if not pages:
        raise CorpusError(f"corpus {path} has no pages")
    return list(pages.values())


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def default_site(path: Path, pages: list[Page]) -> str:
    """The name of a wiki whose corpus records none: its pages' host, else the file's name."""
    for page in pages:
        host = urlsplit(page.url).netloc
        if host:
            return host
    return path.stem


def _check_site(site: str, path: Path, owner: dict[str, tuple[str, Path]]) -> None:
    if not site.strip() or "\n" in site:
        raise CorpusError(f"{path}: {site!r} is not a site name")
    other = owner.get(site.casefold())
    if other is not None and other[1] != path:
        name, where = other
        if name.casefold() == GUIDE_SITE.casefold():
            raise SiteClashError(f"{path} names its wiki {site!r}, the name of the server guide; "
                                 "give it another site name", path)
        raise SiteClashError(f"{path} names its wiki {site!r}, as {where} does; give one of them another "
                             "site name", path)
    owner[site.casefold()] = (site, path)


def _guide_sha256(directory: Path, docs_url: str = "") -> str:
    digest = hashlib.sha256(docs_url.encode("utf-8") + b"\0" if docs_url else b"")
    for path in guide_files(directory):
        digest.update(path.relative_to(directory).as_posix().encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()
