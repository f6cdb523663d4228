"""The players' words as data: the bundled glossary file, a server's own file merged over it through the
index, and clear errors for a bad file. Synthetic pages and made-up words written for these tests."""
from __future__ import annotations

from pathlib import Path

import pytest

from jarvis.crawler.corpus import Page, write_corpus
from jarvis.index import Searcher, build_index
from jarvis.index.glossary import BUNDLED_GLOSSARY, NAME, PROSE, Glossary, GlossaryError
from jarvis.cli import main

PAGES = [
    Page("Glimmer", "http://127.0.0.1/w/Glimmer",
         ["A glimmer is a small glowing creature that drifts over lakes at night.",
          "When defeated, a glimmer drops 1-2 glow dust."]),
    Page("Lake cat", "http://127.0.0.1/w/Lake_cat",
         ["A lake cat is a shy animal that fishes at the shore of lakes.",
          "Lake cats purr when fed raw fish."]),
    Page("Storm lantern", "http://127.0.0.1/w/Storm_lantern",
         ["A storm lantern is a light source that keeps burning in the rain.",
          "It is crafted from an iron frame and a glimmer's glow dust."]),
]
# A made-up players' word that no page and no bundled entry knows.
USER_WORDS = "# our server's slang\nname\tshinybug\tglimmer\n"


@pytest.fixture()
def corpus(tmp_path) -> Path:
    path = tmp_path / "corpus.jsonl"
    write_corpus(PAGES, path)
    return path


def lexical_titles(index_dir: Path, question: str) -> list[str]:
    with Searcher(index_dir) as searcher:
        return [hit.title for hit in searcher.search(question, k=3)]


def test_the_bundled_glossary_is_a_data_file_with_every_table():
    glossary = Glossary.bundled()
    assert BUNDLED_GLOSSARY.suffix == ".tsv" and len(glossary) > 100
    assert glossary.tables[NAME]["notch apple"] == "enchanted golden apple"
    assert glossary.tables[PROSE]["breed"] == "love mode"


def test_a_user_glossary_changes_retrieval_and_survives_an_update(tmp_path, corpus):
    index_dir = tmp_path / "index"
    build_index(corpus, index_dir, profile="baseline", progress=False)
    assert "Glimmer" not in lexical_titles(index_dir, "shinybug")   # nobody knows the word yet

    words = tmp_path / "words.tsv"
    words.write_text(USER_WORDS, encoding="utf-8")
    stats = build_index(corpus, index_dir, profile="baseline", progress=False, glossary=Glossary.load(words))
    assert stats.indexed == 0 and stats.incremental          # no page re-indexed, only the words are new
    assert lexical_titles(index_dir, "shinybug")[0] == "Glimmer"
    with Searcher(index_dir) as searcher:                      # the bundled words still count, too
        assert searcher.glossary.tables[NAME]["shinybug"] == "glimmer"
        assert searcher.glossary.tables[NAME]["notch apple"] == "enchanted golden apple"

    build_index(corpus, index_dir, profile="baseline", progress=False)   # a page update keeps the words
    assert lexical_titles(index_dir, "shinybug")[0] == "Glimmer"
    build_index(corpus, index_dir, profile="baseline", progress=False, glossary=Glossary())   # removed
    assert "Glimmer" not in lexical_titles(index_dir, "shinybug")


def test_jarvis_index_glossary_flag_and_the_fallback_reader_use_it(tmp_path, corpus, capsys):
    words = tmp_path / "words.tsv"
    words.write_text(USER_WORDS, encoding="utf-8")
    index_dir = tmp_path / "index"
    assert main(["index", "--corpus", str(corpus), "--index", str(index_dir), "--profile", "baseline",
                 "--glossary", str(words), "-q"]) == 0
    capsys.readouterr()
    assert main(["ask", "what do shinybugs drop", "--index", str(index_dir), "--reader", "fallback:lexical",
                 "--json", "-q"]) == 0
    out = capsys.readouterr().out
    assert '"title": "Glimmer"' in out and "glow dust" in out


@pytest.mark.parametrize("text, message", [
    ("shinybug glimmer\n", "line 1: expected"),                   # spaces, not a TAB: one column
    ("# ok\nname\tshinybug\tglimmer\nplace\tlakey\tlake\n", "line 3: unknown table 'place'"),
    ("name\tshinybug\tglimmer\taway\n", "line 1: expected"),                  # four columns
    ("\nname\t \tglimmer\n", "line 2: an empty phrase"),
])
def test_a_bad_glossary_file_is_one_line_naming_the_line(tmp_path, corpus, capsys, text, message):
    words = tmp_path / "words.tsv"
    words.write_text(text, encoding="utf-8")
    with pytest.raises(GlossaryError, match=message):
        Glossary.load(words)
    assert main(["index", "--corpus", str(corpus), "--index", str(tmp_path / "index"), "--glossary", str(words),
                 "-q"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err and str(words) in err
    assert not (tmp_path / "index").exists() or not any((tmp_path / "index").iterdir())   # nothing built


def test_a_glossary_that_is_not_utf8_or_missing_is_a_clear_error(tmp_path):
    words = tmp_path / "words.tsv"
    words.write_bytes("name\tsh\xefnybug\tglimmer\n".encode("latin-1"))
    with pytest.raises(GlossaryError, match="not UTF-8"):
        Glossary.load(words)
    with pytest.raises(GlossaryError, match="cannot read glossary"):
        Glossary.load(tmp_path / "missing.tsv")


def test_two_columns_are_a_name_and_the_users_entry_wins():
    merged = Glossary.bundled().merged(Glossary.parse("notch apple\tgolden apple\n"))
    assert merged.expand("what does a notch apple do") == "what does a notch apple do (golden apple)"
