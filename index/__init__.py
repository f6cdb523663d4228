"""The index stage: corpus JSONL -> Whoosh index -> top pages for a question.

    from index import build_index, ensure_index, Searcher

    build_index("corpus.jsonl", "my-index")              # atomic; incremental when possible
    build_index([CorpusSource("mc.jsonl"), CorpusSource("mod.jsonl", site="Create Wiki"),
                 GuideSource("guide/")], "my-index")     # several wikis and the server's guide
    with Searcher("my-index") as searcher:
        for hit in searcher.search("how do i make a workbench", k=3):
            print(hit.title, hit.score, len(hit.paragraphs))
        index = searcher.snapshot()                      # CURRENT read once: version, sites, glossary
        hits = index.search("what do cows drop", k=3)    # ... and its search

Schema, scoring and query parsing live in profiles.py ("tuned" and "baseline"); the
directory layout and atomic swap in layout.py; what an index is built from (corpora, the guide,
site names) in sources.py; building in build.py; searching in search.py.
"""
from index.build import IndexStats, build_index, ensure_index
from index.errors import IndexBusyError, IndexCorruptError, IndexNotFoundError, SearchIndexError
from index.profiles import BASELINE, PROFILES, TUNED, IndexProfile, get_profile
from index.search import Hit, IndexSnapshot, Searcher, question_words
from index.sources import CorpusSource, GuideSource, SiteClashError, Source, load_sources, sources_with

__all__ = [
    "BASELINE", "PROFILES", "TUNED", "CorpusSource", "GuideSource", "Hit", "IndexBusyError", "IndexSnapshot", "IndexCorruptError",
    "IndexNotFoundError", "SiteClashError", "Source", "IndexProfile", "IndexStats", "SearchIndexError", "Searcher", "build_index", "ensure_index", "get_profile",
    "load_sources", "question_words", "sources_with",
]
