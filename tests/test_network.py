"""The worker pool (jarvis/network/): questions over a Redis stream, on a real redis-server.

Each test starts its own redis-server on a free port of 127.0.0.1 in a folder of its own, with the
append-only file on (wikis/redis_server.py), and stops it. Workers are the real ``PoolWorker`` on the real
answering path (the offline lexical reader, for speed), in a thread, or ``jarvis worker`` processes where
a worker must die; the bridge is the real ``Bridge`` on the RaspberryJuice double, or ``jarvis serve``.
Every wait is a bounded loop; nothing asserts on how long anything took.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from jarvis.crawler.corpus import Page, write_corpus
from jarvis.assembly import assemble
from jarvis.bridge import PREFIX, Bridge
from jarvis.config import BridgeSettings, Config, ReaderSettings, RedisSettings
from jarvis.network import (BUSY_NOTICE, NetworkError, PoolClient, PoolTimeout, RedisLink, PoolWorker, open_pool, redact)
from jarvis.network.messages import ReplyMessage, questions_key, replies_key
from jarvis.answer import Answer
from jarvis.replies import answer_json, compose_reply
from jarvis.settings_file import SettingsError, load_settings_file
from jarvis_lab.raspberryjuice import Player, RaspberryJuiceDouble
from jarvis_lab.redis_server import RedisServer
from serve_process import jarvis_serve

FAST = RedisSettings(busy_after=0.5, claim_after=1.0, max_age=60.0, io_timeout=2.0, reconnect_min_delay=0.05,
                     reconnect_max_delay=0.5, connect_attempts=3)
BRIDGE = BridgeSettings(mc_host="127.0.0.1", poll_interval=0.02, per_player_rate=0.0, io_timeout=2.0,
                        reconnect_min_delay=0.05, reconnect_max_delay=0.2, connect_attempts=3, slow_after=1.0)
LEXICAL = ["--reader", "fallback:lexical"]
QUESTIONS = ["what do cows drop?", "how do you craft tnt?", "where do witches spawn?", "what is a creeper?",
             "how long is a minecraft day?", "how do you make an eye of ender?", "where do blazes spawn?",
             "how much durability do shears have?"]


# --------------------------------------------------------------------------- helpers


def wait_for(condition, timeout: float = 60.0, every: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every)
    return condition()


def pool_settings(server: RedisServer, **overrides) -> RedisSettings:
    return replace(FAST, url=server.url, **overrides)


@pytest.fixture
def redis_server(tmp_path):
    with RedisServer(tmp_path / "redis") as server:
        yield server


@pytest.fixture(scope="session")
def lexical_jarvis(bundled_index, tmp_path_factory):
    config = Config(home=tmp_path_factory.mktemp("pool-home"), reader=ReaderSettings(model="", reader="fallback:lexical"))
    with assemble(config, bundled_index) as jarvis:
        yield jarvis


class RunningWorker:
    """A PoolWorker serving in a thread; stopped and joined by the fixture."""

    def __init__(self, settings: RedisSettings, answer, name: str | None = None) -> None:
        self.worker = PoolWorker(RedisLink(settings), answer, reader_name="fallback:lexical", name=name)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.worker.wait_ready(20), "the worker never joined the group"

    def _run(self) -> None:
        try:
            self.worker.run()
        except BaseException as exc:  # noqa: BLE001 - reported by stop()
            self.error = exc

    @property
    def stats(self):
        return self.worker.stats

    def stop(self) -> None:
        self.worker.stop()
        self.thread.join(timeout=30)
        assert not self.thread.is_alive(), "the worker did not stop"
        assert self.error is None, self.error


@pytest.fixture
def start_worker():
    running: list[RunningWorker] = []

    def start(settings, answer, name=None) -> RunningWorker:
        running.append(RunningWorker(settings, answer, name))
        return running[-1]

    yield start
    for worker in running:
        worker.stop()


@pytest.fixture
def start_pool():
    pools: list[PoolClient] = []

    def start(settings, **kwargs) -> PoolClient:
        pools.append(PoolClient(RedisLink(settings), **kwargs).start())
        return pools[-1]

    yield start
    for pool in pools:
        pool.close()


class Inbox:
    """What a bridge gets from PoolClient.submit: each question's deliveries and notices, in order."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.deliveries: list[tuple[str, Answer | Exception]] = []
        self.notices: list[tuple[str, str]] = []

    def submit(self, pool: PoolClient, text: str, key=None, player: str | None = None) -> None:
        question = Asked(text, player, key)
        pool.submit(question, lambda result: self._add(self.deliveries, (text, result)),
                    lambda notice: self._add(self.notices, (text, notice)))

    def _add(self, where: list, item) -> None:
        with self.lock:
            where.append(item)

    def delivered(self, text: str) -> list:
        with self.lock:
            return [result for asked, result in self.deliveries if asked == text]

    def count(self) -> int:
        with self.lock:
            return len(self.deliveries)


class Asked:
    def __init__(self, text: str, player: str | None = None, key=None) -> None:
        self.text, self.player, self.key = text, player, key


def same_answer(pooled: Answer, local: Answer) -> bool:
    ignore = {"seconds", "cached"}
    return ({k: v for k, v in answer_json(pooled).items() if k not in ignore}
            == {k: v for k, v in answer_json(local).items() if k not in ignore})


class RunningBridge:
    """The real Bridge on a RaspberryJuice double, handed the pool as what answers."""

    def __init__(self, server: RaspberryJuiceDouble, pool: PoolClient) -> None:
        self.bridge = Bridge(replace(BRIDGE, mc_port=server.port), pool)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        before = len(server.commands)
        self.thread.start()
        assert server.wait_for(lambda: "events.chat.posts" in server.commands[before:]), "the bridge never polled"

    def _run(self) -> None:
        try:
            self.bridge.run()
        except BaseException as exc:  # noqa: BLE001
            self.error = exc

    def stop(self) -> None:
        self.bridge.stop()
        self.thread.join(timeout=20)
        assert not self.thread.is_alive() and self.error is None, self.error


def answers_to(posts: list[str], player: str) -> list[str]:
    """The first lines of the answers the chat showed the player (notices left out)."""
    return [p for p in posts if p.startswith(f"{PREFIX}{player}:") and BUSY_NOTICE not in p]


def from_cow_page(line: str) -> bool:
    """The chat line of an answer read on the Cow page (stated with its source, or "not sure" with the page)."""
    return "(source: Cow)" in line or "the Cow page says" in line


def notices_to(posts: list[str], player: str) -> list[str]:
    return [p for p in posts if p.startswith(f"{PREFIX}{player}:") and BUSY_NOTICE in p]


def consumers(server: RedisServer, group: str = "workers") -> dict[str, dict]:
    client = server.client()
    try:
        return {c["name"]: c for c in client.xinfo_consumers(questions_key("jarvis"), group)}
    except Exception:  # noqa: BLE001 - no stream or group yet
        return {}


def pending_on(server: RedisServer, consumer: str) -> list[str]:
    client = server.client()
    entries = client.xpending_range(questions_key("jarvis"), "workers", "-", "+", 100, consumername=consumer)
    return [entry["message_id"] for entry in entries]


def freeze_while_holding(server: RedisServer, process: subprocess.Popen, consumer: str,
                         timeout: float = 60.0) -> list[str]:
    """SIGSTOP the worker while it holds a question it has not acknowledged (mid-question); the ids held."""
    client = server.client()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        entries = client.xpending_range(questions_key("jarvis"), "workers", "-", "+", 10, consumername=consumer)
        if entries:
            os.kill(process.pid, signal.SIGSTOP)
            held = pending_on(server, consumer)
            if held:
                return held
            os.kill(process.pid, signal.SIGCONT)      # it acknowledged just before: the next one
        time.sleep(0.002)
    return []


def worker_process(server_url: str, index: Path, home: Path, name: str, config: Path | None = None,
                   env: dict | None = None) -> subprocess.Popen:
    args = [sys.executable, "-m", "jarvis", "worker", "-v", "--redis", server_url, "--index", str(index),
            "--name", name, *LEXICAL] + (["--config", str(config)] if config else [])
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "JARVIS_HOME": str(home), **(env or {})})


def stop_process(process: subprocess.Popen) -> tuple[int, str]:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        _, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
    return process.returncode, stderr


# --------------------------------------------------------------------------- answering through the pool


def test_an_answer_through_the_pool_is_the_answer_in_process(redis_server, lexical_jarvis, start_worker, start_pool):
    settings = pool_settings(redis_server)
    start_worker(settings, lexical_jarvis.ask)
    pool = start_pool(settings, origin="ask")
    for question in ["what do cows drop?", "where do blazes spawn?", "qqq zzz xxyy"]:
        pooled = pool.ask(question)
        assert same_answer(pooled, lexical_jarvis.ask(question)), (pooled, question)
    assert compose_reply(pool.ask("what do cows drop?")) == compose_reply(lexical_jarvis.ask("what do cows drop?"))
    assert pool.stats.answered == 4 and pool.stats.duplicates == 0 and pool.waiting == 0


def test_a_bad_question_is_refused_in_words_without_a_trip_through_redis(redis_server, start_pool):
    pool = start_pool(pool_settings(redis_server))
    inbox = Inbox()
    inbox.submit(pool, "   ")
    inbox.submit(pool, "x" * 600)
    assert [type(r).__name__ for _, r in inbox.deliveries] == ["QuestionError", "QuestionError"]
    assert redis_server.client().xlen(questions_key("jarvis")) == 0


def test_a_question_is_added_to_the_stream_once_even_when_redis_is_slow_to_take_it(redis_server, start_pool):
    """Redis holds every write for a second (CLIENT PAUSE WRITE: as a busy or failing-over server does)
    while questions are submitted: the pool's own thread, looping meanwhile, must not add them again."""
    pool = start_pool(pool_settings(redis_server))
    inbox = Inbox()
    redis_server.client().client_pause(1500, all=False)
    threads = [threading.Thread(target=inbox.submit, args=(pool, f"what do cows drop ({n})?")) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    time.sleep(0.5)
    entries = redis_server.client().xrange(questions_key("jarvis"))
    assert sorted(e[1]["q"] for e in entries) == [f"what do cows drop ({n})?" for n in range(3)]
    assert pool.stats.added == 3 and pool.waiting == 3


def test_wrong_password_is_one_line_and_exit_1_and_the_right_one_answers(tmp_path, lexical_jarvis, start_worker):
    with RedisServer(tmp_path / "redis", password="right-horse-battery") as server:
        plain = f"redis://127.0.0.1:{server.port}/0"
        env = {**os.environ, "JARVIS_HOME": str(tmp_path / "home")}
        env.pop("JARVIS_REDIS_PASSWORD", None)
        env.pop("JARVIS_REDIS_URL", None)
        runs = {
            "ask, password in the URL": (["ask", "what do cows drop?", "--redis",
                                          f"redis://:wrong-staple-9@127.0.0.1:{server.port}/0"], {}),
            "worker, password from the environment": (["worker", "--redis", plain, *LEXICAL],
                                                      {"JARVIS_REDIS_PASSWORD": "wrong-staple-9"}),
            "serve, URL from the environment": (["serve", "--redis", "--mc-port", "1"],
                                                {"JARVIS_REDIS_URL": f"redis://:wrong-staple-9@127.0.0.1:{server.port}"}),
            "ask, no password": (["ask", "what do cows drop?", "--redis", plain], {}),
        }
        for what, (args, extra) in runs.items():
            result = subprocess.run([sys.executable, "-m", "jarvis", *args], capture_output=True, text=True,
                                    env={**env, **extra}, timeout=120)
            lines = result.stderr.strip().splitlines()
            assert result.returncode == 1, (what, result.stderr)
            assert len(lines) == 1 and lines[0].startswith(f"jarvis {args[0]}: error: "), (what, result.stderr)
            assert "wrong-staple-9" not in result.stderr + result.stdout, what
            assert "refused" in lines[0] and f"127.0.0.1:{server.port}" in lines[0], (what, lines[0])
        # The right password, from the environment beside a URL without one: answered through the pool.
        start_worker(replace(FAST, url=server.url), lexical_jarvis.ask)
        result = subprocess.run([sys.executable, "-m", "jarvis", "ask", "what do cows drop?", "--redis", plain,
                                 "--json"], capture_output=True, text=True, timeout=120,
                                env={**env, "JARVIS_REDIS_PASSWORD": "right-horse-battery"})
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["title"] == "Cow"


def test_an_unreachable_redis_is_one_line_and_exit_1(tmp_path):
    from jarvis_lab.redis_server import free_port

    result = subprocess.run([sys.executable, "-m", "jarvis", "ask", "what do cows drop?", "--redis",
                             f"redis://:hunter2-secret@127.0.0.1:{free_port()}/0"], capture_output=True, text=True,
                            env={**os.environ, "JARVIS_HOME": str(tmp_path)}, timeout=120)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert "cannot reach Redis at redis://:***@127.0.0.1:" in lines[0] and "hunter2" not in result.stderr


# --------------------------------------------------------------------------- reliability


def test_a_worker_killed_mid_question_its_questions_are_answered_by_another_each_posted_once(
        redis_server, bundled_index, tmp_path):
    """PoolWorker A is frozen while it holds a question (pending, unacknowledged), then killed with SIGKILL;
    worker B, started after, claims what A held (XAUTOCLAIM) and answers the rest. Every player's
    question is answered in the chat exactly once; the players travel as salted hashes."""
    settings_file = tmp_path / "pool.toml"
    settings_file.write_text("[redis]\nclaim_after = 2.0\n")
    config = Config(home=tmp_path / "home", redis=pool_settings(redis_server, busy_after=1.0))
    players = {10 + i: Player(f"Player{i}") for i in range(len(QUESTIONS))}
    from jarvis.privacy import load_salt

    worker_a = worker_process(redis_server.url, bundled_index, tmp_path / "home", "worker-a", settings_file)
    worker_b = None
    try:
        with RaspberryJuiceDouble(players) as server, open_pool(config, salt=load_salt(config.home)) as pool:
            bridge = RunningBridge(server, pool)
            assert wait_for(lambda: "worker-a" in consumers(redis_server), timeout=180), "worker A never started"
            for i, question in enumerate(QUESTIONS):
                server.say(10 + i, f"jarvis, {question}")
            held = freeze_while_holding(redis_server, worker_a, "worker-a")   # it cannot acknowledge now
            assert held, "worker A was never seen holding a question"
            os.kill(worker_a.pid, signal.SIGKILL)
            worker_a.wait(timeout=30)
            worker_b = worker_process(redis_server.url, bundled_index, tmp_path / "home", "worker-b", settings_file)
            assert wait_for(lambda: all(answers_to(server.posts, f"Player{i}") for i in range(len(QUESTIONS))),
                            timeout=240), server.posts
            time.sleep(1.0)        # a second posting, if there were one, would come now
            bridge.stop()
            posts = server.posts_snapshot()
            entries = redis_server.client().xrange(questions_key("jarvis"))
        assert not pending_on(redis_server, "worker-a")           # what A held was claimed
        for i in range(len(QUESTIONS)):
            assert len(answers_to(posts, f"Player{i}")) == 1, (i, posts)
        assert from_cow_page(answers_to(posts, "Player0")[0])
        assert pool.stats.answered == len(QUESTIONS) and pool.stats.expired == 0
        players_sent = {entry[1]["player"] for entry in entries}
        assert all(re.fullmatch(r"[0-9a-f]{16}", p) for p in players_sent), players_sent
        assert not players_sent & {p.name for p in players.values()}
    finally:
        for process in (worker_a, worker_b):
            if process is not None and process.poll() is None:
                os.kill(process.pid, signal.SIGCONT)
        code, stderr_b = stop_process(worker_b) if worker_b is not None else (0, "")
    assert code == 0, stderr_b
    stopped = dict(re.findall(r"(\w+)=(\S+)", re.search(r"event=worker_stopped (.*)", stderr_b).group(1)))
    assert int(stopped["claimed"]) >= len(held)


def test_a_slow_worker_and_its_claimer_both_answer_and_the_chat_shows_it_once(redis_server, lexical_jarvis,
                                                                               start_worker, start_pool):
    settings = pool_settings(redis_server, claim_after=1.0)
    release = threading.Event()
    slow_started = threading.Event()

    def slow(question: str) -> Answer:     # a reader stuck on one question, longer than claim_after
        slow_started.set()
        release.wait(30)
        return lexical_jarvis.ask(question)

    pool = start_pool(settings)
    inbox = Inbox()
    start_worker(settings, slow, name="slow")
    inbox.submit(pool, "what do cows drop?", key="steve", player="Steve")
    assert slow_started.wait(20)
    fast = start_worker(settings, lexical_jarvis.ask, name="fast")    # claims it after claim_after
    assert wait_for(lambda: inbox.count() == 1, timeout=60)
    release.set()                                                     # the slow one answers it too
    assert wait_for(lambda: pool.stats.duplicates == 1, timeout=30)
    assert fast.stats.claimed == 1
    assert len(inbox.delivered("what do cows drop?")) == 1
    assert isinstance(inbox.delivered("what do cows drop?")[0], Answer)


def test_redis_restarted_under_load_loses_no_question(redis_server, lexical_jarvis, start_worker, start_pool):
    settings = pool_settings(redis_server, busy_after=30.0)
    workers = [start_worker(settings, lexical_jarvis.ask, name=f"w{i}") for i in range(2)]
    pool = start_pool(settings)
    inbox = Inbox()
    asked: list[str] = []
    restarted = threading.Event()

    def feed() -> None:
        for n in range(60):
            text = f"{QUESTIONS[n % len(QUESTIONS)]} ({n})"
            asked.append(text)
            inbox.submit(pool, text, key=n % 5, player=f"Player{n % 5}")
            if n == 20:
                restarted.set()
            time.sleep(0.1)

    feeder = threading.Thread(target=feed)
    feeder.start()
    assert restarted.wait(30)
    assert wait_for(lambda: redis_server.client().xlen(questions_key("jarvis")) > 0, timeout=10)
    redis_server.restart(down_for=1.5)            # SIGTERM: Redis writes its append-only file; then back
    feeder.join(timeout=60)
    assert wait_for(lambda: inbox.count() >= len(asked), timeout=180), (inbox.count(), len(asked))
    time.sleep(0.5)
    assert inbox.count() == len(asked) == 60
    for text in asked:
        results = inbox.delivered(text)
        assert len(results) == 1 and isinstance(results[0], Answer), (text, results)
    assert pool.stats.reconnects >= 1 and pool.stats.expired == 0
    assert sum(w.stats.reconnects for w in workers) >= 2
    assert sum(w.stats.answered for w in workers) >= 60


def test_a_poison_question_is_answered_i_dont_know_after_n_attempts(redis_server, lexical_jarvis, start_worker,
                                                                   start_pool):
    settings = pool_settings(redis_server, max_attempts=3)
    calls: list[str] = []

    def crashing_reader(question: str) -> Answer:      # the reader crashes on this one question
        calls.append(question)
        if "poison" in question:
            raise RuntimeError("the reader fell over")
        return lexical_jarvis.ask(question)

    worker = start_worker(settings, crashing_reader)
    pool = start_pool(settings)
    answer = pool.ask("what does poison cake do?")
    assert compose_reply(answer) == "I don't know." and answer.title == ""
    assert calls.count("what does poison cake do?") == 3
    assert worker.stats.poison == 1 and worker.stats.failures == 3
    assert pool.ask("what do cows drop?").title == "Cow"        # the worker lives on
    assert redis_server.client().xpending(questions_key("jarvis"), "workers")["pending"] == 0


def test_a_question_that_killed_its_workers_is_not_read_again(redis_server, lexical_jarvis, start_worker, start_pool):
    """Delivered max_attempts times to workers that died with it (their deliveries, as Redis counts them):
    the next worker answers "I don't know" without reading it."""
    settings = pool_settings(redis_server, max_attempts=3, claim_after=0.5)
    pool = start_pool(settings)
    inbox = Inbox()
    inbox.submit(pool, "what do cows drop?")
    client = redis_server.client()
    stream = questions_key("jarvis")
    taken = client.xreadgroup("workers", "dead-1", {stream: ">"}, count=1)
    entry_id = taken[0][1][0][0]
    for dead in ("dead-2", "dead-3"):                 # claimed by the next worker, which died too
        client.xclaim(stream, "workers", dead, 0, [entry_id])
    calls: list[str] = []
    start_worker(settings, lambda q: calls.append(q) or lexical_jarvis.ask(q))
    assert wait_for(lambda: inbox.count() == 1, timeout=30)
    assert compose_reply(inbox.deliveries[0][1]) == "I don't know." and calls == []


def test_a_question_older_than_max_age_is_dropped_not_answered(redis_server, lexical_jarvis, start_worker,
                                                             start_pool):
    settings = pool_settings(redis_server, max_age=2.0, busy_after=0.5)
    pool = start_pool(settings)
    inbox = Inbox()
    inbox.submit(pool, "what do cows drop?", key="alex", player="Alex")
    time.sleep(2.5)                                     # no worker: it grows older than max_age
    calls: list[str] = []
    worker = start_worker(settings, lambda q: calls.append(q) or lexical_jarvis.ask(q))
    assert wait_for(lambda: worker.stats.dropped_old == 1, timeout=30)
    assert wait_for(lambda: inbox.count() == 1, timeout=30)
    assert isinstance(inbox.deliveries[0][1], PoolTimeout) and calls == []
    assert [text for _, text in inbox.notices] == [BUSY_NOTICE]
    assert pool.stats.expired == 1


def test_busy_notice_then_the_late_answer_in_the_chat(redis_server, lexical_jarvis, start_worker, start_pool):
    settings = pool_settings(redis_server, busy_after=0.5)
    pool = start_pool(settings, player_id=lambda name: "")
    with RaspberryJuiceDouble({1: Player("Steve")}) as server:
        bridge = RunningBridge(server, pool)
        server.say(1, "jarvis, what do cows drop?")
        assert server.wait_for(lambda: notices_to(server.posts, "Steve"), timeout=30)   # nobody answers yet
        start_worker(settings, lexical_jarvis.ask)
        assert server.wait_for(lambda: answers_to(server.posts, "Steve"), timeout=60)
        time.sleep(0.5)
        bridge.stop()
        posts = server.posts_snapshot()
    assert len(notices_to(posts, "Steve")) == 1 and len(answers_to(posts, "Steve")) == 1
    assert posts.index(notices_to(posts, "Steve")[0]) < posts.index(answers_to(posts, "Steve")[0])
    assert from_cow_page(answers_to(posts, "Steve")[0])
    assert bridge.bridge.stats.answered == 1


def test_one_players_answers_come_in_the_order_asked_and_bad_replies_are_dropped(redis_server, start_pool):
    """The test writes the workers' replies itself, the second question's first."""
    pool = start_pool(pool_settings(redis_server, busy_after=30.0))
    inbox = Inbox()
    inbox.submit(pool, "what do cows drop?", key="steve", player="Steve")
    inbox.submit(pool, "where do blazes spawn?", key="steve", player="Steve")
    client = redis_server.client()
    entries = client.xrange(questions_key("jarvis"))
    assert [e[1]["q"] for e in entries] == ["what do cows drop?", "where do blazes spawn?"]
    key = replies_key("jarvis", entries[0][1]["client"])

    def reply(entry, title: str) -> dict:
        answer = Answer(entry[1]["q"], f"the {title} answer", 1.0, title, "test", 0.1, pages=(title,),
                        confidence=0.9, abstained=False)
        return ReplyMessage(entry[1]["id"], "test-worker", 1, answer).fields()

    client.xadd(key, {"id": entries[1][1]["id"], "answer": "{not json"})                 # dropped
    client.xadd(key, {"id": entries[1][1]["id"], "answer": json.dumps({"answer": 7})})  # dropped
    client.xadd(key, {"id": entries[1][1]["id"], "worker": "x", "error": "rm -rf /"})   # dropped
    client.xadd(key, reply(entries[1], "Blaze"))
    assert wait_for(lambda: pool.stats.bad_replies == 3, timeout=10)
    time.sleep(0.5)
    assert inbox.count() == 0                           # held: the player's first question is not answered yet
    client.xadd(key, reply(entries[0], "Cow"))
    assert wait_for(lambda: inbox.count() == 2, timeout=10)
    assert [r.title for _, r in inbox.deliveries] == ["Cow", "Blaze"]
    client.xadd(key, reply(entries[0], "Cow"))           # a second answer to a delivered question
    assert wait_for(lambda: pool.stats.duplicates == 1, timeout=10)
    assert inbox.count() == 2


def test_nothing_on_the_stream_makes_a_worker_write_anywhere_but_a_reply_stream(redis_server, lexical_jarvis,
                                                                               start_worker, start_pool):
    settings = pool_settings(redis_server)
    worker = start_worker(settings, lexical_jarvis.ask)
    client = redis_server.client()
    stream = questions_key("jarvis")
    hostile = [
        {"v": "1", "id": "a" * 32, "q": "what do cows drop?", "client": "../../config", "player": "", "origin": "serve"},
        {"v": "1", "id": "b" * 32, "q": "what do cows drop?", "client": "c" * 16 + ":x", "player": "", "origin": "serve"},
        {"v": "2", "id": "d" * 32, "q": "FLUSHALL", "client": "e" * 16, "player": "", "origin": "serve"},
        {"id": "f" * 32, "q": "what do cows drop?"},
    ]
    for fields in hostile:
        client.xadd(stream, fields)
    assert wait_for(lambda: worker.stats.unreadable == len(hostile), timeout=30)
    assert set(client.keys("*")) == {stream}
    pool = start_pool(settings)
    assert pool.ask("what do cows drop?").title == "Cow"
    assert client.xpending(stream, "workers")["pending"] == 0


def test_the_worker_picks_up_a_new_index_generation(redis_server, tmp_path, start_worker, start_pool):
    from jarvis.index import build_index

    def corpus(drop: str) -> Path:
        path = tmp_path / f"corpus-{drop.split()[0]}.jsonl"
        write_corpus([Page("Glimmer", "http://127.0.0.1/w/Glimmer", [
            "A glimmer is a small glowing creature that drifts over lakes at night.",
            f"When defeated, a glimmer drops {drop}."], sections=[[], ["Drops"]])], path)
        return path

    index_dir = tmp_path / "index"
    build_index(corpus("glow dust"), index_dir, progress=False)
    config = Config(home=tmp_path / "home", reader=ReaderSettings(model="", reader="fallback:lexical"))
    settings = pool_settings(redis_server)
    with assemble(config, index_dir) as jarvis:
        start_worker(settings, jarvis.ask)
        pool = start_pool(settings)
        assert "glow dust" in pool.ask("what do glimmers drop?").text
        build_index(corpus("star shards"), index_dir, progress=False)       # swapped in while the worker runs
        assert "star shards" in pool.ask("what do glimmers drop?").text


# --------------------------------------------------------------------------- settings and secrets


def test_redis_settings_in_a_file_never_hold_a_password(tmp_path):
    path = tmp_path / "jarvis.toml"
    path.write_text('[redis]\nurl = "redis://redis.internal:6380/2"\nmax_age = 90\nclaim_after = 20\n')
    config, _ = load_settings_file(path, Config.from_env({"JARVIS_REDIS_PASSWORD": "s3cret-pw"}))
    assert config.redis.url == "redis://redis.internal:6380/2" and config.redis.max_age == 90.0
    assert config.redis.password == "s3cret-pw" and "s3cret-pw" not in repr(config)
    for text, needs in [('[redis]\nurl = "redis://:s3cret-pw@redis.internal"\n', "JARVIS_REDIS_URL"),
                        ('[redis]\npassword = "s3cret-pw"\n', "JARVIS_REDIS_PASSWORD"),
                        ('[redis]\nurl = "http://redis.internal"\n', "not a Redis URL"),
                        ('[redis]\nmax_attempts = 0\n', "out of range"),
                        ('[redis]\nmax_agee = 3\n', "did you mean max_age")]:
        path.write_text(text)
        with pytest.raises(SettingsError) as info:
            load_settings_file(path, Config())
        assert needs in str(info.value) and "s3cret-pw" not in str(info.value)


def test_urls_are_shown_without_their_password():
    assert redact("redis://:pw-123@cache.example:6379/0") == "redis://:***@cache.example:6379/0"
    assert redact("rediss://jarvis:pw-123@cache.example/1") == "rediss://jarvis:***@cache.example/1"
    assert redact("redis://cache.example:6379") == "redis://cache.example:6379"
    config = Config.from_env({"JARVIS_REDIS_URL": "redis://:pw-123@cache.example"})
    assert config.redis.url.endswith("cache.example") and "pw-123" not in repr(config)
    with pytest.raises(NetworkError) as info:
        RedisLink(replace(FAST, url="redis://:pw-123@cache.example", prefix="bad prefix"))
    assert "pw-123" not in str(info.value)


# --------------------------------------------------------------------------- end to end


def test_serve_through_the_pool_answers_every_player_once(redis_server, bundled_index, tmp_path):
    """`jarvis serve --redis` (the URL and its password from the environment) on the RaspberryJuice double,
    answered by a `jarvis worker` process; SIGTERM stops both cleanly, and neither logs the password."""
    password = "e2e-pw-42"
    server_url = redis_server.url
    redis_server.stop()
    redis_server.password = password
    redis_server.start()
    secret_url = redis_server.url
    players = {10 + i: Player(f"Player{i}", f"\u00a77[Member] \u00a7fPlayer{i}") for i in range(6)}
    settings_file = tmp_path / "worker.toml"
    settings_file.write_text("[redis]\nmax_age = 100\n")
    worker = worker_process(secret_url, bundled_index, tmp_path / "home", "e2e-worker", settings_file)
    try:
        with RaspberryJuiceDouble(players) as server:
            with jarvis_serve("--mc-host", "127.0.0.1", "--mc-port", str(server.port), "--redis", home=tmp_path / "home",
                              env={"JARVIS_REDIS_URL": secret_url}) as served:
                assert server.wait_for(lambda: server.polled_on(2), timeout=120), "serve never polled"
                asked_at = time.monotonic()
                for i, question in enumerate(QUESTIONS[:6]):
                    server.say(10 + i, f"jarvis, {question}")
                assert server.wait_for(lambda: all(answers_to(server.posts, f"Player{i}") for i in range(6)),
                                       timeout=240), server.posts
                settings_file.write_text('[redis]\nmax_age = 90\nprefix = "elsewhere"\n')
                worker.send_signal(signal.SIGHUP)                  # reloads what it can, names the rest
                # Player0 asks again once the bridge's rate lets a player ask again (else "slow down").
                time.sleep(max(0.0, BridgeSettings().per_player_rate + 0.2 - (time.monotonic() - asked_at)))
                server.say(10, "jarvis, what is a creeper?")
                assert server.wait_for(lambda: len(answers_to(server.posts, "Player0")) == 2, timeout=120)
                time.sleep(1.0)
    finally:
        code, worker_log = stop_process(worker)
    assert served.returncode == 0, served.stderr
    assert code == 0, worker_log
    assert all(len(answers_to(server.posts, f"Player{i}")) == 1 for i in range(1, 6))
    assert len(answers_to(server.posts, "Player0")) == 2 and from_cow_page(answers_to(server.posts, "Player0")[0])
    assert 'event=reloaded worker="e2e-worker" changed="[\'redis.max_age\']"' in worker_log
    assert re.search(r"event=reload_needs_restart settings=\"\[.*redis\.prefix", worker_log)
    assert password not in served.stderr + worker_log and server_url != secret_url
    assert "redis://:***@127.0.0.1" in worker_log
    stopped = dict(re.findall(r"(\w+)=(\S+)", re.search(r"event=worker_stopped (.*)", worker_log).group(1)))
    assert int(stopped["answered"]) == 7 and stopped["reloads"] == "1"
    assert re.search(r"event=answered .*waited_ms=", served.stderr)
