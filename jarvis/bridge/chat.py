"""The chat contract: which messages are questions to Jarvis, and how replies look.

- A message is for Jarvis when it starts with ``jarvis`` (any case), followed by the end of
  the message, ``,`` ``:`` or a space; the rest is the question.
- A reply is one or more chat lines, each at most ``max_line`` characters, each starting with
  ``[Jarvis] ``; it addresses the player by name when the server told us the name, and names
  the source page. Long replies are split on word boundaries, and shortened (ending in ``…``)
  beyond ``max_lines`` lines. All text goes through :func:`jarvis.bridge.wire.chat_safe`.
"""
from __future__ import annotations

import re
import textwrap
from typing import Protocol, Sequence

from jarvis.bridge.wire import chat_safe

PREFIX = "[Jarvis] "
ELLIPSIS = " …"
MAX_TITLE_CHARS = 80
MAX_ECHO_CHARS = 60
HELP = 'ask me about Minecraft, e.g. "jarvis, what do cows drop?"'

_ADDRESSED = re.compile(r"\s*jarvis(?:$|[\s,:])[\s,:]*(.*)", re.IGNORECASE | re.DOTALL)
# "jarvis, wrong" / "jarvis thanks" right after an answer mark it in the question log.
_FEEDBACK = {"wrong": re.compile(r"(that'?s |that is |no,? )?(wrong|incorrect)", re.IGNORECASE),
             "thanks": re.compile(r"(thanks?( you)?|thx|ty)", re.IGNORECASE)}


class AnswerLike(Protocol):
    """What the bridge needs of an answer (jarvis.pipeline.Answer fits)."""

    text: str
    title: str
    pages: Sequence[str]

    @property
    def found(self) -> bool: ...


def addressed_question(message: str) -> str | None:
    """The question in a message addressed to Jarvis ("" when empty); None when not addressed."""
    match = _ADDRESSED.match(message)
    return match.group(1).strip() if match else None


def feedback_kind(question: str) -> str | None:
    """'wrong' or 'thanks' when a message to Jarvis is feedback on its last answer, else None."""
    text = question.strip().rstrip("!.").strip()
    for kind, pattern in _FEEDBACK.items():
        if pattern.fullmatch(text):
            return kind
    return None


def reply_lines(text: str, *, player: str | None = None, source: str | None = None,
                max_line: int = 200, max_lines: int = 3) -> list[str]:
    """``text`` as chat lines: ``[Jarvis] <player>: <text> (source: <source>)``, wrapped and capped."""
    width = max_line - len(PREFIX)
    head = f"{chat_safe(player)}: " if player else ""
    tail = f" (source: {_shorten(chat_safe(source), MAX_TITLE_CHARS)})" if source else ""
    body = chat_safe(text)
    lines = _wrap(head + body + tail, width)
    budget = max_lines * width - len(head) - len(tail)
    while len(lines) > max_lines and budget > len(ELLIPSIS):
        budget -= max(8, budget // 10)
        lines = _wrap(head + _shorten(body, budget) + tail, width)
    return [PREFIX + line for line in lines[:max_lines]]


def answer_lines(answer: AnswerLike, *, player: str | None, max_line: int = 200, max_lines: int = 3) -> list[str]:
    """The reply to a question: the answer and its source page, or "I don't know" and the pages read."""
    if answer.found:
        # The source names the wiki too when the index holds several (pipeline.Answer.source).
        return reply_lines(answer.text, player=player, source=getattr(answer, "source", None) or answer.title,
                           max_line=max_line, max_lines=max_lines)
    pages = list(getattr(answer, "pages", ()) or ())
    read = f"(pages read: {', '.join(pages)})" if pages else "(no page matched)"
    return reply_lines(f"I don't know. {read}", player=player, max_line=max_line, max_lines=max_lines)


def echo(question: str) -> str:
    """A question quoted back in a notice, shortened."""
    return '"' + _shorten(chat_safe(question), MAX_ECHO_CHARS) + '"'


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width=width, break_long_words=True, break_on_hyphens=False) or [""]


def _shorten(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, on a word boundary where there is one."""
    if len(text) <= limit:
        return text
    cut = text[: max(0, limit - len(ELLIPSIS))]
    if " " in cut[len(cut) // 2:]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip() + ELLIPSIS
