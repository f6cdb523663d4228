"""The same question, typed with or without "?", in any case, or with chat spelling, gets the same answer."""
from __future__ import annotations

from dataclasses import replace

import pytest

from jarvis.assembly import assemble
from jarvis.config import Config
from jarvis.question_text import reading_form
from jarvis.replies import compose_reply


def test_reading_form_ignores_case_and_closing_marks():
    forms = {reading_form(q) for q in ("what do cows drop", "What do cows drop?", "WHAT DO COWS DROP!",
                                       "what do  cows drop ?!", "what do cows drop.")}
    assert forms == {"what do cows drop?"}
    assert reading_form("what do cows drop") != reading_form("what do pigs drop")


@pytest.fixture(scope="module")
def jarvis(bundled_index, tmp_path_factory):
    config = Config(home=tmp_path_factory.mktemp("home"))   # the offline default reader: Jarvis's own
    with assemble(config, bundled_index) as j:
        yield j


def _said(answer) -> tuple:
    return answer.text, answer.title, round(answer.confidence, 6), answer.abstained, compose_reply(answer)


@pytest.mark.parametrize("question", ["what do cows drop", "where do blazes spawn", "what is a creeper",
                                      "how do i make a crafting table", "what do sheep drop"])
def test_the_same_question_gets_the_same_answer_with_or_without_question_mark(jarvis, question):
    variants = [question, question + "?", question.capitalize() + "?", question.upper(), question + " ??"]
    answers = [jarvis.read_pages(v, jarvis.searcher.search(v, k=3)) for v in variants]
    assert len({_said(a) for a in answers}) == 1, [(v, a.text, a.title) for v, a in zip(variants, answers)]
    assert answers[0].question == question            # the player's own words are kept


def test_a_variant_answered_from_the_cache_keeps_the_players_words(jarvis):
    first = jarvis.ask("what do cows drop")
    second = jarvis.ask("What do cows drop?")
    assert (first.text, first.title) == (second.text, second.title)
    assert second.question == "What do cows drop?"


def test_chat_spelling_is_read_as_the_question_spelt_right(jarvis):
    typed = jarvis.ask("wat do cows drpo")
    spelt = jarvis.ask("what do cows drop")
    assert (typed.text, typed.title) == (spelt.text, spelt.title)


def test_reading_the_question_as_typed_is_a_setting(bundled_index, tmp_path):
    config = Config(home=tmp_path)
    config = replace(config, reader=replace(config.reader, read_spelt=False))
    with assemble(config, bundled_index) as j:
        index = j.searcher.snapshot()
        assert j.read_as("wat do cows drpo", index) == "wat do cows drpo?"
    with assemble(Config(home=tmp_path), bundled_index) as j:
        assert j.read_as("wat do cows drpo", j.searcher.snapshot()) == "what do cows drop?"


@pytest.mark.parametrize("read_spelt", [True, False])
def test_a_question_is_spelt_and_expanded_once(bundled_index, tmp_path, monkeypatch, read_spelt):
    """One question, one spelling correction and one glossary expansion: the search reads it once
    (index.SearchQuery) and the reader and the confidence signals take the spelt and expanded question from there.
    Read as typed (read_spelt off), the typed question is expanded for the signals: a second text, once."""
    from collections import Counter

    from jarvis.index.glossary import RETRIEVAL_TABLES, Glossary
    from jarvis.index.spelling import Speller

    calls: Counter = Counter()
    correct, expand = Speller.correct, Glossary.expand
    monkeypatch.setattr(Speller, "correct", lambda self, text: (calls.update(["spelt"]), correct(self, text))[1])
    monkeypatch.setattr(Glossary, "expand", lambda self, question, tables=RETRIEVAL_TABLES: (
        calls.update([question]), expand(self, question, tables))[1])
    config = Config(home=tmp_path)
    config = replace(config, reader=replace(config.reader, read_spelt=read_spelt, cache_size=0))
    with assemble(config, bundled_index) as j:
        calls.clear()
        answer = j.ask("wat do cows drpo")
    assert answer.title == "Cow"
    assert calls["spelt"] == 1
    assert calls["what do cows drop"] == 1 and sum(calls.values()) == (2 if read_spelt else 3)
    if not read_spelt:
        assert calls["wat do cows drpo?"] == 1
