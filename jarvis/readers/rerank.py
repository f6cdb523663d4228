"""The reranker: a cross-encoder that reads the question and a passage together and scores how well the passage
answers it. It orders retrieval's best passages (about 30) before the reader reads the best of them within its
token budget, and its score of the answer's passage joins the reader's own in the final choice.

    reranker = Reranker(SHIPPED_RERANKER)      # settings only
    reranker.warm_up()                         # loads the int8 ONNX model and the tokenizer
    scores = reranker.run(question, texts)     # one logit per passage text (index.passages.passage_text)
    reranker.verdict(question, text)           # ("no", 0.93): what a passage says to a yes/no question

A reranker trained by Jarvis (``jarvis train-reranker``, jarvis/training/reranker.py) is a folder: its int8 ONNX
model (all-MiniLM-L6-v2's shape with a head of three logits: relevance, yes, no), its tokenizer and ``jarvis-reranker.json`` (its card: the
tokens it reads, what it was trained on). It runs on onnxruntime and tokenizers alone: no torch.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Sequence

import numpy as np

from jarvis.errors import JarvisError

log = logging.getLogger(__name__)

RERANKER_CARD = "jarvis-reranker.json"
RERANKER_MODEL = "model.int8.onnx"
SHIPPED_RERANKER = Path(__file__).resolve().parent / "data" / "jarvis-reranker"
BATCH = 16


class RerankerUnavailableError(JarvisError):
    """A reranker folder that cannot be loaded (missing or damaged files)."""


class Reranker:
    """Scores (question, passage) pairs with a cross-encoder folder (see the module docstring)."""

    def __init__(self, folder: str | Path, threads: int = 0) -> None:
        self.folder = Path(folder)
        self.threads = threads
        self.name = self.folder.name
        self.max_tokens = 192
        self._session = None
        self._tokenizer = None

    def warm_up(self) -> None:
        """Load the model and the tokenizer (a user error, one line, when they cannot be)."""
        if self._session is not None:
            return
        import onnxruntime
        from tokenizers import Tokenizer

        try:
            card = json.loads((self.folder / RERANKER_CARD).read_text(encoding="utf-8"))
            self.name = str(card.get("name", self.folder.name))
            self.max_tokens = int(card.get("max_tokens", self.max_tokens))
            for name in (card.get("model", RERANKER_MODEL), "tokenizer.json"):
                if not (self.folder / name).is_file():
                    raise FileNotFoundError(2, "missing", str(self.folder / name))
            options = onnxruntime.SessionOptions()
            options.inter_op_num_threads = 1
            if self.threads:
                options.intra_op_num_threads = self.threads
            self._session = onnxruntime.InferenceSession(str(self.folder / card.get("model", RERANKER_MODEL)), options,
                                                         providers=["CPUExecutionProvider"])
            tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        except FileNotFoundError as exc:
            raise RerankerUnavailableError(f"reranker {self.folder} is incomplete ({Path(exc.filename or '').name} "
                                           "is missing)") from exc
        except (OSError, ValueError, KeyError) as exc:
            raise RerankerUnavailableError(f"reranker {self.folder} cannot be read ({exc})") from exc
        except Exception as exc:  # noqa: BLE001 - onnxruntime's own exceptions
            raise RerankerUnavailableError(f"reranker {self.folder} cannot be loaded ({exc})") from exc
        tokenizer.enable_truncation(self.max_tokens, strategy="only_second")
        tokenizer.enable_padding()
        self._tokenizer = tokenizer
        self._inputs = {i.name for i in self._session.get_inputs()}

    def run(self, question: str, texts: Sequence[str]) -> list[float]:
        """One score (a logit: higher, more likely the passage answers) per passage text."""
        return [row[0] for row in self._logits(question, texts)]

    def verdict(self, question: str, text: str) -> tuple[str, float] | None:
        """What a passage says to a yes/no question: ("yes" or "no", its probability against the other); None for a
        reranker without the yes/no head."""
        logits = self._logits(question, [text])[0]
        if len(logits) < 3:
            return None
        yes, no = logits[1], logits[2]
        p_yes = 1.0 / (1.0 + float(np.exp(no - yes)))
        return ("yes", p_yes) if p_yes >= 0.5 else ("no", 1.0 - p_yes)

    def _logits(self, question: str, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        self.warm_up()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))      # a batch pads little
        out: list[list[float]] = [[] for _ in texts]
        for first in range(0, len(order), BATCH):
            rows = order[first:first + BATCH]
            encodings = self._tokenizer.encode_batch([(question, texts[i]) for i in rows])
            feed = {"input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                    "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                    "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64)}
            logits = np.asarray(self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0])
            for i, row in zip(rows, logits.reshape(len(rows), -1)):
                out[i] = [float(v) for v in row]
        return out


def load_reranker(setting: str, threads: int = 0) -> Reranker | None:
    """The reranker a setting names (``ReaderSettings.reranker``): "jarvis" (the shipped one), a folder, or
    "none"; None when none is wanted or the shipped one is not there."""
    if setting in ("", "none"):
        return None
    if setting == "jarvis":
        if not (SHIPPED_RERANKER / RERANKER_CARD).is_file():
            return None
        return Reranker(SHIPPED_RERANKER, threads)
    return Reranker(Path(setting).expanduser(), threads)
