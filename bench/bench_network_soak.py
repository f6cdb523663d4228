"""Soak of the worker pool: 3 game servers, each with its `jarvis serve --redis` bridge, answered by 2
`jarvis worker` processes through one Redis, while workers are killed and Redis is restarted.

    python bench/bench_network_soak.py                       # 10 minutes, 3 x 6 players
    python bench/bench_network_soak.py --minutes 3 --players 4

Set-up: a redis-server of its own (append-only file on); 3 RaspberryJuice doubles in this process
(wikis/raspberryjuice.py (jarvis_lab.raspberryjuice): replies once per tick, as the plugin does); 3 `jarvis serve --redis`
processes, one on each; 2 `jarvis worker` processes on the bundled index (the offline reader, --reader; the
answer cache off, so that every question is read).
The players ask varied questions (eval/questions.txt), each waiting for the answer (a "busy" notice is not
one) and 3.5-15 s of thought before the next. Faults:
- every --kill-every seconds one worker, in turn, is killed with SIGKILL mid-question (the kill waits, up to
  20 s, until it holds a question it has not acknowledged) and a new one started (its question is claimed
  by the other after [redis] claim_after);
- Redis is restarted once, at --redis-restart-at of the run (SIGTERM: it writes its append-only file; down
  for --redis-down seconds).

Prints: questions asked, answered, lost (asked and never answered within 300 s), answered twice (a second
answer line to a player for one question), "busy" notices, "no answer in time" replies; what the pools
and workers logged (duplicate answers the bridges dropped, claims, questions dropped as too old); and the
RSS of every process after warm-up and at the end. Asserts nothing.
"""
from __future__ import annotations

import argparse
import math
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from jarvis.percentiles import percentile  # noqa: E402
from jarvis_lab.bench.soak import GIVE_UP_SECONDS, THINK_SECONDS, rss_mb  # noqa: E402
from jarvis.eval.questions import parse_questions  # noqa: E402
from jarvis_lab.raspberryjuice import Player, RaspberryJuiceDouble  # noqa: E402
from jarvis_lab.redis_server import RedisServer  # noqa: E402

PREFIX = "[Jarvis] "
BUSY = "busy right now"          # jarvis.network.BUSY_NOTICE's start
EXPIRED = "no answer came in time"
WARM_UP_SECONDS = 30.0



@dataclass
class SoakPlayer:
    server: int
    entity_id: int
    name: str
    next_at: float
    asked_at: float = 0.0
    waiting: bool = False
    seen: int = 0               # posts of the server already looked at
    answers_now: int = 0        # answer lines to the question in hand


@dataclass
class Tally:
    asked: int = 0
    answered: int = 0
    lost: int = 0
    twice: int = 0
    busy: int = 0
    expired: int = 0
    latencies: list[float] = field(default_factory=list)


class Process:
    """A child process with its log in a file (never a pipe that could fill up)."""

    def __init__(self, name: str, args: list[str], log: Path, env: dict) -> None:
        self.name, self.log = name, log
        self.handle = log.open("w")
        self.popen = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self.handle, env=env)
        self.started_at = time.monotonic()
        self.rss_start = float("nan")     # after WARM_UP_SECONDS of its life

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, sig=signal.SIGTERM) -> int:
        if self.alive():
            self.popen.send_signal(sig)
        try:
            code = self.popen.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            code = self.popen.wait()
        self.handle.close()
        return code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--servers", type=int, default=3)
    parser.add_argument("--players", type=int, default=6, help="players on each server")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--reader", default="fallback:minilm", help="the workers' reader (default: %(default)s)")
    parser.add_argument("--kill-every", type=float, default=120.0, help="seconds between worker kills")
    parser.add_argument("--redis-restart-at", type=float, default=0.55, help="share of the run")
    parser.add_argument("--redis-down", type=float, default=3.0, help="seconds Redis stays down")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    questions = [q.text for q in parse_questions((ROOT / "eval" / "questions.txt").read_text(encoding="utf-8"))]
    tmp = Path(tempfile.mkdtemp(prefix="jarvis-network-soak-"))
    home = tmp / "home"
    settings = tmp / "jarvis.toml"
    # The answer cache off: the players ask eval/questions.txt's 51 questions again and again, and every one is read.
    settings.write_text("[reader]\ncache_size = 0\n\n[redis]\nclaim_after = 10.0\nbusy_after = 5.0\nmax_age = 120.0\n")
    env = {**os.environ, "JARVIS_HOME": str(home), "OMP_NUM_THREADS": "1"}
    from jarvis.index import ensure_index
    from jarvis.config import Config

    config = Config(home=home)
    index_dir = ensure_index(config.bundled_corpus, config.default_index_dir, profile=config.index_profile,
                             progress=False)
    redis = RedisServer(tmp / "redis").start()
    doubles = [RaspberryJuiceDouble({100 + p: Player(f"S{s}P{p}") for p in range(args.players)})
               for s in range(args.servers)]
    serves = [Process(f"serve{s}", [sys.executable, "-m", "jarvis", "serve", "-v", "--redis", redis.url,
                                    "--config", str(settings), "--mc-host", "127.0.0.1", "--mc-port", str(d.port)],
                      tmp / f"serve{s}.log", env) for s, d in enumerate(doubles)]
    generation = [0]

    def new_worker(slot: int) -> Process:
        generation[0] += 1
        name = f"worker{slot}-{generation[0]}"
        return Process(name, [sys.executable, "-m", "jarvis", "worker", "-v", "--redis", redis.url, "--config",
                              str(settings), "--index", str(index_dir), "--reader", args.reader, "--name", name],
                       tmp / f"{name}.log", env)

    workers = [new_worker(i) for i in range(args.workers)]
    retired: list[Process] = []
    print(f"logs in {tmp}", flush=True)
    try:
        for double in doubles:
            if not double.wait_for(lambda d=double: d.polled_on(1), timeout=300):
                raise SystemExit("a bridge never polled its server")
        wait_for_workers(redis, [w.name for w in workers])
        players = [SoakPlayer(s, 100 + p, f"S{s}P{p}", time.monotonic() + rng.uniform(0, 5))
                   for s in range(args.servers) for p in range(args.players)]
        tally = Tally()
        began = time.monotonic()
        end = began + args.minutes * 60
        next_kill = began + args.kill_every
        restart_at = began + args.redis_restart_at * args.minutes * 60
        redis_restarted = False
        rss_taken = False
        kills = 0
        mid_question = [0]
        killer: threading.Thread | None = None

        def kill_and_replace(slot: int, at: float) -> None:
            victim = workers[slot]
            holding(redis, victim.name, timeout=20.0)   # mid-question: it holds one, unacknowledged
            victim.stop(signal.SIGKILL)
            held = pending(redis, victim.name)          # what it held when it died (it may have just acknowledged)
            mid_question[0] += bool(held)
            retired.append(victim)
            workers[slot] = new_worker(slot)
            print(f"{at:6.0f} s: killed {victim.name}" + (" mid-question" if held else "")
                  + f", started {workers[slot].name}", flush=True)
        redis_rss_start = float("nan")
        while time.monotonic() < end or any(p.waiting for p in players):
            now = time.monotonic()
            for process in serves + workers:
                if process.rss_start != process.rss_start and now - max(began, process.started_at) >= WARM_UP_SECONDS:
                    process.rss_start = rss_mb(process.popen.pid)
            if not rss_taken and now - began >= WARM_UP_SECONDS:
                redis_rss_start = rss_mb(redis.process.pid)
                rss_start_self = rss_mb(os.getpid())
                rss_taken = True
            if now >= next_kill and now < end and (killer is None or not killer.is_alive()):
                slot = kills % len(workers)
                kills += 1
                next_kill += args.kill_every
                killer = threading.Thread(target=kill_and_replace, args=(slot, now - began), daemon=True)
                killer.start()      # the players go on meanwhile (they are what gives the worker a question)
            if not redis_restarted and now >= restart_at:
                redis.restart(down_for=args.redis_down)
                redis_restarted = True
                print(f"{now - began:6.0f} s: Redis restarted (down {args.redis_down:g} s)", flush=True)
            posts = [double.posts_snapshot() for double in doubles]
            for player in players:
                step(player, doubles[player.server], posts[player.server], questions, rng, tally, now, asking=now < end)
            if now > end + GIVE_UP_SECONDS:
                break
            time.sleep(0.05)
        if killer is not None:
            killer.join(timeout=60)
        time.sleep(2.0)          # a second answer, if any, would come now
        for player in players:
            step(player, doubles[player.server], doubles[player.server].posts_snapshot(), questions, rng, tally,
                 time.monotonic(), asking=False)
        rss_end = {p.name: rss_mb(p.popen.pid) for p in serves + workers}
        redis_rss_end = rss_mb(redis.process.pid)
        rss_end_self = rss_mb(os.getpid())
    finally:
        codes = {p.name: p.stop() for p in serves + workers}
        redis.stop()
        for double in doubles:
            double.close()
    report(args, tally, serves, workers, retired, codes, rss_end, (redis_rss_start, redis_rss_end),
           (rss_start_self, rss_end_self), kills, mid_question[0])
    return 0


def pending(redis: RedisServer, consumer: str) -> list:
    return redis.client().xpending_range("jarvis:questions", "workers", "-", "+", 10, consumername=consumer)


def holding(redis: RedisServer, consumer: str, timeout: float) -> bool:
    """Waits (at most ``timeout``) until the worker holds a question it has not acknowledged yet."""
    client = redis.client()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if client.xpending_range("jarvis:questions", "workers", "-", "+", 1, consumername=consumer):
                return True
        except Exception:  # noqa: BLE001 - Redis restarting
            pass
        time.sleep(0.005)
    return False


def wait_for_workers(redis: RedisServer, names: list[str], timeout: float = 300) -> None:
    client = redis.client()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            have = {c["name"] for c in client.xinfo_consumers("jarvis:questions", "workers")}
            if set(names) <= have:
                return
        except Exception:  # noqa: BLE001 - no group yet
            pass
        time.sleep(0.5)
    raise SystemExit("the workers did not start")


def step(player: SoakPlayer, server: RaspberryJuiceDouble, posts: list[str], questions: list[str],
         rng: random.Random, tally: Tally, now: float, asking: bool) -> None:
    mine = f"{PREFIX}{player.name}: "
    for post in posts[player.seen:]:
        if not post.startswith(mine):
            continue
        if BUSY in post:
            tally.busy += 1
            continue
        player.answers_now += 1
        if player.answers_now == 2:
            tally.twice += 1
            print(f"answered twice: {player.name}: {post[:100]}", flush=True)
        if player.waiting:
            player.waiting = False
            if EXPIRED in post:
                tally.expired += 1
            else:
                tally.answered += 1
                tally.latencies.append(now - player.asked_at)
            player.next_at = now + rng.uniform(*THINK_SECONDS)
    player.seen = len(posts)
    if player.waiting and now - player.asked_at > GIVE_UP_SECONDS:
        tally.lost += 1
        player.waiting = False
        print(f"lost: {player.name}'s question of {now - player.asked_at:.0f} s ago", flush=True)
        player.next_at = now
    if asking and not player.waiting and now >= player.next_at:
        server.say(player.entity_id, f"jarvis, {rng.choice(questions)}")
        tally.asked += 1
        player.waiting = True
        player.asked_at = now
        player.answers_now = 0


def last_event(path: Path, event: str) -> dict:
    found = re.findall(rf"event={event} (.*)", path.read_text(errors="replace"))
    return dict(re.findall(r"(\w+)=(\S+)", found[-1])) if found else {}


def report(args, tally: Tally, serves, workers, retired, codes, rss_end, redis_rss, self_rss, kills,
           mid_question) -> None:
    print()
    print(f"{args.minutes:g} min, {args.servers} servers x {args.players} players, {args.workers} workers "
          f"({args.reader}), {kills} worker kills ({mid_question} left a question pending), Redis restarted once")
    print(f"asked {tally.asked}, answered {tally.answered}, lost {tally.lost}, answered twice {tally.twice}, "
          f"'no answer in time' {tally.expired}, busy notices {tally.busy}")
    print(f"latency (question to answer in the chat): p50 {percentile(tally.latencies or [math.nan], 0.50):.2f} s, "
          f"p95 {percentile(tally.latencies or [math.nan], 0.95):.2f} s, max {max(tally.latencies or [float('nan')]):.2f} s")
    for serve in serves:
        pool = last_event(serve.log, "pool_closed")
        stopped = last_event(serve.log, "stopped")
        print(f"{serve.name}: exit {codes[serve.name]}; pool: asked {pool.get('asked')}, answered {pool.get('answered')}, "
              f"duplicate answers dropped {pool.get('duplicates')}, expired {pool.get('expired')}, "
              f"reconnects {pool.get('reconnects')}; bridge: answered {stopped.get('answered')}, "
              f"errors {stopped.get('errors')}")
    claimed = dropped = poison = answered = 0
    for worker in workers:
        stopped = last_event(worker.log, "worker_stopped")
        claimed += int(stopped.get("claimed", 0))
        dropped += int(stopped.get("dropped_old", 0))
        poison += int(stopped.get("poison", 0))
        answered += int(stopped.get("answered", 0))
    for worker in retired:     # killed: no closing line; count its claims from the log
        claimed += worker.log.read_text(errors="replace").count("event=claimed")
        answered += worker.log.read_text(errors="replace").count("event=answered")
    print(f"workers: answered {answered} (the killed ones' included), claimed from dead workers {claimed}, "
          f"dropped as too old {dropped}, poison {poison}")
    print("RSS (MB) after warm-up -> at the end:")
    for process in serves + workers:
        print(f"  {process.name}: {process.rss_start:.0f} -> {rss_end[process.name]:.0f}")
    print(f"  redis-server: {redis_rss[0]:.1f} -> {redis_rss[1]:.1f}")
    print(f"  the doubles and players (this process): {self_rss[0]:.0f} -> {self_rss[1]:.0f}")


if __name__ == "__main__":
    sys.exit(main())
