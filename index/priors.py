"""Which page kinds a question asks for.

Retrieval plays down tutorials, April Fools features, removed ("(old)") features, spin-off games
and version pages (settings.RetrievalSettings.page_kind_prior), because a plain question ("what do cows
drop?") is about the current game. A question that names such a kind ("tutorial", "april fools",
"in dungeons", "java edition 1.20", "what did old villagers do") gets that kind at full weight.
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


def page_kind_weight(page_kind: str, asked: frozenset[str], prior: dict[str, float]) -> float:
    """The multiplier of a page's fused score: 1 for articles and for kinds the question asks for."""
    if page_kind in asked:
        return 1.0
    return prior.get(page_kind, 1.0)
