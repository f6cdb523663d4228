"""The question log as the desk shows it: one row per question with its feedback, filters, groups, and the
answer rate over time. Reads the log with jarvis/questionlog (the same reader as `jarvis report`).

Players' questions and the admin's own are apart: the views show what players asked in game; questions asked
with `jarvis ask` in a terminal (origin "ask") are shown only in their own view ("terminal"), never among
the questions that need the admin.

A question that a taught answer answers now (jarvis/taught.py) is "taught": what was asked before the teaching
no longer needs the admin, and a taught answer is never "likely wrong" (the admin's word, confidence 1.0).

"Likely wrong" (the "needs you" view): an answer stated as fact whose confidence is below
``PanelSettings.likely_wrong_below``. The confidence model already weighs the retriever's margin between its
top pages and whether BM25 and the page vectors agree (jarvis/confidence/signals.py), so a stated answer just
above the answer threshold is one with a low margin or low agreement. How often the flag is right on a
question set: ``flag_precision`` over an eval run's per-question records (bench/likely_wrong.py).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable
from datetime import datetime, timedelta, timezone

from jarvis.confidence.policy import likely_wrong as policy_likely_wrong
from jarvis.question_text import normalize_question
from jarvis.questionlog import ReportError, read_log
from jarvis.questionlog.usage_report import parse_time
from jarvis.questionlog.usage_report import TERMINAL_ORIGIN, outcome

VIEWS = ("all", "needs", "unanswered", "wrong", "likely", "answered", "taught", "terminal")
VIEW_NAMES = {"all": "All", "needs": "Needs you", "unanswered": "Not answered", "wrong": "Marked wrong",
              "likely": "Likely wrong", "answered": "Answered", "taught": "Taught",
              "terminal": "Asked in the terminal"}
# question -> the taught answer that answers it now (its ``when``, an ISO time), or None
TaughtLookup = Callable[[str], "str | None"]


def likely_wrong(record: dict, below: float) -> bool:
    """A stated answer (not abstained, found) that the answer policy finds likely wrong (its confidence below
    ``below``; never a taught one)."""
    return outcome(record) == "answered" and policy_likely_wrong(record.get("rule", ""), record.get("confidence"),
                                                                 below)


def flag_precision(records: list[dict], below: float) -> dict:
    """How often the flag is right on an eval run's per-question records (``confidence``, ``abstained``,
    ``answer``, ``right_if_stated``): the share of flagged stated answers that are wrong, against the share of
    all stated answers that are wrong, and the share of wrong ones flagged."""
    stated = [r for r in records if r.get("answer") and not r.get("abstained") and "right_if_stated" in r]
    flagged = [r for r in stated if isinstance(r.get("confidence"), (int, float)) and r["confidence"] < below]
    wrong = [r for r in stated if not r["right_if_stated"]]
    flagged_wrong = [r for r in flagged if not r["right_if_stated"]]
    return {"stated": len(stated), "flagged": len(flagged), "wrong": len(wrong),
            "precision": round(len(flagged_wrong) / len(flagged), 3) if flagged else None,
            "base_rate": round(len(wrong) / len(stated), 3) if stated else None,
            "recall": round(len(flagged_wrong) / len(wrong), 3) if wrong else None}


@dataclass
class Row:
    """One logged question, with what players said about its answer."""

    id: str
    time: str
    at: datetime
    origin: str
    player: str | None          # as the log keeps it: a salted hash, or the name with [log] player_names
    question: str
    answer: str
    reply: str
    page: str
    site: str
    confidence: float | None
    outcome: str                # answered | unsure | unknown
    latency: float | None
    wrong: int = 0
    thanks: int = 0
    likely_wrong: bool = False
    taught_at: datetime | None = None   # when the taught answer that answers this question now was saved

    @property
    def terminal(self) -> bool:
        """Asked by the admin with `jarvis ask`, not by a player."""
        return self.origin == TERMINAL_ORIGIN

    @property
    def taught(self) -> bool:
        return self.taught_at is not None

    @property
    def needs_admin(self) -> bool:
        """A player's question not answered, marked wrong or likely wrong, and not answered by teaching since."""
        if self.terminal or (self.taught_at is not None and self.at <= self.taught_at):
            return False
        return self.outcome != "answered" or self.wrong > 0 or self.likely_wrong

    def to_json(self) -> dict:
        return {"id": self.id, "time": self.time, "origin": self.origin, "player": self.player,
                "question": self.question, "answer": self.answer, "reply": self.reply, "page": self.page,
                "site": self.site, "confidence": self.confidence, "outcome": self.outcome,
                "latency_s": self.latency, "feedback": {"wrong": self.wrong, "thanks": self.thanks},
                "likely_wrong": self.likely_wrong, "needs_admin": self.needs_admin, "taught": self.taught}


@dataclass
class Group:
    """The rows of one question (normalized), newest first."""

    key: str
    rows: list[Row]

    @property
    def question(self) -> str:
        return Counter(r.question for r in self.rows).most_common(1)[0][0]

    @property
    def latest(self) -> Row:
        return self.rows[0]

    @property
    def wrong(self) -> int:
        return sum(r.wrong for r in self.rows)

    def to_json(self) -> dict:
        return {"question": self.question, "count": len(self.rows), "wrong": self.wrong,
                "latest": self.latest.to_json()}


def load_rows(path, backups: int, likely_below: float, taught: TaughtLookup | None = None) -> tuple[list[Row], int]:
    """Every question of the log (oldest first) and the number of corrupt lines; no log yet: no rows.
    ``taught``: which questions a taught answer answers now (each question is looked up once)."""
    try:
        contents = read_log(path, backups)
    except ReportError:
        return [], 0
    taught_when: dict[str, datetime | None] = {}

    def taught_at(question: str) -> datetime | None:
        """The end of the second the answer was saved in (a taught answer's time is kept to the second)."""
        key = normalize_question(question)
        if key not in taught_when:
            when = parse_time(taught(question)) if taught is not None else None
            taught_when[key] = when + timedelta(seconds=1) if when is not None else None
        return taught_when[key]

    marks: dict[str, Counter] = defaultdict(Counter)
    for feedback in contents.feedback:
        marks[feedback["id"]][feedback["feedback"]] += 1
    rows = []
    for record in contents.questions:
        confidence = record.get("confidence")
        when_taught = taught_at(record["question"])
        rows.append(Row(
            id=record["id"], time=record["time"], at=record["_at"], origin=str(record.get("origin") or ""),
            player=record.get("player"), question=record["question"], answer=str(record.get("answer") or ""),
            reply=str(record.get("reply") or ""), page=str(record.get("page") or ""),
            site=str(record.get("site") or ""),
            confidence=float(confidence) if isinstance(confidence, (int, float)) and not isinstance(confidence, bool)
            else None,
            outcome=outcome(record), latency=record.get("latency_s"), wrong=marks[record["id"]]["wrong"],
            thanks=marks[record["id"]]["thanks"], taught_at=when_taught,
            likely_wrong=likely_wrong(record, likely_below) and when_taught is None))
    return rows, contents.corrupt


def select(rows: list[Row], view: str = "all", text: str = "", since: datetime | None = None, *,
           player: str = "", origin: str = "", page: str = "") -> list[Row]:
    """The rows of a view, holding ``text`` (in the question, answer, reply or page), newest first; ``player``,
    ``origin`` and ``page``: only those (exact, as the log keeps them; the page's case does not matter). Every
    view but "terminal" holds players' questions alone (``origin="ask"`` asks for the terminal's)."""
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}")
    wanted = text.casefold().strip()
    keep = {
        "all": lambda r: True,
        "needs": lambda r: r.needs_admin,
        "unanswered": lambda r: r.outcome != "answered",
        "wrong": lambda r: r.wrong > 0,
        "likely": lambda r: r.likely_wrong,
        "answered": lambda r: r.outcome == "answered",
        "taught": lambda r: r.taught,
        "terminal": lambda r: True,
    }[view]
    terminal = view == "terminal" or origin == TERMINAL_ORIGIN
    chosen = [r for r in rows if keep(r) and r.terminal == terminal and (since is None or r.at >= since)
              and (not wanted or any(wanted in part.casefold() for part in (r.question, r.answer, r.reply, r.page)))
              and (not player or r.player == player) and (not origin or r.origin == origin)
              and (not page or r.page.casefold() == page.casefold())]
    return sorted(chosen, key=lambda r: r.at)[::-1]      # newest first; of two in one millisecond, the later logged


def grouped(rows: list[Row]) -> list[Group]:
    """Rows (newest first) grouped by question, most asked first, then most recent."""
    groups: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        groups[normalize_question(row.question)].append(row)
    return sorted((Group(key, members) for key, members in groups.items()),
                  key=lambda g: (-len(g.rows), -g.latest.at.timestamp()))


def counts(rows: list[Row]) -> dict:
    """The players' questions of ``rows`` by outcome; the terminal's counted apart (``asked_in_terminal``)."""
    players = [r for r in rows if not r.terminal]
    outcomes = Counter(r.outcome for r in players)
    return {"questions": len(players), "answered": outcomes["answered"], "unsure": outcomes["unsure"],
            "unknown": outcomes["unknown"], "marked_wrong": sum(r.wrong > 0 for r in players),
            "likely_wrong": sum(r.likely_wrong for r in players), "needs_admin": sum(r.needs_admin for r in players),
            "taught": sum(r.taught for r in players), "asked_in_terminal": len(rows) - len(players)}


def buckets(rows: list[Row], now: datetime | None = None) -> tuple[str, list[dict]]:
    """The answer rate over time: per hour when the questions span two days or less, else per day."""
    if not rows:
        return "day", []
    now = now or datetime.now(timezone.utc)
    first = min(r.at for r in rows)
    hourly = now - first <= timedelta(days=2)
    step = timedelta(hours=1) if hourly else timedelta(days=1)

    def start(at: datetime) -> datetime:
        return at.replace(minute=0, second=0, microsecond=0) if hourly else at.replace(hour=0, minute=0, second=0,
                                                                                        microsecond=0)
    per: dict[datetime, list[Row]] = defaultdict(list)
    for row in rows:
        per[start(row.at.astimezone(timezone.utc))].append(row)
    out = []
    moment, last = start(first.astimezone(timezone.utc)), start(max(r.at for r in rows).astimezone(timezone.utc))
    while moment <= last:
        members = per.get(moment, [])
        answered = sum(r.outcome == "answered" for r in members)
        out.append({"start": moment.isoformat(timespec="minutes"),
                    "label": moment.strftime("%H:00") if hourly else moment.strftime("%m-%d"),
                    "questions": len(members), "answered": answered,
                    "answer_rate": round(answered / len(members), 4) if members else None})
        moment += step
    return ("hour" if hourly else "day"), out[-48:] if hourly else out[-60:]


def latencies(rows: list[Row]) -> list[float]:
    return sorted(float(r.latency) for r in rows if isinstance(r.latency, (int, float)))
