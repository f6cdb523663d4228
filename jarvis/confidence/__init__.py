"""How sure Jarvis is: the probability that an answer is right, from signals the pipeline already has.

    policy = load_answer_policy(reader, settings, home)            # the reader's fitted models and thresholds
    decision = policy.judge(site, {**retrieval_signals(hits, title), **answer_signals(...), **span.signals})

- ``signals.py``: the retrieval's and the answer's signals (the reader adds its own, ``Span.signals``);
- ``model.py``: ``ConfidenceModel`` (a logistic regression stored as JSON) and ``fit_confidence``;
- ``policy.py``: ``AnswerPolicy``, which model judges an answer and the threshold it must reach, by site (wiki,
  the server's guide, taught), and whether it is stated: what the pipeline, the eval and the desk decide with.

A reader's models are found by its stable id (``Reader.id``: "jarvis-minilm-qa" for Jarvis's own reader, the
folder's name for another trained one, the hub id for a hub model, "fallback:minilm"), not by the name its
answers show, which changes with how it runs ("+int8"). First found:

1. ``ReaderSettings.confidence_model``, a file named explicitly (it judges every answer, the guide's too);
2. ``$JARVIS_HOME/calibration/confidence-<id>.json``, written by ``jarvis calibrate`` for this reader (a file
   named after the reader's display name, as calibrate wrote them before ids, is still read);
3. ``jarvis/readers/data/confidence-<id>.json``, shipped: fitted on the dev question sets for Jarvis's own
   reader and the offline readers;
4. for a span reader with none of these, ``jarvis/readers/data/confidence-span.json``: a documented, unfitted
   function of its logits (see docs/confidence.md) with the default threshold, fitted for no reader. It is
   never taken silently: loading it says so, once, at start, and names the way out (``jarvis calibrate``).

Answers read on the server's guide pages have their own model when one was fitted: the same places, with
``<id>-guide`` for ``<id>``.
"""
from __future__ import annotations

import logging
import re
from pathlib import Path

from jarvis.confidence.model import ConfidenceModel, ConfidenceModelError, fit_confidence
from jarvis.confidence.policy import AnswerPolicy, Decision, likely_wrong, stated
from jarvis.confidence.signals import (agreement_signals, answer_signals, place_signals, rerank_signals,
                                       retrieval_signals)

__all__ = ["AnswerPolicy", "ConfidenceModel", "ConfidenceModelError", "Decision", "GUIDE_SUFFIX",
           "agreement_signals", "answer_signals", "calibration_path", "fit_confidence", "fitted_model_path",
           "likely_wrong", "load_answer_policy", "place_signals", "rerank_signals", "retrieval_signals", "shipped_model_path",
           "stated"]

log = logging.getLogger(__name__)

SHIPPED_DIR = Path(__file__).resolve().parent.parent / "readers" / "data"
SPAN_DEFAULT = "span"
GUIDE_SUFFIX = "guide"   # the model of answers read on the server's own guide pages: confidence-<id>-guide.json
FALLBACK_PREFIX = "fallback:"


def _file_name(reader: str) -> str:
    return "confidence-" + re.sub(r"[^A-Za-z0-9._-]+", "-", reader).strip("-") + ".json"


def shipped_model_path(reader: str) -> Path:
    """Where the model shipped for the reader id ``reader`` lives (it may not exist)."""
    return SHIPPED_DIR / _file_name(reader)


def calibration_path(home: str | Path, reader: str) -> Path:
    """Where ``jarvis calibrate`` writes (and the assembly looks for) a user's model for the reader id ``reader``."""
    return Path(home) / "calibration" / _file_name(reader)


def fitted_model_path(reader_id: str, home: str | Path | None = None, display_name: str = "") -> Path | None:
    """The model fitted for the reader ``reader_id``, first found (see the module docstring, 2 and 3); None when
    none was. ``display_name``: the name calibrate wrote a user's model under before readers had ids."""
    candidates = []
    if home is not None:
        candidates.append(calibration_path(home, reader_id))
        if display_name and display_name != reader_id:
            candidates.append(calibration_path(home, display_name))
    candidates.append(shipped_model_path(reader_id))
    return next((path for path in candidates if path.is_file()), None)


def load_answer_policy(reader, settings=None, home: str | Path | None = None) -> AnswerPolicy:
    """The answer policy of ``reader`` (a jarvis.readers Reader): its confidence models, found by its id (see the
    module docstring), with the thresholds of ``settings`` (a ReaderSettings). A span reader with no model of
    its own is judged by the unfitted default, and a warning says so; an offline reader without one is an error."""
    explicit = getattr(settings, "confidence_model", "") if settings is not None else ""
    if explicit:
        return AnswerPolicy.of(ConfidenceModel.load(Path(explicit).expanduser()), None, settings)
    path = fitted_model_path(reader.id, home, reader.name)
    if path is not None:
        wiki = ConfidenceModel.load(path)
    elif reader.id.startswith(FALLBACK_PREFIX):
        raise ConfidenceModelError(f"no confidence model for the reader {reader.id} (looked in "
                                   f"{calibration_path(home or '.', reader.id).parent} and {SHIPPED_DIR}): "
                                   "run jarvis calibrate")
    else:
        wiki = ConfidenceModel.load(shipped_model_path(SPAN_DEFAULT))
        log.warning("the reader %s has no confidence model fitted for it (none for %r in %s or %s): its answers "
                    "are judged by the span reader's unfitted default (a function of its logits) and the default "
                    "threshold %.3f, both fitted for no reader; fit its own with jarvis calibrate", reader.name,
                    reader.id, calibration_path(home or ".", reader.id).parent, SHIPPED_DIR, wiki.threshold)
    guide_path = fitted_model_path(f"{reader.id}-{GUIDE_SUFFIX}", home, f"{reader.name}-{GUIDE_SUFFIX}")
    guide = ConfidenceModel.load(guide_path) if guide_path is not None else None
    return AnswerPolicy.of(wiki, guide, settings)
