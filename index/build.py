"""Build, rebuild and keep up to date an index directory (see layout.py for the atomic swap).

A build never touches the live generation: a full build writes a new one from scratch (in
parallel, with Whoosh's multiprocess writer, its processes started by a fork server:
writer_processes.py); an incremental build copies the live one and
deletes + re-adds only the pages whose fingerprint changed. Either way the result is swapped
in atomically and older generations are cleaned up.
"""
from __future__ import annotations

import hashlib
import logging
import os
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
from tqdm import tqdm
from whoosh import index as whoosh_index

from jarvis.crawler.corpus import CorpusError, Page
from jarvis.index.documents import page_fingerprint, to_document
from jarvis.index.errors import SearchIndexError
from jarvis.index.glossary import Glossary
from jarvis.index.layout import USER_GLOSSARY_FILE, Generation, IndexDir, IndexMeta, write_meta
from jarvis.index.profiles import IndexProfile, get_profile
from jarvis.index.settings import RetrievalSettings
from jarvis.index.sources import Source, extended_sources, file_sha256, load_sources, page_key, sources_sha256
from jarvis.index.spelling import vocabulary_counts, write_vocabulary
from jarvis.index.writer_processes import ParallelWriter

log = logging.getLogger(__name__)

WRITER_LIMIT_MB = 256          # Whoosh's in-memory posting buffer, shared by the writer processes
MIN_PAGES_PER_PROC = 250       # below this, starting processes costs more than it saves
MP_BATCH_SIZE = 50             # pages per job handed to an indexing process
INCREMENTAL_MAX_CHANGED = 0.5  # above this share of changed pages, a full (parallel) build is faster
OPTIMIZE_DELETED_SHARE = 0.2   # merge segments when this share of stored docs is deleted


@dataclass
class IndexStats:
    """What a build did; `summary()` is the line `jarvis index` prints."""

    index_dir: Path
    generation: str
    profile: str
    pages: int                 # pages in the live index now
    indexed: int               # documents written by this build
    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    incremental: bool = False  # True: only changed pages were re-indexed
    seconds: float = 0.0
    procs: int = 1

    @property
    def pages_per_second(self) -> float:
        return self.indexed / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> str:
        where = f"{self.index_dir} ({self.generation}, profile {self.profile})"
        if not self.incremental:
            return (f"built index {where}: {self.pages} pages in {self.seconds:.1f} s "
                    f"({self.pages_per_second:.0f} pages/s, {self.procs} process{'es' if self.procs > 1 else ''})")
        if not self.indexed and not self.deleted:
            return f"index {where} is up to date: {self.pages} pages unchanged"
        return (f"updated index {where}: {self.added} added, {self.updated} updated, {self.deleted} deleted, "
                f"{self.unchanged} unchanged in {self.seconds:.1f} s")


@dataclass
class _Changes:
    """Pages of the corpus against the live generation, by title and fingerprint."""

    added: list[Page] = field(default_factory=list)
    updated: list[Page] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)   # page keys (sources.page_key)
    unchanged: int = 0

    @property
    def count(self) -> int:
        return len(self.added) + len(self.updated) + len(self.deleted)


def build_index(corpus_path: str | os.PathLike | Source | Sequence[str | os.PathLike | Source],
                index_dir: str | os.PathLike, profile: str | IndexProfile = "tuned",
                procs: int | None = None, progress: bool = True, encoder=None,
                glossary: Glossary | None = None, settings: RetrievalSettings | None = None) -> IndexStats:
    """Build or rebuild the index at `index_dir` from a corpus, atomically, re-indexing only what changed.

    ``corpus_path`` is a corpus file or a list of sources (sources.py): several wikis' corpora and the
    server's guide, each page keyed by its site and title; clashing site names are an error before
    anything is built.

    Safe while searchers use the directory: they keep the old generation until their next search.
    A dense profile also writes page vectors (``encoder``: a loaded dense.DenseEncoder, else one is
    loaded here); vectors of unchanged pages are copied from the live generation. ``glossary`` is the
    server's own players' words, searched with over the bundled ones; None keeps the live generation's
    (an update of the pages never drops them), an empty Glossary() removes them. ``settings``: which passage
    encoder a dense passage profile embeds with when no ``encoder`` is given (``RetrievalSettings.encoder_model``,
    its ONNX cache ``encoder_cache``; default: the shipped one).
    """
    profile = get_profile(profile)
    procs = procs if procs is not None else _available_cpus()
    if procs < 1:
        raise SearchIndexError(f"must be at least 1 (got {procs})", setting="procs")
    layout = IndexDir(index_dir)
    layout.check_buildable()
    corpus = load_sources(corpus_path)
    started = time.perf_counter()
    with layout.build_lock():
        live = layout.live_or_none()
        glossary_text = (glossary if glossary is not None else _user_glossary(live)).to_text()
        meta = IndexMeta(profile=profile.name, profile_signature=profile.signature(),
                         corpus_sha256=corpus.sha256, pages=len(corpus.pages),
                         glossary_sha256=hashlib.sha256(glossary_text.encode()).hexdigest() if glossary_text else "",
                         sites=corpus.sites, sources=corpus.sources)
        changes = _diff(corpus.pages, live) if _same_profile(live, profile) else None

        if (live is not None and changes is not None and changes.count == 0
                and live.meta.glossary_sha256 == meta.glossary_sha256
                and _same_encoder(live, profile, settings, encoder)):
            if (live.meta.corpus_sha256, live.meta.sites, live.meta.sources) != (corpus.sha256, corpus.sites,
                                                                                corpus.sources):
                # Same pages, different file bytes or sources named otherwise.
                write_meta(live.path, replace(live.meta, corpus_sha256=corpus.sha256, sites=corpus.sites,
                                              sources=corpus.sources))
            return IndexStats(layout.root, live.name, profile.name, pages=len(corpus.pages), indexed=0,
                              unchanged=changes.unchanged, incremental=True,
                              seconds=time.perf_counter() - started)

        build_path, name = layout.new_build_path()
        try:
            if changes is not None and changes.count <= INCREMENTAL_MAX_CHANGED * len(corpus.pages):
                _copy_and_update(live, build_path, changes, profile, progress)
                stats = IndexStats(layout.root, name, profile.name, pages=len(corpus.pages),
                                   indexed=len(changes.added) + len(changes.updated), added=len(changes.added),
                                   updated=len(changes.updated), deleted=len(changes.deleted),
                                   unchanged=changes.unchanged, incremental=True)
            else:
                used = _build_from_scratch(corpus.pages, build_path, profile, procs, progress)
                stats = IndexStats(layout.root, name, profile.name, pages=len(corpus.pages),
                                   indexed=len(corpus.pages), added=len(corpus.pages), procs=used)
            meta = _write_search_sides(corpus.pages, build_path, live, profile, meta, encoder, settings, progress)
            if profile.spelling:
                write_vocabulary(build_path, vocabulary_counts(corpus.pages))
            _write_user_glossary(build_path, glossary_text)
            write_meta(build_path, meta)
            layout.publish(build_path, name)
        except BaseException:
            shutil.rmtree(build_path, ignore_errors=True)
            raise
        removed = layout.cleanup()
        log.info("published %s in %s; removed %s", name, layout.root, removed or "nothing")
    stats.seconds = time.perf_counter() - started
    return stats


def _write_search_sides(pages, build_path: Path, live, profile: IndexProfile, meta: IndexMeta, encoder,
                        settings: RetrievalSettings | None, progress: bool) -> IndexMeta:
    """Write a profile's passages (their sparse counts, and vectors when dense) or its page vectors; returns
    ``meta`` with the passage encoder's id when passages were embedded (loaded from ``settings`` if not given)."""
    if profile.passages:
        if profile.dense and encoder is None:
            from jarvis.index.dense import load_passage_encoder

            settings = settings or RetrievalSettings()
            encoder = load_passage_encoder(settings.encoder_model or None, settings.encoder_cache or None)
        if profile.dense:
            meta = replace(meta, encoder=encoder.id)
        _write_passages(pages, build_path, live, profile, encoder, progress)
    elif profile.dense:
        _write_vectors(pages, build_path, live, encoder, progress)
    return meta


def ensure_index(corpus_path: str | os.PathLike, index_dir: str | os.PathLike, profile: str | IndexProfile = "tuned",
                 progress: bool = True, encoder=None, settings: RetrievalSettings | None = None) -> Path:
    """The index of a corpus, built on first use and rebuilt when the corpus or profile changed.

    Cheap when up to date (hashes the corpus file, reads a small JSON file).
    """
    profile = get_profile(profile)
    corpus_path, layout = Path(corpus_path), IndexDir(index_dir)
    live = layout.live_or_none()
    if not corpus_path.is_file():
        if live is not None:
            log.warning("corpus %s is missing; using the existing index at %s", corpus_path, layout.root)
            return layout.root
        raise CorpusError(f"corpus file not found: {corpus_path} (needed to build the index at {layout.root})")
    # An index built from the corpus and more (the server's guide added to the default index) stays so.
    extended = extended_sources(layout.root, corpus_path) if live is not None else None
    expected = sources_sha256(extended) if extended else file_sha256(corpus_path)
    if live is not None and _same_profile(live, profile) and live.meta.corpus_sha256 == expected \
            and _same_encoder(live, profile, settings):
        return layout.root
    log.info("building the index at %s from %s (first use or the corpus changed)", layout.root, corpus_path)
    build_index(extended or corpus_path, layout.root, profile=profile, progress=progress, encoder=encoder,
                settings=settings)
    return layout.root


# --------------------------------------------------------------------------- internals


def _user_glossary(live: Generation | None) -> Glossary:
    """The user glossary the live generation was built with (empty for none)."""
    path = live.path / USER_GLOSSARY_FILE if live is not None else None
    return Glossary.load(path) if path is not None and path.is_file() else Glossary()


def _write_user_glossary(build_path: Path, text: str) -> None:
    path = build_path / USER_GLOSSARY_FILE
    if text:
        path.write_text(text, encoding="utf-8")
    elif path.exists():
        path.unlink()   # copied from the live generation, and now removed


def _same_encoder(live: Generation, profile: IndexProfile, settings: RetrievalSettings | None, encoder=None) -> bool:
    """A dense passage generation was embedded by the passage encoder given, else the one the settings name (else it
    is rebuilt: vectors of two encoders are not comparable)."""
    if not (profile.passages and profile.dense):
        return True
    from jarvis.index.dense import passage_encoder_id

    wanted = encoder.id if encoder is not None else passage_encoder_id((settings or RetrievalSettings()).encoder_model
                                                                        or None)
    return not wanted or live.meta.encoder == wanted


def _same_profile(live: Generation | None, profile: IndexProfile) -> bool:
    return (live is not None and live.meta.profile == profile.name
            and live.meta.profile_signature == profile.signature())


def _diff(pages: list[Page], live: Generation) -> _Changes | None:
    """What changed since the live generation; None when it cannot be read (then: full build)."""
    try:
        ix = whoosh_index.open_dir(str(live.path), readonly=True)
        with ix.reader() as reader:
            indexed = {fields.get("key") or fields["title"]: fields["fingerprint"] for _, fields in reader.iter_docs()}
    except Exception as exc:  # noqa: BLE001 - any unreadable live index is simply rebuilt
        log.warning("cannot read the live index %s (%s); building from scratch", live.path, exc)
        return None
    changes = _Changes()
    keys = set()
    for page in pages:
        key = page_key(page)
        keys.add(key)
        old = indexed.get(key)
        if old is None:
            changes.added.append(page)
        elif old != page_fingerprint(page):
            changes.updated.append(page)
        else:
            changes.unchanged += 1
    changes.deleted = [key for key in indexed if key not in keys]
    return changes


def _available_cpus() -> int:
    """The cores this process may run on (a container or taskset may allow fewer than the machine has)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _progress(items: list, progress: bool, desc: str) -> Iterable:
    return tqdm(items, desc=desc, unit="page", disable=not progress, leave=False, dynamic_ncols=True)


def _build_from_scratch(pages: list[Page], build_path: Path, profile: IndexProfile, procs: int,
                        progress: bool) -> int:
    """A new index with every page. Returns the number of indexing processes used."""
    build_path.mkdir(parents=True)
    ix = whoosh_index.create_in(str(build_path), profile.schema())
    procs = min(procs, max(1, len(pages) // MIN_PAGES_PER_PROC))
    if procs > 1:
        # Each process writes its own segment (multisegment: no final merge); searches read them all.
        writer = ParallelWriter(ix, procs=procs, multisegment=True, batchsize=MP_BATCH_SIZE,
                                limitmb=max(32, WRITER_LIMIT_MB // procs))
    else:
        writer = ix.writer(limitmb=WRITER_LIMIT_MB)
    try:
        for page in _progress(pages, progress, f"indexing ({profile.name})"):
            writer.add_document(**to_document(page, profile))
        writer.commit()
    except BaseException:
        # Whoosh's cancel() only flags its worker processes in this process: stop them for real
        # first, so none still writes into the files cancel() removes (else they crash noisily,
        # wait for work forever, or on a busy machine leave a directory cancel() cannot remove).
        for task in getattr(writer, "tasks", []):
            task.terminate()
            task.join(timeout=5)
        try:
            writer.cancel()
        except OSError as exc:   # the build directory is removed by the caller anyway
            log.warning("cleaning up the cancelled index build: %s", exc)
        raise
    return procs


def _write_vectors(pages: list[Page], build_path: Path, live: Generation | None, encoder, progress: bool) -> None:
    """The page vectors of a dense generation (dense.py), reusing the live generation's where pages are unchanged."""
    from jarvis.index.dense import DenseEncoder, PageVectors, build_page_vectors

    previous = None
    if live is not None:
        try:
            previous = PageVectors.load(live.path)
        except (OSError, ValueError, KeyError) as exc:
            log.warning("cannot reuse the vectors of %s (%s); computing all", live.path, exc)
    encoder = encoder or DenseEncoder.load()
    with tqdm(total=len(pages), desc="page vectors", unit="page", disable=not progress, leave=False,
              dynamic_ncols=True) as bar:
        if previous is not None:
            bar.update(sum(previous.vector_of(page_key(p), page_fingerprint(p)) is not None for p in pages))
        vectors = build_page_vectors(pages, page_fingerprint, encoder, previous, progress=bar.update, key=page_key)
    vectors.save(build_path)


def _write_passages(pages: list[Page], build_path: Path, live: Generation | None, profile: IndexProfile, encoder,
                    progress: bool) -> None:
    """A passage generation's lexical counts and, for a dense profile, passage vectors (sparse.py, vectors.py):
    the live generation's are reused for the pages and passages that did not change."""
    from jarvis.index.sparse import FOLDER, SparseIndex

    previous = None
    if live is not None:
        try:
            previous = SparseIndex.load(live.path)
        except (OSError, ValueError, KeyError) as exc:
            log.warning("cannot reuse the passage counts of %s (%s); counting all", live.path, exc)
    with tqdm(total=len(pages), desc="passages", unit="page", disable=not progress, leave=False,
              dynamic_ncols=True) as bar:
        counts = SparseIndex.build(pages, page_fingerprint, page_key, previous=previous, progress=bar.update)
    counts.save(build_path)
    if profile.dense:
        _write_passage_vectors(pages, counts, build_path / FOLDER, live, encoder, progress)


def _write_passage_vectors(pages: list[Page], counts, folder: Path, live: Generation | None, encoder,
                           progress: bool) -> None:
    """Every passage's vector, reusing the live generation's where its text and the encoder are unchanged."""
    from jarvis.index.dense import load_passage_encoder
    from jarvis.index.passages import passage_fingerprint, passage_text
    from jarvis.index.sparse import FOLDER
    from jarvis.index.vectors import PassageVectors

    encoder = encoder or load_passage_encoder()
    texts, fingerprints = [], []
    for page in pages:
        paths = page.sections or [[] for _ in page.paragraphs]
        for text, path in zip(page.paragraphs, paths):
            texts.append(passage_text(page.title, path, text))
            fingerprints.append(passage_fingerprint(page.title, path, text))
    previous = None
    if live is not None:
        try:
            previous = PassageVectors.load(live.path / FOLDER)
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            log.warning("cannot reuse the passage vectors of %s (%s); embedding all", live.path, exc)
    if previous is not None and previous.encoder != encoder.id:
        log.info("the live generation's vectors are %s's; embedding every passage with %s", previous.encoder, encoder.id)
        previous = None
    kept = previous.vectors_of(fingerprints) if previous is not None else {}
    todo = [i for i, fp in enumerate(fingerprints) if fp not in kept]
    matrix = np.zeros((len(texts), encoder.dimensions), dtype=np.float32)
    with tqdm(total=len(texts), initial=len(texts) - len(todo), desc="passage vectors", unit="passage",
              disable=not progress, leave=False, dynamic_ncols=True) as bar:
        for i, fp in enumerate(fingerprints):
            if fp in kept:
                matrix[i] = kept[fp]
        fresh = encoder.embed([texts[i] for i in todo], progress=bar.update, cache=False) if todo else None
        for j, i in enumerate(todo):
            matrix[i] = fresh[j]
    PassageVectors.build(matrix, fingerprints, encoder.id, trained_from=previous if kept else None).save(folder)
    if len(counts.page_of) != len(texts):
        raise AssertionError("passage vectors and passage counts disagree on the passages")


def _copy_and_update(live: Generation, build_path: Path, changes: _Changes, profile: IndexProfile,
                     progress: bool) -> None:
    """A copy of the live generation with changed pages deleted and re-added."""
    shutil.copytree(live.path, build_path)
    ix = whoosh_index.open_dir(str(build_path))
    # Deleted documents linger in their segment until it is merged: merge once they add up.
    with ix.reader() as reader:
        stored, deleted = reader.doc_count_all(), reader.doc_count_all() - reader.doc_count()
    deleted += len(changes.deleted) + len(changes.updated)
    stored += len(changes.updated) + len(changes.added)
    optimize = deleted > OPTIMIZE_DELETED_SHARE * stored
    writer = ix.writer(limitmb=WRITER_LIMIT_MB)
    try:
        for key in [*changes.deleted, *(page_key(page) for page in changes.updated)]:
            writer.delete_by_term("key", key)
        for page in _progress([*changes.updated, *changes.added], progress, f"re-indexing ({profile.name})"):
            writer.add_document(**to_document(page, profile))
        writer.commit(optimize=optimize)
    except BaseException:
        writer.cancel()
        raise
