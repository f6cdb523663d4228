"""The span reader: an extractive QA model that cuts the answer out of a paragraph.

As in the original Jarvis, every paragraph of the top pages is read on its own as the
model's context (question + paragraph); the best span of a paragraph is the one with
the highest start logit + end logit, and the answer is the best span over all
paragraphs. Paragraphs longer than the model's window are read as overlapping windows.

Two ways to run the same computation:
- batched (default): all windows are tokenized at once, sorted by length (so a batch
  holds windows of similar length and padding stays small), and run ``batch_size`` at
  a time;
- sequential (``ReaderSettings.sequential``): one paragraph per forward pass, the
  original's way, kept so the two can be measured side by side. Both give the same
  spans and scores.

Two engines run the forward passes on a CPU (``ReaderSettings.backend``): "onnx", the model
exported once to ONNX (int8 weights by default) and run by onnxruntime (jarvis/readers/onnx_backend.py),
and "torch", the transformers model itself (dynamic int8 by default, jarvis/readers/torch_backend.py). A GPU
always runs torch. Any extractive QA model loads the same way (hub id or local directory): RoBERTa, BERT
(with token_type_ids), DistilBERT (without) and their tokenizers. Getting the model (the hub, a download,
the ONNX export, CUDA) is jarvis/readers/acquisition.py's; this module only reads with it.

SQuAD 2.0 models also score "no answer" (start and end on the first token). A window's
span only counts when it beats that window's no-answer score by
``ReaderSettings.no_answer_margin``; when no window has such a span, the reader returns
None and Jarvis says it does not know.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from jarvis.config import ReaderSettings
from jarvis.readers.acquisition import acquire
from jarvis.readers.base import Passage, ReaderNeeds, Span
from jarvis.readers.card import CONTEXT_HEADER, ReaderCard
from jarvis.readers.context import reader_context
from jarvis.readers.tokens import Tokens, Window

# The question gets at most this share of a window; the rest is for the paragraph.
MAX_QUESTION_SHARE = 0.25


def widen_to_words(text: str, start: int, end: int) -> tuple[int, int]:
    """Extend [start, end) to whole words and drop surrounding spaces and separators."""
    while start > 0 and start < len(text) and text[start - 1].isalnum() and text[start].isalnum():
        start -= 1
    while 0 < end < len(text) and text[end - 1].isalnum() and text[end].isalnum():
        end += 1
    while start < end and (text[start].isspace() or text[start] in ",;:"):
        start += 1
    while end > start and (text[end - 1].isspace() or text[end - 1] in ",;:"):
        end -= 1
    return start, end


@dataclass(frozen=True)
class _WindowResult:
    """The best span of one window, in token positions."""

    window: Window
    span_score: float
    null_score: float
    start_token: int
    end_token: int


class SpanReader:
    """An extractive QA model with its tokenizer, loaded once and reused.

    ``model`` is called with numpy arrays (input_ids, attention_mask, token_type_ids as it takes them) and
    returns start and end logits as numpy arrays: an onnxruntime session (onnx_backend.OnnxQAModel) or a
    transformers model in torch (TorchQAModel)."""

    def __init__(self, tokens: Tokens, model, settings: ReaderSettings, name: str, card: ReaderCard | None = None,
                 input_names: Sequence[str] = ("input_ids", "attention_mask"), reader_id: str = "") -> None:
        card = card or ReaderCard()
        # A trained reader reads with the window it was trained with (its card, jarvis/training).
        settings = card.applied_to(settings)
        self.card = card
        self.tokens = tokens
        self.model = model
        self.settings = settings
        self.name = name
        self.id = reader_id or name       # which confidence models were fitted for it (acquisition.reader_id)
        self._input_names = tuple(input_names)
        self.backend = model.backend
        # Long real pages: read what fits the token budget, counted with this reader's own tokenizer and window.
        self.needs = ReaderNeeds(passage_selection=True, tokenizer=tokens, max_seq_len=settings.max_seq_len,
                                 doc_stride=settings.doc_stride, token_budget=settings.token_budget)

    # ------------------------------------------------------------------ loading

    @classmethod
    def load(cls, settings: ReaderSettings) -> "SpanReader":
        """The reader of ``settings.model`` (local directory or hub id), its model got by
        jarvis/readers/acquisition.py; ModelUnavailableError if it cannot be had."""
        model = acquire(settings)
        return cls(model.tokens, model.model, settings, model.name, model.card, model.input_names, model.id)

    def warm_up(self) -> None:
        """Nothing is left to load: ``load`` (acquisition.acquire) opened the model and its tokenizer, and the
        engine's first pass costs no more than the next (about 10 ms on the shipped reader)."""

    # ------------------------------------------------------------------ reading

    def read(self, question: str, passages: Sequence[Passage]) -> Span | None:
        found = self.candidates(question, passages, 1)
        return found[0] if found else None

    def candidates(self, question: str, passages: Sequence[Passage], n: int) -> list[Span]:
        """The ``n`` best spans (one per window at most), best first, each with its logits and margins
        (``Span.signals``) for the confidence model. A span counts when it beats its window's no-answer score
        by ``no_answer_margin``, or always when the reader's card says so (the confidence model judges it)."""
        passages = [p for p in passages if p.text.strip()]
        if not passages:
            return []
        question = self._fit_question(question)
        contexts = [self._context(p) for p in passages]
        starts = [offset for _, offset in contexts]    # where each paragraph begins in its context
        results: list[_WindowResult] = []
        if self.settings.sequential:
            for i, (text, _) in enumerate(contexts):  # one paragraph per forward pass
                windows = [replace(w, source=i) for w in self._windows(question, [text])]
                results += self._score_windows(windows, starts)
        else:
            windows = sorted(self._windows(question, [text for text, _ in contexts]), key=lambda w: len(w.ids))
            size = max(1, self.settings.batch_size)
            for first in range(0, len(windows), size):
                results += self._score_windows(windows[first:first + size], starts)
        return self._best_spans(passages, starts, results, n)

    def _fit_question(self, question: str) -> str:
        """Cut an overlong question so the paragraph keeps most of the window."""
        limit = int(self.settings.max_seq_len * MAX_QUESTION_SHARE)
        offsets = self.tokens.offsets(question)
        if len(offsets) <= limit:
            return question
        return question[:offsets[limit - 1][1]]

    def _windows(self, question: str, contexts: Sequence[str]) -> list[Window]:
        """Question + context pairs as windows; a long paragraph yields several overlapping ones."""
        return self.tokens.windows(question, contexts, self.settings.max_seq_len, self.settings.doc_stride)

    def _context(self, passage: Passage) -> tuple[str, int]:
        """What is read for a passage, and where the passage begins in it: a reader trained with context
        headers reads each paragraph after its "Page > Section: " header (jarvis/readers/context.py); spans
        are only taken from the paragraph itself."""
        if self.card.context == CONTEXT_HEADER:
            return reader_context(passage.title, passage.section, passage.text)
        return passage.text, 0

    def _score_windows(self, windows: Sequence[Window], starts: Sequence[int]) -> list[_WindowResult]:
        """One forward pass over the given windows; the best span of each."""
        import numpy as np

        length = max(len(w.ids) for w in windows)
        batch = {"input_ids": np.full((len(windows), length), self.tokens.pad_id, dtype=np.int64),
                 "attention_mask": np.zeros((len(windows), length), dtype=np.int64),
                 "token_type_ids": np.zeros((len(windows), length), dtype=np.int64)}
        context = np.zeros((len(windows), length), dtype=bool)
        null_pos = np.zeros(len(windows), dtype=np.int64)
        for row, w in enumerate(windows):
            batch["input_ids"][row, :len(w.ids)] = w.ids
            batch["attention_mask"][row, :len(w.ids)] = 1
            batch["token_type_ids"][row, :len(w.ids)] = w.type_ids
            # Spans must lie inside the paragraph (sequence 1, after its header), start <= end, at most N tokens.
            first = starts[w.source]
            context[row, :len(w.ids)] = [s == 1 and w.offsets[i][0] >= first for i, s in enumerate(w.sequence_ids)]
            null_pos[row] = _cls_position(w.ids, self.tokens.cls_id)
        start_logits, end_logits = self.model({name: batch[name] for name in self._input_names})
        start_logits, end_logits = start_logits.astype(np.float32), end_logits.astype(np.float32)
        rows = np.arange(len(windows))
        null_scores = start_logits[rows, null_pos] + end_logits[rows, null_pos]
        neg_inf = np.finfo(np.float32).min / 2
        starts = np.where(context, start_logits, neg_inf)
        ends = np.where(context, end_logits, neg_inf)
        pair = starts[:, :, None] + ends[:, None, :]
        allowed = np.triu(np.ones((length, length), dtype=bool))
        allowed &= ~np.triu(np.ones((length, length), dtype=bool), self.settings.max_answer_tokens)
        pair = np.where(allowed[None], pair, neg_inf)
        flat = pair.reshape(len(windows), -1).argmax(axis=1)
        best_scores = pair.reshape(len(windows), -1)[rows, flat]
        return [_WindowResult(w, float(best_scores[row]), float(null_scores[row]), int(flat[row]) // length,
                              int(flat[row]) % length)
                for row, w in enumerate(windows) if context[row].any()]   # else the question filled the window

    def _best_spans(self, passages: Sequence[Passage], starts: Sequence[int], results: list[_WindowResult],
                    n: int) -> list[Span]:
        """The highest-ranked spans, best first (see ``candidates``)."""
        margin = self.settings.no_answer_margin
        kept = results if self.card.always_answer else [r for r in results if r.span_score - r.null_score > margin]
        if self.card.rank == "margin":
            ranked = sorted(kept, key=lambda r: -(r.span_score - r.null_score))
        else:
            ranked = sorted(kept, key=lambda r: -r.span_score)
        spans: list[Span] = []
        for rank, result in enumerate(ranked):
            passage, first = passages[result.window.source], starts[result.window.source]
            offsets = result.window.offsets
            start, end = widen_to_words(passage.text, offsets[result.start_token][0] - first,
                                        offsets[result.end_token][1] - first)
            if start >= end:
                continue
            best = spans[0].score if spans else result.span_score
            runner_up = ranked[rank + 1].span_score if rank + 1 < len(ranked) else result.null_score
            # For the confidence model (jarvis/confidence): the logits, the margins over the window's
            # no-answer score and over the next span, and how far below the best span this one is.
            signals = {"span_logit": result.span_score, "null_logit": result.null_score,
                       "span_minus_null": result.span_score - result.null_score,
                       "span_margin": result.span_score - runner_up, "below_best": best - result.span_score,
                       "candidate_rank": float(len(spans)), "windows": float(len(results))}
            spans.append(Span(passage.text[start:end], result.span_score, passage, start, end, result.null_score,
                              signals=signals))
            if len(spans) >= n:
                break
        return spans


def _cls_position(input_ids: Sequence[int], cls_token_id: int | None) -> int:
    """Where the no-answer score is read: the CLS token (first for BERT/RoBERTa)."""
    if cls_token_id is not None and cls_token_id in input_ids:
        return list(input_ids).index(cls_token_id)
    return 0
