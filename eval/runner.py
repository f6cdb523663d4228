"""The three evaluations of the original Jarvis report, over several configurations side by side.

- IR: is the expected page in the top 3? (tuned index vs the original's baseline profile)
- QA: the reader is given the expected page; SQuAD-style F1 and exact match.
- Full system: retrieval + reader, F1 without the page given.

Each reader that can run here is evaluated (span reader per model of ``EvalOptions.models``, batched and sequential; the
offline fallback readers); one that cannot load (a model not on disk) is reported as not run.
"""
from __future__ import annotations

import logging
import time
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from tqdm import tqdm

from jarvis.crawler.corpus import Page, read_corpus
from jarvis.eval.metrics import best_em, best_f1, right_if_stated
from jarvis.eval.players_view import UNKNOWN, verdict
from jarvis.eval.questions import Question, QuestionFileError, load_questions
from jarvis.eval.eval_report import FULL, IR, QA, ConfigResult, EvalReport, QuestionResult
from jarvis.replies import compose_reply

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EvalOptions:
    questions: Path
    corpus: Path
    out_dir: Path
    index_dir: Path | None = None          # tuned index to evaluate; None: built from the corpus
    json_path: Path | None = None
    models: list[str] = field(default_factory=list)
    quick: bool = False                    # only the default configuration of each evaluation
    progress: bool = True
    prerank_paragraphs: int = 12           # the pre-ranking variant reads this many paragraphs


@dataclass
class ReaderConfig:
    """A reader to evaluate, loaded lazily so a missing model becomes 'not run' instead of an error."""

    name: str
    description: str
    load: Callable[[], object]             # -> jarvis.readers.base.Reader
    settings_changes: dict = field(default_factory=dict)
    default: bool = False


class PageResolver:
    """Finds a corpus page by title or alias, case-insensitively and with runs of spaces as one space, as
    MediaWiki reads titles (Workbench -> Crafting table; "Minecraft  Dungeons:X" is "Minecraft Dungeons:X")."""

    def __init__(self, pages: list[Page]) -> None:
        self.pages: dict[str, Page] = {}
        for page in pages:
            for name in [page.title, *page.aliases]:
                self.pages.setdefault(_title_key(name), page)

    def find(self, title: str) -> Page | None:
        return self.pages.get(_title_key(title))

    def same_page(self, expected: str, retrieved_title: str) -> bool:
        page = self.find(expected)
        canonical = page.title if page else expected
        return _title_key(canonical) == _title_key(retrieved_title)


def _title_key(title: str) -> str:
    return " ".join(title.replace("_", " ").split()).casefold()


def run_eval(options: EvalOptions, config) -> EvalReport:
    """Run every evaluation, write report.md, chart.png, questions.csv and results.json; return the report."""
    from jarvis.index import Searcher, ensure_index
    from jarvis.errors import first_line
    from jarvis.assembly import assemble
    from jarvis.question_text import check_question

    questions = load_questions(options.questions)
    for q in questions:  # a bad question stops the run now, with its line number, not half-way through
        try:
            check_question(q.text)
        except Exception as exc:  # noqa: BLE001 - QuestionError: the message says what is wrong
            raise QuestionFileError(f"{options.questions}:{q.line}: {first_line(exc)}") from exc
    resolver = PageResolver(read_corpus(options.corpus))
    missing = sorted({q.expected_title for q in questions if resolver.find(q.expected_title) is None})
    if missing:
        log.warning("expected pages not in the corpus (these questions score 0): %s", ", ".join(missing))

    # One set of indexes per corpus file: evaluating two corpora in turn must not rebuild each time.
    eval_home = config.home / "eval-indexes" / corpus_key(options.corpus)
    tuned_dir = options.index_dir or ensure_index(options.corpus, eval_home / "tuned", profile="tuned", settings=config.retrieval,
                                                  progress=options.progress)
    profiles = {"tuned": tuned_dir}
    if not options.quick:
        for profile in ("lexical", "baseline"):   # v0.1's lexical-only index and the original's baseline
            profiles[profile] = ensure_index(options.corpus, eval_home / profile, profile=profile, settings=config.retrieval,
                                             progress=options.progress)
    configs: list[ConfigResult] = []
    with ExitStack() as stack:
        searchers = {name: stack.enter_context(Searcher(path, config.retrieval)) for name, path in profiles.items()}
        searchers["tuned"].warm_up()
        readers = reader_configs(options, config, searchers["tuned"].encoder, searchers["tuned"].glossary)
        bar = stack.enter_context(tqdm(total=_planned_runs(len(questions), len(profiles), readers, options),
                                       unit="q", desc="eval", disable=not options.progress))
        for profile, searcher in searchers.items():
            configs.append(evaluate_ir(profile, searcher, questions, resolver, config.top_k, bar))
        for reader_config in readers:
            try:
                reader = reader_config.load()
            except Exception as exc:  # noqa: BLE001 - any load failure means "not run here"
                for evaluation in (QA, FULL):
                    configs.append(ConfigResult(evaluation, reader_config.name, reader_config.description,
                                                ran=False, not_run_reason=first_line(exc)))
                bar.update(2 * len(questions))
                continue
            if reader_config.name.startswith("fallback:"):
                reader_config = replace(reader_config, name=reader.name)  # "auto" -> what answered
            settings = replace(config.reader, **reader_config.settings_changes)
            jarvis = assemble(config, searcher=searchers["tuned"], reader=reader, settings=settings)   # as `ask` does
            configs.append(evaluate_qa(reader_config, jarvis, questions, resolver, bar))
            configs.append(evaluate_full(reader_config, "tuned", jarvis, questions, resolver, bar))
            if reader_config.default:
                for other in ("lexical", "baseline"):
                    if other in searchers:
                        jarvis = assemble(config, searcher=searchers[other], reader=reader, settings=settings,
                                          policy=jarvis.policy)
                        configs.append(evaluate_full(replace(reader_config, default=False), other, jarvis,
                                                     questions, resolver, bar))

    configs.sort(key=lambda c: ({IR: 0, QA: 1, FULL: 2}[c.evaluation], not c.default))
    report = EvalReport(questions_file=_display_path(options.questions), configs=configs)
    for path in report.write_all(options.out_dir, options.json_path):
        log.info("wrote %s", path)
    return report


def corpus_key(corpus: Path) -> str:
    import hashlib

    where = hashlib.sha1(str(corpus.resolve()).encode("utf-8")).hexdigest()[:8]
    return f"{corpus.stem}-{where}"


def _display_path(path: Path) -> str:
    """The path as the user would type it: relative to the current directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def reader_configs(options: EvalOptions, config, encoder=None, glossary=None) -> list[ReaderConfig]:
    """The readers to compare. The default is what `jarvis ask` would use: the first model, else the fallback.
    ``encoder``: the tuned searcher's question encoder, shared with the MiniLM fallback reader; ``glossary``:
    the tuned index's players' words, which the fallback reader reads questions with."""
    from jarvis.readers import READERS
    from jarvis.readers.acquisition import model_name
    from jarvis.readers.span import SpanReader

    readers: list[ReaderConfig] = []
    for model in options.models or [config.reader.model]:
        if not model:
            continue
        batched = replace(config.reader, model=model, sequential=False)
        sequential = replace(batched, sequential=True)
        short = model_name(model, quantized=config.reader.quantize)
        readers.append(ReaderConfig(short, f"span reader {model}, batched",
                                    lambda s=batched: SpanReader.load(s)))
        if not options.quick:
            other = replace(batched, quantize=not batched.quantize)  # int8 vs full precision, side by side
            readers.append(ReaderConfig(model_name(model, quantized=other.quantize),
                                        f"span reader {model}, batched, {'int8' if other.quantize else 'fp32'}",
                                        lambda s=other: SpanReader.load(s)))
            readers.append(ReaderConfig(f"{short} sequential", "one paragraph per forward pass (original)",
                                        lambda s=sequential: SpanReader.load(s)))
            readers.append(ReaderConfig(f"{short} pre-rank {options.prerank_paragraphs}",
                                        f"reads the {options.prerank_paragraphs} best-matching paragraphs",
                                        lambda s=batched: SpanReader.load(s),
                                        {"max_paragraphs": options.prerank_paragraphs}))
    # The offline readers: Jarvis's own (shipped) and the sentence readers; --quick: the configured one.
    offline = ["jarvis", "minilm", "lexical"] if not options.quick else [config.reader.fallback]
    for kind in offline:
        choice = READERS[kind if kind == "jarvis" else f"fallback:{kind}"]
        readers.append(ReaderConfig(choice.name, choice.description,
                                    lambda c=choice: c.load(config.reader, encoder, glossary)))
    _mark_default(readers)
    return readers


def _mark_default(readers: list[ReaderConfig]) -> None:
    """The first reader that loads is the default: a span reader, else Jarvis's own, else a sentence reader."""
    for reader_config in readers:
        try:
            reader = reader_config.load()
        except Exception:  # noqa: BLE001
            continue
        reader_config.load = lambda r=reader: r  # keep the loaded model; do not load it twice
        reader_config.default = True
        return


def _planned_runs(n: int, n_profiles: int, readers: list[ReaderConfig], options: EvalOptions) -> int:
    runs = n * n_profiles + 2 * n * len(readers)
    runs += n * (n_profiles - 1)  # the default reader on the other indexes (v0.1's lexical, the original's)
    return runs


def evaluate_ir(profile: str, searcher, questions: list[Question], resolver: PageResolver, k: int, bar) -> ConfigResult:
    from jarvis.index import get_profile

    result = ConfigResult(IR, profile, get_profile(searcher.profile).description, default=(profile == "tuned"))
    began = time.perf_counter()
    for q in questions:
        t0 = time.perf_counter()
        hits = searcher.search(q.text, k=k)
        seconds = time.perf_counter() - t0
        titles = [h.title for h in hits]
        hit = any(resolver.same_page(q.expected_title, t) for t in titles)
        result.questions.append(QuestionResult(q.line, q.text, q.expected_title, retrieved=titles, hit=hit,
                                               f1=float(hit), em=float(hit), seconds=seconds))
        bar.update(1)
    result.total_seconds = time.perf_counter() - began
    return result


def evaluate_qa(reader_config: ReaderConfig, jarvis, questions: list[Question], resolver: PageResolver,
                bar) -> ConfigResult:
    result = ConfigResult(QA, reader_config.name, reader_config.description, default=reader_config.default)
    began = time.perf_counter()
    for q in questions:
        page = resolver.find(q.expected_title)
        if page is None:
            result.questions.append(QuestionResult(q.line, q.text, q.expected_title, answer="(page not in corpus)",
                                                   verdict=UNKNOWN))
        else:
            answer = jarvis.read_pages(q.text, [page])
            result.questions.append(_scored(q, answer, [page.title], resolver))
        bar.update(1)
    result.total_seconds = time.perf_counter() - began
    return result


def evaluate_full(reader_config: ReaderConfig, profile: str, jarvis, questions: list[Question],
                  resolver: PageResolver, bar) -> ConfigResult:
    name = f"{profile} index + {reader_config.name}"
    description = {"tuned": reader_config.description, "lexical": "v0.1's lexical-only index, same reader",
                   "baseline": "the original's index, same reader"}[profile]
    result = ConfigResult(FULL, name, description, default=reader_config.default)
    began = time.perf_counter()
    for q in questions:
        answer = jarvis.ask(q.text)
        result.questions.append(_scored(q, answer, list(answer.pages), resolver))
        bar.update(1)
    result.total_seconds = time.perf_counter() - began
    return result


def _scored(q: Question, answer, retrieved: list[str], resolver: PageResolver) -> QuestionResult:
    # Judged by what it would state: the answer and its sentence, whatever a reply's wording (eval/metrics.py).
    judged_right = right_if_stated(answer, q.answers)
    points_to_expected = bool(answer.title) and resolver.same_page(q.expected_title, answer.title)
    return QuestionResult(q.line, q.text, q.expected_title, answer=answer.text, answer_title=answer.title,
                          retrieved=retrieved, hit=bool(answer.found), f1=best_f1(answer.text, q.answers),
                          em=best_em(answer.text, q.answers), seconds=answer.seconds,
                          confidence=answer.confidence, abstained=answer.abstained, reply=compose_reply(answer),
                          sentence=answer.sentence, right_if_stated=judged_right,
                          verdict=verdict(not answer.abstained, judged_right, bool(answer.title),
                                          points_to_expected))
