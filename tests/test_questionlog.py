"""The question log (hashed players, rotation, no line lost under concurrent writers), chat feedback,
and `jarvis report` on it."""
from __future__ import annotations

import json
import multiprocessing
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from jarvis.bridge import AnswerFunction, Bridge
from jarvis.config import BridgeSettings, LogSettings
from jarvis.answer import Answer
from jarvis.replies import compose_reply
from jarvis.privacy import SALT_FILE, load_salt, player_hash
from jarvis.questionlog import QuestionLog, build_report, read_log, rotated_paths
from jarvis_lab.raspberryjuice import Player, RaspberryJuiceDouble
from serve_process import jarvis_serve

FAST = BridgeSettings(mc_host="127.0.0.1", poll_interval=0.02, per_player_rate=0.0, io_timeout=2.0,
                      reconnect_min_delay=0.05, reconnect_max_delay=0.2, connect_attempts=3, slow_after=1.0)


def answer(question: str, text: str = "an answer", title: str = "Cow", **extra) -> Answer:
    return Answer(question=question, text=text, score=1.0, title=title if text else "", reader="test", seconds=0.1,
                  pages=("Cow",), site="Minecraft Wiki" if text else "", **extra)


def lines_of(path: Path, backups: int = 5) -> list[dict]:
    return [json.loads(line) for p in rotated_paths(path, backups) if p.is_file()
            for line in p.read_text(encoding="utf-8").splitlines()]


# --------------------------------------------------------------------------- hashing


def test_player_names_are_salted_hashes_and_the_salt_is_made_once(tmp_path):
    salt = load_salt(tmp_path)
    assert load_salt(tmp_path) == salt and len(salt) == 32
    assert (tmp_path / SALT_FILE).stat().st_mode & 0o077 == 0          # readable by its owner only
    assert player_hash("Steve", salt) == player_hash("steve", salt)   # Minecraft names ignore case
    assert player_hash("Steve", salt) != player_hash("Alex", salt)
    assert player_hash("Steve", salt) != player_hash("Steve", load_salt(tmp_path / "other"))
    assert re.fullmatch(r"[0-9a-f]{16}", player_hash("Steve", salt))


def test_a_damaged_salt_is_a_clear_error(tmp_path):
    (tmp_path / SALT_FILE).write_text("not hex\n")
    with pytest.raises(OSError, match="damaged; delete it"):
        load_salt(tmp_path)


def test_the_log_keeps_hashes_unless_names_are_asked_for(tmp_path):
    salt = load_salt(tmp_path)
    hashed = QuestionLog(tmp_path / "a.jsonl", LogSettings(), salt)
    hashed.record("what do cows drop?", answer("what do cows drop?"), reply="an answer (source: Cow)", player="Steve",
                  latency=0.5)
    named = QuestionLog(tmp_path / "b.jsonl", LogSettings(player_names=True))
    named.record("what do cows drop?", answer("what do cows drop?"), reply="an answer (source: Cow)", player="Steve",
                 latency=0.5)
    assert "Steve" not in (tmp_path / "a.jsonl").read_text()
    (line,) = lines_of(tmp_path / "a.jsonl")
    assert line["player"] == player_hash("Steve", salt)
    assert {"time", "question", "reply", "confidence", "abstained", "page", "site", "rule", "threshold", "latency_s",
            "player"} <= set(line)
    assert (line["page"], line["site"], line["found"], line["confidence"]) == ("Cow", "Minecraft Wiki", True, 0.0)
    assert lines_of(tmp_path / "b.jsonl")[0]["player"] == "Steve"


def test_confidence_abstained_and_the_reply_are_logged(tmp_path):
    log = QuestionLog(tmp_path / "q.jsonl", LogSettings(player_names=True))
    unsure = answer("q", "1-3 raw beef", confidence=0.31, abstained=True, url="http://wiki.test/w/Cow")
    log.record("q", unsure, reply=compose_reply(unsure))
    (line,) = lines_of(tmp_path / "q.jsonl")
    assert (line["confidence"], line["abstained"], line["reply"]) == (0.31, True, compose_reply(unsure))
    assert line["reply"].startswith("not sure — ")


# --------------------------------------------------------------------------- concurrent writers, rotation


def _write_lines(path: str, writer: int, count: int) -> None:
    log = QuestionLog(path, LogSettings(player_names=True, max_bytes=20_000, backups=50))
    for i in range(count):
        log.record(f"writer {writer} question {i} " + "x" * 80, None, player=f"P{writer}", error="none")


def test_no_line_is_lost_or_torn_with_threads_and_processes_writing_through_rotations(tmp_path):
    path = tmp_path / "log" / "questions.jsonl"
    threads = [threading.Thread(target=_write_lines, args=(str(path), t, 150)) for t in range(4)]
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_write_lines, args=(str(path), 10 + p, 150)) for p in range(3)]
    for worker in [*threads, *processes]:
        worker.start()
    for worker in [*threads, *processes]:
        worker.join(timeout=120)
    assert all(p.exitcode == 0 for p in processes)
    files = [p for p in rotated_paths(path, 50) if p.is_file()]
    assert len(files) > 3                                          # it rotated, many times
    assert all(p.stat().st_size <= 20_000 for p in files)
    seen = [(rec["player"], rec["question"]) for rec in lines_of(path, 50)]   # json.loads: no torn line
    expected = {(f"P{w}", f"writer {w} question {i} " + "x" * 80) for w in [0, 1, 2, 3, 10, 11, 12] for i in range(150)}
    assert len(seen) == len(expected) == 7 * 150 and set(seen) == expected
    for writer in ("P0", "P10"):                                   # each writer's lines in the order written
        numbers = [int(q.split()[3]) for p, q in seen if p == writer]
        assert numbers == sorted(numbers)


def test_rotation_keeps_the_configured_number_of_files(tmp_path):
    path = tmp_path / "questions.jsonl"
    log = QuestionLog(path, LogSettings(player_names=True, max_bytes=1_000, backups=2))
    for i in range(60):
        log.record(f"question {i}", None, error="e")
    assert sorted(p.name for p in tmp_path.glob("questions.jsonl*") if not p.name.endswith(".lock")) == [
        "questions.jsonl", "questions.jsonl.1", "questions.jsonl.2"]
    assert lines_of(path, 2)[-1]["question"] == "question 59"


# --------------------------------------------------------------------------- the report


def _log_with_history(path: Path) -> None:
    now = datetime.now(timezone.utc)
    records = []

    def question(i, text, found, days_ago, abstained=None, latency=0.5, page="Cow"):
        at = (now - timedelta(days=days_ago)).isoformat().replace("+00:00", "Z")
        records.append({"type": "question", "id": f"q{i}", "time": at, "origin": "serve", "player": f"h{i % 3}",
                        "question": text, "answer": "x" if found else "", "reply": "r", "found": found,
                        "confidence": None, "abstained": abstained, "page": page if found else "",
                        "site": "Minecraft Wiki" if found else "", "latency_s": latency})

    question(1, "What do cows drop?", True, 1, latency=0.2)
    question(2, "how do i claim land", False, 1)
    question(3, "How do I claim land?", False, 2)
    question(4, "how do i claim land", False, 3, latency=4.0)
    question(5, "where is the shop", True, 2, abstained=True)
    question(6, "what do cows drop", True, 2)
    question(7, "when is the event", False, 30)                   # outside --since 7d
    records.append({"type": "feedback", "id": "q6", "time": now.isoformat(), "feedback": "wrong", "player": "h0"})
    records.append({"type": "feedback", "id": "q1", "time": now.isoformat(), "feedback": "thanks", "player": "h1"})
    text = "\n".join(json.dumps(r) for r in records)
    path.write_text(text[:40] + "\n" + text + "\n{\"type\": \"question\", \"id\": \"cut sho\n", encoding="utf-8")


def test_report_counts_lists_unanswered_and_wrong_and_skips_corrupt_lines(tmp_path):
    path = tmp_path / "questions.jsonl"
    _log_with_history(path)
    contents = read_log(path)
    assert contents.corrupt == 2
    now = datetime.now(timezone.utc)
    data = build_report(contents, since=now - timedelta(days=7), until=now).to_json()
    assert (data["questions"], data["answered"], data["unsure"], data["unknown"]) == (6, 2, 1, 3)
    assert data["unanswered"][0] == {"question": "how do i claim land", "count": 3}
    assert {"question": "where is the shop", "count": 1} in data["unanswered"]
    assert all(row["question"] != "when is the event" for row in data["unanswered"])
    assert data["marked_wrong"] == [{"question": "what do cows drop", "count": 1, "answer": "x", "page": "Cow"}]
    assert data["pages"][0] == {"page": "Cow", "site": "Minecraft Wiki", "count": 3}   # unsure answers read it too
    assert data["latency"]["p50"] == 0.5 and data["latency"]["p95"] > 2
    assert sum(day["questions"] for day in data["per_day"]) == 6 and data["corrupt_lines"] == 2


def test_report_cli_json_markdown_and_chart(tmp_path):
    path = tmp_path / "questions.jsonl"
    _log_with_history(path)
    env = {**os.environ, "JARVIS_HOME": str(tmp_path / "home")}
    result = subprocess.run([sys.executable, "-m", "jarvis", "report", "--log", str(path), "--json", "--since", "all",
                             "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert {"questions", "answered", "unsure", "unanswered", "marked_wrong"} <= set(data)
    assert data["questions"] == 7 and {"question": "when is the event", "count": 1} in data["unanswered"]
    assert "2 corrupt line" in result.stderr
    assert (tmp_path / "out" / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "how do i claim land" in markdown and "![questions per day" in markdown
    missing = subprocess.run([sys.executable, "-m", "jarvis", "report"], capture_output=True, text=True, timeout=120,
                             env=env)
    assert missing.returncode == 1 and len(missing.stderr.strip().splitlines()) == 1
    assert "no question log" in missing.stderr
    bad = subprocess.run([sys.executable, "-m", "jarvis", "report", "--log", str(path), "--since", "lately"],
                         capture_output=True, text=True, timeout=120, env=env)
    assert bad.returncode == 1 and "--since" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


JUNK = "\u00ff\u00fe\x01PK\x03\x04 \x89PNG\r\n\x1a zzqx"   # a binary file's bytes pasted in a terminal (argv holds no NUL)


def test_the_admins_terminal_asks_are_no_players_questions(tmp_path, bundled_index):
    """Three `jarvis ask` in a terminal: the report's JSON has no player's question (``questions`` 0) and
    counts them apart (``asked_in_terminal`` 3); the junk among them is never a question "not answered"."""
    env = {**os.environ, "JARVIS_HOME": str(tmp_path / "home")}

    def jarvis(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "jarvis", *args], capture_output=True, text=True, timeout=300,
                              env=env)

    for question in ("what do cows drop?", "where do blazes spawn?", JUNK):
        asked = jarvis("ask", question, "--index", str(bundled_index), "--reader", "fallback:lexical")
        assert asked.returncode == 0, asked.stderr
    data = json.loads(jarvis("report", "--json").stdout)
    assert (data["questions"], data["players"], data["asked_in_terminal"]) == (0, 0, 3)
    assert (data["answered"], data["unsure"], data["unknown"], data["unanswered"]) == (0, 0, 0, [])
    shown = jarvis("report").stdout
    rows = {cells[0]: cells[1] for cells in (
        [c.strip() for c in line.strip("|").split("|")] for line in shown.splitlines() if line.startswith("| "))
        if len(cells) == 2}
    assert rows["players in game"] == "—" and rows["asked with `jarvis ask` in a terminal (not counted above)"] == "3"
    assert "zzqx" not in shown and "PNG" not in shown, shown
    # Every list on the terminal has its heading: the per-day one too (it had none without --out).
    blocks = shown.split("\n\n")
    assert blocks[blocks.index("## Per day") + 1] == "None.", shown


def test_report_counts_players_in_game_and_questions_from_the_terminal_apart(tmp_path):
    path = tmp_path / "questions.jsonl"
    _log_with_history(path)
    ask = {"type": "question", "id": "a1", "time": datetime.now(timezone.utc).isoformat(), "origin": "ask",
           "player": None, "question": "what is a creeper", "answer": "a mob", "found": True, "page": "Creeper"}
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(ask) + "\n")
    report = build_report(read_log(path), since=None)
    assert (report.data["players"], report.data["asked_in_terminal"]) == (3, 1)
    assert report.data["questions"] == len(read_log(path).questions) - 1          # the players' alone
    assert re.search(r"\| players in game +\| 3 +\|", report.markdown()) and "`jarvis ask`" in report.markdown()
    no_terminal = build_report(read_log(path), since=datetime.now(timezone.utc) - timedelta(days=7),
                               until=datetime.now(timezone.utc) - timedelta(minutes=1))
    assert no_terminal.data["asked_in_terminal"] == 0 and "`jarvis ask`" not in no_terminal.markdown()


# --------------------------------------------------------------------------- the chat bridge


@pytest.mark.parametrize("dialect", ["upstream", "fork"])
def test_feedback_in_chat_marks_the_last_answer_within_the_window(tmp_path, dialect):
    log = QuestionLog(tmp_path / "q.jsonl", LogSettings(feedback_window=60.0), load_salt(tmp_path))
    with RaspberryJuiceDouble({1: Player("Steve"), 2: Player("Alex")}, dialect=dialect) as server:
        bridge = Bridge(replace(FAST, mc_port=server.port), AnswerFunction(answer), question_log=log)
        thread = threading.Thread(target=bridge.run, daemon=True)
        thread.start()
        try:
            assert server.wait_for(lambda: "events.chat.posts" in server.commands)
            server.say(1, "jarvis, what do cows drop?")
            assert server.wait_for(lambda: any("an answer" in p for p in server.posts))
            server.say(1, "jarvis, wrong")
            server.say(2, "Jarvis thanks!")            # Alex got no answer: nothing to mark, nothing said
            assert server.wait_for(lambda: any("noted" in p for p in server.posts))
            log.settings = replace(log.settings, feedback_window=0.0)
            server.say(2, "jarvis, what do pigs drop?")
            assert server.wait_for(lambda: sum("an answer" in p for p in server.posts) == 2)
            time.sleep(0.05)
            server.say(2, "jarvis, that's wrong")       # too late: not marked, and the player is told
            assert server.wait_for(lambda: any("no answer of mine" in p for p in server.posts))
        finally:
            bridge.stop()
            thread.join(timeout=20)
    records = lines_of(tmp_path / "q.jsonl")
    questions = [r for r in records if r["type"] == "question"]
    feedback = [r for r in records if r["type"] == "feedback"]
    assert [q["question"] for q in questions] == ["what do cows drop?", "what do pigs drop?"]
    assert feedback == [{"type": "feedback", "id": questions[0]["id"], "time": feedback[0]["time"],
                         "feedback": "wrong", "player": questions[0]["player"]}]
    assert bridge.stats.questions == 2                  # feedback is not a question


def test_the_logged_reply_is_what_the_chat_showed(tmp_path):
    """A reply of two chat lines is logged as the chat showed it: the posted lines less "[Jarvis] " and the
    "Steve: " that addresses the player, joined by one space (never a reply composed for another width)."""
    log = QuestionLog(tmp_path / "q.jsonl", LogSettings(player_names=True))
    long = answer("q", "0-2 Leather and 1-3 Raw beef, " * 7 + "and a saddle",
                  sentence="When killed, an adult cow drops 0-2 Leather and 1-3 Raw beef.", confidence=0.9,
                  abstained=False)
    with RaspberryJuiceDouble({1: Player("Steve")}, dialect="upstream") as server:
        bridge = Bridge(replace(FAST, mc_port=server.port, max_line=120), AnswerFunction(lambda q: long),
                        question_log=log)
        thread = threading.Thread(target=bridge.run, daemon=True)
        thread.start()
        try:
            assert server.wait_for(lambda: "events.chat.posts" in server.commands)
            server.say(1, "jarvis, what do cows drop?")
            assert server.wait_for(lambda: len(server.posts) == 2)
        finally:
            bridge.stop()
            thread.join(timeout=20)
    first, second = server.posts
    assert first.startswith("[Jarvis] Steve: ") and second.startswith("[Jarvis] ")
    (line,) = lines_of(tmp_path / "q.jsonl")
    assert line["reply"] == first.removeprefix("[Jarvis] Steve: ") + " " + second.removeprefix("[Jarvis] ")
    assert line["reply"] != compose_reply(long)            # composed for the chat's width, not the terminal's


def test_a_serve_session_with_ten_players_logs_every_question(tmp_path, bundled_index):
    """`jarvis serve` against the RaspberryJuice double: 10 players ask 3 questions each (as fast as the
    rate limit lets them) and 3 mark their answer wrong; the log has every question once, hashed players
    only, and `jarvis report` lists what was not answered."""
    players = {10 + i: Player(f"Player{i}") for i in range(10)}
    questions = ["what do cows drop?", "where do blazes spawn?", "what is the meaning of xylophone quasar?"]
    home = tmp_path / "home"
    with RaspberryJuiceDouble(players, dialect="upstream") as server:
        with jarvis_serve("--mc-host", "127.0.0.1", "--mc-port", str(server.port), "--index", str(bundled_index),
                          home=home) as served:
            assert server.wait_for(lambda: server.polled_on(2), timeout=120), "serve never polled"   # its check, then its session
            for round_, question in enumerate(questions):
                for entity_id, player in players.items():
                    server.say(entity_id, f"jarvis, {question}")
                assert server.wait_for(lambda: all(len([p for p in server.posts if p.startswith(
                    f"[Jarvis] {p_.name}:")]) >= round_ + 1 for p_ in players.values()), timeout=120), server.posts
                time.sleep(3.2)                          # the per-player rate limit (3 s)
            for entity_id in (10, 11, 12):
                server.say(entity_id, "jarvis, wrong")
            assert server.wait_for(lambda: sum("noted" in p for p in server.posts) == 3, timeout=60), server.posts
    assert served.returncode == 0, served.stderr
    assert not any("not taken" in p or "ask again" in p for p in server.posts)
    log_text = (home / "log" / "questions.jsonl").read_text(encoding="utf-8")
    assert not any(p.name in log_text for p in players.values())          # hashed by default
    records = [json.loads(line) for line in log_text.splitlines()]
    asked = [r for r in records if r["type"] == "question"]
    assert len(asked) == 30 and sorted(r["question"] for r in asked) == sorted(questions * 10)
    salt = load_salt(home)
    assert {r["player"] for r in asked} == {player_hash(p.name, salt) for p in players.values()}
    assert all(r["latency_s"] > 0 and r["origin"] == "serve" for r in asked)
    marks = [r for r in records if r["type"] == "feedback"]
    last_of = {r["player"]: r["id"] for r in asked}
    assert sorted(m["id"] for m in marks) == sorted(last_of[player_hash(f"Player{i}", salt)] for i in range(3))
    report = subprocess.run([sys.executable, "-m", "jarvis", "report", "--json"], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "JARVIS_HOME": str(home)})
    data = json.loads(report.stdout)
    assert data["questions"] == 30 and data["answered"] + data["unsure"] + data["unknown"] == 30
    assert {"question": questions[2], "count": 10} in data["unanswered"]
    assert data["marked_wrong"] and data["marked_wrong"][0]["count"] == 3
    # Each logged reply is what the chat showed: the posted lines less "[Jarvis] " and the "NAME: " that
    # addresses the player, joined by one space.
    shown: list[list[str]] = []
    for post in server.posts:
        text = post.removeprefix("[Jarvis] ")
        name, _, rest = text.partition(": ")
        if name in {p.name for p in players.values()}:
            shown.append([rest])
        else:
            shown[-1].append(text)
    replies = [" ".join(parts) for parts in shown if not parts[0].startswith("noted")]
    assert sorted(r["reply"] for r in asked) == sorted(replies)
