"""Benchmark of the reader: `Jarvis.ask` latency and peak memory per reader configuration.

    python bench/bench_reader.py                      # 12 questions, all configurations, 2 threads
    python bench/bench_reader.py --questions 30 --configs batched,sequential
    python bench/bench_reader.py --work /tmp/jarvis-bench   # keep the built model for the next run

The span reader is measured with a model of deepset/roberta-base-squad2's exact shape
(RobertaConfig: 12 layers, hidden 768, vocab 50265, 514 positions, type_vocab_size 1) and
random weights (compute does not depend on weight values), with a BPE tokenizer trained
on the sample wiki; the hub is not needed. Questions come from eval/questions.txt, pages
from an index of the bundled corpus, 3 pages a question, answer cache off.

Every configuration runs in its own subprocess, so peak RSS is per configuration. Prints
figures, asserts nothing. Targets on 2 cores: batched >= 4x faster than sequential on the
same pages; p50 < 1.5 s for roberta-base size, < 0.3 s for the fallback; peak RSS < 1.5 GB.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))   # qa_models: builds the random roberta-base-shaped model

# name -> ReaderSettings changes ("model" is filled in with the built model unless it is "").
CONFIGS = {
    "batched": {"quantize": False},
    "sequential": {"sequential": True, "quantize": False},
    "sequential+pad": {"sequential": True, "quantize": False},  # windows padded to max_seq_len (padded_reader)
    "batched+prerank8": {"max_paragraphs": 8, "quantize": False},
    "batched+int8": {"quantize": True},                 # the default on a CPU
    "sequential+int8": {"sequential": True, "quantize": True},
    "batched+int8+prerank8": {"quantize": True, "max_paragraphs": 8},
    "fallback:minilm": {"model": "", "fallback": "minilm"},
    "fallback:lexical": {"model": "", "fallback": "lexical"},
}
ROBERTA_BASE = dict(vocab_size=50265, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                    intermediate_size=3072, max_position_embeddings=514, type_vocab_size=1)
WARM_UP = "how do i warm up the reader?"


def questions(n: int) -> list[str]:
    from eval.questions import load_questions
    from jarvis.config import DEFAULT_QUESTIONS

    return [q.text for q in load_questions(DEFAULT_QUESTIONS)][:n]


def prepare(work: Path) -> tuple[Path, Path]:
    """The roberta-base-shaped model and the bundled corpus's index, built once under ``work``."""
    from index import build_index
    from jarvis.config import BUNDLED_CORPUS
    from qa_models import build_qa_model, sample_wiki_texts

    model_dir = work / "roberta-base-random" / "model"
    if not (model_dir / "config.json").is_file():
        print("building a random roberta-base-shaped QA model ...", file=sys.stderr)
        build_qa_model(work / "roberta-base-random", sample_wiki_texts(), tokenizer_vocab=8000, **ROBERTA_BASE)
    index_dir = work / "index"
    build_index(BUNDLED_CORPUS, index_dir, progress=False)
    return model_dir, index_dir


# --------------------------------------------------------------------------- one configuration (child)


def run_config(name: str, model_dir: Path, index_dir: Path, n_questions: int, threads: int) -> dict:
    import torch

    from jarvis.config import Config, ReaderSettings
    from jarvis.pipeline import Jarvis

    torch.set_num_threads(threads)
    changes = {"model": str(model_dir), "threads": threads, "cache_size": 0, **CONFIGS[name]}
    config = Config(reader=replace(ReaderSettings(), **changes))
    began = time.perf_counter()
    jarvis = Jarvis.from_config(config, index_dir)
    load_s = time.perf_counter() - began
    if name == "sequential+pad":
        jarvis.reader = padded_reader(jarvis.reader)
    jarvis.ask(WARM_UP)
    latencies, answers, windows, tokens = [], [], [], []
    for question in questions(n_questions):
        answer = jarvis.ask(question)
        latencies.append(answer.seconds)
        answers.append(answer.text)
        if hasattr(jarvis.reader, "tokenizer") and hasattr(jarvis.reader, "_tokenize"):
            w, t = _windows_read(jarvis, question)
            windows.append(w)
            tokens.append(t)
    return {"config": name, "reader": jarvis.reader.name, "load_s": load_s, "latencies": latencies,
            "answers": answers, "windows": windows, "tokens": tokens,
            "peak_rss_mb": peak_rss_mb()}


def peak_rss_mb() -> float:
    """This process's peak resident memory. VmHWM, not getrusage: ru_maxrss survives exec, so a
    child would report the parent's peak (the parent builds a 500 MB model)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # not Linux


def padded_reader(reader):
    """A naive sequential reader that pads every window to max_seq_len, as tokenizer(..., padding=
    "max_length") does: the way a one-paragraph-at-a-time reader is often written. Bench only."""
    from jarvis.reader import SpanReader

    class PaddedReader(SpanReader):
        def _tokenize(self, question, passages):
            return self.tokenizer([question] * len(passages), [p.text for p in passages],
                                  truncation="only_second", max_length=self.settings.max_seq_len,
                                  stride=self.settings.doc_stride, return_overflowing_tokens=True,
                                  return_offsets_mapping=True, padding="max_length")

    return PaddedReader(reader.tokenizer, reader.model, reader.settings, reader.name)


def _windows_read(jarvis, question: str) -> tuple[int, int]:
    """How many windows and tokens (padding included where the reader pads) the span reader ran."""
    from jarvis.reader import Passage

    hits = jarvis.searcher.search(question, k=jarvis.top_k)
    passages = [Passage(h.title, text, rank, i) for rank, h in enumerate(hits) for i, text in enumerate(h.paragraphs)]
    if jarvis.settings.max_paragraphs:
        passages = jarvis.best_passages(question, passages, jarvis.settings.max_paragraphs)
    if not passages:
        return 0, 0
    encoded = jarvis.reader._tokenize(question, passages)
    return len(encoded["input_ids"]), sum(len(ids) for ids in encoded["input_ids"])


# --------------------------------------------------------------------------- report (parent)


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=12, help="questions per configuration")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (the targets are for 2 cores)")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated: " + ", ".join(CONFIGS))
    parser.add_argument("--work", type=Path, default=None, help="keep the built model and index here")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--index-dir", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        print(json.dumps(run_config(args.child, args.model_dir, args.index_dir, args.questions, args.threads)))
        return

    with tempfile.TemporaryDirectory(prefix="bench-reader-") as tmp:
        work = args.work or Path(tmp)
        model_dir, index_dir = prepare(work)
        print(f"cores: {os.cpu_count()}, torch threads: {args.threads}, questions: {args.questions}, "
              f"load average before: {os.getloadavg()[0]:.1f}")
        results = {}
        for name in args.configs.split(","):
            child = subprocess.run(
                [sys.executable, __file__, "--child", name, "--model-dir", str(model_dir), "--index-dir",
                 str(index_dir), "--questions", str(args.questions), "--threads", str(args.threads)],
                capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": str(args.threads)})
            if child.returncode != 0:
                print(f"{name}: failed\n{child.stderr[-2000:]}")
                continue
            results[name] = json.loads(child.stdout.strip().splitlines()[-1])
            report_line(results[name], results.get("batched"))
        print(f"load average after: {os.getloadavg()[0]:.1f}")
        for slow in ("sequential", "sequential+pad"):
            if "batched" in results and slow in results:
                seq, bat = results[slow], results["batched"]
                speedup = statistics.mean(seq["latencies"]) / statistics.mean(bat["latencies"])
                same = sum(a == b for a, b in zip(seq["answers"], bat["answers"]))
                print(f"batched vs {slow}: {speedup:.2f}x faster (mean latency), same answer on "
                      f"{same}/{len(bat['answers'])} questions")


def report_line(result: dict, batched: dict | None) -> None:
    lat = result["latencies"]
    line = (f"{result['config']:24} p50 {statistics.median(lat):6.3f} s  p95 {percentile(lat, 0.95):6.3f} s  "
            f"mean {statistics.mean(lat):6.3f} s  load {result['load_s']:5.1f} s  "
            f"peak RSS {result['peak_rss_mb']:6.0f} MB")
    if result["windows"]:
        line += f"  windows/q {statistics.mean(result['windows']):5.1f}  tokens/q {statistics.mean(result['tokens']):6.0f}"
    if batched and result["config"] != "batched" and result["windows"]:
        same = sum(a == b for a, b in zip(result["answers"], batched["answers"]))
        line += f"  same answer as batched {same}/{len(batched['answers'])}"
    print(line, flush=True)


if __name__ == "__main__":
    main()
