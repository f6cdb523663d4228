"""The fallback reader's answer kinds: which sentence a question of a kind gets, and how it is trimmed.

Synthetic pages about made-up things, read with the lexical variant (no model to load), so
that only the rules are tested, not facts of the bundled wiki.
"""
import pytest

from jarvis.fallback import DROPS, PLACE, QUANTITY, RECIPE, TOOL, SentenceReader, question_kind
from jarvis.reader import Passage


@pytest.fixture(scope="module")
def reader():
    return SentenceReader(None)


def answer(reader, question, *paragraphs, title="Glimmer"):
    passages = [Passage(title, text, 0, index) for index, text in enumerate(paragraphs)]
    return reader.read(question, passages).text


@pytest.mark.parametrize("question, kind", [
    ("how much xp does a blaze drop?", QUANTITY),
    ("how many eggs does a chicken lay?", QUANTITY),
    ("what light level does a lamp give off?", QUANTITY),
    ("what y level are emeralds found at?", QUANTITY),
    ("where do witches spawn?", PLACE),
    ("how do i craft a lantern?", RECIPE),
    ("what tool do i need to mine obsidian?", TOOL),
    ("what do pigs drop?", DROPS),
    ("what is a creeper?", None),
    ("how do you tame a wolf?", None),
])
def test_question_kind_is_read_from_the_question(question, kind):
    assert question_kind(question) == kind


def test_quantity_question_prefers_the_sentence_with_a_number_and_trims_to_it(reader):
    text = answer(reader, "how much xp does a glimmer give?",
                  "A glimmer is a small glowing mob that floats above lakes and gives light to the area.",
                  "Killing a glimmer gives 7 experience points, more than most passive mobs.")
    assert text == "7 experience points"


def test_quantity_answer_is_the_number_about_what_was_asked(reader):
    sentence = "A glimmer has 12 health points and deals 3 damage with each touch."
    assert answer(reader, "how much health does a glimmer have?", sentence) == "12 health points"
    assert answer(reader, "how much damage does a glimmer deal?", sentence) == "3 damage"


def test_level_question_is_answered_with_the_level_not_the_verb_around_it(reader):
    text = answer(reader, "what light level does a glimmer give off?",
                  "A glimmer gives off light at level 9 while it is awake.")
    assert text == "9"


def test_place_question_is_trimmed_to_the_place(reader):
    text = answer(reader, "where do glimmers spawn?",
                  "Glimmers are shy, and they spawn mostly in flooded caves below sea level.")
    assert text == "in flooded caves below sea level"


def test_recipe_question_prefers_the_crafting_sentence_and_trims_to_the_ingredients(reader):
    text = answer(reader, "how do i make a lantern?",
                  "A lantern is a light source that players make their homes brighter with.",
                  "A lantern is crafted from 8 iron nuggets and a torch.",
                  title="Lantern")
    assert text == "from 8 iron nuggets and a torch"


def test_tool_question_is_answered_with_the_tool(reader):
    text = answer(reader, "what tool do i need to mine a glimmer block?",
                  "A glimmer block is made of dense glowing crystal.",
                  "It can only be mined with an iron pickaxe or better, and mining it by hand drops nothing.")
    assert text == "an iron pickaxe or better"


def test_drops_question_prefers_the_list_item_that_counts_items(reader):
    text = answer(reader, "what do glimmers drop?",
                  "Glimmers drift over lakes at night. They are harmless:",
                  "They never attack players.",
                  "0-2 glowstone dust, only when killed by a player.")
    assert text == "0-2 glowstone dust"


def test_recipe_question_keeps_the_craft_word_that_names_the_thing(reader):
    # "how do i make" says it is a recipe question; the "crafting" of "crafting bench" names the thing.
    text = answer(reader, "how do i make a crafting bench?",
                  "A glimmer table is made from 4 glimmer shards placed around a table.",
                  "A crafting bench is crafted from 4 planks in a square.",
                  title="Benches")
    assert text == "from 4 planks in a square"
