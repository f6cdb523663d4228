"""Process-wide settings of the libraries Jarvis runs on, made once by an entry point (jarvis/cli/,
``set_up_models``; the benchmarks make their own). Library code only reads them: a reader that loads never changes how
many threads the whole process computes with, an encoder that loads never turns progress bars back on.

Setting them imports nothing heavy: a setting for torch or transformers is applied at once when the
library is already loaded, else right after its first import (a cold ``jarvis ask`` that reads with
onnxruntime never loads either of them).
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import logging
import os
import sys
from typing import Callable

log = logging.getLogger(__name__)

# More threads than this buys little for one question and starves the chat bridge.
MAX_DEFAULT_THREADS = 8

_threads = 0     # the entry point's count (0: none set)


def default_threads() -> int:
    """The machine's cores, at most MAX_DEFAULT_THREADS."""
    return min(os.cpu_count() or 1, MAX_DEFAULT_THREADS)


def set_threads(threads: int = 0) -> int:
    """The process's CPU threads for model inference (``ReaderSettings.threads``; 0: ``default_threads()``):
    torch's intra-op threads, the span reader's onnxruntime sessions and FAISS's. The count set."""
    global _threads
    _threads = threads or default_threads()
    count = _threads
    when_imported("torch", "threads", lambda torch: torch.set_num_threads(count))
    when_imported("faiss", "threads", lambda faiss: faiss.omp_set_num_threads(count))   # the passage vectors' search
    return count


def compute_threads() -> int:
    """The count the entry point set; ``default_threads()`` when none did (a library used on its own)."""
    return _threads or default_threads()


def hide_loading_bars() -> None:
    """transformers' own progress bars ("Loading weights" when a model loads from disk) off for the process.
    A download keeps the Hugging Face hub's progress bar (when it was on)."""
    when_imported("transformers", "loading bars", _hide_transformers_bars)


def _hide_transformers_bars(_transformers) -> None:
    import huggingface_hub.utils as hub
    from transformers.utils import logging as hf_logging

    hub_bars = not hub.are_progress_bars_disabled()
    hf_logging.disable_progress_bar()    # transformers' and, as a side effect, the hub's
    if hub_bars:
        hub.enable_progress_bars()


# --------------------------------------------------------------------------- applied on first import


def when_imported(module: str, setting: str, apply: Callable[[object], None]) -> None:
    """``apply(module)`` now if ``module`` (a top-level package) is loaded, else right after its first import.
    A later call for the same ``setting`` of the module replaces a pending one."""
    loaded = sys.modules.get(module)
    if loaded is not None:
        apply(loaded)
        return
    finder = next((f for f in sys.meta_path if isinstance(f, _AfterImport)), None)
    if finder is None:
        finder = _AfterImport()
        sys.meta_path.insert(0, finder)
    finder.pending.setdefault(module, {})[setting] = apply


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for a module with settings pending, it wraps the real loader so that they are
    applied once the module has run."""

    def __init__(self) -> None:
        self.pending: dict[str, dict[str, Callable[[object], None]]] = {}

    def find_spec(self, fullname, path=None, target=None):
        actions = self.pending.pop(fullname, None)
        if actions is None:
            return None
        try:
            sys.meta_path.remove(self)   # the real finders, without this one
            spec = importlib.util.find_spec(fullname)
        finally:
            if self.pending:
                sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _Applying(spec.loader, actions)
        return spec


class _Applying(importlib.abc.Loader):
    def __init__(self, loader, actions: dict[str, Callable[[object], None]]) -> None:
        self.loader, self.actions = loader, actions

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        self.loader.exec_module(module)
        loaded = sys.modules.get(module.__name__, module)
        for setting, apply in self.actions.items():
            try:
                apply(loaded)
            except Exception as exc:  # noqa: BLE001 - a setting never breaks the import itself
                log.debug("could not apply %s to %s: %s", setting, module.__name__, exc)

    def __getattr__(self, name: str):
        return getattr(self.loader, name)
