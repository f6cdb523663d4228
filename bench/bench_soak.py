"""Soak benchmark of the chat bridge: `jarvis serve` against a faithful RaspberryJuice double, or as a
player bot on the vanilla-strict test server, with faults.

    python bench/bench_soak.py                          # 10 players, 30 minutes, upstream dialect
    python bench/bench_soak.py --minutes 5 --dialect fork
    python bench/bench_soak.py --transport bot          # the player bot: 10 players, 10 minutes

The player bot (``--transport bot``, see :func:`bot_soak`): mcserver/server.js (flying-squid
1.21.4, vanilla's chat rules and spam kick), `jarvis serve --bot` (the real CLI, fallback
reader), and --players mineflayer players (mcserver/players.js) who ask in public or by whisper
(/msg, /tell, /w in turn), wait for the answer and think 3.5-15 s. Faults: the whole server
freezes (SIGSTOP: no tick, no packet) for 3-20 s about every --lag-every seconds, the first
exactly 12 s; an admin kicks Jarvis at a quarter and at three quarters of the run; the server
restarts at half time (every player and Jarvis are disconnected). It prints questions asked,
answered, refused, not delivered (typed while Jarvis was not in the game: the players are told
to ask again, and do), missed (the asker was disconnected when the answer came), lost (neither:
never answered), kicks for spam, latency p50/p95, reconnects, and the serve process's RSS.

Set-up: the RaspberryJuice double of the tests (wikis/raspberryjuice.py (jarvis_lab.raspberryjuice): replies once per
tick, ``Fail``, lag spikes, both dialects) in this process; `jarvis serve --fallback` (the real
CLI, the bundled index, auto-detected dialect) in a child process. --players players ask
varied questions (eval/questions.txt, several phrasings), each waiting for the answer and a
few seconds of thought before the next, as players do. Faults injected all along:
- ``Fail`` on one chat poll in --fail-every;
- lag spikes (the main thread stalls, chat keeps coming): one every --lag-every seconds on
  average, 3-20 s long, the first exactly 12 s;
- the server drops the API connection every --drop-every seconds.

Prints, asserts nothing: questions asked, answered, refused with a message, not delivered by
the server (typed while the connection was being re-made; the players were told to ask again
and did), lost (asked, delivered, never answered nor refused); reconnects, failed polls, stalls
and the longest; latency p50/p95 (all, and questions typed during a lag spike); the serve
process's RSS over time as a table and a chart, and its growth after warm-up (target < 10 %).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import queue
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

from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent

from jarvis.percentiles import percentile  # noqa: E402
from jarvis_lab.bench.soak import GIVE_UP_SECONDS, THINK_SECONDS, rss_mb  # noqa: E402
from jarvis.eval.questions import parse_questions  # noqa: E402
from jarvis_lab.raspberryjuice import Player, RaspberryJuiceDouble  # noqa: E402

QUESTIONS_FILE = ROOT / "eval" / "questions.txt"
PHRASINGS = ["jarvis, {q}", "Jarvis {q}", "jarvis: {q}", "JARVIS, {q}", "jarvis {q}"]
REASK_AFTER_NOTICE = 5.0
DUPLICATE_WINDOW = 60.0          # the same reply line to a player within this long: a line posted again         # undelivered this long after the "back" notice: the player asks again



@dataclass
class SoakPlayer:
    entity_id: int
    name: str
    next_at: float
    question: str | None = None
    key: int = 0
    asked_at: float = 0.0
    in_lag: bool = False
    last_lines: dict[str, float] = field(default_factory=dict)   # reply text -> when read
    recent: dict[str, float] = field(default_factory=dict)       # the player's questions -> when asked


@dataclass
class Tally:
    asked: int = 0
    answered: int = 0
    refused: int = 0
    undelivered: int = 0
    lost: int = 0
    duplicates: int = 0         # a line posted again after a dropped connection (at least once)
    lag_latencies: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    lost_questions: list[str] = field(default_factory=list)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=("api", "bot"), default="api",
                        help="the RaspberryJuice API against the double (api), or the player bot on the test server (bot)")
    parser.add_argument("--minutes", type=float, default=None, help="default: 30 (api), 10 (bot)")
    parser.add_argument("--players", type=int, default=10)
    parser.add_argument("--dialect", choices=("upstream", "fork"), default="upstream")
    parser.add_argument("--fail-every", type=int, default=6, help="Fail on one chat poll in N (default: %(default)s)")
    parser.add_argument("--lag-every", type=float, default=120.0, help="mean seconds between lag spikes")
    parser.add_argument("--drop-every", type=float, default=600.0, help="seconds between dropped connections")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--log", type=Path, default=None, help="keep the serve log here")
    parser.add_argument("--index", type=Path, default=None, help="index directory (default: the bundled corpus's)")
    args = parser.parse_args()
    if args.minutes is None:
        args.minutes = 10.0 if args.transport == "bot" else 30.0
    if args.transport == "bot":
        if args.lag_every == parser.get_default("lag_every"):
            args.lag_every = 90.0
        return bot_soak(args)

    rng = random.Random(args.seed)
    pool = [q.text for q in parse_questions(QUESTIONS_FILE.read_text(encoding="utf-8"))]
    duration = args.minutes * 60
    players = {100 + i: Player(f"Player{i}", f"\u00a77[Member] \u00a7fPlayer{i}") for i in range(args.players)}

    with tempfile.TemporaryDirectory(prefix="bench-soak-") as tmp, \
            RaspberryJuiceDouble(players, dialect=args.dialect, fail_polls_every=args.fail_every) as server:
        log_path = Path(tmp) / "serve.log"
        command = [sys.executable, "-m", "jarvis", "serve", "-v", "--fallback", "--mc-host", "127.0.0.1",
                   "--mc-port", str(server.port), "--mc-dialect", "auto"]
        if args.index:
            command += ["--index", str(args.index)]
        with open(log_path, "wb") as log_file:
            serve = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env={**os.environ, "JARVIS_HOME": str(Path(tmp) / "home"), "OMP_NUM_THREADS": "1"})
        try:
            if not server.wait_for(lambda: server.polled_on(2), timeout=600):
                print("bench_soak: jarvis serve never polled:\n" + log_path.read_text()[-2000:], file=sys.stderr)
                return 1
            tally, samples, faults = run_soak(server, serve, players, pool, rng, args, duration)
            alive = serve.poll() is None
            serve.terminate()
            try:
                serve.wait(timeout=60)
            except subprocess.TimeoutExpired:
                serve.kill()
                serve.wait()
        finally:
            if serve.poll() is None:
                serve.kill()
                serve.wait()
        log_text = log_path.read_text(encoding="utf-8", errors="replace")
        if args.log:
            args.log.write_text(log_text, encoding="utf-8")
    report(args, tally, samples, faults, alive, serve.returncode, log_text, server)
    return 0


def run_soak(server, serve, players, pool, rng, args, duration):
    began = time.monotonic()
    end = began + duration
    soakers = {pid: SoakPlayer(pid, p.name, began + rng.uniform(0, 10)) for pid, p in players.items()}
    tally = Tally()
    samples: list[tuple[float, float, int, int]] = []     # (elapsed s, RSS MB, asked, answered)
    faults = {"lag_spikes": 0, "lag_seconds": 0.0, "drops": 0}
    next_lag = began + 60.0
    first_lag = True
    next_drop = began + args.drop_every / 2
    next_sample = began
    seen = 0
    back_notices: list[float] = []
    progress = tqdm(total=int(duration), unit="s", desc=f"soak ({args.dialect})", mininterval=5)

    while True:
        now = time.monotonic()
        asking = now < end
        waiting = [p for p in soakers.values() if p.question is not None]
        if not asking and (not waiting or now > end + 180):
            break
        # --- faults
        if asking and now >= next_lag:
            seconds = 12.0 if first_lag else rng.uniform(3, 20)
            first_lag = False
            server.lag(seconds)
            faults["lag_spikes"] += 1
            faults["lag_seconds"] += seconds
            next_lag = now + seconds + rng.expovariate(1 / args.lag_every)
        if asking and now >= next_drop:
            server.drop_clients()
            faults["drops"] += 1
            next_drop = now + args.drop_every
        # --- what the players read in chat
        posts = server.posts_snapshot()
        for text in posts[seen:]:
            if text.startswith("[Jarvis] Back after a lost connection"):
                back_notices.append(now)
                continue
            for player in soakers.values():
                if not text.startswith(f"[Jarvis] {player.name}: "):
                    continue
                count_reply(player, text, now, tally, rng)
                break
        seen = len(posts)
        # --- players waiting, asking
        for player in soakers.values():
            if player.question is not None:
                told = [t for t in back_notices if t > player.asked_at]
                if player.key not in server.delivered and told and now - told[0] > REASK_AFTER_NOTICE:
                    tally.undelivered += 1          # the player was told to ask again, and does
                    player.question, player.next_at = None, now
                elif now - player.asked_at > GIVE_UP_SECONDS:
                    tally.lost += 1
                    tally.lost_questions.append(_describe_lost(player, server, began))
                    player.question, player.next_at = None, now
            if asking and player.question is None and now >= player.next_at:
                # A player does not ask the same thing twice in a row: the same answer again within a
                # minute can then only be a line posted again after a drop (counted as such).
                text = rng.choice([q for q in pool if now - player.recent.get(q, -1e9) > 2 * DUPLICATE_WINDOW])
                player.recent[text] = now
                question = rng.choice(PHRASINGS).format(q=text)
                player.question, player.asked_at, player.in_lag = question, now, server.lagging
                player.key = server.say(player.entity_id, question)
                tally.asked += 1
        if now >= next_sample:
            samples.append((now - began, rss_mb(serve.pid), tally.asked, tally.answered))
            next_sample = now + 10.0
            if serve.poll() is not None:
                print("bench_soak: jarvis serve exited", file=sys.stderr)
                break
        if int(now - began) > progress.n:
            progress.update(min(int(duration), int(now - began)) - progress.n)
        time.sleep(0.2)
    progress.close()
    for player in soakers.values():
        if player.question is not None:
            tally.lost += 1
            tally.lost_questions.append(_describe_lost(player, server, began))
    samples.append((time.monotonic() - began, rss_mb(serve.pid), tally.asked, tally.answered))
    return tally, samples, faults


def _describe_lost(player: SoakPlayer, server, began: float) -> str:
    return (f"{player.name} at {player.asked_at - began:.1f} s: {player.question!r} "
            f"(returned by a poll: {player.key in server.delivered})")


def report(args, tally: Tally, samples, faults, alive: bool, returncode, log_text: str, server) -> None:
    stopped = re.search(r"event=stopped (.*)", log_text)
    stats = dict(re.findall(r"(\w+)=(\S+)", stopped.group(1))) if stopped else {}
    detected = ", ".join(sorted(set(re.findall(r'event=dialect dialect="(\w+)"', log_text)))) or "?"
    print(f"\nsoak: {args.players} players, {args.minutes:g} min, dialect {args.dialect} "
          f"(auto-detected by serve: {detected})")
    print(f"faults: Fail on 1 poll in {args.fail_every} ({len(server.failed)} Fail replies), "
          f"{faults['lag_spikes']} lag spikes ({faults['lag_seconds']:.0f} s in all), {faults['drops']} dropped connections")
    print(f"questions: asked {tally.asked}, answered {tally.answered}, refused with a message {tally.refused}, "
          f"not delivered by the server (asked again) {tally.undelivered}, lost {tally.lost}; "
          f"lines shown twice after a drop {tally.duplicates}")
    for line in tally.lost_questions:
        print(f"  lost: {line}")
    print(f"serve: still running at the end: {alive}; exit status after SIGTERM: {returncode}; "
          f"reconnects {stats.get('reconnects', '?')}, failed polls {stats.get('failed_polls', '?')}, "
          f"stalls {stats.get('stalls', '?')} (longest {stats.get('longest_stall_s', '?')} s), "
          f"strays {stats.get('strays', '?')}, errors {stats.get('errors', '?')}")
    print(f"latency: p50 {percentile(tally.latencies or [math.nan], 0.50):.2f} s, p95 {percentile(tally.latencies or [math.nan], 0.95):.2f} s; "
          f"asked during a lag spike: p50 {percentile(tally.lag_latencies or [math.nan], 0.50):.2f} s, "
          f"max {max(tally.lag_latencies, default=float('nan')):.2f} s (n={len(tally.lag_latencies)})")
    warm = next((s for s in samples if s[0] >= min(300.0, args.minutes * 60 / 6)), samples[0])
    after = [s[1] for s in samples if s[0] >= warm[0]]
    growth = (max(after) - warm[1]) / warm[1] * 100 if after and warm[1] == warm[1] else float("nan")
    print(f"RSS: {samples[0][1]:.0f} MB at start, {warm[1]:.0f} MB after warm-up ({warm[0] / 60:.1f} min), "
          f"max after warm-up {max(after):.0f} MB, at the end {samples[-1][1]:.0f} MB: growth after warm-up {growth:+.1f} %")
    print("\n  min   RSS MB   asked  answered")
    step = max(1, len(samples) // 15)
    for elapsed, mb, asked, answered in samples[::step] + ([samples[-1]] if (len(samples) - 1) % step else []):
        print(f"{elapsed / 60:5.1f}  {mb:7.1f}  {asked:6d}  {answered:8d}")
    print("\nRSS over time (each row one sample group, bar from the lowest to the highest value):")
    values = [s[1] for s in samples]
    low, high = min(values), max(values)
    for elapsed, mb, _, _ in samples[::step]:
        width = 0 if high == low else int((mb - low) / (high - low) * 50)
        print(f"{elapsed / 60:5.1f} min |{'#' * width:<50}| {mb:.1f} MB")


# --------------------------------------------------------------------------- the player bot


WHISPERS = ["/msg Jarvis {q}", "/tell Jarvis {q}", "/w Jarvis {q}"]


def count_reply(player, text: str, now: float, tally: Tally, rng: random.Random, *, private: bool = False) -> None:
    """A reply line ``player`` read (either transport): a line shown twice, a refusal, or the answer
    to the player's question, who then thinks a while before the next one."""
    if now - player.last_lines.get(text, -1e9) < DUPLICATE_WINDOW:
        tally.duplicates += 1
        return
    player.last_lines = {t: w for t, w in player.last_lines.items() if now - w < DUPLICATE_WINDOW}
    player.last_lines[text] = now
    if player.question is None:
        return
    latency = now - player.asked_at
    if "ask again in a moment" in text:
        tally.refused += 1
    else:
        tally.answered += 1
        if private:
            tally.private_answered += 1
        tally.latencies.append(latency)
        if player.in_lag:
            tally.lag_latencies.append(latency)
    player.question = None
    player.next_at = now + rng.uniform(*THINK_SECONDS)


@dataclass
class CrowdPlayer:
    name: str
    next_at: float
    online: bool = False
    question: str | None = None        # as typed ("/msg Jarvis what do cows drop?")
    text: str = ""                     # the question itself ("what do cows drop?")
    private: bool = False
    asked_at: float = 0.0
    checked_at: float = 0.0            # when Jarvis's log was last searched for it
    was_offline: bool = False          # the asker was disconnected while waiting
    in_lag: bool = False
    last_lines: dict[str, float] = field(default_factory=dict)
    recent: dict[str, float] = field(default_factory=dict)
    asked: dict[str, int] = field(default_factory=dict)   # question (casefolded) -> times asked


@dataclass
class BotTally(Tally):
    missed: int = 0
    private_answered: int = 0
    missed_questions: list[str] = field(default_factory=list)


def bot_soak(args) -> int:
    from jarvis.demo import DemoError, LocalMinecraft, MCSERVER_DIR, node_executable, start_jarvis
    from jarvis.bridge.player import CLIENT_DIR

    try:
        node = node_executable()
    except DemoError as exc:
        print(f"bench_soak: {exc}", file=sys.stderr)
        return 1
    if not (CLIENT_DIR / "node_modules" / "mineflayer").is_dir():
        print(f"bench_soak: the player bot needs its node_modules: make setup (npm ci in {CLIENT_DIR})", file=sys.stderr)
        return 1
    rng = random.Random(args.seed)
    pool = [q.text for q in parse_questions(QUESTIONS_FILE.read_text(encoding="utf-8"))]
    duration = args.minutes * 60
    names = [f"Player{i}" for i in range(args.players)]
    with tempfile.TemporaryDirectory(prefix="bench-soak-bot-") as tmp:
        log_dir = Path(tmp)
        server = LocalMinecraft(log_dir, max_seconds=duration + 1800).start()
        serve = crowd = None
        try:
            extra = ["--bot", f"127.0.0.1:{server.port}"] + (["--index", str(args.index)] if args.index else [])
            serve = start_jarvis(None, log_dir, fallback=True, extra_args=extra, timeout=900,
                                 env={"JARVIS_HOME": str(log_dir / "home"), "OMP_NUM_THREADS": "1"})
            crowd = subprocess.Popen([node, str(MCSERVER_DIR / "players.js"), "--port", str(server.port),
                                      "--names", ",".join(names)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
            events: "queue.Queue[dict]" = queue.Queue()
            threading.Thread(target=_read_json_lines, args=(crowd.stdout, events), daemon=True).start()
            tally, samples, faults = run_bot_soak(server, serve, crowd, events, names, pool, rng, args, duration,
                                                  log_dir / "home")
            alive = serve.process.poll() is None
            status = serve.stop()
        finally:
            if crowd is not None and crowd.poll() is None:
                crowd.stdin.close()
                try:
                    crowd.wait(10)
                except subprocess.TimeoutExpired:
                    crowd.kill()
            if serve is not None:
                serve.stop()
            server.stop()
        log_text = serve.log_text()
        if args.log:
            args.log.write_text(log_text, encoding="utf-8")
        kicks = server.vanilla_events("kick")
    bot_report(args, tally, samples, faults, alive, status, log_text, kicks)
    return 0


def run_bot_soak(server, serve, crowd, events, names, pool, rng, args, duration, home: Path):
    jarvis_log = JarvisLog(serve, home)
    began = time.monotonic()
    end = began + duration
    players = {name: CrowdPlayer(name, began + 8 + rng.uniform(0, 10)) for name in names}
    tally = BotTally()
    samples: list[tuple[float, float, int, int]] = []
    faults = {"lag_spikes": 0, "lag_seconds": 0.0, "kicks": 0, "restarts": 0}
    next_lag, first_lag = began + 60.0, True
    frozen_until = None
    kick_at = [began + duration * 0.25, began + duration * 0.75]
    restart_at = began + duration * 0.5
    back_notices: list[float] = []
    next_sample = began
    progress = tqdm(total=int(duration), unit="s", desc="soak (bot)", mininterval=5)

    def say(player: CrowdPlayer, text: str) -> None:
        crowd.stdin.write(json.dumps({"player": player.name, "text": text}) + "\n")
        crowd.stdin.flush()

    while True:
        now = time.monotonic()
        asking = now < end
        waiting = [p for p in players.values() if p.question is not None]
        if not asking and (not waiting or now > end + 180) and frozen_until is None:
            break
        # --- faults
        if frozen_until is not None and now >= frozen_until:
            os.kill(server.child.process.pid, signal.SIGCONT)
            frozen_until = None
        if asking and frozen_until is None and now >= next_lag:
            seconds = 12.0 if first_lag else rng.uniform(3, 20)
            first_lag = False
            os.kill(server.child.process.pid, signal.SIGSTOP)      # the whole server: no tick, no packet
            frozen_until = now + seconds
            faults["lag_spikes"] += 1
            faults["lag_seconds"] += seconds
            next_lag = frozen_until + rng.expovariate(1 / args.lag_every)
        if asking and frozen_until is None and kick_at and now >= kick_at[0]:
            kick_at.pop(0)
            server.console("kick Jarvis soak test: an admin's kick")
            faults["kicks"] += 1
        if asking and frozen_until is None and restart_at is not None and now >= restart_at:
            restart_at = None
            server.restart()
            faults["restarts"] += 1
            now = time.monotonic()
        # --- what the players read
        while True:
            try:
                event = events.get_nowait()
            except queue.Empty:
                break
            player = players.get(event.get("player"))
            if player is None:
                continue
            kind = event["event"]
            if kind == "joined":
                player.online = True
            elif kind == "left":
                player.online = False
                if player.question is not None:
                    player.was_offline = True
            elif kind == "not_sent" and player.question == event.get("text"):
                tally.asked -= 1
                player.asked[player.text.casefold()] -= 1
                player.question, player.next_at = None, now + 2
            elif kind == "chat":
                text = event["text"]
                if "Back after a lost connection" in text and (not back_notices or now - back_notices[-1] > 5):
                    back_notices.append(now)
                public = text.startswith(f"<Jarvis> {player.name}: ")
                private = text.startswith("Jarvis whispers to you: ")
                if not (public or private):
                    continue
                count_reply(player, text, now, tally, rng, private=private)
        # --- waiting, asking
        for player in players.values():
            if player.question is not None:
                # Told to ask again (Jarvis's notice), or disconnected themselves: a question the server
                # never handed to Jarvis is asked again; one it did is waited for.
                told = [t for t in back_notices if t > player.asked_at]
                should_check = (told and now - told[0] > REASK_AFTER_NOTICE) or (player.was_offline and player.online)
                if should_check and now - player.checked_at > REASK_AFTER_NOTICE:   # the log search is not free
                    player.checked_at = now
                    if not jarvis_log.reached(player, player.asked_at, began):
                        undelivered(player, tally)
                        player.question, player.next_at = None, now + 1
                        continue
                if now - player.asked_at > GIVE_UP_SECONDS:
                    resolve_unanswered(player, jarvis_log, tally, began)
                    player.question, player.next_at = None, now
            if asking and player.online and player.question is None and now >= player.next_at:
                text = rng.choice([q for q in pool if now - player.recent.get(q, -1e9) > 2 * DUPLICATE_WINDOW])
                player.recent[text] = now
                player.private = rng.random() < 0.5
                template = rng.choice(WHISPERS) if player.private else rng.choice(PHRASINGS)
                player.question, player.text = template.format(q=text), text
                player.asked[text.casefold()] = player.asked.get(text.casefold(), 0) + 1
                player.asked_at, player.in_lag, player.was_offline = now, frozen_until is not None, False
                player.checked_at = now
                say(player, player.question)
                tally.asked += 1
        if now >= next_sample:
            samples.append((now - began, rss_mb(serve.process.pid), tally.asked, tally.answered))
            next_sample = now + 10.0
            if serve.process.poll() is not None:
                print("bench_soak: jarvis serve exited", file=sys.stderr)
                break
        if int(now - began) > progress.n:
            progress.update(min(int(duration), int(now - began)) - progress.n)
        time.sleep(0.1)
    progress.close()
    for player in players.values():
        if player.question is not None:
            resolve_unanswered(player, jarvis_log, tally, began)
    samples.append((time.monotonic() - began, rss_mb(serve.process.pid), tally.asked, tally.answered))
    return tally, samples, faults


class JarvisLog:
    """What `jarvis serve -v` logged: which questions reached the bridge (event=question), by the
    player's hash (the salt is in the run's JARVIS_HOME) and the question's text."""

    def __init__(self, serve, home: Path) -> None:
        self.serve = serve
        self.home = home

    def reached(self, player: CrowdPlayer, asked_at: float, began: float) -> bool:
        """Whether the bridge logged this player's question as many times as the player asked it and it
        was not found undelivered before (a player may ask the same thing again, minutes later)."""
        from jarvis.privacy import load_salt, player_hash

        who = player_hash(player.name, load_salt(self.home))
        wanted = player.text.casefold()
        found = 0
        for match in re.finditer(r'event=question player="([^"]+)" .*?question="((?:[^"\\]|\\.)*)"', self.serve.log_text()):
            if match.group(1) == who and json.loads(f'"{match.group(2)}"').casefold() == wanted:
                found += 1
        return found >= player.asked.get(wanted, 0)


def undelivered(player: CrowdPlayer, tally: BotTally) -> None:
    """The question never reached Jarvis: not counted among the times it did (see JarvisLog.reached)."""
    tally.undelivered += 1
    player.asked[player.text.casefold()] -= 1


def resolve_unanswered(player: CrowdPlayer, jarvis_log: JarvisLog, tally: BotTally, began: float) -> None:
    if not jarvis_log.reached(player, player.asked_at, began):
        undelivered(player, tally)
    elif player.was_offline:
        tally.missed += 1
        tally.missed_questions.append(f"{player.name} at {player.asked_at - began:.1f} s: {player.question!r}")
    else:
        tally.lost += 1
        tally.lost_questions.append(f"{player.name} at {player.asked_at - began:.1f} s: {player.question!r}")


def bot_report(args, tally: BotTally, samples, faults, alive: bool, status, log_text: str, kicks: list[dict]) -> None:
    stopped = re.search(r"event=stopped (.*)", log_text)
    stats = dict(re.findall(r"(\w+)=(\S+)", stopped.group(1))) if stopped else {}
    spam = [k for k in kicks if k.get("reason") == "disconnect.spam"]
    print(f"\nsoak (player bot): {args.players} players, {args.minutes:g} min, vanilla chat rules (mcserver/vanilla_chat.js)")
    print(f"faults: {faults['lag_spikes']} server freezes ({faults['lag_seconds']:.0f} s in all), "
          f"{faults['kicks']} kicks of Jarvis by an admin, {faults['restarts']} server restart(s)")
    print(f"questions: asked {tally.asked} (about half by whisper), answered {tally.answered} "
          f"({tally.private_answered} by whisper), refused with a message {tally.refused}, "
          f"not delivered (never reached Jarvis: typed while it was away, or sent by a server as it went down; "
          f"asked again) {tally.undelivered}, missed (reached Jarvis, the asker was disconnected when the answer "
          f"came) {tally.missed}, lost (reached Jarvis, never answered) {tally.lost}; lines shown twice {tally.duplicates}")
    for line in tally.lost_questions:
        print(f"  lost: {line}")
    for line in tally.missed_questions:
        print(f"  missed: {line}")
    print(f"kicks for spam: {len(spam)} (Jarvis: {sum(k['player'] == 'Jarvis' for k in spam)}); every kick the server "
          f"recorded: {len(kicks)}")
    print(f"serve: still running at the end: {alive}; exit status after SIGTERM: {status}; "
          f"reconnects {stats.get('reconnects', '?')}, kicks seen {stats.get('kicks', '?')} "
          f"(for spam {stats.get('spam_kicks', '?')}), lags seen {stats.get('stalls', '?')} "
          f"(longest {stats.get('longest_stall_s', '?')} s), errors {stats.get('errors', '?')}, "
          f"refused lines {stats.get('refused_lines', '?')}")
    print(f"latency: p50 {percentile(tally.latencies or [math.nan], 0.50):.2f} s, p95 {percentile(tally.latencies or [math.nan], 0.95):.2f} s, "
          f"max {max(tally.latencies, default=float('nan')):.2f} s (n={len(tally.latencies)}); asked during a freeze: "
          f"p50 {percentile(tally.lag_latencies or [math.nan], 0.50):.2f} s (n={len(tally.lag_latencies)})")
    print(f"RSS of jarvis serve: {samples[0][1]:.0f} MB at start, {max(s[1] for s in samples):.0f} MB at most, "
          f"{samples[-1][1]:.0f} MB at the end")


def _read_json_lines(stream, events) -> None:
    for line in stream:
        line = line.strip()
        if line.startswith("{"):
            try:
                events.put(json.loads(line))
            except json.JSONDecodeError:
                pass


if __name__ == "__main__":
    sys.exit(main())
