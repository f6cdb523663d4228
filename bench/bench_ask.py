"""`jarvis ask` end to end on the real-wiki test bed: index build time, then p50/p95 per question.

    python bench/bench_ask.py                     # the real bed when ../shared is there, else the sample wiki
    python bench/bench_ask.py --corpus FILE --questions FILE [--reader fallback:minilm]

Crawls the test bed through the local mirror once (as `jarvis eval --realbed` does), builds the hybrid
index from scratch in a temporary directory (Whoosh + page vectors, timed), then asks every question
once with the answer cache off, in one process, after one warm-up question. Prints a table. Asserts
nothing.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path


from tabulate import tabulate  # noqa: E402

from jarvis.percentiles import percentile  # noqa: E402
from jarvis.eval.questions import DEFAULT_QUESTIONS, REALBED_QUESTIONS, load_questions  # noqa: E402
from jarvis.index import build_index  # noqa: E402
from jarvis.assembly import assemble
from jarvis.config import Config  # noqa: E402




def main() -> int:
    config = Config.from_env()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="corpus JSONL (default: the real bed's crawl, else the bundled corpus)")
    parser.add_argument("--questions", type=Path, help="question file (default: the real bed's dev set)")
    parser.add_argument("--reader", default="fallback:minilm", help="reader name (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    from jarvis.runtime import set_threads

    set_threads(args.threads)     # torch's and the onnxruntime sessions' threads, for the whole process
    corpus, questions, bed = args.corpus, args.questions, "given corpus"
    if corpus is None:
        if config.realbed_pages.is_file():
            from jarvis.eval.realbed import realbed_corpus

            corpus, bed = realbed_corpus(config.home, config.realbed_pages, config.crawl), "real-wiki test bed"
        else:
            corpus, bed = config.bundled_corpus, "sample wiki (no ../shared)"
    if questions is None:
        questions = REALBED_QUESTIONS if bed == "real-wiki test bed" else DEFAULT_QUESTIONS
    asked = [q.text for q in load_questions(questions)]

    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        stats = build_index(corpus, Path(tmp) / "index", progress=False)
        build_seconds = time.perf_counter() - began
        settings = replace(config.reader, model="", reader=args.reader, cache_size=0)
        jarvis = assemble(replace(config, reader=settings), Path(tmp) / "index")
        jarvis.ask("what is a creeper?")   # warm-up: first calls allocate
        seconds = []
        for question in asked:
            seconds.append(jarvis.ask(question).seconds)
        jarvis.close()

    rows = [["corpus", f"{bed}: {stats.pages} pages"],
            ["index build (BM25F + page vectors)", f"{build_seconds:.1f} s ({stats.procs} processes)"],
            ["questions", f"{len(asked)} ({questions.name})"],
            ["reader", args.reader],
            ["ask p50", f"{statistics.median(seconds):.3f} s"],
            ["ask p95", f"{percentile(seconds, 0.95):.3f} s"],
            ["ask max", f"{max(seconds):.3f} s"]]
    print(tabulate(rows, tablefmt="github"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
