"""Jarvis: an in-game question answering bot for Minecraft.

Packages, one per stage: ``crawler`` (wiki → corpus), ``index`` (corpus → Whoosh index →
top pages), ``jarvis`` (reader, chat bridge, CLI, sample wiki), ``eval`` (measurement).
"""

__version__ = "0.1.0"
