"""A trained model's F1 on dev examples, read as the span reader reads: every window of every passage a
question was given (its answer paragraphs and the no-answer ones from its page and the wrong pages), the
best start + end span over all of them, scored against the question's gold spans.

This is the reader alone on the passages the examples hold (no retrieval, no passage selection), which is
what a learning curve needs: it runs where training runs, a GPU included, without an index.

    f1 = dev_f1(model, tokenizer, examples, max_seq_len=256, doc_stride=96)
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Sequence

from jarvis.training.examples import QAExample
from jarvis.training.features import _cut, _question_limit

MAX_ANSWER_TOKENS = 30


@dataclass(frozen=True)
class DevScore:
    questions: int
    f1: float
    exact: float

    def summary(self) -> str:
        return f"dev F1 {self.f1:.3f}, exact {self.exact:.3f} on {self.questions} questions"


def _windows(tokenizer, examples: Sequence[QAExample], max_seq_len: int, doc_stride: int):
    limit = _question_limit(max_seq_len)
    enc = tokenizer([_cut(tokenizer, e.question, limit) for e in examples], [e.context for e in examples],
                    truncation="only_second", max_length=max_seq_len, stride=doc_stride,
                    return_overflowing_tokens=True, return_offsets_mapping=True, padding=False)
    for w, ids in enumerate(enc["input_ids"]):
        example = examples[enc["overflow_to_sample_mapping"][w]]
        seq = enc.sequence_ids(w)
        types = enc["token_type_ids"][w] if "token_type_ids" in enc else None
        yield example, ids, types, enc["offset_mapping"][w], [i for i, s in enumerate(seq) if s == 1]


def best_spans(model, tokenizer, examples: Sequence[QAExample], max_seq_len: int, doc_stride: int,
               batch_size: int = 64) -> dict[str, str]:
    """The best span (text) of every question over all of its examples' windows."""
    import torch

    device = next(model.parameters()).device
    windows = list(_windows(tokenizer, examples, max_seq_len, doc_stride))
    best: dict[str, tuple[float, str]] = {}
    model.eval()
    with torch.inference_mode():
        for first in range(0, len(windows), batch_size):
            part = windows[first:first + batch_size]
            length = max(len(w[1]) for w in part)
            ids = torch.full((len(part), length), tokenizer.pad_token_id or 0, dtype=torch.long)
            mask = torch.zeros((len(part), length), dtype=torch.long)
            types = torch.zeros((len(part), length), dtype=torch.long) if part[0][2] is not None else None
            for row, (_, w_ids, w_types, _, _) in enumerate(part):
                ids[row, :len(w_ids)] = torch.tensor(w_ids)
                mask[row, :len(w_ids)] = 1
                if types is not None:
                    types[row, :len(w_types)] = torch.tensor(w_types)
            inputs = {"input_ids": ids.to(device), "attention_mask": mask.to(device)}
            if types is not None:
                inputs["token_type_ids"] = types.to(device)
            out = model(**inputs)
            starts, ends = out.start_logits.float().cpu().numpy(), out.end_logits.float().cpu().numpy()
            for row, (example, _, _, offsets, tokens) in enumerate(part):
                if not tokens:
                    continue
                lo, hi = tokens[0], tokens[-1]
                s_log, e_log = starts[row], ends[row]
                top_s = sorted(range(lo, hi + 1), key=lambda i: -s_log[i])[:20]
                top_e = sorted(range(lo, hi + 1), key=lambda i: -e_log[i])[:20]
                for s in top_s:
                    for e in top_e:
                        if s <= e < s + MAX_ANSWER_TOKENS:
                            score = float(s_log[s] + e_log[e])
                            if score > best.get(example.question, (float("-inf"), ""))[0]:
                                best[example.question] = (score, example.context[offsets[s][0]:offsets[e][1]])
    return {question: text for question, (_, text) in best.items()}


def dev_f1(model, tokenizer, examples: Sequence[QAExample], max_seq_len: int, doc_stride: int) -> DevScore:
    """F1 and exact match of the best spans against the golds, over the questions that have an answer example."""
    from jarvis.eval.metrics import best_f1, exact_match

    golds: dict[str, tuple[str, ...]] = defaultdict(tuple)
    for e in examples:
        if e.answerable:
            golds[e.question] = e.golds or (e.answer_text,)
    predicted = best_spans(model, tokenizer, examples, max_seq_len, doc_stride)
    if not golds:
        return DevScore(0, 0.0, 0.0)
    f1 = sum(best_f1(predicted.get(q, ""), g) for q, g in golds.items()) / len(golds)
    exact = sum(max(exact_match(predicted.get(q, ""), a) for a in g) for q, g in golds.items()) / len(golds)
    return DevScore(len(golds), f1, exact)
