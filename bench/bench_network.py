"""Benchmark of the worker pool (jarvis/network/): throughput of 1 and 2 workers, latency under load, and
what the pool adds to a question's time against answering in-process.

    python bench/bench_network.py                         # the offline reader (fallback:minilm), 120 questions
    python bench/bench_network.py --reader fallback:lexical --questions 200 --json pool.json

Set-up: a redis-server of its own (append-only file on, as docs/network.md recommends) on a free port of
127.0.0.1; the bundled index; `jarvis worker` processes (the real CLI) with one CPU thread each
(OMP_NUM_THREADS=1: one worker per core is how the pool scales), the answer cache off ([reader]
cache_size = 0, so every question is read); questions from eval/questions.txt and the dev sets.

1. In-process: the same reader in this process (one thread), one question at a time: its time per question.
2. The pool at low load, 1 fresh worker: one question at a time through Redis; the pool's added latency is each
   question's round trip (submit to delivery) less the worker's own reading time, and the p50 of the round
   trips against the in-process p50.
3. Capacity: N distinct questions submitted at once, to 1 worker, then to 2 workers: questions per second
   (N over the time to the last delivery), and their ratio (the target: >= 1.6 on 2 cores). In the steady
   state of a live server: fresh workers warmed by passes over the questions (the reader's encoder keeps an
   LRU of the page blocks it embedded), then measured on the same questions as texts no worker has seen (a
   filler word: "... please?"). Also the workers' CPU time per question, and what that makes on 2 idle
   cores (the machine's other work takes CPU from the workers; their CPU time per question it does not).
4. Latency under load: Poisson arrivals at 50 % and 90 % of the 2-worker capacity for --seconds each,
   every question a new text (the questions with a filler word: "... please?"): p50 and p95.

The machine's load is printed too: the share of its CPUs busy during each phase, and how much of it was
this benchmark's processes (a shared machine's other work slows the workers, and shows here).
Prints a table; asserts nothing.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from jarvis.percentiles import percentile  # noqa: E402
from jarvis.eval.questions import parse_questions  # noqa: E402
from jarvis_lab.redis_server import RedisServer  # noqa: E402

# Questions about the bundled sample wiki (the workers' index): 181 distinct ones.
QUESTION_FILES = [ROOT / "eval" / "questions.txt", *sorted((ROOT / "eval" / "dev").glob("sample_dev*.txt"))]




# Words that make a question asked again a new text (as players' questions are), without changing what it asks.
FILLERS = ["please", "thanks", "mate", "again", "quickly", "friend", "now", "today", "buddy", "pls", "ty", "jarvis"]


def load_questions(limit: int) -> list[str]:
    """Distinct questions about the sample wiki, shuffled; at most ``limit``."""
    seen: dict[str, None] = {}
    for path in QUESTION_FILES:
        for question in parse_questions(path.read_text(encoding="utf-8")):
            seen.setdefault(question.text, None)
    texts = list(seen)
    random.Random(7).shuffle(texts)
    return texts[:limit]


def _rounds(questions: list[str]):
    """The questions, then each with a filler word, then with another...: never the same text twice."""
    for round_ in range(len(FILLERS) + 1):
        yield [text if round_ == 0 else f"{text.rstrip('?')} {FILLERS[round_ - 1]}?" for text in questions]


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU time of these processes so far."""
    total = 0.0
    for pid in pids:
        try:
            parts = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (float(parts[11]) + float(parts[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError):
            pass
    return total


class CpuMeter:
    """The machine's busy CPU share, and this benchmark's processes' share, between start() and stop()."""

    def __init__(self, pids) -> None:
        self.pids = pids         # a callable: the benchmark's process ids now

    @staticmethod
    def _machine() -> tuple[float, float]:
        fields = [float(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        idle = fields[3] + fields[4]
        return sum(fields) - idle, sum(fields)

    def _ours(self) -> float:
        ticks = 0.0
        for pid in self.pids():
            try:
                parts = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                ticks += float(parts[11]) + float(parts[12])
            except (OSError, IndexError):
                pass
        return ticks

    def start(self) -> None:
        self._busy, self._total = self._machine()
        self._ours_at = self._ours()
        self._t = time.monotonic()

    def stop(self) -> dict:
        busy, total = self._machine()
        ours = self._ours() - self._ours_at
        elapsed = time.monotonic() - self._t
        cores = os.cpu_count() or 1
        hz = os.sysconf("SC_CLK_TCK")
        return {"machine_busy": round((busy - self._busy) / max(1.0, total - self._total), 3),
                "ours_busy": round(ours / hz / max(1e-9, elapsed * cores), 3),
                "loadavg": Path("/proc/loadavg").read_text().split()[0]}


class Collector:
    """Deliveries of PoolClient.submit: when each came, and the answer's own reading time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done = threading.Condition(self.lock)
        self.results: list[tuple[float, float, object]] = []   # (submitted, delivered, result)

    def submit(self, pool, text: str) -> None:
        from jarvis.network.client import _PlainQuestion

        submitted = time.perf_counter()

        def deliver(result) -> None:
            with self.done:
                self.results.append((submitted, time.perf_counter(), result))
                self.done.notify_all()

        pool.submit(_PlainQuestion(text), deliver)

    def wait(self, count: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self.done:
            while len(self.results) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.done.wait(left)
        return True


def start_worker(url: str, name: str, args, config_file: Path, home: Path) -> subprocess.Popen:
    env = {**os.environ, "JARVIS_HOME": str(home), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "jarvis", "worker", "-q", "--redis", url, "--name", name,
                             "--config", str(config_file), "--reader", args.reader],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait_consumer(server: RedisServer, name: str, process: subprocess.Popen, timeout: float = 300) -> None:
    client = server.client()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"worker {name} exited: {process.stderr.read()[-2000:]}")
        try:
            if any(c["name"] == name for c in client.xinfo_consumers("jarvis:questions", "workers")):
                return
        except Exception:  # noqa: BLE001 - no group yet
            pass
        time.sleep(0.2)
    raise SystemExit(f"worker {name} did not start in {timeout:g} s")


def capacity(pool, questions: list[str], timeout: float) -> tuple[float, list[float]]:
    collector = Collector()
    began = time.perf_counter()
    for text in questions:
        collector.submit(pool, text)
    if not collector.wait(len(questions), timeout):
        raise SystemExit(f"capacity run: only {len(collector.results)} of {len(questions)} answered")
    last = max(delivered for _, delivered, _ in collector.results)
    return len(questions) / (last - began), [d - s for s, d, _ in collector.results]


def open_loop(pool, texts, rate: float, seconds: float, rng: random.Random) -> list[float]:
    collector = Collector()
    count = 0
    began = time.perf_counter()
    next_at = began
    while next_at - began < seconds:
        now = time.perf_counter()
        if now < next_at:
            time.sleep(next_at - now)
        collector.submit(pool, next(texts))
        count += 1
        next_at += rng.expovariate(rate)
    if not collector.wait(count, timeout=seconds + 300):
        raise SystemExit(f"open loop: only {len(collector.results)} of {count} answered")
    return [d - s for s, d, _ in collector.results]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader", default="fallback:minilm", help="the workers' reader (default: %(default)s)")
    parser.add_argument("--questions", type=int, default=181, help="distinct questions per capacity run (181 at most)")
    parser.add_argument("--low-load", type=int, default=30, help="questions asked one at a time (in-process and pool)")
    parser.add_argument("--seconds", type=float, default=60.0, help="seconds of each open-loop run")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args()

    from jarvis.assembly import assemble
    from jarvis.config import Config, ReaderSettings, RedisSettings
    from jarvis.network import PoolClient, RedisLink
    from jarvis.index import ensure_index

    questions = load_questions(args.questions)
    workers: list[subprocess.Popen] = []
    results: dict = {"reader": args.reader, "cpus": os.cpu_count(), "questions": len(questions)}
    meter = CpuMeter(lambda: [os.getpid(), *(w.pid for w in workers)])
    with tempfile.TemporaryDirectory(prefix="jarvis-bench-network-") as tmp:
        home = Path(tmp) / "home"
        # One compute thread per process (torch's and the onnxruntime sessions'): a worker per core.
        config = Config(home=home, reader=ReaderSettings(model="", reader=args.reader, cache_size=0, threads=1))
        index_dir = ensure_index(config.bundled_corpus, config.default_index_dir, profile=config.index_profile,
                                 progress=False)
        config_file = Path(tmp) / "bench.toml"
        config_file.write_text("[reader]\ncache_size = 0\nthreads = 1\n\n[redis]\nmax_waiting = 100000\nmax_age = 600\n")
        with RedisServer(Path(tmp) / "redis") as server:
            settings = RedisSettings(url=server.url, max_waiting=100_000, max_age=600.0, busy_after=600.0)
            try:
                # 1. in-process, one thread, one question at a time
                from jarvis.runtime import set_threads

                set_threads(1)
                low = questions[:args.low_load]
                with assemble(config, index_dir) as jarvis:
                    jarvis.ask(questions[-1])     # first-question costs (lazy loading) are not the steady state
                    meter.start()
                    local = []
                    for text in low:
                        began = time.perf_counter()
                        jarvis.ask(text)
                        local.append(time.perf_counter() - began)
                    results["in_process"] = {"p50_ms": round(percentile(local, 0.50) * 1000, 1),
                                             "p95_ms": round(percentile(local, 0.95) * 1000, 1), **meter.stop()}
                print(f"in-process: p50 {results['in_process']['p50_ms']} ms", flush=True)

                def fresh_workers(count: int) -> None:
                    """Stop the workers, start ``count`` new ones (cold, as after a deploy)."""
                    for worker in workers:
                        worker.send_signal(signal.SIGTERM)
                        worker.wait(timeout=120)
                    workers.clear()
                    for n in range(count):
                        name = f"w{n + 1}-{os.urandom(2).hex()}"
                        workers.append(start_worker(server.url, name, args, config_file, home))
                        wait_consumer(server, name, workers[-1])

                fresh_workers(1)
                with PoolClient(RedisLink(settings), origin="bench") as pool:
                    # 2. the pool at low load: one question at a time, one fresh worker (as in-process was)
                    pool.ask(questions[-1])
                    meter.start()
                    round_trips, added = [], []
                    for text in low:
                        collector = Collector()
                        collector.submit(pool, text)
                        collector.wait(1, 120)
                        submitted, delivered, answer = collector.results[0]
                        round_trips.append(delivered - submitted)
                        added.append(delivered - submitted - answer.seconds)
                    results["pool_low_load"] = {
                        "p50_ms": round(percentile(round_trips, 0.50) * 1000, 1),
                        "p95_ms": round(percentile(round_trips, 0.95) * 1000, 1),
                        "added_p50_ms": round(percentile(added, 0.50) * 1000, 1),
                        "added_p95_ms": round(percentile(added, 0.95) * 1000, 1),
                        "p50_vs_in_process_ms": round((percentile(round_trips, 0.50) - percentile(local, 0.50)) * 1000, 1),
                        **meter.stop()}
                    print(f"pool, low load: {results['pool_low_load']}", flush=True)

                    # 3. capacity in the steady state: fresh workers, warmed by passes over the questions (the
                    # reader's encoder keeps an LRU of the page blocks it embedded, as on a live server), then
                    # measured on the same questions as new texts (a filler word: never seen by a worker)
                    rounds = [[text for text in round_] for round_ in _rounds(questions)]
                    for count, warm_passes in ((1, 2), (2, 2)):   # the same passes: the same cache state
                        fresh_workers(count)
                        for n in range(warm_passes):
                            capacity(pool, rounds[2 + n], timeout=1800)
                        meter.start()
                        cpu_before = cpu_seconds([w.pid for w in workers])
                        rate, _ = capacity(pool, rounds[1], timeout=1800)
                        cpu = (cpu_seconds([w.pid for w in workers]) - cpu_before) / len(rounds[1])
                        results[f"capacity_{count}"] = {"questions_per_s": round(rate, 2),
                                                        "worker_cpu_s_per_question": round(cpu, 4), **meter.stop()}
                        print(f"{count} worker(s): {results[f'capacity_{count}']}", flush=True)
                    c1, c2 = (results[f"capacity_{n}"]["questions_per_s"] for n in (1, 2))
                    results["ratio_2_to_1"] = round(c2 / c1, 2)
                    cpu2 = results["capacity_2"]["worker_cpu_s_per_question"]
                    results["idle_2_cores_questions_per_s"] = round(min(2, os.cpu_count() or 1) / cpu2, 2)
                    print(f"2 workers / 1: x{c2 / c1:.2f}", flush=True)

                    # 4. latency under load: every question a new text, as players ask
                    rng = random.Random(11)
                    texts = itertools.cycle([text for round_ in rounds[4:] for text in round_])
                    for share in (0.5, 0.9):
                        meter.start()
                        latencies = open_loop(pool, texts, share * c2, args.seconds, rng)
                        results[f"load_{int(share * 100)}"] = {
                            "rate_per_s": round(share * c2, 2), "questions": len(latencies),
                            "p50_ms": round(percentile(latencies, 0.50) * 1000, 1),
                            "p95_ms": round(percentile(latencies, 0.95) * 1000, 1), **meter.stop()}
                        print(f"{int(share * 100)} % load: {results[f'load_{int(share * 100)}']}", flush=True)
            finally:
                for worker in workers:
                    if worker.poll() is None:
                        worker.send_signal(signal.SIGTERM)
                for worker in workers:
                    try:
                        worker.wait(timeout=60)
                    except subprocess.TimeoutExpired:
                        worker.kill()
    report(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def report(results: dict) -> None:
    from tabulate import tabulate

    rows = []
    for key, label in [("in_process", "in-process, one at a time"), ("pool_low_load", "pool, 1 worker, one at a time"),
                       ("capacity_1", "capacity, 1 worker"), ("capacity_2", "capacity, 2 workers"),
                       ("load_50", "2 workers at 50 % of capacity"), ("load_90", "2 workers at 90 % of capacity")]:
        r = results.get(key)
        if r is None:
            continue
        rows.append([label, r.get("questions_per_s", r.get("rate_per_s", "")), r.get("p50_ms", ""), r.get("p95_ms", ""),
                     f"{r['machine_busy']:.0%}", f"{r['ours_busy']:.0%}", r["loadavg"]])
    print()
    print(f"reader {results['reader']}, {results['cpus']} CPUs, {results['questions']} questions a capacity run")
    print(tabulate(rows, headers=["run", "questions/s", "p50 ms", "p95 ms", "CPUs busy", "of them ours", "load avg"]))
    if "ratio_2_to_1" in results:
        print(f"2 workers / 1 worker: x{results['ratio_2_to_1']} (target >= 1.6); workers' CPU per question: "
              f"{results['capacity_1']['worker_cpu_s_per_question'] * 1000:.0f} ms (1 worker), "
              f"{results['capacity_2']['worker_cpu_s_per_question'] * 1000:.0f} ms (2 workers): on 2 idle cores, "
              f"{results['idle_2_cores_questions_per_s']} questions/s")
    low = results.get("pool_low_load")
    if low:
        print(f"pool's added latency at low load: p50 {low['added_p50_ms']} ms, p95 {low['added_p95_ms']} ms "
              f"(round trip less the worker's reading); round-trip p50 - in-process p50: "
              f"{low['p50_vs_in_process_ms']} ms (target <= 20 ms)")


if __name__ == "__main__":
    sys.exit(main())
