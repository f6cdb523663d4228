"""The desk's loop, end to end: a question Jarvis cannot answer, taught in the panel, then answered with the
taught answer, stated, by `jarvis ask`, by a running `jarvis serve` (on the RaspberryJuice double) and by a
worker of the pool (a real redis-server), none of them restarted, for the question and its variants; and the
time from "save" to the first answer in game that uses it (docs/panel.md)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from jarvis.panel import PanelPlan
from panel_support import TOKEN, copy_index, http, panel_config, running_panel
from jarvis_lab.raspberryjuice import Player, RaspberryJuiceDouble
from jarvis_lab.redis_server import RedisServer
from serve_process import jarvis_serve

QUESTION = "how do i claim land?"
ANSWER = "Claim land with a golden shovel: right-click two opposite corners of your base."
TITLE = "Claim land with a golden shovel"      # made from the answer
VARIANTS = ["How do I claim land", "how can i claim land on this server?", "how to claim land"]


def ask(home, *args: str, question: str = QUESTION) -> dict:
    result = subprocess.run([sys.executable, "-m", "jarvis", "ask", question, "--json", "--fallback", *args],
                            capture_output=True, text=True, env={**os.environ, "JARVIS_HOME": str(home)}, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def from_guide(answer: dict) -> bool:
    """The taught answer, stated."""
    return (answer["site"] == "server guide" and answer["title"] == TITLE and answer["answer"] == ANSWER
            and answer["abstained"] is False and answer["confidence"] == 1.0)


def replies_to(posts: list[str], player: str) -> list[str]:
    return [p for p in posts if p.startswith(f"[Jarvis] {player}:")]


def test_a_question_taught_in_the_panel_is_answered_by_ask_serve_and_a_worker_without_restart(tmp_path,
                                                                                             bundled_index):
    home = tmp_path / "home"
    config = panel_config(home)
    index_dir = copy_index(bundled_index, tmp_path / "index")
    before = ask(home, "--index", str(index_dir))
    assert before["site"] != "server guide" and (before["abstained"] or not before["answer"]), before
    players = {10 + i: Player(f"Player{i}") for i in range(4)}
    with RedisServer(tmp_path / "redis") as redis_server, RaspberryJuiceDouble(players) as game:
        worker = subprocess.Popen([sys.executable, "-m", "jarvis", "worker", "-v", "--redis", redis_server.url,
                                   "--index", str(index_dir), "--name", "loop-worker", "--fallback"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, "JARVIS_HOME": str(home)})
        try:
            with jarvis_serve("--mc-host", "127.0.0.1", "--mc-port", str(game.port), "--index", str(index_dir),
                              "--log-player-names", home=home) as served, \
                    running_panel(PanelPlan(config, index_dir)) as panel:
                assert game.wait_for(lambda: game.polled_on(2), timeout=180), "serve never polled"
                game.say(10, f"jarvis, {QUESTION}")
                assert game.wait_for(lambda: replies_to(game.posts, "Player0"), timeout=180)
                assert "golden shovel" not in replies_to(game.posts, "Player0")[0]
                # the admin sees it in the panel, and teaches it (the page's way: saved, built in the background)
                status, _, text = http("GET", panel.url + "/api/questions?view=needs&q=claim", token=TOKEN)
                assert status == 200 and json.loads(text)["questions"][0]["player"] == "Player0"
                saved = time.monotonic()
                status, _, text = http("POST", panel.url + "/api/answers", token=TOKEN,
                                       body={"question": QUESTION, "answer": ANSWER})
                assert status == 201 and json.loads(text)["in_use"] is True, text
                # players ask again until serve's answer uses the guide page
                player, first = 1, None
                while time.monotonic() - saved < 240 and first is None:
                    game.say(10 + player, f"jarvis, {QUESTION}")
                    name = f"Player{player}"
                    assert game.wait_for(lambda: replies_to(game.posts, name), timeout=120)
                    if "golden shovel" in replies_to(game.posts, name)[0]:
                        first = time.monotonic() - saved
                    player = player % 3 + 1
                    if first is None:
                        time.sleep(3.1)                     # serve's per-player rate
                assert first is not None, game.posts
                print(f"\nsave -> first answer in game with the taught answer: {first:.1f} s")
                assert first <= 60                                  # the promise (issue 48)
                for number, variant in enumerate(VARIANTS):          # its variants, in game, stated
                    time.sleep(3.1)
                    name = f"Player{number % 3 + 1}"
                    before = len(replies_to(game.posts, name))
                    game.say(10 + number % 3 + 1, f"jarvis, {variant}")
                    assert game.wait_for(lambda: len(replies_to(game.posts, name)) > before, timeout=120)
                    reply = replies_to(game.posts, name)[-1]
                    assert "golden shovel" in reply and "not sure" not in reply and "server guide" in reply, reply
                pooled = ask(home, "--redis", redis_server.url, question=VARIANTS[1])   # a worker started before
                assert from_guide(pooled), pooled
                assert served.process.poll() is None and worker.poll() is None   # nothing restarted
        finally:
            if worker.poll() is None:
                worker.terminate()
            _, worker_log = worker.communicate(timeout=60)
    assert served.returncode == 0, served.stderr
    assert worker.returncode == 0, worker_log
    assert from_guide(ask(home, "--index", str(index_dir)))
    assert TOKEN not in served.stderr + worker_log
