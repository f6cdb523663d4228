"""Fine-tuning the reranker: a cross-encoder (question and passage read together) trained listwise: each question's
gold passage against its hard negatives (passage_pairs.py), softmax cross-entropy of the relevance logit over the
group, as cross-encoders for passage ranking are trained (the "multiple negatives" listwise loss). Two more logits
learn what a passage says to a yes/no question (yes or no), on the gold passages of the yes/no questions: the same
model, run on the same passages, settles "can skeletons ride spiders?" at no extra cost.

It starts from Jarvis's own reader by default: the same MiniLM, already trained to read a question against a
"Page > Section: " passage and to say when the passage does not answer it; its encoder is kept and a fresh
one-logit head is put on its [CLS] token. Or from any weights folder or reader folder (``base``).

The result is a reranker folder (jarvis/readers/rerank.py): ``model.int8.onnx``, the tokenizer and
``jarvis-reranker.json`` (its card).
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

from jarvis.readers.rerank import RERANKER_CARD, RERANKER_MODEL
from jarvis.training.passage_pairs import VERDICTS, PairExample
from jarvis.training.trainer import TrainSettings, optimizer_for, optimizer_step, replan, use_bf16

log = logging.getLogger(__name__)

RERANKER_FORMAT = 1
OUTPUTS = 3                       # logits: [relevance, yes, no] (jarvis/readers/rerank.py)


@dataclass(frozen=True)
class RerankerTraining:
    """How the reranker is trained, beside the loop's settings (``TrainSettings``)."""

    negatives: int = 3            # hard negatives per question and step (drawn from its example's)
    max_tokens: int = 160         # question and passage together (the passage is cut to fit)
    verdict_weight: float = 1.0   # the yes/no head's share of the loss, on the yes/no questions' gold passages
    name: str = "jarvis-reranker"


@dataclass(frozen=True)
class RerankerResult:
    out: Path
    steps: int
    examples: int
    seconds: float
    final_loss: float


def cross_encoder_from(base: str):
    """(tokenizer, a one-logit sequence classifier) from ``base``: a reader folder or QA weights (its encoder is
    kept, the head is new), or a sequence classifier's own folder."""
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification

    from jarvis.training.models import load_model

    tokenizer, qa_model = load_model(base)
    config = AutoConfig.from_pretrained(str(base), local_files_only=True) if Path(base).is_dir() else qa_model.config
    config.num_labels = OUTPUTS
    config.problem_type = "regression"
    model = AutoModelForSequenceClassification.from_config(config)
    encoder = getattr(qa_model, qa_model.base_model_prefix)
    missing = getattr(model, model.base_model_prefix).load_state_dict(encoder.state_dict(), strict=False)
    if missing.missing_keys and any("pooler" not in key for key in missing.missing_keys):
        raise ValueError(f"{base}: its encoder does not fit a sequence classifier ({missing.missing_keys[:3]})")
    torch.nn.init.normal_(model.classifier.weight, std=0.02)
    torch.nn.init.zeros_(model.classifier.bias)
    return tokenizer, model


def train_reranker(examples: Sequence[PairExample], out: Path, settings: TrainSettings, training: RerankerTraining,
                   base: str, sources: Sequence[str] = (), progress: bool = True) -> RerankerResult:
    """Fine-tune a cross-encoder on ``examples`` and write its reranker folder to ``out``."""
    import torch
    from tqdm import tqdm

    torch.manual_seed(settings.seed)
    rng = random.Random(settings.seed)
    if settings.threads:
        torch.set_num_threads(settings.threads)
    tokenizer, model = cross_encoder_from(base)
    model.train()
    if settings.freeze_embeddings:
        model.get_input_embeddings().weight.requires_grad_(False)
    usable = [e for e in examples if e.negatives]
    per_epoch = math.ceil(len(usable) / settings.batch_size)
    planned = max(1, int(per_epoch * settings.epochs))
    plan = {"total": planned, "warmup": int(planned * settings.warmup)}
    params, optimizer, scheduler = optimizer_for(model, settings, plan)
    group = 1 + training.negatives
    bf16 = use_bf16(torch.device("cpu"), settings)
    began = time.perf_counter()
    clock = {"began": began, "probe": min(20, max(2, planned // 20)), "timed_at": 0, "timed": began}
    step, smoothed = 0, None
    with tqdm(total=planned, desc="training the reranker", unit="step", disable=not progress,
              dynamic_ncols=True) as bar:
        while step < plan["total"]:
            order = list(usable)
            rng.shuffle(order)
            for first in range(0, len(order), settings.batch_size):
                if step >= plan["total"]:
                    break
                batch = order[first:first + settings.batch_size]
                questions, passages = [], []
                for example in batch:
                    negatives = list(example.negatives)
                    drawn = rng.sample(negatives, min(training.negatives, len(negatives)))
                    drawn += [drawn[i % len(drawn)] for i in range(training.negatives - len(drawn))]
                    for text in [example.positive, *drawn]:
                        questions.append(example.question)
                        passages.append(text)
                inputs = tokenizer(questions, passages, padding=True, truncation="only_second",
                                   max_length=training.max_tokens, return_tensors="pt")
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                    logits = model(**inputs).logits.float().view(len(batch), group, OUTPUTS)
                loss = torch.nn.functional.cross_entropy(logits[:, :, 0], torch.zeros(len(batch), dtype=torch.long))
                asked = [i for i, example in enumerate(batch) if example.verdict in VERDICTS]
                if asked and training.verdict_weight:
                    said = torch.tensor([VERDICTS.index(batch[i].verdict) for i in asked])
                    loss = loss + training.verdict_weight * torch.nn.functional.cross_entropy(
                        logits[asked, 0, 1:], said) * len(asked) / len(batch)
                value = optimizer_step(loss, params, optimizer, scheduler)
                step += 1
                smoothed = value if smoothed is None else 0.98 * smoothed + 0.02 * value
                bar.update(1)
                bar.set_postfix(loss=f"{smoothed:.3f}", epoch=f"{step / per_epoch:.2f}")
                if settings.time_budget and replan(plan, clock, step, planned, settings):
                    bar.total = plan["total"]
                if not progress and step % 50 == 0:
                    log.info("reranker step %d/%d, loss %.3f, %.0f s", step, plan["total"], smoothed,
                             time.perf_counter() - began)
    model.eval()
    if settings.freeze_embeddings:
        model.get_input_embeddings().weight.requires_grad_(True)
    seconds = time.perf_counter() - began
    card = {"format": RERANKER_FORMAT, "name": training.name, "model": RERANKER_MODEL, "max_tokens": training.max_tokens,
            "base": Path(base).name or str(base), "examples": len(usable), "steps": step, "seconds": round(seconds, 1),
            "final_loss": round(smoothed or 0, 4), "sources": sorted(set(sources)), "settings": asdict(settings),
            "training": asdict(training)}
    write_reranker(model, tokenizer, Path(out), card)
    return RerankerResult(Path(out), step, len(usable), seconds, smoothed or 0.0)


def write_reranker(model, tokenizer, out: Path, card: dict) -> Path:
    """The reranker folder: the int8 ONNX export of the classifier (eager attention, as the reader's), its tokenizer
    and its card."""
    import os
    import tempfile
    import warnings

    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from jarvis.readers.onnx_backend import OPSET, _use_eager_attention

    out.mkdir(parents=True, exist_ok=True)
    names = ["input_ids", "attention_mask", "token_type_ids"]

    class Logit(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits

    example = (torch.ones((2, 8), dtype=torch.long) * 5, torch.tensor([[1] * 8, [1] * 5 + [0] * 3]),
               torch.zeros((2, 8), dtype=torch.long))
    axes = {name: {0: "batch", 1: "length"} for name in names}
    axes["logits"] = {0: "batch"}
    attention = _use_eager_attention(model)
    try:
        with tempfile.TemporaryDirectory(dir=out, prefix=".export-") as tmp:
            fp32 = Path(tmp) / "model.onnx"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(Logit(), example, str(fp32), dynamo=False, input_names=names,
                                  output_names=["logits"], dynamic_axes=axes, opset_version=OPSET)
            int8 = Path(tmp) / RERANKER_MODEL
            quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
            os.replace(int8, out / RERANKER_MODEL)
    finally:
        model.eval()
        if attention is not None:
            model.set_attn_implementation(attention)
    tokenizer.save_pretrained(str(out))
    for extra in ("vocab.txt", "special_tokens_map.json"):
        (out / extra).unlink(missing_ok=True)
    (out / RERANKER_CARD).write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    return out
