"""Jarvis: an in-game question answering bot for Minecraft.

Packages, one per stage: ``crawler`` (wiki → corpus), ``index`` (corpus → index → top pages),
``jarvis`` (``readers``: the answer in the pages; ``pipeline``: question → answer; ``bridge``: the game
chat; ``cli``), ``eval`` (measurement). ``wikis`` holds the local wikis the demo and the tests crawl.
"""

__version__ = "0.1.0"
