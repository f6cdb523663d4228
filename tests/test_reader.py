"""The span reader on a tiny real model: spans, windows, batching, the no-answer rule, loading."""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import torch

from jarvis.config import ReaderSettings
from jarvis.readers import load_reader
from jarvis.readers.base import Passage
from jarvis.readers.span import SpanReader, widen_to_words

QUESTIONS = ["What do cows drop?", "Where do zombies spawn?", "How do you craft a torch?", "what is a creeper"]

PARAGRAPHS = [
    ("Cow", "A cow is a common passive mob found in grassy biomes. When killed, an adult cow drops 0-2 leather "
            "and 1-3 raw beef; baby cows drop nothing."),
    ("Cow", "Using an empty bucket on a cow fills it with milk, which removes all status effects when drunk."),
    ("Zombie", "Zombies spawn in groups of up to four wherever the block light level is 0, in caves and at night."),
    ("Zombie", "A zombie burns in sunlight unless it wears a helmet or stands in water."),
    ("Torch", "Torches are crafted from one coal or charcoal on top of one stick; each craft gives four torches."),
    ("Creeper", "A creeper is a silent hostile mob that walks up to players and explodes after a short hiss."),
    ("Creeper", "Its explosion destroys blocks in a rough sphere and hurts everything nearby, " * 6),
]


def passages(paragraphs=PARAGRAPHS) -> list[Passage]:
    ranks = {title: rank for rank, title in enumerate(dict.fromkeys(t for t, _ in paragraphs))}
    return [Passage(title, text, ranks[title], i) for i, (title, text) in enumerate(paragraphs)]


def settings(model: Path, **changes) -> ReaderSettings:
    # Small windows so that the long paragraph above spans several of them. Full precision: int8's
    # dynamic quantization scales activations per batch, so only fp32 reads identically batched or not.
    return replace(ReaderSettings(model=str(model), max_seq_len=64, doc_stride=16, no_answer_margin=-1e9,
                                  quantize=False), **changes)


@pytest.fixture(scope="module")
def reader(tiny_qa_model) -> SpanReader:
    return SpanReader.load(settings(tiny_qa_model))


def sequential(reader: SpanReader, **changes) -> SpanReader:
    """The same loaded model, other settings (no reload)."""
    return SpanReader(reader.tokens, reader.model, replace(reader.settings, **changes), reader.name, reader.card,
                      reader._input_names)


def is_word_boundary(text: str, i: int) -> bool:
    return i in (0, len(text)) or not (text[i - 1].isalnum() and text[i].isalnum())


# --------------------------------------------------------------------------- spans


@pytest.mark.parametrize("question", QUESTIONS)
def test_answer_is_an_exact_whole_word_substring_of_a_read_paragraph(reader, question):
    read = passages()
    span = reader.read(question, read)
    assert span is not None and span.text.strip()
    assert span.passage in read
    assert span.passage.text[span.start:span.end] == span.text
    assert is_word_boundary(span.passage.text, span.start) and is_word_boundary(span.passage.text, span.end)


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize("batch_size", [1, 3, 16])
def test_batched_and_sequential_reading_give_the_same_answer_and_score(reader, question, batch_size):
    batched = sequential(reader, batch_size=batch_size).read(question, passages())
    one_by_one = sequential(reader, sequential=True).read(question, passages())
    assert (batched.text, batched.passage, batched.start) == (one_by_one.text, one_by_one.passage, one_by_one.start)
    assert batched.score == pytest.approx(one_by_one.score, abs=1e-4)
    assert batched.null_score == pytest.approx(one_by_one.null_score, abs=1e-4)


def test_widen_to_words_extends_offsets_that_fall_inside_a_word():
    text = "drops 0-2 leather and raw beef."
    assert text[slice(*widen_to_words(text, 12, 15))] == "leather"       # "ath" -> "leather"
    assert text[slice(*widen_to_words(text, 5, 10))] == "0-2"            # " 0-2 " -> "0-2"
    assert text[slice(*widen_to_words(text, 22, 27))] == "raw beef"      # "raw b" -> "raw beef"


def test_empty_or_blank_passages_give_no_answer(reader):
    assert reader.read("what do cows drop?", []) is None
    assert reader.read("what do cows drop?", [Passage("Cow", "   ", 0, 0)]) is None


def test_an_overlong_question_still_leaves_room_for_the_paragraph(reader):
    question = "what do cows drop " * 40   # ~120 tokens, twice the 64-token window
    span = reader.read(question, passages())
    assert span is not None and span.passage.text[span.start:span.end] == span.text


# --------------------------------------------------------------------------- planted answers


# Made-up words; the planted one is the first whose last piece is a multi-letter piece found in no
# other text of these tests (so only it can score), and that is not a whole word (to test widening).
PLANTED_CANDIDATES = ["blackcoal", "glowtorches", "cowstick", "oreblocks", "skyleather", "zanthorite", "moonbeef"]
FILLER = "Cows wander slowly across the grassy plains and moo now and then while the sun sets. "


@dataclass(frozen=True)
class Planted:
    model: Path
    word: str


@pytest.fixture(scope="module")
def planted(tiny_qa_model, tmp_path_factory) -> Planted:
    """The tiny model with one answer planted: the last piece of a made-up word gets huge start and end logits.

    That piece's input embedding is made large along a direction u (so it survives the layer norms) and
    the QA head reads u: start = end = 10 * (hidden . u). Every other token scores ~N(0, 1) along u.
    """
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_qa_model)
    model = AutoModelForQuestionAnswering.from_pretrained(tiny_qa_model)
    used = {piece for text in [FILLER, *QUESTIONS, *(t for _, t in PARAGRAPHS), "which ore is rarest? The rarest "
            "ore is . At the very end lies ore. what lies at the end? Cows moo."] for piece in tokenizer.tokenize(text)}
    word = next((w for w in PLANTED_CANDIDATES if len(tokenizer.tokenize(" " + w)) > 1
                 and len(tokenizer.tokenize(" " + w)[-1]) >= 3 and tokenizer.tokenize(" " + w)[-1] not in used), None)
    assert word, "no candidate word has a last piece of its own"
    planted_id = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(" " + word)[-1])
    generator = torch.Generator().manual_seed(1)
    u = torch.randn(model.config.hidden_size, generator=generator)
    u = (u - u.mean()) / (u - u.mean()).norm()   # zero mean: layer norm keeps it
    with torch.no_grad():
        model.roberta.embeddings.word_embeddings.weight[planted_id] = 50 * u
        model.qa_outputs.weight[:] = 10 * u
        model.qa_outputs.bias.zero_()
    out = tmp_path_factory.mktemp("planted-qa")
    tokenizer.save_pretrained(out)
    model.save_pretrained(out)
    return Planted(out, word)


def filler_paragraph(tokenizer, min_tokens: int) -> str:
    text = ""
    while tokenizer.count([text])[0] < min_tokens:
        text += FILLER
    return text


def test_an_answer_from_the_last_window_of_a_long_paragraph(planted):
    reader = SpanReader.load(settings(planted.model, no_answer_margin=0.0))
    paragraph = filler_paragraph(reader.tokens, min_tokens=5 * 64) + f"At the very end lies {planted.word} ore."
    for read_sequentially in (False, True):
        span = sequential(reader, sequential=read_sequentially).read("what lies at the end?", [
            Passage("Cow", "Cows moo.", 0, 0), Passage("Ore", paragraph, 1, 0)])
        assert span is not None
        assert span.text == planted.word                   # widened from its last piece to the whole word
        assert span.start == paragraph.index(planted.word)  # ~5 windows in: only the last one holds it


def test_no_answer_rule_follows_the_margin(reader, planted):
    read = passages()
    assert reader.read("what do cows drop?", read) is not None                   # margin -1e9: always an answer
    assert sequential(reader, no_answer_margin=1e9).read("what do cows drop?", read) is None
    assert sequential(reader, no_answer_margin=1e9, sequential=True).read("what do cows drop?", read) is None
    planted_reader = SpanReader.load(settings(planted.model, no_answer_margin=0.0))
    span = planted_reader.read("which ore is rarest?", read + [Passage("Ore", f"The rarest ore is {planted.word}.", 9, 0)])
    assert span.text == planted.word
    assert span.score - span.null_score > 50            # far above its window's no-answer score


# --------------------------------------------------------------------------- loading


def test_reader_loads_a_local_directory_and_names_itself_after_it(tiny_qa_model):
    reader = load_reader(settings(tiny_qa_model))
    assert isinstance(reader, SpanReader)
    assert reader.name == tiny_qa_model.name


def test_quantized_reader_answers_with_exact_substrings(tiny_qa_model):
    reader = SpanReader.load(settings(tiny_qa_model, quantize=True))
    assert reader.name.endswith("+int8")
    span = reader.read("what do cows drop?", passages())
    assert span is not None and span.passage.text[span.start:span.end] == span.text


@pytest.mark.parametrize("make_model", ["missing", "empty", "not-a-model"])
def test_missing_or_broken_model_falls_back_with_a_notice(tmp_path, caplog, make_model):
    model = tmp_path / "model"
    if make_model != "missing":
        model.mkdir()
    if make_model == "not-a-model":
        (model / "config.json").write_text("{not json", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="jarvis.readers"):
        reader = load_reader(ReaderSettings(model=str(model), fallback="lexical"))
    assert reader.name == "fallback:lexical"
    notices = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(notices) == 1 and "QA model unavailable" in notices[0] and str(model) in notices[0]
    assert "\n" not in notices[0]


def test_empty_model_setting_means_the_fallback_reader_without_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        reader = load_reader(ReaderSettings(model="", fallback="lexical"))
    assert reader.name == "fallback:lexical"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


# --------------------------------------------------------------------------- backends and other model families


@pytest.fixture(scope="module")
def both_backends(tiny_qa_model) -> tuple[SpanReader, SpanReader]:
    return (SpanReader.load(settings(tiny_qa_model, backend="torch")),
            SpanReader.load(settings(tiny_qa_model, backend="onnx")))


def test_backend_settings_pick_the_engine(both_backends):
    torch_reader, onnx_reader = both_backends
    assert (torch_reader.backend, onnx_reader.backend) == ("torch", "onnx")
    assert torch_reader.name == onnx_reader.name      # same model, same precision: same answers, same cache key


@pytest.mark.parametrize("question", QUESTIONS)
def test_onnx_and_torch_give_the_same_span(both_backends, question):
    torch_reader, onnx_reader = both_backends
    for batch_size in (1, 16):   # padded batches too: the export must keep the attention mask
        a = sequential(torch_reader, batch_size=batch_size).read(question, passages())
        b = sequential(onnx_reader, batch_size=batch_size).read(question, passages())
        assert (a.text, a.passage, a.start, a.end) == (b.text, b.passage, b.start, b.end)
        assert a.score == pytest.approx(b.score, abs=1e-4) and a.null_score == pytest.approx(b.null_score, abs=1e-4)


def test_onnx_int8_reads_like_torch_int8_within_tolerance(tiny_qa_model):
    torch_int8 = SpanReader.load(settings(tiny_qa_model, backend="torch", quantize=True))
    onnx_int8 = SpanReader.load(settings(tiny_qa_model, backend="onnx", quantize=True))
    assert onnx_int8.name.endswith("+int8") and onnx_int8.model.path.name == "model.int8.onnx"
    for question in QUESTIONS:
        a, b = torch_int8.read(question, passages()), onnx_int8.read(question, passages())
        assert b.passage.text[b.start:b.end] == b.text
        assert a.score == pytest.approx(b.score, abs=0.05)   # two int8 schemes, same weights


def test_the_onnx_export_is_made_once_and_redone_when_the_weights_change(tiny_qa_model, tmp_path, monkeypatch):
    import shutil

    import jarvis.readers.onnx_backend as onnx_backend

    model_dir = tmp_path / "model"
    shutil.copytree(tiny_qa_model, model_dir, ignore=shutil.ignore_patterns("onnx"))
    exports = []
    real_export = onnx_backend.export_qa_model
    monkeypatch.setattr(onnx_backend, "export_qa_model", lambda *a, **k: exports.append(a[2]) or real_export(*a, **k))
    cache = tmp_path / "cache"
    first = SpanReader.load(settings(model_dir, export_dir=str(cache)))
    second = SpanReader.load(settings(model_dir, export_dir=str(cache)))
    assert len(exports) == 1 and first.model.path == second.model.path == exports[0]
    assert exports[0].is_file() and cache in exports[0].parents
    assert not list(exports[0].parent.glob(".export-*"))    # nothing half-written left behind

    weights = next(model_dir.glob("*.safetensors"))
    weights.write_bytes(weights.read_bytes())                 # same bytes, new file: a new model as far as we know
    import os
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 10**9))
    third = SpanReader.load(settings(model_dir, export_dir=str(cache)))
    assert len(exports) == 2 and third.model.path != first.model.path


def test_the_export_traces_plain_attention_and_leaves_the_model_as_it_was(tiny_qa_model, tmp_path):
    """The export runs the model's eager attention (SDPA's trace adds guards that cost ~1.3x in onnxruntime) and
    hands the caller's model back with its own attention, in eval mode."""
    import onnx
    from transformers import AutoModelForQuestionAnswering

    from jarvis.readers.onnx_backend import export_qa_model

    model = AutoModelForQuestionAnswering.from_pretrained(tiny_qa_model, attn_implementation="sdpa").eval()
    target = export_qa_model(model, ["input_ids", "attention_mask"], tmp_path / "model.onnx", quantize=False)
    ops = {node.op_type for node in onnx.load(str(target)).graph.node}
    assert "Softmax" in ops and "IsNaN" not in ops
    assert model.config._attn_implementation == "sdpa" and not model.training


def test_unknown_backend_is_a_settings_error_not_a_fallback(tiny_qa_model):
    from jarvis.readers.base import ReaderSettingsError

    with pytest.raises(ReaderSettingsError, match="unknown reader backend 'tpu'"):
        load_reader(settings(tiny_qa_model, backend="tpu"))


@pytest.fixture(scope="module")
def tiny_distilbert(tmp_path_factory) -> Path:
    from jarvis_lab.qa_models import MINECRAFT_TEXT, build_distilbert_qa_model

    return build_distilbert_qa_model(tmp_path_factory.mktemp("tiny-distilbert"), MINECRAFT_TEXT, tokenizer_vocab=600)


@pytest.mark.parametrize("backend", ["torch", "onnx"])
def test_a_distilbert_model_without_token_type_ids_loads_and_answers(tiny_distilbert, backend):
    reader = load_reader(settings(tiny_distilbert, backend=backend))
    assert isinstance(reader, SpanReader) and reader.backend == backend
    assert "token_type_ids" not in reader._input_names
    for question in QUESTIONS:
        span = reader.read(question, passages())
        assert span is not None and span.passage.text[span.start:span.end] == span.text
        assert is_word_boundary(span.passage.text, span.start) and is_word_boundary(span.passage.text, span.end)


def test_distilbert_backends_agree(tiny_distilbert):
    a = SpanReader.load(settings(tiny_distilbert, backend="torch")).read("what do cows drop?", passages())
    b = SpanReader.load(settings(tiny_distilbert, backend="onnx")).read("what do cows drop?", passages())
    assert (a.text, a.passage, a.start) == (b.text, b.passage, b.start) and a.score == pytest.approx(b.score, abs=1e-4)
