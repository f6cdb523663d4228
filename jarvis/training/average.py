"""Readers averaged into one: the mean of their weights (a "model soup", Wortsman et al. 2022).

Readers fine-tuned from the same base with the same recipe on overlapping data stay close enough in weight
space that their mean is a reader too, often a better one than each, at no cost when answering: it is one
model of the same size. Its margins are flatter than its members', so refit the confidence model on it
before trusting its "not sure" (Jarvis's own reader's model card has a measured case).

    result = average_readers(["reader-a", "reader-b"], Path("reader-ab"))

Each member is a reader folder: Hugging Face weights, or only the int8 ONNX export a shipped reader carries
(``load_model`` reads the weights back out of it). They must share the architecture, the tokenizer and the
way they read (window, stride, context header); the output is written as ``train-reader`` writes a reader:
weights, int8 export and card (what it averages; the reading settings of its members).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from jarvis.readers.card import CHOICES, READER_CARD
from jarvis.training.models import TrainingError, export_reader, load_model

READING = ("context", "max_seq_len", "doc_stride")     # must agree between the members
SHAPE = ("model_type", "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
         "intermediate_size", "max_position_embeddings", "type_vocab_size")   # config keys that size the weights


@dataclass(frozen=True)
class AverageResult:
    out: Path
    members: tuple[str, ...]
    tensors: int
    onnx: Path
    seconds: float

    def summary(self) -> str:
        return (f"averaged {len(self.members)} readers ({', '.join(self.members)}) into {self.out}: "
                f"{self.tensors} weight tensors, ONNX int8 {self.onnx.stat().st_size / 1e6:.1f} MB, "
                f"{self.seconds:.0f} s")


def average_readers(sources: Sequence[str], out: Path) -> AverageResult:
    """Write the reader whose weights are the mean of the ``sources`` readers' to ``out``."""
    began = time.perf_counter()
    if len(sources) < 2:
        raise TrainingError("averaging needs two readers or more")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise TrainingError(f"{out} exists and is not a folder")
    cards = [_card(source) for source in sources]
    for key in READING:
        values = {json.dumps(card.get(key)) for card in cards}
        if len(values) > 1:
            raise TrainingError(f"the readers do not read alike: their {key} differs ({', '.join(sorted(values))})")
    shapes = [_shape(source) for source in sources]
    for source, shape in zip(sources[1:], shapes[1:]):
        if shape != shapes[0]:
            differ = ", ".join(k for k in SHAPE if shape.get(k) != shapes[0].get(k))
            raise TrainingError(f"{source} is not the same architecture as {sources[0]} ({differ} differ)")
    tokenizer, model = load_model(sources[0])
    total = {name: tensor.detach().double().clone() for name, tensor in model.state_dict().items()}
    vocab = tokenizer.get_vocab()
    for source in sources[1:]:
        other_tokenizer, other = load_model(source)
        if other_tokenizer.get_vocab() != vocab:
            raise TrainingError(f"{source} has another tokenizer than {sources[0]}: its weights cannot be averaged")
        weights = other.state_dict()
        if weights.keys() != total.keys() or any(weights[k].shape != total[k].shape for k in total):
            raise TrainingError(f"{source} is not the same architecture as {sources[0]}")
        for name, tensor in weights.items():
            total[name] += tensor.detach().double()
    state = model.state_dict()
    mean = {name: (tensor / len(sources)).to(state[name].dtype) if state[name].is_floating_point() else state[name]
            for name, tensor in total.items()}
    model.load_state_dict(mean)
    model.eval()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    onnx = export_reader(model, tokenizer, out)
    names = tuple(_label(source) for source in sources)
    card = {"format": 1, **{key: cards[0].get(key) for key in READING if key in cards[0]},
            "base": cards[0].get("base", names[0]),
            "average_of": [{"reader": name, **{k: card[k] for k in ("sources", "questions_used", "train", "dev",
                                                                      "guide_dev") if k in card}}
                           for name, card in zip(names, cards)],
            "sources": list(dict.fromkeys(s for card in cards for s in card.get("sources", []))),
            "held_back": list(dict.fromkeys(s for card in cards for s in card.get("held_back", []))),
            **{key: cards[0][key] for key in CHOICES if key in cards[0]}}
    (out / READER_CARD).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return AverageResult(out, names, len(mean), onnx, time.perf_counter() - began)


def _card(source: str) -> dict:
    path = Path(source) / READER_CARD
    if not Path(source).is_dir():
        raise TrainingError(f"no reader folder at {source}")
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TrainingError(f"{path} is not a readable reader card ({exc})") from exc


def _shape(source: str) -> dict:
    try:
        config = json.loads((Path(source) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TrainingError(f"{source} has no readable config.json ({exc})") from exc
    return {key: config.get(key) for key in SHAPE}


def _label(source: str) -> str:
    """A member as the card names it: its folder's name (no machine paths)."""
    return Path(source).resolve().name

