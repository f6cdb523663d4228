"""What travels through Redis: a question on the stream, a reply on the asking client's reply stream.

    <prefix>:questions            a stream, read by the workers' consumer group
        v=1 id=<32 hex> q=<question> player=<salted hash, the name, or ""> client=<16-32 hex> origin=serve|ask
    <prefix>:replies:<client>     a stream per asking process (a bridge, a `jarvis ask`)
        id=<question id> worker=<name> attempts=<n> answer=<JSON: the Answer's fields (answer_to_json)>
        id=<question id> worker=<name> attempts=<n> error=unreadable

Both sides check what they read: a question is text and nothing else (the worker answers it, never runs it);
a reply is rebuilt into a :class:`jarvis.answer.Answer` field by field, each of the type and size expected,
and the chat shows only what the bridge's own layout rules compose from it. The worker writes replies only
to ``<prefix>:replies:<client>`` for a client id of hex digits: a question cannot name any other key.
"""
from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass

from jarvis.answer import Answer
from jarvis.confidence.policy import RULES
from jarvis.question_text import MAX_QUESTION_CHARS

VERSION = "1"
ORIGINS = ("serve", "ask", "bench")
UNREADABLE = "unreadable"           # the one error a worker sends: the question could not be read as a question
_HEX_ID = re.compile(r"[0-9a-f]{16,32}")
MAX_TEXT = 2000                     # any text field of a reply (a sentence, a title, a URL)
MAX_PAGES = 20


class BadMessage(ValueError):
    """A stream entry that is not what this module writes (logged and dropped by whoever reads it)."""


def new_id() -> str:
    return uuid.uuid4().hex


def questions_key(prefix: str) -> str:
    return f"{prefix}:questions"


def replies_key(prefix: str, client: str) -> str:
    return f"{prefix}:replies:{client}"


@dataclass(frozen=True)
class QuestionMessage:
    id: str
    text: str
    client: str             # where the reply goes: replies_key(prefix, client)
    player: str = ""        # a salted hash unless the bridge's admin asked for names; "" for `jarvis ask`
    origin: str = "serve"

    def fields(self) -> dict[str, str]:
        return {"v": VERSION, "id": self.id, "q": self.text, "client": self.client, "player": self.player,
                "origin": self.origin}

    @classmethod
    def parse(cls, fields: dict[str, str]) -> "QuestionMessage":
        if fields.get("v") != VERSION:
            raise BadMessage(f"unknown message version {fields.get('v')!r}")
        qid, text, client = fields.get("id", ""), fields.get("q", ""), fields.get("client", "")
        if not _HEX_ID.fullmatch(qid) or not _HEX_ID.fullmatch(client):
            raise BadMessage("a question without a valid id or client id")
        if not isinstance(text, str) or len(text) > MAX_QUESTION_CHARS * 4:
            raise BadMessage("a question that is not short text")
        player, origin = fields.get("player", ""), fields.get("origin", "")
        if len(player) > 64 or origin not in ORIGINS:
            raise BadMessage("a question with a bad player or origin")
        return cls(qid, text, client, player, origin)


@dataclass(frozen=True)
class ReplyMessage:
    id: str
    worker: str
    attempts: int
    answer: Answer | None = None     # None: error says why
    error: str = ""

    def fields(self) -> dict[str, str]:
        out = {"id": self.id, "worker": self.worker, "attempts": str(self.attempts)}
        if self.answer is not None:
            out["answer"] = json.dumps(answer_to_json(self.answer), ensure_ascii=False)
        else:
            out["error"] = self.error
        return out

    @classmethod
    def parse(cls, fields: dict[str, str], question: str) -> "ReplyMessage":
        """The reply to ``question`` (the text the client asked: the answer is rebuilt around it)."""
        qid = fields.get("id", "")
        if not _HEX_ID.fullmatch(qid):
            raise BadMessage("a reply without a valid question id")
        worker = str(fields.get("worker", ""))[:128]
        try:
            attempts = int(fields.get("attempts", "1"))
        except ValueError:
            raise BadMessage("a reply with a bad attempt count") from None
        if "answer" not in fields:
            if fields.get("error") != UNREADABLE:
                raise BadMessage("a reply with neither an answer nor a known error")
            return cls(qid, worker, attempts, None, UNREADABLE)
        try:
            data = json.loads(fields["answer"])
        except (TypeError, ValueError):
            raise BadMessage("a reply whose answer is not JSON") from None
        return cls(qid, worker, attempts, answer_from_json(data, question))


def answer_to_json(answer: Answer) -> dict:
    """An Answer as the reply's JSON: its fields under the names `jarvis ask`'s JSON gives them (``answer`` for
    the text), without its question (the client rebuilds it around the question it asked)."""
    return {"answer": answer.text, "score": answer.score, "title": answer.title, "reader": answer.reader,
            "seconds": answer.seconds, "url": answer.url, "pages": list(answer.pages), "cached": answer.cached,
            "sentence": answer.sentence, "confidence": answer.confidence, "abstained": answer.abstained,
            "site": answer.site, "several_sites": answer.several_sites, "rule": answer.rule,
            "threshold": answer.threshold, "verdict": answer.verdict}


def answer_from_json(data: object, question: str) -> Answer:
    """An Answer from ``answer_to_json``, every field checked; BadMessage if not."""
    if not isinstance(data, dict):
        raise BadMessage("an answer that is not a JSON object")

    def text(key: str) -> str:
        value = data.get(key, "")
        if not isinstance(value, str) or len(value) > MAX_TEXT:
            raise BadMessage(f"answer field {key!r}: not text of at most {MAX_TEXT} characters")
        return value

    def number(key: str, low: float | None = None, high: float | None = None) -> float:
        value = data.get(key, 0.0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise BadMessage(f"answer field {key!r}: not a number")
        if (low is not None and value < low) or (high is not None and value > high):
            raise BadMessage(f"answer field {key!r}: out of range")
        return float(value)

    def flag(key: str, default: bool) -> bool:
        value = data.get(key, default)
        if not isinstance(value, bool):
            raise BadMessage(f"answer field {key!r}: not true or false")
        return value

    rule = text("rule")
    if rule not in ("", *RULES):
        raise BadMessage(f"answer field 'rule': not one of the answer policy's rules ({', '.join(RULES)})")
    verdict = text("verdict")
    if verdict not in ("", "yes", "no"):
        raise BadMessage("answer field 'verdict': not yes, no or empty")
    pages = data.get("pages", [])
    if not isinstance(pages, list) or len(pages) > MAX_PAGES or not all(
            isinstance(p, str) and len(p) <= MAX_TEXT for p in pages):
        raise BadMessage("answer field 'pages': not a short list of titles")
    return Answer(question=question, text=text("answer"), score=number("score"), title=text("title"),
                  reader=text("reader"), seconds=number("seconds", 0.0), url=text("url"), pages=tuple(pages),
                  cached=flag("cached", False), sentence=text("sentence"), confidence=number("confidence", 0.0, 1.0),
                  abstained=flag("abstained", True), site=text("site"), several_sites=flag("several_sites", False),
                  rule=rule, threshold=None if data.get("threshold") is None else number("threshold", 0.0, 1.0),
                  verdict=verdict)
