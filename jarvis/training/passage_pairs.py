"""Training examples for the retrieval models (the passage encoder and the reranker), from questions with gold
spans and the index that will answer them.

For each question:

- **the positive**: the passage of the question's page that holds a gold span (in the section the question file
  names, when it names one; the one BM25 ranks best when several hold it; for a question whose gold is the page's
  own name, such as "which mob shoots bullets that make you float?", the first passage of the named section);
- **hard negatives**: the passages the index ranks best for the question that hold no gold span (BM25F alone, from
  a lexical index, for the encoder; the full hybrid ranking, for the reranker), skipping any passage of the
  question's page in the question's own section, which may say the same thing in other words.

Every text is what the models read at run time: the question as the index searches it (``IndexSnapshot.
query(question).words``: chat spelling, typos and players' words read as the index reads them) and each passage as
``index.passages.passage_text`` writes it ("Cow > Drops: ...").

    examples, report = build_pair_examples(questions, pages, snapshot, negatives=7, depth=30)
    write_pair_examples(examples, "pairs.jsonl.gz")          # trained on elsewhere: read_pair_examples
"""
from __future__ import annotations

import gzip
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

from jarvis.index.passages import passage_text
from jarvis.training.examples import find_span


@dataclass(frozen=True)
class PairQuestion:
    """A question with its page, gold spans and (when the file says) the section of its passage."""

    text: str
    title: str
    answers: tuple[str, ...]
    section: tuple[str, ...] | None = None
    source: str = ""            # the question file's name: examples are grouped by writer
    shape: str = ""
    verdict: str = ""           # "yes" / "no": what the gold passage says to a yes/no question


@dataclass(frozen=True)
class PairExample:
    """One question as retrieval searches it, its gold passage and the best passages that do not answer it."""

    question: str
    positive: str
    negatives: tuple[str, ...]
    title: str
    source: str = ""
    shape: str = ""
    verdict: str = ""           # a yes/no question's answer, as its positive passage settles it ("" otherwise)


@dataclass
class PairReport:
    questions: int = 0
    used: int = 0
    no_page: list[str] = field(default_factory=list)
    no_passage: list[str] = field(default_factory=list)
    positive_rank: list[int] = field(default_factory=list)   # where the index ranked the positive (-1: not in depth)

    def summary(self) -> str:
        found = [r for r in self.positive_rank if r >= 0]
        share = len(found) / len(self.positive_rank) if self.positive_rank else 0.0
        return (f"{self.used} of {self.questions} questions used; {len(self.no_page)} without their page in the corpus, "
                f"{len(self.no_passage)} without a passage holding a gold; the index ranked the positive within its "
                f"candidates for {share:.1%}")


def gold_paragraphs(page, question: PairQuestion) -> list[int]:
    """The paragraphs of ``page`` that answer ``question``: those holding a gold span (in its section when it names
    one); failing that, for a question whose gold is the page's own name, the paragraphs of the named section."""
    sections = page.sections or [[] for _ in page.paragraphs]
    holding = [i for i, text in enumerate(page.paragraphs) if any(find_span(text, a) for a in question.answers)]
    if question.section is None:
        return holding
    in_section = [i for i in holding if tuple(sections[i]) == question.section]
    if in_section:
        return in_section
    names = {page.title.casefold(), *(alias.casefold() for alias in page.aliases)}
    if any(a.casefold() in names for a in question.answers):
        return [i for i, path in enumerate(sections) if tuple(path) == question.section]
    return holding


def build_pair_examples(questions: Sequence[PairQuestion], pages: Sequence, snapshot, negatives: int = 7,
                        depth: int = 30, progress: bool = True) -> tuple[list[PairExample], PairReport]:
    """The examples of ``questions`` (see the module docstring); ``snapshot``: an index.IndexSnapshot of a passage
    index over ``pages`` (crawler.corpus.Page)."""
    from tqdm import tqdm

    by_title = {page.title: page for page in pages}
    report, examples = PairReport(questions=len(questions)), []
    for question in tqdm(questions, desc="retrieval examples", unit="question", disable=not progress,
                         dynamic_ncols=True):
        page = by_title.get(question.title)
        if page is None:
            report.no_page.append(question.title)
            continue
        golds = set(gold_paragraphs(page, question))
        if not golds:
            report.no_passage.append(question.text)
            continue
        query = snapshot.query(question.text)
        hits = snapshot.passages(query, depth)
        ranked_golds = [h.index for h in hits if h.title == page.title and h.index in golds]
        positive = ranked_golds[0] if ranked_golds else min(golds)
        report.positive_rank.append(next((r for r, h in enumerate(hits) if h.title == page.title and h.index in golds),
                                         -1))
        sections = page.sections or [[] for _ in page.paragraphs]
        chosen: list[str] = []
        for hit in hits:
            if hit.title == page.title and (hit.index in golds or tuple(sections[hit.index]) == question.section):
                continue
            if any(find_span(hit.text, a) for a in question.answers):
                continue      # another page saying the same thing is no negative
            chosen.append(passage_text(hit.title, hit.section, hit.text))
            if len(chosen) == negatives:
                break
        examples.append(PairExample(query.words,
                                    passage_text(page.title, sections[positive], page.paragraphs[positive]),
                                    tuple(chosen), page.title, question.source, question.shape, question.verdict))
        report.used += 1
    return examples, report


def write_pair_examples(examples: Sequence[PairExample], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for example in examples:
            fh.write(json.dumps(asdict(example), ensure_ascii=False) + "\n")
    return path


def read_pair_examples(path: str | Path) -> list[PairExample]:
    with gzip.open(Path(path), "rt", encoding="utf-8") as fh:
        return [PairExample(**{**item, "negatives": tuple(item["negatives"])}) for item in map(json.loads, fh)]


VERDICTS = ("yes", "no")
