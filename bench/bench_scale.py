"""What a large wiki costs: the real-wiki test bed repeated under new titles into a corpus of N pages (20,000 by
default: what a modpack's wiki or the whole Minecraft Wiki brings), indexed with the default (passage) profile on
this machine, in a child process (its progress on stderr): the build's wall time, CPU time and peak RSS, and the
index's size on disk; then the p50 of a question's search and of a whole question (``Jarvis.ask``, Jarvis's own
reader, no answer cache) on it and, for comparison, on the bed itself, the two interleaved.

    python -m jarvis_lab.bench.bench_scale [--pages 20000] [--work DIR] [--json out.json] [--chart scale.png]

Run again with the same ``--work``, it measures the questions again on the index built there (the build's own
figures are kept beside it, build-N.json).

This measures cost, not quality: the copies answer nothing new. Needs ../shared/realwiki; asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT.parent / "shared" / "realwiki" / "pages.json.gz"


def scaled_corpus(bed_corpus: Path, pages: int, out: Path) -> Path:
    """The bed's pages repeated, copy k titled "<title> (copy k)" (its URL and aliases likewise), up to ``pages``."""
    from jarvis.crawler.corpus import read_corpus, write_corpus

    bed = list(read_corpus(bed_corpus))
    made = []
    copy = 0
    while len(made) < pages:
        for page in bed:
            if len(made) == pages:
                break
            if copy == 0:
                made.append(page)
                continue
            made.append(type(page)(title=f"{page.title} (copy {copy})", url=f"{page.url}_copy_{copy}",
                                   paragraphs=page.paragraphs, aliases=[f"{a} (copy {copy})" for a in page.aliases],
                                   sections=page.sections, page_kind=page.page_kind, categories=page.categories,
                                   site=page.site))
        copy += 1
    write_corpus(made, out)
    return out


def build_in_child(corpus: Path, index_dir: Path) -> dict:
    """Build the index in a child process: its wall seconds, CPU seconds and peak RSS (MB)."""
    code = ("import json, resource, sys, time\n"
            "from jarvis.runtime import set_threads\n"
            "from jarvis.index import build_index\n"
            "set_threads(0)\n"
            "t = time.perf_counter()\n"
            "stats = build_index(sys.argv[1], sys.argv[2], progress=True)\n"
            "print(json.dumps({'seconds': time.perf_counter() - t, 'pages': stats.pages,\n"
            "                  'summary': stats.summary()}))\n")
    began = time.perf_counter()
    child = subprocess.run([sys.executable, "-c", code, str(corpus), str(index_dir)], stdout=subprocess.PIPE,
                           text=True, check=True)
    wall = time.perf_counter() - began
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = json.loads(child.stdout.strip().splitlines()[-1])
    return {**result, "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024}


def size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def question_p50s(index_dirs: list[Path], questions: list[str], rounds: int = 2) -> list[dict[str, float]]:
    """The p50 seconds of a question's search (its 30 best passages) and of the whole question on each index,
    the indexes interleaved question by question (``rounds`` times over), so that the machine's load falls
    on each alike."""
    from contextlib import ExitStack
    from dataclasses import replace

    from jarvis.assembly import assemble
    from jarvis.config import Config
    from jarvis.index import Searcher
    from jarvis.percentiles import percentile

    config = Config()
    config = replace(config, reader=replace(config.reader, cache_size=0))
    with ExitStack() as stack:
        opened = []
        for index_dir in index_dirs:
            searcher = stack.enter_context(Searcher(index_dir, config.retrieval))
            jarvis = stack.enter_context(assemble(config, searcher=searcher))
            jarvis.ask("warm up")
            opened.append((searcher, jarvis))
        times = [{"search": [], "ask": []} for _ in opened]
        for _ in range(rounds):
            for question in questions:
                for (searcher, jarvis), kept in zip(opened, times):
                    began = time.perf_counter()
                    searcher.passages(question, 30)
                    kept["search"].append(time.perf_counter() - began)
                    began = time.perf_counter()
                    jarvis.ask(question)
                    kept["ask"].append(time.perf_counter() - began)
    return [{name: percentile(values, 0.5) for name, values in kept.items()} for kept in times]


def main() -> None:
    from jarvis.config import Config
    from jarvis.eval.questions import load_questions
    from jarvis.eval.realbed import realbed_corpus
    from jarvis.eval.runner import corpus_key
    from jarvis.index import ensure_index

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20000)
    parser.add_argument("--work", default="")
    parser.add_argument("--questions", default=str(ROOT / "eval" / "dev" / "realbed_dev.txt"))
    parser.add_argument("--json")
    parser.add_argument("--chart")
    args = parser.parse_args()
    config = Config()
    work = Path(args.work or tempfile.mkdtemp(prefix="jarvis-scale-"))
    bed = realbed_corpus(config.home, PAGES, config.crawl, progress=False)
    index_dir, figures = work / f"index-{args.pages}", work / f"build-{args.pages}.json"
    if figures.is_file() and (index_dir / "CURRENT").is_file():   # a build of an earlier run: measure it again
        print(f"reusing the build in {index_dir} ({figures})", file=sys.stderr)
        built = json.loads(figures.read_text(encoding="utf-8"))
    else:
        corpus = scaled_corpus(bed, args.pages, work / f"corpus-{args.pages}.jsonl")
        built = build_in_child(corpus, index_dir)
        figures.write_text(json.dumps(built, indent=1) + "\n", encoding="utf-8")
    questions = [q.text for q in load_questions(args.questions)][:200]
    bed_index = ensure_index(bed, config.home / "eval-indexes" / corpus_key(bed) / "tuned", progress=False)
    scaled, on_bed = question_p50s([index_dir, Path(bed_index)], questions)
    result = {"pages": args.pages, **built, "index_mb": size_mb(index_dir),
              "bed_index_mb": size_mb(Path(bed_index)),
              "search_p50_s_scaled": scaled["search"], "search_p50_s_bed": on_bed["search"],
              "ask_p50_s_scaled": scaled["ask"], "ask_p50_s_bed": on_bed["ask"]}
    print(json.dumps(result, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    if args.chart:
        chart(result, Path(args.chart))


def chart(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(13, 3.2))
    labels = ["1,923-page bed", f"{result['pages']:,} pages"]
    axes[0].bar(labels, [result["bed_index_mb"], result["index_mb"]])
    axes[0].set_title("index on disk (MB)")
    axes[1].bar(labels, [1000 * result["search_p50_s_bed"], 1000 * result["search_p50_s_scaled"]])
    axes[1].set_title("search p50 (ms)")
    axes[2].bar(labels, [1000 * result["ask_p50_s_bed"], 1000 * result["ask_p50_s_scaled"]])
    axes[2].set_title("whole question p50 (ms)")
    axes[3].bar(["build wall", "build CPU"], [result["wall_s"] / 60, result["cpu_s"] / 60])
    axes[3].set_title(f"{result['pages']:,}-page build (min)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
