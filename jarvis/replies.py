"""What a player reads: the answer in its sentence when Jarvis is sure, an honest "not sure" with the page
to read when it is not, "I don't know" when no page matched. Every text made of an ``Answer`` (plain data,
jarvis/answer.py) is made here, or from ``compose_reply`` by the chat's lines (jarvis/bridge/chat.py).

    stated:   0-2 Leather and 1-3 Raw beef — "When killed, an adult cow drops 0-2 Leather and 1-3 Raw beef" (source: Cow)
    yes/no:   no — "Beds explode when used in the Nether." (source: Bed)
    unsure:   not sure — the Cow page says: "When killed, an adult cow drops 0-2 Leather ..." http://…/w/Cow
              (a title with its own article keeps it alone: "not sure — The Nether page says: …")
    unknown:  I don't know.

``compose_reply`` fits a reply into a character budget: the quoted sentence is cut around the answer
first (with "…"), then left out, then the answer itself is shortened; the source page is always named.
The text is plain (no line breaks, no control characters: the bridge's chat_safe runs over it too).

``describe`` is what `jarvis ask` prints (the reply, then the answer, its page and how sure), ``answer_json``
what `jarvis ask` prints as JSON.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jarvis.crawler.guide import GUIDE_SITE

if TYPE_CHECKING:
    from jarvis.answer import Answer

# Two chat lines of 200 characters, less "[Jarvis] " twice and "<16-character name>: ": a reply of this
# many characters always fits, wrapped on word boundaries (the bridge checks and shortens further).
REPLY_BUDGET = 340
NOT_SURE = "not sure"
DONT_KNOW = "I don't know."
ELLIPSIS = "…"
DASH = " — "
MIN_QUOTE = 40          # a sentence cut shorter than this says too little to quote
UNTITLED = "untitled"
MAX_TITLE = 80
_OWN_ARTICLE = re.compile(r"the\b", re.IGNORECASE)    # "The Nether", "The /home command"


def compose_reply(answer: Answer, budget: int = REPLY_BUDGET) -> str:
    """The reply text for ``answer`` in at most ``budget`` characters (see the module docstring)."""
    text, sentence, title = _clean(answer.text), _clean(answer.sentence), shorten(_clean(answer.title), MAX_TITLE)
    if not answer.title:
        return DONT_KNOW
    title = title or UNTITLED   # a title of nothing printable still names a page
    site = _clean(named_site(answer))
    if answer.abstained or not text:
        url = _clean(answer.url)
        tail = f" {url}" if url and len(url) <= budget // 3 else ""
        quote = sentence or text
        page = _page(title) + (f" ({site})" if site else "")
        head = f"{NOT_SURE} — {page} says: "
        room = budget - len(head) - len(tail) - 2
        if quote and room >= MIN_QUOTE:
            return f'{head}"{_cut_around(quote, text, room)}"{tail}'
        return shorten(f"{NOT_SURE} — see {page}{tail or '.'}", budget)
    source = f" (source: {title}, {site})" if site else f" (source: {title})"
    verdict = answer.verdict
    if verdict:     # a yes/no question: the verdict, then the sentence that settles it
        quote = sentence or text
        room = budget - len(verdict) - len(DASH) - len(source) - 2
        return f'{verdict}{DASH}"{_cut_around(quote, text, room)}"{source}' if room >= MIN_QUOTE \
            else shorten(verdict + DASH + quote, budget - len(source)) + source
    if sentence and not _says_only(sentence, text):
        room = budget - len(text) - len(DASH) - len(source) - 2
        if room >= MIN_QUOTE:
            return f'{text}{DASH}"{_cut_around(sentence, text, room)}"{source}'
    return shorten(text, budget - len(source)) + source


def describe(answer: Answer) -> str:
    """What `jarvis ask` prints: the reply, then the answer, its page and how sure Jarvis is."""
    lines = [compose_reply(answer)]
    if answer.found:
        lines.append(f"  answer: {answer.text}" + (" (not stated: below the answer threshold)" if answer.abstained
                                                    else ""))
    if answer.title:
        lines.append(f"  page: {page_source(answer)}" + (f" ({answer.url})" if answer.url else ""))
    else:
        read = ", ".join(answer.pages) if answer.pages else "no page matched"
        lines.append(f"  pages read: {read}")
    timing = f"{answer.seconds:.2f} s" + (", cached" if answer.cached else "")
    lines.append(f"  confidence: {answer.confidence:.2f}, reader: {answer.reader}, {timing}")
    return "\n".join(lines)


def answer_json(answer: Answer) -> dict:
    """What `jarvis ask` prints as JSON (the keys promised since v0.3; ``reply`` is ``compose_reply``)."""
    return {"answer": answer.text, "score": round(answer.score, 4), "title": answer.title, "reader": answer.reader,
            "seconds": round(answer.seconds, 3), "found": answer.found, "url": answer.url,
            "pages": list(answer.pages), "cached": answer.cached, "confidence": round(answer.confidence, 4),
            "abstained": answer.abstained, "reply": compose_reply(answer), "sentence": answer.sentence,
            "site": answer.site, "rule": answer.rule,
            "threshold": None if answer.threshold is None else round(answer.threshold, 4), "verdict": answer.verdict}


def named_site(answer: Answer) -> str:
    """The site a reply names beside the page: the page's wiki when the index holds several sites, and the
    server's guide always (players should know an answer is the server's own word); "" otherwise."""
    return answer.site if answer.site and (answer.several_sites or answer.site == GUIDE_SITE) else ""


def page_source(answer: Answer) -> str:
    """The source as `jarvis ask` names it, by the replies' rule (``named_site``): "Cow", "Cow, Minecraft
    Wiki", "Land claims, server guide"; "" when no page matched."""
    if not answer.title:
        return ""
    site = named_site(answer)
    return f"{answer.title}, {site}" if site else answer.title


def _page(title: str) -> str:
    """The page as a reply names it: "the Cow page"; a title with its own article keeps it alone
    ("The Nether page", never "the The Nether page")."""
    return f"{title} page" if _OWN_ARTICLE.match(title) else f"the {title} page"


def _says_only(sentence: str, answer: str) -> bool:
    """The sentence adds nothing to the answer (it is the answer, or nearly)."""
    return len(answer) >= 0.8 * len(sentence) or sentence.casefold() == answer.casefold()


def _cut_around(sentence: str, answer: str, room: int) -> str:
    """The sentence in at most ``room`` characters, keeping the answer in view (cut on word boundaries)."""
    if len(sentence) <= room:
        return sentence
    at = sentence.casefold().find(answer.casefold()) if answer else -1
    if at < 0:
        return shorten(sentence, room)
    # Centre the answer, then widen to whole words; an ellipsis marks each side that was cut.
    slack = max(0, room - len(answer) - 2 * len(ELLIPSIS))
    begin = max(0, at - slack // 2)
    end = min(len(sentence), begin + room - 2 * len(ELLIPSIS))
    begin = max(0, min(begin, end - (room - 2 * len(ELLIPSIS))))
    if begin > 0:
        space = sentence.find(" ", begin, at + 1)
        begin = space + 1 if space >= 0 else begin
    if end < len(sentence):
        space = sentence.rfind(" ", at + len(answer), end)
        end = space if space >= 0 else end
    middle = sentence[begin:end].strip()
    return (ELLIPSIS if begin > 0 else "") + middle + (ELLIPSIS if end < len(sentence) else "")


def shorten(text: str, limit: int, ellipsis: str = ELLIPSIS) -> str:
    """``text`` in at most ``limit`` characters, cut on a word boundary (in its second half) and ended with
    ``ellipsis``; no room for the ellipsis: the first ``limit`` characters. The one shortener of replies
    and chat lines."""
    if len(text) <= limit:
        return text
    if limit <= len(ellipsis):
        return text[:max(0, limit)]
    cut = text[:limit - len(ellipsis)]
    if " " in cut[len(cut) // 2:]:
        cut = cut[:cut.rindex(" ")]
    return cut.rstrip() + ellipsis


_SPACE = re.compile(r"\s+")
_FORMATTING_CODE = re.compile("\u00a7.?", re.DOTALL)   # Minecraft's § and its code character: the chat drops them


def _clean(text: str | None) -> str:
    """One line of plain text: formatting codes and control characters out, whitespace collapsed."""
    if not text:
        return ""
    text = _FORMATTING_CODE.sub("", text)
    return _SPACE.sub(" ", "".join(c if c.isprintable() else " " for c in text)).strip()
