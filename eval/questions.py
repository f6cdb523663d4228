"""The question file: one question a line, ``question|expected page title|answer|answer|...``; ``#`` starts a comment."""
from __future__ import annotations

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
    return parse_questions(text, source=str(path))
