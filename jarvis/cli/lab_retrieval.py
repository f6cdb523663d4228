"""The lab's commands for the retrieval models: train-encoder (the passage encoder) and train-reranker (the
cross-encoder that orders the index's best passages), both from question files with gold spans
(docs/retrieval.md). Registered by the lab group (lab.py)."""
from __future__ import annotations

import argparse
import logging
from pathlib import Path

from jarvis.cli.common import set_up_models, training_questions
from jarvis.cli.parser import Commands, non_negative, positive
from jarvis.config import SHIPPED_READER, Config
from jarvis.errors import JarvisError

log = logging.getLogger(__name__)


def register(commands: Commands) -> None:
    _encoder_command(commands)
    _reranker_command(commands)


def cmd_train_encoder(args: argparse.Namespace, config: Config) -> int:
    from jarvis.training.encoder import EncoderTraining, train_encoder

    examples, sources = _examples(args, config, profile="lexical", negatives=args.negatives)
    if examples is None:
        return 0
    result = train_encoder(examples, Path(args.out), _train_settings(args), EncoderTraining(args.hard_negatives),
                           base=args.base or None, sources=sources, progress=not args.quiet,
                           keep_float=Path(args.keep_float) if args.keep_float else None)
    print(f"trained the passage encoder on {result.examples} questions: {result.steps} steps in {result.seconds:.0f} s "
          f"(loss {result.final_loss:.3f}); wrote {result.out}")
    return 0


def cmd_train_reranker(args: argparse.Namespace, config: Config) -> int:
    from jarvis.training.reranker import RerankerTraining, train_reranker

    examples, sources = _examples(args, config, profile="tuned", negatives=args.negatives)
    if examples is None:
        return 0
    base = str(SHIPPED_READER) if args.base in (None, "", "jarvis") else args.base
    result = train_reranker(examples, Path(args.out), _train_settings(args),
                            RerankerTraining(negatives=args.hard_negatives, max_tokens=args.max_tokens), base=base,
                            sources=sources, progress=not args.quiet)
    print(f"trained the reranker on {result.examples} questions: {result.steps} steps in {result.seconds:.0f} s "
          f"(loss {result.final_loss:.3f}); wrote {result.out}")
    return 0


def _train_settings(args: argparse.Namespace):
    from jarvis.training import TrainSettings

    return TrainSettings(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
                         seed=args.seed, threads=args.threads, warmup=0.1)


def _examples(args: argparse.Namespace, config: Config, profile: str, negatives: int):
    """The examples of --questions (built against an index of the corpora: its best passages are the hard negatives)
    or of --examples; written to --write-examples (then (None, ...): stop) when asked."""
    from jarvis.training.passage_pairs import read_pair_examples, write_pair_examples

    if not args.questions and not args.examples:
        raise JarvisError(f"{args.command} needs --questions FILE (or --examples FILE written by --write-examples)")
    if not args.write_examples and not args.out:
        raise JarvisError(f"{args.command} needs --out DIR: where to write the trained model")
    set_up_models(config, answering=False)
    examples = [e for path in args.examples or [] for e in read_pair_examples(Path(path))]
    if args.questions:
        examples += _built_examples(args, config, profile, negatives)
    sources = sorted({e.source for e in examples})
    if args.write_examples:
        write_pair_examples(examples, Path(args.write_examples))
        print(f"wrote {len(examples)} examples to {args.write_examples}")
        return None, sources
    if not examples:
        raise JarvisError("no usable training examples: the questions' pages or gold spans are not in the corpora")
    return examples, sources


def _built_examples(args: argparse.Namespace, config: Config, profile: str, negatives: int) -> list:
    from jarvis.crawler.corpus import read_corpus
    from jarvis.eval.runner import corpus_key
    from jarvis.crawler.guide import read_guide
    from jarvis.index import GuideSource, Searcher, build_index, ensure_index
    from jarvis.training.passage_pairs import PairQuestion, build_pair_examples

    corpora, questions = training_questions(args, config)
    if args.docs and not args.index:     # a server guide's questions: an index of its pages (alone, as it is served)
        corpora = []
    pages = [page for path in corpora for page in read_corpus(path)] + [
        page for folder in args.docs or [] for page in read_guide(Path(folder))]
    if args.index:
        index_dir = Path(args.index)
    elif args.docs:
        sources = [GuideSource(Path(folder)) for folder in args.docs]
        index_dir = config.home / "eval-indexes" / ("guide-" + "-".join(Path(f).parent.name or Path(f).name
                                                                         for f in args.docs))[:80] / profile
        build_index(sources, index_dir, profile=profile, progress=not args.quiet)
    else:
        index_dir = ensure_index(corpora[0], config.home / "eval-indexes" / corpus_key(corpora[0]) / profile,
                                 profile=profile, progress=not args.quiet)
    pairs = [PairQuestion(q.text, q.expected_title, q.answers, q.section, source, q.shape or "plain", q.verdict)
             for source, q in questions]
    with Searcher(index_dir, config.retrieval) as searcher:
        searcher.warm_up()
        examples, report = build_pair_examples(pairs, pages, searcher.snapshot(), negatives=negatives,
                                               depth=args.depth, progress=not args.quiet)
    log.info("%s", report.summary())
    return examples


def _common(p: argparse.ArgumentParser, epochs: float, learning_rate: float, batch_size: int) -> None:
    p.add_argument("--questions", action="append", metavar="FILE",
                   help="question file (.txt or .jsonl, with gold spans), repeatable")
    p.add_argument("--examples", action="append", metavar="FILE",
                   help="examples written by --write-examples (.jsonl.gz), repeatable")
    p.add_argument("--write-examples", metavar="FILE", help="build the examples of --questions, write them and stop")
    p.add_argument("--corpus", action="append", metavar="FILE", help="a corpus the questions are about (repeatable)")
    p.add_argument("--realbed", action="store_true",
                   help="the questions are about the real-wiki test bed; its held-out pages are never trained on")
    p.add_argument("--docs", action="append", metavar="DIR",
                   help="a server's own guide the questions are about (Markdown pages), repeatable")
    p.add_argument("--held-back", action="append", metavar="FILE",
                   help="a question file judged on, never trained on: its questions are left out (repeatable)")
    p.add_argument("--index", metavar="DIR", help="an index of the (first) corpus, for the hard negatives "
                                                  "(default: built under $JARVIS_HOME)")
    p.add_argument("--depth", type=positive, default=30, metavar="N",
                   help="the index's best passages the hard negatives are taken from (default: %(default)s)")
    p.add_argument("--negatives", type=positive, default=7, metavar="N",
                   help="hard negatives kept per question (default: %(default)s)")
    p.add_argument("--base", metavar="DIR", help="weights to start from")
    p.add_argument("--out", metavar="DIR", help="where to write the trained model")
    p.add_argument("--epochs", type=float, default=epochs, metavar="N", help="passes over the data (default: %(default)s)")
    p.add_argument("--batch-size", type=positive, default=batch_size, metavar="N",
                   help="questions per step (default: %(default)s)")
    p.add_argument("--learning-rate", type=float, default=learning_rate, metavar="LR",
                   help="peak learning rate (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="random seed (default: %(default)s)")
    p.add_argument("--threads", type=non_negative, default=0, metavar="N", help="CPU threads (default: torch's)")


def _encoder_command(commands: Commands) -> None:
    p = commands.add("train-encoder", cmd_train_encoder,
            "fine-tune the passage encoder on questions with gold spans: in-batch and BM25 hard negatives "
            "(docs/retrieval.md)")
    _common(p, epochs=1.0, learning_rate=5e-5, batch_size=32)
    p.add_argument("--hard-negatives", type=positive, default=1, metavar="N",
                   help="hard negatives per question and step (default: %(default)s)")
    p.add_argument("--keep-float", metavar="DIR", help="also write the float weights there (to train on from)")
    p.set_defaults(command="train-encoder")


def _reranker_command(commands: Commands) -> None:
    p = commands.add("train-reranker", cmd_train_reranker,
            "fine-tune the reranker (a cross-encoder, from Jarvis's reader by default) on questions with gold spans "
            "against the index's best passages (docs/retrieval.md)")
    _common(p, epochs=1.0, learning_rate=5e-5, batch_size=16)
    p.add_argument("--hard-negatives", type=positive, default=3, metavar="N",
                   help="hard negatives per question and step (default: %(default)s)")
    p.add_argument("--max-tokens", type=positive, default=160, metavar="N",
                   help="tokens of question and passage read together (default: %(default)s)")
    p.set_defaults(command="train-reranker")
