"""Answer phrases: the phrase of each answer kind in a sentence (a number, a place, a recipe, a tool, drops,
a means...), whether a sentence holds one, and the answer trimmed to it. The kinds are the question
classifier's (jarvis/readers/question_kinds.py: ``answer_kind(question)``); this is the fallback reader's
knowledge of how the wiki's sentences say them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from jarvis.lexical import TermAnalyzer
from jarvis.readers.fallback.trimming import PARTICIPLE_CLAUSE, clause_end, strip_span
from jarvis.readers.question_kinds import (CONSEQUENCE, DROPS, METHOD, PLACE, PURPOSE, QUANTITY, RECIPE, TOOL, WHICH, YES_NO,
                                      asked_measure, how_measure)

# A number: "8", "1.5", "1,280", "0-2", "20-34", "Y=40", "25%", a fraction "1⁄3", a duration "2:28" or
# "1:40:00", a size "4×5", or a count in words ("twelve").
NUMBER_WORDS = (r"two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|"
                r"hundred|twice|thrice")
NUMBER = (r"(?:\d+\s?\u2044\s?\d+|(?:[xyz]\s?=\s?)?-?\d+(?::\d\d){1,2}|(?:[xyz]\s?=\s?)?-?\d+(?:[.,]\d+)*"
          r"(?:\s?[-\u2013\u00d7x]\s?\d+(?:[.,]\d+)*)?%?|\b(?:" + NUMBER_WORDS + r")\b)")
# A count of ingredients, in digits or words ("4 Sand", "four Planks").
COUNT = re.compile(r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+[a-z]",
                   re.IGNORECASE)
# A number phrase: a qualifier, the number, and up to three words naming what is counted.
NUMBER_PHRASE = re.compile(
    r"(?<![\w=])((?:about|around|approximately|roughly|exactly|nearly|almost|only|up to|at least|at most|over|under|"
    r"below|above|more than|less than|every|once every|(?:a )?y[ -]?level(?: of)?)\s+)?"
    r"(?:between\s+" + NUMBER + r"\s+and\s+" + NUMBER + "|" + NUMBER + r"(?:\s+(?:to|or)\s+" + NUMBER + r")?)"
    r"(?:\s+(?!(?:and|or|of|in|on|at|to|for|from|with|by|per|between|"
    r"when|if|but|which|that|the|a|an|is|are|was|were|be|can|could|will|would|may|must|has|have|had|do|does|"
    r"it|its|each|every|while|so|as|than|around|about|into|onto|near|under|over|above|below|inside|within|"
    r"through|after|before|until|during|away|apart|placed|needed|required|" + NUMBER_WORDS + r")\b)"
    r"[A-Za-z][\w'-]*){0,3}", re.IGNORECASE)
# "in groups of four", "in Peaceful", "in Java Edition", "in this biome": prepositions that name no place.
PLACE_WORD = re.compile(r"\b(in|on|inside|near|around|under|underneath|below|above|beneath|within|across|along|"
                        r"throughout|at)\s+(?!(?:any|all|least|most|once|first|night|day|random|level|a time|"
                        r"groups?|pairs?|herds?|peaceful|easy|normal|hard|hardcore|creative|survival|"
                        r"java|bedrock|order|addition|this|that|these|those|which|light|total|general|fact|"
                        r"particular|average)\b)", re.IGNORECASE)
# Words that name a place in the world: a place phrase with one surely says where ("in the lush caves"),
# as does one followed by "wherever" ("on solid blocks wherever the light level is 0").
PLACE_NOUN = re.compile(r"\b(wherever|biomes?|forests?|caves?|jungles?|swamps?|taigas?|deserts?|oceans?|rivers?|plains|"
                        r"savannas?|badlands|mesas?|mountains?|hills|peaks|slopes|meadows?|groves?|beach(?:es)?|"
                        r"islands?|fields|tundra|nether|end|overworld|villages?|temples?|pyramids?|mansions?|"
                        r"fortress(?:es)?|bastions?|remnants?|cities|city|ruins?|outposts?|strongholds?|"
                        r"mineshafts?|monuments?|igloos?|huts?|shipwrecks?|chambers?|dungeons?|underground|"
                        r"underwater|dimension)\b", re.IGNORECASE)


def names_a_place(sentence: str) -> bool:
    """Whether a place phrase of the sentence names a place ("in crimson forests"), not only a spot
    ("on grass blocks")."""
    return any(PLACE_NOUN.search(sentence, m.end(), m.end() + 40) for m in PLACE_WORD.finditer(sentence))


RECIPE_WORD = re.compile(r"\b(craft(ed|s)?|made|make|makes|combin(e|es|ed|ing)|placing|recipe|built|build|"
                         r"smelt(ed|ing)?)\b", re.IGNORECASE)
RECIPE_START = re.compile(r"\b(from|by|out of|using|with)\s", re.IGNORECASE)
TOOL_WORD = re.compile(r"\b((?:(?:any|a|an|the|wooden|wood|stone|iron|golden|gold|diamond|netherite)(?:\s+or)?\s+){0,3}"
                       r"(?:pickaxe|axe|shovel|hoe|sword|shears|hand)s?(?:\s+or\s+(?:better|higher|"
                       r"(?:a\s+|an\s+)?(?:\w+\s+)?(?:pickaxe|axe|shovel|hoe|sword|shears)))?)\b", re.IGNORECASE)
TOOL_MATERIAL = re.compile(r"\b(wooden|wood|stone|iron|golden|gold|diamond|netherite)\s+(or\s+\w+\s+)?"
                           r"(pickaxe|axe|shovel|hoe|sword)s?\b", re.IGNORECASE)
# Drops: a list item that opens with a count ("0-1 blaze rod"), or a sentence that says "drop" and counts.
DROP_ITEM = re.compile(r"^\d+\s?[-\u2013]\s?\d+\s+[A-Za-z]", re.IGNORECASE)
DROP_SENTENCE = re.compile(r"\bdrop(s|ped)?\b.*\d|\d.*\bdropped\b", re.IGNORECASE)
# The means in a sentence: "by feeding it ...", "using shears", a sentence that opens with what is
# done ("Feeding a wild wolf a bone has a chance to tame it").
METHOD_PHRASES = (
    # "by adding lake pearls, with each pearl healing ...": the means, not what follows.
    re.compile(r"\b((?:by|through)\s+[\w-]+ing\b[^.;]*?)(?=,\s+(?:with|which|while|each|but|so|after|before|making|"
               r"causing)\b|[.;]|$)", re.IGNORECASE),
    # ("Depending on ..." opens no means; "... cannot remove", "it also either produces" say no means.)
    re.compile(r"^\s*((?!(?:Depending|According|Including|Regarding|Following|During|Excluding)\b)[A-Z]\w+ing\b"
               r"[^,;.]*?(?<!\bnot)(?<!\bcannot)(?<!\beither)(?<!\bit)(?<!\bthey)(?<!\balso))\s+"
               r"(?:has|have|is|are|will|can|makes?|gives?|causes?|activates?|triggers?|lets?|allows?|starts?|"
               r"puts?|turns?|removes?|cures?|summons?|creates?|produces?|results? in)\b"),
    # "using shears", "with raw fish", "using pearls, dust or moss" (a list stays whole).
    re.compile(r"\b((?:using|with)\s+(?:a |an |the )?[\w'-]+(?: [\w'-]+)*?"
               r"(?:(?:,\s*[\w'-]+(?: [\w'-]+){0,3}?)*,?\s+(?:or|and)\s+[\w'-]+(?: [\w'-]+){0,3}?)?)"
               r"(?=[,.;]|\s+\(|\s+(?:to|and|or|while|when)\b|$)", re.IGNORECASE),
)
# What something causes: the verb that opens the answer to "what happens if ...".
CONSEQUENCE_VERB = re.compile(r"\b(caus(?:es|ed|ing)?|makes?|made|turns?|transforms?|becomes?|converts?|switch(?:es)?|"
                              r"changes?|explodes?|dies|kills?|gives?|inflicts?|results? in|leads? to|sets? fire|"
                              r"spawns?|summons?|drops?|breaks?|destroys?|deals?|heals?|removes?|grows?)\b",
                              re.IGNORECASE)
LEADING_ADVERB = re.compile(r"\b\w+ly\s+$", re.IGNORECASE)
# A list of names: "glimmers and lake cats", "A, B or C" (each item one to three words, none a function word).
_LIST_STOP = (r"a|an|the|of|in|on|at|to|for|from|with|by|and|or|is|are|was|were|be|been|can|could|will|would|may|"
              r"that|which|who|it|its|they|their|this|these|those|either|both|also|only|not|no|such|as|if|when|"
              r"have|has|had|do|does|than|then|some|any|all|each|every|other")
_LIST_ITEM = rf"(?:(?!(?:{_LIST_STOP})\b)[A-Za-z][\w'-]*)(?:\s+(?!(?:{_LIST_STOP})\b)[A-Za-z][\w'-]*){{0,2}}"
LIST_PHRASE = re.compile(rf"\b{_LIST_ITEM}(?:,\s+{_LIST_ITEM})*,?\s+(?:and|or)\s+{_LIST_ITEM}", re.IGNORECASE)
EXPERIENCE = re.compile(r"\bexperience\b", re.IGNORECASE)
DROP_CONDITION = re.compile(r"[,;]\s+(?!(and\s+|or\s+)?\d)")
# What a sentence says about whether: a negation (the wiki's usual answer to "can X...?", "do X...?"),
# and also a limit, a necessity or an ability (a sentence with those is no surer an answer: they are
# everywhere, so only a negation counts as the kind).
NEGATION = (r"cannot|can't|can not|not|never|no|none|neither|nor|unable|impossible|indefinitely|"
            r"un\w+able|without")
NEGATION_WORD = re.compile(rf"\b({NEGATION})\b", re.IGNORECASE)
POLARITY_WORD = re.compile(rf"\b({NEGATION}|only|always|must|requires?|can|may)\b", re.IGNORECASE)
# Where the clause that holds a polarity word begins: after a comma, a semicolon, a bracket, or a
# conjunction ("... slowly, but they cannot swim", "... the lake that no glimmer leaves").
CLAUSE_START = re.compile(r"[,;]\s+|\(\s*|\b(?:and|but|that|which|so|because|while|although|though)\s+",
                          re.IGNORECASE)
# Where what a thing does begins in a sentence about it: "... used to LOCATE strongholds", "a block
# that GIVES light to ...", "a charm worn on a boot, SPEEDING UP the wearer ...".
_USED_TO = r"\bused (?:\w+ly )?(?:to|for)\s+"
USED_TO = re.compile(_USED_TO, re.IGNORECASE)
PURPOSE_PARTICIPLE = re.compile(PARTICIPLE_CLAUSE, re.IGNORECASE)
PURPOSE_START = re.compile(_USED_TO + r"|\b(?:that|which)\s+(?!(?:is|are|was|were|the|a|an|it|its|they|their)\b)|"
                           + PARTICIPLE_CLAUSE, re.IGNORECASE)
# Words that only say a question is a recipe question: every sentence about the block "makes" something.
RECIPE_VERBS = frozenset({"make", "craft", "build", "creat", "get"})
DROP_WORDS = frozenset({"drop", "loot"})
# A drop table's row for the roll that drops nothing.
NO_DROP = frozenset({"nothing", "none", "empty"})


def is_no_drop(item: str) -> bool:
    return item.strip().casefold() in NO_DROP


# ... and the words a sentence says such a measure in ("every five to ten minutes" for "how often").
_CHANCE_UNITS = re.compile(r"%|\bchance\b|\b1 in \d|\d\s?[\u2044/]\s?\d", re.IGNORECASE)
MEASURE_UNITS = {
    "long": re.compile(r"\b(seconds?|minutes?|hours?|days?|nights?|ticks?)\b|\d:\d\d", re.IGNORECASE),
    "often": re.compile(r"\b(every|each|per|once|twice|times a)\b", re.IGNORECASE),
    "fast": re.compile(r"\b(blocks? per|per second|times (as )?(fast|quick)|twice|half|%)", re.IGNORECASE),
    "far": re.compile(r"\bblocks?\b", re.IGNORECASE),
    "y": re.compile(r"\by\s?=\s?-?\d|\by[ -]?levels?\b|\blevels? -?\d|\blayers?\b|\baltitudes?\b", re.IGNORECASE),
    "rare": _CHANCE_UNITS, "chance": _CHANCE_UNITS,
}


def measure_units(question: str) -> re.Pattern | None:
    """The words a sentence gives the measure a question asks for in ("minutes" for "how long")."""
    measure = asked_measure(question)
    return MEASURE_UNITS.get(measure) if measure else None



def query_terms(analyzer: TermAnalyzer, question: str, answer_kind: str | None) -> list[str]:
    """The question's content stems; a recipe question's "make"/"craft" says only that it asks for a
    recipe, and the "long" of "how long" only which measure.

    Only the first such verb goes: in "how do i make a crafting table?" the "craft" of the thing asked
    about must stay, or every "table" would match.
    """
    query = analyzer.terms(question)
    measure = how_measure(question)
    if measure is not None and len(query) > 1:
        word = analyzer.terms(measure)
        if word and word[0] in query:
            query.remove(word[0])
    if answer_kind == DROPS and set(query) - DROP_WORDS:
        # "what loot do glimmers drop": the section says drops; a line about looting is no answer.
        query = [term for term in query if term not in DROP_WORDS]
    if answer_kind == RECIPE:
        verb = next((i for i, term in enumerate(query) if term in RECIPE_VERBS), None)
        if verb is not None and len(query) > 1:
            query = query[:verb] + query[verb + 1:]
    return query


def holds_answer_kind(kind: str | None, sentence: str) -> bool:
    """Whether the sentence holds a phrase of the answer kind the question asks for."""
    if kind == QUANTITY:
        return re.search(NUMBER, sentence, re.IGNORECASE) is not None
    if kind == PLACE:
        return PLACE_WORD.search(sentence) is not None
    if kind == RECIPE:
        return RECIPE_WORD.search(sentence) is not None and COUNT.search(sentence) is not None
    if kind == TOOL:
        return TOOL_WORD.search(sentence) is not None
    if kind == METHOD:
        return any(pattern.search(sentence) for pattern in METHOD_PHRASES)
    if kind == YES_NO:
        return NEGATION_WORD.search(sentence) is not None
    if kind == PURPOSE:
        return PURPOSE_START.search(sentence) is not None
    if kind == CONSEQUENCE:
        return CONSEQUENCE_VERB.search(sentence) is not None
    if kind == WHICH:
        return LIST_PHRASE.search(sentence) is not None
    if kind == DROPS:
        # "What do X drop" asks for items: experience is a drop only when asked for (QUANTITY, "xp").
        if EXPERIENCE.search(sentence):
            return False
        return DROP_ITEM.match(sentence) is not None or DROP_SENTENCE.search(sentence) is not None
    return False



Span = tuple[int, int]


@dataclass(frozen=True)
class _Trim:
    """What trimming a sentence to the phrase of a kind works with (see ``trim_to_answer_kind``)."""

    text: str
    sentence_start: int
    sentence_end: int
    start: int                              # the general trim: text[start:end]
    end: int
    relevance: Callable[[str], int]
    question: str
    units: re.Pattern | None
    counts: Callable[[str], bool]


def trim_to_answer_kind(kind: str | None, text: str, sentence_start: int, sentence_end: int, start: int, end: int,
                        relevance=lambda phrase: 0, question: str = "",
                        units: re.Pattern | None = None, counts=lambda phrase: False) -> Span | None:
    """The phrase of the kind asked for in text[sentence_start:sentence_end], or None to keep [start, end).

    ``start:end`` is the general trim; ``relevance(phrase)`` counts the question's words in a
    phrase (it picks the number about what was asked: "40 health points", not "4 damage"), and
    ``units`` (measure_units) the number in the measure asked for ("Y=40" for "what y level", "5%"
    for "what are the odds"), and ``counts(phrase)`` whether a number phrase counts what a "how
    many" question counts ("8 items" for "how many items"). A number the question itself says
    ("disc 5", "protection 4") is not the answer.
    """
    trim = _TRIMS.get(kind)
    if trim is None:
        return None
    return trim(_Trim(text, sentence_start, sentence_end, start, end, relevance, question, units, counts))


def _trim_quantity(t: _Trim) -> Span | None:
    text, sentence_start, sentence_end = t.text, t.sentence_start, t.sentence_end
    given = set(re.findall(r"\d+", t.question))

    def only_given(phrase: str) -> bool:
        numbers = set(re.findall(r"\d+", phrase))
        return bool(numbers) and numbers <= given

    phrases = [m for m in NUMBER_PHRASE.finditer(text, sentence_start, sentence_end) if not only_given(m.group(0))]
    if not phrases:
        return None

    # The number in the measure asked for, about what was asked, else the first one in the general
    # trim, else the first.
    def in_units(m: re.Match) -> bool:
        near = max(sentence_start, m.start() - 8)   # "Y level 16", "layer -51": the unit may lead
        return t.units is not None and t.units.search(text, near, m.end()) is not None or t.counts(m.group(0))

    best = max(phrases, key=lambda m: (in_units(m), t.relevance(_around(text, m, sentence_start, sentence_end)),
                                       t.start <= m.start() < t.end, -m.start()))
    return strip_span(text, best.start(), clause_end(text, best.start(), best.end()))


def _trim_place(t: _Trim) -> Span | None:
    if PLACE_WORD.match(t.text, t.start):
        return None  # the general trim already starts at the place
    match = PLACE_WORD.search(t.text, t.start, t.end) or PLACE_WORD.search(t.text, t.sentence_start, t.sentence_end)
    return None if match is None else (match.start(), clause_end(t.text, match.start(), t.sentence_end))


def _trim_recipe(t: _Trim) -> Span | None:
    made = RECIPE_WORD.search(t.text, t.sentence_start, t.sentence_end)
    source = RECIPE_START.search(t.text, made.end(), t.sentence_end) if made else None
    return None if source is None else _without_means_word(t.text, source.start(),
                                                          clause_end(t.text, source.start(), t.sentence_end))


def _trim_drops(t: _Trim) -> Span | None:
    if not DROP_ITEM.match(t.text, t.sentence_start):
        return None
    # "0-1 blaze rod, only when killed by a player": the items, not the conditions after them.
    match = DROP_CONDITION.search(t.text, t.sentence_start, t.end)
    return None if match is None else (t.start, match.start())


def _trim_tool(t: _Trim) -> Span | None:
    match = TOOL_WORD.search(t.text, t.sentence_start, t.sentence_end)
    return None if match is None else (match.start(1), match.end(1))


def _trim_purpose(t: _Trim) -> Span | None:
    # "used to ..." says the purpose wherever it is; the other openings after the general trim's start.
    text = t.text
    match = (USED_TO.search(text, t.sentence_start, t.sentence_end) or PURPOSE_START.search(text, t.start, t.end)
             or PURPOSE_PARTICIPLE.search(text, t.start, t.sentence_end))   # "..., increasing the damage"
    return None if match is None else strip_span(text, match.end(), clause_end(text, match.end(), t.sentence_end))


def _trim_yes_no(t: _Trim) -> Span | None:
    # The clause with the polarity word nearest to what was asked ("... but they cannot swim").
    text, sentence_start, sentence_end = t.text, t.sentence_start, t.sentence_end
    clauses = []
    for match in POLARITY_WORD.finditer(text, sentence_start, sentence_end):
        opens = [m.end() for m in CLAUSE_START.finditer(text, sentence_start, match.start())]
        begin = opens[-1] if opens else sentence_start
        stop = clause_end(text, match.start(), sentence_end)
        aside = text.find(" (", match.end(), stop)   # "they cannot swim (they sink, ...)"
        clauses.append((begin, aside if aside >= 0 else stop))
    if not clauses:
        return None
    best = max(clauses, key=lambda c: (t.relevance(text[c[0]:c[1]]), -c[0]))
    return strip_span(text, *best) if t.relevance(text[best[0]:best[1]]) else None


def _trim_consequence(t: _Trim) -> Span | None:
    # The first thing caused after what was asked ("... in the lake causes it to sink").
    text = t.text
    match = (CONSEQUENCE_VERB.search(text, t.start, t.end)
             or CONSEQUENCE_VERB.search(text, t.sentence_start, t.sentence_end))
    if match is None:
        return None
    adverb = LEADING_ADVERB.search(text, t.sentence_start, match.start())   # "instantly kills it"
    begin = adverb.start() if adverb else match.start()
    return strip_span(text, begin, clause_end(text, match.start(), t.sentence_end))


def _trim_which(t: _Trim) -> Span | None:
    match = LIST_PHRASE.search(t.text, t.start, t.end) or LIST_PHRASE.search(t.text, t.sentence_start, t.sentence_end)
    return None if match is None else strip_span(t.text, match.start(), match.end())


def _trim_method(t: _Trim) -> Span | None:
    sentence = t.text[t.sentence_start:t.sentence_end]   # "^" of a pattern is the sentence's start
    for pattern in METHOD_PHRASES:
        match = pattern.search(sentence)
        if match:
            begin = t.sentence_start + match.start(1)
            return _without_means_word(t.text, begin, clause_end(t.text, begin, t.sentence_start + match.end(1)))
    return None


_TRIMS: dict[str, Callable[[_Trim], Span | None]] = {
    QUANTITY: _trim_quantity, PLACE: _trim_place, RECIPE: _trim_recipe, DROPS: _trim_drops, TOOL: _trim_tool,
    PURPOSE: _trim_purpose, YES_NO: _trim_yes_no, CONSEQUENCE: _trim_consequence, WHICH: _trim_which,
    METHOD: _trim_method,
}


# The word that only says "this is the means": "using shears" answers "what do I tame it with" as "shears".
MEANS_WORD = re.compile(r"(?:using|with|by|through|from|out of)\s+(?=\S)", re.IGNORECASE)


def _without_means_word(text: str, start: int, end: int) -> tuple[int, int]:
    """The means itself: "by adding pearls" -> "adding pearls", "from 4 planks" -> "4 planks"."""
    start, end = strip_span(text, start, end)
    word = MEANS_WORD.match(text, start, end)
    return strip_span(text, word.end(), end) if word and word.end() < end else (start, end)


def _around(text: str, match: re.Match, lo: int, hi: int, margin: int = 25) -> str:
    """A number phrase with a little context on both sides ("light level of 13", "health: 16")."""
    return text[max(lo, match.start() - margin):min(hi, match.end() + margin)]
