"""`jarvis report`: the question log summarised for the admin.

What players asked, how much Jarvis answered, what it could not answer or got wrong, which pages it
read, how fast: as a Markdown report with a PNG chart (questions per day and answer rate), or JSON.

- answered: an answer stated as fact (found, and not abstained);
- unsure: Jarvis said it was not sure and pointed to a page (abstained: below the confidence threshold,
  or no answer on the pages it found); older logs without the field count a found answer as answered;
- unknown: no page at all ("I don't know"), or the question could not be asked;
- unanswered: the questions behind unsure and unknown, grouped (case, spacing and closing
  punctuation do not matter), most asked first; marked_wrong: the answers players marked
  "jarvis, wrong", grouped the same way;
- players: the players who asked in game (distinct, as the log names them: salted hashes by default).
- Players' questions and the admin's are apart: every count above (``questions`` first), the lists, the
  latency, the pages and the days are the players' (questions from the game, `serve` and the workers); the
  questions asked with ``jarvis ask`` in a terminal are only counted, as ``asked_in_terminal``: an admin's
  tests are no players' questions, and what they typed never reaches the questions not answered.

A line that is not a log record (cut short by a crash, edited by hand) is skipped and counted.
"""
from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tabulate import tabulate

from jarvis.percentiles import percentile
from jarvis.errors import JarvisError
from jarvis.question_text import normalize_question
from jarvis.questionlog.log import FEEDBACK_KINDS, rotated_paths

TOP = 20                       # rows of each list in the report
TERMINAL_ORIGIN = "ask"        # the log's origin of a question asked with `jarvis ask` (no player)
_SINCE = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
# What to do about the questions Jarvis could not answer (a front end may say it with its own commands).
UNANSWERED_REMEDY = "add a guide page or your players' words to the index"


class ReportError(JarvisError):
    """A report that cannot be made (no log, a bad ``since``)."""


@dataclass
class LogContents:
    questions: list[dict] = field(default_factory=list)
    feedback: list[dict] = field(default_factory=list)
    corrupt: int = 0                 # lines skipped: not a log record
    files: list[Path] = field(default_factory=list)


def read_log(path: str | Path, backups: int = 5) -> LogContents:
    """Every record of the log and its rotated files, oldest first; bad lines counted, not fatal."""
    path = Path(path)
    files = [p for p in rotated_paths(path, backups) if p.is_file()]
    if not files:
        raise ReportError(f"no question log at {path}: `jarvis serve` and `jarvis ask` write it "
                          "(unless logging is off)")
    contents = LogContents(files=files)
    for file in files:
        with file.open("rb") as fh:
            for raw in fh:
                if not raw.strip():
                    continue
                record = _record(raw)
                if record is None:
                    contents.corrupt += 1
                elif record["type"] == "question":
                    contents.questions.append(record)
                else:
                    contents.feedback.append(record)
    return contents


def _record(raw: bytes) -> dict | None:
    """A parsed, checked log line, its time as a datetime under "_at"; None when it is not one."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        return None
    when = parse_time(data.get("time"))
    if when is None:
        return None
    if data.get("type") == "question":
        if not isinstance(data.get("question"), str) or not isinstance(data.get("found"), bool):
            return None
        latency = data.get("latency_s")
        if latency is not None and not isinstance(latency, (int, float)):
            return None
    elif data.get("type") != "feedback" or data.get("feedback") not in FEEDBACK_KINDS:
        return None
    data["_at"] = when
    return data


def parse_time(text: object) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def parse_since(text: str, now: datetime) -> datetime | None:
    """'7d', '24h', '30m', '2w' before now, an ISO date ('2026-11-01'), or 'all' (None)."""
    if text.strip().lower() == "all":
        return None
    match = _SINCE.match(text)
    if match:
        return now - timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
    when = parse_time(text.strip())
    if when is None:
        raise ReportError(f"{text!r}: give a time span (7d, 24h, 30m, 2w), a date (2026-11-01) or all", setting="since")
    return when


def _grouped(records: list[dict], extra=None) -> list[dict]:
    """[{question, count, ...}] by normalized question, most first, the most common spelling shown."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        groups[normalize_question(record["question"])].append(record)
    rows = []
    for members in groups.values():
        spelling = Counter(m["question"] for m in members).most_common(1)[0][0]
        row = {"question": spelling, "count": len(members)}
        if extra is not None:
            row.update(extra(members))
        rows.append(row)
    rows.sort(key=lambda r: (-r["count"], r["question"].casefold()))
    return rows


def _latency(values: list[float], share: float) -> float | None:
    """A latency percentile (jarvis.percentiles) in ms precision; None for no questions."""
    return round(percentile(values, share), 3) if values else None


def outcome(record: dict) -> str:
    """'answered', 'unsure' or 'unknown' (see the module docstring)."""
    if not record.get("found") and not record.get("page"):
        return "unknown"
    if record.get("abstained") is True:
        return "unsure"
    return "answered" if record.get("found") else "unknown"


@dataclass
class UsageReport:
    since: datetime | None
    until: datetime
    data: dict

    def to_json(self) -> dict:
        return self.data

    def markdown(self, chart_name: str | None = None, remedy: str = UNANSWERED_REMEDY) -> str:
        """The report for people; ``remedy``: what to do about the questions not answered."""
        d = self.data
        window = (f"{d['since']} to {d['until']}" if d["since"] else f"everything logged, to {d['until']}")
        share = (lambda n: f"{n} ({n / d['questions']:.0%})") if d["questions"] else str
        lines = ["# Jarvis: what players asked", "",
                 f"- Window: {window} (UTC)",
                 f"- Log: {', '.join(d['files'])}" + (f"; {d['corrupt_lines']} corrupt line(s) skipped"
                                                       if d["corrupt_lines"] else ""), "",
                 tabulate([["questions", d["questions"]], ["answered", share(d["answered"])],
                           ["unsure (not stated as fact)", share(d["unsure"])], ["unknown", share(d["unknown"])],
                           ["marked wrong", d["wrong_marks"]], ["thanked", d["thanks"]],
                           ["players in game", d["players"] if d["questions"] else "—"],
                           *([["asked with `jarvis ask` in a terminal (not counted above)", d["asked_in_terminal"]]]
                             if d["asked_in_terminal"] else []),
                           ["latency p50 / p95", _seconds(d["latency"]["p50"]) + " / " + _seconds(d["latency"]["p95"])]],
                          headers=["", ""], tablefmt="github"), ""]
        lines += ["## Questions not answered", "",
                  f"What Jarvis could not answer, or would not state as fact: {remedy}.", ""]
        lines += [_table(d["unanswered"], ["question", "count"]) if d["unanswered"] else "None.", ""]
        lines += ["## Answers marked wrong", "", "Players said \"jarvis, wrong\" within a minute of these answers.", ""]
        lines += [_table(d["marked_wrong"], ["question", "count", "answer", "page"]) if d["marked_wrong"]
                  else "None.", ""]
        lines += ["## Most-read pages", ""]
        lines += [_table(d["pages"], ["page", "site", "count"]) if d["pages"] else "None.", ""]
        lines += ["## Per day", ""]
        if chart_name:
            lines += [f"![questions per day and answer rate]({chart_name})", ""]
        lines += [_table([{**row, "answer_rate": f"{row['answer_rate']:.0%}"} for row in d["per_day"]],
                         ["date", "questions", "answered", "answer_rate"]) if d["per_day"] else "None.", ""]
        return "\n".join(lines)

    def write_chart(self, path: Path) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        days = self.data["per_day"]
        fig, ax = plt.subplots(figsize=(max(6.0, 0.5 * len(days) + 3), 3.6))
        xs = list(range(len(days)))
        ax.bar(xs, [d["questions"] for d in days], color="#4c72b0", label="questions")
        ax.bar(xs, [d["answered"] for d in days], color="#55a868", label="answered", width=0.5)
        ax.set_ylabel("questions")
        ax.set_xticks(xs, [d["date"][5:] for d in days], rotation=45 if len(days) > 10 else 0, fontsize=8)
        rate = ax.twinx()
        rate.plot(xs, [d["answer_rate"] for d in days], color="#c44e52", marker="o", label="answer rate")
        rate.set_ylim(0, 1.05)
        rate.set_ylabel("answer rate")
        handles = ax.get_legend_handles_labels()[0] + rate.get_legend_handles_labels()[0]
        ax.legend(handles, [h.get_label() for h in handles], loc="upper left", fontsize=8)
        ax.set_title(f"Jarvis: questions per day ({self.data['questions']} in all)", fontsize=10)
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=110)
        plt.close(fig)

    def write_all(self, out_dir: Path, remedy: str = UNANSWERED_REMEDY) -> list[Path]:
        """report.md, chart.png and report.json into out_dir (``remedy``: as for ``markdown``)."""
        out_dir.mkdir(parents=True, exist_ok=True)
        paths = [out_dir / "report.md", out_dir / "chart.png", out_dir / "report.json"]
        paths[0].write_text(self.markdown(chart_name=paths[1].name, remedy=remedy), encoding="utf-8")
        self.write_chart(paths[1])
        paths[2].write_text(json.dumps(self.data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return paths


def build_report(contents: LogContents, since: datetime | None, until: datetime | None = None) -> UsageReport:
    """The report of the questions logged from since (None: all) to until (default: now)."""
    until = until or datetime.now(timezone.utc)
    window = [q for q in contents.questions if (since is None or q["_at"] >= since) and q["_at"] <= until]
    inside = [q for q in window if q.get("origin") != TERMINAL_ORIGIN]       # players' questions
    by_id = {q["id"]: q for q in contents.questions}
    outcomes = Counter(outcome(q) for q in inside)
    window_ids = {q["id"] for q in inside}
    wrong = [f for f in contents.feedback if f["feedback"] == "wrong" and f["id"] in window_ids]
    thanks = [f for f in contents.feedback if f["feedback"] == "thanks" and f["id"] in window_ids]
    latencies = sorted(float(q["latency_s"]) for q in inside if q.get("latency_s") is not None)
    pages = Counter((q.get("page") or "", q.get("site") or "") for q in inside if q.get("found") and q.get("page"))
    per_day: dict[str, list[dict]] = defaultdict(list)
    for q in inside:
        per_day[q["_at"].date().isoformat()].append(q)

    def last_answer(members: list[dict]) -> dict:
        return {"answer": members[-1].get("answer", ""), "page": members[-1].get("page", "")}

    data = {
        "since": since.isoformat(timespec="seconds") if since else None,
        "until": until.isoformat(timespec="seconds"),
        "questions": len(inside),
        "answered": outcomes["answered"],
        "unsure": outcomes["unsure"],
        "unknown": outcomes["unknown"],
        "unanswered": _grouped([q for q in inside if outcome(q) != "answered"])[:TOP * 5],
        "marked_wrong": _grouped([by_id[f["id"]] for f in wrong], last_answer)[:TOP * 5],
        "wrong_marks": len(wrong),
        "thanks": len(thanks),
        "players": len({q.get("player") for q in inside if q.get("player")}),
        "asked_in_terminal": len(window) - len(inside),
        "latency": {"p50": _latency(latencies, 0.5), "p95": _latency(latencies, 0.95)},
        "pages": [{"page": page, "site": site, "count": n} for (page, site), n in pages.most_common(TOP)],
        "per_day": [{"date": day, "questions": len(qs), "answered": sum(outcome(q) == "answered" for q in qs),
                     "answer_rate": round(sum(outcome(q) == "answered" for q in qs) / len(qs), 4)}
                    for day, qs in sorted(per_day.items())],
        "corrupt_lines": contents.corrupt,
        "files": [str(p) for p in contents.files],
    }
    return UsageReport(since, until, data)


def _table(rows: list[dict], keys: list[str]) -> str:
    return tabulate([[_cell(row.get(k, "")) for k in keys] for row in rows[:TOP]], headers=keys, tablefmt="github")


def _cell(value: object) -> str:
    text = str(value).replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= 80 else text[:77] + "..."


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} s"
