"""Searching an index directory: player questions in, top pages (with their paragraphs) out.

One long-lived `Searcher` serves many queries (`jarvis serve`). Before each search it reads the
directory's CURRENT pointer (a tiny file) once and, when a rebuild has swapped in a new generation,
opens that one and closes the old: no restart, and never a half-built index. A caller that needs
more than the hits of one search (the answer cache's key, the sites, the glossary: the pipeline)
takes a ``snapshot()``: the live generation as CURRENT said once, searched and described without
reading CURRENT again. A question is read for searching once (``IndexSnapshot.query``: spelt, expanded with
the glossary, as words): a caller that needs the spelt or expanded question too (the pipeline reads and
judges it) searches with that ``SearchQuery`` and takes them from it, instead of spelling and expanding again.
"""
from __future__ import annotations

import json
import logging
import os
import pickle
import re
import struct
import threading
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from whoosh import index as whoosh_index
from whoosh import query as whoosh_query
from whoosh.qparser import QueryParser
from whoosh.searching import Searcher as WhooshSearcher

from jarvis.index.coord import coordinate
from jarvis.index.dense import (ENCODER_CARD, ENCODER_NAME, SHIPPED_ENCODER, DenseEncoder, PageVectors,
                                load_passage_encoder)
from jarvis.index.errors import IndexCorruptError, SearchIndexError
from jarvis.index.glossary import Glossary
from jarvis.index.hybrid import HybridSearcher, Ranked
from jarvis.index.layout import USER_GLOSSARY_FILE, Generation, IndexDir
from jarvis.index.priors import asked_page_kinds, names_page, page_kind_weight, question_terms, title_terms
from jarvis.index.profiles import IndexProfile, get_profile
from jarvis.index.settings import RetrievalSettings
from jarvis.index.sparse import FOLDER as PASSAGES_FOLDER
from jarvis.index.sparse import SparseIndex
from jarvis.index.spelling import Speller, Vocabulary
from jarvis.index.vectors import PassageVectors

log = logging.getLogger(__name__)

MAX_QUERY_WORDS = 64                       # a chat line is short; this bounds the cost of a pasted essay
_WORD_RE = re.compile(r"\w+(?:\.\w+)*")    # the words Whoosh's RegexTokenizer would find
_OPEN_ATTEMPTS = 3                         # a rebuild may swap CURRENT again while we open
# What Whoosh raises reading damaged or vanished files (the .seg files are pickles and structs).
_BROKEN_FILE_ERRORS = (OSError, EOFError, ValueError, struct.error, pickle.UnpicklingError)
_PAGE_CACHE = 512                          # pages' stored fields kept parsed, per open generation


@dataclass
class Hit:
    """One page of the results, with everything the reader needs."""

    title: str
    score: float
    url: str
    aliases: list[str] = field(default_factory=list)
    paragraphs: list[str] = field(default_factory=list)
    sections: list[list[str]] = field(default_factory=list)   # heading path of each paragraph
    page_kind: str = "article"                                # crawler.corpus.PAGE_KINDS
    site: str = ""                                            # the wiki's name, or "server guide"
    lexical_rank: int | None = None     # 0-based rank in the BM25F ranking (None: not in its top)
    dense_rank: int | None = None       # 0-based rank by page-vector similarity (None: not computed / not top)


@dataclass(frozen=True)
class SearchQuery:
    """A question as one generation searches it, read once (``IndexSnapshot.query``)."""

    question: str       # as given
    spelt: str          # chat spellings spelt out, typos put right (spelling.py); the question when nothing to do
    expanded: str       # spelt, with the wiki's words for the players' words it uses (glossary.py)
    words: str          # expanded, as plain words for the query parser (question_words)


@dataclass(frozen=True)
class PassageHit:
    """One passage of the results (a paragraph, list item or table row of a page), with its page and ranks."""

    title: str
    text: str
    index: int                              # its position in its page (the page's paragraph number)
    section: tuple[str, ...] = ()           # heading path in its page; () for the lead
    score: float = 0.0                      # the fused score (hybrid.py)
    url: str = ""
    site: str = ""
    page_kind: str = "article"
    page_rank: int = 0                      # its page's rank among the results' pages (0: the best page)
    page_score: float = 0.0                 # its page's score: its best passage's
    key: str = ""                           # its page's key (sources.page_key)
    lexical_rank: int | None = None
    dense_rank: int | None = None
    lexical: float = 0.0                    # BM25F score
    cosine: float | None = None             # similarity to the question (None: not computed)


def question_words(question: str) -> str:
    """A question as plain words: every query-syntax character is dropped.

    "how do i craft a bed (wood)?" -> "how do i craft a bed wood"; `title:creeper` -> "title creeper".
    The parser has no syntax plugins either (profiles.py); this keeps odd Unicode and
    punctuation from ever reaching it.
    """
    text = unicodedata.normalize("NFKC", question)
    return " ".join(_WORD_RE.findall(text)[:MAX_QUERY_WORDS])


@dataclass
class _OpenGeneration:
    """A generation opened for searching, with the profile it was built with."""

    pointer: str                # CURRENT's content when it was opened
    generation: Generation
    profile: IndexProfile
    searcher: WhooshSearcher
    parser: QueryParser

    @classmethod
    def open(cls, pointer: str, generation: Generation, index_dir: Path) -> "_OpenGeneration":
        try:
            profile = get_profile(generation.meta.profile)
        except SearchIndexError:
            raise IndexCorruptError(index_dir, f"unknown profile {generation.meta.profile!r}") from None
        try:
            ix = whoosh_index.open_dir(str(generation.path), readonly=True)
            searcher = ix.searcher(weighting=profile.weighting())
        except Exception as exc:  # noqa: BLE001 - whoosh has many ways to say "broken files"
            raise IndexCorruptError(index_dir, f"{generation.name}: {type(exc).__name__}: {exc}") from exc
        missing = {"title", "paragraphs", *profile.search_fields} - set(ix.schema.names())
        if missing:
            searcher.close()
            raise IndexCorruptError(index_dir, f"{generation.name} lacks fields {sorted(missing)}")
        vectors = sparse_index = passage_vectors = None
        if profile.passages:
            try:
                sparse_index = SparseIndex.load(generation.path)
                if sparse_index is None:
                    raise ValueError("no passage counts")
                if profile.dense:
                    passage_vectors = PassageVectors.load(generation.path / PASSAGES_FOLDER)
            except (OSError, ValueError, KeyError, RuntimeError) as exc:
                searcher.close()
                raise IndexCorruptError(index_dir, f"{generation.name}: unreadable passages ({exc})") from exc
        elif profile.dense:
            try:
                vectors = PageVectors.load(generation.path)
            except (OSError, ValueError, KeyError) as exc:
                searcher.close()
                raise IndexCorruptError(index_dir, f"{generation.name}: unreadable page vectors ({exc})") from exc
        glossary = Glossary.bundled()
        user_glossary = generation.path / USER_GLOSSARY_FILE
        if user_glossary.is_file():
            glossary = glossary.merged(Glossary.load(user_glossary))
        # Pages are keyed by (site, title); a generation built before sites has titles as keys.
        key_field = "key" if "key" in ix.schema.names() else "title"
        speller = None
        if profile.spelling:
            players_words = [w for entries in glossary.tables.values() for phrase in entries for w in phrase.split()]
            speller = Speller(Vocabulary.load(generation.path), keep=players_words)
        return cls(pointer, generation, profile, searcher, profile.parser(ix.schema), vectors, glossary, key_field,
                   speller, sparse=sparse_index, passage_vectors=passage_vectors)

    vectors: PageVectors | None = None
    glossary: Glossary = field(default_factory=Glossary)   # the bundled players' words + the index's own
    key_field: str = "key"
    speller: Speller | None = None          # the question's typos read against this generation's words
    # docnum -> (key, page kind, title terms), read once per page: the stored fields hold the paragraphs, too big to
    # load again for each of the ~100 candidates of every question (the generation never changes).
    _facts: dict[int, tuple[str, str, tuple[str, ...]]] = field(default_factory=dict, repr=False)
    sparse: SparseIndex | None = None                 # a passage profile's BM25F counts (sparse.py)
    passage_vectors: PassageVectors | None = None     # ... and its passage vectors (vectors.py)
    _hybrid: HybridSearcher | None = field(default=None, repr=False)
    _stored: "OrderedDict[str, dict]" = field(default_factory=OrderedDict, repr=False)   # page key -> stored fields

    @property
    def vector_encoder(self) -> str | None:
        """The id of the encoder the passage vectors were made by (None: none)."""
        return self.passage_vectors.encoder if self.passage_vectors is not None else None

    def hybrid(self, settings: RetrievalSettings) -> HybridSearcher:
        if self._hybrid is None or self._hybrid.settings is not settings:
            self._hybrid = HybridSearcher(self.sparse, self.passage_vectors, settings)
        return self._hybrid

    def spelt(self, question: str, settings: RetrievalSettings) -> str:
        """The question spelt as this generation searches it (see IndexSnapshot.spelt)."""
        if self.speller is None or not settings.spelling:
            return question
        return self.speller.correct(question).text

    def query(self, question: str, settings: RetrievalSettings) -> SearchQuery:
        """The question read for searching this generation: spelt, expanded, as words."""
        spelt = self.spelt(question, settings)
        expanded = self.glossary.expand(spelt)
        return SearchQuery(question, spelt, expanded, question_words(expanded))

    def search(self, words: str, k: int, settings: RetrievalSettings, query_vector=None) -> list[Hit]:
        """Top k pages: the BM25F ranking, fused with the dense one when there are vectors and a query vector;
        for a passage profile, the pages of the best passages."""
        if self.profile.passages:
            hybrid = self.hybrid(settings)
            ranked = hybrid.run(words, query_vector, max(settings.page_passages, 10 * k))
            best = {}
            for item in ranked:
                best.setdefault(int(self.sparse.page_of[item.row]), item)
            return [self._stored_hit(self.sparse.pages[page].key, score, best[page].lexical_rank, best[page].dense_rank)
                    for page, score in hybrid.rank_pages(ranked)[:k]]
        lexical = self._lexical(words, settings.depth if self.profile.dense else k)
        if lexical is None:
            return []     # nothing left after stop words: no pages, not an error (the dense side included)
        if not self.profile.dense:
            return [self._hit(docnum, score, rank, None) for rank, (docnum, score) in enumerate(lexical)]
        fused: dict[str, dict] = {}
        best = lexical[0][1] if lexical else 0.0
        for rank, (docnum, score) in enumerate(lexical):
            entry = fused.setdefault(self._page_facts(docnum)[0], {"docnum": docnum})
            entry["lexical"] = (rank, score / best if best > 0 else 0.0)
        if self.vectors is not None and query_vector is not None:
            nearest = self.vectors.nearest(query_vector, settings.depth)
            if nearest:
                high, low = nearest[0][1], nearest[-1][1]
                for rank, (key, cosine) in enumerate(nearest):
                    if key not in fused and cosine < settings.dense_only_min_cosine:
                        continue
                    fused.setdefault(key, {})["dense"] = (rank, (cosine - low) / (high - low) if high > low else 1.0)
        asked, terms = asked_page_kinds(words), question_terms(words)
        scored = []
        for key, entry in fused.items():
            docnum = entry.get("docnum")
            if docnum is None:
                docnum = self.searcher.document_number(**{self.key_field: key})
                if docnum is None:
                    continue   # vectors of a page no longer indexed: cannot happen in a finished generation
            score = sum(weight * settings.fused_part(*entry[side])
                        for side, weight in (("lexical", settings.lexical_weight), ("dense", settings.dense_weight))
                        if side in entry)
            _, page_kind, title_words = self._page_facts(docnum)
            score *= page_kind_weight(page_kind, asked, settings.page_kind_prior, names_page(terms, title_words))
            scored.append((score, docnum, entry))
        scored.sort(key=lambda item: -item[0])
        return [self._hit(docnum, score, entry.get("lexical", (None,))[0], entry.get("dense", (None,))[0])
                for score, docnum, entry in scored[:k]]

    def passages(self, words: str, k: int, settings: RetrievalSettings, query_vector=None) -> list[PassageHit]:
        """The k best passages (a passage profile's), best first, each with its page's rank among their pages."""
        hybrid = self.hybrid(settings)
        ranked = hybrid.run(words, query_vector, k)
        page_rank = {page: (rank, score) for rank, (page, score) in enumerate(hybrid.rank_pages(ranked))}
        return [self._passage_hit(item, *page_rank[int(self.sparse.page_of[item.row])]) for item in ranked]

    def _passage_hit(self, item: Ranked, page_rank: int, page_score: float) -> PassageHit:
        facts = self.sparse.pages[int(self.sparse.page_of[item.row])]
        stored = self._stored_page(facts.key)
        index = int(self.sparse.para_of[item.row])
        paragraphs, sections = stored["paragraphs"], stored["sections"]
        return PassageHit(facts.title, paragraphs[index], index, tuple(sections[index]) if index < len(sections) else (),
                          item.score, stored["url"], facts.site, facts.kind, page_rank, page_score, facts.key,
                          item.lexical_rank, item.dense_rank, item.lexical, item.cosine)

    def _stored_page(self, key: str) -> dict:
        """A page's stored fields, parsed (paragraphs, sections and aliases as lists), kept for the next questions."""
        stored = self._stored.get(key)
        if stored is None:
            docnum = self.searcher.document_number(**{self.key_field: key})
            if docnum is None:
                raise IndexCorruptError(Path(self.generation.path), f"page {key} has passages but is not stored")
            fields_ = dict(self.searcher.stored_fields(docnum))
            fields_["paragraphs"] = json.loads(fields_.get("paragraphs") or "[]")
            fields_["sections"] = json.loads(fields_.get("sections") or "[]") or [[] for _ in fields_["paragraphs"]]
            fields_["aliases"] = json.loads(fields_.get("aliases") or "[]")
            stored = self._stored[key] = fields_
            while len(self._stored) > _PAGE_CACHE:
                self._stored.popitem(last=False)
        else:
            self._stored.move_to_end(key)
        return stored

    def _stored_hit(self, key: str, score: float, lexical_rank: int | None, dense_rank: int | None) -> Hit:
        stored = self._stored_page(key)
        return Hit(title=stored["title"], score=score, url=stored.get("url", ""), aliases=list(stored["aliases"]),
                   paragraphs=list(stored["paragraphs"]), sections=[list(path) for path in stored["sections"]],
                   page_kind=stored.get("kind") or "article", site=stored.get("site") or "", lexical_rank=lexical_rank,
                   dense_rank=dense_rank)

    def _page_facts(self, docnum: int) -> tuple[str, str, tuple[str, ...]]:
        facts = self._facts.get(docnum)
        if facts is None:
            stored = self.searcher.stored_fields(docnum)
            facts = self._facts[docnum] = (stored.get(self.key_field) or stored["title"], stored.get("kind") or "article",
                                           title_terms(stored["title"]))
        return facts

    def _lexical(self, words: str, limit: int) -> list[tuple[int, float]] | None:
        """(docnum, BM25F score) of the best pages; None when the question has no searchable word."""
        query = self.parser.parse(words)
        if query is whoosh_query.NullQuery:
            return None
        query = coordinate(query, self.searcher.reader())   # the OR bonus, see coord.py
        results = self.searcher.search(query, limit=limit)
        return [(hit.docnum, float(hit.score)) for hit in results]

    def _hit(self, docnum: int, score: float, lexical_rank: int | None, dense_rank: int | None) -> Hit:
        stored = self.searcher.stored_fields(docnum)
        paragraphs = json.loads(stored.get("paragraphs") or "[]")
        sections = json.loads(stored.get("sections") or "[]") or [[] for _ in paragraphs]
        return Hit(title=stored["title"], score=score, url=stored.get("url", ""),
                   aliases=json.loads(stored.get("aliases") or "[]"), paragraphs=paragraphs, sections=sections,
                   page_kind=stored.get("kind") or "article", site=stored.get("site") or "", lexical_rank=lexical_rank,
                   dense_rank=dense_rank)

    def close(self) -> None:
        self.searcher.close()


@dataclass(frozen=True)
class IndexSnapshot:
    """The live generation of an index as CURRENT said once: what one question needs of the index
    (``Searcher.snapshot()``). Its searches go to that generation while it is open; once a later
    search has switched the searcher to a newer one, to the live one."""

    version: str                # the generation's version: part of the answer cache's key
    sites: tuple[str, ...]      # its wikis' names and "server guide", as built; () when unknown
    glossary: Glossary          # the players' words it searches with
    profile: str
    _searcher: "Searcher" = field(repr=False, compare=False)
    _generation: _OpenGeneration = field(repr=False, compare=False)

    def search(self, query: str | SearchQuery, k: int = 3) -> list[Hit]:
        """The top `k` pages for a player's question (or one read already, ``query``), best first; [] when
        nothing matches."""
        return self._searcher._search(query, k, self._generation)

    def passages(self, query: str | SearchQuery, k: int = 30) -> list[PassageHit]:
        """The `k` best passages for a player's question (or one read already, ``query``: a passage profile's), best
        first; [] when nothing matches. The retrieval models read the question as ``query(question).words``."""
        return self._searcher._passages(query, k, self._generation)

    def page(self, key: str) -> Hit:
        """A page of this generation by its key (``PassageHit.key``), with all its paragraphs."""
        with self._searcher._lock:
            return self._generation._stored_hit(key, 0.0, None, None)

    @property
    def has_passages(self) -> bool:
        return self._generation.profile.passages

    def spelt(self, question: str) -> str:
        """The question's words as this generation searches them: chat spellings spelt out, typos put right
        against its vocabulary (spelling.py); the question itself when its profile keeps no vocabulary or the
        searcher's settings turn spelling off."""
        return self._generation.spelt(question, self._searcher.settings)

    def query(self, question: str) -> SearchQuery:
        """The question read for searching this generation, once: spelt, expanded, as words (``search`` takes it)."""
        return self._generation.query(question, self._searcher.settings)


class Searcher:
    """Top pages for questions, from the live generation of an index directory.

    Use as a context manager. Thread-safe (one query at a time). Opening raises a user error
    (IndexNotFoundError / IndexCorruptError) when the directory has no usable index.
    """

    def __init__(self, index_dir: str | os.PathLike, settings: RetrievalSettings | None = None,
                 encoder: DenseEncoder | None = None) -> None:
        self.index_dir = Path(index_dir)
        self.settings = settings or RetrievalSettings()
        # A caller's encoder (shared with a reader) serves the kind of vectors it was made for: all-MiniLM-L6-v2's
        # page vectors, or the passage vectors its id matches.
        self._encoders: dict[str, DenseEncoder | None] = {}
        self._given = encoder             # also serves any passage vectors recorded as made by it
        if encoder is not None:
            base = encoder.name == ENCODER_NAME and not encoder.digest
            if base:
                self._encoders["pages"] = encoder
            if not base or (not self.settings.encoder_model and not (SHIPPED_ENCODER / ENCODER_CARD).is_file()):
                self._encoders["passages"] = encoder
        self._mismatch_said: tuple | None = None
        self._layout = IndexDir(self.index_dir)
        self._lock = threading.Lock()
        self._open: _OpenGeneration | None = None
        with self._lock:
            self._refresh()

    def warm_up(self) -> None:
        """Load the question encoder and make the passage scores now (a dense index needs them), not at the first
        question."""
        with self._lock:
            current = self._refresh()
            if current.profile.dense:
                self._dense_encoder(current.profile.passages)
            if current.sparse is not None:
                current.sparse.warm_up()

    def _dense_encoder(self, passages: bool = False) -> DenseEncoder | None:
        """The question encoder: the passage encoder for a passage profile's vectors, all-MiniLM-L6-v2 for page
        vectors; None (said once) when it cannot be loaded."""
        kind = "passages" if passages else "pages"
        if kind not in self._encoders:
            try:
                if passages:
                    self._encoders[kind] = load_passage_encoder(self.settings.encoder_model or None,
                                                                self.settings.encoder_cache or None)
                else:
                    self._encoders[kind] = DenseEncoder.load(self.settings.encoder_cache or None)
            except Exception as exc:  # noqa: BLE001 - no encoder: lexical ranking alone, said once
                log.warning("%s; searching with BM25F alone", exc)
                self._encoders[kind] = None
        return self._encoders[kind]

    @property
    def glossary(self) -> Glossary:
        """The players' words this index searches with (the bundled glossary and the index's own)."""
        with self._lock:
            return self._refresh().glossary

    @property
    def encoder(self) -> DenseEncoder | None:
        """The question encoder in use (shared with readers that embed text too), once loaded."""
        with self._lock:
            kind = "passages" if self._refresh().profile.passages else "pages"
        return self._encoders.get(kind)

    # ------------------------------------------------------------------ public

    def search(self, query: str, k: int = 3) -> list[Hit]:
        """The top `k` pages for a player's question, best first; [] when nothing matches."""
        return self._search(query, k, None)

    def passages(self, query: str | SearchQuery, k: int = 30) -> list[PassageHit]:
        """The `k` best passages for a player's question, best first (an index built with a passage profile)."""
        return self._passages(query, k, None)

    def snapshot(self) -> IndexSnapshot:
        """The live generation, CURRENT read once: its version, sites and glossary, and its search."""
        with self._lock:
            current = self._refresh()
            return IndexSnapshot(current.generation.version, tuple(current.generation.meta.sites), current.glossary,
                                 current.profile.name, self, current)

    def _search(self, query: str | SearchQuery, k: int, pinned: _OpenGeneration | None) -> list[Hit]:
        """Search ``pinned`` while it is the open generation (no CURRENT read), else the live one. A question
        read for ``pinned`` is read again for the live one when a rebuild has switched them (its words differ)."""
        return self._run(query, k, pinned, "search")

    def _passages(self, query: str | SearchQuery, k: int, pinned: _OpenGeneration | None) -> list[PassageHit]:
        return self._run(query, k, pinned, "passages")

    def _run(self, query: str | SearchQuery, k: int, pinned: _OpenGeneration | None, what: str) -> list:
        if k < 1:
            raise SearchIndexError(f"k must be at least 1 (got {k})")
        with self._lock:
            current = pinned if pinned is not None and pinned is self._open else self._refresh()
            if what == "passages" and not current.profile.passages:
                raise SearchIndexError(f"the index at {self.index_dir} has no passages (profile {current.profile.name}): "
                                       "rebuild it with a passage profile", setting="profile")
            if not isinstance(query, SearchQuery) or current is not pinned:
                query = current.query(query.question if isinstance(query, SearchQuery) else query, self.settings)
            words = query.words
            if not words:
                return []
            query_vector = self._query_vector(current, words)
            try:
                return getattr(current, what)(words, k, self.settings, query_vector)
            except _BROKEN_FILE_ERRORS as exc:
                # Its files were removed under us (a rebuild on a platform that deletes open
                # files' names for good): the next generation is there; if not, it is corrupt.
                if self._layout.pointer() == current.pointer:
                    raise IndexCorruptError(self.index_dir, f"{type(exc).__name__}: {exc}") from exc
                return getattr(self._refresh(), what)(words, k, self.settings, query_vector)

    def _query_vector(self, current: _OpenGeneration, words: str):
        """The question's vector for the generation's dense side (None: no vectors, or no encoder for them)."""
        if not current.profile.dense or (current.vectors is None and current.passage_vectors is None):
            return None
        made_by = current.vector_encoder
        given = self._given
        encoder = given if given is not None and made_by is not None and made_by == getattr(given, "id", None) \
            else self._dense_encoder(current.profile.passages)
        if encoder is None:
            return None
        if made_by is not None and made_by != encoder.id:
            if self._mismatch_said != (made_by, encoder.id):
                log.warning("the index at %s was built with the passage encoder %s, not %s: searching with BM25F alone "
                            "(rebuild it with `index` to use %s)", self.index_dir, made_by, encoder.id, encoder.id)
                self._mismatch_said = (made_by, encoder.id)
            return None
        return encoder.embed([words])[0]

    # Each property reads CURRENT once; a caller that needs several of them for one question takes a snapshot().

    @property
    def version(self) -> str:
        """Changes whenever the live index changes (the pipeline's answer cache keys on its snapshot's)."""
        with self._lock:
            return self._refresh().generation.version

    @property
    def profile(self) -> str:
        with self._lock:
            return self._refresh().profile.name

    @property
    def sites(self) -> list[str]:
        """The sites the index holds (its wikis' names, and "server guide"), as built; [] when unknown."""
        with self._lock:
            return list(self._refresh().generation.meta.sites)

    @property
    def page_count(self) -> int:
        with self._lock:
            return self._refresh().searcher.doc_count()

    def close(self) -> None:
        with self._lock:
            if self._open is not None:
                self._open.close()
                self._open = None

    def __enter__(self) -> "Searcher":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ internals

    def _refresh(self) -> _OpenGeneration:
        """The open live generation, switching to a newer one if a rebuild published it."""
        if self._open is not None and self._layout.pointer() == self._open.pointer:
            return self._open
        try:
            fresh = self._open_live()
        except SearchIndexError as exc:
            if self._open is None:
                raise
            # A broken rebuild or a deleted pointer must not take a running bot down.
            log.warning("keeping index %s open: %s", self._open.generation.name, exc)
            return self._open
        if self._open is not None:
            log.info("index %s: switched from %s to %s", self.index_dir, self._open.generation.name,
                     fresh.generation.name)
            self._open.close()
        self._open = fresh
        return fresh

    def _open_live(self) -> _OpenGeneration:
        for attempt in range(_OPEN_ATTEMPTS):
            pointer = self._layout.pointer()
            generation = self._layout.live(pointer)
            try:
                return _OpenGeneration.open(pointer or "", generation, self.index_dir)
            except IndexCorruptError:
                # Retired and removed between reading CURRENT and opening it? Then CURRENT moved on.
                if attempt + 1 == _OPEN_ATTEMPTS or self._layout.pointer() == pointer:
                    raise
        raise AssertionError("unreachable")
