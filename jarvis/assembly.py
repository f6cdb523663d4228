"""The one place the answering path is put together: index, reader, answer policy, passage selection, cache.

    with assemble(config, index_dir) as jarvis:          # what `jarvis ask` and `jarvis serve` run
        answer = jarvis.ask("what do cows drop?")

``ask``, ``serve``, ``worker``, ``eval``, ``calibrate`` and the benchmarks all come through here, so what is
measured is what players get. A caller that compares several readers over one index hands in the open
searcher (``searcher=``: it stays open, the caller closes it) and the reader (``reader=``); a caller that
fits a confidence model hands in an answer policy with a neutral model (``policy=``). Everything not handed
in is made here the way ``jarvis ask`` makes it:

- the searcher (index/): opened on ``index_dir`` and warmed up (the question encoder of a hybrid index);
- the reader (jarvis/readers): ``ReaderSettings.reader`` by name, else the span reader, falling back as
  ``load_reader`` says; it is given the searcher's encoder and the index's glossary;
- the answer policy (jarvis/confidence/policy.py): the reader's confidence models (``$JARVIS_HOME/calibration/``
  first, then the shipped one; the one for answers from the server's guide pages when one was fitted) with the
  thresholds of the settings;
- the admin's taught answers (jarvis/taught.py), consulted before retrieval (not for a searcher handed in:
  the eval and the confidence fits measure the reader);
- the passage ranker (jarvis/readers/ranking.py), for the paragraph pre-ranking of ``max_paragraphs`` and for
  passage selection: when the reader declares it reads within a token budget (``Reader.needs``), a selector
  counting with the reader's tokenizer and window.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from jarvis.config import Config, ReaderSettings, resolved_token_budget
from jarvis.confidence import AnswerPolicy, load_answer_policy
from jarvis.readers import load_reader
from jarvis.readers.base import Reader
from jarvis.readers.ranking import PassageRanker
from jarvis.readers.rerank import load_reranker

if TYPE_CHECKING:
    from jarvis.pipeline import Jarvis, Retriever
    from jarvis.readers.passages import PassageSelector


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


def assemble(config: Config, index_dir: str | Path | None = None, *, searcher: "Retriever | None" = None,
             reader: Reader | None = None, policy: AnswerPolicy | None = None,
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
            reader.warm_up()
        if policy is None:
            policy = load_answer_policy(reader, settings, config.home)
        ranker = PassageRanker(settings.passages)
        selector = passage_selector(reader, settings, ranker)
        reranker = load_reranker(settings.reranker, settings.threads)
        if reranker is not None:
            reranker.warm_up()
    except BaseException:
        if owned:
            searcher.close()
        raise
    taught = None
    if owned:   # what players get (ask, serve, worker); a caller measuring readers on a searcher it holds: no
        from jarvis.taught import TaughtAnswers

        taught = TaughtAnswers.of_index(config, index_dir)
    return Jarvis(searcher, reader, policy, settings, config.top_k, selector=selector, ranker=ranker,
                  reranker=reranker, owns_searcher=owned, taught=taught)
