"""What several commands do: the models' process-wide settings, the index folder, JSON on stdout."""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from jarvis.config import Config
from jarvis.errors import JarvisError

log = logging.getLogger(__name__)

BUILD_COMMAND = "jarvis index --corpus FILE --index {path}"


def set_up_models(config: Config, answering: bool = True) -> None:
    """Before a command's first model loads (not before its quick checks): the process-wide settings of the
    libraries, once (jarvis/runtime.py): no "Loading weights" bars, and for a command that answers questions
    the compute threads (ReaderSettings.threads). Neither torch nor transformers is imported for it."""
    from jarvis.runtime import hide_loading_bars, set_threads

    hide_loading_bars()
    if answering:
        set_threads(config.reader.threads)


def emit_json(value: object) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def index_dir(args: argparse.Namespace, config: Config) -> Path:
    """The index named by --index, or the default one (built from the bundled corpus on first use)."""
    from jarvis.index import ensure_index

    if args.index:
        return Path(args.index)
    from jarvis.index.dense import encoder_available

    profile = config.index_profile
    if not encoder_available(profile, config.retrieval.encoder_model):
        profile = "lexical"   # no encoder for the profile's vectors (installed without the extra): BM25F alone
    return ensure_index(config.bundled_corpus, config.default_index_dir, profile=profile, progress=not args.quiet,
                        settings=config.retrieval)


def check_index_folder(index: str | None) -> None:
    """A named index folder must be there before anything heavy loads (serve, worker)."""
    if index and not Path(index).is_dir():
        raise JarvisError(f"index: {index}: no such index directory (build it: jarvis index --corpus FILE "
                          "--index DIR)")


def training_questions(args: argparse.Namespace, config: Config) -> tuple[list[Path], list]:
    """The corpora training reads (``--realbed`` first, then ``--corpus``; the bundled one when none is named) and
    the questions of ``--questions`` to train on, each with its file's name: (corpora, [(file name, Question)]).
    Left out: questions about the test bed's held-out pages, and those asked in a ``--held-back`` set."""
    from jarvis.eval.questions import load_questions
    from jarvis.question_text import normalize_question

    corpora = [Path(c) for c in args.corpus or []]
    excluded: set[str] = set()
    if args.realbed:
        from jarvis.eval.realbed import heldout_titles, realbed_corpus

        corpora.insert(0, realbed_corpus(config.home, config.realbed_pages, config.crawl, progress=not args.quiet))
        excluded = {title.casefold() for title in heldout_titles(config.realbed_pages)}
    corpora = corpora or [config.bundled_corpus]
    questions = [(Path(path).stem, q) for path in args.questions for q in load_questions(path)]
    held_back = {normalize_question(q.text) for path in args.held_back or [] for q in load_questions(path)}
    kept = [(name, q) for name, q in questions
            if q.expected_title.casefold() not in excluded and normalize_question(q.text) not in held_back]
    if len(kept) < len(questions):
        log.warning("left out %d questions about held-out pages or asked in a held-back set (never trained on)",
                    len(questions) - len(kept))
    return corpora, kept
