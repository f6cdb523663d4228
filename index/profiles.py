"""Index profiles: the schema, scoring and query parsing of an index, in one named dataclass.

``tuned`` is the default: the original Jarvis's final lexical configuration (the project's design
contract: title and alias field with boost 3.0, stemming, BM25F parameters, coordination bonus) plus
page vectors fused at search time and the page-kind prior (docs/retrieval.md). ``lexical`` is the
same without vectors (v0.1's default) and ``baseline`` the original's starting point, both kept so
the eval can show side by side what the changes buy.
The profile used to build an index is recorded in its metadata; searches use the same one.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from whoosh import fields, qparser, scoring
from whoosh.analysis import StandardAnalyzer, StemmingAnalyzer

from jarvis.index.errors import SearchIndexError


@dataclass(frozen=True)
class IndexProfile:
    name: str
    description: str
    stemming: bool            # Porter stemming (StemmingAnalyzer) or Whoosh's StandardAnalyzer
    title_field: bool         # index `simple_title` (simplified title + aliases) and search it too
    title_boost: float        # field boost of `simple_title`
    bm25_b: float             # BM25F length normalization, all fields
    bm25_k1: float            # BM25F term-frequency saturation
    content_b: float | None   # BM25F B for `content` only (None: bm25_b)
    or_scale: float | None    # OrGroup coordination bonus (None: plain OR)
    dense: bool = False       # vectors (page vectors, or passage vectors with `passages`) fused with BM25F, and the
                              # page-kind prior
    spelling: bool = False    # a vocabulary written with the index: questions' typos read against it (spelling.py)
    # Passage retrieval (passages.py): every paragraph, list item and table row scored by BM25F over its page
    # title, section and text (sparse.py), fused with passage vectors when `dense`; a page ranks by its passages.
    # The Whoosh index then only stores the pages.
    passages: bool = False
    # The stored fields' version: part of the signature, so an index built with other fields is
    # rebuilt in full, never updated in place. 2: pages keyed by (site, title), the site stored.
    fields_version: int = 2

    @property
    def search_fields(self) -> list[str]:
        """The Whoosh fields a search reads: none for a passage profile (its pages are only stored there)."""
        if self.passages:
            return []
        return ["simple_title", "content"] if self.title_field else ["content"]

    def signature(self) -> str:
        """Changes whenever the profile's definition changes (stored in index metadata)."""
        return hashlib.sha1(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:12]

    def schema(self) -> fields.Schema:
        # Positions are not stored (phrase=False): queries are bags of words, never phrases,
        # and leaving them out makes indexing faster and the index smaller.
        analyzer = StemmingAnalyzer() if self.stemming else StandardAnalyzer()
        schema = fields.Schema(
            key=fields.ID(stored=True, unique=True),     # (site, title) as JSON: the page's identity
            site=fields.STORED(),                        # the wiki's name, or "server guide"
            title=fields.ID(stored=True),                # canonical title, exact
            url=fields.STORED(),
            aliases=fields.STORED(),                     # JSON list
            paragraphs=fields.STORED(),                  # JSON list, one string: cheap to load for top k
            sections=fields.STORED(),                    # JSON list: the heading path of each paragraph
            kind=fields.STORED(),                        # crawler.corpus.PAGE_KINDS
            fingerprint=fields.STORED(),                 # what incremental rebuilds compare
        )
        if self.passages:
            return schema     # pages stored only: passages are searched in their own index (sparse.py)
        schema.add("content", fields.TEXT(analyzer=analyzer, phrase=False))
        if self.title_field:
            schema.add("simple_title", fields.TEXT(analyzer=analyzer, phrase=False,
                                                   field_boost=self.title_boost))
        return schema

    def weighting(self) -> scoring.BM25F:
        per_field = {} if self.content_b is None else {"content_B": self.content_b}
        return scoring.BM25F(B=self.bm25_b, K1=self.bm25_k1, **per_field)

    def parser(self, schema: fields.Schema) -> qparser.QueryParser | None:
        """A parser with no query syntax at all: player questions are plain words.

        ``plugins=[]`` leaves only the whitespace splitter, so quotes, parentheses,
        ``*``, ``~``, ``^``, ``field:value`` and AND/OR/NOT are just text for the analyzer.
        """
        group = qparser.OrGroup if self.or_scale is None else qparser.OrGroup.factory(self.or_scale)
        if not self.search_fields:
            return None       # a passage profile: its pages are not searched through Whoosh
        if len(self.search_fields) == 1:
            return qparser.QueryParser(self.search_fields[0], schema, plugins=[], group=group)
        return qparser.MultifieldParser(self.search_fields, schema, plugins=[], group=group)


TUNED = IndexProfile(
    name="tuned",
    description="passages: BM25F over every passage (page title + aliases, section, text; Porter stemming) fused "
                "with passage vectors of Jarvis's passage encoder, page-kind prior, pages ranked by their passages, "
                "questions' typos read against the index's words",
    stemming=True, title_field=True, title_boost=3.0,
    bm25_b=0.75, bm25_k1=1.5, content_b=1.0, or_scale=0.9, dense=True, spelling=True, passages=True,
)

# The same passage index without vectors: for side-by-side eval.
LEXICAL = IndexProfile(
    name="lexical",
    description="passages: BM25F over every passage (page title + aliases, section, text; Porter stemming), "
                "pages ranked by their passages",
    stemming=True, title_field=True, title_boost=3.0,
    bm25_b=0.75, bm25_k1=1.5, content_b=1.0, or_scale=0.9, spelling=True, passages=True,
)

# v0.5's default: whole pages, BM25F (title + aliases boost 3, content) fused with one MiniLM vector per page
# (its title and first 40 words), for side-by-side eval.
PAGES = IndexProfile(
    name="pages",
    description="pages: BM25F (title + aliases boost 3, content, Porter stemming) fused with MiniLM page vectors "
                "(title and lead), page-kind prior, questions' typos read against the index's words",
    stemming=True, title_field=True, title_boost=3.0,
    bm25_b=0.75, bm25_k1=1.5, content_b=1.0, or_scale=0.9, dense=True, spelling=True,
)

# The original baseline: content only, default analyzer, plain BM25. Its terms are OR-ed
# (Whoosh's default AND would make most questions match nothing: "what", "how", "do" are
# not stop words), so the comparison measures ranking, not a recall cliff.
BASELINE = IndexProfile(
    name="baseline",
    description="BM25 over content only, default analyzer (no stemming)",
    stemming=False, title_field=False, title_boost=1.0,
    bm25_b=0.75, bm25_k1=1.2, content_b=None, or_scale=None,
)

PROFILES: dict[str, IndexProfile] = {p.name: p for p in (TUNED, LEXICAL, PAGES, BASELINE)}


def get_profile(profile: str | IndexProfile) -> IndexProfile:
    if isinstance(profile, IndexProfile):
        return profile
    try:
        return PROFILES[profile]
    except KeyError:
        raise SearchIndexError(f"unknown index profile {profile!r} (choose from: {', '.join(PROFILES)})") from None
