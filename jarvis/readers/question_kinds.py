"""The question classifier: what a question asks for, in one vocabulary of answer kinds, and where on a
page such answers are written. Both readers read questions through it: the passage ranker
(jarvis/readers/ranking.py) and the fallback reader (jarvis/readers/fallback/).

The vocabulary (``ANSWER_KINDS``): QUANTITY ("how much", "how many", "what light level", "Y level"), PLACE
("where"), RECIPE ("how do I make/craft"), TOOL ("what tool"), DROPS ("what do X drop"), METHOD ("how do
you tame"), YES_NO ("can poison kill you"), PURPOSE ("what does silk touch do"), CONSEQUENCE ("what
happens if ..."), WHICH ("what mobs spawn in ..."), DEFINITION ("what is a creeper").

Two readings of a question in that vocabulary:
- ``answer_kind(question)``: the one kind of phrase the answer is (the first of ``ANSWER_PATTERNS`` that
  matches, mostly on the opening words), or None; the fallback reader looks for such a phrase and trims
  the answer to it;
- ``question_topics(question)``: every kind the question's words touch (``TOPIC_PATTERNS``, any word:
  "where can I find and mine diamonds" touches PLACE and TOOL); the passage ranker prefers the
  sections that answer them.

Where each kind is written is data, ``data/sections.yaml`` (``SECTIONS``): words of section headings that
surely, maybe or never hold it (``section_fit``, graded), and whole headings that answer it
(``in_answer_section``). Also here: the measure a question asks for ("how long" -> "long", the table
headers that give it) and what a "how many" question counts.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

import yaml

SECTIONS_FILE = Path(__file__).resolve().parent / "data" / "sections.yaml"
SECTIONS: dict = yaml.safe_load(SECTIONS_FILE.read_text(encoding="utf-8"))

QUANTITY, PLACE, RECIPE, TOOL, DROPS = "quantity", "place", "recipe", "tool", "drops"
METHOD, YES_NO, PURPOSE = "method", "yes-no", "purpose"
CONSEQUENCE, WHICH, DEFINITION = "consequence", "which", "definition"
ANSWER_KINDS = (QUANTITY, PLACE, RECIPE, TOOL, DROPS, METHOD, YES_NO, PURPOSE, CONSEQUENCE, WHICH, DEFINITION)

# The kind of phrase a question asks for, read from its words (mostly the opening ones): the first that
# matches (the question lower-cased, its spacing collapsed, chat spellings of "you" spelt out).
ANSWER_PATTERNS = (
    (QUANTITY, re.compile(r"^(how (much|many|long|far|high|deep|low|fast|often|rare)|what (\w+ )?(level|height|"
                          r"y|amount|number|percentage|chance)\b|(max|maximum|min|minimum)\b)|\by[ -]?level\b|"
                          r"^what('?s| is| are)? (the )?(\w+ )?(odds|chances?|probability|percentage|rate)\b")),
    (PLACE, re.compile(r"^where\b|\bwhere (to|do|can|does|is|are)\b|^(what|which) biomes?\b|"
                       r"^how (do|can|would) (i|you|we) (find|locate)\b")),
    # "how do I get an ocelot to trust me", "... get honey out of a hive": a method, not a recipe.
    (RECIPE, re.compile(r"^(how (do|can|would|should) (i|you|we|one) (make|craft|build|create|"
                        r"get(?!(?: [\w'-]+){1,3} (?:to|out|off|into|onto)\b| rid\b))|"
                        r"what (is|are) (needed|used) to (make|craft|build)|how (is|are) .+ (made|crafted))\b|"
                        r"\brecipes?\b|\bingredients?\b|\bwhat do (i|you) need to (make|craft|build)\b|"
                        r"\bhow to (make|craft|build)\b|\b(made|crafted) (of|from|with)\b")),
    (TOOL, re.compile(r"^(what|which) (\w+ )?(tool|pickaxe)s?\b")),
    # "what does silk touch do?", "what is an anvil used for?": what it does, not what it is.
    (PURPOSE, re.compile(r"^what (does|do|did) (?!(?:i|you|we) ).+ do\b|^what (can|do|should) (i|you|we) do with\b|"
                         r"\bused for\W*$|^what('?s| is| are| was) .+ (good )?for\W*$")),
    # "what happens if you sleep in the lake?": what it does, "causes it to sink".
    (CONSEQUENCE, re.compile(r"^what (happens|happened|will happen|would happen|occurs)\b")),
    (DROPS, re.compile(r"\b(drop|drops|loot)\b")),
    # "what mobs spawn in glimmer huts?": the names, "glimmers and lake cats" (a plural asks for a list;
    # "what structure ..." for one name).
    (WHICH, re.compile(r"^(what|which) (kinds? of |types? of |sorts? of )?(mobs|animals|monsters|creatures|entities|"
                       r"blocks|items|structures|flowers|plants|effects|enchantments|spawners|foods|ores)\b|"
                       r"^what (spawns|lives|grows|generates) (in|on|at|inside|near|around|under)\b")),
    # "how do you tame a wolf?": the means, "by feeding it bones", "Feeding a wild wolf a bone ...".
    (METHOD, re.compile(r"^how (do|can|would|should|to|does) (i |you |we |one |a |an |the )?\w+|"
                        r"^what (\w+ )?(do|can|should|would) (i|you|we) (use|need|feed|give)\b")),
    # "can glimmers swim?": the clause that says whether ("they cannot swim"), not a definition.
    (YES_NO, re.compile(r"^(can|could|do|does|did|is|are|was|were|will|would|should|has|have)\b")),
)
# The kinds a question's words touch, anywhere in it (case-insensitive); a question may touch several.
TOPIC_PATTERNS = tuple((kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in (
    (DROPS, r"\b(drops?|dropped|loot)\b|\bwhat do(es)? (an? |the )?\w+( \w+)? (give|leave)\b"),
    (PLACE, r"\b(\w*spawn\w*|where|find|found|located?|generates?|generation|biomes?)\b"),
    (RECIPE, r"\b(craft|crafts|crafted|crafting|make|made|obtain|obtained|get|smelt|smelted|brew|recipe|"
             r"pick up|collect|gather|harvest)\b"),
    (METHOD, r"\b(breed|breeding|feed|tame|taming)\b"),
    (PURPOSE, r"\b(use|used|uses|usage|for what)\b"),
    (TOOL, r"\b(mine|mined|mining|break|tool|pickaxe|axe|shovel|hoe)\b"),
    (DEFINITION, r"^\s*(what|who)( i|')s\b|^\s*what are\b|^\s*(define|describe)\b"),
))
# Questions that ask for a duration or a number, and the text that holds one (tables hold many).
MEASURE_QUESTIONS: tuple[tuple[re.Pattern, re.Pattern], ...] = (
    (re.compile(r"\bhow long\b|\bduration\b", re.IGNORECASE),
     re.compile(r"\b\d+:\d\d\b|\b\d+(\.\d+)? ?(seconds?|minutes?|hours?|days?|ticks?)\b|\b(duration|length)\b",
                re.IGNORECASE)),
    (re.compile(r"\bhow (much|many|far|high|often)\b|\b(what|which) (y[- ])?(level|layer|height)\b|\bchance\b",
                re.IGNORECASE),
     re.compile(r"\d")),
)

# Chat spellings of "you": "how do u make soul torches", "how do ya tame a fox".
CHAT_YOU = re.compile(r"\b(u|ya|yu)\b")


# A question whose answer is yes or no: a quiz's claim ("True or false: ...", "fact or myth"), or a question that
# opens with an auxiliary verb and asks for nothing else ("can skeletons ride spiders?", not "can you tell me where
# ..."), or a claim with a question mark ("beds work in the nether?").
_CLAIM = re.compile(r"^(true or false|t or f|fact or (myth|fiction|cap)|myth or fact|is it true|is it a fact|"
                    r"did you know|yes or no)\b|\b(true or false|yes or no|fact or myth)\W*$")
_AUXILIARY = re.compile(r"^(can|could|do|does|did|is|are|was|were|will|would|should|has|have|may|might|must)\b")
_WH = re.compile(r"\b(what|which|who|whom|whose|where|when|why|how)\b")


# Quiz forms (the shapes of quiz and trivia games): a blank to fill in ("a wolf is tamed with a ___"), a riddle
# that ends "who am I?" / "what block am I?". The reader has no reading of its own for them, so they are
# signals of the confidence (confidence/signals.py): their answers are right less often than they look.
BLANK, RIDDLE = "blank", "riddle"
_BLANK = re.compile(r"_{2,}")
_RIDDLE = re.compile(r"\b(who|what|which)(\s+\w+)?\s+am\s+i\W*$", re.IGNORECASE)   # at the end


def quiz_form(question: str) -> str | None:
    """BLANK, RIDDLE or None."""
    if _BLANK.search(question):
        return BLANK
    if _RIDDLE.search(question):
        return RIDDLE
    return None


def is_yes_no(question: str) -> bool:
    """Whether a question asks for yes or no (``_CLAIM``, ``_AUXILIARY``): as typed, its question mark included."""
    text = CHAT_YOU.sub("you", " ".join(question.lower().split()))
    if _CLAIM.search(text):
        return True
    if _WH.search(text):
        return False
    return bool(_AUXILIARY.search(text)) or (text.endswith("?") and len(text.split()) >= 3)


def answer_kind(question: str) -> str | None:
    """The kind of phrase a question asks for (ANSWER_PATTERNS, first match), or None."""
    text = CHAT_YOU.sub("you", " ".join(question.lower().split()))
    for kind, pattern in ANSWER_PATTERNS:
        if pattern.search(text):
            return kind
    return None


def question_topics(question: str) -> list[str]:
    """Every answer kind the question's words touch (TOPIC_PATTERNS), e.g. [DROPS] for "what do cows drop?"."""
    return [kind for kind, pattern in TOPIC_PATTERNS if pattern.search(question)]


def measure_patterns(question: str) -> list[re.Pattern]:
    """What a passage that holds the duration or number a question asks for says (MEASURE_QUESTIONS)."""
    return [holds for asks, holds in MEASURE_QUESTIONS if asks.search(question)]


# ------------------------------------------------------------------ where on a page

# Words of section headings (case-folded prefixes) that surely hold a kind, may hold it, and never do.
SECTION_HINTS = {kind: (tuple(words.get("sure", ())), tuple(words.get("maybe", ())), tuple(words.get("never", ())))
                 for kind, words in SECTIONS["answer_sections"].items() if {"sure", "maybe", "never"} & set(words)}
# Whole section headings (any level of the path, case-insensitive) that answer a kind.
ANSWER_HEADINGS = {kind: frozenset(h.lower() for h in words.get("headings", ()))
                   for kind, words in SECTIONS["answer_sections"].items()}
# Sections for modders and technical players, and about the page rather than the thing: they count
# against an answer.
TECHNICAL_SECTIONS = tuple(SECTIONS["technical_sections"])
SURE_SECTION = 0.75   # section_fit from here on: the section (or its parent) is named for the kind
# Stems of words that name what is asked about a thing rather than the thing itself: a page titled
# only with them ("Drops", "Spawn", "Breeding") is a general page, not the subject of the question.
PROPERTY_STEMS = frozenset(SECTIONS["property_stems"])


def section_fit(kind: str | None, section: Sequence[str]) -> float:
    """How surely a section with this heading path holds an answer of this kind: 1 (its own heading says
    so) down to 0.25 (a parent heading may), 0 when nothing says, -1 when it never does (or is technical)."""
    if section and section[0].casefold() in TECHNICAL_SECTIONS:
        return -1.0
    if kind not in SECTION_HINTS or not section:
        return 0.0
    strong, weak, bad = SECTION_HINTS[kind]

    def says(heading: str, prefixes: tuple[str, ...]) -> bool:
        return any(word.startswith(p) for word in heading.casefold().split() for p in prefixes)

    own, parents = section[-1], section[:-1]
    if says(own, bad):
        return -1.0
    if says(own, strong):
        return 1.0
    if says(own, weak):
        return 0.5
    if any(says(h, strong) for h in parents):
        return 0.75
    if any(says(h, weak) for h in parents):
        return 0.25
    return 0.0


def in_answer_section(kinds: Sequence[str], section: Sequence[str]) -> bool:
    """Whether a paragraph under this heading path answers a question of these kinds: a heading of the path
    is one that answers a kind (ANSWER_HEADINGS), or the question asks for a definition and it is the lead."""
    if DEFINITION in kinds and not section:
        return True
    headings = {h.lower() for h in section}
    return any(headings & ANSWER_HEADINGS.get(kind, frozenset()) for kind in kinds)


# ------------------------------------------------------------------ the measure asked for

# "how long", "how fast"...: the measure asked for, and the table headers that give it. The word
# itself says only which measure ("how long does a potion last" is not about anything long).
HOW_MEASURE = re.compile(r"^how (long|fast|far|high|tall|deep|often|rare|heavy|big)\b", re.IGNORECASE)
# Two measures players ask for in other words: a height in the world ("what y level", "what layer")
# and a chance ("what are the odds", "drop chance").
Y_LEVEL = re.compile(r"\by[ -]?(level|layer|coord\w*)s?\b|\bwhat (height|altitude|layer)\b|^(at )?what y\b",
                     re.IGNORECASE)
CHANCE = re.compile(r"\b(chances?|odds|probability|likely)\b", re.IGNORECASE)
MEASURE_HEADERS = {measure: tuple(words) for measure, words in SECTIONS["measure_headers"].items()}
# "what y level is best for diamonds": the "Most common" column, not the whole range.
BEST = re.compile(r"\b(best|most common|commonest)\b", re.IGNORECASE)
BEST_HEADERS = tuple(SECTIONS["best_headers"])
# "how many ender pearls can ...", "how much durability ...": the words for what is counted.
COUNTED = re.compile(r"^how (?:many|much) ((?:(?!(?:do|does|did|can|could|is|are|was|were|will|would|should|have|"
                     r"has|in|on|of|for|per|to|from|with|at|by)\b)[\w'-]+\s*){1,3})", re.IGNORECASE)


def how_measure(question: str) -> str | None:
    """The measure of a "how long/fast/far/often..." question ("long"), else None."""
    match = HOW_MEASURE.match(" ".join(question.split()))
    return match.group(1).lower() if match else None


def asked_measure(question: str) -> str | None:
    """The measure a question asks for: a "how long/fast/..." word, "y" for a height in the world
    ("what y level"), "chance" for odds; None when it asks for none of them."""
    measure = how_measure(question)
    if measure is not None:
        return measure
    if Y_LEVEL.search(question):
        return "y"
    return "chance" if CHANCE.search(question) else None


def measure_headers(question: str) -> tuple[str, ...]:
    """Header words that give the measure a question asks for ("how long", "best ...")."""
    measure = asked_measure(question)
    headers = MEASURE_HEADERS[measure] if measure else ()
    return headers + BEST_HEADERS if BEST.search(question) else headers


def counted_words(question: str) -> str:
    """What a "how many/much" question counts ("ender pearls", "durability"), else ""."""
    match = COUNTED.match(" ".join(question.split()))
    return match.group(1).strip() if match else ""
