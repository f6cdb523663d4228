"""How sure Jarvis is: the probability that an answer is right, from signals the pipeline already has.

    model = load_confidence_model(reader.name, settings, home)     # the reader's fitted model
    confidence = model.predict({**retrieval_signals(hits, title), **answer_signals(...), **span.signals})

- ``signals.py``: the retrieval's and the answer's signals (the reader adds its own, ``Span.signals``);
- ``model.py``: ``ConfidenceModel`` (a logistic regression stored as JSON) and ``fit_confidence``.

Which model a reader gets, first found:
1. ``ReaderSettings.confidence_model``, a file named explicitly;
2. ``$JARVIS_HOME/calibration/<reader>.json``, written by ``jarvis calibrate`` for this reader;
3. ``jarvis/readers/data/confidence-<reader>.json``, shipped: fitted on the dev question sets for the
   offline readers (``fallback:minilm``, ``fallback:lexical``);
4. ``jarvis/readers/data/confidence-span.json`` for a span reader without its own: a documented,
   unfitted function of its logits (see docs/confidence.md) until ``jarvis calibrate`` fits one.
"""
from __future__ import annotations

import re
from pathlib import Path

from jarvis.confidence.model import ConfidenceModel, ConfidenceModelError, fit_confidence
from jarvis.confidence.signals import (agreement_signals, answer_signals, place_signals, rerank_signals,
                                       retrieval_signals)

__all__ = ["ConfidenceModel", "ConfidenceModelError", "GUIDE", "agreement_signals", "answer_signals", "place_signals", "rerank_signals", "calibration_path", "fit_confidence",
           "load_confidence_model", "load_guide_confidence_model", "retrieval_signals", "shipped_model_path"]

SHIPPED_DIR = Path(__file__).resolve().parent.parent / "readers" / "data"
SPAN_DEFAULT = "span"


def _file_name(reader: str) -> str:
    return "confidence-" + re.sub(r"[^A-Za-z0-9._-]+", "-", reader).strip("-") + ".json"


def shipped_model_path(reader: str) -> Path:
    """Where the model shipped for ``reader`` lives (it may not exist)."""
    return SHIPPED_DIR / _file_name(reader)


def calibration_path(home: str | Path, reader: str) -> Path:
    """Where ``jarvis calibrate`` writes (and the pipeline looks for) a user's model for ``reader``."""
    return Path(home) / "calibration" / _file_name(reader)


GUIDE = "guide"   # the model of answers read on the server's own guide pages: confidence-<reader>-guide.json


def load_guide_confidence_model(reader: str, settings=None, home: str | Path | None = None) -> ConfidenceModel | None:
    """The confidence model of ``reader``'s answers from the server's guide (None: none fitted; the wiki's
    model judges them). A confidence model named in the settings judges every answer."""
    if getattr(settings, "confidence_model", "") if settings is not None else "":
        return None
    name = f"{reader}-{GUIDE}"
    for path in ([calibration_path(home, name)] if home is not None else []) + [shipped_model_path(name)]:
        if path.is_file():
            return ConfidenceModel.load(path)
    return None


def load_confidence_model(reader: str, settings=None, home: str | Path | None = None) -> ConfidenceModel:
    """The confidence model for the reader named ``reader`` (see the module docstring for the order)."""
    explicit = getattr(settings, "confidence_model", "") if settings is not None else ""
    if explicit:
        return ConfidenceModel.load(Path(explicit).expanduser())
    candidates = []
    if home is not None:
        candidates.append(calibration_path(home, reader))
    candidates.append(shipped_model_path(reader))
    if not reader.startswith("fallback:"):
        candidates.append(shipped_model_path(SPAN_DEFAULT))
    for path in candidates:
        if path.is_file():
            return ConfidenceModel.load(path)
    raise ConfidenceModelError(f"no confidence model for the reader {reader} (looked in "
                               f"{', '.join(str(p) for p in candidates)}): run jarvis calibrate")
