"""Jarvis's own reader: training examples, features, `jarvis train-reader`, and the training questions' rules."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jarvis.crawler.corpus import Page
from jarvis.config import ReaderSettings
from jarvis.readers.context import reader_context
from jarvis.readers.ranking import PassageRanker
from jarvis.training.examples import ANSWER, OTHER_PAGE, SAME_PAGE, GoldQuestion, build_examples, find_span

ROOT = Path(__file__).resolve().parent.parent
TRAIN_DIR = ROOT / "eval" / "train"
HELDOUT = ROOT.parent / "shared" / "realwiki" / "heldout_pages.txt"

COW = Page("Cow", "http://w/Cow", [
    "A cow is a passive mob found in grassy biomes.",
    "When killed, an adult cow drops 0-2 Leather and 1-3 Raw beef.",
    "Cows can be bred with wheat.",
    "Using a bucket on a cow fills it with milk.",
], sections=[[], ["Drops"], ["Breeding"], ["Usage"]])
PIG = Page("Pig", "http://w/Pig", ["A pig drops 1-3 raw porkchops when killed.", "Pigs can be ridden with a saddle."])


class Hit:
    def __init__(self, page: Page) -> None:
        self.title, self.paragraphs, self.sections, self.aliases = page.title, page.paragraphs, page.sections, []


def search(question: str, k: int):
    return [Hit(COW), Hit(PIG)][:k]


def test_find_span_ignores_case_and_spacing_and_maps_back_to_the_text():
    text = "When killed, an adult cow  drops 0-2 Leather\nand 1-3 Raw beef."
    start, end = find_span(text, "0-2 leather and 1-3 raw beef")
    assert text[start:end] == "0-2 Leather\nand 1-3 Raw beef"
    assert find_span(text, "feathers") is None


def test_examples_are_answerable_same_page_and_other_page_with_offsets_into_the_header_context():
    questions = [GoldQuestion("what do cows drop", "Cow", ("1-3 raw beef",)),
                 GoldQuestion("what does a pig drop", "Pig", ("raw porkchops",)),
                 GoldQuestion("what do ghasts drop", "Ghast", ("gunpowder",)),          # no such page
                 GoldQuestion("what do cows eat", "Cow", ("hay bales",))]               # no such span
    examples, report = build_examples(questions, [COW, PIG], PassageRanker(ReaderSettings().passages), search=search,
                                      same_page=2, other_page=1)
    assert (report.used, report.no_page, report.no_span) == (2, ["Ghast"], ["what do cows eat"])
    answers = [e for e in examples if e.origin == ANSWER]
    assert [e.answer_text for e in answers] == ["1-3 Raw beef", "raw porkchops"]
    for e in answers:
        assert e.context[e.answer_start:e.answer_start + len(e.answer_text)] == e.answer_text
    cow = answers[0]
    assert cow.context == reader_context("Cow", ("Drops",), COW.paragraphs[1])[0] and cow.context.startswith("Cow > Drops: ")
    negatives = [e for e in examples if e.origin != ANSWER]
    assert {e.origin for e in negatives} == {SAME_PAGE, OTHER_PAGE}
    golds = {q.text: q.answers for q in questions}
    for e in negatives:
        assert e.answer_start == -1 and not e.answerable
        assert not any(find_span(e.context, gold) for gold in golds[e.question])   # a negative never holds its gold
    same = [e for e in negatives if e.origin == SAME_PAGE and e.question == "what do cows drop"]
    assert len(same) == 2 and all(e.title == "Cow" for e in same)
    other = [e for e in negatives if e.origin == OTHER_PAGE and e.question == "what do cows drop"]
    assert [e.title for e in other] == ["Pig"]


def test_a_title_on_two_wikis_is_read_where_the_gold_is():
    sample_cow = Page("Cow", "http://sample/Cow", ["Cows give milk and drop leather."])
    examples, report = build_examples([GoldQuestion("what do cows give", "Cow", ("give milk",))], [COW, sample_cow],
                                      PassageRanker(ReaderSettings().passages), same_page=0)
    assert report.used == 1 and examples[0].context.endswith("Cows give milk and drop leather.")


def test_features_point_at_the_answer_tokens_and_at_cls_for_no_answer(tiny_qa_model):
    from transformers import AutoTokenizer

    from jarvis.training.features import make_features

    tokenizer = AutoTokenizer.from_pretrained(tiny_qa_model)
    examples, _ = build_examples([GoldQuestion("what do cows drop", "Cow", ("1-3 Raw beef",))], [COW, PIG],
                                 PassageRanker(ReaderSettings().passages), search=search, same_page=1, other_page=1)
    features = make_features(tokenizer, examples, max_seq_len=64, doc_stride=16)
    answered = [f for f in features if f.start > 0]
    assert len(answered) == 1
    text = tokenizer.decode(answered[0].input_ids[answered[0].start:answered[0].end + 1]).strip().lower()
    assert text == "1-3 raw beef"
    assert sum(1 for f in features if f.start == f.end == 0) == len(features) - 1


def run_jarvis(*args: str, home: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "JARVIS_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "jarvis", *args], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=ROOT)


def test_train_reader_trains_a_tiny_model_that_ask_then_uses(tmp_path, tiny_qa_model, bundled_corpus):
    questions = tmp_path / "q.txt"
    questions.write_text("# a handful of questions\n"
                         "what do cows drop|Cow|Leather\n"
                         "how do i make a crafting table|Crafting table|four Planks\n"
                         "where do blazes spawn|Blaze|Nether fortresses\n", encoding="utf-8")
    judged = tmp_path / "judged.txt"
    judged.write_text("What do cows drop?|Cow|leather\n", encoding="utf-8")   # asked in a set judged on
    out = tmp_path / "my-reader"
    trained = run_jarvis("train-reader", "--questions", str(questions), "--corpus", str(bundled_corpus),
                         "--held-back", str(judged),
                         "--base", str(tiny_qa_model), "--out", str(out), "--epochs", "1", "--batch-size", "4",
                         "--max-seq-len", "96", "--doc-stride", "32", "-q", home=tmp_path / "home")
    assert trained.returncode == 0, trained.stderr
    assert "2 of 2 questions used" in trained.stdout       # the judged question is never trained on
    card = json.loads((out / "jarvis-reader.json").read_text())
    assert card["context"] == "header" and card["max_seq_len"] == 96 and card["examples"]["answer"] >= 2
    assert card["held_back"] == ["judged.txt"]
    assert (out / "model.int8.onnx").is_file() and (out / "model.safetensors").is_file()
    asked = run_jarvis("ask", "what do cows drop?", "--model", str(out), "--json", "--no-log",
                       home=tmp_path / "home")
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["reader"] == "my-reader+int8"
    assert answer["title"] and isinstance(answer["confidence"], float)


def test_every_training_question_has_its_gold_and_none_is_about_a_held_out_page():
    if not HELDOUT.is_file():
        pytest.skip("../shared/realwiki is not here")
    held = {line.strip().casefold() for line in HELDOUT.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")}
    files = sorted(TRAIN_DIR.glob("*.txt"))
    assert files
    count = 0
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            question, title, *golds = line.split("|")
            count += 1
            assert golds and all(g.strip() for g in golds), f"{path.name}: {line}"
            # Sample-wiki pages that share a title with a held-out page are kept out too.
            assert title.strip().casefold() not in held, f"{path.name}: a question about the held-out page {title!r}"
    assert count >= 6000


# --------------------------------------------------------------------------- a trained reader, read


@pytest.fixture(scope="module")
def tiny_reader(tmp_path_factory, tiny_qa_model, bundled_corpus) -> Path:
    """A reader trained by jarvis.training on the tiny random RoBERTa: its folder, as train-reader writes it."""
    from jarvis.crawler.corpus import read_corpus
    from jarvis.training import TrainOptions, TrainSettings, train_reader

    out = tmp_path_factory.mktemp("trained") / "tiny-reader"
    questions = [GoldQuestion("what do cows drop", "Cow", ("Leather",)),
                 GoldQuestion("where do blazes spawn", "Blaze", ("Nether fortresses",))]
    train_reader(questions, read_corpus(bundled_corpus),
                 TrainOptions(out=out, base=str(tiny_qa_model), max_seq_len=96, doc_stride=32,
                              train=TrainSettings(epochs=1, batch_size=4)),
                 PassageRanker(ReaderSettings().passages), progress=False)
    return out


def test_a_trained_reader_is_read_without_torch_or_transformers(tiny_reader, tmp_path):
    """Its folder's int8 ONNX model and tokenizer.json are all the span reader needs: onnxruntime and the
    tokenizers library, no PyTorch, no transformers (seconds of a cold start)."""
    code = ("import sys\n"
            "from jarvis.config import ReaderSettings\n"
            "from jarvis.readers import load_reader\n"
            "from jarvis.readers.base import Passage\n"
            f"reader = load_reader(ReaderSettings(model={str(tiny_reader)!r}), name='span')\n"
            "span = reader.read('what do cows drop?', [Passage('Cow', 'When killed, an adult cow drops 0-2 "
            "Leather and 1-3 Raw beef.', 0, 0, section=('Drops',))])\n"
            "print(reader.name, '|', reader.backend, '|', span.text in 'When killed, an adult cow drops 0-2 Leather "
            "and 1-3 Raw beef.', '|', 'torch' in sys.modules, 'transformers' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                            env={**os.environ, "HF_HUB_OFFLINE": "1", "JARVIS_HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    name, backend, inside, imported = [part.strip() for part in result.stdout.strip().split("|")]
    assert (name, backend, inside, imported) == ("tiny-reader+int8", "onnx", "True", "False False")


def test_offline_the_default_model_out_of_reach_is_said_at_info_level(caplog, monkeypatch):
    import logging

    from jarvis.readers import load_reader

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with caplog.at_level(logging.INFO, logger="jarvis.readers"):
        reader = load_reader(ReaderSettings(fallback="lexical"))
    assert reader.name == "fallback:lexical"
    said = [r for r in caplog.records if r.name == "jarvis.readers"]
    assert len(said) == 1 and said[0].levelno == logging.INFO and "fallback:lexical" in said[0].getMessage()


def test_the_reader_card_carries_its_token_budget_and_a_budget_that_is_set_wins(tiny_reader, tmp_path):
    """A trained reader reads the tokens its card names (chosen on dev sets, bench/token_budget.py) unless the
    settings name a budget; a reader without one reads DEFAULT_TOKEN_BUDGET; a bad budget is one line."""
    import shutil

    from jarvis.assembly import passage_selector
    from jarvis.config import DEFAULT_TOKEN_BUDGET
    from jarvis.readers import load_reader
    from jarvis.readers.base import ModelUnavailableError, Passage

    folder = tmp_path / "budgeted"
    shutil.copytree(tiny_reader, folder)
    card = json.loads((folder / "jarvis-reader.json").read_text(encoding="utf-8"))
    (folder / "jarvis-reader.json").write_text(json.dumps({**card, "token_budget": 120}), encoding="utf-8")
    settings = ReaderSettings(model=str(folder))
    reader = load_reader(settings, name="span")
    passages = [Passage("Cow", f"Cows give leather and raw beef, fact number {n} of many about cows.", 0, n)
                for n in range(40)]
    chosen = passage_selector(reader, settings).select("what do cows drop", passages)
    assert chosen.budget == 120 and 0 < chosen.tokens <= 120
    assert passage_selector(reader, ReaderSettings(model=str(folder), token_budget=300)).select(
        "what do cows drop", passages).budget == 300
    plain = load_reader(ReaderSettings(model=str(tiny_reader)), name="span")
    assert passage_selector(plain, ReaderSettings()).select("what do cows drop", passages).budget \
        == DEFAULT_TOKEN_BUDGET
    (folder / "jarvis-reader.json").write_text(json.dumps({**card, "token_budget": -5}), encoding="utf-8")
    with pytest.raises(ModelUnavailableError) as error:
        load_reader(settings, name="span")
    assert "\n" not in str(error.value) and "token_budget" in str(error.value)


def test_a_reader_continued_from_a_reader_keeps_how_it_reads(tiny_reader, tmp_path, bundled_corpus):
    """Training that continues a Jarvis reader (``--base FOLDER``, ``--base jarvis``) keeps the reading choices
    of its card (how windows are ranked, whether a span is always given, the token budget): they were chosen
    for that reader on dev sets, and a continuation without them reads differently (no span where the base
    gave one). A reader trained from a plain checkpoint has none."""
    import shutil

    from jarvis.crawler.corpus import read_corpus
    from jarvis.readers.card import ReaderCard
    from jarvis.training import TrainOptions, TrainSettings, train_reader

    base = tmp_path / "chosen"
    shutil.copytree(tiny_reader, base)
    card = json.loads((base / "jarvis-reader.json").read_text(encoding="utf-8"))
    chosen = {"rank": "margin", "always_answer": True, "token_budget": 640}
    (base / "jarvis-reader.json").write_text(json.dumps({**card, **chosen}), encoding="utf-8")
    out = tmp_path / "continued"
    train_reader([GoldQuestion("what do cows drop", "Cow", ("Leather",))], read_corpus(bundled_corpus),
                 TrainOptions(out=out, base=str(base), max_seq_len=96, doc_stride=32,
                              train=TrainSettings(epochs=1, batch_size=4)),
                 PassageRanker(ReaderSettings().passages), progress=False)
    continued = ReaderCard.of(str(out))
    assert (continued.rank, continued.always_answer, continued.token_budget) == ("margin", True, 640)
    plain = ReaderCard.of(str(tiny_reader))
    assert (plain.rank, plain.always_answer, plain.token_budget) == ("span", False, None)


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
def test_jarvis_own_reader_missing_or_corrupt_is_one_line(tmp_path, monkeypatch, tiny_reader, damage):
    """`--reader jarvis` names the reader installed at SHIPPED_READER; a missing or damaged model file is one
    line (ModelUnavailableError, a user error), never a traceback."""
    import shutil

    import jarvis.readers as readers
    from jarvis.readers.base import ModelUnavailableError

    broken = tmp_path / "jarvis-minilm-qa"
    shutil.copytree(tiny_reader, broken)
    if damage == "missing":
        (broken / "model.int8.onnx").unlink()
    else:
        (broken / "model.int8.onnx").write_bytes(b"not an onnx model" * 100)
    monkeypatch.setattr(readers, "SHIPPED_READER", broken)
    with pytest.raises(ModelUnavailableError) as error:
        readers.load_reader(ReaderSettings(), name="jarvis")
    assert "\n" not in str(error.value) and "model.int8.onnx" in str(error.value)
    shutil.copy2(tiny_reader / "model.int8.onnx", broken / "model.int8.onnx")
    assert readers.load_reader(ReaderSettings(), name="jarvis").name == "jarvis-minilm-qa+int8"


# --------------------------------------------------------------------------- examples files, and the offline chain


def _cow_examples():
    return build_examples([GoldQuestion("what do cows drop", "Cow", ("Leather", "raw beef"))], [COW, PIG],
                          PassageRanker(ReaderSettings().passages), search=search)[0]


def test_examples_written_and_read_back_are_the_same_squad2_records(tmp_path):
    from jarvis.training import read_examples, write_examples

    examples = _cow_examples()
    path = tmp_path / "ex.jsonl.gz"
    write_examples(path, examples)
    assert read_examples(path) == examples
    first = json.loads(__import__("gzip").open(path, "rt").readline())
    assert first["answers"]["text"] == ["Leather"] and first["is_impossible"] is False
    assert first["context"][first["answers"]["answer_start"][0]:].startswith("Leather")
    assert first["golds"] == ["Leather", "raw beef"]


@pytest.mark.parametrize("line", ["not json", '{"question": "q"}',
                                  '{"question": "q", "context": "abc", "answers": {"text": ["x"], "answer_start": [0]}}'])
def test_a_malformed_examples_file_is_one_line_naming_the_line(tmp_path, line):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(line + "\n", encoding="utf-8")
    result = run_jarvis("train-reader", "--examples", str(bad), "--out", str(tmp_path / "out"), home=tmp_path / "h")
    assert result.returncode != 0
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "bad.jsonl, line 1" in lines[0] and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_every_example_carries_the_question_as_the_reader_will_read_it():
    """read_as: the training question is what the reader reads at answer time (Pipeline.read_as), while the
    searches and the passage ranking use the question as written."""
    searched = []

    def recording(question: str, k: int):
        searched.append(question)
        return search(question, k)

    q = GoldQuestion("Wat do COWS drop", "Cow", ("1-3 raw beef",))
    examples, report = build_examples([q], [COW, PIG], PassageRanker(ReaderSettings().passages), search=recording,
                                      read_as=lambda text: "what do cows drop?")
    assert report.used == 1 and len(examples) == 4
    assert {e.question for e in examples} == {"what do cows drop?"}
    assert searched == ["Wat do COWS drop"]
    plain, _ = build_examples([q], [COW, PIG], PassageRanker(ReaderSettings().passages), search=search)
    assert {e.question for e in plain} == {"Wat do COWS drop"}


def test_examples_built_once_train_elsewhere_with_a_dev_score(tmp_path, tiny_qa_model, bundled_corpus):
    """--write-examples stops after the examples (a GPU machine trains from the file); --examples trains on
    them, and --dev-examples puts the dev F1 in the card."""
    questions = tmp_path / "q.txt"
    questions.write_text("what do cows drop|Cow|Leather\nwhere do blazes spawn|Blaze|Nether fortresses\n",
                         encoding="utf-8")
    examples = tmp_path / "ex.jsonl.gz"
    wrote = run_jarvis("train-reader", "--questions", str(questions), "--corpus", str(bundled_corpus),
                       "--write-examples", str(examples), "-q", home=tmp_path / "home")
    assert wrote.returncode == 0, wrote.stderr
    assert "of 2 questions" in wrote.stdout and examples.is_file()
    out = tmp_path / "from-file"
    trained = run_jarvis("train-reader", "--examples", str(examples), "--dev-examples", str(examples),
                         "--base", str(tiny_qa_model), "--out", str(out), "--epochs", "1", "--batch-size", "4",
                         "--max-seq-len", "96", "--doc-stride", "32", "-q", home=tmp_path / "home")
    assert trained.returncode == 0, trained.stderr
    card = json.loads((out / "jarvis-reader.json").read_text())
    assert card["questions_used"] == 2 and card["dev"]["questions"] == 2 and 0.0 <= card["dev"]["f1"] <= 1.0
    assert "dev F1" in trained.stdout


def test_questions_about_a_server_guide_train_on_its_pages(tmp_path, bundled_corpus):
    """`train-reader --docs DIR`: questions about a server's own guide get their contexts from its Markdown
    pages (the answering paragraph after its "Page > Section: " header); a guide that cannot be read is one line."""
    from jarvis.training import read_examples

    pages = tmp_path / "guide"
    pages.mkdir()
    (pages / "homes.md").write_text("---\naliases: [Sethome]\n---\n# Homes\n\n## Setting a home\n\n"
                                    "Type /sethome NAME where you stand to save a home. /delhome NAME deletes one.\n\n"
                                    "## Limits\n\nMembers may set 3 homes; the teleport cooldown is 60 seconds.\n",
                                    encoding="utf-8")
    questions = tmp_path / "q.txt"
    questions.write_text("hw do i set a home|Homes|/sethome NAME\nhome cooldown?|Homes|60 seconds\n", encoding="utf-8")
    examples = tmp_path / "ex.jsonl.gz"
    wrote = run_jarvis("train-reader", "--questions", str(questions), "--corpus", str(bundled_corpus),
                       "--docs", str(pages), "--write-examples", str(examples), "-q", home=tmp_path / "home")
    assert wrote.returncode == 0, wrote.stderr
    answers = [e for e in read_examples(examples) if e.answer_start >= 0]
    # The reader trains on the question as it reads it when answering: the reading form, chat spelling spelt out.
    assert {e.question for e in answers} == {"how do i set a home?", "home cooldown?"}
    for e in answers:
        assert e.context.startswith("Homes > ") and e.context[e.answer_start:].startswith(e.answer_text)
    (pages / "bad.md").write_bytes(b"# Bad\n\n\xff\xfe not utf-8")
    failed = run_jarvis("train-reader", "--questions", str(questions), "--corpus", str(bundled_corpus),
                        "--docs", str(pages), "--write-examples", str(examples), "-q", home=tmp_path / "home")
    assert failed.returncode == 1 and "bad.md" in failed.stderr and len(failed.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
def test_offline_jarvis_own_reader_answers_and_gives_way_to_the_sentence_reader_with_one_line(
        tmp_path, monkeypatch, caplog, tiny_reader, damage):
    import logging
    import shutil

    import jarvis.readers as readers

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    installed = tmp_path / "jarvis-minilm-qa"
    shutil.copytree(tiny_reader, installed)
    monkeypatch.setattr(readers, "SHIPPED_READER", installed)
    settings = ReaderSettings(fallback="jarvis", fallback_tuning=ReaderSettings().fallback_tuning)
    assert readers.load_reader(settings).name == "jarvis-minilm-qa+int8"
    if damage == "missing":
        (installed / "model.int8.onnx").unlink()
    else:
        (installed / "model.int8.onnx").write_bytes(b"\x08\x07garbage" * 64)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="jarvis.readers"):
        reader = readers.load_reader(settings)
    assert reader.name.startswith("fallback:")
    warned = [r for r in caplog.records if r.name == "jarvis.readers" and r.levelno >= logging.WARNING]
    assert len(warned) == 1 and "\n" not in warned[0].getMessage()
    assert "Jarvis's own reader cannot be loaded" in warned[0].getMessage() and reader.name in warned[0].getMessage()


def test_a_fresh_clone_answers_offline_with_the_shipped_reader(tmp_path):
    """No download, no settings: `jarvis ask` on the bundled default answers with the reader in the package."""
    from jarvis.config import SHIPPED_READER

    assert (SHIPPED_READER / "model.int8.onnx").is_file(), "the package ships Jarvis's own reader"
    assert (SHIPPED_READER / "model.int8.onnx").stat().st_size <= 40_000_000
    asked = run_jarvis("ask", "what do cows drop?", "--json", "--no-log", home=tmp_path / "home")
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["reader"] == "jarvis-minilm-qa+int8"
    assert answer["title"] == "Cow" and "leather" in answer["reply"].lower()


# --------------------------------------------------------------------------- readers read back and averaged


def _export_only(reader: Path, folder: Path) -> Path:
    """A copy of ``reader`` as the package ships one: config, tokenizer, card and int8 export, no weights."""
    import shutil

    shutil.copytree(reader, folder, ignore=shutil.ignore_patterns("*.safetensors", "*.bin"))
    return folder


def test_weights_read_back_out_of_an_export_are_the_model_s(tiny_reader, tmp_path):
    """The fp32 export gives back every weight exactly; the int8 export gives them within its quantization
    step, and the rebuilt model answers as the export does."""
    import numpy as np
    import torch
    from transformers import AutoModelForQuestionAnswering

    from jarvis.readers.onnx_backend import export_qa_model, weights_of_export
    from jarvis.readers.acquisition import model_input_names
    from jarvis.training import load_model

    tokenizer, model = load_model(str(tiny_reader))
    own = {name: tensor.numpy() for name, tensor in model.state_dict().items()
           if not name.endswith(("position_ids", "token_type_ids"))}
    fp32 = export_qa_model(model, model_input_names(tokenizer, model), tmp_path / "model.onnx", quantize=False)
    exact = weights_of_export(fp32)
    assert exact.keys() == own.keys()
    assert all(np.array_equal(exact[name], own[name]) for name in own)

    shipped = _export_only(tiny_reader, tmp_path / "shipped")
    _, rebuilt = load_model(str(shipped))
    int8 = weights_of_export(shipped / "model.int8.onnx")
    assert int8.keys() == own.keys()
    changed = [name for name in own if not np.array_equal(int8[name], own[name])]
    assert changed and all(np.abs(int8[n] - own[n]).max() <= np.abs(own[n]).max() / 100 for n in changed)
    batch = tokenizer("what do cows drop?", "When killed, an adult cow drops 0-2 Leather and 1-3 Raw beef.",
                      return_tensors="pt")
    with torch.inference_mode():
        a, b = model(**batch), rebuilt(**batch)
    assert torch.allclose(a.start_logits, b.start_logits, atol=0.05)
    assert isinstance(AutoModelForQuestionAnswering.from_config(rebuilt.config), type(rebuilt))


def test_average_readers_writes_their_mean_which_ask_then_uses(tiny_reader, tmp_path):
    """`jarvis average-readers` takes reader folders (weights, or only the export) and writes the reader of
    their mean weights: its weights, its int8 export and a card naming what it averages."""
    import torch
    from safetensors.torch import load_file, save_file

    other = tmp_path / "other"
    import shutil

    shutil.copytree(tiny_reader, other)
    first = load_file(str(tiny_reader / "model.safetensors"))
    shifted = {name: tensor + 0.5 if tensor.is_floating_point() else tensor for name, tensor in first.items()}
    save_file(shifted, str(other / "model.safetensors"), metadata={"format": "pt"})
    out = tmp_path / "mean"
    done = run_jarvis("average-readers", str(tiny_reader), str(other), "--out", str(out), "-q",
                      home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert "averaged 2 readers" in done.stdout
    mean = load_file(str(out / "model.safetensors"))
    assert all(torch.allclose(mean[n], first[n] + 0.25) for n in first if first[n].is_floating_point())
    card = json.loads((out / "jarvis-reader.json").read_text(encoding="utf-8"))
    assert [m["reader"] for m in card["average_of"]] == ["tiny-reader", "other"]
    assert card["context"] == "header" and card["max_seq_len"] == 96
    asked = run_jarvis("ask", "what do cows drop?", "--model", str(out), "--json", "--no-log", home=tmp_path / "home")
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["reader"] == "mean+int8"

    # An export-only member (as the package ships a reader) averages the same way.
    again = run_jarvis("average-readers", str(_export_only(tiny_reader, tmp_path / "shipped")), str(other),
                       "--out", str(tmp_path / "mean2"), "-q", home=tmp_path / "home")
    assert again.returncode == 0, again.stderr


def test_readers_that_cannot_be_averaged_are_one_line(tiny_reader, tiny_qa_model, tmp_path):
    """Readers that read differently, another architecture, a folder that is not there: one line each."""
    import shutil

    wider = tmp_path / "wider"
    shutil.copytree(tiny_reader, wider)
    card = json.loads((wider / "jarvis-reader.json").read_text(encoding="utf-8"))
    (wider / "jarvis-reader.json").write_text(json.dumps({**card, "max_seq_len": 128}), encoding="utf-8")
    for readers, said in ([str(tiny_reader), str(wider)], "max_seq_len differs"), \
                         ([str(tiny_reader), str(tmp_path / "nowhere")], "no reader folder"), \
                         ([str(tiny_reader)], "two readers or more"):
        done = run_jarvis("average-readers", *readers, "--out", str(tmp_path / "out"), home=tmp_path / "home")
        assert done.returncode != 0
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0], done.stderr
    plain = tmp_path / "plain"
    shutil.copytree(tiny_qa_model, plain)
    shutil.copy2(tiny_reader / "jarvis-reader.json", plain / "jarvis-reader.json")
    with_layers = json.loads((plain / "config.json").read_text(encoding="utf-8"))
    (plain / "config.json").write_text(json.dumps({**with_layers, "num_hidden_layers": 1}), encoding="utf-8")
    done = run_jarvis("average-readers", str(tiny_reader), str(plain), "--out", str(tmp_path / "out"),
                      home=tmp_path / "home")
    assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1, done.stderr



def test_train_reader_continues_from_jarvis_own_reader(tmp_path, bundled_corpus):
    """`--base jarvis`: the shipped reader, which holds only its int8 export, is where a training can start (a
    server admin fine-tuning it on their own wiki's questions)."""
    questions = tmp_path / "q.txt"
    questions.write_text("what do cows drop|Cow|Leather\nwhere do blazes spawn|Blaze|Nether fortresses\n",
                         encoding="utf-8")
    out = tmp_path / "mine"
    trained = run_jarvis("train-reader", "--questions", str(questions), "--corpus", str(bundled_corpus),
                         "--base", "jarvis", "--out", str(out), "--epochs", "1", "--batch-size", "8",
                         "--max-seq-len", "128", "--doc-stride", "48", "--learning-rate", "1e-6", "-q",
                         home=tmp_path / "home")
    assert trained.returncode == 0, trained.stderr
    card = json.loads((out / "jarvis-reader.json").read_text(encoding="utf-8"))
    assert card["base"] == "jarvis-minilm-qa"
    asked = run_jarvis("ask", "what do cows drop?", "--model", str(out), "--json", "--no-log",
                       home=tmp_path / "home")
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    # A cow's drops, from the Cow page: read in this training's 128-token windows, today's weights quote either
    # the prose ("0-2 Leather and 1-3 Raw beef") or the drops table's row ("Raw beef: 1-3").
    assert answer["reader"] == "mine+int8" and answer["title"] == "Cow"
    assert "leather" in answer["reply"].lower() or "raw beef" in answer["reply"].lower()
