"""Retrieval alone on the real-wiki test bed: for each question of the given sets, the pages and passages the
pipeline would read (``Jarvis.retrieve``: the index's search, then the reranker), judged against the question's
page and gold spans: is the page in the top 3, is a passage holding a gold among the first 1, 5 and 30 passages.
By writer and by shape (a .jsonl set's ``writer`` and ``shape``; a .txt set's file name ``<writer>_<style>``).

    python -m jarvis_lab.bench.bench_retrieval --sets 'eval/dev/shapes/f*.jsonl' --profile tuned [--reranker none]
        [--index DIR] [--encoder DIR] --out records.jsonl
    python -m jarvis_lab.bench.bench_retrieval --figures records.jsonl [more.jsonl ...] [--chart retrieval.png]

Asserts nothing; prints tables (and writes a chart of top-3 by shape and configuration with --chart).
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

from tabulate import tabulate

from jarvis.config import Config

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT.parent / "shared" / "realwiki" / "pages.json.gz"


def ask(args) -> None:
    from jarvis.assembly import assemble
    from jarvis.crawler.corpus import read_corpus
    from jarvis.eval.questions import load_questions
    from jarvis.eval.realbed import heldout_titles, realbed_corpus
    from jarvis.eval.runner import PageResolver, corpus_key
    from jarvis.index import Searcher, ensure_index
    from jarvis.pipeline import reading_form
    from jarvis.training.examples import find_span

    config = Config()
    if args.reranker:
        config = replace(config, reader=replace(config.reader, reranker=args.reranker))
    if args.encoder:
        config = replace(config, retrieval=replace(config.retrieval, encoder_model=args.encoder))
    corpus = realbed_corpus(config.home, PAGES, config.crawl, progress=False)
    index_dir = Path(args.index) if args.index else ensure_index(
        corpus, config.home / "eval-indexes" / corpus_key(corpus) / args.profile, profile=args.profile, progress=False)
    resolver = PageResolver(read_corpus(corpus))
    held = {t.casefold() for t in heldout_titles(PAGES)}
    label = args.label or f"{args.profile}{'' if args.reranker != 'none' else ', no reranker'}"
    paths = sorted({p for pattern in args.sets for p in glob.glob(pattern)})
    with Searcher(index_dir, config.retrieval) as searcher, assemble(config, searcher=searcher) as jarvis, \
            open(args.out, "w", encoding="utf-8") as out:
        began, n = time.perf_counter(), 0
        for path in paths:
            writer, _, style = Path(path).stem.partition("_")
            for q in load_questions(path)[::args.every]:
                t0 = time.perf_counter()
                pages, passages = jarvis.retrieve(reading_form(q.text))
                seconds = time.perf_counter() - t0
                expected = resolver.find(q.expected_title)
                title = expected.title if expected else q.expected_title
                if passages is None:   # a page profile: every paragraph of its pages, in page order
                    passages = jarvis.passages_of(pages)
                golds = [i for i, p in enumerate(passages) if resolver.same_page(title, p.title)
                         and any(find_span(p.text, a) for a in q.answers)]
                first = golds[0] if golds else None
                out.write(json.dumps({
                    "set": Path(path).name, "config": label, "writer": q.writer or writer, "shape": q.shape or style,
                    "question": q.text, "expected": title, "held_out": title.casefold() in held,
                    "pages": [p.title for p in pages[:3]],
                    "top3": any(resolver.same_page(title, p.title) for p in pages[:3]),
                    "top1": bool(pages) and resolver.same_page(title, pages[0].title),
                    "gold_rank": first, "seconds": seconds}) + "\n")
                n += 1
                if n % 100 == 0:
                    print(f"{n} questions, {(time.perf_counter() - began) / n:.3f} s each", file=sys.stderr, flush=True)


def _row(name: str, records: list[dict]) -> list:
    n = len(records)
    at = lambda k: round(sum(r["gold_rank"] is not None and r["gold_rank"] < k for r in records) / n, 3)
    return [name, n, round(sum(r["top1"] for r in records) / n, 3), round(sum(r["top3"] for r in records) / n, 3),
            at(1), at(5), at(30), round(1000 * sorted(r["seconds"] for r in records)[n // 2])]


def figures(args) -> None:
    records = [json.loads(line) for path in args.figures for line in open(path, encoding="utf-8")]
    headers = ["top-1 page", "top-3 page", "gold passage 1st", "in 5", "in 30", "p50 ms"]
    by_config = defaultdict(list)
    for r in records:
        by_config[r["config"]].append(r)
    for key in ("shape", "writer"):
        rows = []
        for config, rs in by_config.items():
            groups = defaultdict(list)
            for r in rs:
                groups[str(r[key])].append(r)
            rows += [_row(f"{config} | {k}", v) for k, v in sorted(groups.items())] + [_row(f"{config} | all", rs)]
        print(tabulate(rows, headers=[f"configuration | {key}", "n", *headers], tablefmt="github"), end="\n\n")
    if args.chart:
        _chart(by_config, Path(args.chart))


def _chart(by_config: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shapes = sorted({r["shape"] for rs in by_config.values() for r in rs})
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(shapes) + 2), 4))
    width = 0.8 / max(1, len(by_config))
    for i, (config, rs) in enumerate(by_config.items()):
        values = []
        for shape in shapes:
            group = [r for r in rs if r["shape"] == shape]
            values.append(sum(r["top3"] for r in group) / len(group) if group else 0)
        ax.bar([x + i * width for x in range(len(shapes))], values, width, label=config)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(shapes))], shapes, rotation=30, ha="right")
    ax.set_ylabel("answering page in the top 3")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+")
    parser.add_argument("--out")
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--profile", default="tuned")
    parser.add_argument("--index")
    parser.add_argument("--reranker", default="", help="'jarvis', a folder or 'none' (default: the configured)")
    parser.add_argument("--encoder", default="", help="a passage encoder folder (default: the configured)")
    parser.add_argument("--label", default="")
    parser.add_argument("--figures", nargs="+")
    parser.add_argument("--chart")
    args = parser.parse_args()
    figures(args) if args.figures else ask(args)


if __name__ == "__main__":
    main()
