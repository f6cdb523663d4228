"""Which page kinds a question asks for.

Retrieval plays down tutorials, April Fools features, removed ("(old)") features, spin-off games
and version pages (settings.RetrievalSettings.page_kind_prior), because a plain question ("what do cows
drop?") is about the current game. A question that names such a kind ("tutorial", "april fools",
"in dungeons", "java edition 1.20", "what did old villagers do") gets that kind at full weight, and so does
a page whose title of two words or more the question names ("nether reactor height range" names the
removed Nether Reactor; "kelp farming" names Tutorials/Kelp farming).
"""
from __future__ import annotations

import re

_ASKED = {
    "tutorial": re.compile(r"\b(tutorials?|guides?|farms?|farming|designs?|how (do|can|to) (i |you )?build)\b"),
    "joke": re.compile(r"\b(april fools?|joke|jokes|potato (update|dimension|snapshot)|\d\dw\d\d[a-z]*potato\w*|"
                       r"poisonous potato update)\b"),
    "removed": re.compile(r"\b(old|removed|used to|no longer|anymore|previously|legacy|unused|classic)\b"),
    "spinoff": re.compile(r"\b(dungeons|minecraft earth|earth|legends|story mode|education( edition)?|edu)\b"),
    "version": re.compile(r"\b((java|bedrock|pocket|education|console|legacy console) edition \d[\w.]*|"
                          r"\d+\.\d+(\.\d+)?|\d\dw\d\d[a-z]?|pre-?release|snapshot|changelog|what changed|"
                          r"(alpha|beta|classic|indev|infdev) \d[\w.]*)\b"),
}


def asked_page_kinds(question: str) -> frozenset[str]:
    """The non-article page kinds the question itself names."""
    text = " ".join(question.casefold().split())
    return frozenset(page_kind for page_kind, pattern in _ASKED.items() if pattern.search(text))


def question_terms(question: str) -> tuple[str, ...]:
    """The question's words as names_page compares them: lower case, a plural's "s" dropped."""
    return tuple(_singular(word) for word in _WORD.findall(question.casefold()))


def title_terms(title: str) -> tuple[str, ...]:
    """A page title's words as names_page compares them: a tutorial's "Tutorials/" and a "(feature)"-like
    qualifier aside, lower case, a plural's "s" dropped."""
    return question_terms(_QUALIFIER.sub(" ", title.rsplit("/", 1)[-1]))


def names_page(terms: tuple[str, ...], title: tuple[str, ...]) -> bool:
    """Whether the question's terms hold a page's title terms (``title_terms``), two words or more, as a
    phrase. One-word titles are left out: "rose" or "gear" name old features and today's things alike."""
    if len(title) < 2 or len(title) > len(terms):
        return False
    return any(terms[i:i + len(title)] == title for i in range(len(terms) - len(title) + 1))


def page_kind_weight(page_kind: str, asked: frozenset[str], prior: dict[str, float], named: bool = False) -> float:
    """The multiplier of a page's fused score: its kind's prior, but at least 1 for a kind the question asks
    for and for a page the question names."""
    weight = prior.get(page_kind, 1.0)
    return max(weight, 1.0) if named or page_kind in asked else weight


_WORD = re.compile(r"[a-z0-9]+")
_QUALIFIER = re.compile(r"\([^)]*\)")


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
