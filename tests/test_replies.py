"""What a player reads: the answer in its sentence, "not sure" with the page, "I don't know"; always within
two chat lines (jarvis/replies.py, jarvis/bridge/chat.py)."""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from hypothesis import given, settings as hyp_settings, strategies as st

from jarvis.bridge import PREFIX, answer_lines
from jarvis.answer import Answer
from jarvis.replies import DONT_KNOW, REPLY_BUDGET, compose_reply

COW = Answer(question="what do cows drop?", text="0-2 Leather and 1-3 Raw beef", score=1.0, title="Cow",
             reader="test", seconds=0.0, url="http://127.0.0.1:8080/w/Cow", pages=("Cow",),
             sentence="When killed, an adult cow drops 0-2 Leather and 1-3 Raw beef", confidence=0.9,
             abstained=False)


def test_a_sure_answer_is_stated_in_its_sentence_with_its_source():
    assert compose_reply(COW) == ('0-2 Leather and 1-3 Raw beef — "When killed, an adult cow drops 0-2 Leather and '
                                  '1-3 Raw beef" (source: Cow)')


def test_a_sentence_that_is_the_answer_is_not_repeated():
    answer = replace(COW, sentence="0-2 Leather and 1-3 Raw beef")
    assert compose_reply(answer) == "0-2 Leather and 1-3 Raw beef (source: Cow)"


def test_an_unsure_answer_points_to_the_page_and_quotes_it():
    reply = compose_reply(replace(COW, abstained=True, confidence=0.3))
    assert reply.startswith("not sure — the Cow page says: ")
    assert '"When killed, an adult cow drops 0-2 Leather and 1-3 Raw beef"' in reply
    assert reply.endswith("http://127.0.0.1:8080/w/Cow")


def test_no_page_is_i_dont_know():
    assert compose_reply(replace(COW, text="", sentence="", title="", url="", abstained=True)) == DONT_KNOW


def test_a_long_sentence_is_cut_around_the_answer():
    sentence = ("Cows are common passive mobs that wander grassy biomes in herds, " * 6
                + "and when killed an adult cow drops 0-2 Leather and 1-3 Raw beef, " + "which feeds players. " * 6)
    reply = compose_reply(replace(COW, sentence=sentence), budget=200)
    assert len(reply) <= 200 and "drops 0-2 Leather and 1-3 Raw beef" in reply.split("—", 1)[1]
    assert reply.endswith("(source: Cow)") and "…" in reply


texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=600)
names = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", min_size=1, max_size=16)


@given(text=texts, sentence=texts, title=st.text(max_size=120), url=st.text(max_size=300),
       abstained=st.booleans(), player=st.one_of(st.none(), names))
@hyp_settings(max_examples=400, deadline=None)
def test_replies_stay_within_two_chat_lines(text, sentence, title, url, abstained, player):
    answer = replace(COW, text=text, sentence=sentence, title=title, url=url, abstained=abstained)
    assert len(compose_reply(answer)) <= REPLY_BUDGET
    lines = answer_lines(answer, player=player)
    assert 1 <= len(lines) <= 2
    assert all(line.startswith(PREFIX) and len(line) <= 200 for line in lines)
    assert sum(len(line) for line in lines) <= 400
    assert all("\n" not in line and "\r" not in line for line in lines)
    said = " ".join(line[len(PREFIX):] for line in lines)
    if visible(title) and visible(text) and not abstained:
        assert "(source: " in said               # a stated answer always names its page
    if abstained and visible(title):
        assert said.startswith((f"{player}: " if player else "") + "not sure")   # never stated as fact


def visible(text: str) -> str:
    """What a player sees of a text: no control characters, no formatting codes (§ and the character after it)."""
    return "".join(c for c in re.sub("\u00a7.?", "", text, flags=re.DOTALL) if c.isprintable()).strip()


def _titles_with_their_own_article() -> list[str]:
    """Every page title of the bundled corpus and the test guide that starts with "The", and a few written otherwise."""
    from jarvis.crawler.corpus import read_corpus
    from jarvis.crawler.guide import read_guide
    from jarvis.config import BUNDLED_CORPUS

    titles = [page.title for page in read_corpus(BUNDLED_CORPUS)]
    titles += [page.title for page in read_guide(Path(__file__).resolve().parent.parent / "wikis" / "serverguide"
                                                 / "pages")]
    found = [title for title in titles if title.split()[0].casefold() == "the"]
    assert {"The End", "The Nether", "The shop"} <= set(found)       # the corpus and the guide have some
    return [*found, "THE VOID", "the /home command"]


@pytest.mark.parametrize("title", _titles_with_their_own_article())
@pytest.mark.parametrize("site, several", [("Minecraft Wiki", False), ("server guide", True)])
def test_no_reply_says_the_the(title, site, several):
    sure = replace(COW, title=title, site=site, several_sites=several)
    replies = [compose_reply(sure), compose_reply(replace(sure, abstained=True)),
               compose_reply(replace(sure, abstained=True, sentence="", text="")),     # "see the page"
               " ".join(line.removeprefix(PREFIX) for line in answer_lines(replace(sure, abstained=True),
                                                                           player="Steve"))]
    for reply in replies:
        assert "the the " not in reply.casefold(), reply
        assert title in reply, reply
    assert compose_reply(replace(sure, abstained=True)).startswith(f"not sure — {title} page")


def test_other_titles_keep_their_article():
    assert compose_reply(replace(COW, title="Theater", abstained=True)).startswith("not sure — the Theater page")
