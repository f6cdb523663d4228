"""Fine-tuning an extractive QA model on features: AdamW, linear warm-up and decay, length-grouped batches.

A plain PyTorch loop (no Trainer, no accelerate): one model, one optimizer, batches of windows of similar
length padded to the longest. It runs where torch runs: a CUDA GPU when one is there, else the CPU with the
threads given. Seeded: the same data, settings and machine give the same weights.
"""
from __future__ import annotations

import logging
import math
import random
import time
from dataclasses import dataclass
from typing import Sequence

from jarvis.training.features import Feature

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainSettings:
    epochs: float = 2.0
    batch_size: int = 32
    learning_rate: float = 1e-4
    warmup: float = 0.06              # share of the steps spent warming the learning rate up
    weight_decay: float = 0.01
    seed: int = 0
    # The word embeddings are a third of MiniLM's weights and change little in fine-tuning: frozen, a
    # step costs about a third less on a CPU.
    freeze_embeddings: bool = True
    threads: int = 0                  # CPU threads (0: torch's default)
    time_budget: float = 0.0          # seconds (0: none): the steps are planned to end within it (measured early)
    # bf16 autocast on a CUDA GPU that has it, and on a CPU whose oneDNN has bf16 kernels (AVX-512 BF16, AMX: matrix
    # products about twice as fast as float32's on the project's 2-core machines; the weights stay float32).
    bf16: bool = True
    distill_temperature: float = 2.0  # with teacher targets: the softmax temperature T
    distill_weight: float = 0.5       # ... and the share of T² · KL in the loss (the gold cross-entropy has the rest)


@dataclass(frozen=True)
class TrainStats:
    steps: int
    windows: int
    seconds: float
    final_loss: float
    device: str
    planned_steps: int = 0            # the steps the epochs asked for (more than ``steps`` when the budget cut them)


def batches(features: Sequence[Feature], size: int, rng: random.Random) -> list[list[Feature]]:
    """Shuffled batches of windows of similar length: sort shuffled blocks of 50 batches by length."""
    order = list(features)
    rng.shuffle(order)
    block = size * 50
    out: list[list[Feature]] = []
    for first in range(0, len(order), block):
        part = sorted(order[first:first + block], key=lambda f: len(f.input_ids))
        out += [part[i:i + size] for i in range(0, len(part), size)]
    rng.shuffle(out)
    return out


def _tensors(batch: Sequence[Feature], pad_id: int, device):
    import torch

    length = max(len(f.input_ids) for f in batch)
    ids = torch.full((len(batch), length), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), length), dtype=torch.long)
    types = torch.zeros((len(batch), length), dtype=torch.long) if batch[0].token_type_ids is not None else None
    for row, f in enumerate(batch):
        ids[row, :len(f.input_ids)] = torch.tensor(f.input_ids)
        mask[row, :len(f.input_ids)] = 1
        if types is not None:
            types[row, :len(f.token_type_ids)] = torch.tensor(f.token_type_ids)
    inputs = {"input_ids": ids.to(device), "attention_mask": mask.to(device)}
    if types is not None:
        inputs["token_type_ids"] = types.to(device)
    inputs["start_positions"] = torch.tensor([f.start for f in batch], device=device)
    inputs["end_positions"] = torch.tensor([f.end for f in batch], device=device)
    if any(f.soft is not None for f in batch):
        readable = torch.zeros((len(batch), length), dtype=torch.bool)
        soft_start, soft_end = torch.zeros((len(batch), length)), torch.zeros((len(batch), length))
        for row, f in enumerate(batch):
            readable[row, 0] = True
            readable[row, f.context[0]:f.context[1] + 1] = True
            for i, p in f.soft.start:
                soft_start[row, i] = p
            for i, p in f.soft.end:
                soft_end[row, i] = p
        inputs["readable"] = readable.to(device)
        inputs["soft_start"], inputs["soft_end"] = soft_start.to(device), soft_end.to(device)
        inputs["gold"] = torch.tensor([f.gold for f in batch], device=device)
    return inputs


def loss_terms(model, inputs: dict, temperature: float):
    """Per window: the gold cross-entropy (start and end averaged), and with teacher targets the distillation
    term T² · KL(teacher ‖ student), the student's softmax at T over [CLS] and the context tokens."""
    import torch
    import torch.nn.functional as F

    model_inputs = {k: v for k, v in inputs.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
    out = model(**model_inputs)
    starts, ends = out.start_logits.float(), out.end_logits.float()
    gold = (F.cross_entropy(starts, inputs["start_positions"], reduction="none")
            + F.cross_entropy(ends, inputs["end_positions"], reduction="none")) / 2
    if "soft_start" not in inputs:
        return gold, None

    def kl(logits, target):
        log_q = torch.log_softmax((logits / temperature).masked_fill(~inputs["readable"], float("-inf")), -1)
        terms = torch.where(target > 0, target * (torch.log(target.clamp_min(1e-12)) - log_q), torch.zeros_like(target))
        return terms.sum(-1)

    kd = temperature ** 2 * (kl(starts, inputs["soft_start"]) + kl(ends, inputs["soft_end"])) / 2
    return gold, kd


def optimizer_step(loss, params, optimizer, scheduler) -> float:
    """One step of training from ``loss``: backpropagate, clip the gradients of ``params`` ((name, parameter)
    pairs) to norm 1, step the optimizer and the schedule, clear the gradients; returns the loss's value."""
    import torch

    loss.backward()
    torch.nn.utils.clip_grad_norm_([p for _, p in params], 1.0)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()


def replan(plan: dict, clock: dict, step: int, planned: int, settings: TrainSettings) -> bool:
    """With a time budget: the steps planned again once a few have been timed (and again later, a GPU's first
    steps being slow), so that the learning rate still decays to zero within the budget; past it, the end."""
    now = time.perf_counter()
    elapsed = now - clock["began"]
    if elapsed >= settings.time_budget:
        plan["total"] = step
        return True
    first = not clock["timed_at"]
    if not (first and (step >= clock["probe"] or elapsed >= settings.time_budget / 10)) and \
            not (not first and step == 5 * clock["timed_at"]):
        return False
    if first:
        per_step = elapsed / step
        clock["timed_at"], clock["timed"] = step, now
    else:
        per_step = (now - clock["timed"]) / (step - clock["timed_at"])
    fits = step + int((settings.time_budget - elapsed) / per_step)
    if fits >= planned and plan["total"] >= planned:
        return False
    plan["total"] = max(step + 1, min(planned, fits))
    plan["warmup"] = min(int(planned * settings.warmup), plan["total"] // 10)
    log.info("time budget %.0f s: %d of %d steps (%.3f s a step)", settings.time_budget, plan["total"], planned,
             per_step)
    return True


def use_bf16(device, settings: TrainSettings) -> bool:
    """Whether a training on ``device`` runs its forward pass in bf16 (see ``TrainSettings.bf16``)."""
    import torch

    if not settings.bf16:
        return False
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def optimizer_for(model, settings: TrainSettings, plan: dict):
    """AdamW over the trainable weights (no decay on biases and layer norms) with linear warm-up and decay over
    ``plan["total"]`` steps (``plan["warmup"]`` of them warming up; the plan may change as training runs, a time
    budget shortening it): (the parameters, the optimizer, the scheduler). Every trainer of the project uses it."""
    import torch

    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    decay = [p for n, p in params if not (n.endswith("bias") or "LayerNorm" in n or "layer_norm" in n)]
    no_decay = [p for n, p in params if n.endswith("bias") or "LayerNorm" in n or "layer_norm" in n]
    groups = [{"params": decay, "weight_decay": settings.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    # The fused kernel: on a 2-core CPU the per-tensor loop takes 1-2 s a step for MiniLM, fused ~0.1 s.
    optimizer = torch.optim.AdamW(groups, lr=settings.learning_rate, fused=True)

    def rate(step: int) -> float:
        total, warmup = plan["total"], plan["warmup"]
        return (step + 1) / max(1, warmup) if step < warmup else max(0.0, (total - step) / max(1, total - warmup))

    return params, optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, rate)


def train(model, features: Sequence[Feature], pad_id: int, settings: TrainSettings, progress: bool = True) -> TrainStats:
    """Fine-tune ``model`` (a transformers QA model) in place on ``features``."""
    import torch
    from tqdm import tqdm

    torch.manual_seed(settings.seed)
    rng = random.Random(settings.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cpu" and settings.threads:
        torch.set_num_threads(settings.threads)
    model.to(device).train()
    if settings.freeze_embeddings:
        embeddings = model.get_input_embeddings()
        embeddings.weight.requires_grad_(False)
    per_epoch = math.ceil(len(features) / settings.batch_size)
    planned = max(1, int(per_epoch * settings.epochs))
    plan = {"total": planned, "warmup": int(planned * settings.warmup)}
    params, optimizer, scheduler = optimizer_for(model, settings, plan)
    bf16 = device.type == "cuda" and use_bf16(device, settings)   # the reader's CPU training stays float32, as measured
    weight, temperature = settings.distill_weight, settings.distill_temperature
    began = time.perf_counter()
    clock = {"began": began, "probe": min(20, max(2, planned // 20)), "timed_at": 0, "timed": began}
    step, smoothed, windows = 0, None, 0
    with tqdm(total=planned, desc="training", unit="step", disable=not progress, dynamic_ncols=True) as bar:
        while step < plan["total"]:
            for batch in batches(features, settings.batch_size, rng):
                if step >= plan["total"]:
                    break
                with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
                    gold, kd = loss_terms(model, _tensors(batch, pad_id, device), temperature)
                    if kd is None:
                        loss = gold.mean()
                    else:
                        has_gold = torch.tensor([f.gold for f in batch], device=device, dtype=gold.dtype)
                        loss = ((1 - weight) * gold * has_gold + weight * kd
                                + (1 - weight) * kd * (1 - has_gold)).mean()
                value = optimizer_step(loss, params, optimizer, scheduler)
                step += 1
                windows += len(batch)
                smoothed = value if smoothed is None else 0.98 * smoothed + 0.02 * value
                bar.update(1)
                bar.set_postfix(loss=f"{smoothed:.3f}", epoch=f"{step / per_epoch:.2f}")
                if settings.time_budget and replan(plan, clock, step, planned, settings):
                    bar.total = plan["total"]
                if not progress and step % 100 == 0:
                    log.info("step %d/%d, loss %.3f, %.0f s", step, plan["total"], smoothed, time.perf_counter() - began)
    model.eval()
    if settings.freeze_embeddings:
        model.get_input_embeddings().weight.requires_grad_(True)
    return TrainStats(step, windows, time.perf_counter() - began, smoothed or 0.0, device.type, planned)
