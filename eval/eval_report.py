"""Evaluation results and their outputs: terminal table, JSON, Markdown report, PNG chart, per-question CSV."""
from __future__ import annotations

import csv
import json
import platform
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from tabulate import tabulate

from jarvis.percentiles import percentile
from jarvis.eval.players_view import PlayersView, calibration_error, risk_coverage, write_trust_chart

IR, QA, FULL = "ir", "qa", "full"
EVALUATION_LABELS = {IR: "IR top-3", QA: "QA (page given)", FULL: "Full system"}


@dataclass
class QuestionResult:
    line: int
    question: str
    expected_title: str
    answer: str = ""            # QA / full: the reader's answer
    answer_title: str = ""      # page the answer came from
    retrieved: list[str] = field(default_factory=list)  # IR / full: titles of the top pages
    hit: bool = False           # IR: expected page in the top 3
    f1: float = 0.0
    em: float = 0.0
    seconds: float = 0.0
    # The player's view (eval/players_view.py): filled for QA and full records, summarised for full systems.
    confidence: float = 0.0     # the estimated probability that the answer is right
    abstained: bool = True      # not stated as fact (Jarvis said it was not sure, or did not know)
    reply: str = ""             # what the chat showed
    sentence: str = ""          # the sentence the answer was read in
    right_if_stated: bool = False   # the answer, had it been stated, would be right (metrics.is_right)
    verdict: str = ""           # right, wrong, unsure-expected, unsure-other or unknown


@dataclass
class ConfigResult:
    """One configuration of one evaluation, e.g. ('full', 'tuned index + fallback:minilm')."""

    evaluation: str             # IR, QA or FULL (the JSON key is "kind")
    name: str
    description: str = ""
    ran: bool = True
    not_run_reason: str = ""
    questions: list[QuestionResult] = field(default_factory=list)
    total_seconds: float = 0.0
    default: bool = False       # the configuration `jarvis ask` uses; feeds the headline keys

    @property
    def n(self) -> int:
        return len(self.questions)

    @property
    def score(self) -> float | None:
        """IR: top-3 accuracy; QA and full: mean F1."""
        if not self.ran or not self.questions:
            return None
        values = [q.hit for q in self.questions] if self.evaluation == IR else [q.f1 for q in self.questions]
        return sum(values) / len(values)

    @property
    def em(self) -> float | None:
        if not self.ran or not self.questions or self.evaluation == IR:
            return None
        return sum(q.em for q in self.questions) / len(self.questions)

    def latency(self, quantile: float) -> float | None:
        if not self.ran or not self.questions:
            return None
        return percentile([q.seconds for q in self.questions], quantile)

    def players_view(self) -> PlayersView | None:
        """Right, wrong and unsure replies of a full-system configuration that ran (what players see; with
        the page given, the confidence lacks its retrieval signals and says nothing a player would see)."""
        if not self.ran or self.evaluation != FULL or not self.questions:
            return None
        return PlayersView.of(self.questions)

    def summary(self) -> dict:
        view = self.players_view()
        return {"kind": self.evaluation, "name": self.name, "description": self.description, "ran": self.ran,
                "not_run_reason": self.not_run_reason, "n": self.n, "score": self.score, "em": self.em,
                "total_seconds": round(self.total_seconds, 3),
                "p50_seconds": _round(self.latency(0.5)), "p95_seconds": _round(self.latency(0.95)),
                "default": self.default,
                "players_view": None if view is None else {
                    **view.to_json(), "calibration_error": _round(calibration_error(self.questions))}}


TRUST_CHART = "trust.png"


def _thin(curve: list[tuple[float, float, float]], points: int = 12) -> list[tuple[float, float, float]]:
    """About ``points`` points of a risk–coverage curve, evenly spread over coverage, the last one kept."""
    if len(curve) <= points:
        return curve
    step = len(curve) / points
    return [curve[min(len(curve) - 1, round(i * step))] for i in range(points)] + [curve[-1]]


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def _fmt(value: float | None, pattern: str) -> str:
    return "—" if value is None else format(value, pattern)


@dataclass
class EvalReport:
    questions_file: str
    configs: list[ConfigResult]
    measured_at: str = field(default_factory=lambda: datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    machine: str = field(default_factory=lambda: describe_machine())

    def headline(self, evaluation: str) -> float | None:
        config = self.default_config(evaluation)
        return config.score if config is not None else None

    def default_config(self, evaluation: str) -> ConfigResult | None:
        return next((c for c in self.configs if c.evaluation == evaluation and c.default and c.ran), None)

    def players_view_rows(self) -> list[list[str]]:
        rows = []
        for c in self.configs:
            view = c.players_view()
            if view is None:
                continue
            counts = view.counts
            rows.append([EVALUATION_LABELS[c.evaluation], c.name + (" *" if c.default else ""), view.n, counts["right"],
                         counts["wrong"], counts["unsure-expected"], counts["unsure-other"], counts["unknown"],
                         _fmt(view.precision, ".3f"), _fmt(view.coverage, ".3f"),
                         _fmt(view.unsure_points_to_expected, ".3f"), _fmt(calibration_error(c.questions), ".3f")])
        return rows

    PLAYERS_VIEW_HEADERS = ["evaluation", "configuration", "n", "right", "wrong", "unsure → expected page",
                            "unsure → other page", "don't know", "precision", "coverage",
                            "unsure → expected share", "max calibration gap"]

    @property
    def n(self) -> int:
        return max((c.n for c in self.configs), default=0)

    # ---------------------------------------------------------------- outputs

    def rows(self) -> list[list[str]]:
        rows = []
        for c in self.configs:
            name = c.name + (" *" if c.default else "")
            if not c.ran:
                rows.append([EVALUATION_LABELS[c.evaluation], name, "not run", "", "", "", "", c.not_run_reason])
                continue
            metric = f"acc {c.score:.3f}" if c.evaluation == IR else f"F1 {c.score:.3f}"
            rows.append([EVALUATION_LABELS[c.evaluation], name, metric, _fmt(c.em, ".3f"), f"{c.total_seconds:.1f}",
                         _fmt(c.latency(0.5), ".3f"), _fmt(c.latency(0.95), ".3f"), c.description])
        return rows

    HEADERS = ["evaluation", "configuration", "score", "EM", "total s", "p50 s", "p95 s", "notes"]

    def table(self) -> str:
        head = f"Jarvis evaluation: {self.n} questions from {self.questions_file} ({self.measured_at}, {self.machine})"
        return head + "\n" + tabulate(self.rows(), headers=self.HEADERS, tablefmt="simple") + \
            "\n* = the default configuration (what `jarvis ask` uses)"

    def to_json(self) -> dict:
        return {
            "ir_top3_accuracy": self.headline(IR),
            "qa_f1": self.headline(QA),
            "full_f1": self.headline(FULL),
            "n": self.n,
            # What players see from the default full system: precision of stated answers, coverage, unsure.
            "players_view": (self.default_config(FULL).summary()["players_view"]
                             if self.default_config(FULL) is not None else None),
            "questions_file": self.questions_file,
            "measured_at": self.measured_at,
            "machine": self.machine,
            "configurations": [c.summary() for c in self.configs],
            "per_question": {f"{c.evaluation}:{c.name}": [asdict(q) for q in c.questions] for c in self.configs if c.ran},
        }

    def write_json(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    def write_csv(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(["evaluation", "configuration", "line", "question", "expected_title", "hit",
                             "retrieved", "answer", "answer_title", "f1", "em", "seconds", "confidence",
                             "abstained", "verdict", "reply"])
            for c in self.configs:
                for q in c.questions:
                    writer.writerow([c.evaluation, c.name, q.line, q.question, q.expected_title, int(q.hit),
                                     " ; ".join(q.retrieved), q.answer, q.answer_title, f"{q.f1:.4f}",
                                     f"{q.em:.0f}", f"{q.seconds:.4f}", f"{q.confidence:.4f}",
                                     int(q.abstained), q.verdict, q.reply])

    def write_markdown(self, path: Path, chart_name: str = "chart.png") -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [
            "# Jarvis evaluation report", "",
            f"- Questions: {self.n} from `{self.questions_file}`",
            f"- Measured: {self.measured_at} on {self.machine}",
            "- IR: is the expected page (or one of its aliases) in the top 3? QA: the reader is given the expected "
            "page; SQuAD-style F1 and exact match, max over the gold answers. Full system: retrieval + reader.",
            "- `*` marks the default configuration (what `jarvis ask` uses).", "",
            tabulate(self.rows(), headers=self.HEADERS, tablefmt="github"), "",
            f"![accuracy, F1 and latency per configuration]({chart_name})", "",
        ]
        view_rows = self.players_view_rows()
        if view_rows:
            lines += ["## The player's view", "",
                      "Every reply as a player reads it: **right** (stated, F1 ≥ 0.5 or a gold answer of two or "
                      "more words in the answer and its sentence), **wrong** (stated, not right), **unsure** (Jarvis said it was "
                      "not sure and pointed to a page: the expected one or another), **don't know** (no page). "
                      "Precision: right / stated; coverage: stated / all. The calibration gap: the largest "
                      "|mean confidence − right rate| over the confidence bins of width 0.2 holding ≥ 10 answers.",
                      "", tabulate(view_rows, headers=self.PLAYERS_VIEW_HEADERS, tablefmt="github"), ""]
            full = self.default_config(FULL)
            if full is not None and full.players_view() is not None:
                lines += [f"![risk–coverage and reliability of the default full system]({TRUST_CHART})", "",
                          "Risk–coverage of the default full system (threshold → coverage, precision):", "",
                          tabulate([[f"{t:.2f}", f"{cov:.3f}", f"{prec:.3f}"]
                                    for t, cov, prec in _thin(risk_coverage(full.questions))],
                                   headers=["threshold", "coverage", "precision"], tablefmt="github"), ""]
        misses = [(c, q) for c in self.configs if c.default and c.ran for q in c.questions
                  if (c.evaluation == IR and not q.hit) or (c.evaluation != IR and q.f1 < 0.5)]
        if misses:
            lines += ["## Misses of the default configurations", "",
                      tabulate([[EVALUATION_LABELS[c.evaluation], q.line, q.question, q.expected_title,
                                 " ; ".join(q.retrieved) if c.evaluation == IR else q.answer, f"{q.f1:.2f}"]
                                for c, q in misses],
                               headers=["evaluation", "line", "question", "expected", "got", "F1"],
                               tablefmt="github"), ""]
        path.write_text("\n".join(lines), encoding="utf-8")

    def write_chart(self, path: Path) -> None:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt

        ran = [c for c in self.configs if c.ran]
        labels = [f"{EVALUATION_LABELS[c.evaluation]}\n{c.name}" for c in ran]
        colors = {IR: "#4c72b0", QA: "#55a868", FULL: "#c44e52"}
        fig, (ax_score, ax_time) = plt.subplots(1, 2, figsize=(13, 0.55 * len(ran) + 1.8), sharey=True)
        ys = range(len(ran))
        ax_score.barh(ys, [c.score for c in ran], color=[colors[c.evaluation] for c in ran])
        for y, c in zip(ys, ran):
            ax_score.text(min(c.score + 0.01, 0.9), y, f"{c.score:.2f}", va="center", fontsize=8)
        ax_score.set_xlim(0, 1)
        ax_score.set_xlabel("IR top-3 accuracy / F1")
        ax_score.set_yticks(list(ys), labels, fontsize=8)
        ax_score.invert_yaxis()
        ax_time.barh(ys, [c.latency(0.5) for c in ran], color=[colors[c.evaluation] for c in ran], alpha=0.6,
                     label="p50")
        ax_time.scatter([c.latency(0.95) for c in ran], list(ys), color="black", marker="|", s=120, label="p95")
        ax_time.set_xscale("log")
        ax_time.set_xlabel("seconds per question (log)")
        ax_time.legend(loc="lower right", fontsize=8)
        fig.suptitle(f"Jarvis evaluation, {self.n} questions ({self.measured_at})", fontsize=10)
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=110)
        plt.close(fig)

    def write_all(self, out_dir: Path, json_path: Path | None = None) -> list[Path]:
        out_dir.mkdir(parents=True, exist_ok=True)
        paths = [out_dir / "report.md", out_dir / "chart.png", out_dir / "questions.csv", out_dir / "results.json"]
        self.write_markdown(paths[0])
        self.write_chart(paths[1])
        self.write_csv(paths[2])
        self.write_json(paths[3])
        full = self.default_config(FULL)
        if full is not None and full.players_view() is not None:
            paths.append(out_dir / TRUST_CHART)
            threshold = min((q.confidence for q in full.questions if not q.abstained), default=None)
            write_trust_chart(full.questions, paths[-1], f"Jarvis, {full.name}: {full.n} questions from "
                              f"{self.questions_file}", threshold)
        if json_path is not None and json_path.resolve() != paths[3].resolve():
            self.write_json(json_path)
            paths.append(json_path)
        return paths


def describe_machine() -> str:
    import os

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {cpu}, {platform.system()} {platform.machine()}, Python {platform.python_version()}"
