"""Training examples for an extractive reader, SQuAD 2.0 shaped, built from questions and a corpus.

A question file holds questions, page titles and short gold spans only; the contexts are built here, at
training time, from the corpus pages (the real bed's crawl, or a user's own wiki), exactly as the reader
will see them (jarvis/readers/context.py):

- **answerable**: a paragraph of the question's page that holds a gold span (the first gold found, at its
  first place), with the span's character offset;
- **same page, no answer**: the paragraphs of the right page that the passage ranker puts first but that
  hold no gold: what the reader must learn to pass over on the page it was asked about;
- **other page, no answer**: the best paragraphs of the wrong pages that retrieval returns for the question;
- **teacher only** (``teacher_same_page``, ``teacher_other_page``; none by default): more paragraphs of the
  question's page, next in the ranker's order, and the best paragraphs of the further wrong pages retrieval
  returns, without a gold label: a teacher labels them for a student (``distill``).

    examples, report = build_examples(questions, pages, ranker, search=searcher.search)
"""
from __future__ import annotations

import gzip
import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Protocol, Sequence

from jarvis.readers.base import Passage
from jarvis.readers.context import reader_context
from jarvis.readers.ranking import PassageRanker

ANSWER = "answer"
SAME_PAGE = "same_page"
OTHER_PAGE = "other_page"
EXAMPLE_ORIGINS = (ANSWER, SAME_PAGE, OTHER_PAGE)
# A pair only a teacher labels: the question against more paragraphs of its page and of the wrong pages
# retrieval returns than the gold-labelled examples use. No gold span: a student learns it from the teacher's
# start and end distributions alone, and a training without a teacher leaves it out.
TEACHER_ONLY = "teacher_only"


@dataclass(frozen=True)
class GoldQuestion:
    """A question with its page and gold spans (a line of a question file)."""

    text: str
    title: str
    answers: tuple[str, ...]


@dataclass(frozen=True)
class QAExample:
    """One (question, context) pair; ``answer_start`` is -1 when the context does not answer it."""

    question: str
    context: str
    answer_text: str
    answer_start: int
    title: str
    origin: str                 # one of EXAMPLE_ORIGINS
    passage_start: int = 0      # where the passage begins in the context (after its header)
    golds: tuple[str, ...] = ()  # every gold span of the question (what a prediction is scored against)

    @property
    def answerable(self) -> bool:
        return self.answer_start >= 0


@dataclass
class ExampleReport:
    questions: int = 0
    used: int = 0
    no_page: list[str] = field(default_factory=list)      # titles not in the corpus
    no_span: list[str] = field(default_factory=list)      # questions whose golds are in no paragraph
    counts: dict = field(default_factory=lambda: {origin: 0 for origin in EXAMPLE_ORIGINS})

    def summary(self) -> str:
        parts = ", ".join(f"{n} {origin.replace('_', ' ')}" for origin, n in self.counts.items())
        return (f"{self.used} of {self.questions} questions used ({parts}); "
                f"{len(self.no_page)} without their page in the corpus, {len(self.no_span)} without a gold span in it")


class CorpusPage(Protocol):
    title: str
    paragraphs: list[str]
    sections: list[list[str]] | None
    aliases: list[str]


SearchFn = Callable[[str, int], Sequence]   # (question, k) -> hits with .title (index.Searcher.search)


def _norm_with_map(text: str) -> tuple[str, list[int]]:
    """Case-folded text with runs of whitespace as one space, and each character's place in ``text``."""
    out, where = [], []
    space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if not space and out:
                out.append(" ")
                where.append(i)
            space = True
            continue
        space = False
        folded = ch.casefold()
        out.append(folded if len(folded) == 1 else ch.lower())
        where.append(i)
    return "".join(out), where


def find_span(text: str, answer: str) -> tuple[int, int] | None:
    """Where ``answer`` is in ``text`` (case and spacing aside), as a character range of ``text``."""
    needle = re.sub(r"\s+", " ", answer).strip()
    needle = "".join(c.casefold() if len(c.casefold()) == 1 else c.lower() for c in needle)
    if not needle:
        return None
    hay, where = _norm_with_map(text)
    at = hay.find(needle)
    if at < 0:
        return None
    return where[at], where[at + len(needle) - 1] + 1


def _title_key(title: str) -> str:
    return " ".join(title.split()).casefold()


def page_passages(page: CorpusPage, rank: int = 0) -> list[Passage]:
    sections = page.sections or [[] for _ in page.paragraphs]
    return [Passage(page.title, text, rank, i, section=tuple(sections[i]))
            for i, text in enumerate(page.paragraphs) if text.strip()]


def _example(q: GoldQuestion, passage: Passage, origin: str, span: tuple[int, int] | None = None,
             read: str | None = None) -> QAExample:
    """One example: ``read`` is the question as the reader will read it (default: as written)."""
    context, offset = reader_context(passage.title, passage.section, passage.text)
    question = q.text if read is None else read
    if span is None:
        return QAExample(question, context, "", -1, passage.title, origin, offset, q.answers)
    start, end = span
    return QAExample(question, context, passage.text[start:end], offset + start, passage.title, origin, offset,
                     q.answers)


def _holding(passages: Sequence[Passage], answers: Sequence[str]) -> list[tuple[Passage, tuple[int, int]]]:
    """The passages that hold a gold answer, with where (the first gold found in each)."""
    found = []
    for passage in passages:
        for answer in answers:
            span = find_span(passage.text, answer)
            if span is not None:
                found.append((passage, span))
                break
    return found


def build_examples(questions: Iterable[GoldQuestion], pages: Sequence[CorpusPage], ranker: PassageRanker,
                   search: SearchFn | None = None, same_page: int = 2, other_page: int = 1,
                   max_answer_passages: int = 2, seed: int = 0, progress: bool = False,
                   teacher_same_page: int = 0, teacher_other_page: int = 0,
                   read_as: Callable[[str], str] | None = None) -> tuple[list[QAExample], ExampleReport]:
    """The examples of every question whose page and a gold span are in ``pages``; see the module doc.
    ``read_as`` gives the question as the reader reads it at answer time (the pipeline's reading form, spelt
    as the index searches it), so that it trains on what it will read; searches and rankings use the
    question as written."""
    from tqdm import tqdm

    by_title: dict[str, list[CorpusPage]] = {}
    for page in pages:
        for name in dict.fromkeys((page.title, *page.aliases)):
            by_title.setdefault(_title_key(name), []).append(page)
    rng = random.Random(seed)
    report = ExampleReport()
    examples: list[QAExample] = []
    questions = list(questions)
    for q in tqdm(questions, desc="examples", unit="q", disable=not progress, dynamic_ncols=True):
        report.questions += 1
        candidates = by_title.get(_title_key(q.title))
        if not candidates:
            report.no_page.append(q.title)
            continue
        # Two wikis may both have a "Cow": the question is about the one that holds its gold.
        page, passages, holding = candidates[0], [], []
        for candidate in candidates:
            page, passages = candidate, page_passages(candidate)
            holding = _holding(passages, q.answers)
            if holding:
                break
        if not holding:
            report.no_span.append(q.text)
            continue
        report.used += 1
        read = read_as(q.text) if read_as is not None else None
        for passage, span in holding[:max_answer_passages]:
            examples.append(_example(q, passage, ANSWER, span, read=read))
        answered = {p.index for p, _ in holding}
        others = [p for p in passages if p.index not in answered]
        if others and same_page:
            scores = ranker.scores(q.text, others)
            order = sorted(range(len(others)), key=lambda i: -scores[i])
            # The hardest (best-ranked) one, and the rest drawn from the next few: the model must pass over
            # the near misses without learning only the top of the ranking.
            picked = order[:1] + rng.sample(order[1:8], min(same_page - 1, len(order[1:8])))
            examples += [_example(q, others[i], SAME_PAGE, read=read) for i in picked[:same_page]]
            if teacher_same_page:
                rest = [i for i in order if i not in set(picked[:same_page])][:teacher_same_page]
                examples += [_example(q, others[i], TEACHER_ONLY, read=read) for i in rest]
        elif others and teacher_same_page:
            scores = ranker.scores(q.text, others)
            order = sorted(range(len(others)), key=lambda i: -scores[i])
            examples += [_example(q, others[i], TEACHER_ONLY, read=read) for i in order[:teacher_same_page]]
        if search is not None and (other_page or teacher_other_page):
            wrong = [hit for hit in search(q.text, 4 + teacher_other_page) if hit.title.casefold() != page.title.casefold()
                     and hit.title.casefold() not in {a.casefold() for a in page.aliases}]
            for rank, hit in enumerate(wrong[other_page:other_page + teacher_other_page]):
                candidates = page_passages(hit, rank + 1 + other_page)
                if candidates:
                    scores = ranker.scores(q.text, candidates)
                    best = max(range(len(candidates)), key=lambda i: scores[i])
                    examples.append(_example(q, candidates[best], TEACHER_ONLY, read=read))
            for rank, hit in enumerate(wrong[:other_page]):
                candidates = page_passages(hit, rank + 1)
                if not candidates:
                    continue
                # A wrong page's paragraph that happens to hold a gold is no negative.
                candidates = [p for p in candidates if not any(find_span(p.text, a) for a in q.answers)]
                if candidates:
                    scores = ranker.scores(q.text, candidates)
                    best = max(range(len(candidates)), key=lambda i: scores[i])
                    examples.append(_example(q, candidates[best], OTHER_PAGE, read=read))
    for example in examples:
        report.counts[example.origin] = report.counts.get(example.origin, 0) + 1
    return examples, report


class ExamplesFileError(ValueError):
    """An examples file that cannot be read: not JSON lines, or a record without the SQuAD 2.0 fields."""


def _opener(path: Path):
    return gzip.open if str(path).endswith(".gz") else open


def write_examples(path: Path, examples: Sequence[QAExample]) -> None:
    """The examples as SQuAD 2.0 shaped JSON lines (gzip when the name ends in .gz): ``question``,
    ``context``, ``answers`` ({"text": [...], "answer_start": [...]}, empty for no answer),
    ``is_impossible``, plus ``title``, ``origin``, ``passage_start`` and ``golds``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _opener(path)(path, "wt", encoding="utf-8") as out:
        for e in examples:
            answers = {"text": [e.answer_text], "answer_start": [e.answer_start]} if e.answerable else \
                {"text": [], "answer_start": []}
            out.write(json.dumps({"question": e.question, "context": e.context, "answers": answers,
                                  "is_impossible": not e.answerable, "title": e.title, "origin": e.origin,
                                  "passage_start": e.passage_start, "golds": list(e.golds)},
                                 ensure_ascii=False) + "\n")


def read_examples(path: Path) -> list[QAExample]:
    """Examples written by ``write_examples`` (or any SQuAD 2.0 shaped JSON lines with those fields)."""
    path = Path(path)
    examples: list[QAExample] = []
    try:
        with _opener(path)(path, "rt", encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                    texts, starts = r["answers"]["text"], r["answers"]["answer_start"]
                    text, start = (texts[0], int(starts[0])) if texts else ("", -1)
                    if start >= 0 and r["context"][start:start + len(text)] != text:
                        raise ValueError("the answer is not at its answer_start")
                    examples.append(QAExample(r["question"], r["context"], text, start, r.get("title", ""),
                                              r.get("origin", ANSWER if texts else SAME_PAGE),
                                              int(r.get("passage_start", 0)),
                                              tuple(r.get("golds") or texts)))
                except (ValueError, KeyError, TypeError, IndexError) as exc:
                    raise ExamplesFileError(f"{path}, line {number}: not a SQuAD 2.0 example ({exc})") from exc
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise ExamplesFileError(f"{path}: cannot read ({exc})") from exc
    return examples


def example_report(examples: Sequence[QAExample]) -> ExampleReport:
    """What a set of examples read from a file holds (questions counted by their text)."""
    report = ExampleReport()
    report.questions = len({e.question for e in examples})
    report.used = len({e.question for e in examples if e.answerable})
    for example in examples:
        report.counts[example.origin] = report.counts.get(example.origin, 0) + 1
    return report
