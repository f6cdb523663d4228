"""Passage retrieval (index/): BM25F scored eagerly and pinned against bm25s, the passage counts and vectors of a
generation (saved, loaded, reused by incremental builds), the hybrid ranking, and searching an index's passages."""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from jarvis.crawler.corpus import Page, write_corpus
from jarvis.index import Searcher, build_index
from jarvis.index.bm25f import BM25FParams, Vocabulary, count_rows, query_scores, score_matrix, top_k
from jarvis.index.documents import page_fingerprint
from jarvis.index.passages import passage_text
from jarvis.index.sources import page_key
from jarvis.index.sparse import SparseIndex
from jarvis.index.terms import Terms
from jarvis.index.vectors import PassageVectors


def pages() -> list[Page]:
    def page(title, *paragraphs, sections=None, aliases=(), kind="article"):
        return Page(title=title, url=f"http://127.0.0.1/w/{title.replace(' ', '_')}", paragraphs=list(paragraphs),
                    sections=sections, aliases=list(aliases), page_kind=kind, site="Test Wiki")

    return [
        page("Cow", "A cow is a passive mob found in grassy biomes.",
             "When killed, an adult cow drops 0-2 leather and 1-3 raw beef.",
             "Cows can be milked with a bucket.", sections=[[], ["Drops"], ["Usage"]], aliases=("Cows",)),
        page("Shulker", "A shulker is a box-shaped hostile mob found in End cities.",
             "Shulkers shoot bullets that give the Levitation effect, making the player float upwards.",
             "Shulkers drop shulker shells.", sections=[[], ["Behavior", "Attacks"], ["Drops"]]),
        page("Pig", "A pig is a passive mob that drops porkchops.", "Pigs can be ridden with a saddle.",
             sections=[[], ["Usage"]]),
        page("Tutorials/Cow farming", "A cow farm breeds cows with wheat and collects leather.",
             sections=[[]], kind="tutorial"),
        page("Beacon", "A beacon pyramid needs 164 blocks of iron, gold, emerald, diamond or netherite for its "
             "full four levels.", "The beam of a beacon can be seen from far away.", sections=[["Pyramid"], ["Beam"]]),
    ]


# --------------------------------------------------------------------------- the scoring functions


def test_one_field_bm25f_is_lucenes_bm25_as_bm25s_scores_it():
    bm25s = pytest.importorskip("bm25s")
    rng = random.Random(7)
    words = [f"w{i}" for i in range(40)]
    docs = [[rng.choice(words) for _ in range(rng.randint(1, 30))] for _ in range(60)]
    vocabulary = Vocabulary()
    counts = count_rows(docs, vocabulary)
    matrix = score_matrix({"content": counts}, BM25FParams(k1=1.2, weights=(("content", 1.0),), b=(("content", 0.75),)))
    reference = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    reference.index(bm25s.tokenization.Tokenized(ids=[[vocabulary.get(w) for w in d] for d in docs],
                                                 vocab=dict(vocabulary._ids)), show_progress=False)
    for query in (["w1"], ["w3", "w7", "w7"], ["w0", "w39", "w12", "w5"]):
        ids = [vocabulary.get(w) for w in dict.fromkeys(query)]
        ours = query_scores(matrix, ids)
        theirs = np.zeros(len(docs))
        for word in dict.fromkeys(query):
            theirs += reference.get_scores([word])
        assert np.allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_a_title_field_lifts_the_passages_of_the_page_it_names():
    vocabulary = Vocabulary()
    content = count_rows([["drop", "leather"], ["drop", "leather"]], vocabulary)
    title = count_rows([["cow"], ["horse"]], vocabulary)
    params = BM25FParams(k1=1.2, weights=(("title", 2.0), ("content", 1.0)), b=(("title", 0.3), ("content", 0.75)))
    matrix = score_matrix({"title": title, "content": content}, params)
    scores = query_scores(matrix, [vocabulary.get("cow"), vocabulary.get("drop")])
    assert scores[0] > scores[1] > 0


def test_top_k_is_best_first_and_leaves_out_what_scored_nothing():
    assert top_k(np.array([0.0, 2.0, 1.0, 2.0, 0.0]), 10) == [(1, 2.0), (3, 2.0), (2, 1.0)]
    assert top_k(np.zeros(4), 3) == []


# --------------------------------------------------------------------------- a generation's counts and vectors


def test_passage_counts_survive_a_save_and_an_incremental_build_reuses_them(tmp_path):
    corpus = pages()
    first = SparseIndex.build(corpus, page_fingerprint, page_key)
    first.save(tmp_path)
    loaded = SparseIndex.load(tmp_path)
    terms = Terms()
    query = loaded.query("what do cows drop", terms)
    assert np.allclose(loaded.passage_scores(query), first.passage_scores(first.query("what do cows drop", terms)))
    edited = [*corpus[:2], Page(title="Pig", url=corpus[2].url, paragraphs=["Pigs drop porkchops when killed."],
                                sections=[["Drops"]], site="Test Wiki"), *corpus[3:]]
    analysed = []

    class CountingTerms(Terms):
        def __call__(self, text):
            analysed.append(text)
            return super().__call__(text)

    again = SparseIndex.build(edited, page_fingerprint, page_key, previous=loaded, terms=CountingTerms())
    fresh = SparseIndex.build(edited, page_fingerprint, page_key)
    assert "Pigs drop porkchops when killed." in analysed and not any("leather" in text for text in analysed)
    query = fresh.query("pigs drop", terms)
    assert np.allclose(again.passage_scores(again.query("pigs drop", terms)), fresh.passage_scores(query))


def test_passage_vectors_are_found_again_and_kept_bit_for_bit_by_a_rebuild(tmp_path):
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(50, 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    fingerprints = [f"p{i}" for i in range(50)]
    vectors = PassageVectors.build(matrix, fingerprints, "test-encoder")
    vectors.save(tmp_path)
    loaded = PassageVectors.load(tmp_path)
    assert loaded.encoder == "test-encoder" and loaded.count == 50
    assert loaded.nearest(matrix[17], 3)[0][0] == 17
    kept = loaded.vectors_of(fingerprints[:10])
    rebuilt = PassageVectors.build(np.stack([kept[fp] for fp in fingerprints[:10]]), fingerprints[:10], "test-encoder",
                                   trained_from=loaded)
    assert np.array_equal(rebuilt.vectors_of(["p3"])["p3"], kept["p3"])


# --------------------------------------------------------------------------- searching an index's passages


@pytest.fixture(scope="module")
def lexical_index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("passages")
    write_corpus(pages(), root / "corpus.jsonl")
    build_index(root / "corpus.jsonl", root / "index", profile="lexical", progress=False)
    return root / "index"


def test_the_passage_that_answers_comes_first_with_its_section(lexical_index):
    with Searcher(lexical_index) as searcher:
        best = searcher.passages("what do cows drop", 5)
    assert (best[0].title, best[0].section, best[0].index) == ("Cow", ("Drops",), 1)
    assert "raw beef" in best[0].text and best[0].page_rank == 0


def test_a_fact_deep_in_a_page_finds_the_page_it_names(lexical_index):
    with Searcher(lexical_index) as searcher:
        hits = searcher.search("which mob shoots bullets that give levitation", 3)
        passages = searcher.passages("which mob shoots bullets that give levitation", 3)
    assert hits[0].title == "Shulker" and passages[0].section == ("Behavior", "Attacks")
    assert hits[0].paragraphs == pages()[1].paragraphs      # a page hit carries the whole page


def test_a_page_ranks_by_its_best_passage_and_tutorials_count_less_unless_asked_for(lexical_index):
    with Searcher(lexical_index) as searcher:
        plain = [h.title for h in searcher.search("cow leather", 3)]
        asked = [h.title for h in searcher.search("cow farming tutorial leather", 3)]
    assert plain[0] == "Cow" and asked[0] == "Tutorials/Cow farming"


def test_a_question_with_no_word_the_index_knows_finds_nothing(lexical_index):
    with Searcher(lexical_index) as searcher:
        assert searcher.passages("xylophone quasar", 5) == []


def test_an_incremental_rebuild_publishes_the_edited_passages_atomically(tmp_path):
    corpus = pages()
    write_corpus(corpus, tmp_path / "corpus.jsonl")
    build_index(tmp_path / "corpus.jsonl", tmp_path / "index", profile="lexical", progress=False)
    with Searcher(tmp_path / "index") as searcher:
        before = searcher.snapshot()
        edited = [*corpus[:4], Page(title="Beacon", url=corpus[4].url, sections=[["Pyramid"]], site="Test Wiki",
                                    paragraphs=["A full beacon pyramid takes 164 blocks; a beacon needs a nether star."])]
        write_corpus(edited, tmp_path / "corpus.jsonl")
        stats = build_index(tmp_path / "corpus.jsonl", tmp_path / "index", profile="lexical", progress=False)
        assert stats.incremental and stats.updated == 1
        assert "nether star" not in before.passages("beacon pyramid blocks", 1)[0].text   # the old generation
        assert "nether star" in searcher.passages("beacon pyramid blocks", 1)[0].text     # the live one


def test_passage_text_names_page_and_section_as_the_models_read_it():
    assert passage_text("Cow", ["Drops", "On death"], "Drops 0-2\nleather.") == "Cow > Drops > On death: Drops 0-2 leather."
    assert passage_text("Cow", [], "A mob.") == "Cow: A mob."
