"""Reading: the answer to a question cut out of the pages retrieval found. One package, one entry point.

    load_reader(settings)                          # what `jarvis ask` uses: the span reader, else the fallback
    load_reader(settings, name="fallback:lexical") # one reader by name
    READERS                                        # name -> ReaderChoice (description, loader)

Modules:
- ``base``: ``Passage`` (what readers read), ``Span`` (what they return), the ``Reader`` protocol;
- ``span``: the span reader (an extractive QA model, RoBERTa by default): reading; ``acquisition``: getting its
  model (a local folder or the hub, the ONNX export, int8, CUDA); ``onnx_backend`` and ``torch_backend``: the
  engines that run it; ``card`` and ``context``: how a reader trained by Jarvis reads; ``tokens``: the
  tokenizer as the span reader and the passage selector count with it;
- ``question_kinds``: the question classifier (what a question asks for, one vocabulary of answer kinds);
- ``placement``: a candidate read in prose under the section that holds what is asked, before a table row;
- ``ranking``: the passage ranker (which paragraphs of the top pages are about the question);
- ``passages``: which passages the span reader reads within its token budget (the ranker's best that fit);
- ``fallback``: the offline sentence reader, for when no QA weights can be loaded.

Jarvis's own reader answers by default, with or without internet and with any extra (``settings.model`` is
empty): one line at info level names it. A hub model or a local one answers only when asked for by name
(``settings.model``); one that cannot load (weights not on disk, no network) gives way, with a warning, to the
offline reader named by ``settings.fallback``: ``jarvis`` (Jarvis's own, the default) or a sentence reader;
Jarvis's own reader missing or unreadable gives way to the sentence reader, with a warning. A reader named
explicitly does not fall back. ``jarvis`` names Jarvis's own reader (a MiniLM trained on Minecraft
questions by ``jarvis train-reader``), installed at config.SHIPPED_READER when the package ships one.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

from jarvis.config import SHIPPED_READER, ReaderSettings
from jarvis.readers.base import ModelUnavailableError, Passage, Reader, ReaderSettingsError, Span
from jarvis.readers.span import SpanReader

__all__ = ["READERS", "OFFLINE_READERS", "ReaderChoice", "UnknownReaderError", "load_own_reader", "load_reader",
           "offline_reader", "ModelUnavailableError", "Passage",
           "Reader", "ReaderSettingsError", "Span", "SpanReader"]

log = logging.getLogger(__name__)

SPAN = "span"
OWN = "jarvis"     # Jarvis's own reader, shipped in the package
SENTENCE_READER = "fallback:auto"   # what answers when Jarvis's own reader cannot load
OFFLINE_READERS = ("jarvis", "auto", "minilm", "lexical")   # the values of ReaderSettings.fallback (jarvis + the sentence readers)


@dataclass(frozen=True)
class ReaderChoice:
    name: str
    description: str
    # (settings, shared dense encoder or None, the index's glossary or None) -> Reader
    load: Callable[[ReaderSettings, object, object], Reader]


def _fallback(variant: str) -> Callable[[ReaderSettings, object, object], Reader]:
    def load(settings: ReaderSettings, encoder, glossary) -> Reader:
        from jarvis.readers.fallback import load_fallback_reader

        return load_fallback_reader(variant, settings.fallback_tuning, encoder, glossary)
    return load


READERS: dict[str, ReaderChoice] = {choice.name: choice for choice in (
    ReaderChoice(SPAN, "extractive QA model (settings.model: hub id or local directory)",
                 lambda settings, encoder, glossary: _load_span(settings)),
    ReaderChoice(OWN, "Jarvis's own extractive reader, trained on Minecraft questions, shipped in the package",
                 lambda settings, encoder, glossary: load_own_reader(settings)),
    ReaderChoice("fallback:minilm", "offline sentence reader with MiniLM embeddings, no QA model", _fallback("minilm")),
    ReaderChoice("fallback:lexical", "offline sentence reader, words only", _fallback("lexical")),
    ReaderChoice("fallback:auto", "fallback:minilm when its model loads, else fallback:lexical", _fallback("auto")),
)}


class UnknownReaderError(ValueError):
    user_error = True


def _load_span(settings: ReaderSettings) -> Reader:
    if not settings.model:
        raise ReaderSettingsError("the span reader reads the model named by [reader] model (a hub id or a local "
                                  "directory), and none is named")
    return SpanReader.load(settings)


def load_own_reader(settings: ReaderSettings) -> Reader:
    """The reader shipped in the package, run by onnxruntime (its int8 model is the only weights it ships)."""
    from dataclasses import replace

    from jarvis.readers.card import ONNX_NAME

    if not (SHIPPED_READER / ONNX_NAME).is_file():
        raise ModelUnavailableError(f"Jarvis's own reader is not installed ({SHIPPED_READER / ONNX_NAME} is missing)")
    return SpanReader.load(replace(settings, model=str(SHIPPED_READER), backend="onnx", quantize=True))


def offline_reader(settings: ReaderSettings, encoder=None, glossary=None) -> Reader:
    """The reader that answers with no QA model to download: ``settings.fallback`` names it. ``jarvis``
    (Jarvis's own reader, shipped in the package) gives way to the sentence reader (``fallback:auto``) when
    its model is missing or cannot be read, and one line says so."""
    name = f"fallback:{settings.fallback}" if settings.fallback != OWN else OWN
    if name not in READERS:
        raise UnknownReaderError(f"unknown offline reader {settings.fallback!r} (choose from {', '.join(OFFLINE_READERS)})")
    if name != OWN:
        return READERS[name].load(settings, encoder, glossary)
    try:
        return load_own_reader(settings)
    except ModelUnavailableError as exc:
        reader = READERS[SENTENCE_READER].load(settings, encoder, glossary)
        log.warning("Jarvis's own reader cannot be loaded (%s); answering with the sentence reader %s",
                    exc, reader.name)
        return reader


def load_reader(settings: ReaderSettings, encoder=None, name: str | None = None, glossary=None) -> Reader:
    """The reader called ``name``; by default the span reader for ``settings.model``, else the offline
    reader (``offline_reader``); see the module docstring for what is said when.

    ``encoder``: the searcher's dense encoder to share; ``glossary``: the index's players' words
    (index.glossary.Glossary; None: the bundled ones), which the fallback reader reads questions with."""
    if name is not None:
        if name not in READERS:
            raise UnknownReaderError(f"unknown reader {name!r} (choose from {', '.join(READERS)})")
        return READERS[name].load(settings, encoder, glossary)
    if not settings.model:
        reader = offline_reader(settings, encoder, glossary)
        log.info("reader: %s%s", reader.name, " (Jarvis's own, shipped)" if settings.fallback == OWN else "")
        return reader
    try:
        reader = READERS[SPAN].load(settings, encoder, glossary)
    except ModelUnavailableError as exc:
        reader = offline_reader(settings, encoder, glossary)
        log.warning("QA model unavailable: %s; answering with the offline reader %s", exc, reader.name)
        return reader
    log.info("reader: %s (the model %s, asked for by name)", reader.name, settings.model)
    return reader
