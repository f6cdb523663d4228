"""Jarvis on the question sets written in players' styles and in the shapes of players' communities' questions
(eval/train/style, eval/dev/style, eval/dev/shapes, eval/train/shapes): every question asked through the whole
pipeline on the real-wiki test bed, one JSON record a question (its writer, style or shape, whether its page is
held out, the answer, its page, confidence, the signals, F1, the top pages, a yes/no question's verdict), then the
figures by writer, style (shape) and page split.

    python -m jarvis_lab.bench.style_sets ask --sets 'eval/dev/style/*.txt' --out records.jsonl [--no-spelling] [--as-before]
        [--model DIR] [--confidence-model FILE] [--every N]
    python -m jarvis_lab.bench.style_sets figures records.jsonl [records.jsonl ...]

A .txt set's writer and style come from its file name (``<writer>_<style>.txt``); a .jsonl set's from each
question's ``writer`` and ``shape``. ``--profile pages`` asks with v0.5's page retrieval (an index of its own),
``--reranker none`` without the reranker. Asserts nothing.
"""
from __future__ import annotations

import argparse
import glob
import json
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from tabulate import tabulate

from jarvis.crawler.corpus import read_corpus
from jarvis.eval.metrics import best_f1, right_if_stated
from jarvis.eval.questions import load_questions
from jarvis.eval.realbed import heldout_titles, realbed_corpus
from jarvis.eval.runner import PageResolver, corpus_key
from jarvis.index import Searcher, ensure_index
from jarvis.assembly import assemble
from jarvis.config import Config
from jarvis.replies import compose_reply

PAGES = ROOT.parent / "shared" / "realwiki" / "pages.json.gz"


def ask(args) -> None:
    config = Config()
    if args.model:
        config = replace(config, reader=replace(config.reader, model=args.model))
    if args.confidence_model:
        config = replace(config, reader=replace(config.reader, confidence_model=args.confidence_model))
    if args.no_spelling or args.as_before:
        config = replace(config, retrieval=replace(config.retrieval, spelling=False))
    if args.as_before:
        # Today's reading before this round: the question as typed (no reading form, no spelling read).
        import jarvis.pipeline
        import jarvis.question_text
        jarvis.pipeline.reading_form = jarvis.question_text.reading_form = lambda question: question
        config = replace(config, reader=replace(config.reader, read_spelt=False, unsure_page="answer",
                                                placement=replace(config.reader.placement, enabled=False)))
    if args.reranker:
        config = replace(config, reader=replace(config.reader, reranker=args.reranker))
    if args.rerank_weight is not None:
        config = replace(config, reader=replace(config.reader, rerank_weight=args.rerank_weight))
    corpus = realbed_corpus(config.home, PAGES, config.crawl, progress=False)
    index_dir = Path(args.index) if args.index else ensure_index(
        corpus, config.home / "eval-indexes" / corpus_key(corpus) / args.profile, profile=args.profile,
        progress=False)  # the eval's
    resolver = PageResolver(read_corpus(corpus))
    held = {t.casefold() for t in heldout_titles(PAGES)}
    paths = sorted({p for pattern in args.sets for p in glob.glob(pattern)})
    if args.search_only:
        search(args, config, index_dir, resolver, paths)
        return
    with Searcher(index_dir, config.retrieval) as searcher, assemble(config, searcher=searcher) as jarvis, \
            open(args.out, "w", encoding="utf-8") as out:
        began, n = time.perf_counter(), 0
        for path in paths:
            writer, _, style = Path(path).stem.partition("_")
            for q in load_questions(path)[::args.every]:
                if q.writer or q.shape:
                    writer, style = q.writer or writer, q.shape or style
                answer = jarvis.ask(q.text)
                page = resolver.find(q.expected_title)
                canonical = page.title if page else q.expected_title
                out.write(json.dumps({
                    "set": Path(path).name, "writer": writer, "style": style, "question": q.text,
                    "expected": canonical, "held_out": canonical.casefold() in held, "answers": q.answers,
                    "answer": answer.text, "answer_title": answer.title, "confidence": answer.confidence,
                    "abstained": answer.abstained, "sentence": answer.sentence, "reply": compose_reply(answer),
                    "pages": list(answer.pages), "f1": best_f1(answer.text, q.answers),
                    "right": right_if_stated(answer, q.answers),
                    "points_to_expected": bool(answer.title) and resolver.same_page(q.expected_title, answer.title),
                    "top3": any(resolver.same_page(q.expected_title, t) for t in answer.pages[:3]),
                    "signals": answer.signals, "seconds": answer.seconds,
                    "verdict": q.verdict, "said": getattr(answer, "verdict", ""),
                    "others": [{"text": o.text, "title": o.passage.title, "section": list(o.passage.section),
                                "paragraph": o.passage.text[:300], "signals": o.signals,
                                "f1": best_f1(o.text, q.answers)} for o in answer.others]}) + "\n")
                n += 1
                if n % 25 == 0:
                    print(f"{n} questions, {(time.perf_counter() - began) / n:.2f} s each", file=sys.stderr, flush=True)


def search(args, config: Config, index_dir: Path, resolver: PageResolver, paths: list[str]) -> None:
    """Retrieval alone: is the expected page in the top 3 (records without answers)."""
    with Searcher(index_dir, config.retrieval) as searcher, open(args.out, "w", encoding="utf-8") as out:
        for path in paths:
            writer, _, style = Path(path).stem.partition("_")
            for q in load_questions(path):
                titles = [hit.title for hit in searcher.search(q.text, k=3)]
                out.write(json.dumps({"set": Path(path).name, "writer": writer, "style": style,
                                      "question": q.text, "expected": q.expected_title, "pages": titles,
                                      "top3": any(resolver.same_page(q.expected_title, t) for t in titles)}) + "\n")


def _row(name: str, records: list[dict]) -> list:
    n = len(records)
    stated = [r for r in records if not r["abstained"] and r["answer"]]
    unsure = [r for r in records if r["abstained"]]
    return [name, n, round(sum(r["top3"] for r in records) / n, 3), round(sum(r["f1"] for r in records) / n, 3),
            round(sum(r["right"] for r in stated) / len(stated), 3) if stated else "-", round(len(stated) / n, 3),
            round(sum(r["points_to_expected"] for r in unsure) / len(unsure), 3) if unsure else "-"]


def calibration(records: list[dict], width: float = 0.1, least: int = 15) -> list[list]:
    bins: dict[int, list[dict]] = defaultdict(list)
    for r in records:
        if r["answer"]:
            bins[min(int(r["confidence"] / width), int(1 / width) - 1)].append(r)
    rows = []
    for b in sorted(bins):
        rs = bins[b]
        mean = sum(r["confidence"] for r in rs) / len(rs)
        acc = sum(r["right"] for r in rs) / len(rs)
        rows.append([f"{b * width:.1f}-{(b + 1) * width:.1f}", len(rs), round(mean, 3), round(acc, 3),
                     round(abs(mean - acc), 3), "" if len(rs) >= least else "(few)"])
    return rows


def figures(args) -> None:
    records = [json.loads(line) for path in args.records for line in open(path, encoding="utf-8")]
    headers = ["group", "n", "top-3", "full F1", "stated right", "coverage", "unsure -> page"]
    for key in ("writer", "style", "held_out"):
        groups = defaultdict(list)
        for r in records:
            groups[str(r[key])].append(r)
        print(tabulate([_row(k, v) for k, v in sorted(groups.items())] + [_row("all", records)],
                       headers=[key, *headers[1:]], tablefmt="github"), end="\n\n")
    print(tabulate(calibration(records), headers=["confidence", "answers", "mean", "right", "gap", ""],
                   tablefmt="github"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("ask")
    p.add_argument("--sets", nargs="+", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--every", type=int, default=1, help="every Nth question of each set (a sample)")
    p.add_argument("--model", help="the reader to ask with (a folder written by jarvis train-reader; default: the configured)")
    p.add_argument("--confidence-model", help="the confidence model to judge with (default: the reader's own)")
    p.add_argument("--no-spelling", action="store_true", help="search the words as typed")
    p.add_argument("--profile", default="tuned", help="the index profile to build and ask from (default: tuned)")
    p.add_argument("--index", help="an index to ask from (default: the profile's, built under $JARVIS_HOME)")
    p.add_argument("--reranker", help="the reranker ('jarvis', a folder, 'none'; default: the configured)")
    p.add_argument("--rerank-weight", type=float, help="the reranker's weight in the final choice")
    p.add_argument("--search-only", action="store_true", help="retrieval alone: the top 3 pages of each question")
    p.add_argument("--as-before", action="store_true",
                   help="read and search every question as typed, as Jarvis did before its reading form and spelling")
    p.set_defaults(run=ask)
    p = sub.add_parser("figures")
    p.add_argument("records", nargs="+")
    p.set_defaults(run=figures)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
