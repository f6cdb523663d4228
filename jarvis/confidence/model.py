"""The confidence model: signals of an answer in, the probability that it is right out.

A logistic regression over standardised signals, fitted on question sets with gold answers
(``fit_confidence``, run by ``jarvis calibrate``), stored as a small JSON file next to the reader it
calibrates and read back with ``ConfidenceModel.load``. Prediction needs numpy only; fitting uses
scikit-learn. A signal a model was fitted with but an answer lacks counts as 0 (a kind not asked, no
runner-up), as it did in the fit.

    model = ConfidenceModel.load(path)
    model.predict({"sentence_score": 0.9, "score_margin": 0.4, ...})   # 0.83
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from jarvis.errors import JarvisError

FORMAT = 1


# The answer threshold of a confidence model fitted without one (the offline reader's of v0.3).
DEFAULT_THRESHOLD = 0.628


class ConfidenceModelError(JarvisError):
    """A confidence model file that cannot be read."""


@dataclass(frozen=True)
class ConfidenceModel:
    """P(right) = sigmoid(a * score + b), score = intercept + sum(coef[i] * (signal[i] - mean[i]) / scale[i]).

    ``platt`` = (a, b) maps the regression's score to a probability, fitted on the scores the regression
    gives answers it was not fitted on (cross-validation; Platt scaling): the regularised regression alone
    is under-confident, its probabilities pulled towards the mean."""

    reader: str                         # the reader it calibrates ("fallback:minilm", "span", a model name)
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    platt: tuple[float, float] = (1.0, 0.0)
    # Where it comes from: the question sets, their sizes, the fit's settings and its scores on the sets
    # held back from it. Informative only.
    fitted_on: dict = field(default_factory=dict)
    description: str = ""

    def __post_init__(self) -> None:
        sizes = {len(self.features), len(self.mean), len(self.scale), len(self.coef)}
        if len(sizes) != 1:
            raise ConfidenceModelError(f"confidence model for {self.reader}: features, mean, scale and coef "
                                       f"differ in length ({sorted(sizes)})")
        if any(s <= 0 for s in self.scale):
            raise ConfidenceModelError(f"confidence model for {self.reader}: a scale is not positive")

    @property
    def threshold(self) -> float:
        """The answer threshold chosen with this model (its fit's risk-coverage curve), to three decimals;
        DEFAULT_THRESHOLD for a model fitted without one."""
        chosen = self.fitted_on.get("threshold")
        return round(float(chosen), 3) if chosen is not None else DEFAULT_THRESHOLD

    @classmethod
    def neutral(cls, reader: str) -> "ConfidenceModel":
        """A model that knows nothing (0.5 for every answer): what answers are judged with while fitting."""
        return cls(reader, (), (), (), (), 0.0, description="neutral: not fitted")

    def score(self, signals: Mapping[str, float]) -> float:
        """The linear score of an answer: higher is surer (ranks candidates)."""
        total = self.intercept
        for name, mean, scale, coef in zip(self.features, self.mean, self.scale, self.coef):
            value = float(signals.get(name, 0.0))
            if not math.isfinite(value):
                value = 0.0
            total += coef * (value - mean) / scale
        return total

    def predict(self, signals: Mapping[str, float]) -> float:
        """The probability that the answer with these signals is right, in [0, 1]."""
        return self.probability(self.score(signals))

    def probability(self, score: float) -> float:
        a, b = self.platt
        return _sigmoid(a * score + b)

    def weights(self) -> list[tuple[str, float]]:
        """Each signal's weight per standard deviation, largest first (what the model relies on)."""
        return sorted(zip(self.features, self.coef), key=lambda pair: -abs(pair[1]))

    # ------------------------------------------------------------------ files

    def to_json(self) -> dict:
        data = asdict(self)
        data["format"] = FORMAT
        return data

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> "ConfidenceModel":
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfidenceModelError(f"cannot read the confidence model {path}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise ConfidenceModelError(f"{path} is not a confidence model (bad JSON: {exc})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ConfidenceModelError(f"{path} is not a confidence model of format {FORMAT}")
        try:
            return cls(reader=str(data["reader"]), features=tuple(data["features"]),
                       mean=tuple(map(float, data["mean"])), scale=tuple(map(float, data["scale"])),
                       coef=tuple(map(float, data["coef"])), intercept=float(data["intercept"]),
                       platt=tuple(map(float, data.get("platt", (1.0, 0.0)))),
                       fitted_on=dict(data.get("fitted_on", {})), description=str(data.get("description", "")))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfidenceModelError(f"{path} is not a confidence model ({type(exc).__name__}: {exc})") from None


def fit_confidence(signals: Sequence[Mapping[str, float]], right: Sequence[bool], reader: str,
                   features: Sequence[str] | None = None, c: float | None = None, folds: int = 5,
                   fitted_on: dict | None = None, description: str = "",
                   groups: Sequence[str] | None = None) -> ConfidenceModel:
    """A logistic regression of ``right`` on the signals (L2; ``c`` the inverse strength, else chosen by
    cross-validated log loss), then Platt scaling of its cross-validated scores. ``features``: the
    signals to use (default: every one seen). ``groups`` (one per answer, e.g. who wrote the question): the
    cross-validation never splits a group, so the regularisation and the scaling are chosen for groups the
    fit has not seen (other writers), not for more questions of the same ones."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold, StratifiedKFold, cross_val_predict, cross_val_score

    if len(signals) != len(right) or not signals:
        raise ConfidenceModelError("fitting needs one label per answer, and at least one answer")
    labels = np.array([bool(r) for r in right], dtype=int)
    if labels.min() == labels.max():
        raise ConfidenceModelError(f"fitting needs right and wrong answers (all {len(labels)} are "
                                   f"{'right' if labels[0] else 'wrong'}): use more questions")
    names = tuple(features) if features is not None else tuple(sorted({k for s in signals for k in s}))
    matrix = np.array([[float(s.get(name, 0.0)) for name in names] for s in signals], dtype=float)
    matrix[~np.isfinite(matrix)] = 0.0
    mean = matrix.mean(axis=0)
    scale = matrix.std(axis=0)
    scale[scale < 1e-9] = 1.0          # a constant signal: no information, and no division by zero
    standard = (matrix - mean) / scale
    folds = max(2, min(folds, int(labels.sum()), int(len(labels) - labels.sum())))
    split = StratifiedKFold(n_splits=folds, shuffle=True, random_state=0)
    grouping = None
    if groups is not None:
        if len(groups) != len(labels):
            raise ConfidenceModelError("fitting by groups needs one group per answer")
        if len(set(groups)) >= 2:
            split = GroupKFold(n_splits=min(folds, len(set(groups))))
            grouping = list(groups)
    if c is None:   # the regularisation that predicts held-out answers best (log loss)
        c = max(np.logspace(-3, 1, 13), key=lambda value: cross_val_score(
            LogisticRegression(C=value, max_iter=5000), standard, labels, cv=split, scoring="neg_log_loss",
            groups=grouping).mean())
        c = float(c)
    regression = LogisticRegression(C=c, max_iter=5000)
    held_out = cross_val_predict(regression, standard, labels, cv=split, method="decision_function",
                                 groups=grouping)
    platt = LogisticRegression(C=1e4, max_iter=5000).fit(held_out.reshape(-1, 1), labels)
    regression.fit(standard, labels)
    fitted = dict(fitted_on or {})
    fitted.setdefault("answers", len(labels))
    fitted.setdefault("right_rate", round(float(labels.mean()), 4))
    fitted["C"] = c
    return ConfidenceModel(reader=reader, features=names, mean=tuple(float(x) for x in mean),
                           scale=tuple(float(x) for x in scale), coef=tuple(float(x) for x in regression.coef_[0]),
                           intercept=float(regression.intercept_[0]),
                           platt=(float(platt.coef_[0][0]), float(platt.intercept_[0])),
                           fitted_on=fitted, description=description)


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)
