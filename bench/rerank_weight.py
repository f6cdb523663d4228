"""The reranker's part in the final choice, measured on the choice sets (docs/eval/retrieval/rules.md, rules 2
and 3): every question asked through the whole pipeline on the real-wiki test bed without the reranker, then
with it at each weight of ``ReaderSettings.rerank_weight`` (the reader's margin over no answer plus the weight
times its passage's reranker logit). With the reranker, each question's passages are reranked and read once;
the weights only re-run the final choice (the reranker's and the reader's outputs are kept for the question),
so every weight's answers are exactly what ``jarvis ask`` would give with it.

    python -m jarvis_lab.bench.rerank_weight --index DIR [--reranker jarvis] [--weights 0 0.25 0.5 1 2]
        [--sets ...] --out records.jsonl

Prints full F1, the page in the top 3 and stated-right by set and configuration; one JSON record per question
and configuration (style_sets' fields: ``python -m jarvis_lab.bench.style_sets figures`` reads them). Asserts
nothing.
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

from jarvis.assembly import assemble
from jarvis.config import Config
from jarvis.crawler.corpus import read_corpus
from jarvis.eval.metrics import best_f1, right_if_stated
from jarvis.eval.questions import load_questions
from jarvis.eval.realbed import realbed_corpus
from jarvis.eval.runner import PageResolver
from jarvis.index import Searcher

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT.parent / "shared" / "realwiki" / "pages.json.gz"
# The choice sets of rules.md: (file pattern, every Nth question).
CHOICE_SETS = [("eval/dev/shapes/f1.jsonl", 1), ("eval/dev/shapes/f2.jsonl", 1), ("eval/dev/realbed_dev2.txt", 1),
               ("eval/dev/realbed_dev4.txt", 1), ("eval/train/style/w5_*.txt", 2), ("eval/train/style/w11_*.txt", 2)]


class Remembered:
    """A model's method whose answers are kept by argument: a weight re-runs the choice, not the models."""

    def __init__(self, method, key) -> None:
        self.method, self.key, self.kept = method, key, {}

    def __call__(self, *args):
        key = self.key(*args)
        if key not in self.kept:
            self.kept[key] = self.method(*args)
        return self.kept[key]


def _passages_key(question, passages, n=None):
    return question, tuple((p.title, tuple(p.section), p.text, p.score) for p in passages), n


def questions(sets) -> list[tuple[str, object]]:
    out = []
    for pattern, every in sets:
        for path in sorted(glob.glob(str(ROOT / pattern))):
            out += [(Path(path).stem, q) for q in load_questions(path)[::every]]
    return out


def record(name: str, set_name: str, q, answer, resolver: PageResolver) -> dict:
    return {"configuration": name, "set": set_name, "writer": q.writer or set_name.partition("_")[0],
            "style": q.shape or set_name.partition("_")[2] or "plain", "question": q.text,
            "expected": q.expected_title, "answers": q.answers, "answer": answer.text,
            "answer_title": answer.title, "confidence": answer.confidence, "abstained": answer.abstained,
            "sentence": answer.sentence, "pages": list(answer.pages), "f1": best_f1(answer.text, q.answers),
            "right": right_if_stated(answer, q.answers),
            "points_to_expected": bool(answer.title) and resolver.same_page(q.expected_title, answer.title),
            "top3": any(resolver.same_page(q.expected_title, t) for t in answer.pages[:3]),
            "signals": answer.signals, "verdict": q.verdict, "said": answer.verdict, "held_out": False}


def run(config: Config, index_dir: Path, reranker: str, weights: list[float], asked, resolver, out) -> None:
    config = replace(config, reader=replace(config.reader, reranker=reranker, cache_size=0))
    names = [f"reranker {reranker}, weight {w:g}" for w in weights] if reranker != "none" else ["no reranker"]
    with Searcher(index_dir, config.retrieval) as searcher, assemble(config, searcher=searcher) as jarvis:
        jarvis.reader.candidates = Remembered(jarvis.reader.candidates, _passages_key)
        if jarvis.reranker is not None:
            jarvis.reranker.run = Remembered(jarvis.reranker.run, lambda q, texts: (q, tuple(texts)))
            jarvis.reranker.verdict = Remembered(jarvis.reranker.verdict, lambda q, text: (q, text))
        began = time.perf_counter()
        for n, (set_name, q) in enumerate(asked, 1):
            for name, weight in zip(names, weights if reranker != "none" else [0.0]):
                jarvis.settings = replace(jarvis.settings, rerank_weight=weight)
                out.write(json.dumps(record(name, set_name, q, jarvis.ask(q.text), resolver)) + "\n")
            jarvis.reader.candidates.kept.clear()
            if n % 50 == 0:
                print(f"{names[0]}: {n}/{len(asked)} questions, {(time.perf_counter() - began) / n:.2f} s each",
                      file=sys.stderr, flush=True)


def table(records: list[dict]) -> str:
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in records:
        group = "f1+f2" if r["set"] in ("f1", "f2") else "dev2+4" if r["set"].startswith("realbed") else "w5+w11"
        groups[(r["configuration"], group)].append(r)
        groups[(r["configuration"], "all")].append(r)
    rows = []
    for (name, group), rs in sorted(groups.items()):
        stated = [r for r in rs if not r["abstained"] and r["answer"]]
        rows.append([name, group, len(rs), round(sum(r["f1"] for r in rs) / len(rs), 3),
                     round(sum(r["top3"] for r in rs) / len(rs), 3),
                     round(sum(r["right"] for r in stated) / len(stated), 3) if stated else "-",
                     round(len(stated) / len(rs), 3)])
    return tabulate(rows, headers=["configuration", "sets", "n", "full F1", "top-3", "stated right", "coverage"],
                    tablefmt="github")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", help="a tuned index of the test bed (default: built under $JARVIS_HOME)")
    parser.add_argument("--reranker", default="jarvis", help="the reranker: 'jarvis' (shipped) or a folder")
    parser.add_argument("--weights", type=float, nargs="+", default=[0.0, 0.25, 0.5, 1.0, 2.0])
    parser.add_argument("--no-baseline", action="store_true", help="skip the run without the reranker")
    parser.add_argument("--out", required=True)
    parser.add_argument("--figures", nargs="*", help="print the table of these records and stop")
    args = parser.parse_args()
    if args.figures:
        print(table([json.loads(line) for path in args.figures for line in open(path, encoding="utf-8")]))
        return
    config = Config()
    corpus = realbed_corpus(config.home, PAGES, config.crawl, progress=False)
    if args.index:
        index_dir = Path(args.index)
    else:
        from jarvis.eval.runner import corpus_key
        from jarvis.index import ensure_index
        index_dir = ensure_index(corpus, config.home / "eval-indexes" / corpus_key(corpus) / "tuned", progress=True)
    resolver = PageResolver(read_corpus(corpus))
    asked = questions(CHOICE_SETS)
    with open(args.out, "w", encoding="utf-8") as out:
        if not args.no_baseline:
            run(config, index_dir, "none", [0.0], asked, resolver, out)
        run(config, index_dir, args.reranker, args.weights, asked, resolver, out)
    print(table([json.loads(line) for line in open(args.out, encoding="utf-8")]))


if __name__ == "__main__":
    main()
