"""Process-wide settings of the libraries Jarvis runs on, made once by an entry point (jarvis/cli.py;
the benchmarks make their own). Library code only reads them: a reader that loads never changes how
many threads the whole process computes with, an encoder that loads never turns progress bars back on.
"""
from __future__ import annotations

# More torch threads than this buys little for one question and starves the chat bridge.
MAX_DEFAULT_THREADS = 8


def set_torch_threads(threads: int = 0) -> int:
    """Torch's CPU threads for the process (``ReaderSettings.threads``; 0: torch's default, at most
    MAX_DEFAULT_THREADS); the readers read the count (the span reader's onnxruntime session too). The count set."""
    import torch

    count = threads or min(torch.get_num_threads(), MAX_DEFAULT_THREADS)
    torch.set_num_threads(count)
    return count


def hide_loading_bars() -> None:
    """transformers' own progress bars ("Loading weights" when a model loads from disk) off for the process.
    A download keeps the Hugging Face hub's progress bar (when it was on)."""
    import huggingface_hub.utils as hub
    from transformers.utils import logging as hf_logging

    hub_bars = not hub.are_progress_bars_disabled()
    hf_logging.disable_progress_bar()    # transformers' and, as a side effect, the hub's
    if hub_bars:
        hub.enable_progress_bars()
