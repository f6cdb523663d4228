"""The offline fallback reader: answers without downloading anything.

When no QA weights can be loaded, Jarvis still answers: it finds the passage of the top pages that
is about the question, takes its sentence that answers, and trims that sentence to the part that
answers. One module per job:

- kinds.py: what kind of answer a question asks for (a number, a place, a recipe, a tool, drops),
  which sections hold it, and how an answer is trimmed to it;
- blocks.py: paragraphs and lists grouped into blocks, and sentences;
- trimming.py: the part of a sentence that answers;
- reader.py: SentenceReader, which scores blocks and sentences (weights: config.FallbackSettings).

The embeddings come from all-MiniLM-L6-v2 (index.dense.DenseEncoder, the same model and instance the
hybrid index uses for questions). ``minilm`` uses them, ``lexical`` is the same without embeddings
(nothing but Python and Whoosh's analyzer), ``auto`` is MiniLM when it loads.
"""
from __future__ import annotations

import logging

from jarvis.config import FallbackSettings
from jarvis.errors import JarvisError
from jarvis.readers.fallback.kinds import DROPS, METHOD, PLACE, PURPOSE, QUANTITY, RECIPE, TOOL, YES_NO, question_kind
from jarvis.readers.fallback.reader import SentenceReader
from jarvis.readers.base import ModelUnavailableError

log = logging.getLogger(__name__)

FALLBACK_KINDS = ("auto", "minilm", "lexical")

__all__ = ["DROPS", "FALLBACK_KINDS", "METHOD", "PLACE", "PURPOSE", "QUANTITY", "RECIPE", "TOOL", "YES_NO",
           "FallbackError", "SentenceReader", "load_fallback_reader", "question_kind"]


class FallbackError(JarvisError):
    """An unknown fallback kind."""


def load_fallback_reader(kind: str = "auto", settings: FallbackSettings | None = None,
                         encoder=None, glossary=None) -> SentenceReader:
    """The fallback reader of the given kind; "auto" is MiniLM when it loads, else lexical.

    ``encoder``: an already loaded index.dense.DenseEncoder to share (the searcher's), else one is loaded;
    ``glossary``: the index's players' words (index.glossary.Glossary), else the bundled ones.
    """
    from index.dense import DenseEncoder, EncoderUnavailableError

    if kind not in FALLBACK_KINDS:
        raise FallbackError(f"unknown fallback reader {kind!r} (choose from {', '.join(FALLBACK_KINDS)})")
    if kind == "lexical":
        return SentenceReader(None, settings, glossary)
    try:
        return SentenceReader(encoder or DenseEncoder.load(), settings, glossary)
    except EncoderUnavailableError as exc:
        if kind == "minilm":
            raise ModelUnavailableError(str(exc)) from exc
        log.warning("%s; the fallback reader matches words only", exc)
        return SentenceReader(None, settings, glossary)
