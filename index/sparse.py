"""The lexical side of passage retrieval: BM25F over every passage (fields: its page's title and aliases, its
section path, its text) and over every page (its title and aliases, all its text), scored eagerly (bm25f.py).

A generation stores the raw term counts (``passages/``: the page table, the passage table, the vocabulary and
three count matrices); the score matrices are made from them when the generation is opened. An incremental build
keeps the counts of the pages that did not change and analyses only the others.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np
from scipy import sparse

from jarvis.index.bm25f import BM25FParams, Vocabulary, count_rows, query_scores, score_matrix, top_k, widen
from jarvis.index.passages import PageFacts, simplify_title
from jarvis.index.terms import Terms

FOLDER = "passages"
PAGES_FILE = "pages.json"
TABLE_FILE = "table.npz"
TERMS_FILE = "terms.json"
COUNTS_FILE = "counts.npz"

# Measured on the real bed's dev and fitting sets (docs/retrieval.md): a passage's page title counts twice its
# text, its section path about as much as its text; titles and headings are short, so their lengths matter less.
PASSAGE_PARAMS = BM25FParams(k1=1.2, weights=(("title", 2.0), ("section", 1.0), ("content", 1.0)),
                             b=(("title", 0.3), ("section", 0.3), ("content", 0.75)))
PAGE_PARAMS = BM25FParams(k1=1.2, weights=(("title", 3.0), ("content", 1.0)), b=(("title", 0.3), ("content", 0.75)))


@dataclass
class SparseIndex:
    """Term counts of a generation's pages and passages, and (once opened) their BM25F score matrices."""

    pages: list[PageFacts]
    page_of: np.ndarray              # passage row -> page row
    para_of: np.ndarray              # passage row -> the paragraph's index in its page
    vocabulary: Vocabulary
    title_counts: sparse.csr_matrix      # pages x terms (title and aliases)
    section_counts: sparse.csr_matrix    # passages x terms
    content_counts: sparse.csr_matrix    # passages x terms
    passage_params: BM25FParams = PASSAGE_PARAMS
    page_params: BM25FParams = PAGE_PARAMS
    _passage_scores: sparse.csc_matrix | None = field(default=None, repr=False)
    _page_scores: sparse.csc_matrix | None = field(default=None, repr=False)
    _page_rows: dict[str, int] = field(default_factory=dict, repr=False)
    _starts: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._page_rows = {facts.key: row for row, facts in enumerate(self.pages)}
        # a page's passages are consecutive rows: passages of page r are starts[r]:starts[r + 1]
        self._starts = np.searchsorted(self.page_of, np.arange(len(self.pages) + 1))

    # ------------------------------------------------------------------ building

    @classmethod
    def build(cls, pages: Sequence, fingerprint: Callable, key: Callable, previous: "SparseIndex | None" = None,
              terms: Terms | None = None, progress: Callable[[int], None] | None = None) -> "SparseIndex":
        """The counts of ``pages`` (crawler.corpus.Page), reusing ``previous``'s for pages whose fingerprint is unchanged."""
        terms = terms or Terms()
        vocabulary = Vocabulary(previous.vocabulary.terms) if previous is not None else Vocabulary()
        facts, page_of, para_of, titles, sections, contents = [], [], [], [], [], []
        for page in pages:
            page_facts = PageFacts(key(page), page.title, page.page_kind, page.site, fingerprint(page),
                                   len(page.paragraphs))
            row = len(facts)
            facts.append(page_facts)
            kept = previous.rows_of(page_facts) if previous is not None else None
            if kept is not None:
                title_row, section_rows, content_rows = kept
                titles.append(title_row)
                sections.append(section_rows)
                contents.append(content_rows)
            else:
                titles.append(count_rows([terms(_title_text(page))], vocabulary))
                paths = page.sections or [[] for _ in page.paragraphs]
                sections.append(count_rows([terms(" ".join(path)) for path in paths], vocabulary))
                contents.append(count_rows([terms(text) for text in page.paragraphs], vocabulary))
            page_of.extend([row] * len(page.paragraphs))
            para_of.extend(range(len(page.paragraphs)))
            if progress is not None:
                progress(1)
        width = len(vocabulary)
        stack = lambda parts, rows: (sparse.vstack([widen(p, width) for p in parts], format="csr") if parts
                                     else sparse.csr_matrix((rows, width), dtype=np.int32))
        return cls(facts, np.asarray(page_of, dtype=np.int32), np.asarray(para_of, dtype=np.int32), vocabulary,
                   stack(titles, 0), stack(sections, 0), stack(contents, 0))

    def rows_of(self, facts: PageFacts) -> tuple[sparse.csr_matrix, sparse.csr_matrix, sparse.csr_matrix] | None:
        """This index's count rows of a page indexed at the same fingerprint (None: not here, or changed)."""
        row = self._page_rows.get(facts.key)
        if row is None or self.pages[row].fingerprint != facts.fingerprint:
            return None
        first, end = self._starts[row], self._starts[row + 1]
        return self.title_counts[row:row + 1], self.section_counts[first:end], self.content_counts[first:end]

    def passages_of(self, page_row: int) -> range:
        """The passage rows of a page."""
        return range(int(self._starts[page_row]), int(self._starts[page_row + 1]))

    # ------------------------------------------------------------------ files

    def save(self, directory: Path) -> None:
        folder = Path(directory) / FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        (folder / PAGES_FILE).write_text(json.dumps([f.to_row() for f in self.pages], ensure_ascii=False), encoding="utf-8")
        np.savez(folder / TABLE_FILE, page_of=self.page_of, para_of=self.para_of)
        (folder / TERMS_FILE).write_text(json.dumps(self.vocabulary.terms, ensure_ascii=False), encoding="utf-8")
        width = len(self.vocabulary)
        parts = {}
        for name, matrix in (("title", self.title_counts), ("section", self.section_counts),
                             ("content", self.content_counts)):
            matrix = widen(matrix.tocsr(), width)
            parts[f"{name}_data"] = matrix.data.astype(np.uint16 if matrix.data.size == 0 or matrix.data.max() < 65536
                                                       else np.int32)
            parts[f"{name}_indices"] = matrix.indices.astype(np.int32)
            parts[f"{name}_indptr"] = matrix.indptr.astype(np.int64)
            parts[f"{name}_shape"] = np.asarray(matrix.shape, dtype=np.int64)
        np.savez_compressed(folder / COUNTS_FILE, **parts)

    @classmethod
    def load(cls, directory: Path) -> "SparseIndex | None":
        """A generation's counts; None when it has none (built by a page profile)."""
        folder = Path(directory) / FOLDER
        if not (folder / COUNTS_FILE).is_file():
            return None
        pages = [PageFacts.from_row(row) for row in json.loads((folder / PAGES_FILE).read_text(encoding="utf-8"))]
        with np.load(folder / TABLE_FILE) as table:
            page_of, para_of = table["page_of"], table["para_of"]
        vocabulary = Vocabulary(json.loads((folder / TERMS_FILE).read_text(encoding="utf-8")))
        with np.load(folder / COUNTS_FILE) as parts:
            matrices = {name: sparse.csr_matrix((parts[f"{name}_data"].astype(np.int32), parts[f"{name}_indices"],
                                                 parts[f"{name}_indptr"]), shape=tuple(parts[f"{name}_shape"]))
                        for name in ("title", "section", "content")}
        if matrices["content"].shape[0] != len(page_of) or matrices["title"].shape[0] != len(pages):
            raise ValueError(f"{folder}: the count matrices do not match the passage and page tables")
        return cls(pages, page_of, para_of, vocabulary, matrices["title"], matrices["section"], matrices["content"])

    # ------------------------------------------------------------------ searching

    def warm_up(self) -> None:
        """Make the score matrices now (else at the first search)."""
        self._matrices()

    def _matrices(self) -> tuple[sparse.csc_matrix, sparse.csc_matrix]:
        if self._passage_scores is None:
            # page -> passage indicator: a passage's title field is its page's
            spread = sparse.csr_matrix((np.ones(len(self.page_of), dtype=np.int32), (np.arange(len(self.page_of)),
                                        self.page_of)), shape=(len(self.page_of), len(self.pages)))
            self._passage_scores = score_matrix({"title": spread @ self.title_counts, "section": self.section_counts,
                                                 "content": self.content_counts}, self.passage_params)
            self._page_scores = score_matrix({"title": self.title_counts,
                                              "content": (spread.T @ self.content_counts).tocsr()}, self.page_params)
        return self._passage_scores, self._page_scores

    def query(self, words: Iterable[str], terms: Terms) -> tuple[list[int], list[float]]:
        """The query's term columns and how often each is asked (terms this index never saw are dropped)."""
        counted: dict[int, float] = {}
        for term, weight in terms.query(" ".join(words) if not isinstance(words, str) else words):
            column = self.vocabulary.get(term)
            if column is not None:
                counted[column] = counted.get(column, 0.0) + weight
        return list(counted), list(counted.values())

    def passage_scores(self, query: tuple[list[int], list[float]]) -> np.ndarray:
        return query_scores(self._matrices()[0], *query)

    def page_scores(self, query: tuple[list[int], list[float]]) -> np.ndarray:
        return query_scores(self._matrices()[1], *query)

    def best_passages(self, query: tuple[list[int], list[float]], k: int) -> list[tuple[int, float]]:
        return top_k(self.passage_scores(query), k)

    def best_pages(self, query: tuple[list[int], list[float]], k: int) -> list[tuple[int, float]]:
        return top_k(self.page_scores(query), k)

    @property
    def passage_count(self) -> int:
        return len(self.page_of)


def _title_text(page) -> str:
    return "\n".join(simplify_title(t) for t in [page.title, *page.aliases])
