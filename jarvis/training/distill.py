"""Distillation: a student reader learns from a teacher reader's start and end distributions.

The teacher and the student may tokenize differently (MPNet's and BERT-uncased's WordPiece, say), so the
teacher reads each of the student's windows as text: the question, and the stretch of context the window
covers. Its start and end probabilities (a softmax at temperature T over [CLS] and the context tokens) are
carried onto the student's tokens through character offsets:

- a student token's start probability is the sum of those of the teacher tokens whose first character falls
  inside that student token's span;
- its end probability, the sum of those of the teacher tokens whose last character does;
- the teacher's no-answer ([CLS]) mass goes to the student's [CLS].

``teacher_labels`` computes these once (on a GPU where there is one) and ``write_labels`` stores them, the
top ``top_k`` entries of each distribution in float16, keyed by a hash of the student window's token ids;
a student then trains on a CPU from the stored labels (``read_labels``, ``attach``). The training loss of a
window (``trainer``) is ``(1 - weight) * gold cross-entropy + weight * T² * KL(teacher ‖ student at T)``,
the student's softmax taken over [CLS] and the context tokens as the teacher's is; a pair only the teacher
labels (``examples.TEACHER_ONLY``) has the distillation term alone.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from jarvis.training.examples import QAExample
from jarvis.training.features import Feature, _cut, _question_limit, encode_windows
from jarvis.training.models import TrainingError

LABELS_FORMAT = 1


@dataclass(frozen=True)
class DistillSettings:
    temperature: float = 2.0     # the softmax temperature of both distributions
    weight: float = 0.5          # the distillation term's share of the loss (the gold cross-entropy has the rest)
    top_k: int = 16              # entries kept of each stored distribution


@dataclass(frozen=True)
class SoftTargets:
    """A student window's teacher distributions: (token index, probability) pairs, each summing to 1."""

    start: tuple[tuple[int, float], ...]
    end: tuple[tuple[int, float], ...]


@dataclass
class TeacherLabels:
    targets: dict[int, SoftTargets]      # by window_key
    temperature: float
    teacher: str = ""
    windows: int = 0
    seconds: float = 0.0
    tokenizers: str = ""                 # the tokenizers release that cut the windows (read from a labels file)

    def summary(self) -> str:
        return (f"teacher labels of {len(self.targets)} windows at temperature {self.temperature:g}"
                + (f" from {self.teacher}" if self.teacher else "") + (f" in {self.seconds:.0f} s" if self.seconds else ""))


def window_key(input_ids: Sequence[int]) -> int:
    """A window's identity: a 63-bit hash of its token ids (the same question and context read the same way)."""
    import numpy as np

    data = np.asarray(input_ids, dtype="<u4").tobytes()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little") >> 1


def map_to_student(start_probs, end_probs, teacher_chars, student_chars) -> tuple[list[float], list[float]]:
    """The teacher's start and end distributions carried onto the student's tokens through character offsets.

    ``start_probs``/``end_probs``: the teacher's probabilities, entry 0 for [CLS] and entry i (i >= 1) for its
    context token i - 1, whose character span (in the context) is ``teacher_chars[i - 1]``. ``student_chars``:
    the character spans of the student's context tokens. Returns the student's distributions, entry 0 for its
    [CLS] and entry j (j >= 1) for its context token j - 1; a teacher token outside every student token goes to
    the nearest one before it (after it, at the very start); a teacher token with exactly a student token's
    span goes to that token."""
    import numpy as np

    n = len(student_chars)
    starts = np.array([s for s, _ in student_chars], dtype=np.int64).reshape(-1)
    ends = np.array([e for _, e in student_chars], dtype=np.int64).reshape(-1)
    t_first = np.array([s for s, _ in teacher_chars], dtype=np.int64).reshape(-1)
    t_last = np.array([e for _, e in teacher_chars], dtype=np.int64).reshape(-1) - 1   # the last character
    out_start, out_end = np.zeros(n + 1), np.zeros(n + 1)
    out_start[0], out_end[0] = start_probs[0], end_probs[0]
    if n and len(teacher_chars):
        # Start: the student token whose span holds the teacher token's first character (the last one that
        # begins at or before it). End: the one whose span holds its last character (the first that ends after it).
        at_start = np.clip(np.searchsorted(starts, t_first, side="right") - 1, 0, n - 1)
        at_end = np.clip(np.searchsorted(ends, t_last, side="right"), 0, n - 1)
        # A teacher token with exactly a student token's span is that token (identical tokenizers map one to
        # one, zero-width tokens such as a lone byte-level space included).
        same: dict[tuple[int, int], list[int]] = {}
        for j, span in enumerate(student_chars):
            same.setdefault((int(span[0]), int(span[1])), []).append(j)
        for i, span in enumerate(teacher_chars):
            matches = same.get((int(span[0]), int(span[1])))
            if matches:
                at_start[i] = at_end[i] = matches.pop(0) if len(matches) > 1 else matches[0]
        np.add.at(out_start, at_start + 1, np.asarray(start_probs[1:len(teacher_chars) + 1], dtype=np.float64))
        np.add.at(out_end, at_end + 1, np.asarray(end_probs[1:len(teacher_chars) + 1], dtype=np.float64))
    return (out_start / max(out_start.sum(), 1e-12)).tolist(), (out_end / max(out_end.sum(), 1e-12)).tolist()


def _top(probs: Sequence[float], positions: Sequence[int], k: int) -> tuple[tuple[int, float], ...]:
    order = sorted(range(len(probs)), key=lambda i: -probs[i])[:k]
    kept = [(positions[i], probs[i]) for i in order if probs[i] > 0]
    total = sum(p for _, p in kept) or 1.0
    return tuple((pos, p / total) for pos, p in kept)


def teacher_labels(teacher, teacher_tokenizer, student_tokenizer, examples: Sequence[QAExample], max_seq_len: int,
                   doc_stride: int, settings: DistillSettings = DistillSettings(), batch_size: int = 64,
                   teacher_name: str = "", progress: bool = False) -> TeacherLabels:
    """The teacher's distributions on every window the student reads of ``examples`` (see the module doc)."""
    import torch
    from tqdm import tqdm

    began = time.perf_counter()
    device = next(teacher.parameters()).device
    teacher.eval()
    limit = _question_limit(max_seq_len)
    targets: dict[int, SoftTargets] = {}
    windows = list(encode_windows(student_tokenizer, examples, max_seq_len, doc_stride))
    bf16 = device.type == "cuda" and torch.cuda.is_bf16_supported()
    with torch.inference_mode(), tqdm(total=len(windows), desc="teacher labels", unit="window", disable=not progress,
                                      dynamic_ncols=True) as bar:
        for first in range(0, len(windows), batch_size):
            part = windows[first:first + batch_size]
            spans = [(offsets[tokens[0]][0], offsets[tokens[-1]][1]) if tokens else (0, 0)
                     for _, _, _, offsets, tokens in part]
            enc = teacher_tokenizer([_cut(teacher_tokenizer, e.question, limit) for e, *_ in part],
                                    [e.context[a:b] for (e, *_), (a, b) in zip(part, spans)],
                                    truncation="only_second", max_length=min(512, max_seq_len * 2),
                                    return_offsets_mapping=True, padding=True, return_tensors="pt")
            offsets = enc.pop("offset_mapping").tolist()
            inputs = {k: v.to(device) for k, v in enc.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
                out = teacher(**inputs)
            s_logits, e_logits = out.start_logits.float().cpu(), out.end_logits.float().cpu()
            for row, ((_, ids, _, s_offsets, tokens), (a, _)) in enumerate(zip(part, spans)):
                context = [i for i, s in enumerate(enc.sequence_ids(row)) if s == 1]
                allowed = torch.tensor([0] + context)
                s_p = torch.softmax(s_logits[row, allowed] / settings.temperature, -1).tolist()
                e_p = torch.softmax(e_logits[row, allowed] / settings.temperature, -1).tolist()
                t_chars = [(offsets[row][i][0] + a, offsets[row][i][1] + a) for i in context]
                st, en = map_to_student(s_p, e_p, t_chars, [tuple(s_offsets[i]) for i in tokens])
                positions = [0] + list(tokens)
                targets[window_key(ids)] = SoftTargets(_top(st, positions, settings.top_k),
                                                       _top(en, positions, settings.top_k))
            bar.update(len(part))
    return TeacherLabels(targets, settings.temperature, teacher_name, len(windows), time.perf_counter() - began)


def write_labels(path: Path, labels: TeacherLabels, meta: dict | None = None) -> None:
    """The labels as a compressed .npz: keys, and for start and end, pointers, token indices (uint16) and
    probabilities (float16); the temperature and what made them as JSON in ``meta``."""
    import numpy as np

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    keys = list(labels.targets)
    arrays: dict = {"keys": np.array(keys, dtype=np.int64)}
    for side in ("start", "end"):
        entries = [getattr(labels.targets[k], side) for k in keys]
        arrays[f"{side}_ptr"] = np.cumsum([0] + [len(e) for e in entries]).astype(np.int64)
        arrays[f"{side}_idx"] = np.array([i for e in entries for i, _ in e], dtype=np.uint16)
        arrays[f"{side}_p"] = np.array([p for e in entries for _, p in e], dtype=np.float16)
    info = {"format": LABELS_FORMAT, "temperature": labels.temperature, "teacher": labels.teacher,
            "windows": len(keys), "tokenizers": _tokenizers_release(), **(meta or {})}
    arrays["meta"] = np.frombuffer(json.dumps(info).encode(), dtype=np.uint8)
    with path.open("wb") as out:
        np.savez_compressed(out, **arrays)


def read_labels(path: Path) -> TeacherLabels:
    import numpy as np

    try:
        with np.load(Path(path)) as data:
            info = json.loads(bytes(data["meta"]).decode())
            if info.get("format") != LABELS_FORMAT:
                raise ValueError(f"format {info.get('format')}, not {LABELS_FORMAT}")
            keys = data["keys"].tolist()
            sides = {}
            for side in ("start", "end"):
                ptr, idx, prob = data[f"{side}_ptr"], data[f"{side}_idx"].tolist(), data[f"{side}_p"].astype("float64").tolist()
                sides[side] = [tuple(zip(idx[ptr[i]:ptr[i + 1]], prob[ptr[i]:ptr[i + 1]])) for i in range(len(keys))]
    except (OSError, KeyError, ValueError, EOFError) as exc:
        raise TrainingError(f"{path}: not a teacher labels file ({exc})") from exc
    targets = {k: SoftTargets(_normalized(s), _normalized(e)) for k, s, e in zip(keys, sides["start"], sides["end"])}
    return TeacherLabels(targets, float(info["temperature"]), info.get("teacher", ""), len(keys),
                         tokenizers=info.get("tokenizers", ""))


def _tokenizers_release() -> str:
    """The tokenizers library's version: its releases can cut a long context into overflow windows differently
    (0.23.2 and 0.23.3 do), and a window's label is found by its token ids."""
    import tokenizers

    return tokenizers.__version__


def _normalized(entries):
    total = sum(p for _, p in entries) or 1.0
    return tuple((int(i), p / total) for i, p in entries)


def attach(features: Sequence[Feature], labels: TeacherLabels) -> list[Feature]:
    """The features with their teacher targets; every window must have its labels (one line if not)."""
    out, missing = [], 0
    for feature in features:
        soft = labels.targets.get(window_key(feature.input_ids))
        missing += soft is None
        out.append(replace(feature, soft=soft))
    if missing:
        here = _tokenizers_release()
        release = (f"; they were cut by tokenizers {labels.tokenizers} and this is {here}: install "
                   f"tokenizers=={labels.tokenizers} to train from them") if labels.tokenizers not in ("", here) else ""
        raise TrainingError(f"{missing} of {len(features)} windows have no teacher label: the labels were written for "
                            "other examples, another student tokenizer or another window (max_seq_len, doc_stride)"
                            + release)
    return out


def distill_loss(model, features: Sequence[Feature], settings: DistillSettings, pad_id: int = 0,
                 batch_size: int = 32) -> float:
    """The mean distillation term (T² · KL, start and end averaged) of ``model`` on labelled ``features``."""
    import torch

    from jarvis.training.trainer import _tensors, loss_terms

    device = next(model.parameters()).device
    total, count = 0.0, 0
    model.eval()
    with torch.inference_mode():
        for first in range(0, len(features), batch_size):
            batch = features[first:first + batch_size]
            inputs = _tensors(batch, pad_id, device)
            _, kd = loss_terms(model, inputs, settings.temperature)
            total += float(kd.sum())
            count += len(batch)
    return total / max(1, count)
