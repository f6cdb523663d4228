"""The player's view of a question set: what Jarvis stated and whether it was right, where it said it was
not sure, and how well its confidence tells the two apart.

Every question gets a verdict:

- ``right``: stated as fact, and right (``eval.metrics.is_right``: F1 >= 0.5, or a gold answer of two
  or more words in what it states: the answer and its sentence);
- ``wrong``: stated as fact, and not right;
- ``unsure-expected``: not stated (below the threshold, or no answer), pointing to the expected page;
- ``unsure-other``: not stated, pointing to another page;
- ``unknown``: "I don't know", no page at all.

From them: the **precision** of stated answers (right / stated), the **coverage** (stated / all), and how
often an unsure reply points to the expected page. The **risk–coverage curve** sweeps the threshold over
every confidence: at each, what share is stated and how much of it is right (each answer judged as if
stated, ``right_if_stated``). The **reliability diagram** puts answers in confidence bins and compares each
bin's mean confidence with its right rate: a calibrated confidence lies on the diagonal.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from jarvis.confidence.policy import stated

RIGHT, WRONG, UNSURE_EXPECTED, UNSURE_OTHER, UNKNOWN = "right", "wrong", "unsure-expected", "unsure-other", "unknown"
VERDICTS = (RIGHT, WRONG, UNSURE_EXPECTED, UNSURE_OTHER, UNKNOWN)
BIN_WIDTH = 0.2          # the reliability diagram's bins (the calibration target is stated for these)
MIN_BIN = 10             # bins with fewer answers are shown but not judged


def verdict(stated: bool, right_if_stated: bool, has_page: bool, points_to_expected: bool) -> str:
    """One question's verdict (see the module docstring)."""
    if stated:
        return RIGHT if right_if_stated else WRONG
    if not has_page:
        return UNKNOWN
    return UNSURE_EXPECTED if points_to_expected else UNSURE_OTHER


@dataclass(frozen=True)
class Judged:
    """What the player's view needs of one question (jarvis.eval.eval_report.QuestionResult fits)."""

    answer: str             # the best span ("" when the reader found none)
    confidence: float
    abstained: bool
    right_if_stated: bool
    verdict: str


@dataclass(frozen=True)
class PlayersView:
    n: int
    counts: dict[str, int]

    @classmethod
    def of(cls, results: Sequence) -> "PlayersView":
        counts = {v: 0 for v in VERDICTS}
        for result in results:
            counts[result.verdict] = counts.get(result.verdict, 0) + 1
        return cls(len(results), counts)

    @property
    def stated(self) -> int:
        return self.counts[RIGHT] + self.counts[WRONG]

    @property
    def precision(self) -> float | None:
        """Of the answers stated as fact, the share that is right."""
        return self.counts[RIGHT] / self.stated if self.stated else None

    @property
    def coverage(self) -> float | None:
        """The share of questions that got an answer stated as fact."""
        return self.stated / self.n if self.n else None

    @property
    def unsure_points_to_expected(self) -> float | None:
        """Of the unsure replies, the share that points to the expected page."""
        unsure = self.counts[UNSURE_EXPECTED] + self.counts[UNSURE_OTHER]
        return self.counts[UNSURE_EXPECTED] / unsure if unsure else None

    def to_json(self) -> dict:
        return {"n": self.n, **{v.replace("-", "_"): c for v, c in self.counts.items()},
                "stated": self.stated, "precision": _round(self.precision), "coverage": _round(self.coverage),
                "unsure_points_to_expected": _round(self.unsure_points_to_expected)}


def risk_coverage(results: Sequence) -> list[tuple[float, float, float]]:
    """(threshold, coverage, precision) for a threshold at every distinct confidence, highest first: what
    the answer policy would state at that threshold (jarvis.confidence.stated), and how much of it would be
    right. Questions without an answer are never stated."""
    answered = [(r.confidence, r.right_if_stated) for r in results if _answered(r)]
    curve = []
    for threshold in sorted({confidence for confidence, _ in answered}, reverse=True):
        said = [is_right for confidence, is_right in answered if stated(True, confidence, threshold)]
        curve.append((threshold, len(said) / len(results), sum(said) / len(said)))
    return curve


def threshold_for(results: Sequence, precision: float) -> tuple[float, float, float] | None:
    """The lowest threshold whose stated answers are at least ``precision`` right, with the most coverage:
    (threshold, coverage, precision), or None when no threshold reaches it."""
    reaching = [point for point in risk_coverage(results) if point[2] >= precision]
    return max(reaching, key=lambda point: (point[1], -point[0])) if reaching else None


@dataclass(frozen=True)
class Bin:
    low: float
    high: float
    n: int
    mean_confidence: float | None
    right_rate: float | None

    @property
    def gap(self) -> float | None:
        """|mean confidence - right rate|, judged only for bins of at least MIN_BIN answers."""
        if self.n < MIN_BIN or self.mean_confidence is None:
            return None
        return abs(self.mean_confidence - self.right_rate)


def reliability(results: Sequence, width: float = BIN_WIDTH) -> list[Bin]:
    """Confidence bins of ``width`` over [0, 1] (the last one closed), with their mean confidence and right rate."""
    edges = [round(i * width, 6) for i in range(int(round(1 / width)) + 1)]
    bins = []
    answered = [r for r in results if _answered(r)]
    for low, high in zip(edges, edges[1:]):
        inside = [r for r in answered if low <= r.confidence < high or (high >= 1 and r.confidence == 1)]
        n = len(inside)
        bins.append(Bin(low, high, n, sum(r.confidence for r in inside) / n if n else None,
                        sum(r.right_if_stated for r in inside) / n if n else None))
    return bins


def calibration_error(results: Sequence, width: float = BIN_WIDTH) -> float | None:
    """The largest |mean confidence - right rate| over the bins that hold at least MIN_BIN answers."""
    gaps = [b.gap for b in reliability(results, width) if b.gap is not None]
    return max(gaps) if gaps else None


def write_trust_chart(results: Sequence, path, title: str, threshold: float | None = None) -> None:
    """Two panels: the risk–coverage curve (precision of what is stated against coverage, the threshold
    marked) and the reliability diagram (right rate against mean confidence per bin)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_rc, ax_rel) = plt.subplots(1, 2, figsize=(11, 4.3))
    curve = risk_coverage(results)
    if curve:
        ax_rc.plot([c for _, c, _ in curve], [p for _, _, p in curve], color="#4c72b0")
        if threshold is not None:
            stated = [point for point in curve if point[0] >= threshold]
            if stated:
                _, coverage, precision = stated[-1]
                ax_rc.scatter([coverage], [precision], color="#c44e52", zorder=3,
                              label=f"threshold {threshold:.2f}: coverage {coverage:.2f}, precision {precision:.2f}")
                ax_rc.legend(loc="lower left", fontsize=8)
    ax_rc.axhline(0.8, color="grey", linewidth=0.8, linestyle=":")
    ax_rc.set_xlim(0, 1)
    ax_rc.set_ylim(0, 1.02)
    ax_rc.set_xlabel("coverage (share of questions stated)")
    ax_rc.set_ylabel("precision (share of stated answers right)")
    ax_rc.set_title("risk–coverage", fontsize=10)

    bins = [b for b in reliability(results) if b.n]
    ax_rel.plot([0, 1], [0, 1], color="grey", linewidth=0.8, linestyle=":")
    ax_rel.bar([(b.low + b.high) / 2 for b in bins], [b.right_rate for b in bins], width=BIN_WIDTH * 0.9,
               color="#55a868", alpha=0.6, label="right rate")
    ax_rel.scatter([b.mean_confidence for b in bins], [b.right_rate for b in bins], color="black", zorder=3,
                   label="(mean confidence, right rate)")
    for b in bins:
        ax_rel.text((b.low + b.high) / 2, min(0.97, (b.right_rate or 0) + 0.03), f"n={b.n}", ha="center", fontsize=7)
    ax_rel.set_xlim(0, 1)
    ax_rel.set_ylim(0, 1.02)
    ax_rel.set_xlabel("confidence")
    ax_rel.set_ylabel("right rate")
    ax_rel.set_title("reliability (bins of 0.2)", fontsize=10)
    ax_rel.legend(loc="upper left", fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _answered(result) -> bool:
    """Whether the reader found an answer at all (a span): only those have a confidence to judge."""
    return bool(result.answer) and result.verdict != UNKNOWN


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
