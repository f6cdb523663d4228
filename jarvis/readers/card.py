"""A trained reader's card (``jarvis-reader.json`` in its folder): how it reads, and what it was made from.

Readers trained by ``jarvis train-reader`` (jarvis/training) read with the window they were trained with and
with a "Page > Section: " header before each paragraph (jarvis/readers/context.py); their folder also holds
the int8 ONNX export (``model.int8.onnx``) the span reader runs as it is, with no export step and no torch
weights needed. A model without a card (a hub checkpoint such as deepset/roberta-base-squad2) reads plain
paragraphs with the configured window.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from jarvis.config import ReaderSettings
from jarvis.readers.base import ModelUnavailableError

READER_CARD = "jarvis-reader.json"
ONNX_NAME = "model.int8.onnx"
CONTEXT_PLAIN = "plain"
CONTEXT_HEADER = "header"
CONTEXTS = (CONTEXT_PLAIN, CONTEXT_HEADER)
RANKS = ("span", "margin")
# How a reader chooses among its windows and how much it reads: chosen for a reader on dev sets, and kept by a
# reader made from it (a training that continues it, an average it leads) until chosen again.
CHOICES = ("rank", "always_answer", "token_budget")


def reading_choices(folder: str | Path) -> dict:
    """The reading choices (``CHOICES``) in the card of the reader folder ``folder``; {} without a card."""
    path = Path(folder).expanduser() / READER_CARD
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        return {}
    return {key: data[key] for key in CHOICES if isinstance(data, dict) and key in data}


@dataclass(frozen=True)
class ReaderCard:
    context: str = CONTEXT_PLAIN
    max_seq_len: int | None = None     # None: the configured window
    doc_stride: int | None = None
    # How the best span is chosen across windows: "span" (the highest start + end logit) or "margin" (the
    # highest start + end logit over the window's own no-answer score).
    rank: str = "span"
    # Always give the best span, however low, and leave "not sure" to the confidence model (which weighs the
    # span's margin over no-answer): a "not sure" reply can then still quote where the answer most likely is.
    # False: a span must beat its window's no-answer score by ReaderSettings.no_answer_margin.
    always_answer: bool = False
    # The tokens a question this reader reads by default (chosen for it on dev sets); None: the setting's default.
    token_budget: int | None = None

    @classmethod
    def of(cls, source: str) -> "ReaderCard":
        """The card in the model folder ``source``; the plain default for hub ids and folders without one."""
        path = Path(source).expanduser() / READER_CARD if source else None
        if path is None or not path.is_file():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            card = cls(context=str(data.get("context", CONTEXT_PLAIN)),
                       max_seq_len=int(data["max_seq_len"]) if data.get("max_seq_len") else None,
                       doc_stride=int(data["doc_stride"]) if data.get("doc_stride") is not None else None,
                       rank=str(data.get("rank", "span")), always_answer=bool(data.get("always_answer", False)),
                       token_budget=int(data["token_budget"]) if data.get("token_budget") is not None else None)
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            raise ModelUnavailableError(f"{path} is not a readable reader card ({exc})") from exc
        if card.rank not in RANKS:
            raise ModelUnavailableError(f"{path}: unknown rank {card.rank!r} (choose from {', '.join(RANKS)})")
        if card.token_budget is not None and card.token_budget < 0:
            raise ModelUnavailableError(f"{path}: token_budget must be 0 or more, not {card.token_budget}")
        if card.context not in CONTEXTS:
            raise ModelUnavailableError(f"{path}: unknown context {card.context!r} (choose from {', '.join(CONTEXTS)})")
        return card

    def applied_to(self, settings: ReaderSettings) -> ReaderSettings:
        changes = {}
        if self.max_seq_len:
            changes["max_seq_len"] = self.max_seq_len
        if self.doc_stride is not None:
            changes["doc_stride"] = min(self.doc_stride, (self.max_seq_len or settings.max_seq_len) // 2)
        if self.token_budget is not None and settings.token_budget is None:   # a budget set by the user wins
            changes["token_budget"] = self.token_budget
        return replace(settings, **changes) if changes else settings

    @staticmethod
    def onnx_file(source: str) -> Path | None:
        """The reader's own int8 ONNX export, when its folder has one."""
        path = Path(source).expanduser() / ONNX_NAME if source else None
        return path if path is not None and path.is_file() else None
