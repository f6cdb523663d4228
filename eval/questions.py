"""Question files.

- ``.txt`` (the design contract): one question a line, ``question|expected page title|answer|answer|...``;
  ``#`` starts a comment.
- ``.jsonl``: one JSON object a line, ``{"question", "page", "answers": [...]}`` and optionally ``"section"`` (the
  heading path of the passage that holds the golds; ``[]`` for the lead), ``"shape"`` (inverse, superlative,
  yesno, count, pair, riddle, blank, trivia, ...), ``"verdict"`` ("yes"/"no", yes/no questions), ``"pair"`` (the id
  two confusable questions share) and ``"writer"``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

# The question sets the evaluations use by default (`jarvis eval`, `jarvis eval --realbed`).
DEFAULT_QUESTIONS = Path(__file__).resolve().parent / "questions.txt"               # shipped with jarvis.eval
REALBED_QUESTIONS = Path(__file__).resolve().parent / "dev" / "realbed_dev.txt"     # in a checkout only (the lab's)


class QuestionFileError(Exception):
    """A question file that is missing or has a bad line (the message names the line)."""

    user_error = True


@dataclass(frozen=True)
class Question:
    text: str
    expected_title: str
    answers: tuple[str, ...]
    line: int
    shape: str = ""                          # the kind of question ("" when the file does not say)
    section: tuple[str, ...] | None = None   # the heading path of the passage holding the golds (None: unknown)
    verdict: str = ""                        # "yes" / "no" for a yes/no question
    writer: str = ""
    pair: str = ""                           # the id two confusable questions share


def parse_questions(text: str, source: str = "<questions>") -> list[Question]:
    questions = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw)
        if not line:
            continue
        fields = [f.strip() for f in line.split("|")]
        if len(fields) < 3:
            raise QuestionFileError(
                f"{source}:{lineno}: expected 'question|expected page|answer[|answer...]', got {raw.strip()!r}")
        question, title, *answers = fields
        answers = [a for a in answers if a]
        if not question or not title or not answers:
            raise QuestionFileError(f"{source}:{lineno}: empty question, page or answers in {raw.strip()!r}")
        questions.append(Question(question, title, tuple(answers), lineno))
    if not questions:
        raise QuestionFileError(f"{source}: no questions found")
    return questions


def parse_jsonl_questions(text: str, source: str = "<questions>") -> list[Question]:
    questions = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        try:
            item = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise QuestionFileError(f"{source}:{lineno}: not a JSON object ({exc.msg})") from None
        question, title = item.get("question") if isinstance(item, dict) else None, None
        if isinstance(item, dict):
            title = item.get("page") or item.get("title")
            answers = item.get("answers")
        if not isinstance(question, str) or not question.strip() or not isinstance(title, str) or not title.strip() \
                or not isinstance(answers, list) or not [a for a in answers if isinstance(a, str) and a.strip()]:
            raise QuestionFileError(f"{source}:{lineno}: expected {{\"question\", \"page\", \"answers\": [...]}}, "
                                    f"got {raw.strip()[:120]!r}")
        section = item.get("section")
        questions.append(Question(question.strip(), title.strip(), tuple(a.strip() for a in answers if isinstance(a, str) and a.strip()),
                                  lineno, shape=str(item.get("shape") or ""),
                                  section=tuple(section) if isinstance(section, list) else None,
                                  verdict=str(item.get("verdict") or ""), writer=str(item.get("writer") or ""),
                                  pair=str(item.get("pair") or "")))
    if not questions:
        raise QuestionFileError(f"{source}: no questions found")
    return questions


def _strip_comment(line: str) -> str:
    """A ``#`` preceded by whitespace starts a comment; one inside a word (e.g. 'C#') does not."""
    for i, ch in enumerate(line):
        if ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].strip()
    return line.strip()


def load_questions(path: str | Path) -> list[Question]:
    path = Path(path)
    if not path.is_file():
        raise QuestionFileError(f"question file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise QuestionFileError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    if path.suffix == ".jsonl":
        return parse_jsonl_questions(text, source=str(path))
    return parse_questions(text, source=str(path))
