"""Fitting and judging the confidence model on question sets with gold answers (`jarvis calibrate`,
bench/fit_confidence.py).

1. ``observe``: every question is answered as ``jarvis ask`` answers it (retrieval, the reader), and the
   answer is judged by what it would state (``eval.metrics.right_if_stated``: the answer and the sentence it
   was read in), with the signals the confidence was computed from.
2. ``fit``: a logistic regression of right on the signals, Platt-scaled (jarvis/confidence/model.py).
3. ``cross_validated``: each question's confidence from a model fitted without its fold, so that a
   threshold can be chosen on the same questions honestly (``eval.players_view.threshold_for``).
4. ``judge``: precision, coverage, unsure replies and calibration on a set, for a model and threshold.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Sequence

from tqdm import tqdm

from jarvis.eval.metrics import best_f1, right_if_stated
from jarvis.eval.players_view import (PlayersView, calibration_error, reliability, risk_coverage, threshold_for,
                               verdict)
from jarvis.eval.questions import Question
from jarvis.confidence import ConfidenceModelError, stated


@dataclass
class Observation:
    """One question, answered and judged; ``confidence`` is filled in by a model (``with_confidence``)."""

    set_name: str
    line: int
    question: str
    expected_title: str
    answer: str                 # the reader's best span ("" when none)
    answer_title: str           # the page stated or pointed to ("" when no page matched)
    signals: dict
    f1: float
    right_if_stated: bool
    points_to_expected: bool
    sentence: str = ""          # the sentence the answer was read in (what a "not sure" reply quotes)
    confidence: float = 0.0
    abstained: bool = True
    verdict: str = ""

    def judged(self, confidence: float, threshold: float) -> "Observation":
        """The observation as the answer policy would state it at ``threshold`` with this ``confidence``."""
        is_stated = stated(bool(self.answer), confidence, threshold)
        return replace(self, confidence=confidence if self.answer else 0.0, abstained=not is_stated,
                       verdict=verdict(is_stated, self.right_if_stated, bool(self.answer_title),
                                       self.points_to_expected))


def observe(jarvis, questions: Sequence[Question], resolver, set_name: str, progress: bool = True) -> list[Observation]:
    """Every question answered by ``jarvis`` (a jarvis.pipeline.Jarvis) exactly as ``jarvis ask`` answers it,
    and judged against its gold answers as if stated."""
    observations = []
    for q in tqdm(questions, desc=f"answering {set_name}", unit="q", disable=not progress, leave=False):
        answer = jarvis.ask(q.text)
        if not answer.found:
            observations.append(Observation(set_name, q.line, q.text, q.expected_title, "", answer.title, {}, 0.0,
                                            False, bool(answer.title) and resolver.same_page(q.expected_title, answer.title)))
            continue
        observations.append(Observation(
            set_name, q.line, q.text, q.expected_title, answer.text, answer.title, answer.signals,
            best_f1(answer.text, q.answers), right_if_stated(answer, q.answers),
            resolver.same_page(q.expected_title, answer.title), sentence=answer.sentence,
            confidence=answer.confidence, abstained=answer.abstained))
    return observations


def as_answered(observation: Observation) -> Observation:
    """The observation judged as the pipeline answered it (its own confidence and threshold)."""
    stated = bool(observation.answer) and not observation.abstained
    return replace(observation, verdict=verdict(stated, observation.right_if_stated, bool(observation.answer_title),
                                                observation.points_to_expected))


# A signal only the fit sees: 1 for a question of a set the reader's rules were developed on (their answers
# are right more often than a new question's). It takes up that difference, so that the other weights can
# learn from those questions too; in use it is never set (0), as for a new question.
DEVELOPED_ON = "developed_on"


def writer_of(set_name: str) -> str:
    """Who wrote a question set, from its file name: ``w3_typos.txt`` -> "w3", ``realbed_dev2.txt`` ->
    "realbed" (the part before the first "_"; the whole name when there is none)."""
    return set_name.partition("_")[0] or set_name


def fit(observations: Sequence[Observation], reader: str, description: str = "",
        developed_on: Sequence[Observation] = (), by_writer: bool = False, **fitted_on):
    """The confidence model fitted on the observations that have an answer, and on ``developed_on`` (questions
    the reader's rules were developed on) marked with the DEVELOPED_ON signal. ``by_writer``: its
    cross-validation keeps each writer's questions together (``writer_of``), so it is tuned for writers it
    has not seen."""
    from jarvis.confidence import fit_confidence

    answered = [(o.signals, o.right_if_stated, o.set_name) for o in observations if o.answer]
    answered += [({**o.signals, DEVELOPED_ON: 1.0}, o.right_if_stated, o.set_name) for o in developed_on if o.answer]
    groups = [writer_of(name) for _, _, name in answered] if by_writer else None
    return fit_confidence([s for s, _, _ in answered], [r for _, r, _ in answered], reader,
                          fitted_on=fitted_on, description=description, groups=groups)


def with_confidence(model, observations: Sequence[Observation], threshold: float) -> list[Observation]:
    """The observations with ``model``'s confidence and the verdicts at ``threshold``."""
    return [o.judged(model.predict(o.signals) if o.answer else 0.0, threshold) for o in observations]


def cross_validated(observations: Sequence[Observation], reader: str, folds: int = 5, seed: int = 0,
                    developed_on: Sequence[Observation] = (), by_writer: bool = False) -> list[float]:
    """Each observation's confidence from a model fitted on the other folds (questions shuffled by ``seed``),
    and on every ``developed_on`` question (see ``fit``). ``by_writer``: one fold per writer (``writer_of``),
    each writer's questions judged by a model fitted on the other writers' only."""
    order = list(range(len(observations)))
    random.Random(seed).shuffle(order)
    if by_writer and len({writer_of(o.set_name) for o in observations}) >= 2:
        writers = sorted({writer_of(o.set_name) for o in observations})
        fold_sets = [{i for i, o in enumerate(observations) if writer_of(o.set_name) == w} for w in writers]
    else:
        fold_sets = [set(order[fold::folds]) for fold in range(folds)]
    confidence = [0.0] * len(observations)
    for test in fold_sets:
        train = [o for i, o in enumerate(observations) if i not in test]
        try:
            predict = fit(train, reader, developed_on=developed_on, by_writer=by_writer).predict
        except ConfidenceModelError:   # too few questions, all right or all wrong: the base rate says all
            answered = [o for o in train if o.answer]
            rate = sum(o.right_if_stated for o in answered) / len(answered) if answered else 0.0
            predict = lambda signals, rate=rate: rate   # noqa: E731
        for i in test:
            if observations[i].answer:
                confidence[i] = predict(observations[i].signals)
    return confidence


def choose_threshold(observations: Sequence[Observation], confidence: Sequence[float], precision: float) -> float:
    """The lowest threshold at which the stated answers are ``precision`` right (on these confidences), with
    the most coverage; 1.0 (state nothing) when none reaches it."""
    judged = [o.judged(c, 0.0) for o, c in zip(observations, confidence)]
    point = threshold_for(judged, precision)
    return point[0] if point is not None else 1.0


@dataclass(frozen=True)
class SetFigures:
    """What players would see on one question set at one threshold."""

    name: str
    n: int
    right_rate: float           # share of all questions whose answer would be right if stated
    full_f1: float
    precision: float | None
    coverage: float | None
    unsure_points_to_expected: float | None
    calibration_gap: float | None
    auc: float | None

    HEADERS = ["set", "n", "right if all stated", "full F1", "precision", "coverage", "unsure → expected",
               "max calibration gap", "AUC"]

    def row(self) -> list:
        def fmt(x):
            return "—" if x is None else f"{x:.3f}"
        return [self.name, self.n, fmt(self.right_rate), fmt(self.full_f1), fmt(self.precision), fmt(self.coverage),
                fmt(self.unsure_points_to_expected), fmt(self.calibration_gap), fmt(self.auc)]


def figures(name: str, judged: Sequence[Observation]) -> SetFigures:
    view = PlayersView.of(judged)
    n = len(judged)
    return SetFigures(name, n, sum(o.right_if_stated for o in judged) / n if n else 0.0,
                      sum(o.f1 for o in judged) / n if n else 0.0, view.precision, view.coverage,
                      view.unsure_points_to_expected, calibration_error(judged), _auc(judged))


def _auc(judged: Sequence[Observation]) -> float | None:
    """How well the confidence ranks right above wrong answers (0.5: not at all, 1: perfectly)."""
    answered = [o for o in judged if o.answer]
    right = [o.confidence for o in answered if o.right_if_stated]
    wrong = [o.confidence for o in answered if not o.right_if_stated]
    if not right or not wrong:
        return None
    wins = sum((r > w) + 0.5 * (r == w) for r in right for w in wrong)
    return wins / (len(right) * len(wrong))


@dataclass
class CalibrationOptions:
    """What `jarvis calibrate` fits on: question files of one wiki, and where the model goes."""

    questions: list
    corpus: object                  # Path of the corpus the questions are about
    index_dir: object = None        # an index of it to use (default: built under $JARVIS_HOME)
    out: object = None              # where to write the model (default: $JARVIS_HOME/calibration/confidence-<reader id>.json)
    precision: float = 0.8          # the threshold suggested: the lowest with stated answers this right
    progress: bool = True
    by_writer: bool = False         # cross-validate by writer (a question file's name up to "_": w1_terse.txt -> w1)
    every: int = 1                  # every Nth question of each file (a sample of large sets)
    left_out: frozenset = frozenset()   # page titles (case-folded) no fit may learn from: their questions are dropped


@dataclass
class CalibrationResult:
    path: object
    model: object
    threshold: float
    figures: list

    def summary(self) -> str:
        from tabulate import tabulate

        weights = ", ".join(f"{name} {weight:+.2f}" for name, weight in self.model.weights()[:6])
        return (f"confidence model for {self.model.reader} written to {self.path} "
                f"({self.model.fitted_on.get('answers')} answers; strongest signals: {weights})\n"
                f"cross-validated, at threshold {self.threshold:.2f} (set ReaderSettings.answer_threshold to use it):\n"
                + tabulate([f.row() for f in self.figures], headers=SetFigures.HEADERS, tablefmt="simple"))


def run_calibration(options: CalibrationOptions, config, reader_name: str | None = None) -> CalibrationResult:
    """Answer every question with the configured reader, fit its confidence model, write it, and say how it
    does (cross-validated) at the threshold that keeps stated answers ``options.precision`` right."""
    from pathlib import Path

    from jarvis.crawler.corpus import read_corpus
    from jarvis.eval.questions import load_questions
    from jarvis.eval.runner import PageResolver
    from jarvis.index import Searcher, ensure_index
    from jarvis.confidence import AnswerPolicy, ConfidenceModel, calibration_path
    from jarvis.assembly import assemble
    from jarvis.readers import load_reader

    index_dir = options.index_dir or ensure_index(options.corpus, config.home / "calibration-index", settings=config.retrieval,
                                                  progress=options.progress)
    resolver = PageResolver(read_corpus(options.corpus))
    with Searcher(index_dir, config.retrieval) as searcher:
        searcher.warm_up()
        reader = load_reader(config.reader, encoder=searcher.encoder, name=reader_name, glossary=searcher.glossary)
        jarvis = assemble(config, searcher=searcher, reader=reader, settings=replace(config.reader, cache_size=0),
                          policy=AnswerPolicy.of(ConfidenceModel.neutral(reader.name), settings=config.reader))
        observations = []
        for path in options.questions:
            questions = [q for q in load_questions(Path(path))[::options.every]
                         if q.expected_title.casefold() not in options.left_out]
            observations += observe(jarvis, questions, resolver, Path(path).name, options.progress)
    sets = sorted({o.set_name for o in observations})
    model = fit(observations, reader.name, description=f"fitted by jarvis calibrate on {', '.join(sets)}",
                by_writer=options.by_writer, sets=sets, cross_validated="by writer" if options.by_writer else "5 folds",
                every=options.every)
    confidence = cross_validated(observations, reader.name, by_writer=options.by_writer)
    threshold = choose_threshold(observations, confidence, options.precision)
    model = replace(model, fitted_on={**model.fitted_on, "threshold": threshold, "target_precision": options.precision})
    path = Path(options.out) if options.out else calibration_path(config.home, reader.id)
    model.save(path)
    judged = [o.judged(c, threshold) for o, c in zip(observations, confidence)]
    rows = [figures(name, [o for o in judged if o.set_name == name]) for name in sets]
    if len(sets) > 1:
        rows.append(figures("all", judged))
    return CalibrationResult(path, model, threshold, rows)


__all__ = ["writer_of", "as_answered", "CalibrationOptions", "CalibrationResult", "run_calibration", "Observation", "SetFigures", "choose_threshold", "cross_validated", "figures", "fit", "observe",
           "reliability", "risk_coverage", "with_confidence"]
