"""What the pipeline knows of an answer beyond the reader: how clearly retrieval found its page, whether
that page is what the question is about, and the answer's shape. Cheap: no model runs here.

The reader's own signals (``Span.signals``: its scores, margins, the kind of phrase found) are added
to these; the confidence model (model.py) weighs them all.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from typing import Sequence

from jarvis.lexical import TermAnalyzer
from jarvis.readers.placement import is_table_row, placement_fit
from jarvis.readers.question_kinds import BLANK, QUANTITY, RIDDLE, answer_kind, quiz_form

# A page not in a ranking's top counts as this far down it.
UNRANKED = 10


def retrieval_signals(pages: Sequence, answer_title: str) -> dict[str, float]:
    """How the retriever ranked the pages read (``index.Hit``s, best first) and the answer's page among them.

    - ``top_score``, ``score_margin``: the top page's fused score and its lead over the second (a share of
      it): a clear leader is usually the page asked about;
    - ``answer_page_rank``, ``answer_on_top``: where the answer's page is;
    - ``lexical_rank``, ``dense_rank``, ``rankings_agree``: where BM25 and the page vectors each put it,
      and whether both put it first;
    - ``answer_page_article``: it is an ordinary article (not a tutorial, joke, old or spin-off page).
    """
    if not pages:
        return {}
    scores = [float(getattr(page, "score", 0.0)) for page in pages]
    top = scores[0]
    second = scores[1] if len(scores) > 1 else 0.0
    rank = next((i for i, page in enumerate(pages) if page.title == answer_title), len(pages))
    page = pages[rank] if rank < len(pages) else None
    lexical = getattr(page, "lexical_rank", None) if page is not None else None
    dense = getattr(page, "dense_rank", None) if page is not None else None
    lexical = UNRANKED if lexical is None else min(lexical, UNRANKED)
    dense = UNRANKED if dense is None else min(dense, UNRANKED)
    return {
        "top_score": top,
        "score_margin": (top - second) / top if top > 0 else 0.0,
        "answer_page_rank": float(rank),
        "answer_on_top": float(rank == 0),
        "lexical_rank": float(lexical),
        "dense_rank": float(dense),
        "rankings_agree": float(lexical == 0 and dense == 0),
        "answer_page_article": float(page is not None and getattr(page, "page_kind", "article") == "article"),
    }


def answer_signals(question: str, answer: str, title: str, analyzer: TermAnalyzer,
                   expanded_question: str = "") -> dict[str, float]:
    """The answer's shape and whether its page is the question's subject.

    - ``question_names_page``: every word of the page's title is in the question (with the wiki's names
      for the players' words, ``expanded_question``): the page is what was asked about;
    - ``question_terms``: how many content words the question has (log);
    - ``answer_words``: how long the answer is (log); ``answer_has_number``;
    - ``quiz_blank``, ``quiz_riddle``: the question is a quiz's fill-in-the-blank or riddle
      (readers/question_kinds.py ``quiz_form``).
    """
    asked = set(analyzer.terms(expanded_question or question))
    title_terms = set(analyzer.terms(title))
    words = answer.split()
    form = quiz_form(question)
    return {
        "question_names_page": float(bool(title_terms) and title_terms <= asked),
        "question_terms": math.log1p(len(analyzer.terms(question))),
        "answer_words": math.log1p(len(words)),
        "answer_has_number": float(any(c.isdigit() for c in answer)),
        "quiz_blank": float(form == BLANK),
        "quiz_riddle": float(form == RIDDLE),
    }


NUMBER_WORDS = re.compile(r"\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|hundred|"
                          r"half|once|twice|none|no)\b", re.IGNORECASE)


def place_signals(question: str, span) -> dict[str, float]:
    """Where the answer (``span``, readers.base.Span) was read and whether it is the kind of phrase asked for.

    - ``table_row``: it was read in a table row, not in prose (a colour's spawn chance answers "what do
      sheep drop" badly);
    - ``section_fit``: how surely its section holds what the question asks for (readers/question_kinds.py: 1 a
      drops question answered under "Drops", -1 under a section that never holds it);
    - ``quantity_without_number``: a "how many / how much / how long" question answered with no number;
    - ``question_words``: how long the question is (log): long-winded questions read less surely.
    """
    numberless = not any(c.isdigit() for c in span.text) and not NUMBER_WORDS.search(span.text)
    return {
        "table_row": float(is_table_row(span.passage.text)),
        "section_fit": placement_fit(question, span),
        "quantity_without_number": float(answer_kind(question) == QUANTITY and numberless),
        "question_words": math.log1p(len(question.split())),
    }


def agreement_signals(answer: str, title: str, others: Sequence[tuple[str, str]]) -> dict[str, float]:
    """How far the reader's other candidates (``others``: (text, page title), next best first) back the answer.

    - ``candidates_agree``: how many of them say much the same (token F1 >= 0.5 with the answer);
    - ``candidates_same_page``: the share of all candidates read on the answer's page;
    - ``candidate_pages``: how many pages the candidates come from.
    """
    agree = sum(_token_f1(answer, text) >= 0.5 for text, _ in others)
    titles = [title, *(page for _, page in others)]
    return {
        "candidates_agree": float(agree),
        "candidates_same_page": sum(page == title for page in titles) / len(titles),
        "candidate_pages": float(len(set(titles))),
    }


def _token_f1(a: str, b: str) -> float:
    left, right = a.casefold().split(), b.casefold().split()
    common = sum((Counter(left) & Counter(right)).values())
    if not common:
        return 0.0
    precision, recall = common / len(left), common / len(right)
    return 2 * precision * recall / (precision + recall)


def rerank_signals(span, ranked: Sequence) -> dict[str, float]:
    """How the reranker scored the passages (``ranked``: readers.base.Passage, best first, each ``score`` its logit)
    and the answer's (``span``, readers.base.Span) among them; {} when the passages were not reranked.

    - ``rerank_answer``: the answer's passage's logit; ``rerank_top``: the best passage's;
    - ``rerank_below_top``: how far the answer's passage is below the best;
    - ``rerank_page_margin``: how far the best passage of the answer's page leads the best of any other page.
    """
    scored = [p for p in ranked if p.score is not None]
    if not scored or span.passage.score is None:
        return {}
    top = max(p.score for p in scored)
    own = max((p.score for p in scored if p.title == span.passage.title), default=span.passage.score)
    other = max((p.score for p in scored if p.title != span.passage.title), default=own - 10.0)
    return {"rerank_answer": span.passage.score, "rerank_top": top, "rerank_below_top": top - span.passage.score,
            "rerank_page_margin": own - other}
