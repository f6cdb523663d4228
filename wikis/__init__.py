"""The lab (import name ``jarvis_lab``; this folder, installed from a checkout by lab/pyproject.toml): local
wikis to crawl, for the tests, the benchmarks and the evaluation; not part of the product.

- ``jarvis_lab.samplewiki``: the bundled sample wiki (the project's own articles), served as MediaWiki HTML;
  ``python -m jarvis_lab.samplewiki build-corpus`` writes the product's bundled corpus from it.
- ``jarvis_lab.realbed``: a local mirror of the real-wiki test bed (``../shared/realwiki``), served as
  minecraft.wiki serves its pages.
- ``jarvis_lab.actionapi``: the subset of the MediaWiki Action API (``api.php``) that both serve.

The product (``jarvis`` and its stages ``jarvis.crawler``, ``jarvis.index``, ``jarvis.eval``) never imports
this package at its top: only the lab commands (``sample-wiki``, ``realbed-wiki``, ``eval --realbed``) do, and
say in one line how to install the lab when it is missing; ``bench`` and ``tests`` import it freely.
"""
