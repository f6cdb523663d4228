"""Jarvis: an in-game question answering bot for Minecraft.

Packages, one per stage: ``jarvis.crawler`` (wiki → corpus; the repository's crawler/), ``jarvis.index``
(corpus → index → top pages; index/), the answering core in jarvis/ (``readers``: the answer in the pages;
``pipeline``: question → answer; ``bridge``: the game chat; ``cli``), ``jarvis.eval`` (scoring on a question
set; eval/). The lab (the local wikis the demo and the tests crawl, the benchmarks) is ``jarvis_lab``, a
separate distribution installed from a checkout (lab/pyproject.toml), never part of the product.

This module imports nothing, so that ``jarvis.crawler`` and ``jarvis.index`` load none of the core.
"""

__version__ = "0.1.0"
