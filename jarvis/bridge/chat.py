"""The chat contract: which messages are questions to Jarvis (:class:`Question`), and how replies look.

- A message is for Jarvis when it addresses Jarvis the way players write (:func:`addressed_question`):
  it starts with ``jarvis`` (any case), followed by the end of the message, ``,`` ``:`` ``?`` ``!`` or a
  space ("jarvis, what ...", "jarvis? what ..."), or with ``@jarvis``, or with a greeting and the name
  ("hey jarvis ...", "ok jarvis, ..."); or it ends with the name after a comma ("what do pigs drop,
  jarvis?"): a question (a "?" or a question word) or feedback ("thanks, jarvis"). The rest is the question.
  A message that only mentions Jarvis is not one: "ask jarvis", "i think jarvis is cool", and "jarvis is
  so cool" / "jarvis said ..." (the name, a word saying something about it, and no "?").
- A reply is one or more chat lines (at most ``max_lines``, 2 by default), each at most ``max_line``
  characters, each starting with ``[Jarvis] `` (the player bot's own messages need no prefix:
  :class:`ReplyStyle`); it addresses the player by name when the server told us the name, and
  names the source page. An answer's reply is ``compose_reply`` (jarvis/replies.py:
  the answer in its sentence when Jarvis is sure, "not sure" and the page when it is not), composed
  for the room the player's name leaves (``answer_lines``). All text goes through :func:`jarvis.bridge.wire.chat_safe`.
"""
from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jarvis.bridge.wire import chat_safe
from jarvis.replies import compose_reply, shorten

if TYPE_CHECKING:
    from jarvis.answer import Answer   # one answer type: in process or through the pool (jarvis.network)

PREFIX = "[Jarvis] "
LINE_CUT = " …"   # ends a chat line cut short (jarvis.replies.ELLIPSIS, "…", marks a quote cut inside a sentence)
MAX_TITLE_CHARS = 80
MAX_ECHO_CHARS = 60
HELP = 'ask me about Minecraft, e.g. "jarvis, what do cows drop?"'
MAX_TRACKED_PLAYERS = 1024    # players remembered (rate, names, last answers) before old entries are pruned

# How players call Jarvis at a message's start: "jarvis, ...", "jarvis? ...", "@jarvis ...", "hey jarvis ...".
_GREETING = r"(?:hey|hi|hello|yo|oi|ok|okay|hiya|heya|ey|ay|sup|dear)"
_ADDRESSED = re.compile(rf"\s*(?:{_GREETING}[\s,!.]+)?(?P<at>@)?jarvis(?P<sep>$|[\s,:;?!.]+)(?P<rest>.*)",
                        re.IGNORECASE | re.DOTALL)
# ... and at its end, after a comma: "what do pigs drop, jarvis?"
_ADDRESSED_LAST = re.compile(r"(?P<rest>.*?\S)\s*,\s*@?jarvis\s*(?P<end>[?!.]*)\s*", re.IGNORECASE | re.DOTALL)
_THANKS_LAST = re.compile(r"(?P<rest>.*?\S)\s+@?jarvis\s*[!.]*\s*", re.IGNORECASE | re.DOTALL)
# "jarvis is so cool", "jarvis said cows drop beef": the name, then a word that says something about Jarvis.
_ABOUT_JARVIS = re.compile(
    r"(?:is|was|isn'?t|wasn'?t|said|says|sucks|rocks|knows|thinks|told|doesn'?t|didn'?t|can'?t|won'?t|"
    r"just|always|never|seems|looks|got|has|had|'s)\b", re.IGNORECASE)
_QUESTION_START = re.compile(
    r"(?:what|whats|what's|how|hows|how's|where|wheres|where's|when|why|who|which|can|could|do|does|did|is|are|"
    r"will|would|should|any|anyone)\b", re.IGNORECASE)
# "jarvis, wrong" / "jarvis thanks" right after an answer mark it in the question log.
_FEEDBACK = {"wrong": re.compile(r"(that'?s |that is |no,? )?(wrong|incorrect)", re.IGNORECASE),
             "thanks": re.compile(r"(thanks?( you)?|thx|ty)", re.IGNORECASE)}


@dataclass(frozen=True)
class Question:
    """A question addressed to Jarvis, as the bridge read it from the chat."""

    player_id: int
    player: str | None      # the name, when the server told it
    text: str
    seen_at: float          # time.monotonic() when the poller read it
    private: bool = False   # whispered to the player bot
    key: int | str = 0      # one player across polls: the bot's name (case-folded) or the plugin's entity id


@dataclass(frozen=True)
class ReplyStyle:
    """How a transport's chat lines look (``TransportKind.style``): the plugin API broadcasts ``[Jarvis] Steve: …``
    lines of 200 characters; the player bot's messages carry its name already (``<Jarvis> Steve: …``) and
    may be 256 characters, a whisper's ``/msg NAME `` included (``TransportKind.whisper_overhead``)."""

    prefix: str = PREFIX
    max_line: int = 200
    max_lines: int = 2                  # the chat contract: at most 2 lines an answer


def addressed_question(message: str) -> str | None:
    """The question in a message addressed to Jarvis ("" when empty); None when not addressed (see the module
    docstring for how players address it)."""
    match = _ADDRESSED.fullmatch(message)
    if match is not None:
        rest = match.group("rest").strip()
        vocative = match.group("at") or match.group("sep").strip() or not rest
        if vocative or not _ABOUT_JARVIS.match(rest) or rest.endswith("?"):
            return rest
        return None
    match = _ADDRESSED_LAST.fullmatch(message)
    if match is not None:
        rest = match.group("rest").strip()
        if "?" in match.group("end"):
            return rest.rstrip("?!. ") + "?"
        if _QUESTION_START.match(rest) or feedback_kind(rest):
            return rest
        return None
    match = _THANKS_LAST.fullmatch(message)          # "thanks jarvis", "wrong jarvis": feedback, no comma needed
    if match is not None and feedback_kind(match.group("rest")):
        return match.group("rest").strip()
    return None


def feedback_kind(question: str) -> str | None:
    """'wrong' or 'thanks' when a message to Jarvis is feedback on its last answer, else None."""
    text = question.strip().rstrip("!.").strip()
    for kind, pattern in _FEEDBACK.items():
        if pattern.fullmatch(text):
            return kind
    return None


def reply_lines(text: str, *, player: str | None = None, source: str | None = None,
                max_line: int = 200, max_lines: int = 3, prefix: str = PREFIX) -> list[str]:
    """``text`` as chat lines: ``[Jarvis] <player>: <text> (source: <source>)``, wrapped and capped."""
    width = max_line - len(prefix)
    head = f"{chat_safe(player)}: " if player else ""
    tail = f" (source: {_shorten(chat_safe(source), MAX_TITLE_CHARS)})" if source else ""
    body = chat_safe(text)
    lines = _wrap(head + body + tail, width)
    budget = max_lines * width - len(head) - len(tail)
    while len(lines) > max_lines and budget > len(LINE_CUT):
        budget -= max(8, budget // 10)
        lines = _wrap(head + _shorten(body, budget) + tail, width)
    return [prefix + line for line in lines[:max_lines]]


def answer_lines(answer: Answer, *, player: str | None, max_line: int = 200, max_lines: int = 2,
                 prefix: str = PREFIX) -> list[str]:
    """The reply to a question (``compose_reply``) as chat lines: the longest composition that fits
    ``max_lines`` whole, so that the source page is never cut off."""
    head = f"{chat_safe(player)}: " if player else ""
    width = max_line - len(prefix)
    budget = max_lines * width - len(head)
    while True:
        lines = _wrap(head + chat_safe(compose_reply(answer, budget)), width)
        if len(lines) <= max_lines or budget <= width // 2:
            return [prefix + line for line in lines[:max_lines]]
        budget -= max(8, (len(lines) - max_lines) * width // 2)


def echo(question: str) -> str:
    """A question quoted back in a notice, shortened."""
    return '"' + _shorten(chat_safe(question), MAX_ECHO_CHARS) + '"'


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width=width, break_long_words=True, break_on_hyphens=False) or [""]


def _shorten(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, on a word boundary where there is one (replies' shortener,
    with the chat's ellipsis)."""
    return shorten(text, limit, LINE_CUT)
