"""The one place the answering path is put together: index, reader, confidence model, passage selection, cache.

    with assemble(config, index_dir) as jarvis:          # what `jarvis ask` and `jarvis serve` run
        answer = jarvis.ask("what do cows drop?")

``ask``, ``serve``, ``worker``, ``eval``, ``calibrate`` and the benchmarks all come through here, so what is
measured is what players get. A caller that compares several readers over one index hands in the open
searcher (``searcher=``: it stays open, the caller closes it) and the reader (``reader=``); a caller that
fits a confidence model hands in a neutral one (``confidence=``). Everything not handed in is made here the
way ``jarvis ask`` makes it:

- the searcher (index/): opened on ``index_dir`` and warmed up (the question encoder of a hybrid index);
- the reader (jarvis/readers): ``ReaderSettings.reader`` by name, else the span reader, falling back as
  ``load_reader`` says; it is given the searcher's encoder and the index's glossary;
- the confidence models: the reader's own (``$JARVIS_HOME/calibration/`` first, then the shipped one), and
  the one for answers from the server's guide pages when one was fitted;
- the admin's taught answers (jarvis/taught.py), consulted before retrieval (not for a searcher handed in:
  the eval and the confidence fits measure the reader);
- the passage ranker (jarvis/readers/ranking.py), for the paragraph pre-ranking of ``max_paragraphs`` and for
  passage selection: when the reader declares it reads within a token budget (``Reader.needs``), a selector
  counting with the reader's tokenizer and window.
"""
from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from jarvis.config import Config, ReaderSettings, resolved_token_budget
from jarvis.confidence import (ConfidenceModel, calibration_path, load_confidence_model, load_guide_confidence_model,
                               shipped_model_path)
from jarvis.readers import load_reader
from jarvis.readers.base import Reader
from jarvis.readers.ranking import PassageRanker

if TYPE_CHECKING:
    from jarvis.pipeline import Jarvis, Searcher
    from jarvis.readers.passages import PassageSelector

log = logging.getLogger(__name__)


def _fitted(reader: str, home: Path) -> bool:
    """A confidence model was fitted for this reader (the user's, or one shipped)."""
    return calibration_path(home, reader).is_file() or shipped_model_path(reader).is_file()


def passage_selector(reader: Reader, settings: ReaderSettings,
                     ranker: PassageRanker | None = None) -> "PassageSelector | None":
    """The selector a reader asks for, ranking with ``ranker`` (None when it reads every passage given)."""
    from jarvis.readers.passages import PassageSelector

    needs = reader.needs
    if not needs.passage_selection:
        return None
    window = replace(settings, max_seq_len=needs.max_seq_len, doc_stride=needs.doc_stride,
                     token_budget=resolved_token_budget(settings.token_budget, needs.token_budget))
    return PassageSelector(window, tokenizer=needs.tokenizer, ranker=ranker)


def assemble(config: Config, index_dir: str | Path | None = None, *, searcher: "Searcher | None" = None,
             reader: Reader | None = None, confidence: ConfidenceModel | None = None,
             settings: ReaderSettings | None = None) -> "Jarvis":
    """A ready ``Jarvis``; see the module docstring. ``settings``: reader settings other than ``config.reader``."""
    from jarvis.pipeline import Jarvis

    settings = settings or config.reader
    owned = searcher is None
    if owned:
        if index_dir is None:
            raise ValueError("assemble needs an index folder or an open searcher")
        from jarvis.index import Searcher

        # Opens now: a missing index is a user error before anything heavy loads.
        searcher = Searcher(Path(index_dir), config.retrieval)
    try:
        if owned:
            searcher.warm_up()   # the question encoder of a hybrid index; the fallback reader shares it
        if reader is None:
            reader = load_reader(settings, encoder=searcher.encoder, name=settings.reader or None,
                                 glossary=searcher.glossary)
        guide_confidence = None
        if confidence is None:
            confidence = load_confidence_model(reader.name, settings, config.home)
            guide_confidence = load_guide_confidence_model(reader.name, settings, config.home)
            if settings.model and not settings.confidence_model and not _fitted(reader.name, config.home):
                log.warning("the reader %s (asked for by name) has no confidence model fitted for it: its "
                            "confidence is the generic one of span readers (threshold %.2f), not measured for it; "
                            "jarvis calibrate fits its own", reader.name, confidence.threshold)
        ranker = PassageRanker(settings.passages)
        selector = passage_selector(reader, settings, ranker)
    except BaseException:
        if owned:
            searcher.close()
        raise
    taught = None
    if owned:   # what players get (ask, serve, worker); a caller measuring readers on a searcher it holds: no
        from jarvis.taught import TaughtAnswers

        taught = TaughtAnswers.of_index(config, index_dir)
    return Jarvis(searcher, reader, confidence, settings, guide_confidence, config.top_k, selector=selector,
                  ranker=ranker, owns_searcher=owned, taught=taught)
