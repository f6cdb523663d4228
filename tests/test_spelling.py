"""Questions typed with chat spelling and typos find the pages the same question spelt right finds."""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from jarvis.crawler.corpus import Page
from jarvis.index import Searcher, build_index
from jarvis.index.profiles import LEXICAL
from jarvis.index.settings import RetrievalSettings
from jarvis.index.spelling import VOCABULARY_FILE, Speller, Vocabulary, vocabulary_counts


def _vocabulary(**counts: int) -> Vocabulary:
    return Vocabulary(dict(counts))


def test_chat_spellings_are_spelt_out():
    speller = Speller(_vocabulary(enderman=40, drop=90))
    corrected = speller.correct("wat dose u get when endermen drop")
    assert corrected.text.startswith("what does you get")
    assert ("wat", "what") in corrected.fixes and ("dose", "does") in corrected.fixes


def test_unknown_words_become_the_nearest_known_word():
    speller = Speller(_vocabulary(enderman=40, survival=300, zombie=500, horse=200, tame=80, bucket=60))
    assert speller.correct("endermn").text == "enderman"           # a letter left out
    assert speller.correct("survivl").text == "survival"
    assert speller.correct("zombi horse").text == "zombie horse"
    assert speller.correct("bukket").text == "bucket"               # two edits: a long word may have them
    assert speller.correct("hrose").text == "horse"                 # two letters swapped count as one edit


def test_known_short_and_numeric_words_are_left_alone():
    speller = Speller(_vocabulary(zombie=500, pig=40))
    # "pog" is short (3 letters): no correction; "zombies" is one edit from "zombie" but 64 is a number.
    assert speller.correct("pog 64 zombie").text == "pog 64 zombie"
    assert speller.correct("xylophone").text == "xylophone"        # nothing near it: left as typed
    assert speller.correct("xylophone").fixes == ()


def test_the_more_used_word_wins_a_tie():
    speller = Speller(_vocabulary(boat=500, coat=3))
    assert speller.correct("boaat").text == "boat"


def test_players_words_of_the_glossary_are_never_corrected():
    speller = Speller(_vocabulary(apple=900, golden=300), keep=["gapple"])
    assert speller.correct("gapple recipe").text == "gapple recipe"


def test_vocabulary_counts_title_words_as_frequent():
    pages = [Page(title="Zombie Horse", url="u", aliases=["Undead horse"], paragraphs=["A rare horse. Horses eat."]),
             Page(title="Cow", url="v", aliases=[], paragraphs=["Cows drop 2 leather."])]
    counts = vocabulary_counts(pages)
    assert counts["zombie"] >= 50 and counts["undead"] >= 50
    assert counts["horse"] == 101 and counts["leather"] == 1
    assert "2" not in counts


@pytest.fixture(scope="module")
def sample_searcher(bundled_index):
    with Searcher(bundled_index) as searcher:
        yield searcher


@pytest.mark.parametrize("typed, spelt_right", [
    ("wat do endermn drop", "what do enderman drop"),
    ("can u tame a zombi horse in survivl", "can you tame a zombie horse in survival"),
    ("how 2 make a bukket", "how to make a bucket"),
    ("dose a zombi burn in the sun", "does a zombie burn in the sun"),
    ("wher do blazez spawn", "where do blazes spawn"),
])
def test_a_misspelt_question_finds_the_page_the_spelt_right_one_finds(sample_searcher, typed, spelt_right):
    assert sample_searcher.search(typed, k=1)[0].title == sample_searcher.search(spelt_right, k=1)[0].title


def test_the_index_keeps_its_vocabulary_and_spelling_can_be_turned_off(bundled_index):
    generation = next(p for p in bundled_index.iterdir() if p.name.startswith("gen-"))
    assert (generation / VOCABULARY_FILE).is_file()
    vocabulary = Vocabulary.load(generation)
    assert "enderman" in vocabulary and "endermn" not in vocabulary
    with Searcher(bundled_index, RetrievalSettings(spelling=False)) as as_typed, Searcher(bundled_index) as spelt:
        assert as_typed.snapshot().query("wat do endermn drop").spelt == "wat do endermn drop"
        assert spelt.snapshot().query("wat do endermn drop").spelt == "what do enderman drop"
        # As typed, the lexical side finds no page by the misspelt word (the dense side may still).
        lexical = as_typed.snapshot().passages(as_typed.snapshot().query("endermn"), 30)
        assert all(hit.lexical_rank is None for hit in lexical)


def test_an_index_built_without_a_vocabulary_still_searches(tmp_path, bundled_corpus):
    profile = replace(LEXICAL, name="lexical", spelling=False)
    build_index(bundled_corpus, tmp_path / "ix", profile=profile, progress=False)
    with Searcher(tmp_path / "ix") as searcher:
        assert searcher.search("what do cows drop", k=1)[0].title == "Cow"


def test_version_numbers_stay_whole():
    speller = Speller(_vocabulary(mobs=90, coming=5))
    assert speller.correct("what mobs are coming in 1.21").text == "what mobs are coming in 1.21"
    assert speller.correct("blocks added in edu 1.0.21?").text == "blocks added in edu 1.0.21"
