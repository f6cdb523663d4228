"""The dense side of passage retrieval: one vector per passage, searched with FAISS.

Every passage's text (passages.passage_text: its page, section and text) is embedded at index time by the
passage encoder (dense.DenseEncoder) and stored in a FAISS index of the generation (``passages/vectors.faiss``)
with the encoder's name and each passage's fingerprint beside it (``passages/vectors.json``), so that an
incremental build embeds only the passages that changed.

The FAISS index is chosen by the collection's size (``index_kind``), measured on the real bed's 110,000
passages (docs/retrieval.md): a scalar-quantised flat index ("SQ8": 8 bits a dimension, every vector compared,
42 MB, 6 ms a question, recall@100 0.996 of exact search, built in 0.2 s) up to ``HNSW_FROM`` passages; above,
a graph over the same codes ("HNSW32,SQ8": under 1 ms a question, recall@100 0.94, built in ~17 s per 100,000).
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

log = logging.getLogger(__name__)

VECTORS_FILE = "vectors.faiss"
VECTORS_META_FILE = "vectors.json"
HNSW_FROM = 400_000          # passages; below, every vector is compared (exact up to its 8-bit codes)
HNSW_EF_SEARCH = 128


def index_kind(passages: int) -> str:
    """The FAISS factory string for a collection of ``passages`` vectors."""
    return "HNSW32,SQ8" if passages >= HNSW_FROM else "SQ8"


@dataclass
class PassageVectors:
    """The passage vectors of one generation: FAISS row i is passage row i of the generation's passage table."""

    index: object                    # a faiss.Index (inner product over unit vectors: cosine)
    fingerprints: list[str]          # of each passage's text when its vector was made
    encoder: str                     # the encoder's id (dense.DenseEncoder.id): other vectors are not comparable
    kind: str = "SQ8"
    _row_of: dict[str, list[int]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for row, fingerprint in enumerate(self.fingerprints):
            self._row_of.setdefault(fingerprint, []).append(row)

    @property
    def count(self) -> int:
        return int(self.index.ntotal)

    # ------------------------------------------------------------------ building

    @classmethod
    def build(cls, vectors: np.ndarray, fingerprints: Sequence[str], encoder: str, trained_from=None) -> "PassageVectors":
        """An index of ``vectors`` (unit rows). ``trained_from``: an index whose quantiser to reuse (an incremental
        build: the kept vectors then come back out bit for bit); else it is trained on ``vectors``."""
        import faiss

        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        dimensions = vectors.shape[1]
        kind = index_kind(len(vectors))
        if trained_from is not None and trained_from.kind == kind and trained_from.index.d == dimensions:
            index = faiss.clone_index(trained_from.index)
            index.reset()
        else:
            index = faiss.index_factory(dimensions, kind, faiss.METRIC_INNER_PRODUCT)
            if len(vectors):
                index.train(vectors)
        if len(vectors):
            index.add(vectors)
        return cls(index, list(fingerprints), encoder, kind)

    def vectors_of(self, fingerprints: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors (as the index decodes them) of the passages with these fingerprints."""
        rows = sorted({self._row_of[fp][0] for fp in fingerprints if fp in self._row_of})
        if not rows:
            return {}
        decoded = np.vstack([self.index.reconstruct(int(row)) for row in rows])
        return {self.fingerprints[row]: decoded[i] for i, row in enumerate(rows)}

    # ------------------------------------------------------------------ files

    def save(self, folder: Path) -> None:
        import faiss

        folder.mkdir(parents=True, exist_ok=True)
        faiss.write_index(self.index, str(folder / VECTORS_FILE))
        meta = {"encoder": self.encoder, "kind": self.kind, "fingerprints": self.fingerprints}
        (folder / VECTORS_META_FILE).write_text(json.dumps(meta), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> "PassageVectors | None":
        """A generation's vectors; None when it has none (built without them)."""
        import faiss

        meta_path, index_path = folder / VECTORS_META_FILE, folder / VECTORS_FILE
        if not meta_path.is_file() or not index_path.is_file():
            return None
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        index = faiss.read_index(str(index_path))
        if index.ntotal != len(meta["fingerprints"]):
            raise ValueError(f"{index_path}: {index.ntotal} vectors for {len(meta['fingerprints'])} passages")
        if "HNSW" in meta.get("kind", ""):
            faiss.ParameterSpace().set_index_parameter(index, "efSearch", HNSW_EF_SEARCH)
        return cls(index, list(meta["fingerprints"]), meta["encoder"], meta.get("kind", "SQ8"))

    # ------------------------------------------------------------------ searching

    def nearest(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The ``k`` passages most similar to a unit query vector, best first: (passage row, cosine)."""
        if self.count == 0 or k < 1:
            return []
        scores, rows = self.index.search(np.ascontiguousarray(query, dtype=np.float32)[None, :], min(k, self.count))
        return [(int(row), float(score)) for row, score in zip(rows[0], scores[0]) if row >= 0]
