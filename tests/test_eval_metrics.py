"""SQuAD-style F1/EM normalization and the question-file parser."""
from __future__ import annotations

import pytest

from jarvis.eval.metrics import best_em, best_f1, exact_match, f1_score, normalize_answer
from jarvis.eval.questions import QuestionFileError, load_questions, parse_questions


@pytest.mark.parametrize("raw, normalized", [
    ("The Nether", "nether"),
    ("  an   Ender   pearl. ", "ender pearl"),
    ("0-2 leather, and 1-3 raw beef!", "02 leather and 13 raw beef"),
    ("Y=-59", "y59"),
    ("A", ""),
])
def test_normalize_answer(raw, normalized):
    assert normalize_answer(raw) == normalized


def test_f1_partial_overlap():
    # prediction "raw beef" vs gold "1-3 raw beef": precision 1, recall 2/3 -> F1 0.8
    assert f1_score("raw beef", "1-3 raw beef") == pytest.approx(0.8)


def test_f1_and_em_ignore_case_punctuation_articles():
    assert f1_score("The LEATHER.", "leather") == 1.0
    assert exact_match("The LEATHER.", "leather") == 1.0
    assert exact_match("leather and beef", "leather") == 0.0


def test_f1_no_overlap_and_empty():
    assert f1_score("gravel", "sand") == 0.0
    assert f1_score("", "sand") == 0.0
    assert f1_score("the", "a") == 1.0  # both normalize to nothing


def test_best_over_gold_answers():
    golds = ["0-2 leather", "leather and raw beef"]
    assert best_f1("leather and raw beef", golds) == 1.0
    assert best_em("0-2 leather", golds) == 1.0
    assert best_f1("anything", []) == 0.0


def test_a_stated_answer_is_judged_by_what_it_states_not_by_the_replys_wording():
    """Right: the span's F1 >= 0.5, or a gold of two or more words in the answer and its sentence. A reply's
    wording (its page name, how it cuts the quote) is not read, so rewording replies moves no label."""
    from jarvis.eval.metrics import is_right, stated_text

    sentence = "When killed, an adult cow drops 0-2 Leather and 1-3 Raw beef."
    assert is_right("0-2 Leather", sentence, ["0-2 leather"])                  # the span itself
    assert is_right("an adult cow", sentence, ["1-3 raw beef"])                # the sentence says it
    assert not is_right("an adult cow", sentence, ["beef"])                    # one word in a sentence is no answer
    assert not is_right("an adult cow", sentence, ["source page"])             # nor a reply's own words
    assert stated_text("0-2 Leather", "") == "0-2 Leather"


def test_an_unsure_answer_is_judged_in_its_own_sentence_not_in_the_page_it_points_to():
    """A "not sure" that points to the top page quotes that page; judged as if stated, the answer is read in the
    sentence it came from (what a stated reply would quote), else its right/wrong label is the other page's."""
    from jarvis.answer import Answer
    from jarvis.eval.metrics import right_if_stated

    unsure = Answer("what do cows drop", "an adult cow", 0.1, "Cow", "span", 0.1,
                    sentence="When killed, an adult cow drops 0-2 Leather and 1-3 Raw beef.",   # the top page's
                    span_sentence="Mooshrooms are an adult cow's cousins.", abstained=True)
    assert unsure.sentence_if_stated == "Mooshrooms are an adult cow's cousins."
    assert not right_if_stated(unsure, ["1-3 raw beef"])
    # Through the worker pool the span's sentence is not carried: the sentence shown is what is known.
    pooled = Answer("what do cows drop", "an adult cow", 0.1, "Cow", "span", 0.1,
                    sentence="When killed, an adult cow drops 0-2 Leather and 1-3 Raw beef.")
    assert right_if_stated(pooled, ["1-3 raw beef"])
    assert not right_if_stated(Answer("q", "", 0.0, "", "span", 0.0), ["anything"])


def test_parser_comments_blank_lines_and_multiple_answers():
    text = """# a comment line
what do cows drop?|Cow|0-2 leather and 1-3 raw beef|leather   # trailing comment

   # indented comment
where do blazes spawn?|Blaze|Nether fortresses
"""
    questions = parse_questions(text)
    assert [q.text for q in questions] == ["what do cows drop?", "where do blazes spawn?"]
    assert questions[0].answers == ("0-2 leather and 1-3 raw beef", "leather")
    assert questions[0].expected_title == "Cow"
    assert (questions[0].line, questions[1].line) == (2, 5)


@pytest.mark.parametrize("bad, lineno", [
    ("ok?|Cow|leather\nno separators here\n", 2),
    ("\n\nwhat?|Cow|\n", 3),
    ("what?||leather\n", 1),
])
def test_parser_bad_line_names_its_number(bad, lineno):
    with pytest.raises(QuestionFileError, match=rf":{lineno}:"):
        parse_questions(bad, source="q.txt")


def test_parser_rejects_file_without_questions(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("# only comments\n\n")
    with pytest.raises(QuestionFileError, match="no questions"):
        load_questions(path)


def test_missing_question_file(tmp_path):
    with pytest.raises(QuestionFileError, match="not found"):
        load_questions(tmp_path / "missing.txt")


def test_bundled_question_set_has_51_questions():
    from jarvis.eval.questions import DEFAULT_QUESTIONS

    questions = load_questions(DEFAULT_QUESTIONS)
    assert len(questions) == 51
