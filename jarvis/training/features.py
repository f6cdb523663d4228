"""Examples to model inputs: question + context windows with the answer's start and end token.

The same windowing as the span reader's (jarvis/readers/span.py): the question first, the context cut into
windows of ``max_seq_len`` tokens that overlap by ``doc_stride``. A window that does not hold the whole
answer, and every window of an unanswerable example, points start and end at the first token ([CLS]), the
SQuAD 2.0 way of saying "no answer here".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from jarvis.training.examples import QAExample


@dataclass(frozen=True)
class Feature:
    input_ids: list[int]
    token_type_ids: list[int] | None
    start: int
    end: int
    context: tuple[int, int] = (0, -1)   # first and last context token (the span a reader may answer from)
    gold: bool = True                    # False: a pair only a teacher labels (no gold span to learn)
    soft: object | None = None           # the teacher's start and end distributions (distill.SoftTargets)


def _question_limit(max_seq_len: int) -> int:
    from jarvis.readers.span import MAX_QUESTION_SHARE

    return int(max_seq_len * MAX_QUESTION_SHARE)


def encode_windows(tokenizer, examples: Sequence[QAExample], max_seq_len: int, doc_stride: int, chunk: int = 512):
    """Every window of every example, in order: (example, input ids, token type ids or None, offsets, context
    token indices). The one tokenization training, its teacher labels and its dev score share."""
    limit = _question_limit(max_seq_len)
    for first in range(0, len(examples), chunk):
        part = examples[first:first + chunk]
        questions = [_cut(tokenizer, e.question, limit) for e in part]
        enc = tokenizer(questions, [e.context for e in part], truncation="only_second", max_length=max_seq_len,
                        stride=doc_stride, return_overflowing_tokens=True, return_offsets_mapping=True,
                        padding=False)
        for w, ids in enumerate(enc["input_ids"]):
            seq = enc.sequence_ids(w)
            types = enc["token_type_ids"][w] if "token_type_ids" in enc else None
            yield (part[enc["overflow_to_sample_mapping"][w]], ids, types, enc["offset_mapping"][w],
                   [i for i, s in enumerate(seq) if s == 1])


def make_features(tokenizer, examples: Sequence[QAExample], max_seq_len: int, doc_stride: int,
                  chunk: int = 512) -> list[Feature]:
    """Tokenized windows of every example (several for a long context)."""
    from jarvis.training.examples import TEACHER_ONLY

    features: list[Feature] = []
    for example, ids, types, offsets, tokens in encode_windows(tokenizer, examples, max_seq_len, doc_stride, chunk):
        start = end = 0
        if example.answerable:
            a_start, a_end = example.answer_start, example.answer_start + len(example.answer_text)
            if tokens and offsets[tokens[0]][0] <= a_start and offsets[tokens[-1]][1] >= a_end:
                start = next(i for i in tokens if offsets[i][1] > a_start)
                end = next(i for i in reversed(tokens) if offsets[i][0] < a_end)
        context = (tokens[0], tokens[-1]) if tokens else (0, -1)
        features.append(Feature(list(ids), list(types) if types is not None else None, start, end, context,
                                gold=example.origin != TEACHER_ONLY))
    return features


def _cut(tokenizer, question: str, limit: int) -> str:
    offsets = tokenizer(question, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    return question if len(offsets) <= limit else question[:offsets[limit - 1][1]]
