"""The bundled sample wiki: article sources served as a MediaWiki-style site, and the bundled corpus.

- ``articles/*.md``: the articles (format: ``articles/README.md``); ``site.yaml``: the pages
  around them (Main Page, disambiguation and duplicate pages, spin-off/talk/user/help pages).
- ``serve_sample_wiki`` / ``start_sample_wiki``: the site over HTTP (``jarvis sample-wiki``), with
  ``/api.php`` (wikis/actionapi over ``store.SampleWikiStore``) and edits at run time for tests
  (``server.site.edit/create/move/delete``).
- ``build_corpus``: ``corpus.jsonl`` from the same sources (``python -m jarvis_lab.samplewiki build-corpus``).
"""
from jarvis_lab.samplewiki.corpus import build_corpus, corpus_pages
from jarvis_lab.samplewiki.server import SampleWikiError, SampleWikiServer, serve_sample_wiki, start_sample_wiki
from jarvis_lab.samplewiki.site import SampleWiki
from jarvis_lab.samplewiki.source import SourceError

__all__ = ["SampleWiki", "SampleWikiError", "SampleWikiServer", "SourceError", "build_corpus", "corpus_pages",
           "serve_sample_wiki", "start_sample_wiki"]
