"""Passage retrieval: a hybrid searcher handed its sparse and dense searchers (as Pyserini's is).

    hybrid = HybridSearcher(sparse_index, passage_vectors, settings)
    ranked = hybrid.run(words, query_vector, k=30)      # [Ranked(row, score, ...)], best first

Each side gives its best ``settings.depth`` passages; their scores are scaled to [0, 1] (BM25F by the best
score, cosine from the lowest to the highest of the side's list) and added with the settings' weights
(``fusion="scores"``), or ranks are fused (``"rrf"``). A passage's page then weighs in: its kind's prior
(priors.py: tutorials, jokes, removed features... count less unless the question asks for them or names the
page) and the server guide's. A passage the lexical side did not find joins from the dense side only when it is
at least ``dense_only_min_cosine`` similar to the question. Pages rank by their best passage (``rank_pages``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from jarvis.index.priors import asked_page_kinds, names_page, page_kind_weight, question_terms, title_terms
from jarvis.index.settings import RetrievalSettings
from jarvis.index.sparse import SparseIndex
from jarvis.index.terms import Terms


@dataclass(frozen=True)
class Ranked:
    """One passage of a fused ranking: its row in the generation's passage table and how it ranked."""

    row: int
    score: float                     # the fused score, page prior included
    lexical_rank: int | None         # 0-based rank in the BM25F ranking (None: not in its top)
    dense_rank: int | None           # 0-based rank by vector similarity (None: not in its top, or no vectors)
    lexical: float = 0.0             # BM25F score
    cosine: float | None = None      # similarity to the question (None: not computed)


class HybridSearcher:
    """Fuses a SparseIndex's BM25F ranking of passages with a PassageVectors' nearest passages."""

    def __init__(self, sparse, vectors, settings: RetrievalSettings, terms: Terms | None = None) -> None:
        self.sparse: SparseIndex = sparse
        self.vectors = vectors              # vectors.PassageVectors, or None (a lexical profile)
        self.settings = settings
        self.terms = terms or Terms()
        self._title_terms = [title_terms(facts.title) for facts in sparse.pages]

    def run(self, words: str, query_vector=None, k: int = 30) -> list[Ranked]:
        """The ``k`` best passages for a question's words (and its vector, for the dense side), best first."""
        settings = self.settings
        query = self.sparse.query(words, self.terms)
        lexical = self.sparse.best_passages(query, settings.depth)
        dense = self.vectors.nearest(query_vector, settings.depth) if self.vectors is not None and \
            query_vector is not None else []
        entries: dict[int, dict] = {}
        best = lexical[0][1] if lexical else 0.0
        for rank, (row, score) in enumerate(lexical):
            entries[row] = {"lexical": (rank, score / best if best > 0 else 0.0), "bm25": score}
        if dense:
            high, low = dense[0][1], dense[-1][1]
            for rank, (row, cosine) in enumerate(dense):
                if row not in entries and cosine < settings.dense_only_min_cosine:
                    continue
                entry = entries.setdefault(row, {})
                entry["dense"] = (rank, (cosine - low) / (high - low) if high > low else 1.0)
                entry["cosine"] = cosine
        if not entries:
            return []
        asked, terms = asked_page_kinds(words), question_terms(words)
        ranked = []
        for row, entry in entries.items():
            score = sum(weight * settings.fused_part(*entry[side])
                        for side, weight in (("lexical", settings.lexical_weight), ("dense", settings.dense_weight))
                        if side in entry)
            page = int(self.sparse.page_of[row])
            facts = self.sparse.pages[page]
            score *= page_kind_weight(facts.kind, asked, settings.page_kind_prior,
                                      names_page(terms, self._title_terms[page]))
            ranked.append(Ranked(row, score, entry.get("lexical", (None,))[0], entry.get("dense", (None,))[0],
                                 entry.get("bm25", 0.0), entry.get("cosine")))
        ranked.sort(key=lambda r: (-r.score, r.row))
        return ranked[:k]

    def rank_pages(self, ranked: Sequence[Ranked]) -> list[tuple[int, float]]:
        """The pages of a passage ranking, each by its best passage's score: (page row, score), best first."""
        pages: dict[int, float] = {}
        for item in ranked:
            page = int(self.sparse.page_of[item.row])
            if page not in pages:
                pages[page] = item.score
        return sorted(pages.items(), key=lambda pair: -pair[1])

    def query_scores(self, words: str) -> np.ndarray:
        """Every passage's BM25F score (for a caller that needs the whole ranking: training's hard negatives)."""
        return self.sparse.passage_scores(self.sparse.query(words, self.terms))

