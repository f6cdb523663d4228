"""Getting a span reader's model: from a local folder or the Hugging Face hub (the cache first, one quick look at
the hub, then a download), exported to ONNX once and cached, quantised to int8, on a GPU when there is one.
Inference is jarvis/readers/span.py's; this module only brings it a ready model (``acquire``).

    model = acquire(settings)           # SpanModel: tokens, model, name, card, input names
    SpanReader(model.tokens, model.model, settings, model.name, model.card, model.input_names)

On a GPU the model runs in torch; on a CPU with ``ReaderSettings.backend``: "onnx" (exported once, then
onnxruntime: jarvis/readers/onnx_backend.py) or "torch" (jarvis/readers/torch_backend.py); int8 when
``settings.quantize``. A reader trained by Jarvis brings its own int8 ONNX model and its card: on a CPU it is
run as it is, with neither torch nor transformers. A model that cannot be had is a ModelUnavailableError (the
offline readers answer instead, jarvis/readers/__init__.py); a hub id neither cached nor reachable fails in
seconds, before transformers is imported.
"""
from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from jarvis.config import READER_BACKENDS, ReaderSettings
from jarvis.errors import first_line
from jarvis.readers.base import ModelUnavailableError, ReaderSettingsError
from jarvis.readers.card import ReaderCard
from jarvis.readers.tokens import Tokens
from jarvis.runtime import compute_threads

log = logging.getLogger(__name__)

# Seconds to wait for the Hugging Face hub before deciding it is unreachable. A model that
# is not cached must fail fast when offline, not after the hub client's retries (~45 s).
HUB_PROBE_TIMEOUT = 5.0


@dataclass(frozen=True)
class SpanModel:
    """A span reader's model, ready to run: its tokenizer, the model (called with numpy arrays), what Answer.reader
    calls it, its card, and the inputs the model takes."""

    tokens: Tokens
    model: object
    name: str
    card: ReaderCard
    input_names: Sequence[str]
    id: str                     # reader_id: which confidence models were fitted for it


def reader_id(source: str) -> str:
    """A span reader's stable id, whatever runs it (int8 or not, onnx or torch): the folder's name for a model
    on disk ("jarvis-minilm-qa", Jarvis's own), the hub id for a hub model ("deepset/roberta-base-squad2")."""
    local = Path(source).expanduser()
    return local.resolve().name if local.is_dir() else source


def acquire(settings: ReaderSettings) -> SpanModel:
    """``settings.model`` (local directory or hub id), ready to run (see the module docstring);
    ModelUnavailableError if it cannot be had, ReaderSettingsError for an unknown backend."""
    if settings.backend not in READER_BACKENDS:
        raise ReaderSettingsError(f"unknown reader backend {settings.backend!r} "
                                  f"(choose from {', '.join(READER_BACKENDS)})")
    threads = compute_threads()   # the process's, set once by the entry point (jarvis/runtime.py)
    card = ReaderCard.of(settings.model)
    shipped = card.onnx_file(settings.model) if settings.quantize else None
    if settings.backend == "onnx" and shipped is not None and not cuda_available():
        model = _open_onnx(shipped, threads)
        return SpanModel(Tokens.from_folder(settings.model), model, model_name(settings.model, True), card,
                         model.input_names, reader_id(settings.model))
    if settings.backend == "onnx" and not cuda_available():
        tokenizer = _check_tokenizer(settings.model, load_pretrained(settings.model, with_model=False)[0])
        model = _onnx_model(settings, tokenizer, threads)
        return SpanModel(Tokens.from_transformers(tokenizer), model, model_name(settings.model, settings.quantize),
                         card, model.input_names, reader_id(settings.model))
    from jarvis.readers.torch_backend import TorchQAModel

    tokenizer, model = load_pretrained(settings.model)
    tokenizer = _check_tokenizer(settings.model, tokenizer)
    quantized = False
    if cuda_available():
        model = model.to("cuda")  # a GPU beats int8 on a CPU; dynamic quantization is CPU-only
    elif settings.quantize:
        model, quantized = _quantize(model), True
    return SpanModel(Tokens.from_transformers(tokenizer), TorchQAModel(model), model_name(settings.model, quantized),
                     card, model_input_names(tokenizer, model), reader_id(settings.model))


def model_input_names(tokenizer, model) -> list[str]:
    """The tokenizer outputs the model takes: DistilBERT has no token_type_ids, BERT has, RoBERTa ignores them."""
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in tokenizer.model_input_names]
    accepted = getattr(model, "input_names", None)   # an onnxruntime session says what it takes
    if accepted is None:
        import inspect

        accepted = inspect.signature(model.forward).parameters
    return [n for n in names if n in accepted]


def cuda_available() -> bool:
    """Whether torch sees a CUDA GPU; without an NVIDIA driver on the machine torch is not even imported
    (a second of a cold start on the onnx path)."""
    import shutil

    if not (Path("/dev/nvidiactl").exists() or shutil.which("nvidia-smi")):
        return False
    import torch

    return torch.cuda.is_available()


def _check_tokenizer(source: str, tokenizer):
    if not getattr(tokenizer, "is_fast", False):
        raise ModelUnavailableError(f"{source}: the span reader needs a fast tokenizer (offsets)")
    return tokenizer


def _onnx_model(settings: ReaderSettings, tokenizer, threads: int):
    """The ONNX Runtime model of ``settings.model``, exported on first use and cached."""
    from jarvis.readers.onnx_backend import export_path, export_qa_model

    directory = _model_directory(settings.model)
    if directory is None:                     # a hub id not downloaded yet: download (or fail) first
        load_pretrained(settings.model)
        directory = _model_directory(settings.model)
    if directory is None:
        raise ModelUnavailableError(f"cannot find the files of {settings.model} after loading it")
    export_dir = Path(settings.export_dir).expanduser() if settings.export_dir else directory / "onnx"
    target = export_path(directory, export_dir, settings.quantize, label=model_name(settings.model))
    if not target.is_file():
        log.warning("exporting %s to ONNX%s (first use only)", settings.model, " int8" if settings.quantize else "")
        _, model = load_pretrained(str(directory))
        try:
            export_qa_model(model, model_input_names(tokenizer, model), target, settings.quantize)
        except OSError as exc:
            raise ModelUnavailableError(f"cannot write the ONNX export to {target.parent} ({first_line(exc)})") from exc
        except Exception as exc:  # noqa: BLE001 - the exporter raises many kinds; all mean "this model cannot"
            raise ModelUnavailableError(f"cannot export {settings.model} to ONNX ({first_line(exc)}); "
                                        "use the torch backend") from exc
        del model
    return _open_onnx(target, threads)


def _open_onnx(path: Path, threads: int):
    from jarvis.readers.onnx_backend import OnnxQAModel

    try:
        return OnnxQAModel(path, threads)
    except Exception as exc:  # noqa: BLE001 - onnxruntime's own exception types
        raise ModelUnavailableError(f"cannot open the ONNX model {path} ({first_line(exc)})") from exc


def _model_directory(source: str) -> Path | None:
    """The directory holding the model's files: the local path, or the hub cache's snapshot (None if not cached)."""
    local = Path(source).expanduser()
    if local.is_dir():
        return local
    from transformers.utils import cached_file

    try:
        config = cached_file(source, "config.json", local_files_only=True)
    except (OSError, ValueError):
        return None
    if config is None:
        return None
    directory = Path(config).parent
    has_weights = any(p.suffix in (".safetensors", ".bin") for p in directory.iterdir())
    return directory if has_weights else None


def model_name(source: str, quantized: bool = False) -> str:
    """What Answer.reader shows: the model's last path component (``roberta-base-squad2``)."""
    name = Path(source.rstrip("/\\")).name or source
    return f"{name}+int8" if quantized else name


def _looks_like_path(source: str) -> bool:
    return source.startswith((".", "/", "~", "\\")) or (len(source) > 1 and source[1] == ":") or source.count("/") > 1


@contextmanager
def no_progress_bars(active: bool = True):
    """Hide transformers' progress bars (e.g. "Loading weights" when loading from disk) for the block."""
    from transformers.utils import logging as hf_logging

    hide = active and hf_logging.is_progress_bar_enabled()
    if hide:
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if hide:
            hf_logging.enable_progress_bar()


def load_pretrained(source: str, with_model: bool = True):
    """Tokenizer and QA model (None unless ``with_model``) from a local directory or the hub (cache
    first, then download). A hub id that is neither cached nor reachable fails before transformers is
    imported (seconds of a cold start, offline)."""

    def load(name: str, local_only: bool):
        from transformers import AutoModelForQuestionAnswering, AutoTokenizer

        with no_progress_bars(local_only):  # a download shows its progress; a load from disk needs none
            tokenizer = AutoTokenizer.from_pretrained(name, local_files_only=local_only)
            if not with_model:
                return tokenizer, None
            return tokenizer, AutoModelForQuestionAnswering.from_pretrained(name, local_files_only=local_only)

    if not source:
        raise ModelUnavailableError("no QA model configured")
    local = Path(source).expanduser()
    if local.is_dir():
        try:
            return load(str(local), local_only=True)
        except (OSError, ValueError, KeyError) as exc:
            raise ModelUnavailableError(f"{local} is not a usable QA model directory ({first_line(exc)})") from exc
    if local.exists() or _looks_like_path(source):
        raise ModelUnavailableError(f"no model directory at {local}")

    # A hub id: the local cache first (no network at all when it is there) ...
    if _in_hub_cache(source):
        try:
            return load(source, local_only=True)
        except (OSError, ValueError):
            pass
    from huggingface_hub import constants

    if constants.is_offline_mode():
        raise ModelUnavailableError(f"{source} is not in the Hugging Face cache and HF_HUB_OFFLINE is set")
    # ... then one quick, retry-free look at the hub before the real (retrying) download.
    _probe_hub(source)
    log.warning("downloading QA model %s (first use only)", source)
    try:
        return load(source, local_only=False)
    except (OSError, ValueError) as exc:
        raise ModelUnavailableError(f"cannot load {source} ({first_line(exc)})") from exc


def _in_hub_cache(repo_id: str) -> bool:
    """Whether the Hugging Face cache holds the model's config (huggingface_hub alone: no transformers)."""
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(repo_id, "config.json")
    except (OSError, ValueError):   # a malformed id: let the real load say what is wrong
        return True
    return isinstance(found, str)


def _probe_hub(repo_id: str) -> None:
    """Raise ModelUnavailableError at once when the hub is unreachable or has no such model."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    try:
        get_hf_file_metadata(hf_hub_url(repo_id, "config.json"), timeout=HUB_PROBE_TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - httpx, HfHubHTTPError, OSError, ValueError all mean "cannot"
        raise ModelUnavailableError(f"cannot download {repo_id} ({first_line(exc)})") from exc


def _quantize(model):
    """Dynamic int8 quantization of the Linear layers (CPU inference speed-up), in place: no second copy."""
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao.quantization deprecation notices
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)
