"""What a question costs, against what a roberta-base reader's window costs, measured in one run.

The unit is one window of a roberta-base-shaped QA model (12 layers, hidden 768: deepset/roberta-base-squad2's
shape, random weights: compute does not depend on them), int8, onnxruntime, 512 tokens, batch 1, the threads
Jarvis answers with. Each round times one such window, then one whole question through Jarvis's pipeline
(`Jarvis.ask`, no answer cache: retrieval, the reranker, the reader, the confidence), alternating, so that both
see the same machine. Reports the p50 of each and their ratio (issue 47's target: a question at most 1.5
windows), and the files of the three models a question runs (encoder, reranker, reader) with their sizes.

    python -m jarvis_lab.bench.bench_cost [--questions FILE] [--rounds 60] [--json out.json]

Needs the real-wiki test bed (../shared/realwiki); asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from jarvis.config import Config
from jarvis.percentiles import percentile

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT.parent / "shared" / "realwiki" / "pages.json.gz"
ROBERTA_BASE = dict(vocab_size=50265, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                    intermediate_size=3072, max_position_embeddings=514, type_vocab_size=1)


def roberta_window(work: Path, threads: int):
    """A function that runs one 512-token window of a roberta-base-shaped int8 QA model in onnxruntime."""
    import numpy as np
    import onnxruntime
    import torch
    from transformers import RobertaConfig, RobertaForQuestionAnswering

    from jarvis.readers.onnx_backend import export_qa_model

    target = work / "roberta-base-int8.onnx"
    if not target.is_file():
        torch.manual_seed(0)
        model = RobertaForQuestionAnswering(RobertaConfig(**ROBERTA_BASE)).eval()
        export_qa_model(model, ["input_ids", "attention_mask"], target, quantize=True)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(target), options, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feed = {"input_ids": rng.integers(5, 50000, size=(1, 512), dtype=np.int64),
            "attention_mask": np.ones((1, 512), dtype=np.int64)}

    def run() -> float:
        began = time.perf_counter()
        session.run(None, feed)
        return time.perf_counter() - began

    run()
    return run


def model_files(jarvis) -> dict[str, int]:
    """The model files a question runs, with their sizes in bytes."""
    from jarvis.index.dense import ENCODER_CARD, ENCODER_MODEL, SHIPPED_ENCODER
    from jarvis.readers.rerank import RERANKER_MODEL

    files = {}
    if (SHIPPED_ENCODER / ENCODER_CARD).is_file():
        files["passage encoder"] = (SHIPPED_ENCODER / ENCODER_MODEL).stat().st_size
    if jarvis.reranker is not None:
        files["reranker"] = (jarvis.reranker.folder / RERANKER_MODEL).stat().st_size
    folder = Path(getattr(jarvis.reader, "folder", "") or "")
    reader = next(folder.glob("*.onnx"), None) if folder.is_dir() else None
    if reader is not None:
        files["reader"] = reader.stat().st_size
    return files


def main() -> None:
    from jarvis.assembly import assemble
    from jarvis.eval.questions import load_questions
    from jarvis.eval.realbed import realbed_corpus
    from jarvis.eval.runner import corpus_key
    from jarvis.index import ensure_index
    from jarvis.runtime import set_threads

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", default=str(ROOT / "eval" / "dev" / "realbed_dev.txt"))
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--work", default="")
    parser.add_argument("--json")
    args = parser.parse_args()

    config = Config()
    config = replace(config, reader=replace(config.reader, cache_size=0, threads=args.threads))
    threads = set_threads(args.threads)
    work = Path(args.work or tempfile.mkdtemp(prefix="jarvis-cost-"))
    window = roberta_window(work, threads)
    corpus = realbed_corpus(config.home, PAGES, config.crawl, progress=False)
    index_dir = ensure_index(corpus, config.home / "eval-indexes" / corpus_key(corpus) / "tuned", progress=False)
    questions = [q.text for q in load_questions(args.questions)]
    windows, asks = [], []
    with assemble(config, index_dir) as jarvis:
        jarvis.ask("how do i warm up?")
        for i in range(args.rounds):
            windows.append(window())
            began = time.perf_counter()
            jarvis.ask(questions[i % len(questions)])
            asks.append(time.perf_counter() - began)
        files = model_files(jarvis)
        reader = jarvis.reader.name
    result = {"rounds": args.rounds, "threads": threads, "reader": reader,
              "window_p50_s": percentile(windows, 0.5), "question_p50_s": percentile(asks, 0.5),
              "question_p95_s": percentile(asks, 0.95), "ratio_p50": percentile(asks, 0.5) / percentile(windows, 0.5),
              "model_files_mb": {k: round(v / 1e6, 1) for k, v in files.items()},
              "models_total_mb": round(sum(files.values()) / 1e6, 1), "load": os.getloadavg()[0],
              "window_mean_s": statistics.mean(windows)}
    print(json.dumps(result, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
