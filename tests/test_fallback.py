"""The fallback reader's answer kinds: which sentence a question of a kind gets, and how it is trimmed.

Synthetic pages about made-up things, read with the lexical variant (no model to load), so
that only the rules are tested, not facts of the bundled wiki.
"""
import pytest

from jarvis.readers.fallback import DROPS, METHOD, PLACE, PURPOSE, QUANTITY, RECIPE, TOOL, YES_NO, SentenceReader, answer_kind
from jarvis.readers.fallback.phrases import trim_to_answer_kind
from jarvis.readers.base import Passage


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
    ("how do you tame a wolf?", METHOD),
    ("can poison kill you?", YES_NO),
    ("do baby zombies ever grow up", YES_NO),
    ("what does silk touch do", PURPOSE),
    ("whats a workbench for?", PURPOSE),
    ("whats the drop chance for wither skulls", QUANTITY),
    ("what are the odds an ender eye breaks", QUANTITY),
])
def test_question_kind_is_read_from_the_question(question, kind):
    assert answer_kind(question) == kind


# One row per rule: (question, paragraphs of a made-up page, page title, the answer it must give).
TRIMMING_CASES = {
    "a number sentence beats the opening sentence, trimmed to the number": (
        "how much xp does a glimmer give?",
        ["A glimmer is a small glowing mob that floats above lakes and gives light to the area.",
         "Killing a glimmer gives 7 experience points, more than most passive mobs."],
        "Glimmer", "7 experience points"),
    "the number about what was asked (health)": (
        "how much health does a glimmer have?",
        ["A glimmer has 12 health points and deals 3 damage with each touch."], "Glimmer", "12 health points"),
    "the number about what was asked (damage)": (
        "how much damage does a glimmer deal?",
        ["A glimmer has 12 health points and deals 3 damage with each touch."], "Glimmer", "3 damage"),
    "a level question gets the level, not the verb around it": (
        "what light level does a glimmer give off?",
        ["A glimmer gives off light at level 9 while it is awake."], "Glimmer", "9"),
    "a place question is trimmed to the place": (
        "where do glimmers spawn?",
        ["Glimmers are shy, and they spawn mostly in flooded caves below sea level."],
        "Glimmer", "in flooded caves below sea level"),
    "a recipe question prefers the crafting sentence, trimmed to the ingredients": (
        "how do i make a lantern?",
        ["A lantern is a light source that players make their homes brighter with.",
         "A lantern is crafted from 8 iron nuggets and a torch."],
        "Lantern", "8 iron nuggets and a torch"),
    "a tool question is answered with the tool": (
        "what tool do i need to mine a glimmer block?",
        ["A glimmer block is made of dense glowing crystal.",
         "It can only be mined with an iron pickaxe or better, and mining it by hand drops nothing."],
        "Glimmer", "an iron pickaxe or better"),
    "a drops question prefers the list item that counts items": (
        "what do glimmers drop?",
        ["Glimmers drift over lakes at night. They are harmless:", "They never attack players.",
         "0-2 glowstone dust, only when killed by a player."],
        "Glimmer", "0-2 glowstone dust"),
    # "how do i make" says it is a recipe question; the "crafting" of "crafting bench" names the thing.
    "a recipe question keeps the craft word that names the thing": (
        "how do i make a crafting bench?",
        ["A glimmer table is made from 4 glimmer shards placed around a table.",
         "A crafting bench is crafted from 4 planks in a square."],
        "Benches", "4 planks in a square"),
}


@pytest.mark.parametrize("question, paragraphs, title, expected", TRIMMING_CASES.values(), ids=TRIMMING_CASES)
def test_question_kind_picks_and_trims_the_answer(reader, question, paragraphs, title, expected):
    assert answer(reader, question, *paragraphs, title=title) == expected


# --------------------------------------------------------------------------- sections, tables, subjects


def passages_of(*pages):
    """Passages of made-up pages: (title, [(section path, text), ...]) in rank order."""
    return [Passage(title, text, rank, index, section=tuple(section))
            for rank, (title, paragraphs) in enumerate(pages) for index, (section, text) in enumerate(paragraphs)]


GLIMMER = ("Glimmer", [
    ([], "A glimmer is a small glowing mob that floats over lakes at night."),
    (["Behavior"], "Glimmers drift slowly and drop down to the water when a player comes close."),
    (["Drops", "On death"], "An adult glimmer drops:"),
    (["Drops", "On death"], "Glow Dust \u2014 Roll Chance: 100%; Quantity: 1\u20133."),
    (["Drops", "On death"], "Lake Pearl \u2014 Roll Chance: 10%; Quantity: 0\u20131."),
    (["Drops", "On death"], "1\u20133 experience orbs are dropped when a player kills it."),
    (["Taming"], "A glimmer can be tamed by feeding it lake pearls until hearts appear."),
    (["Usage", "Crafting ingredient"], "Glow Lamp \u2014 Ingredients: Glow Dust + Glass."),
    (["Obtaining", "Crafting"], "Glass + Glow Dust + Lake Pearl \u2014 Description: The dust glows for ever."),
])


@pytest.mark.parametrize("question, expected", [
    ("what do glimmers drop?", "Glow Dust"),                       # the drop table's first item, not the xp
    ("how do you tame a glimmer?", "feeding it lake pearls until hearts appear"),   # the "Taming" section, the means
])
def test_the_section_that_holds_the_answer_answers(reader, question, expected):
    assert reader.read(question, passages_of(GLIMMER)).text == expected


def test_a_recipe_question_reads_the_crafting_section_not_the_ingredient_uses(reader):
    page = ("Glimmer lamp", [
        ([], "A glimmer lamp is a light block."),
        (["Obtaining", "Crafting"], "Glass + Glow Dust \u2014 Description: Lights up at night."),
        (["Usage", "Crafting ingredient"], "Lamp Post \u2014 Ingredients: Glimmer Lamp + Stick."),
    ])
    assert reader.read("how do i craft a glimmer lamp", passages_of(page)).text == "Glass + Glow Dust"


def test_the_subjects_own_page_answers_not_a_page_about_something_else(reader):
    # The related page says more words of the question, but the question is about the glimmer.
    related = ("Lake", [([], "Lakes are where glimmers spawn at night, and glimmers drop pearls into lakes.")])
    assert reader.read("where do glimmers spawn?", passages_of(related, GLIMMER)).passage.title == "Glimmer"


def test_a_general_page_named_by_the_question_word_is_not_the_subject(reader):
    general = ("Drops", [([], "Mobs drop items when killed: for example glimmers drop glow dust.")])
    span = reader.read("what do glimmers drop?", passages_of(general, GLIMMER))
    assert (span.passage.title, span.text) == ("Glimmer", "Glow Dust")


def test_a_table_row_is_answered_with_a_part_of_it(reader):
    page = ("Glimmer block", [
        ([], "A glimmer block is a bright block."),
        (["Breaking"], "Hardness \u2014 Glimmer block: 0.5."),
    ])
    assert reader.read("how hard is a glimmer block, what hardness?", passages_of(page)).text == "0.5"


def test_a_recipe_row_answers_with_its_ingredients(reader):
    page = ("Glimmer Lamp", [
        ([], "A glimmer lamp is a light block."),
        (["Obtaining", "Crafting"], "Glimmer Lamp \u2014 Ingredients: Glass+ Glow Dust."),
        (["Usage", "Crafting ingredient"], "Lamp Post \u2014 Ingredients: Glimmer Lamp+ Stick."),
    ])
    assert reader.read("glimmer lamp recipe", passages_of(page)).text == "Glass+ Glow Dust"


def test_how_long_reads_the_length_column_of_the_row_asked_about(reader):
    # "long" only says which measure: the row whose notes say "how long" is not the answer. A table
    # row is one sentence, whatever full stops its cells hold.
    page = ("Glowing", [
        ([], "Glowing is a status effect that outlines an entity."),
        (["Causes"], "Lingering Potion of Glowing \u2014 Potency: I; Length: 0:11; Notes: Depends on how long the "
                     "cloud is stood in."),
        (["Causes"], "Potion of Glowing \u2014 Potency: I; Length: 0:45."),
        (["Discs"], "Glow Song \u2014 Composer: A. Person; Description: Calm. Slow.; Length: 2:28."),
    ])
    assert reader.read("how long does a glowing potion last", passages_of(page)).text == "0:45"
    assert reader.read("how long is the glow song", passages_of(page)).text == "2:28"


def test_a_yes_no_question_is_answered_with_the_clause_that_says_whether(reader):
    page = ("Glimmer", [
        ([], "A glimmer is a small glowing mob that floats over lakes at night."),
        (["Behavior"], "Glimmers always drift slowly over water, but they cannot swim (they sink when pushed in)."),
        (["Behavior"], "Glimmers glow brighter when a player comes close."),
    ])
    assert reader.read("can glimmers swim?", passages_of(page)).text == "they cannot swim"


def test_the_players_verb_finds_the_wikis_sentence(reader):
    page = ("Glimmer web", [
        ([], "A glimmer web is a sticky block that slows down everything that walks into it."),
        (["Obtaining"], "Glimmer webs can be obtained as an item using shears."),
        (["Usage"], "Players who walk up to a glimmer web and pick a fight inside it are slowed down."),
    ])
    assert reader.read("how do i pick up glimmer webs", passages_of(page)).text == "shears"


def test_what_drops_is_the_first_item_of_the_drop_table_not_a_rare_or_empty_roll(reader):
    page = ("Glimmer", [
        ([], "A glimmer is a small glowing mob that floats over lakes at night."),
        (["Drops"], "Glow Dust \u2014 Roll Chance: 100%; Quantity: 0\u20132."),
        (["Drops"], "Glimmer Skull \u2014 Roll Chance: 100%; Quantity: 1."),
        (["Drops"], "Nothing \u2014 Roll Chance: 1/6; Quantity: 1."),
    ])
    assert reader.read("what do glimmers drop", passages_of(page)).text == "Glow Dust"


def test_of_two_pages_the_question_names_equally_the_better_ranked_one_is_the_subject(reader):
    # "glow potion": both "Glow" and "Potion" are named; retrieval put Glow first, and its table
    # holds the answer, while the general Potion page says more of the question's words.
    glow = ("Glow", [([], "Glow is a status effect."),
                     (["Causes"], "Potion of Glow \u2014 Potency: I; Length: 0:45.")])
    potion = ("Potion", [([], "A potion is a drink."),
                         (["Modifiers"], "Extending a potion makes it last longer than the base potion, "
                                         "which lasts 3 minutes.")])
    assert reader.read("how long does a glow potion last", passages_of(glow, potion)).text == "0:45"


def test_best_reads_the_most_common_column_of_the_row_named(reader):
    page = ("Mining", [([], "Mining is breaking blocks to collect them."),
                       (["Ores"], "Coal \u2014 Range: Y=0 to 320; Most common: Around Y=96."),
                       (["Ores"], "Glimmerstone \u2014 Range: Y=-64 to 16; Most common: Around Y=-59.")])
    assert reader.read("what y level is best for glimmerstone", passages_of(page)).text == "Around Y=-59"


def test_what_do_you_feed_is_answered_with_the_whole_list_of_means(reader):
    # "bred" is "breed" (an irregular form), and the means keep their list.
    page = ("Glimmer", [
        ([], "A glimmer is a small glowing mob that floats over lakes at night."),
        (["Breeding"], "After breeding, the parents rest for five minutes."),
        (["Breeding"], "Glimmers can be bred using lake pearls, glow dust or moss (see Taming)."),
    ])
    assert reader.read("what do you feed glimmers to breed them", passages_of(page)).text == \
        "lake pearls, glow dust or moss"


def test_a_label_or_caption_of_a_word_or_two_is_not_an_answer(reader):
    page = ("Glimmer", [
        ([], "A glimmer is a small glowing mob that floats over lakes at night."),
        (["Respawning"], "Glimmer respawn"),
        (["Respawning"], "A lost glimmer respawns over its own lake after five nights have passed."),
    ])
    assert reader.read("when does a glimmer respawn", passages_of(page)).text == \
        "over its own lake after five nights have passed"


def test_of_pages_the_question_names_the_one_retrieval_ranked_first_is_the_subject(reader):
    # "glimmer oak shafts" names both pages; retrieval weighed the whole question and put Shaft first.
    shaft = ("Shaft", [([], "A shaft is a tunnel structure."),
                       (["Generation"], "Glimmer oak shafts generate on the surface in badlands biomes.")])
    oak = ("Glimmer oak", [([], "A glimmer oak is a tree."),
                           (["Generation"], "Glimmer oak trees generate as dying trees in glimmer oak swamps.")])
    span = reader.read("where do glimmer oak shafts generate", passages_of(shaft, oak))
    assert (span.passage.title, span.text) == ("Shaft", "on the surface in badlands biomes")


def test_a_number_the_question_already_says_is_not_the_answer():
    text = "Disc 5 takes nine fragments, which can be found in ancient cities."
    start, end = trim_to_answer_kind(QUANTITY, text, 0, len(text), 0, len(text), question="how many fragments for disc 5")
    assert text[start:end] == "nine fragments"
    text = "Nine fragments can be combined into a disc."
    start, end = trim_to_answer_kind(QUANTITY, text, 0, len(text), 0, len(text), question="how many fragments for a disc")
    assert text[start:end] == "Nine fragments"   # not "Nine fragments can be"


@pytest.mark.parametrize("text, expected", [
    ("A glimmer table reaches full power with 15 glimmer shelves around it.", "15 glimmer shelves"),
    ("The beacon needs 9 glimmer blocks placed under it.", "9 glimmer blocks"),
    ("Up to 4 glimmers inside a jar glow brighter.", "Up to 4 glimmers"),
])
def test_what_a_number_counts_ends_before_a_preposition_or_participle(text, expected):
    start, end = trim_to_answer_kind(QUANTITY, text, 0, len(text), 0, len(text), question="how many are needed")
    assert text[start:end] == expected


def test_how_often_is_answered_in_its_units_and_a_range_stays_whole(reader):
    page = ("Glimmer", [
        ([], "A glimmer is a small glowing mob that floats over lakes at night."),
        (["Behavior"], "Glimmers drop glow dust at random, and dust that lands in water has a 1 in 8 chance to glow."),
        (["Behavior"], "An adult glimmer drops glow dust every five to ten minutes while it floats."),
    ])
    assert reader.read("how often do glimmers drop glow dust", passages_of(page)).text == "every five to ten minutes"


def test_what_tool_prefers_the_sentence_that_names_the_material(reader):
    page = ("Glimmerstone", [
        ([], "Glimmerstone is a hard block found in caves."),
        (["Breaking"], "Glimmerstone drops shards when broken with a pickaxe not enchanted with Silk Touch."),
        (["Breaking"], "Glimmerstone drops itself only when mined with a diamond or netherite pickaxe."),
    ])
    assert reader.read("what pickaxe do i need for glimmerstone", passages_of(page)).text == \
        "a diamond or netherite pickaxe"


@pytest.mark.parametrize("question, expected", [
    ("what does a glimmer lamp do", "lights up lakes at night"),
    ("what is a glimmer lamp used for", "lights up lakes at night"),
])
def test_what_a_thing_does_is_answered_with_what_it_does_not_what_it_is(reader, question, expected):
    page = ("Glimmer lamp", [([], "A glimmer lamp is a light block that lights up lakes at night, including the deep ones.")])
    assert reader.read(question, passages_of(page)).text == expected


def test_what_loot_is_an_item_of_the_drops_list_not_a_line_about_looting(reader):
    page = ("Glimmer", [
        ([], "A glimmer is a small glowing mob that floats over lakes at night."),
        (["Drops"], "Glimmers drop:"),
        (["Drops"], "Glow dust"),
        (["Drops"], "Lake pearl"),
        (["Drops"], "Looting increases the amount of each drop."),
    ])
    assert reader.read("what loot do glimmers drop", passages_of(page)).text == "Glow dust"


def test_an_answer_does_not_open_inside_a_bracket_or_with_a_copula():
    from jarvis.readers.fallback.trimming import answer_opening
    text = "Glimmer huts (also known as lake huts) are small cabins that spawn glimmers."
    assert text[answer_opening(text, 0, text.index("huts)"), len(text)):].startswith("small cabins")
    text = "Glimmerlands, formerly known as glowlands, are misty biomes."
    assert text[answer_opening(text, 0, text.index(", are"), len(text)):] == "misty biomes."


def test_a_recipe_table_row_without_ingredients_is_not_the_recipe(reader):
    page = ("Glimmer ingot", [
        ([], "A glimmer ingot is an item."),
        (["Obtaining", "Crafting"], "Block of Glimmer \u2014 Crafting recipe: 9."),
        (["Obtaining", "Crafting"], "Glimmer ingot \u2014 Ingredients: Glow Dust+Gold Ingot."),
    ])
    assert reader.read("how do you make glimmer ingots", passages_of(page)).text == "Glow Dust+Gold Ingot"


def test_later_rows_of_a_drop_table_are_less_sure_and_nothing_is_no_drop(reader):
    from jarvis.readers.fallback.blocks import Sentence
    from jarvis.readers.fallback.reader import _later_row_penalty
    rows = passages_of(("Glimmer", [(["Drops"], "Glow Dust \u2014 Quantity: 0\u20132."),
                                    (["Drops"], "Lake Pearl \u2014 Quantity: 1."),
                                    (["Drops"], "Nothing \u2014 Roll Chance: 1/6; Quantity: 1."),
                                    (["Behavior"], "Shell \u2014 Quantity: 1.")]))
    penalty = _later_row_penalty(rows, 0.05)
    assert [penalty[id(p)] for p in rows] == [0.0, 0.05, 0.1, 0.0]   # counted per section
    sure = [reader._holds_kind(DROPS, Sentence(p, 0, len(p.text), 0)) for p in rows[:3]]
    assert sure == [reader.settings.table_row_kind_match] * 2 + [0.0]


def test_a_table_row_the_question_names_answers_however_common_its_name(reader):
    # "Pigstep"-like: the row's name appears in many candidates (a chest-loot row, a jukebox row),
    # so it is rare nowhere; the row named by the question is still the one about what was asked.
    page = ("Music Glimmer", [
        ([], "Music glimmers are discs."),
        (["Discs"], "Glowstep \u2014 Composer: A. Person; Length: 2:28."),
        (["Discs"], "Lakesong \u2014 Composer: B. Person; Description: a calm song about lakes; Length: 3:10."),
        (["Loot"], "Music Glimmer (Glowstep) \u2014 Structure: Glow Remnant; Chance: 5.6%."),
        (["Jukebox"], "Glowstep \u2014 Signal: 13."),
    ])
    assert reader.read("how long is the glowstep song", passages_of(page)).text == "2:28"


def test_a_negative_number_keeps_its_sign_and_a_see_aside_is_cut():
    text = "The glimmer city generates at layer -51, under the lakes."
    start, end = trim_to_answer_kind(QUANTITY, text, 0, len(text), 0, len(text), question="what y level is the glimmer city")
    assert text[start:end] == "-51"
    from jarvis.readers.fallback.trimming import clause_end
    text = "It is built from 4 glow blocks in a T shape (see image on the right) on open ground."
    assert text[text.index("from"):clause_end(text, text.index("from"), len(text))] == "from 4 glow blocks in a T shape"


def test_sections_about_the_page_rather_than_the_thing_count_against_an_answer():
    from jarvis.readers.question_kinds import section_fit
    for section in (("Trivia",), ("History", "Java Edition"), ("Data values", "ID")):
        assert section_fit(RECIPE, section) == -1.0
        assert section_fit(None, section) == -1.0
    assert section_fit(RECIPE, ("Obtaining", "Crafting")) == 1.0


@pytest.mark.parametrize("question, answer", [
    # A height in the world: the Y coordinate, not the blob size or the light level beside it.
    ("what y level are glimmer ores at", "Y=20 to Y=-40"),
    ("what y level is glimmer ore most common", "a Y level of 12"),
    # Odds: the percentage, not the count beside it.
    ("what are the odds a glimmer ore drops a pearl", "4% chance"),
])
def test_a_measure_asked_in_other_words_picks_the_number_in_its_units(reader, question, answer):
    page = ("Glimmer Ore", [
        ([], "Glimmer ore is an ore found underground. Glimmer ore is most common at a Y level of 12."),
        (["Natural generation"], "3 blobs of 1-6 ores per chunk, from Y=20 to Y=-40, when the light level is 0."),
        (["Drops"], "Glimmer ore drops 1-2 glimmer dust, and 2 glimmer shards with a 4% chance of a pearl."),
    ])
    assert reader.read(question, passages_of(page)).text == answer


def test_a_how_many_question_gets_the_number_of_what_it_counts(reader):
    page = ("Glimmer", [
        ([], "A glimmer is a fuel found in lakes."),
        (["Fuel"], "Used as fuel, a glimmer burns for 80 seconds (smelting up to 8 items) in any furnace."),
    ])
    assert reader.read("how many items does a glimmer smelt", passages_of(page)).text == "up to 8 items"


@pytest.mark.parametrize("question, answer", [
    ("what happens when lightning strikes a glimmer", "turns it into a storm glimmer"),
    ("what happens if you drop a glimmer in lava", "causes it to burst into sparks"),
])
def test_a_what_happens_question_gets_what_is_caused(reader, question, answer):
    page = ("Glimmer", [
        ([], "A glimmer is a small glowing mob found near lakes."),
        (["Behavior"], "A glimmer follows players holding lake pearls, and flees from cats at night."),
        (["Behavior"], "A lightning strike on a glimmer turns it into a storm glimmer."),
        (["Behavior"], "Dropping a glimmer in lava in the Overworld or the Glow Lands causes it to burst into sparks."),
    ])
    assert reader.read(question, passages_of(page)).text == answer


def test_a_which_question_in_the_plural_gets_the_list_of_names(reader):
    page = ("Glimmer Hut", [
        ([], "A glimmer hut is a cabin by the lakes where a spawner that produces either glimmers, lake cats or "
             "frogs is found in the middle of the room."),
        (["Generation"], "A glimmer hut generates on a stone floor, 3 blocks above the water."),
    ])
    assert reader.read("what mobs can a glimmer hut spawn", passages_of(page)).text == "glimmers, lake cats or frogs"


def test_a_page_the_retriever_scored_far_below_the_top_one_is_not_read(reader):
    from dataclasses import replace as with_score
    lake = ("Glimmer Lake", [([], "A glimmer lake is a pond where glimmers gather at night.")])
    pearl = ("Lake Pearl", [([], "Lake pearls are found at night in glimmer lakes by divers.")])
    passages = passages_of(lake, pearl)
    question = "where are lake pearls found at night"
    # Scored close to the top page, the second page competes and its better sentence answers.
    close = [with_score(p, page_score=1.0 if p.page_rank == 0 else 0.95) for p in passages]
    assert reader.read(question, close).passage.title == "Lake Pearl"
    # Scored far below, it is not read.
    far = [with_score(p, page_score=1.0 if p.page_rank == 0 else 0.5) for p in passages]
    assert reader.read(question, far).passage.title == "Glimmer Lake"


@pytest.mark.parametrize("question, answer", [
    ("what do you use to tame a glimmer", "lake pearls"),
    ("how do you fix a glimmer lamp", "adding glow dust"),
])
def test_a_means_answer_leaves_out_the_word_that_only_says_it_is_the_means(reader, question, answer):
    page = ("Glimmer", [
        ([], "A glimmer is a small glowing mob found near lakes."),
        (["Taming"], "Glimmers can be tamed using lake pearls."),
    ], )
    lamp = ("Glimmer Lamp", [
        ([], "A glimmer lamp is a light block."),
        (["Repairing"], "A broken glimmer lamp can be fixed by adding glow dust."),
    ])
    pages = passages_of(lamp) if "lamp" in question else passages_of(page)
    assert reader.read(question, pages).text == answer


@pytest.mark.parametrize("question, answer", [
    # A fraction is one number, and "between … and …" one range.
    ("whats the chance a glimmer drops a pearl", "1\u20443 chance"),
    ("what y level do glimmer geodes generate at", "between Y=-50 and Y=20"),
    # "how much X" counts X, like "how many X".
    ("how much durability does a glimmer lamp have", "120 durability"),
])
def test_numbers_the_way_the_wiki_writes_them(reader, question, answer):
    page = ("Glimmer", [
        ([], "A glimmer is a small glowing mob found near lakes. A glimmer lamp lasts 5 nights and has 120 durability."),
        (["Drops"], "Each glimmer drops 2 glow dust and has a 1\u20443 chance to drop a pearl."),
        (["Geodes"], "Glimmer geodes generate in 3 shapes between Y=-50 and Y=20 in any biome."),
    ])
    assert reader.read(question, passages_of(page)).text == answer


def test_chat_spellings_and_answer_edges(reader):
    from jarvis.readers.question_kinds import RECIPE, answer_kind
    from jarvis.readers.fallback.trimming import strip_span
    assert answer_kind("how do u make a glimmer lamp") == RECIPE
    text = "Glimmer huts generate in swamps and lakes\u200c[Java Edition only]."
    assert text[slice(*strip_span(text, text.index("swamps"), len(text)))] == "swamps and lakes"
    page = ("Glimmer", [
        ([], "A glimmer is a small glowing mob found near lakes."),
        (["Behavior"], "Feeding a glimmer a cookie instantly kills it."),
        (["Usage"], "Glimmer dust can be found in lakes, and it is used to brew lake potions."),
    ])
    assert reader.read("what happens if you feed a glimmer a cookie", passages_of(page)).text == "instantly kills it"
    assert reader.read("what is glimmer dust used for", passages_of(page)).text == "brew lake potions"


@pytest.mark.parametrize("question, kind", [
    ("how do i get a glimmer lamp", "recipe"),
    ("how do i get a glimmer to follow me", "method"),
    ("how do i get glow dust out of a glimmer lamp", "method"),
    ("how do you get rid of the glimmer curse", "method"),
])
def test_how_do_i_get_is_a_recipe_only_when_it_asks_for_the_thing(question, kind):
    from jarvis.readers.question_kinds import answer_kind
    assert answer_kind(question) == kind


def test_an_aside_in_brackets_ends_the_answer(reader):
    page = ("Glimmer Bottle", [
        ([], "A glimmer bottle is an item found in lake ruins."),
        (["Usage"], "A glimmer bottle is used to give the player the Glow effect (a faint light around them) for "
                    "5 minutes."),
    ])
    assert reader.read("what is a glimmer bottle used for", passages_of(page)).text == "give the player the Glow effect"


def test_a_where_answer_names_a_place_not_a_group_or_a_mode(reader):
    page = ("Glimmer", [
        ([], "A glimmer is a small glowing mob."),
        (["Spawning"], "Glimmers spawn in groups of two to four."),
        (["Spawning"], "Glimmers spawn in Peaceful mode, but are passive there."),
        (["Spawning"], "Lake glimmers spawn in misty swamps and glow caves."),
    ])
    assert reader.read("where do glimmers spawn", passages_of(page)).text == "in misty swamps and glow caves"


def test_a_where_answer_comes_from_the_lead_that_names_the_places_not_the_spawn_conditions(reader):
    # The lead says where in a player's words; the Spawning section, on what and in what light.
    page = ("Glimmer", [
        ([], "A glimmer is a glowing mob that spawns in misty swamps and glow caves."),
        (["Spawning"], "Glimmers spawn in caves on moss blocks at light levels of nine or less."),
    ])
    assert reader.read("where do glimmers spawn", passages_of(page)).text == "in misty swamps and glow caves"


def test_how_to_breed_is_read_from_the_love_mode_sentence_not_the_breeding_drops(reader):
    page = ("Glimmer", [
        ([], "A glimmer is a small glowing mob found near lakes."),
        (["Drops", "Breeding"], "Upon successful breeding, 1\u20137 is dropped."),
        (["Behavior", "Taming"], "Glimmer \u2014 Follows the player?: Yes; Notes: tamed with lake pearls."),
        (["Behavior"], "A glimmer sleeps on lily pads. Feeding two glimmers lake pearls results in them entering "
                       "love mode."),
    ])
    assert reader.read("how do i breed glimmers", passages_of(page)).text == "Feeding two glimmers lake pearls"


def test_a_sentence_opening_with_depending_on_names_no_means(reader):
    from jarvis.readers.fallback.phrases import trim_to_answer_kind
    from jarvis.readers.question_kinds import METHOD
    text = "Glimmers glow. Depending on the weather it also either produces a trail of light."
    start = text.index("Depending")
    assert trim_to_answer_kind(METHOD, text, start, len(text) - 1, start, len(text) - 1) is None
    text = "Glimmers glow. Shaking a glimmer jar removes the glimmer."
    start = text.index("Shaking")
    begin, end = trim_to_answer_kind(METHOD, text, start, len(text) - 1, start, len(text) - 1)
    assert text[begin:end] == "Shaking a glimmer jar"


def test_a_participle_clause_ends_the_answer_but_a_list_of_ing_nouns_does_not():
    from jarvis.readers.fallback.trimming import clause_end
    text = "Feeding a glimmer a cookie instantly kills it, emitting sparks as it dies."
    start = text.index("instantly")
    assert text[start:clause_end(text, start, len(text))] == "instantly kills it"
    text = "It is immune to lava, drowning and freezing."
    start = text.index("lava")
    assert text[start:clause_end(text, start, len(text))] == "lava, drowning and freezing"
    text = "It cures poison, mining fatigue and hunger."
    start = text.index("poison")
    assert text[start:clause_end(text, start, len(text))] == "poison, mining fatigue and hunger"


def test_one_in_a_question_matches_no_sentence_that_says_one(reader):
    page = ("Glimmer Jar", [
        ([], "A glimmer jar holds glimmers."),
        (["Usage"], "Glimmers look for one jar first, and if that one is full, for one other jar, or for one lake."),
        (["Usage"], "A glimmer jar can house up to 3 glimmers at a time."),
    ])
    assert reader.read("how many glimmers fit in one glimmer jar", passages_of(page)).text == "up to 3 glimmers"
