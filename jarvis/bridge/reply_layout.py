"""Reply layout: what a reply looks like on this transport, and where it goes.

The transport's kind says how its lines look (``TransportKind.style``: their prefix, width and count: the
plugin API broadcasts ``[Jarvis] Steve: …`` lines of ``max_line`` characters; the player bot's messages carry
its name already, ``Steve: …`` in public and the bare answer by whisper) and how it whispers (``whisper_to``:
whom, following ``[bot] reply`` for the bot; ``whisper_overhead``: what a whisper's command takes from a
line). Every line fits as Minecraft counts characters (UTF-16 units). The texts come from the chat contract
(jarvis/bridge/chat.py): ``answer_lines`` for an answer, ``reply_lines`` for a notice. ``shown`` is what the
lines showed the player (the question log keeps it).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from jarvis.bridge.chat import Question, ReplyStyle, answer_lines, reply_lines
from jarvis.bridge.transport import OutLine, TransportChoice
from jarvis.bridge.wire import chat_safe
from jarvis.config import BridgeSettings

if TYPE_CHECKING:
    from jarvis.answer import Answer   # one answer type: in process or through the pool (jarvis.network)

# compose(addressee, line width, line count, prefix) -> chat lines
Compose = Callable[[str | None, int, int, str], list[str]]


class ReplyLayout:
    """Replies as this transport's chat lines, to where each one goes (see the module doc)."""

    def __init__(self, settings: BridgeSettings, transport: TransportChoice) -> None:
        self.settings = settings
        self.transport = transport

    def retune(self, settings: BridgeSettings, transport: TransportChoice) -> None:
        """Settings reloaded (SIGHUP): the next reply is laid out by them."""
        self.settings, self.transport = settings, transport

    @property
    def style(self) -> ReplyStyle:
        """How replies look on this transport."""
        return self.transport.kind.style(self.settings, self.transport.settings)

    def destination(self, question: Question | None) -> str | None:
        """Whom a reply is whispered to (None: said in public)."""
        if question is None:
            return None
        return self.transport.kind.whisper_to(self.transport.settings, question)

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
            limit -= self.transport.kind.whisper_overhead(self.transport.settings, to)
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
