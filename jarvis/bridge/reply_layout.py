"""Reply layout: what a reply looks like on this transport, and where it goes.

The plugin API broadcasts ``[Jarvis] Steve: …`` lines of ``max_line`` characters, at most
``max_reply_lines`` of them. The player bot's messages carry its name already (``Steve: …`` in
public, the bare answer by whisper), each at most ``max_message`` UTF-16 units with the whisper's
``/msg NAME `` counted, at most ``max_messages``; where a reply goes follows ``[bot] reply``
(``same``: a whisper by whisper, public chat in public; ``private``; ``public``). The texts come from
the chat contract (jarvis/bridge/chat.py): ``answer_lines`` for an answer, ``reply_lines`` for a notice.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from jarvis.bridge.chat import PREFIX, Question, ReplyStyle, answer_lines, reply_lines
from jarvis.bridge.player import whisper_overhead
from jarvis.bridge.transport import OutLine
from jarvis.bridge.wire import chat_safe
from jarvis.config import BotSettings, BridgeSettings

if TYPE_CHECKING:
    from jarvis.answer import Answer   # one answer type: in process or through the pool (jarvis.network)

# compose(addressee, line width, line count, prefix) -> chat lines
Compose = Callable[[str | None, int, int, str], list[str]]


class ReplyLayout:
    """Replies as this transport's chat lines, to where each one goes (see the module doc)."""

    def __init__(self, settings: BridgeSettings, bot: BotSettings | None) -> None:
        self.settings = settings
        self.bot = bot

    def retune(self, settings: BridgeSettings, bot: BotSettings | None) -> None:
        """Settings reloaded (SIGHUP): the next reply is laid out by them."""
        self.settings, self.bot = settings, bot

    @property
    def style(self) -> ReplyStyle:
        """How replies look on this transport."""
        if self.bot is not None:
            return ReplyStyle("", self.bot.max_message, self.bot.max_messages, self.bot.whisper_command)
        return ReplyStyle(PREFIX, self.settings.max_line, self.settings.max_reply_lines)

    def destination(self, question: Question | None) -> str | None:
        """Whom a reply is whispered to (None: said in public). The plugin API can only broadcast."""
        if self.bot is None or question is None or question.player is None:
            return None
        mode = self.bot.reply
        if mode == "private" or (mode == "same" and question.private):
            return question.player
        return None

    def lines_for(self, question: Question | None, text: str, *, source: str | None = None,
                  max_lines: int | None = None, answered: bool = True) -> list[OutLine]:
        """``text`` (a notice, or why a question could not be answered; naming ``source`` if given) as
        chat lines, to where ``question`` gets its answer. ``answered``: these lines answer it."""
        return self._out_lines(question, answered, max_lines, lambda addressee, width, lines, prefix: reply_lines(
            text, player=addressee, source=source, max_line=width, max_lines=lines, prefix=prefix))

    def notice(self, text: str) -> list[OutLine]:
        """A notice to everyone (not an answer): back after a drop, going offline."""
        return self.lines_for(None, text, answered=False)

    def answer_reply(self, question: Question, answer: Answer) -> list[OutLine]:
        """The answer's reply (jarvis/replies.py: stated, not sure, or I don't know) as chat lines."""
        return self._out_lines(question, True, None, lambda addressee, width, lines, prefix: answer_lines(
            answer, player=addressee, max_line=width, max_lines=lines, prefix=prefix))

    def shown(self, question: Question | None, lines: list[OutLine]) -> str:
        """What ``lines`` showed the player: their text less this transport's prefix, and less the "NAME: "
        that addresses the player on the first, joined by one space (what the question log keeps)."""
        texts = [line.text.removeprefix(self.style.prefix) for line in lines]
        addressee = question.player if question is not None and lines and lines[0].to is None else None
        if texts and addressee:
            texts[0] = texts[0].removeprefix(f"{chat_safe(addressee)}: ")
        return " ".join(texts)

    def _out_lines(self, question: Question | None, answered: bool, max_lines: int | None,
                   compose: Compose) -> list[OutLine]:
        """``compose(addressee, line width, line count, prefix)`` fitted to this transport and destination."""
        style = self.style
        to = self.destination(question)
        limit = style.max_line
        if to is not None:
            limit -= whisper_overhead(style.whisper_command, to)
        addressee = question.player if question is not None and to is None else None
        lines = _fit(lambda width: compose(addressee, width, max_lines or style.max_lines, style.prefix),
                     limit, style.prefix)
        return [OutLine(line, question if answered else None, last=answered and i == len(lines) - 1, to=to)
                for i, line in enumerate(lines)]


def _fit(compose: Callable[[int], list[str]], limit: int, prefix: str) -> list[str]:
    """``compose(width)`` within ``limit`` as Minecraft counts characters (UTF-16 units: an emoji is two)."""
    width = limit
    while True:
        lines = compose(width)
        over = max(len(line.encode("utf-16-le")) // 2 - limit for line in lines)
        if over <= 0 or width <= len(prefix) + 20:
            return lines
        width -= over
