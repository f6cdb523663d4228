"""The question pipeline: question checks, Answer, the cache, threads, the CLI, and the fallback reader."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from jarvis.crawler.corpus import Page, write_corpus
from jarvis.assembly import assemble
from jarvis.cli import main
from jarvis.config import Config, ReaderSettings
from jarvis.errors import JarvisError
from jarvis.question_text import MAX_QUESTION_CHARS, QuestionError, check_question, normalize_question
from jarvis.readers.base import Passage
from jarvis.replies import answer_json, compose_reply, describe

DESIGN_JSON_KEYS = {"answer", "score", "title", "reader", "seconds", "confidence", "abstained", "reply", "sentence"}

PAGES = [
    Page("Cow", "http://127.0.0.1/w/Cow", [
        "A cow is a common passive mob found in grassy biomes of the Overworld.",
        "When killed, an adult cow drops 0-2 leather and 1-3 raw beef. Baby cows drop nothing.",
        "Using an empty bucket on a cow fills it with milk.",
    ], aliases=["Cows"]),
    Page("Zombie", "http://127.0.0.1/w/Zombie", [
        "A zombie is a common hostile undead mob.",
        "Zombies spawn in groups of up to four wherever the block light level is 0, in caves and at night.",
        "A zombie burns in sunlight unless it wears a helmet.",
    ]),
    Page("Torch", "http://127.0.0.1/w/Torch", [
        "A torch is a small block that gives off light at level 14.",
        "Torches are crafted from one coal or charcoal on top of one stick.",
    ]),
    Page("Creeper", "http://127.0.0.1/w/Creeper", [
        "A creeper is a silent hostile mob that walks up to players and explodes.",
        "Creepers are afraid of cats and run away from them.",
    ]),
]


def build(pages: list[Page], index_dir: Path) -> Path:
    from jarvis.index import build_index

    corpus = index_dir.parent / f"{index_dir.name}.jsonl"
    write_corpus(pages, corpus)
    build_index(corpus, index_dir, progress=False)
    return index_dir


@pytest.fixture(scope="module")
def small_index(tmp_path_factory) -> Path:
    return build(PAGES, tmp_path_factory.mktemp("small") / "index")


def config_for(model: str | Path, **reader) -> Config:
    return Config(reader=ReaderSettings(model=str(model), **reader))


@pytest.fixture
def jarvis(tiny_qa_model, small_index):
    with assemble(config_for(tiny_qa_model, no_answer_margin=-1e9), small_index) as j:
        yield j


# --------------------------------------------------------------------------- questions


@pytest.mark.parametrize("text", ["", "   ", "\t\n", "?!", "\x00\x07"])
def test_empty_questions_are_user_errors(text):
    with pytest.raises(QuestionError) as error:
        check_question(text)
    assert error.value.user_error and isinstance(error.value, JarvisError)
    assert "\n" not in str(error.value)


def test_absurdly_long_question_is_a_user_error():
    assert check_question("what do cows drop " * 20)
    with pytest.raises(QuestionError, match="too long"):
        check_question("a" * (MAX_QUESTION_CHARS + 1))


def test_question_is_cleaned_of_control_characters_and_extra_spaces():
    assert check_question("  what do\tcows\x00 drop?\n") == "what do cows drop?"


def test_normalized_questions_ignore_case_spacing_and_closing_punctuation():
    assert normalize_question("What do  COWS drop?") == normalize_question("what do cows drop") == "what do cows drop"
    assert normalize_question("what do cows drop") != normalize_question("what do pigs drop")


# --------------------------------------------------------------------------- answers


def test_ask_answers_from_the_top_pages(jarvis):
    answer = jarvis.ask("what do cows drop?")
    assert answer.found and answer.text
    assert answer.reader == "model+int8"                  # the model directory's name; int8 on a CPU by default
    source = next(p for p in PAGES if p.title == answer.title)
    assert any(answer.text in paragraph for paragraph in source.paragraphs)
    assert answer.url == source.url
    assert answer.pages and answer.pages[0] == "Cow" and answer.title in answer.pages
    assert answer.seconds > 0 and not answer.cached


def test_answer_json_has_the_design_keys(jarvis):
    data = answer_json(jarvis.ask("where do zombies spawn?"))
    assert DESIGN_JSON_KEYS <= set(data)
    assert isinstance(data["answer"], str) and isinstance(data["score"], float)
    assert isinstance(data["seconds"], float) and data["found"] is True
    json.dumps(data)


def test_describe_names_reply_answer_page_confidence_reader_and_time(jarvis):
    answer = jarvis.ask("where do zombies spawn?")
    text = describe(answer)
    assert text.splitlines()[0] == compose_reply(answer)
    assert f"answer: {answer.text}" in text and f"page: {answer.title}" in text
    assert f"confidence: {answer.confidence:.2f}" in text and "reader: model" in text and " s" in text


def test_unsure_when_no_span_beats_the_no_answer_score(tiny_qa_model, small_index):
    with assemble(config_for(tiny_qa_model, no_answer_margin=1e9), small_index) as jarvis:
        answer = jarvis.ask("what do cows drop?")
    # Nothing to state, but the top page is worth reading: Jarvis says it is not sure and points to it.
    assert not answer.found and answer.text == "" and answer.abstained and answer.confidence == 0.0
    assert answer.pages[0] == "Cow" and answer.title == "Cow"
    assert describe(answer).startswith("not sure") and compose_reply(answer).startswith("not sure — see the Cow page")
    data = answer_json(answer)
    assert data["answer"] == "" and data["found"] is False and DESIGN_JSON_KEYS <= set(data)


def test_dont_know_when_no_page_matches(jarvis):
    answer = jarvis.ask("xylophone quasar")
    assert not answer.found and answer.pages == () and answer.title == "" and answer.abstained
    assert compose_reply(answer) == "I don't know." and "no page matched" in describe(answer)


def test_read_pages_answers_from_given_pages_without_retrieval(jarvis):
    answer = jarvis.read_pages("what do cows drop?", [PAGES[0]])
    assert answer.title == "Cow" and any(answer.text in p for p in PAGES[0].paragraphs)


# --------------------------------------------------------------------------- cache


def test_same_question_is_answered_from_the_cache_without_reading(jarvis):
    first = jarvis.ask("What do cows drop?")
    reads = jarvis.stats.reads
    again = jarvis.ask("what do  cows drop")
    assert again.cached and jarvis.stats.reads == reads and jarvis.stats.cache_hits == 1
    assert (again.text, again.score, again.title) == (first.text, first.score, first.title)


def test_cache_is_bounded(tiny_qa_model, small_index):
    config = config_for(tiny_qa_model, no_answer_margin=-1e9, cache_size=2)
    with assemble(config, small_index) as jarvis:
        for question in ["what do cows drop", "where do zombies spawn", "how are torches crafted"]:
            jarvis.ask(question)
        assert jarvis.ask("how are torches crafted").cached          # recent: kept
        assert not jarvis.ask("what do cows drop").cached            # oldest: evicted
        assert jarvis.stats.reads == 4


def test_a_new_index_version_is_not_answered_from_the_old_cache(tiny_qa_model, tmp_path):
    index_dir = build(PAGES, tmp_path / "index")
    with assemble(config_for(tiny_qa_model, no_answer_margin=-1e9), index_dir) as jarvis:
        jarvis.ask("what do cows drop?")
        changed = [replace(PAGES[0], paragraphs=["Cows now drop 7 golden carrots each."], sha1="")] + PAGES[1:]
        build(changed, index_dir)   # atomic swap beside the open searcher
        answer = jarvis.ask("what do cows drop?")
    assert not answer.cached and answer.text in "Cows now drop 7 golden carrots each."
    assert jarvis.stats.reads == 2


# --------------------------------------------------------------------------- threads, pre-ranking


def test_ask_from_a_worker_thread_repeatedly(jarvis, tiny_qa_model, small_index):
    """A worker thread's answers, cached ones included, are those another Jarvis gives on the main thread."""
    questions = ["what do cows drop?", "where do zombies spawn?", "what is a creeper?"] * 2
    with assemble(config_for(tiny_qa_model, no_answer_margin=-1e9), small_index) as other:
        expected = [other.ask(q).text for q in questions]
    answers: list[str] = []
    worker = threading.Thread(target=lambda: answers.extend(jarvis.ask(q).text for q in questions))
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive()
    assert answers == expected


def test_paragraph_preranking_keeps_the_best_matching_paragraphs_in_reading_order(jarvis):
    passages = [Passage(p.title, text, rank, i) for rank, p in enumerate(PAGES) for i, text in enumerate(p.paragraphs)]
    best = jarvis.ranker.best("what do cows drop?", passages, 2)   # the one passage ranker (readers/ranking.py)
    assert len(best) == 2
    assert passages[1] in best                                   # the paragraph about drops
    assert best == sorted(best, key=passages.index)
    assert jarvis.ranker.best("what do cows drop?", passages[:2], 5) == passages[:2]


def test_a_question_reads_the_index_pointer_once(jarvis, monkeypatch):
    """One question sees one generation of the index: its CURRENT pointer is read once, for the cache key,
    the sites, the glossary and the search alike (a rebuild between them cannot mix two generations)."""
    layout = jarvis.searcher._layout
    reads = []
    read_pointer = layout.pointer
    monkeypatch.setattr(layout, "pointer", lambda: reads.append(1) or read_pointer())
    answer = jarvis.ask("what do zombies drop?")
    assert answer.pages and len(reads) == 1
    again = jarvis.ask("what do zombies drop?")
    assert again.cached and len(reads) == 2


def test_max_paragraphs_reads_only_that_many(tiny_qa_model, small_index):
    config = config_for(tiny_qa_model, no_answer_margin=-1e9, max_paragraphs=1)
    with assemble(config, small_index) as jarvis:
        answer = jarvis.ask("what do cows drop?")
    assert answer.text in PAGES[0].paragraphs[1]


# --------------------------------------------------------------------------- CLI


def test_cli_ask_json(tiny_qa_model, small_index, capsys):
    code = main(["ask", "what do cows drop?", "--index", str(small_index), "--model", str(tiny_qa_model),
                 "--json", "-q"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert DESIGN_JSON_KEYS <= set(data) and data["reader"] == "model+int8"


def test_cli_ask_no_int8_reads_in_full_precision(tiny_qa_model, small_index, capsys):
    code = main(["ask", "what do cows drop?", "--index", str(small_index), "--model", str(tiny_qa_model),
                 "--json", "-q", "--no-int8"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["reader"] == "model"


def test_cli_ask_sequential_gives_the_batched_answer(tiny_qa_model, small_index, capsys):
    outputs = []
    for extra in ([], ["--sequential"]):
        assert main(["ask", "where do zombies spawn?", "--index", str(small_index), "--model", str(tiny_qa_model),
                     "--json", "-q", "--no-int8", *extra]) == 0  # fp32: int8 scales per batch
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0]["answer"] == outputs[1]["answer"]
    assert outputs[0]["score"] == pytest.approx(outputs[1]["score"], abs=1e-3)


def test_cli_ask_fallback_prints_reply_answer_page_and_reader(small_index, capsys):
    assert main(["ask", "what do cows drop?", "--index", str(small_index), "--fallback", "-q"]) == 0
    out = capsys.readouterr().out
    reply = out.splitlines()[0]                     # what the chat would show, stated or "not sure"
    assert "0-2 leather and 1-3 raw beef" in reply and "Cow" in reply
    # The offline reader: Jarvis's own, shipped in the package.
    assert "answer: 0-2 leather and 1-3 raw beef" in out and "page: Cow" in out and "reader: jarvis-minilm-qa" in out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("env", [
    {"HF_HUB_OFFLINE": "1"},                                      # offline mode, not in the cache
    {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": "http://127.0.0.1:{port}"},   # hub unreachable (nothing listens)
], ids=["offline", "unreachable"])
def test_uncached_hub_model_falls_back_at_once_with_a_one_line_notice(small_index, tmp_path, env):
    env = {k: v.format(port=free_port()) for k, v in env.items()}
    result = subprocess.run(
        [sys.executable, "-m", "jarvis", "ask", "what do cows drop?", "--index", str(small_index),
         "--model", "jarvis-tests/no-such-model", "--json"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "HF_HOME": str(tmp_path / "hf"), "TRANSFORMERS_OFFLINE": "", **env})
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["reader"] == "jarvis-minilm-qa+int8" and data["title"] == "Cow"     # the offline reader
    notices = [line for line in result.stderr.splitlines() if "QA model unavailable" in line]
    assert len(notices) == 1 and "jarvis-tests/no-such-model" in notices[0]
    assert "Retry" not in result.stderr and "Traceback" not in result.stderr   # failed fast, no hub retries


def test_jarvis_own_reader_answers_by_default_even_with_the_hub_in_reach(small_index, tmp_path):
    """One product online and offline: with a hub that answers every request (a local one, recording them),
    `jarvis ask` asks it nothing and answers with Jarvis's own reader, and -v names it."""
    import http.server
    import threading

    asked = []

    class Hub(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            asked.append(self.path)
            self.send_response(200)
            self.end_headers()

        do_HEAD = do_GET

        def log_message(self, *args):
            pass

    hub = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    threading.Thread(target=hub.serve_forever, daemon=True).start()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "jarvis", "ask", "what do cows drop?", "--index", str(small_index), "--json", "-v",
             "--no-log"], capture_output=True, text=True, timeout=300,
            env={**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "0",
                 "HF_ENDPOINT": f"http://127.0.0.1:{hub.server_address[1]}", "JARVIS_HOME": str(tmp_path / "home")})
    finally:
        hub.shutdown()
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["reader"] == "jarvis-minilm-qa+int8" and asked == []
    assert "reader: jarvis-minilm-qa+int8 (Jarvis's own, shipped)" in result.stderr


def test_a_model_asked_for_by_name_answers_with_a_warning_that_its_confidence_is_not_fitted(small_index, tiny_qa_model,
                                                                                            tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "jarvis", "ask", "what do cows drop?", "--index", str(small_index), "--json",
         "--model", str(tiny_qa_model), "--no-log"], capture_output=True, text=True, timeout=300,
        env={**os.environ, "JARVIS_HOME": str(tmp_path / "home")})
    assert result.returncode == 0, result.stderr
    reader = json.loads(result.stdout)["reader"]
    assert reader.startswith(tiny_qa_model.name)
    warnings = [line for line in result.stderr.splitlines() if "no confidence model fitted for it" in line]
    assert len(warnings) == 1 and reader in warnings[0] and "jarvis calibrate" in warnings[0]


# --------------------------------------------------------------------------- the fallback reader on the bundled corpus


@pytest.fixture(scope="module", params=["minilm", "lexical"])
def fallback_jarvis(request, bundled_index):
    config = Config(reader=ReaderSettings(model="", fallback=request.param))
    with assemble(config, bundled_index) as jarvis:
        assert jarvis.reader.name == f"fallback:{request.param}"
        yield jarvis


def test_fallback_answers_what_cows_drop(fallback_jarvis):
    answer = fallback_jarvis.ask("what do cows drop?")
    assert answer.title == "Cow"
    assert "0-2 leather" in answer.text.lower() and "1-3 raw beef" in answer.text.lower()
    assert len(answer.text.split()) <= 8       # the drops, not the whole sentence


@pytest.mark.parametrize("question, title, expected", [
    ("where do zombies spawn?", "Zombie", "light level is 0"),
    ("what is a creeper?", "Creeper", "hostile mob"),
    ("how do you tame a wolf?", "Wolf", "bone"),
    ("what biome do mooshrooms live in?", "Mooshroom", "mushroom fields"),
    ("how do I make a crafting table?", "Crafting table", "four planks"),   # "crafting" names the thing
])
def test_fallback_answers_questions_of_different_kinds(fallback_jarvis, question, title, expected):
    answer = fallback_jarvis.ask(question)
    assert answer.title == title
    assert expected in answer.text.lower()


def test_fallback_answer_is_a_substring_of_a_page_read(fallback_jarvis):
    for question in ["how do you craft a torch?", "what does milk do?", "where are diamonds found?"]:
        answer = fallback_jarvis.ask(question)
        hits = fallback_jarvis.searcher.search(question, k=3)
        assert answer.found and any(answer.text in p for hit in hits for p in hit.paragraphs)


def test_fallback_does_not_know_when_nothing_matches(fallback_jarvis):
    assert not fallback_jarvis.ask("xylophone quasar nebula").found


def test_an_answer_is_plain_data_with_where_it_was_read(tiny_qa_model, small_index):
    """The answer holds the text, the page, the paragraph and the offsets it was read at, the confidence and
    whether it is stated (and under which rule): no presentation (the replies are made by jarvis/replies.py)."""
    from dataclasses import fields

    from jarvis.answer import Answer

    with assemble(config_for(tiny_qa_model, no_answer_margin=-1e9), small_index) as jarvis:
        answer = jarvis.ask("where do zombies spawn?")
    assert answer.found and answer.passage.text[answer.start:answer.end] == answer.text
    assert answer.rule == "wiki" and answer.threshold is not None and answer.stated == (not answer.abstained)
    assert not {"reply", "describe", "to_json", "source"} & set(dir(Answer))
    assert {f.name for f in fields(Answer)} >= {"text", "title", "passage", "start", "end", "confidence", "abstained"}
