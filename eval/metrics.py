"""SQuAD-style answer scoring: normalize, then token-overlap F1 and exact match, max over gold answers."""
from __future__ import annotations

import re
import string
from collections import Counter
from typing import Iterable

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and the articles a/an/the, collapse whitespace (the SQuAD v1.1 script's rules)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def f1_score(prediction: str, gold: str) -> float:
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    if not pred_tokens or not gold_tokens:
        # SQuAD 2.0 convention: both empty is a match, one empty is not.
        return float(pred_tokens == gold_tokens)
    common = Counter(pred_tokens) & Counter(gold_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(pred_tokens)
    recall = overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def best_f1(prediction: str, golds: Iterable[str]) -> float:
    return max((f1_score(prediction, g) for g in golds), default=0.0)


def best_em(prediction: str, golds: Iterable[str]) -> float:
    return max((exact_match(prediction, g) for g in golds), default=0.0)


# The player's view: a stated answer is right when its span scores F1 >= RIGHT_F1 against a gold answer, or
# when a gold answer of two or more words is inside what it states (the sentence it was read in says it, even
# where the span was trimmed badly). One word inside a sentence is no answer. What is stated is the answer and
# its sentence (``stated_text``), whatever the reply's wording or width: a change of wording moves no label
# behind a fitted threshold.
RIGHT_F1 = 0.5
MIN_QUOTED_WORDS = 2


def stated_text(answer: str, sentence: str) -> str:
    """What an answer states, independent of how a reply words it: the answer and the sentence it was read in."""
    return f"{answer} {sentence}".strip()


def says(stated: str, gold: str) -> bool:
    """Whether the normalised gold answer, of at least MIN_QUOTED_WORDS words, is a run of ``stated``'s words."""
    gold_tokens = normalize_answer(gold).split()
    if len(gold_tokens) < MIN_QUOTED_WORDS:
        return False
    stated_tokens = normalize_answer(stated).split()
    width = len(gold_tokens)
    return any(stated_tokens[i:i + width] == gold_tokens for i in range(len(stated_tokens) - width + 1))


def right_if_stated(answer, golds: Iterable[str]) -> bool:
    """An answer (jarvis.answer.Answer) judged as if stated: its text and the sentence it was read in, not the
    sentence a "not sure" quotes from another page."""
    return answer.found and is_right(answer.text, answer.sentence_if_stated, golds)


def is_right(answer: str, sentence: str, golds: Iterable[str]) -> bool:
    """A stated answer is right: F1 >= RIGHT_F1, or a gold answer of two or more words in what it states (the
    answer and ``sentence``, the sentence it was read in: ``stated_text``)."""
    golds = list(golds)
    stated = stated_text(answer, sentence)
    return best_f1(answer, golds) >= RIGHT_F1 or any(says(stated, g) for g in golds)
