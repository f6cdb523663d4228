"""Benchmark of the chat bridge, end to end in a real (local) Minecraft server.

    python bench/bench_bridge.py                       # fallback reader, default index
    python bench/bench_bridge.py --questions 12 --players 10 --per-player 2 --index DIR

Set-up, as in the demo: flying-squid + the chat API plugin, `jarvis serve --fallback`, and
mineflayer bots. Prints, asserts nothing:
- question-to-reply latency as a player sees it (bot sends the question -> bot reads the
  first reply line), p50/p95, for new questions and for the same questions again (answer
  cache: what is left is the bridge + server + network overhead), and the reader's own time
  (from the bridge's `event=answered answer_ms=` log) for comparison;
- burst throughput: --players bots join and ask --per-player new questions each, all at once;
  answers per second from the first question sent to the last reply read, and how many were
  answered vs told busy. Target with the fallback reader: p50 under 1 s.
Needs Node.js and mcserver/node_modules (`make setup`).
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from jarvis.percentiles import percentile  # noqa: E402
from jarvis.eval.questions import parse_questions  # noqa: E402
from jarvis.demo import DemoError, LocalMinecraft, node_executable, run_bot, start_jarvis  # noqa: E402

QUESTIONS_FILE = ROOT / "eval" / "questions.txt"
RATE_LIMIT_GAP = 3.1   # seconds between one player's questions (jarvis serve's default limit is 3 s)




def describe(values: list[float]) -> str:
    if not values:
        return "no data"
    return (f"p50 {percentile(values, 0.50):7.0f} ms   p95 {percentile(values, 0.95):7.0f} ms   "
            f"max {max(values):7.0f} ms   (n={len(values)})")


def answer_times(jarvis_log: str, questions: set[str]) -> list[float]:
    """The reader's time per question (answer_ms of `event=answered`), for the given questions."""
    first: dict[str, float] = {}   # a question asked again is answered from the cache: keep the first time
    for question, ms in re.findall(r'event=answered .*?question="((?:[^"\\]|\\.)*)".*? answer_ms=(\d+)', jarvis_log):
        if question in questions:
            first.setdefault(question, float(ms))
    return list(first.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10, help="sequential questions (default: %(default)s)")
    parser.add_argument("--players", type=int, default=10, help="bots in the burst (default: %(default)s)")
    parser.add_argument("--per-player", type=int, default=2, help="questions per bot in the burst (default: %(default)s)")
    parser.add_argument("--index", type=Path, default=None, help="index directory (default: the bundled corpus's)")
    args = parser.parse_args()

    try:
        node_executable()
    except DemoError as exc:
        print(f"bench_bridge: {exc}", file=sys.stderr)
        return 1
    pool = [q.text for q in parse_questions(QUESTIONS_FILE.read_text(encoding="utf-8"))]
    sequential = pool[: args.questions]
    burst = pool[args.questions: args.questions + args.players * args.per_player]

    with tempfile.TemporaryDirectory(prefix="bench-bridge-") as tmp:
        log_dir = Path(tmp)
        server = LocalMinecraft(log_dir, max_seconds=1800).start()
        jarvis = None
        try:
            began = time.perf_counter()
            jarvis = start_jarvis(server.api_port, log_dir, fallback=True, index_dir=args.index)
            print(f"jarvis serve (fallback reader) ready in {time.perf_counter() - began:.1f} s")

            # 1. One player, new questions, then the same questions again (answer cache).
            chat = [f"jarvis, {q}" for q in sequential]
            events = list(run_bot(server.port, chat + chat, interval=RATE_LIMIT_GAP, reply_timeout=60,
                                  max_seconds=len(chat) * 2 * (RATE_LIMIT_GAP + 60)))
            latencies = [e["latency_ms"] for e in events if e["event"] == "reply"]
            fresh, cached = latencies[: len(chat)], latencies[len(chat):]
            missing = sum(1 for e in events if e["event"] == "no_reply")

            # 2. A burst: many players at once, each with new questions.
            chat = [f"jarvis, {q}" for q in burst]
            events = list(run_bot(server.port, chat, players=args.players, username="Player", spread=True,
                                  interval=RATE_LIMIT_GAP, reply_timeout=120, max_seconds=600))
            sent = [e["t"] for e in events if e["event"] == "sent"]
            replies = [e for e in events if e["event"] == "reply"]
            busy = [e for e in replies if "ask again in a moment" in e["text"]]
            answered = len(replies) - len(busy)
            wall = (max(e["t"] for e in replies) - min(sent)) if replies and sent else float("nan")
            reader_ms = answer_times(jarvis.log_text(), set(sequential))
        finally:
            if jarvis is not None:
                jarvis.stop()
            server.stop()

    print(f"\nquestion-to-reply latency, one player, {len(sequential)} new questions then the same again:")
    print(f"  new questions     {describe(fresh)}")
    print(f"  reader alone      {describe(reader_ms)}")
    print(f"  cached answers    {describe(cached)}   <- bridge + server + client overhead")
    if missing:
        print(f"  {missing} question(s) got no reply")
    print(f"\nburst: {args.players} players x {args.per_player} new questions, asked at once:")
    print(f"  {answered} answered, {len(busy)} told busy, {len(sent) - len(replies)} without reply")
    print(f"  {wall:.1f} s from the first question to the last reply: {answered / wall:.2f} answers/s"
          if wall == wall and wall > 0 else "  no replies")
    print(f"  burst latency     {describe([e['latency_ms'] for e in replies])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
