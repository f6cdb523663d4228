"""A drops or where question is answered from the prose that says it, not from a chance or colour row; a
"not sure" reply points to its answer's page, or (a setting) to the page retrieval ranked first."""
from __future__ import annotations

from dataclasses import replace

import pytest

from jarvis.assembly import assemble
from jarvis.config import Config, PlacementSettings
from jarvis.readers.base import Passage, Span
from jarvis.readers.placement import is_table_row, misplaced, placement_fit, prefer_placed
from jarvis.replies import compose_reply


def _span(text: str, paragraph: str, section: tuple[str, ...], margin: float, title: str = "Sheep") -> Span:
    passage = Passage(title, paragraph, 0, 0, section=section)
    start = paragraph.index(text)
    return Span(text, margin, passage, start, start + len(text), signals={"span_minus_null": margin})


ROW = _span("Pink", "Pink — Chance: 82/100*1/500; Percent: 0.164%.", ("Spawning",), 6.0)
PROSE = _span("1-2 raw mutton", "An adult sheep drops 1-2 raw mutton and 1 wool.", ("Drops",), 4.5)
LEAD = _span("a passive mob", "A sheep is a passive mob.", (), 5.0)


def test_table_rows_are_told_from_prose():
    assert is_table_row(ROW.passage.text)
    assert not is_table_row(PROSE.passage.text)


def test_a_row_outside_the_asked_section_is_misplaced():
    assert placement_fit("what do sheep drop", PROSE) == 1.0
    assert misplaced("what do sheep drop", ROW)
    assert not misplaced("what do sheep drop", PROSE)


def test_prose_under_the_right_section_wins_within_the_slack():
    ranked = prefer_placed("what do sheep drop", [ROW, LEAD, PROSE], PlacementSettings(slack=2.0))
    assert ranked[0] is PROSE and ranked[1:] == [ROW, LEAD]


def test_a_much_surer_row_keeps_its_place():
    assert prefer_placed("what do sheep drop", [ROW, PROSE], PlacementSettings(slack=1.0))[0] is ROW


def test_placement_can_be_turned_off_and_leaves_well_placed_answers_alone():
    assert prefer_placed("what do sheep drop", [ROW, PROSE], PlacementSettings(enabled=False))[0] is ROW
    assert prefer_placed("what do sheep drop", [PROSE, ROW], PlacementSettings())[0] is PROSE
    assert prefer_placed("what do sheep drop", [ROW], PlacementSettings()) == [ROW]


@pytest.fixture(scope="module")
def unsure_config(tmp_path_factory) -> Config:
    config = Config(home=tmp_path_factory.mktemp("home"))
    return replace(config, reader=replace(config.reader, answer_threshold=1.01))   # never sure


def test_not_sure_can_point_to_the_top_page_and_quote_it(bundled_index, unsure_config):
    config = replace(unsure_config, reader=replace(unsure_config.reader, unsure_page="top"))
    with assemble(config, bundled_index) as jarvis:
        for question in ("what do cows drop", "zombie drops", "where do blazes spawn", "how do i tame a wolf"):
            answer = jarvis.ask(question)
            assert answer.abstained
            assert answer.title == answer.pages[0], (question, answer.title, answer.pages)
            assert answer.sentence and answer.title in compose_reply(answer)


def test_not_sure_points_to_the_answers_own_page(bundled_index, unsure_config):
    with assemble(unsure_config, bundled_index) as jarvis:   # the default
        answer = jarvis.ask("zombie drops")
        span_page = answer.title
        assert answer.abstained and answer.text and span_page in answer.pages
        assert answer.text in answer.sentence
