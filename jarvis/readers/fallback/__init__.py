"""The offline fallback reader: answers without downloading anything.

When no QA weights can be loaded, Jarvis still answers: it finds the passage of the top pages that
is about the question, takes its sentence that answers, and trims that sentence to the part that
answers. One module per job:

- phrases.py: the phrase of each answer kind in a sentence (a number, a place, a recipe, a tool, drops)
  and how an answer is trimmed to it (the kinds, and which sections hold them: the question classifier,
  jarvis/readers/question_kinds.py);
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
from jarvis.readers.fallback.reader import SentenceReader
from jarvis.readers.base import ModelUnavailableError
from jarvis.readers.question_kinds import DROPS, METHOD, PLACE, PURPOSE, QUANTITY, RECIPE, TOOL, YES_NO, answer_kind

log = logging.getLogger(__name__)

FALLBACK_VARIANTS = ("auto", "minilm", "lexical")   # the sentence readers (ReaderSettings.fallback, beside "jarvis")

__all__ = ["DROPS", "FALLBACK_VARIANTS", "METHOD", "PLACE", "PURPOSE", "QUANTITY", "RECIPE", "TOOL", "YES_NO",
           "FallbackError", "SentenceReader", "answer_kind", "load_fallback_reader"]


class FallbackError(JarvisError):
    """An unknown fallback variant."""


def load_fallback_reader(variant: str = "auto", settings: FallbackSettings | None = None,
                         encoder=None, glossary=None) -> SentenceReader:
    """The fallback reader of the given variant; "auto" is MiniLM when it loads, else lexical.

    ``encoder``: an already loaded index.dense.DenseEncoder to share (the searcher's), else one is loaded;
    ``glossary``: the index's players' words (index.glossary.Glossary), else the bundled ones.
    """
    from jarvis.index.dense import DenseEncoder, EncoderUnavailableError

    if variant not in FALLBACK_VARIANTS:
        raise FallbackError(f"unknown fallback reader {variant!r} (choose from {', '.join(FALLBACK_VARIANTS)})")
    if variant == "lexical":
        return SentenceReader(None, settings, glossary)
    try:
        return SentenceReader(encoder or DenseEncoder.load(), settings, glossary)
    except EncoderUnavailableError as exc:
        if variant == "minilm":
            raise ModelUnavailableError(str(exc)) from exc
        log.warning("%s; the fallback reader matches words only", exc)
        return SentenceReader(None, settings, glossary)
