"""A reader's tokenizer as the span reader and the passage selector use it, on the `tokenizers` library alone.

Hugging Face's fast tokenizers are a thin layer over a ``tokenizers.Tokenizer`` (``backend_tokenizer``); the
span reader needs only that core: windows of question + passage with character offsets, and token counts.
A model folder's ``tokenizer.json`` loads straight into it, without importing transformers (a second or more
of a cold ``jarvis ask``); a transformers tokenizer hands over its core. Either way the windows are the ones
transformers makes (``truncation="only_second"``, ``stride``, ``return_overflowing_tokens``): the training
features (jarvis/training/features.py) and the reader see the same tokens.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from jarvis.readers.base import ModelUnavailableError

TOKENIZER_FILE = "tokenizer.json"


@dataclass(frozen=True)
class Window:
    """One model input: question + (part of) a context."""

    ids: list[int]
    type_ids: list[int]
    offsets: list[tuple[int, int]]       # character range of each token in its own text
    sequence_ids: list[int | None]       # 0 question, 1 context, None special tokens
    source: int                          # which context it comes from


class Tokens:
    """Windows and token counts of one model's tokenizer (a ``tokenizers.Tokenizer``)."""

    def __init__(self, core) -> None:
        self.core = core
        self.core.no_padding()
        self.core.no_truncation()
        cls = next((t for t in ("[CLS]", "<s>", "<cls>") if core.token_to_id(t) is not None), None)
        self.cls_id = core.token_to_id(cls) if cls else None
        pad = next((t for t in ("[PAD]", "<pad>") if core.token_to_id(t) is not None), None)
        self.pad_id = core.token_to_id(pad) if pad else 0
        self.specials = core.num_special_tokens_to_add(True)

    @classmethod
    def from_folder(cls, folder: str | Path) -> "Tokens":
        """The tokenizer of a model folder (its tokenizer.json); ModelUnavailableError when unusable."""
        from tokenizers import Tokenizer

        path = Path(folder) / TOKENIZER_FILE
        try:
            return cls(Tokenizer.from_file(str(path)))
        except Exception as exc:  # noqa: BLE001 - the tokenizers library raises a plain Exception
            raise ModelUnavailableError(f"cannot read the tokenizer {path} ({str(exc).splitlines()[0] if str(exc) else exc})") from exc

    @classmethod
    def from_transformers(cls, tokenizer) -> "Tokens":
        from copy import deepcopy

        core = getattr(tokenizer, "backend_tokenizer", None)
        if core is None:
            raise ModelUnavailableError("the span reader needs a fast tokenizer (character offsets)")
        return cls(deepcopy(core))   # its truncation settings are ours to change

    def count(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text, without special tokens."""
        return [len(e.ids) for e in self.core.encode_batch(list(texts), add_special_tokens=False)]

    def offsets(self, text: str) -> list[tuple[int, int]]:
        return list(self.core.encode(text, add_special_tokens=False).offsets)

    def windows(self, question: str, contexts: Sequence[str], max_length: int, stride: int) -> list[Window]:
        """Question + context pairs, each context cut into windows of ``max_length`` tokens that overlap by
        ``stride`` (the question is never cut: cut it before, see ``SpanReader``)."""
        self.core.enable_truncation(max_length, stride=stride, strategy="only_second")
        try:
            encodings = self.core.encode_batch([(question, context) for context in contexts])
        finally:
            self.core.no_truncation()
        out = []
        for source, encoding in enumerate(encodings):
            for e in (encoding, *encoding.overflowing):
                out.append(Window(list(e.ids), list(e.type_ids), list(e.offsets), list(e.sequence_ids), source))
        return out
