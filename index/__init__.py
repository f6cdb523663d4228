"""The index stage: corpus JSONL -> Whoosh index -> top pages for a question.

    from jarvis.index import build_index, ensure_index, Searcher

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
from importlib import import_module

# Imported on first use (PEP 562): searching needs neither the builder nor the corpus readers.
_HOMES = {
    "IndexStats": "jarvis.index.build", "build_index": "jarvis.index.build", "ensure_index": "jarvis.index.build",
    "IndexBusyError": "jarvis.index.errors", "IndexCorruptError": "jarvis.index.errors", "IndexNotFoundError": "jarvis.index.errors",
    "SearchIndexError": "jarvis.index.errors",
    "BASELINE": "jarvis.index.profiles", "PROFILES": "jarvis.index.profiles", "TUNED": "jarvis.index.profiles",
    "IndexProfile": "jarvis.index.profiles", "get_profile": "jarvis.index.profiles",
    "Hit": "jarvis.index.search", "PassageHit": "jarvis.index.search", "IndexSnapshot": "jarvis.index.search", "Searcher": "jarvis.index.search",
    "SearchQuery": "jarvis.index.search",
    "question_words": "jarvis.index.search",
    "CorpusSource": "jarvis.index.sources", "GuideSource": "jarvis.index.sources", "SiteClashError": "jarvis.index.sources",
    "Source": "jarvis.index.sources", "load_sources": "jarvis.index.sources", "sources_with": "jarvis.index.sources",
    "recorded_sources": "jarvis.index.sources",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'index' has no attribute {name!r}")
