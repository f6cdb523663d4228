"""Benchmark of the span reader: latency, tokens read, gold-passage recall and peak memory per configuration.

    python bench/bench_reader.py                          # real bed if ../shared is there, else the sample corpus
    python bench/bench_reader.py --corpus sample          # the bundled sample wiki, eval/questions.txt
    python bench/bench_reader.py --questions dev.txt --configs onnx-int8,torch-int8 --limit 40
    python bench/bench_reader.py --work /tmp/jarvis-bench  # keep the built models, corpus and index

What a question costs here is what the pipeline runs after retrieval: passage selection within
the token budget (jarvis/readers/passages.py) plus the span reader (jarvis/readers/span.py). The pages a
question reads: its expected page (when the question file names one that the corpus holds) and
the next 2 pages a BM25 search returns, in search order; otherwise the top 3 search hits.

Models: random weights in the exact shapes of deepset/roberta-base-squad2 (12 layers, hidden 768,
vocab 50265), deepset/tinyroberta-squad2 (6 layers, roberta-base width) and
distilbert-base-cased-distilled-squad (6 layers, WordPiece, no token_type_ids): compute does not
depend on the weights, the hub is not needed. Their tokenizers are trained on the corpus being
read (byte-level BPE / WordPiece, 8,000 entries: on the real bed ~1.84 tokens a word, as a real
pretrained vocabulary gives). Answers are meaningless, so answer quality is "not measured";
gold-passage recall is: the share of questions (with a gold answer somewhere in their pages)
whose chosen passages hold a gold answer. Columns: p50/p95 wall seconds a question, "cpu s p50"
the process's CPU seconds a question (all threads; steadier than wall time on a shared machine),
words and tokens read (tokens: every window, question and special tokens included).

Every configuration runs in its own subprocess (peak RSS per configuration, a fresh ONNX
session). The ONNX exports are made once, before timing, in --work. Prints a table, writes
bench-reader.png next to --json when given; asserts nothing. Targets (issue 12, 2 threads, real
bed, roberta-base shape, default settings): p50 < 1.0 s, p95 < 2.0 s, peak RSS < 1.5 GB, recall >= 98 %.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path


from jarvis.percentiles import percentile  # noqa: E402
from jarvis_lab.bench import realbed  # noqa: E402

ROBERTA_BASE = dict(vocab_size=50265, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                    intermediate_size=3072, max_position_embeddings=514, type_vocab_size=1)
TINYROBERTA = {**ROBERTA_BASE, "num_hidden_layers": 6}
DISTILBERT_BASE = dict(vocab_size=28996, dim=768, n_layers=6, n_heads=12, hidden_dim=3072,
                       max_position_embeddings=512)
MODELS = {"roberta-base": ("roberta", ROBERTA_BASE), "tinyroberta": ("roberta", TINYROBERTA),
          "distilbert": ("distilbert", DISTILBERT_BASE)}
TOKENIZER_VOCAB = 8000

# name -> (model shape or "" for the fallback reader, ReaderSettings changes). Budget None: the default.
CONFIGS = {
    "onnx-int8": ("roberta-base", {"backend": "onnx", "quantize": True}),            # the CPU default
    "torch-int8": ("roberta-base", {"backend": "torch", "quantize": True}),
    "onnx-fp32": ("roberta-base", {"backend": "onnx", "quantize": False}),
    "torch-fp32": ("roberta-base", {"backend": "torch", "quantize": False}),
    "onnx-int8-b768": ("roberta-base", {"backend": "onnx", "token_budget": 768}),
    "onnx-int8-b1024": ("roberta-base", {"backend": "onnx", "token_budget": 1024}),
    "onnx-int8-b2048": ("roberta-base", {"backend": "onnx", "token_budget": 2048}),
    "onnx-int8-b3072": ("roberta-base", {"backend": "onnx", "token_budget": 3072}),
    "onnx-int8-all": ("roberta-base", {"backend": "onnx", "token_budget": 0}),
    "torch-int8-all": ("roberta-base", {"backend": "torch", "token_budget": 0}),   # before issue 12
    "torch-fp32-sequential": ("roberta-base", {"backend": "torch", "quantize": False, "sequential": True}),
    "tinyroberta-onnx-int8": ("tinyroberta", {"backend": "onnx"}),
    "tinyroberta-torch-int8": ("tinyroberta", {"backend": "torch"}),
    "distilbert-onnx-int8": ("distilbert", {"backend": "onnx"}),
    "distilbert-torch-int8": ("distilbert", {"backend": "torch"}),
    "jarvis": ("", {"reader": "jarvis"}),     # Jarvis's own reader as shipped (trained weights, int8 ONNX)
    "jarvis-b1024": ("", {"reader": "jarvis", "token_budget": 1024}),
    "jarvis-b768": ("", {"reader": "jarvis", "token_budget": 768}),
    "jarvis-b1536": ("", {"reader": "jarvis", "token_budget": 1536}),   # the budget before the card carried one
    "fallback:minilm": ("", {"model": "", "fallback": "minilm"}),
    "fallback:lexical": ("", {"model": "", "fallback": "lexical"}),
}
# Reading every paragraph ("-all") takes ~10 s a question on the real bed: ask for it by name.
DEFAULT_CONFIGS = ["jarvis", "onnx-int8", "torch-int8", "onnx-fp32", "onnx-int8-b1024", "onnx-int8-b2048",
                   "tinyroberta-onnx-int8", "distilbert-onnx-int8", "fallback:lexical"]
WARM_UP = "how do i warm up the reader?"


# --------------------------------------------------------------------------- inputs (parent)


def prepare(work: Path, corpus: Path, models: set[str], progress: bool = True) -> tuple[dict[str, Path], Path]:
    """The random models (tokenizers trained on the corpus) and the corpus's index, built once under ``work``."""
    from jarvis.index import build_index

    texts = corpus_texts(corpus)
    built = {}
    for shape in sorted(models):
        family, config = MODELS[shape]
        model_dir = work / f"{shape}-random" / "model"
        if not (model_dir / "config.json").is_file():
            print(f"building a random {shape}-shaped QA model ...", file=sys.stderr)
            from jarvis_lab.qa_models import build_distilbert_qa_model, build_qa_model

            build = build_qa_model if family == "roberta" else build_distilbert_qa_model
            build(work / f"{shape}-random", texts, tokenizer_vocab=TOKENIZER_VOCAB, **config)
        built[shape] = model_dir
    index_dir = work / "index"
    build_index(corpus, index_dir, progress=progress)
    return built, index_dir


def corpus_texts(corpus: Path) -> list[str]:
    """Every other page's paragraphs: what the bench tokenizers learn from."""
    texts = []
    with corpus.open(encoding="utf-8") as handle:
        for i, line in enumerate(handle):
            if line.strip() and i % 2 == 0:
                texts.extend(json.loads(line)["paragraphs"])
    return texts


def resolve_corpus(choice: str, work: Path) -> tuple[Path, str]:
    """(corpus path, label): "realbed" crawls ../shared/realwiki's mirror once; "sample" is the bundled corpus."""
    from jarvis.config import BUNDLED_CORPUS

    if choice == "auto":
        choice = "realbed" if realbed.REALWIKI.is_file() else "sample"
    if choice == "realbed":
        if not realbed.REALWIKI.is_file():
            sys.exit(f"error: the real-wiki test bed is not at {realbed.REALWIKI}")
        return realbed.realbed_corpus(), "real bed (../shared/realwiki, crawled by the crawler)"
    if choice == "sample":
        return BUNDLED_CORPUS, "sample wiki (bundled corpus)"
    path = Path(choice)
    if not path.is_file():
        sys.exit(f"error: no corpus at {path}")
    return path, str(path)


# --------------------------------------------------------------------------- one configuration (child)


def question_inputs(corpus: Path, index_dir: Path, questions_path: Path, target: Path) -> Path:
    """For each question, the pages it reads (title, search score), and those pages with their sections,
    in one JSON file: the children read it instead of the corpus and index (their RSS is the reader's)."""
    from jarvis.eval.questions import load_questions
    from jarvis.index import Searcher

    pages = realbed.load_sections(corpus)
    items, needed = [], {}
    with Searcher(index_dir) as searcher:
        for question in load_questions(questions_path):
            hits = searcher.search(question.text, k=50)
            expected = realbed.find_page(pages, question.expected_title)
            if expected is None:
                chosen = [(h.title, h.score) for h in hits[:3]]
            else:   # the expected page first, scored as the top hit (what a retriever that finds it gives)
                top = max([h.score for h in hits], default=1.0)
                chosen = [(expected.title, top), *[(h.title, h.score) for h in hits if h.title != expected.title][:2]]
            items.append({"question": question.text, "answers": list(question.answers), "pages": chosen})
            for title, _ in chosen:
                page = pages[title]
                needed[title] = {"url": page.url, "paragraphs": page.paragraphs,
                                 "sections": [list(s) for s in page.sections]}
    target.write_text(json.dumps({"questions": items, "pages": needed}), encoding="utf-8")
    return target


def question_passages(item: dict, pages: dict) -> list:
    """The passages of a question's pages, in page order, with sections and page scores."""
    from jarvis.readers.base import Passage

    passages = []
    for rank, (title, score) in enumerate(item["pages"]):
        page = pages[title]
        passages += [Passage(title, text, rank, i, page["url"], section=tuple(page["sections"][i]), page_score=score)
                     for i, text in enumerate(page["paragraphs"])]
    return passages


def holds_gold(text: str, golds) -> bool:
    flat = " ".join(text.split()).casefold()
    return any(" ".join(g.split()).casefold() in flat for g in golds if g.strip())


def run_config(name: str, models: dict, inputs: Path, limit: int, threads: int, recall_only: bool) -> dict:
    from jarvis.config import ReaderSettings
    from jarvis.assembly import passage_selector
    from jarvis.readers import load_reader
    from jarvis.readers.passages import PassageSelector
    from jarvis.runtime import set_threads

    set_threads(threads)     # torch's and the onnxruntime sessions' threads, for the whole process
    shape, changes = CONFIGS[name]
    settings = replace(ReaderSettings(), threads=threads, cache_size=0,
                       **{"model": str(models[shape]) if shape else "", **changes})
    began = time.perf_counter()
    reader = load_reader(settings, name=settings.reader or None)
    load_s = time.perf_counter() - began
    selector = passage_selector(reader, settings) or PassageSelector(settings)
    data = json.loads(inputs.read_text(encoding="utf-8"))
    pages, rows = data["pages"], []
    if not recall_only:
        reader.read(WARM_UP, question_passages(data["questions"][0], pages)[:8])
    for n, item in enumerate(data["questions"]):
        passages = question_passages(item, pages)
        timed = not recall_only and n < limit
        wall, cpu = time.perf_counter(), time.process_time()
        chosen = selector.select(item["question"], passages)
        if timed:
            reader.read(item["question"], chosen.passages)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        gold_pages = any(holds_gold(p.text, item["answers"]) for p in passages)
        rows.append({"seconds": wall if timed else None, "cpu_seconds": cpu if timed else None,
                     "tokens": chosen.tokens, "words": sum(len(p.text.split()) for p in chosen.passages),
                     "all_words": sum(len(p.text.split()) for p in passages), "gold_available": gold_pages,
                     "gold_read": gold_pages and any(holds_gold(p.text, item["answers"]) for p in chosen.passages)})
    return {"config": name, "reader": reader.name, "backend": getattr(reader, "backend", "-"),
            "budget": selector.settings.token_budget, "load_s": load_s, "rows": rows, "peak_rss_mb": peak_rss_mb()}


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM: ru_maxrss would report the parent's peak after exec)."""
    import resource

    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # not Linux


def export_once(name: str, models: dict) -> None:
    """Make the config's ONNX export before it is timed (load() exports on first use, then caches)."""
    shape, changes = CONFIGS[name]
    if shape and changes.get("backend") == "onnx":
        from jarvis.config import ReaderSettings
        from jarvis.readers.span import SpanReader

        SpanReader.load(replace(ReaderSettings(), model=str(models[shape]), threads=1,
                                quantize=changes.get("quantize", True)))


# --------------------------------------------------------------------------- report (parent)




def summarize(result: dict) -> dict:
    rows = result["rows"]
    timed = [r["seconds"] for r in rows if r["seconds"] is not None]
    cpu = [r["cpu_seconds"] for r in rows if r["cpu_seconds"] is not None]
    with_gold = [r for r in rows if r["gold_available"]]
    recall = sum(r["gold_read"] for r in with_gold) / len(with_gold) if with_gold else float("nan")
    return {"config": result["config"], "reader": result["reader"], "backend": result["backend"],
            "budget": result["budget"] or "all",
            "p50 s": statistics.median(timed) if timed else None, "p95 s": percentile(timed, 0.95) if timed else None,
            "cpu s p50": statistics.median(cpu) if cpu else None,
            "words/q": round(statistics.mean(r["words"] for r in rows)),
            "tokens/q": round(statistics.mean(r["tokens"] for r in rows)),
            "gold recall": f"{recall:.1%} ({sum(r['gold_read'] for r in with_gold)}/{len(with_gold)})",
            "peak RSS MB": round(result["peak_rss_mb"]), "load s": round(result["load_s"], 1)}


def main() -> None:
    from jarvis.eval.questions import DEFAULT_QUESTIONS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="auto",
                        help='"realbed" (../shared/realwiki), "sample" (bundled), a corpus JSONL path, or "auto" '
                             "(default: the real bed when it is there)")
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS,
                        help="question file, question|expected title|gold|... (default: eval/questions.txt)")
    parser.add_argument("--limit", type=int, default=40, help="questions timed per configuration (recall uses all)")
    parser.add_argument("--threads", type=int, default=2, help="compute threads (the targets are for 2 cores)")
    parser.add_argument("--configs", default=",".join(DEFAULT_CONFIGS), help="comma-separated: " + ", ".join(CONFIGS))
    parser.add_argument("--recall-only", action="store_true", help="selection and recall only, no reading")
    parser.add_argument("--work", type=Path, default=None, help="keep the built models, corpus and index here")
    parser.add_argument("--json", type=Path, default=None, help="write the per-configuration results here")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--models", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--inputs", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        models = {k: Path(v) for k, v in json.loads(args.models).items()}
        print(json.dumps(run_config(args.child, models, args.inputs, args.limit, args.threads, args.recall_only)))
        return

    names = [n.strip() for n in args.configs.split(",") if n.strip()]
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        sys.exit(f"error: unknown configuration(s) {', '.join(unknown)} (choose from {', '.join(CONFIGS)})")
    if not args.questions.is_file():
        sys.exit(f"error: no question file at {args.questions}")
    with tempfile.TemporaryDirectory(prefix="bench-reader-") as tmp:
        work = args.work or Path(tmp)
        corpus, label = resolve_corpus(args.corpus, work)
        models, index_dir = prepare(work, corpus, {CONFIGS[n][0] for n in names if CONFIGS[n][0]})
        inputs = question_inputs(corpus, index_dir, args.questions, work / "question-inputs.json")
        if not args.recall_only:
            for name in names:
                export_once(name, models)
        print(f"corpus: {label}; questions: {args.questions} (timed: first {args.limit}); cores: {os.cpu_count()}, "
              f"threads: {args.threads}; load average before: {os.getloadavg()[0]:.1f}", flush=True)
        results, table = {}, []
        env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
        for name in names:
            command = [sys.executable, __file__, "--child", name, "--models", json.dumps({k: str(v) for k, v in models.items()}),
                       "--inputs", str(inputs), "--limit", str(args.limit), "--threads", str(args.threads)]
            child = subprocess.run(command + (["--recall-only"] if args.recall_only else []),
                                   capture_output=True, text=True, env=env)
            if child.returncode != 0:
                print(f"{name}: failed\n{child.stderr[-2000:]}", flush=True)
                continue
            results[name] = json.loads(child.stdout.strip().splitlines()[-1])
            table.append(summarize(results[name]))
            print(_line(table[-1]), flush=True)
        print(f"load average after: {os.getloadavg()[0]:.1f}\n")
        from tabulate import tabulate

        print(tabulate(table, headers="keys", floatfmt=".3f"))
        if args.json:
            args.json.write_text(json.dumps({"corpus": label, "questions": str(args.questions),
                                             "threads": args.threads, "results": results}))
            chart(table, args.json.with_name("bench-reader.png"))


def _line(summary: dict) -> str:
    return "  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in summary.items())


def chart(table: list[dict], path: Path) -> None:
    """p50/p95 latency bars per configuration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    timed = [row for row in table if row["p50 s"] is not None]
    if not timed:
        return
    fig, ax = plt.subplots(figsize=(max(6, len(timed) * 0.9), 4))
    xs = range(len(timed))
    ax.bar([x - 0.2 for x in xs], [r["p50 s"] for r in timed], 0.4, label="p50")
    ax.bar([x + 0.2 for x in xs], [r["p95 s"] for r in timed], 0.4, label="p95")
    ax.set_xticks(list(xs), [re.sub(r"-", "-\n", r["config"], count=1) for r in timed], fontsize=7)
    ax.set_ylabel("seconds a question (selection + reading)")
    ax.axhline(1.0, color="grey", linestyle=":", linewidth=1)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"chart: {path}")


if __name__ == "__main__":
    main()
