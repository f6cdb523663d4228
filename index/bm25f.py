"""BM25F, scored eagerly: every (document, term) score computed once at index time, so that a question costs one
sparse column sum instead of a walk over posting lists.

Whoosh's searcher walks the postings of each query term in Python: over the real bed's 110,000 passages a
question took 0.5-3 s (measured; docs/retrieval.md). Like bm25s (Lù, 2024), the scores of each term in each
document are precomputed into a sparse matrix; unlike it, documents have fields (a passage's page title and
aliases, its section path, its text), combined as Robertson and Zaragoza's BM25F does: each field's term
frequency normalised by that field's length and weighted, summed, and only then saturated:

    tf~(d, t) = sum_f  w_f * tf_f(d, t) / (1 - b_f + b_f * len_f(d) / avglen_f)
    score(d, q) = sum_{t in q}  qtf(t) * idf(t) * tf~(d, t) / (k1 + tf~(d, t))
    idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))            (Lucene's, never negative)

With one field of weight 1 this is Lucene's BM25 (its scores, without the constant factor k1 + 1 that Robertson's
form adds): tests pin them against bm25s's ``method="lucene"``.
The functions here are pure (arrays in, arrays out); ``FieldCounts`` holds the raw counts a generation stores,
from which the score matrix is made again whenever the collection changes (the statistics are global).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
from scipy import sparse


@dataclass(frozen=True)
class BM25FParams:
    """k1 and, per field, the weight and the length normalisation b."""

    k1: float = 1.2
    weights: tuple[tuple[str, float], ...] = (("content", 1.0),)
    b: tuple[tuple[str, float], ...] = (("content", 0.75),)

    def weight(self, field: str) -> float:
        return dict(self.weights).get(field, 0.0)

    def b_of(self, field: str) -> float:
        return dict(self.b).get(field, 0.75)

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.weights)


def lucene_idf(df: np.ndarray, n: int) -> np.ndarray:
    """Lucene's idf of terms found in ``df`` of ``n`` documents."""
    df = np.asarray(df, dtype=np.float64)
    return np.log1p((n - df + 0.5) / (df + 0.5))


def normalised_tf(counts: sparse.csr_matrix, b: float) -> sparse.csr_matrix:
    """A field's term counts divided by its length normalisation (1 - b + b * len / avglen), row by row."""
    counts = sparse.csr_matrix(counts, dtype=np.float64)
    lengths = np.asarray(counts.sum(axis=1)).ravel()
    mean = lengths.mean() if lengths.size and lengths.mean() > 0 else 1.0
    norm = 1.0 - b + b * lengths / mean
    norm[norm <= 0] = 1.0
    return sparse.diags(1.0 / norm) @ counts


def score_matrix(counts: Mapping[str, sparse.csr_matrix], params: BM25FParams) -> sparse.csc_matrix:
    """The eager BM25F scores, documents x terms, of the fields' raw counts (each documents x terms, one vocabulary)."""
    rows = {matrix.shape[0] for matrix in counts.values()}
    if len(rows) != 1:
        raise ValueError(f"the fields' count matrices have different numbers of documents: {sorted(rows)}")
    n_docs, n_terms = rows.pop(), max(matrix.shape[1] for matrix in counts.values())   # one growing vocabulary
    counts = {field: widen(sparse.csr_matrix(matrix), n_terms) for field, matrix in counts.items()}
    combined = sparse.csr_matrix((n_docs, n_terms), dtype=np.float64)
    present = sparse.csr_matrix((n_docs, n_terms), dtype=bool)
    for field, matrix in counts.items():
        weight = params.weight(field)
        if weight <= 0:
            continue
        combined = combined + weight * normalised_tf(matrix, params.b_of(field))
        present = present + (matrix > 0)
    df = np.asarray(present.sum(axis=0)).ravel()
    idf = lucene_idf(df, n_docs)
    combined = combined.tocoo()
    tf = combined.data
    data = idf[combined.col] * tf / (params.k1 + tf)
    return sparse.csc_matrix((data.astype(np.float32), (combined.row, combined.col)), shape=(n_docs, n_terms))


def query_scores(matrix: sparse.csc_matrix, term_ids: Sequence[int], counts: Sequence[float] | None = None) -> np.ndarray:
    """Each document's score for a query of ``term_ids`` (each counted ``counts`` times; default once)."""
    n_docs = matrix.shape[0]
    if not len(term_ids):
        return np.zeros(n_docs, dtype=np.float32)
    weights = np.ones(len(term_ids), dtype=np.float32) if counts is None else np.asarray(counts, dtype=np.float32)
    return np.asarray(matrix[:, list(term_ids)] @ weights).ravel()


def top_k(scores: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
    """The ``k`` best documents with a positive score, best first (ties: lower document number first)."""
    if allowed is not None:
        scores = np.where(allowed, scores, 0.0)
    positive = np.flatnonzero(scores > 0)
    if positive.size == 0:
        return []
    k = min(k, positive.size)
    chosen = positive[np.argpartition(-scores[positive], k - 1)[:k]] if k < positive.size else positive
    order = sorted(chosen.tolist(), key=lambda doc: (-float(scores[doc]), doc))
    return [(doc, float(scores[doc])) for doc in order]


class Vocabulary:
    """Terms to column numbers; grows as documents are added (ids never change)."""

    def __init__(self, terms: Sequence[str] = ()) -> None:
        self.terms: list[str] = list(terms)
        self._ids = {term: i for i, term in enumerate(self.terms)}

    def __len__(self) -> int:
        return len(self.terms)

    def id(self, term: str) -> int:
        found = self._ids.get(term)
        if found is None:
            found = self._ids[term] = len(self.terms)
            self.terms.append(term)
        return found

    def get(self, term: str) -> int | None:
        return self._ids.get(term)


def count_rows(rows: Sequence[Sequence[str]], vocabulary: Vocabulary) -> sparse.csr_matrix:
    """A documents x terms count matrix of tokenised documents (columns: ``vocabulary``, grown as needed)."""
    indptr, indices, data = [0], [], []
    for terms in rows:
        counted: dict[int, int] = {}
        for term in terms:
            column = vocabulary.id(term)
            counted[column] = counted.get(column, 0) + 1
        indices.extend(counted)
        data.extend(counted.values())
        indptr.append(len(indices))
    return sparse.csr_matrix((np.asarray(data, dtype=np.int32), np.asarray(indices, dtype=np.int32),
                              np.asarray(indptr, dtype=np.int64)), shape=(len(rows), len(vocabulary)))


def widen(matrix: sparse.csr_matrix, n_terms: int) -> sparse.csr_matrix:
    """The same counts with room for a vocabulary grown to ``n_terms`` columns."""
    if matrix.shape[1] == n_terms:
        return matrix
    return sparse.csr_matrix((matrix.data, matrix.indices, matrix.indptr), shape=(matrix.shape[0], n_terms))
