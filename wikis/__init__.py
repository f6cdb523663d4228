"""Local wikis to crawl, for the demo, the tests, the benchmarks and the evaluation; not part of the product.

- ``wikis.samplewiki``: the bundled sample wiki (the project's own articles), served as MediaWiki HTML;
  ``python -m wikis.samplewiki build-corpus`` writes the product's bundled corpus from it.
- ``wikis.realbed``: a local mirror of the real-wiki test bed (``../shared/realwiki``), served as
  minecraft.wiki serves its pages.
- ``wikis.actionapi``: the subset of the MediaWiki Action API (``api.php``) that both serve.

The product packages (``crawler``, ``index``, ``jarvis``) never import this package; only the CLI's
``sample-wiki`` and ``realbed-wiki`` commands do, and ``eval``, ``bench`` and ``tests``.
"""
