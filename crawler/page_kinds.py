"""What a wiki page is (one of crawler.corpus.PAGE_KINDS), from what the wiki shows of it.

``classify_page`` reads the namespace, the title, the categories (where the page shows them), the
lead paragraph and the hatnotes, and decides in this order (the first rule that matches wins):

1. ``disambiguation``: the page is marked so (Disambiguator), or its title says "(disambiguation)";
2. ``tutorial``: "Tutorials/..." or the Tutorial namespace;
3. ``joke``: an April Fools feature: the title says "(April Fools' joke)", a category says April
   Fools, the lead calls it a joke or April Fools', or places it in a joke release
   (24w14potato and its Potato dimension, 23w13a_or_b, 20w14∞, 3D Shareware, 2.0, 15w14a, ...);
4. ``version``: a version or changelog page ("Java Edition 1.20.5", "Bedrock Edition beta ...",
   "Classic 0.0.23a_01", "Pocket Edition v0.16.0 alpha", "Education Edition 1.0.21", a bare
   snapshot id "24w14a"), a "... version history" page, a "versions" category, or a lead that
   says "X is a major/minor update", "the first snapshot/pre-release ...";
5. ``spinoff``: a spin-off game's namespace ("Minecraft Dungeons:..."), a title, category or lead
   that places the page in Minecraft Dungeons, Earth, Legends, Story Mode or Education (the lead
   must name the game as the page's setting, "... in Minecraft Dungeons", not in passing);
6. ``removed``: "(old)" or "/Before ..." (a page of what was before a version) in the title, a
   "Removed ..." or "Unused ..." category, or a lead written in the past tense ("X was a block that ...", "X were ...") or calling it unused/removed/scrapped;
7. ``article`` otherwise.
"""
from __future__ import annotations

import re
from typing import Iterable

from jarvis.crawler.sentences import first_sentence
from jarvis.crawler.settings import JOKE_TERMS, SPIN_OFF_GAMES, SPIN_OFF_NAMESPACES

VERSION_TITLE = re.compile(
    r"^(?:(?:java|bedrock|pocket|education|legacy console|console|xbox 360|xbox one|playstation \d|"
    r"playstation vita|wii u|nintendo switch|new nintendo 3ds|pi|windows 10|china|minecraft education)"
    r" edition\b.*\d|(?:classic|indev|infdev|alpha|beta|pre-classic|survival test)\s+v?\d"
    r"|java edition (?:classic|indev|infdev|alpha|beta|pre-classic)\b"
    r"|\d\dw\d\d[a-z~∞]|v?\d+\.\d+(?:\.\d+)*(?:[ -](?:pre|rc|alpha|beta)\S*)?$)", re.IGNORECASE)
_VERSION_LEAD = re.compile(
    r"^[^.]{0,160}?\b(?:is|was|are|were) (?:an? |the )?(?:(?:upcoming|first|second|third|\w+th|last|final|non-development)"
    r" )*(?:(?:major|minor|hotfix) update\b|(?:update|snapshot|pre-release|release candidate|beta version|"
    r"development versions?|release|build) (?:to|for|of|released)\b|version of (?:java|bedrock|pocket|legacy|"
    r"minecraft|survival test|indev|infdev|classic|alpha|beta|education)\b)", re.IGNORECASE)
_PAST_TENSE_LEAD = re.compile(r"^(?:(?:the|an?)\s+)?[^.]{1,80}?\s(?:was|were)\s(?!(?:added|introduced|"
                              r"released|renamed|first|originally|created|called|known)\b)", re.IGNORECASE)
_PRESENT_TENSE = re.compile(r"\b(?:is|are)\b", re.IGNORECASE)
_NOT_REMOVED_SUBJECT = re.compile(r"\b(?:livestream|event|edition|update|bug|glitch|contest)\b", re.IGNORECASE)
_JOKE_LEAD = re.compile(r"\b(?:april fools?'?(?: day)?|(?<!inside )joke)\b", re.IGNORECASE)
_NON_WORD = re.compile(r"[\W_]+")


def classify_page(title: str, *, namespace: int | None = None, categories: Iterable[str] = (), lead: str = "",
                  hatnotes: Iterable[str] = (), is_disambiguation: bool = False,
                  spin_off_games: tuple[str, ...] = SPIN_OFF_GAMES,
                  spin_off_namespaces: tuple[str, ...] = SPIN_OFF_NAMESPACES) -> str:
    """The page's kind (see the module docstring). ``lead`` is the first paragraph of the lead."""
    categories = [c.casefold() for c in categories]
    hatnotes = [" ".join(h.split()) for h in hatnotes]
    prefix, name = _namespace_of(title)
    folded = " ".join(title.split()).casefold()
    sentence = _first_sentence(lead)

    if is_disambiguation or folded.endswith("(disambiguation)") or any("disambiguation" in c for c in categories):
        return "disambiguation"
    if folded.startswith(("tutorials/", "tutorial:")) or any(c.startswith("tutorial") for c in categories):
        return "tutorial"
    if _is_joke(folded, categories, lead, sentence, hatnotes):
        return "joke"
    if _is_version(name.casefold() if prefix else folded, categories, sentence):
        return "version"
    if _is_spin_off(prefix, folded, categories, sentence, spin_off_games, spin_off_namespaces):
        return "spinoff"
    if _is_removed(folded, categories, sentence):
        return "removed"
    return "article"


def _is_joke(title: str, categories: list[str], lead: str, sentence: str, hatnotes: list[str]) -> bool:
    if "april fools" in title or "joke)" in title:
        return True
    if any("april fools" in c or "joke" in c for c in categories):
        return True
    lead_folded = lead.casefold()
    if _JOKE_LEAD.search(sentence) and not sentence.casefold().startswith(("this is a list", "an easter egg")):
        return True
    if any(term in lead_folded for term in JOKE_TERMS):
        return True
    return any("april fools" in h.casefold() and h.casefold().startswith("this article is about") for h in hatnotes)


def _is_version(title: str, categories: list[str], sentence: str) -> bool:
    if VERSION_TITLE.match(title) or title.endswith(("version history", "development versions")):
        return True
    if any(c.endswith(("versions", "snapshots", "pre-releases")) for c in categories):
        return True
    return _VERSION_LEAD.match(sentence) is not None


def _is_spin_off(prefix: str, title: str, categories: list[str], sentence: str,
                 games: tuple[str, ...], namespaces: tuple[str, ...]) -> bool:
    if prefix and _words(prefix) in {_words(n) for n in namespaces}:
        return True
    names = [_words(game) for game in games]
    labels = [_words(title)] + [_words(c) for c in categories]
    if any(label == name or label.startswith(name + " ") for label in labels for name in names):
        return True
    # The lead places the subject in a spin-off: "... found within the missions of Minecraft Dungeons",
    # "... exclusive to Minecraft Education", "... used in Minecraft Earth".
    words = f" {_words(sentence)} "
    return any(re.search(rf" (?:in|of|to|from|within) (?:the )?{re.escape(name)} ", words) for name in names)


def _is_removed(title: str, categories: list[str], sentence: str) -> bool:
    if title.endswith("(old)") or "/before " in title or any(c.startswith(("removed", "unused")) for c in categories):
        return True
    if not sentence:
        return False
    past = _PAST_TENSE_LEAD.match(sentence)
    if past and not _PRESENT_TENSE.search(sentence[:past.end()]):
        # "X was a livestream / an edition / a major update / a bug": a past event, not a removed feature.
        predicate = " ".join(sentence[past.end():].split()[:5])
        return not _NOT_REMOVED_SUBJECT.search(predicate)
    head = sentence[:120]
    return bool(re.search(r"\b(?:is|are) (?:an? |the )?(?:\w+ )?unused\b", head, re.IGNORECASE)
                or re.search(r"\b(?:has|have) been removed\b", head, re.IGNORECASE))


def _namespace_of(title: str) -> tuple[str, str]:
    """("Minecraft Dungeons", "Battlestaff") for "Minecraft  Dungeons:Battlestaff"; ("", title) without."""
    prefix, colon, rest = title.partition(":")
    if not colon or "/" in prefix:
        return "", title
    return " ".join(prefix.replace("_", " ").split()), rest


def _first_sentence(text: str) -> str:
    """The lead's first sentence, footnote markers out (crawler.sentences, the one splitter)."""
    text = re.sub(r"\[(?:\d+|[a-z]|note \d+|citation needed)\]", "", " ".join(text.split()))
    return first_sentence(text) if text else ""


def _words(text: str) -> str:
    """Case-folded words only: "Minecraft: Story Mode" -> "minecraft story mode"."""
    return _NON_WORD.sub(" ", text.casefold()).strip()
