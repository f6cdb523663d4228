"""Taught answers (jarvis/taught.py): the admin's word is the answer, stated, for the taught question and its
variants, before the reader runs; teaching changes no other question's answer; a new taught answer is used at
the next question, without a restart. Real index generations (the bundled corpus), the real reader, the
panel's own teaching code."""
from __future__ import annotations

from pathlib import Path

import pytest

from jarvis.config import Config
from jarvis.crawler.guide import GUIDE_SITE
from jarvis.taught import (PARAPHRASE_THRESHOLD, TAUGHT_READER, TaughtAnswer, TaughtMatcher, question_key,
                           question_terms, similarity, title_from_answer)
from jarvis.lexical import TermAnalyzer
from jarvis.replies import compose_reply
from panel_support import copy_index

FURNACE = "Put 8 cobblestone in a ring in a crafting table, leaving the middle empty."
SKELETON = "Skeletons drop 0-2 bones and 0-2 arrows when killed."
# Right answers before teaching (the wiki's): none of them may change when something else is taught.
UNRELATED = ["what do cows drop?", "how do i make a crafting table?", "where do blazes spawn?", "what is a creeper?",
             "how do i make a blast furnace?", "what do zombies drop?", "how many eyes of ender to fill a portal?",
             "where do witches spawn?", "how do i tame a wolf?", "what does a furnace smelt?"]


def test_a_question_key_ignores_case_spacing_and_punctuation():
    assert question_key("How do I  mak a furnace??") == question_key("how do i mak a furnace") == "how do i mak a furnace"
    assert question_key("what's the server IP!") == question_key("whats the server ip")
    assert question_key("how do i make a furnace") != question_key("how do i mak a furnace")


@pytest.mark.parametrize("answer, title", [
    (FURNACE, "Put 8 cobblestone in a ring"),
    ("Claim land with a golden shovel: right-click two opposite corners of your base.", "Claim land with a golden shovel"),
    (SKELETON, "Skeletons drop 0-2 bones"),
    ("At spawn.", "At spawn"),
])
def test_a_title_is_made_from_the_answer(answer, title):
    assert title_from_answer(answer) == title


def test_similarity_weighs_subjects_over_question_words_and_tolerates_an_unknown_words_typo():
    analyzer = TermAnalyzer()

    def sim(a: str, b: str, known=frozenset({"make", "furnace", "blast", "cows", "cow", "pigs", "drop"})) -> float:
        return similarity(question_terms(a, analyzer), question_terms(b, analyzer), known)

    assert sim("how do i mak a furnace", "how do i make a furnace") == 1.0          # "mak" is no word: "make"
    assert sim("how do i mak a furnace", "how to make a furnace in minecraft") == 1.0
    assert sim("what do cows drop", "what do pigs drop") < PARAPHRASE_THRESHOLD      # another subject
    assert sim("how do i make a furnace", "how do i make a blast furnace") < PARAPHRASE_THRESHOLD
    assert sim("is pvp allowed", "where is pvp allowed") < PARAPHRASE_THRESHOLD      # yes-or-no, not where
    assert sim("how do i claim land", "how much land can i claim") < PARAPHRASE_THRESHOLD
    assert sim("skeleton drops", "what do skeletons drop") >= PARAPHRASE_THRESHOLD
    assert sim("", "what do skeletons drop") == 0.0


def test_the_threshold_is_the_rules_on_the_chosen_pairs_and_no_other_question_matches(bundled_index):
    """The rule fixed beforehand (bench/taught_threshold.py): the lowest 0.05 step at which no pair of the chosen
    part that asks something else matches. A change of the matcher that lets one through fails here."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import taught_threshold

    from jarvis.index import Searcher
    from jarvis.index.layout import IndexDir
    from jarvis.index.spelling import Vocabulary

    known = Vocabulary.load(IndexDir(bundled_index).live().path)
    with Searcher(bundled_index) as searcher:
        rows = taught_threshold.scored(taught_threshold.read_pairs(taught_threshold.PAIRS), searcher.snapshot(), known)
    chosen = [r for r in rows if r[0] == "chosen"]
    assert taught_threshold.choose(chosen) == PARAPHRASE_THRESHOLD
    assert sum(r[3] and r[5] >= PARAPHRASE_THRESHOLD for r in chosen) >= 0.8 * sum(r[3] for r in chosen)


def test_the_matcher_takes_words_spelling_and_paraphrase_in_that_order(bundled_index):
    from jarvis.index import Searcher
    from jarvis.index.layout import IndexDir
    from jarvis.index.spelling import Vocabulary

    taught = [TaughtAnswer("a", "how do i mak a furnace", FURNACE, "Furnaces", "admin", "2026-01-02", Path("a.md")),
              TaughtAnswer("b", "skeleton drops", SKELETON, "Skeleton drops", "admin", "2026-01-01", Path("b.md"))]
    with Searcher(bundled_index) as searcher:
        matcher = TaughtMatcher(taught, searcher.snapshot(), known=Vocabulary.load(IndexDir(bundled_index).live().path))
        assert matcher.match("How do I mak a furnace?").how == "words"
        assert matcher.match("skeleton dropps").how == "spelling"                     # the index spells it
        found = matcher.match("how can you make a furnace")
        assert found.how == "paraphrase" and found.taught.id == "a" and found.score >= PARAPHRASE_THRESHOLD
        assert matcher.match("what do skeletons drop?").taught.id == "b"
        assert matcher.match("what do zombies drop?") is None
        assert matcher.match("how do i make a blast furnace") is None


def _teacher(config: Config, index_dir: Path):
    """The desk's teacher on the guide folder `jarvis ask` reads for this index ($JARVIS_HOME/guide here)."""
    from jarvis.panel.teach import GuideShelf, Teacher
    from jarvis.taught import guide_folder

    return Teacher(GuideShelf(guide_folder(config, index_dir)))


def _facts(answer) -> tuple:
    return answer.text, answer.title, answer.abstained, answer.site, compose_reply(answer)


def test_taught_answers_are_stated_and_nothing_else_changes(tmp_path, bundled_index):
    """The incident of issue 48: "how do i mak a furnace" taught; the same question, its case, a "?", the typo
    put right and small rewordings get it, stated; ten answers of other questions stay exactly as they were,
    confidence included (a taught answer is no page of the index: nothing the reader reads changed)."""
    from jarvis.assembly import assemble

    index_dir = copy_index(bundled_index, tmp_path / "index")
    config = Config(home=tmp_path / "home")
    teacher = _teacher(config, index_dir)
    with assemble(config, index_dir) as jarvis:
        before = {q: jarvis.ask(q) for q in UNRELATED}
        assert not before["what do cows drop?"].abstained and "Leather" in before["what do cows drop?"].text
        furnace = teacher.teach("how do i mak a furnace", FURNACE)
        assert furnace.title == "Put 8 cobblestone in a ring"                          # made from the answer
        skeleton = teacher.teach("skeleton drops", SKELETON, title="Skeleton drops")
        for question, taught in [("how do i mak a furnace", furnace), ("How do I mak a furnace?", furnace),
                                 ("how do i make a furnace", furnace), ("how to make a furnace", furnace),
                                 ("how do you make a furnace in minecraft?", furnace), ("skeleton drops", skeleton),
                                 ("Skeleton drops!", skeleton), ("what do skeletons drop?", skeleton),
                                 ("skeleton dropps", skeleton)]:
            answer = jarvis.ask(question)
            assert (answer.text, answer.abstained, answer.confidence, answer.reader) == \
                (taught.answer, False, 1.0, TAUGHT_READER), (question, answer)
            assert answer.site == GUIDE_SITE and answer.title == taught.title, question
            assert compose_reply(answer) == f"{taught.answer} (source: {taught.title}, server guide)"
            assert "mak" not in compose_reply(answer).replace("make", "")                   # never the player's typo
        after = {q: jarvis.ask(q) for q in UNRELATED}
    for question in UNRELATED:                   # the same answers, to their confidence: nothing else was read
        assert _facts(after[question]) == _facts(before[question]), question
        assert after[question].confidence == before[question].confidence, question


def test_a_new_taught_answer_is_used_at_the_next_question_and_a_removed_one_no_more(tmp_path, bundled_index):
    """One Jarvis, never restarted (as serve and the workers run): each change is seen at the next question,
    and a removed answer's question goes back to the reader."""
    from jarvis.assembly import assemble

    index_dir = copy_index(bundled_index, tmp_path / "index")
    config = Config(home=tmp_path / "home")
    teacher = _teacher(config, index_dir)
    with assemble(config, index_dir) as jarvis:
        wiki = jarvis.ask("what do cows drop?")
        assert wiki.reader != TAUGHT_READER
        first = teacher.teach("where is the shop?", "The shop is at spawn, behind the fountain.")
        assert jarvis.ask("wheres the shop").text == first.answer
        second = teacher.teach("what do cows drop", "Cows drop leather and raw beef; on this server, also coins.")
        answer = jarvis.ask("what do cows drop?")
        assert answer.reader == TAUGHT_READER and answer.text == second.answer
        teacher.remove(second.id)
        assert _facts(jarvis.ask("what do cows drop?")) == _facts(wiki)    # the reader's again (its cached answer)
        teacher.restore(second.id)                                           # undone: taught again
        assert jarvis.ask("What do cows drop").text == second.answer
    assert jarvis.stats.reads == 1                                           # the reader read once: for the wiki
