r"""The Minecraft Pi / RaspberryJuice wire: what comes in (chat events), what goes out (chat lines).

Commands are text lines, ``name(arg,arg,...)\n``; the server reads the name up to the first
``(`` and the arguments up to the line's last character (the closing ``)``).

Incoming: ``events.chat.posts()`` answers ``id,message|id,message|...``, in one of two formats:

- ``upstream`` (zhuowei/RaspberryJuice, ``RemoteSession.getChatPosts``) and ``v2``
  (sakebomb/RaspberryJuice 2.x, the same function on Paper's plain text): messages verbatim. A
  player may type ``|`` (mcpi's own ``pollChatPosts`` then raises ValueError and loses the whole
  batch), so :func:`parse_chat_posts` starts a new post only at ``|<digits>,``; any other ``|``
  is part of the message. Remaining ambiguity, inherent in the format: a message that itself
  contains ``|<digits>,`` (say ``a|12,b``) reads as two posts. Nothing is dropped, but the tail
  is attributed to another id.
- ``fork`` (RaspberryJuiceReload for Paper, ``ChatEvent.getChatPosts``): every ``|`` and ``,``
  inside a message is sent as ``\|`` and ``\,`` (a backslash itself is not escaped). That makes
  the format exact: a player's ``|12,`` arrives as ``\|12\,``, so ``|<digits>,`` with a bare
  comma can only be a post boundary, and removing the one backslash before each ``|`` and ``,``
  restores the message (the escaping only ever inserts a backslash there).

Outgoing: :func:`chat_line` is what a ``chat.post`` carries: :func:`chat_safe` text without
trailing commas (both plugins rebuild the message from Java's ``split(",")``, which drops
trailing empty strings, so a trailing comma would silently vanish, and a line of nothing but
commas makes upstream answer ``Fail``). :func:`chat_safe` is the one sanitizer every text sent to the server goes through.
It guarantees the text cannot end the ``chat.post(...)`` line or start another command:
- line breaks (``\r``, ``\n``, ``\x85``, U+2028/U+2029), tabs and every other control
  character (Unicode category Cc) become a space, and whitespace runs collapse to one space;
- lone surrogates (Cs, which cannot even be encoded) become a space;
- invisible format characters (Cf: zero-width joiners, bidi overrides, BOM) are dropped;
- ``|`` (the event separator) becomes ``¦``; Minecraft formatting codes (``§`` and the
  character after it, as in ``§c``) are dropped, so nobody can colour or obfuscate Jarvis's lines.
``(`` and ``)`` are kept on purpose: RaspberryJuice and the original Pi server take the
arguments up to the line's last character, so a ``)`` inside a message cannot close the
command early, and answers read "(source: Cow)".
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# A post starts at the beginning or right after a `|` that is followed by `<entity id>,`.
_POST_START = re.compile(r"\|(?=[0-9]+,)")
_POST = re.compile(r"([0-9]+),(.*)", re.DOTALL)
_SPACES = re.compile(r"\s+")

_FORMATTING_CODE = re.compile("\u00a7.?", re.DOTALL)   # Minecraft's § + one code character
_REPLACED = {"|": "\u00a6"}
_AS_SPACE_CATEGORIES = {"Cc", "Cs", "Zl", "Zp"}


@dataclass(frozen=True)
class ChatPost:
    """One chat message a player posted, as the server reported it."""

    entity_id: int                   # the plugin API's entity id (-1 from the player bot)
    message: str
    player: str | None = None        # the player bot reads the name with the message
    private: bool = False            # a whisper to the player bot


UPSTREAM = "upstream"
FORK = "fork"
V2 = "v2"          # sakebomb/RaspberryJuice 2.x for current Paper: upstream's replies, auth(<token>), Fail to bad lines
DIALECTS = (UPSTREAM, FORK, V2)
_ESCAPED = re.compile(r"\\([|,])")


def parse_chat_posts(response: str, dialect: str = UPSTREAM) -> list[ChatPost]:
    """The posts in an ``events.chat.posts`` response; never raises, never drops text."""
    if not response:
        return []
    posts = []
    for item in _POST_START.split(response):
        match = _POST.fullmatch(item)
        if match:
            message = match.group(2)
            if dialect == FORK:
                message = _ESCAPED.sub(r"\1", message)
            posts.append(ChatPost(int(match.group(1)), message))
        elif posts:  # cannot happen after a split at `|digits,`, kept for safety
            posts[-1] = ChatPost(posts[-1].entity_id, f"{posts[-1].message}|{item}")
        else:        # a response that does not start with `id,`: not the format we know
            posts.append(ChatPost(-1, item))
    return posts


def chat_line(text: str) -> str:
    """``text`` as the argument of one ``chat.post``: :func:`chat_safe`, no trailing commas."""
    return chat_safe(text).rstrip(", ")


def chat_safe(text: str) -> str:
    """``text`` as one harmless chat line (see the module docstring for the rules)."""
    out = []
    for char in _FORMATTING_CODE.sub("", str(text)):
        if char in _REPLACED:
            out.append(_REPLACED[char])
            continue
        category = unicodedata.category(char)
        if category in _AS_SPACE_CATEGORIES:
            out.append(" ")
        elif category != "Cf":
            out.append(char)
    return _SPACES.sub(" ", "".join(out)).strip()
