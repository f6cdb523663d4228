"""The answer to a question: plain data, one type for every answerer (in process, or through the worker pool).

    answer = jarvis.ask("what do cows drop?")       # jarvis/pipeline.py
    answer.text, answer.title, answer.confidence   # "0-2 Leather and 1-3 Raw beef", "Cow", 0.84

An ``Answer`` says what was found (the text, the page, the paragraph and the characters it was read at) and
how sure Jarvis is of it (the confidence, whether it is stated, under which rule), nothing about how it is
shown: the words and lines a player reads are made from it by jarvis/replies.py (the terminal's reply and
`jarvis ask`'s JSON) and jarvis/bridge/chat.py (chat lines at a transport's width).
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Answer:
    question: str
    text: str               # the best answer span, stated or not; "" when the reader found none
    score: float            # the reader's score of the span (its own scale)
    title: str              # the page stated or pointed to; "" when no page matched
    reader: str             # "roberta-base-squad2", "fallback:minilm", ...
    seconds: float
    url: str = ""
    pages: tuple[str, ...] = ()   # titles of the pages read, best first
    cached: bool = False
    # The sentence shown: the one the span was read in, except for a "not sure" that points to another page
    # (ReaderSettings.unsure_page "top"), which quotes that page's ("" when none).
    sentence: str = ""
    confidence: float = 0.0  # the estimated probability that ``text`` is right
    abstained: bool = True   # not stated as fact: below the answer threshold, or no span at all
    site: str = ""                # the page's wiki, or "server guide"; "" when no page matched
    several_sites: bool = False   # the index holds more than one site: replies name the page's site
    # How it was judged (jarvis/confidence/policy.py): the rule ("wiki", "guide", "taught") and the threshold its
    # confidence was held against; "" and None when there was no answer to judge.
    rule: str = ""
    threshold: float | None = None
    # Where the answer was read: the paragraph (readers.base.Passage) and ``text``'s characters in it,
    # ``passage.text[start:end] == text``; None when no span was found (and not carried through the pool).
    passage: object = field(default=None, compare=False, repr=False)
    start: int = field(default=0, compare=False, repr=False)
    end: int = field(default=0, compare=False, repr=False)
    # What the confidence was computed from (jarvis/confidence): for `jarvis calibrate` and for debugging.
    signals: dict = field(default_factory=dict, compare=False, repr=False)
    # The reader's next best candidates (readers.base.Span), best first: what else the pages might say.
    others: tuple = field(default=(), compare=False, repr=False)
    verdict: str = ""       # a yes/no question: "yes" or "no", what the answer's passage says ("" otherwise)
    # The sentence the span was read in, what the answer would quote if stated; "" where not known (an answer
    # through the worker pool: then ``sentence``, see ``sentence_if_stated``).
    span_sentence: str = field(default="", compare=False, repr=False)

    @property
    def found(self) -> bool:
        return bool(self.text)

    @property
    def sentence_if_stated(self) -> str:
        """The sentence the answer would be quoted in if stated: what judging it as stated reads."""
        return self.span_sentence or self.sentence

    @property
    def stated(self) -> bool:
        """Stated as fact (not "not sure")."""
        return self.found and not self.abstained
