"""The chat bridge against a local RaspberryJuice double on real sockets (wikis/raspberryjuice.py (jarvis_lab.raspberryjuice)).

The double behaves like the real plugins (replies once per tick, Fail, lag, two dialects); every
test on a socket runs against both dialects. Every wait is a bounded loop with a deadline;
nothing asserts on how long anything took.
"""
from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import threading
import time
import unicodedata
from dataclasses import replace

import pytest
from hypothesis import given, settings as hyp_settings, strategies as st
from mcpi.util import flatten_parameters_to_bytestring

from jarvis.bridge import (FORK, PREFIX, UPSTREAM, V2, AnswerFunction, Answerer, AuthRefused, Bridge, BridgeError,
                           ChatClient, ChatPost, ConnectionLost, PlayerBot, ServerUnreachable, Transport,
                           addressed_question, answer_lines, chat_line, chat_safe, parse_chat_posts,
                           plain_player_name, reply_lines)
from jarvis.config import BridgeSettings
from jarvis.answer import Answer
from jarvis.pipeline import Jarvis
from jarvis.question_text import check_question
from jarvis.replies import compose_reply
from jarvis_lab.raspberryjuice import Player, RaspberryJuiceDouble, raw_exchange
from serve_process import jarvis_serve

# Steve's tab-list name is decorated by a rank plugin, as upstream's entity.getName returns it.
PLAYERS = {1: Player("Steve", "\u00a7c[Admin] \u00a7fSteve"), 2: Player("Alex")}
# Fast settings for tests: poll often, reconnect quickly.
FAST = BridgeSettings(mc_host="127.0.0.1", poll_interval=0.02, per_player_rate=0.0, io_timeout=2.0,
                      reconnect_min_delay=0.05, reconnect_max_delay=0.2, connect_attempts=3, slow_after=1.0)

NASTY = [
    "line one\nchat.post(injected)\nworld.setBlock(0,0,0,46)",
    "carriage\rreturn",
    "crlf\r\nevents.clear()",
    "closing ) paren ) and (open",
    "pipe | and |12,fake event",
    "nul\x00 bell\x07 escape\x1b[31m del\x7f c1\x85 \x9b",
    "unicode line\u2028separator\u2029para",
    "bidi \u202eoverride\u202c zero\u200bwidth \ufeffbom",
    "lone surrogate \ud800 here",
    "§cformatted §lbold §",
    "tab\tvertical\vformfeed\f",
    "emoji 🐄🐖 and 中文 and ñ",
    "",
    ")",
    "\n\n\n",
]


# --------------------------------------------------------------------------- helpers


def answer_for(question: str, text: str | None = None, title: str = "Cow") -> Answer:
    text = f"answer to {question}" if text is None else text
    return Answer(question=question, text=text, score=1.0, title=title if text else "", reader="test",
                  seconds=0.0, pages=("Cow",), confidence=0.9 if text else 0.0, abstained=not text)


class RecordingAnswerer:
    """An Answerer: question -> Answer; records the questions; can be held (to make answering slow) and released."""

    def __init__(self, reply=None, hold: bool = False) -> None:
        self.reply = reply or (lambda q: answer_for(q))
        self.questions: list[str] = []
        self.released = threading.Event()
        self.called = threading.Event()
        if not hold:
            self.released.set()

    def ask(self, question: str) -> Answer:
        self.questions.append(question)
        self.called.set()
        self.released.wait(30)
        return self.reply(question)


class RunningBridge:
    """A Bridge serving in a thread, stopped and joined at the end of the test."""

    def __init__(self, double: RaspberryJuiceDouble, answerer, **overrides) -> None:
        max_questions = overrides.pop("max_questions", None)
        self.settings = replace(FAST, mc_port=double.port, **overrides)
        self.bridge = Bridge(self.settings, answerer, max_questions=max_questions)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        commands_before = len(double.commands)
        # Polling means the initial events.clear was processed: chat said from now on is seen.
        assert double.wait_for(lambda: "events.chat.posts" in double.commands[commands_before:]), "bridge never polled"

    def _run(self) -> None:
        try:
            self.bridge.run()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc

    def stop(self) -> None:
        self.bridge.stop()
        self.thread.join(timeout=20)
        assert not self.thread.is_alive(), "bridge did not stop"
        assert self.error is None, self.error


@pytest.fixture(params=[UPSTREAM, FORK, V2])
def double(request):
    with RaspberryJuiceDouble(PLAYERS, dialect=request.param) as server:
        yield server


@pytest.fixture
def start_bridge(double):
    running: list[RunningBridge] = []

    def start(answerer, **overrides) -> RunningBridge:
        running.append(RunningBridge(double, answerer, **overrides))
        return running[-1]

    yield start
    for bridge in running:
        bridge.stop()


@pytest.fixture
def start_bridge_on():
    """Like start_bridge, for a double the test makes itself: ``start_bridge_on(double, answerer, **settings)``."""
    running: list[RunningBridge] = []

    def start(server, answerer, **overrides) -> RunningBridge:
        running.append(RunningBridge(server, answerer, **overrides))
        return running[-1]

    yield start
    for bridge in running:
        if bridge.thread.is_alive() or bridge.error is not None:
            bridge.stop()


def replies_to(posts: list[str], player: str) -> list[str]:
    return [p for p in posts if p.startswith(f"{PREFIX}{player}:")]


def assert_only_chat_lines(double: RaspberryJuiceDouble) -> None:
    """Every line the server ever received is a command the bridge meant to send, one per line;
    every connection opened with auth (and only one)."""
    assert set(double.commands) <= {"auth", "chat.post", "events.clear", "events.chat.posts", "entity.getName",
                                    "world.getPlayerIds"}
    assert not double.exceptions          # no line the server could not parse
    for lines in double.session_lines:
        assert not lines or lines[0].startswith("auth(")
        assert sum(line.startswith("auth(") for line in lines) <= 1
    for raw in double.lines:
        text = raw.decode("utf-8")
        assert "\r" not in text
        if text.startswith("chat.post("):
            assert text.endswith(")")
            assert len(text[len("chat.post("):-1]) <= 200


# --------------------------------------------------------------------------- wire: parsing and sanitizing


@pytest.mark.parametrize("response, expected", [
    ("", []),
    ("1,hello", [ChatPost(1, "hello")]),
    ("1,a|2,b", [ChatPost(1, "a"), ChatPost(2, "b")]),
    ("1,jarvis, what do | cows drop?|2,hi", [ChatPost(1, "jarvis, what do | cows drop?"), ChatPost(2, "hi")]),
    ("1,||| only pipes |", [ChatPost(1, "||| only pipes |")]),
    ("1,a|b,c|2,d", [ChatPost(1, "a|b,c"), ChatPost(2, "d")]),
    ("1,|2,", [ChatPost(1, ""), ChatPost(2, "")]),
    ("1,commas, in, text", [ChatPost(1, "commas, in, text")]),
    ("7,émoji 🐄 | ok", [ChatPost(7, "émoji 🐄 | ok")]),
    # The documented ambiguity: `|<digits>,` inside a message starts a new post.
    ("1,a|12,b", [ChatPost(1, "a"), ChatPost(12, "b")]),
    # Not the format at all: kept whole, from no known entity.
    ("garbage", [ChatPost(-1, "garbage")]),
])
def test_chat_posts_parse_with_pipes_in_messages(response, expected):
    assert parse_chat_posts(response) == expected


@given(st.lists(st.tuples(st.integers(0, 10**6), st.text().map(lambda t: t.replace("\n", " ")))))
@hyp_settings(max_examples=300, deadline=None)
def test_chat_posts_lose_no_text(posts):
    """Whatever players type, every character of every message comes back (ids may be split off)."""
    response = "|".join(f"{entity_id},{message}" for entity_id, message in posts)
    parsed = parse_chat_posts(response)
    assert "|".join(f"{p.entity_id},{p.message}" for p in parsed) == response
    if all(not re.search(r"\|[0-9]+,", m) for _, m in posts):
        assert parsed == [ChatPost(i, m) for i, m in posts]


def _is_chat_safe(text: str) -> bool:
    return (not any(unicodedata.category(c) in ("Cc", "Cs", "Cf", "Zl", "Zp") for c in text)
            and "|" not in text and "\u00a7" not in text and text == text.strip())


@pytest.mark.parametrize("text", NASTY)
def test_sanitized_text_is_one_harmless_chat_command(text):
    safe = chat_safe(text)
    assert _is_chat_safe(safe)
    # What mcpi puts on the wire for chat.post: exactly one line, one command.
    wire = b"chat.post(" + flatten_parameters_to_bytestring([safe]) + b")\n"
    assert wire.count(b"\n") == 1 and b"\r" not in wire
    assert wire.decode("utf-8").splitlines() == [f"chat.post({safe})"]


@given(st.text())
@hyp_settings(max_examples=500, deadline=None)
def test_sanitizer_holds_for_any_text(text):
    safe = chat_safe(text)
    assert _is_chat_safe(safe)
    assert chat_safe(safe) == safe                  # idempotent: sanitizing twice changes nothing
    safe.encode("utf-8")                            # always encodable (no lone surrogates)
    for line in reply_lines(text, player="Steve", source=text):
        assert line.startswith(PREFIX) and len(line) <= 200 and _is_chat_safe(line)


def test_sanitizer_keeps_readable_text():
    assert chat_safe("0-2 leather and 1-3 raw beef (source: Cow)") == "0-2 leather and 1-3 raw beef (source: Cow)"
    assert chat_safe("a|b") == "a\u00a6b"
    assert chat_safe("one\ntwo\r\nthree") == "one two three"
    assert chat_safe("vacas 🐄 ñ 中文") == "vacas 🐄 ñ 中文"
    assert chat_safe("§cred§r and §kobfuscated") == "red and obfuscated"


# --------------------------------------------------------------------------- the chat contract


# How players address Jarvis: at the start, with the name, a greeting or "@"; at the end after a comma.
@pytest.mark.parametrize("message, question", [
    ("jarvis, what do cows drop?", "what do cows drop?"),
    ("Jarvis: what do cows drop?", "what do cows drop?"),
    ("JARVIS what do cows drop?", "what do cows drop?"),
    ("  jarvis ,  how tall is a ghast", "how tall is a ghast"),
    ("jarvis", ""),
    ("jarvis,", ""),
    ("jarvis:   ", ""),
    ("JARVIS!", ""),
    ("jarvis, 🐄?", "🐄?"),
    ("jarvis? what do cows drop", "what do cows drop"),
    ("jarvis?? how do i tame a wolf", "how do i tame a wolf"),
    ("hey jarvis what do cows drop", "what do cows drop"),
    ("hey jarvis, what", "what"),
    ("Hey Jarvis! where do blazes spawn", "where do blazes spawn"),
    ("ok jarvis how many hearts does a cow have", "how many hearts does a cow have"),
    ("yo jarvis where are diamonds", "where are diamonds"),
    ("hi jarvis", ""),
    ("@jarvis where do blazes spawn?", "where do blazes spawn?"),
    ("@Jarvis what is a creeper", "what is a creeper"),
    ("hey @jarvis what is a creeper", "what is a creeper"),
    ("what do pigs drop, jarvis?", "what do pigs drop?"),
    ("what do pigs drop?, Jarvis?", "what do pigs drop?"),
    ("how do i make a bed, jarvis", "how do i make a bed"),
    ("jarvis is a creeper hostile?", "is a creeper hostile?"),      # "is" and a "?": a question to it
    ("jarvis can you tell me what cows drop", "can you tell me what cows drop"),
    ("thanks jarvis", "thanks"),                                     # feedback, however it is put
    ("thanks, jarvis!", "thanks"),
    ("jarvis, wrong", "wrong"),
])
def test_messages_that_address_jarvis_are_questions(message, question):
    assert addressed_question(message) == question


# Messages that only mention Jarvis: small talk about it, or to another player.
@pytest.mark.parametrize("message", [
    "jarvisss what", "what do cows drop?", "", "ask jarvis", "hey steve, ask jarvis", "lol jarvis",
    "i think jarvis is cool", "i love you jarvis", "did you ask jarvis?", "where is jarvis?", "is jarvis a bot?",
    "who made jarvis?", "good job, jarvis", "jarvis's answer was wrong", "jarvisbot is here",
    "jarvis is so cool", "jarvis is broken lol", "jarvis said cows drop beef", "jarvis sucks", "jarvis was right",
    "jarvis doesn't know anything",
])
def test_messages_that_only_mention_jarvis_are_not(message):
    assert addressed_question(message) is None


def test_reply_names_player_and_source():
    lines = answer_lines(answer_for("q", "0-2 leather and 1-3 raw beef"), player="Steve")
    assert lines == ["[Jarvis] Steve: 0-2 leather and 1-3 raw beef (source: Cow)"]


def test_reply_without_a_page_says_it_does_not_know():
    lines = answer_lines(answer_for("q", ""), player=None)
    assert lines == ["[Jarvis] I don't know."]


def test_an_unsure_answer_is_never_stated_and_points_to_the_page():
    answer = replace(answer_for("q", "1-3 raw beef"), sentence="An adult cow drops 1-3 raw beef when killed.",
                     url="http://wiki.test/w/Cow", confidence=0.2, abstained=True)
    lines = answer_lines(answer, player="Steve")
    assert lines == ['[Jarvis] Steve: not sure — the Cow page says: "An adult cow drops 1-3 raw beef when killed." '
                     'http://wiki.test/w/Cow']


def test_the_bridge_posts_the_answers_reply():
    answer = replace(answer_for("q", "1-3 raw beef"), sentence="An adult cow drops 1-3 raw beef when killed.")
    assert answer_lines(answer, player="Steve") == [f"[Jarvis] Steve: {compose_reply(answer)}"]


def test_long_reply_splits_on_word_boundaries():
    words = [f"word{i}" for i in range(60)]
    lines = reply_lines(" ".join(words), player="Steve", source="Cow", max_lines=5)
    assert len(lines) > 1
    assert all(line.startswith(PREFIX) and len(line) <= 200 for line in lines)
    rejoined = " ".join(line[len(PREFIX):] for line in lines).split()
    assert rejoined == ["Steve:", *words, "(source:", "Cow)"]


def test_very_long_reply_is_shortened_but_keeps_the_source():
    lines = reply_lines("blah " * 1000, player="Steve", source="Cow", max_lines=3)
    assert len(lines) == 3
    assert all(len(line) <= 200 for line in lines)
    assert lines[-1].endswith("… (source: Cow)")


@given(st.lists(st.tuples(st.integers(0, 10**6), st.text().map(lambda t: t.replace("\n", " ")))))
@hyp_settings(max_examples=300, deadline=None)
def test_fork_chat_posts_are_exact(posts):
    """The fork escapes `|` and `,`: any message, `|12,` included, comes back exactly."""
    response = "|".join(f"{pid},{msg.replace('|', chr(92) + '|').replace(',', chr(92) + ',')}" for pid, msg in posts)
    assert parse_chat_posts(response, FORK) == [ChatPost(pid, msg) for pid, msg in posts]


def test_fork_unescaping_keeps_backslashes():
    # the fork escaped `a\|b,c\\,d` as `a\\|b\,c\\\,d` (only | and , get a backslash)
    assert parse_chat_posts(r"3,a\\|b\,c\\\,d|4,\\", FORK) == [ChatPost(3, r"a\|b,c\\,d"), ChatPost(4, r"\\")]


@pytest.mark.parametrize("text, line", [
    ("[Jarvis] a, b,", "[Jarvis] a, b"),
    ("[Jarvis] trailing ,, ,", "[Jarvis] trailing"),
    (",,,", ""),
    ("[Jarvis] (source: Cow)", "[Jarvis] (source: Cow)"),
])
def test_chat_line_drops_trailing_commas_java_split_would_drop(text, line):
    assert chat_line(text) == line


@pytest.mark.parametrize("list_name, name", [
    ("\u00a7c[Admin] \u00a7fSteve", "Steve"),
    ("\u00a76\u00a7lAlex", "Alex"),
    ("Notch", "Notch"),
    ("[VIP] \u00a7k???", "[VIP] ???"),
    ("\u00a7r", None),
])
def test_player_names_lose_colour_codes_and_rank_prefixes(list_name, name):
    assert plain_player_name(list_name) == name


# --------------------------------------------------------------------------- the double is as strict as the plugin


@pytest.mark.parametrize("dialect", [UPSTREAM, FORK, V2])
def test_double_replies_like_the_plugin(dialect):
    with RaspberryJuiceDouble(PLAYERS, dialect=dialect) as server:
        replies = raw_exchange(server.port, b"no parenthesis\nevents.clearAll()\nchat.post(hi,,)\nchat.post(,)\n"
                                             b"events.clear()\nentity.getName(1)\nentity.getName(9)\n"
                                             b"world.getPlayerEntityIds()\nworld.getPlayerIds()\nauth()\n",
                                 {UPSTREAM: 6, FORK: 9, V2: 7}[dialect])
        assert server.posts[0] == "hi"                      # Java's split dropped the trailing commas
        # upstream and the fork throw before dispatch (no reply); 2.x answers Fail
        assert server.exceptions == ([] if dialect == V2 else ["no parenthesis"])
    if dialect == UPSTREAM:   # clearAll, chat.post(,), auth Fail; clear, post, unknown entity: nothing
        assert replies == [b"Fail", b"Fail", "\u00a7c[Admin] \u00a7fSteve".encode(), b"Fail", b"1|2", b"Fail"]
    elif dialect == FORK:
        assert replies == [b"Fail", b"Success", b"Success", b"Success", b"Steve", b"Fail", b"Fail", b"1|2", b"Fail"]
    else:                     # the list name as plain text; auth without a token set: 1
        assert replies == [b"Fail", b"Fail", b"Fail", b"[Admin] Steve", b"Fail", b"1|2", b"1"]


def test_v2_double_refuses_everything_before_auth_and_closes_after_three_bad_tokens():
    """RemoteSession.handleCommand/tryAuth of RaspberryJuice 2.x, byte for byte."""
    with RaspberryJuiceDouble(PLAYERS, dialect=V2, token="s3cret") as server:
        replies = raw_exchange(server.port, b"events.clear()\nchat.post(hi)\nworld.getPlayerIds()\nauth(nope)\n"
                                             b"auth(s3cret)\nauth(s3cret)\nworld.getPlayerIds()\nbad line\n"
                                             b"chat.post(a\rb)\nevents.clear()\n", 8)
        assert replies == [b"Fail", b"Fail", b"Fail", b"Fail", b"1", b"1", b"1|2", b"Fail"]
        assert server.posts == ["ab"]                          # \r is dropped, not a line end; no post before auth
        locked = raw_exchange(server.port, b"auth(a)\nauth(b)\nauth(c)\nworld.getPlayerIds()\n", 3)
        assert locked == [b"Fail", b"Fail", b"Fail"]           # the third bad token closed the connection
        assert server.wait_for(lambda: server.connections == 2 and not server._sessions, timeout=5)


def test_double_answers_once_per_tick_and_not_during_a_lag_spike():
    with RaspberryJuiceDouble(PLAYERS, tick=0.05) as server:
        server.lag(0.6)
        began = time.monotonic()
        replies = raw_exchange(server.port, b"world.getPlayerIds()\n", 1, settle=0.0)
        assert replies == [b"1|2"] and time.monotonic() - began >= 0.5


# --------------------------------------------------------------------------- the bridge on a real socket


def test_answers_a_question_addressing_the_player(double, start_bridge):
    answerer = RecordingAnswerer(lambda q: answer_for(q, "0-2 leather and 1-3 raw beef"))
    start_bridge(answerer)
    double.say(1, "jarvis, what do cows drop?")
    assert double.wait_for(lambda: replies_to(double.posts, "Steve"))
    assert replies_to(double.posts, "Steve") == ["[Jarvis] Steve: 0-2 leather and 1-3 raw beef (source: Cow)"]
    assert answerer.questions == ["what do cows drop?"]


def test_pipe_in_a_message_loses_no_question(double, start_bridge):
    answerer = RecordingAnswerer()
    start_bridge(answerer)
    double.say(1, "jarvis, what do | cows drop?")
    double.say(2, "jarvis, a|b|c ||| d")
    double.say(1, "jarvis, last|one")
    assert double.wait_for(lambda: len(answerer.questions) == 3 and len(double.posts) >= 3)
    assert answerer.questions == ["what do | cows drop?", "a|b|c ||| d", "last|one"]
    assert double.wait_for(lambda: len(replies_to(double.posts, "Steve")) == 2)
    assert replies_to(double.posts, "Steve")[0] == "[Jarvis] Steve: answer to what do \u00a6 cows drop? (source: Cow)"


def test_a_raw_line_break_from_the_server_does_not_desynchronize(double, start_bridge):
    """A server that passes a line break through in a chat event: the stray line is discarded."""
    answerer = RecordingAnswerer()
    start_bridge(answerer)
    double.say(1, "jarvis, first\nsecond half on its own line")
    assert double.wait_for(lambda: replies_to(double.posts, "Steve"))
    double.say(2, "jarvis, next")
    assert double.wait_for(lambda: replies_to(double.posts, "Alex"))
    assert replies_to(double.posts, "Alex") == ["[Jarvis] Alex: answer to next (source: Cow)"]
    assert answerer.questions == ["first", "next"]


def test_messages_not_for_jarvis_are_ignored(double, start_bridge):
    answerer = RecordingAnswerer()
    start_bridge(answerer)
    for message in ["hello everyone", "what do cows drop?", "jarvisss what", "i think jarvis is cool", "ask jarvis",
                    "|||", ""]:
        double.say(1, message)
    double.say(2, "jarvis, the only question")
    assert double.wait_for(lambda: replies_to(double.posts, "Alex"))
    assert answerer.questions == ["the only question"]
    assert double.posts == ["[Jarvis] Alex: answer to the only question (source: Cow)"]


@pytest.mark.parametrize("nasty", NASTY)
def test_nothing_in_an_answer_or_question_can_inject_commands(double, start_bridge, nasty):
    answerer = RecordingAnswerer(lambda q: answer_for(q, f"{nasty} {q}", title=nasty or "Cow"))
    start_bridge(answerer)
    # Chat itself cannot carry a newline; `|<digits>,` is the parser's documented ambiguity.
    question = "jarvis, " + re.sub(r"\|(?=[0-9])", "| ", nasty.replace("\n", " ")) + " )x( |"
    double.say(1, question)
    assert double.wait_for(lambda: replies_to(double.posts, "Steve"))
    assert_only_chat_lines(double)
    for post in double.posts:
        assert _is_chat_safe(post)
    assert ")x(" in replies_to(double.posts, "Steve")[0]   # `)` is kept: it cannot close the command


def test_a_slow_answer_never_stalls_polling(double, start_bridge):
    answerer = RecordingAnswerer(hold=True)             # the first answer takes until released
    start_bridge(answerer, queue_size=1)
    double.say(1, "jarvis, slow one")
    assert answerer.called.wait(20)
    double.say(2, "jarvis, waits in the queue")
    double.say(2, "jarvis, one too many")
    # The chat is still read and answered while the worker is stuck in the slow answer.
    assert double.wait_for(lambda: replies_to(double.posts, "Alex"))
    assert replies_to(double.posts, "Alex") == [
        '[Jarvis] Alex: busy, ask again in a moment (not taken: "one too many")']
    assert not answerer.released.is_set() and answerer.questions == ["slow one"]
    answerer.released.set()
    assert double.wait_for(lambda: len(replies_to(double.posts, "Alex")) == 2 and replies_to(double.posts, "Steve"))
    assert replies_to(double.posts, "Alex")[1] == "[Jarvis] Alex: answer to waits in the queue (source: Cow)"


def test_reconnects_after_the_server_drops_the_connection(double, start_bridge):
    answerer = RecordingAnswerer(hold=True)
    running = start_bridge(answerer)
    double.say(1, "jarvis, asked before the drop")
    assert answerer.called.wait(20)
    double.drop_clients()                                   # the answer is still being computed
    assert double.wait_for(lambda: double.connections >= 2), "no reconnection"
    answerer.released.set()
    assert double.wait_for(lambda: any("nothing was lost" in p for p in double.posts))
    assert double.wait_for(lambda: replies_to(double.posts, "Steve"))
    assert replies_to(double.posts, "Steve") == ["[Jarvis] Steve: answer to asked before the drop (source: Cow)"]
    notice = next(p for p in double.posts if "nothing was lost" in p)
    assert double.posts.index(notice) < double.posts.index(replies_to(double.posts, "Steve")[0])
    double.say(2, "jarvis, asked after the reconnection")
    assert double.wait_for(lambda: replies_to(double.posts, "Alex"))
    assert running.bridge.stats.reconnects >= 1


def test_queued_questions_survive_a_drop(double, start_bridge):
    answerer = RecordingAnswerer(hold=True)
    start_bridge(answerer)
    for i in range(4):
        double.say(1, f"jarvis, question {i}")
    assert double.wait_for(lambda: answerer.called.is_set())
    double.drop_clients()
    assert double.wait_for(lambda: double.connections >= 2)
    answerer.released.set()
    assert double.wait_for(lambda: len(replies_to(double.posts, "Steve")) == 4)
    assert replies_to(double.posts, "Steve") == [f"[Jarvis] Steve: answer to question {i} (source: Cow)"
                                                 for i in range(4)]


def test_a_question_read_just_before_a_drop_is_not_lost(double, start_bridge):
    answerer = RecordingAnswerer()
    start_bridge(answerer)
    double.drop_at_next("entity.getName")   # the poll returned the post, then the connection died
    double.say(1, "jarvis, read then dropped")
    assert double.wait_for(lambda: replies_to(double.posts, "Steve"))
    assert answerer.questions == ["read then dropped"]
    assert double.connections >= 2


def test_a_reply_the_server_never_took_is_posted_again(double, start_bridge):
    start_bridge(RecordingAnswerer())
    double.drop_at_next("chat.post")        # the reply went into a connection that was dying
    double.say(1, "jarvis, say it twice if you must")
    assert double.wait_for(lambda: replies_to(double.posts, "Steve"))
    assert replies_to(double.posts, "Steve") == ["[Jarvis] Steve: answer to say it twice if you must (source: Cow)"]
    assert any("nothing was lost" in p for p in double.posts)


def test_a_silent_server_is_waited_for_not_dropped(double, start_bridge):
    """A hung main thread keeps the connection open: slow is not dead, no reconnection."""
    running = start_bridge(RecordingAnswerer(), slow_after=0.2, io_timeout=0.3)
    double.go_silent()
    time.sleep(1.0)                                         # several slow_after periods: still waiting
    assert double.connections == 1 and running.bridge.stats.disconnects == 0
    assert running.thread.is_alive()


def test_dead_after_gives_up_on_a_silent_server(double, start_bridge):
    running = start_bridge(RecordingAnswerer(), dead_after=0.3)
    double.go_silent()                                      # open socket, no replies: mcpi would hang
    assert double.wait_for(lambda: running.bridge.stats.reconnects >= 1 and running.bridge.connected), \
        "no reconnection after dead_after"
    double.say(1, "jarvis, are you back?")
    assert double.wait_for(lambda: replies_to(double.posts, "Steve"))
    assert running.bridge.stats.disconnects >= 1


def test_connection_reports_a_closed_socket_instead_of_spinning(double):
    client = ChatClient.connect(replace(FAST, mc_port=double.port))
    client.start_session()
    assert client.player_name(1) == "Steve"
    double.drop_clients()
    with pytest.raises(ConnectionLost):
        for _ in range(100):   # bounded: the first or second call must notice
            client.post_and_poll([])
    client.close()


def test_burst_of_players_every_question_answered_or_told_busy(double, start_bridge):
    players = {10 + p: f"Player{p}" for p in range(10)}
    double.players.update({pid: Player(name) for pid, name in players.items()})
    answerer = RecordingAnswerer()
    running = start_bridge(answerer, queue_size=8)
    for round_ in range(10):
        for entity_id, name in players.items():
            double.say(entity_id, f"jarvis, {name} q{round_}")

    def accounted(name: str) -> int:
        answered = [p for p in replies_to(double.posts, name) if "answer to" in p]
        refused = 0
        for post in replies_to(double.posts, name):
            match = re.search(r"not taken: (\d+) questions\)", post)
            refused += int(match.group(1)) if match else int('not taken: "' in post)
        return len(answered) + refused

    assert double.wait_for(lambda: all(accounted(name) == 10 for name in players.values()), timeout=60), \
        {name: accounted(name) for name in players.values()}
    stats = running.bridge.stats
    assert stats.max_waiting <= 8                     # memory bounded: the queue never outgrew its bound
    assert stats.accepted + stats.refused == 100
    assert stats.accepted == len(answerer.questions)
    for name in players.values():                      # each player's answers in the order asked
        rounds = [int(re.search(r" q(\d+) ", p).group(1)) for p in replies_to(double.posts, name) if "answer to" in p]
        assert rounds == sorted(rounds)
    assert_only_chat_lines(double)


def test_per_player_rate_limit(double, start_bridge):
    answerer = RecordingAnswerer()
    start_bridge(answerer, per_player_rate=600.0)
    double.say(1, "jarvis, first")
    double.say(1, "jarvis, second too soon")
    double.say(2, "jarvis, another player")
    assert double.wait_for(lambda: len(double.posts) >= 3)
    steve = sorted(replies_to(double.posts, "Steve"))   # the notice may come before or after the answer
    assert steve == ["[Jarvis] Steve: answer to first (source: Cow)",
                     '[Jarvis] Steve: one question every 600 s please, ask again in a moment '
                     '(not taken: "second too soon")']
    assert replies_to(double.posts, "Alex") == ["[Jarvis] Alex: answer to another player (source: Cow)"]
    assert answerer.questions == ["first", "another player"]


def pipeline_like(question: str) -> Answer:
    """The real pipeline's question check, then a canned answer."""
    return answer_for(check_question(question))


@pytest.mark.parametrize("message, expected", [
    ("jarvis", "ask me about Minecraft"),
    ("jarvis,    ", "ask me about Minecraft"),
    ("jarvis, " + "x" * 1000, "question too long"),
    ("jarvis, 🐄🐄🐄", "the question has no words"),
    ("jarvis, ¿qué sueltan las vacas? 🐄", "answer to ¿qué sueltan las vacas? 🐄"),
    ("jarvis, " + "why " * 240, "question too long"),
])
def test_odd_messages_get_a_sensible_reply(double, start_bridge, message, expected):
    start_bridge(AnswerFunction(pipeline_like))
    double.say(1, message)
    double.say(2, "jarvis, still alive?")
    assert double.wait_for(lambda: replies_to(double.posts, "Steve") and replies_to(double.posts, "Alex"))
    assert expected in replies_to(double.posts, "Steve")[0]
    assert all(len(p) <= 200 for p in double.posts)


def test_an_answerer_crash_does_not_stop_the_bridge(double, start_bridge):
    def flaky(question: str) -> Answer:
        if "crash" in question:
            raise RuntimeError("reader bug")
        return answer_for(question)

    start_bridge(AnswerFunction(flaky))
    double.say(1, "jarvis, crash please")
    double.say(1, "jarvis, and then?")
    assert double.wait_for(lambda: len(replies_to(double.posts, "Steve")) == 2)
    assert "something went wrong" in replies_to(double.posts, "Steve")[0]
    assert "answer to and then?" in replies_to(double.posts, "Steve")[1]


class HeldPool:
    """A QueuedAnswerer (what a worker pool is to the bridge): submit() returns at once; the test answers later."""

    def __init__(self) -> None:
        self.held: dict[str, tuple] = {}
        self.submitted = threading.Event()
        self.submitter = ""

    def submit(self, question, deliver, notify) -> None:
        self.submitter = threading.current_thread().name
        self.held[question.text] = (deliver, notify)
        self.submitted.set()

    @property
    def waiting(self) -> int:
        return len(self.held)

    def notify(self, text: str, notice: str) -> None:
        self.held[text][1](notice)

    def deliver(self, text: str, result) -> None:
        self.held.pop(text)[0](result)


def test_a_queued_answerer_answers_later_from_its_own_thread(double, start_bridge):
    pool = HeldPool()
    running = start_bridge(pool)
    double.say(1, "jarvis, first")
    double.say(2, "jarvis, second")
    double.say(1, "jarvis, third")
    assert double.wait_for(lambda: pool.waiting == 3)        # all three handed over, none answered yet
    pool.notify("second", "busy right now")
    assert double.wait_for(lambda: replies_to(double.posts, "Alex") == ["[Jarvis] Alex: busy right now"])
    assert running.bridge.stats.answered == 0                 # a notice is not an answer
    threading.Thread(target=pool.deliver, args=("second", answer_for("second"))).start()
    threading.Thread(target=pool.deliver, args=("first", RuntimeError("reader bug"))).start()
    threading.Thread(target=pool.deliver, args=("third", BridgeError("no worker answered in time"))).start()
    assert double.wait_for(lambda: running.bridge.stats.answered == 3)
    assert "[Jarvis] Alex: answer to second (source: Cow)" in double.posts
    steve = replies_to(double.posts, "Steve")
    assert any("something went wrong" in line for line in steve)
    assert any("no worker answered in time" in line for line in steve)
    assert pool.submitter == "jarvis-bridge-answering" and pool.waiting == 0


def test_stopping_counts_the_questions_still_in_a_pool(double, start_bridge):
    pool = HeldPool()
    running = start_bridge(pool, io_timeout=0.5)
    double.say(1, "jarvis, one")
    double.say(2, "jarvis, two")
    assert double.wait_for(lambda: pool.waiting == 2)
    running.stop()
    assert double.posts == ["[Jarvis] Going offline, 2 question(s) left unanswered, sorry."]


def test_unknown_entity_gets_an_unaddressed_reply(double, start_bridge):
    start_bridge(RecordingAnswerer())
    double.say(99, "jarvis, who am i")
    assert double.wait_for(lambda: double.posts)
    assert double.posts == ["[Jarvis] answer to who am i (source: Cow)"]


def test_a_player_who_left_gets_an_unaddressed_reply_without_a_reconnect(double, start_bridge):
    double.players[42] = Player("Leaver")
    running = start_bridge(RecordingAnswerer())
    with double._changed:                   # both before the next tick: upstream will not answer getName
        double.say(42, "jarvis, bye")
        double.leave(42)
    assert double.wait_for(lambda: double.posts)
    assert double.posts == ["[Jarvis] answer to bye (source: Cow)"]
    assert double.connections == 1 and running.bridge.stats.stalls == 0


def test_stops_by_itself_after_max_questions(double):
    settings = replace(FAST, mc_port=double.port)
    bridge = Bridge(settings, RecordingAnswerer(), max_questions=2)
    thread = threading.Thread(target=bridge.run, daemon=True)
    thread.start()
    assert bridge.wait_connected(20)
    assert double.wait_for(lambda: "events.chat.posts" in double.commands)
    double.say(1, "jarvis, one")
    double.say(2, "jarvis, two")
    thread.join(timeout=20)
    assert not thread.is_alive()
    assert bridge.stats.answered == 2
    assert double.posts[:2] == ["[Jarvis] Steve: answer to one (source: Cow)",
                                "[Jarvis] Alex: answer to two (source: Cow)"]


def test_stopping_with_questions_left_says_so_and_stops(double, start_bridge):
    answerer = RecordingAnswerer(hold=True)             # never finishes within the shutdown grace
    running = start_bridge(answerer, io_timeout=0.5)
    double.say(1, "jarvis, too slow")
    double.say(2, "jarvis, still queued")
    assert answerer.called.wait(20)
    assert double.wait_for(lambda: running.bridge.stats.accepted == 2)
    running.stop()                                      # joins the bridge thread (bounded)
    answerer.released.set()
    assert double.posts == ["[Jarvis] Going offline, 2 question(s) left unanswered, sorry."]


def test_stopping_during_a_lag_spike_stops_within_the_grace(double, start_bridge):
    running = start_bridge(RecordingAnswerer(), io_timeout=0.5)
    double.lag(30)
    time.sleep(0.2)                                     # the poller is waiting for a reply
    began = time.monotonic()
    running.stop()                                      # bounded join inside
    # It gave up the reply it was waiting for within the grace (io_timeout), not when the 30 s lag ended.
    assert time.monotonic() - began < 15
    assert not running.thread.is_alive() and running.error is None


def test_unreachable_server_is_a_user_error():
    with RaspberryJuiceDouble() as gone:
        port = gone.port                     # a port that was just free and is closed now
    settings = replace(FAST, mc_port=port, connect_attempts=2)
    with pytest.raises(ServerUnreachable) as info:
        Bridge(settings, RecordingAnswerer()).run()
    assert info.value.user_error and isinstance(info.value, BridgeError)
    assert f"127.0.0.1:{port}" in str(info.value) and "after 2 attempt(s)" in str(info.value)
    assert (info.value.endpoint.port, info.value.endpoint.transport, info.value.attempts) == (port, "api", 2)


def test_every_transport_offers_the_protocols():
    """Every registered transport, and the test relay, offers every member of the TransportKind protocol and its
    connections every call of the Transport protocol, with their parameters; the pipeline's Jarvis is an
    Answerer."""
    from jarvis.bridge import PLAYER_BOT, PLUGIN_API, TRANSPORTS, TransportKind
    from relay_transport import RELAY, RelayTransport

    assert set(TRANSPORTS) == {"api", "bot"} and TRANSPORTS["api"] is PLUGIN_API and TRANSPORTS["bot"] is PLAYER_BOT
    for protocol, implementations in ((Transport, (ChatClient, PlayerBot, RelayTransport)),
                                      (TransportKind, (*TRANSPORTS.values(), RELAY))):
        members = [name for name in vars(protocol) if not name.startswith("_")] + list(protocol.__annotations__)
        for implementation in implementations:
            for name in members:
                assert hasattr(implementation, name), f"{implementation} has no {name}"
                wanted = getattr(protocol, name, None)
                if callable(wanted):
                    offered = inspect.signature(getattr(implementation, name)).parameters
                    assert [p for p in offered if p != "self"] == [p for p in inspect.signature(wanted).parameters
                                                                   if p != "self"], f"{implementation}.{name}"
    assert list(inspect.signature(Jarvis.ask).parameters) == list(inspect.signature(Answerer.ask).parameters)


# --------------------------------------------------------------------------- what real servers do: Fail, lag, dialects


def test_fail_on_polls_loses_no_question(double, start_bridge):
    double.fail_polls_every = 3
    running = start_bridge(RecordingAnswerer())
    for i in range(6):
        double.say(1 + i % 2, f"jarvis, question {i}")
    assert double.wait_for(lambda: len(double.posts) == 6)
    assert sorted(p.rsplit(" (", 1)[0] for p in double.posts) == sorted(f"[Jarvis] {'Steve' if i % 2 == 0 else 'Alex'}: answer to question {i}" for i in range(6))
    assert running.bridge.stats.failed_polls >= 1 and running.bridge.stats.disconnects == 0


def test_fail_on_a_name_lookup_gives_an_unaddressed_reply(double, start_bridge):
    running = start_bridge(RecordingAnswerer())
    double.fail_next("entity.getName")
    double.say(2, "jarvis, who am i")
    assert double.wait_for(lambda: double.posts)
    assert double.posts == ["[Jarvis] answer to who am i (source: Cow)"]
    assert running.bridge.stats.disconnects == 0 and running.bridge.stats.fails >= 1


def test_garbage_instead_of_a_poll_reply_is_survived(double, start_bridge):
    running = start_bridge(RecordingAnswerer())
    double.reply_next("events.chat.posts", "\x00<html>not the protocol")
    assert double.wait_for(lambda: running.bridge.stats.garbage >= 1)
    double.say(1, "jarvis, still there?")
    assert double.wait_for(lambda: replies_to(double.posts, "Steve"))
    assert running.bridge.stats.disconnects == 0 and running.thread.is_alive()


def test_chat_typed_during_a_lag_spike_is_answered_after_it(double, start_bridge):
    running = start_bridge(RecordingAnswerer(), slow_after=0.5)
    double.lag(2.0)
    double.say(1, "jarvis, typed during the spike")
    assert double.lagging
    assert double.wait_for(lambda: replies_to(double.posts, "Steve"))
    stats = running.bridge.stats
    assert stats.stalls >= 1 and stats.disconnects == 0 and double.connections == 1
    assert_only_chat_lines(double)


@pytest.mark.parametrize("configured", ["auto", UPSTREAM, FORK, V2])
def test_dialect_configured_or_learned_and_corrected_when_wrong(double, start_bridge, configured):
    running = start_bridge(RecordingAnswerer(), dialect=configured)
    for i in range(3):
        double.say(1, f"jarvis, q{i}")
    assert double.wait_for(lambda: len(double.posts) == 3)
    assert double.posts == [f"[Jarvis] Steve: answer to q{i} (source: Cow)" for i in range(3)]
    assert running.bridge.client.dialect == double.dialect
    assert running.bridge.stats.disconnects == 0
    assert_only_chat_lines(double)


def test_unknown_dialect_is_a_user_error():
    with pytest.raises(BridgeError) as info:
        Bridge(replace(FAST, dialect="spigot"), RecordingAnswerer())
    assert info.value.user_error and "spigot" in str(info.value)


@pytest.mark.parametrize("dialect", [UPSTREAM, FORK])
def test_serve_answers_everything_through_fail_and_a_lag_spike(dialect, bundled_index, tmp_path):
    """The issue's measurement: `jarvis serve` against the faithful double, Fail on one chat poll
    in six, a lag spike. Every question is answered (those typed during the spike after it),
    serve is still running at the end, nothing but chat lines was sent; SIGTERM: exit 0."""
    lag = 12.0
    players = {10 + i: Player(f"Player{i}", f"\u00a77[Member] \u00a7fPlayer{i}") for i in range(8)}
    questions = ["what do cows drop?", "how do you craft tnt?", "where do witches spawn?", "what do cows drop?",
                 "how do you make an eye of ender?", "how long is a minecraft day?", "what do cows drop?",
                 "how much durability do shears have?"]
    with RaspberryJuiceDouble(players, dialect=dialect, fail_polls_every=6) as server:
        with jarvis_serve("--mc-host", "127.0.0.1", "--mc-port", str(server.port), "--index", str(bundled_index),
                          home=tmp_path) as served:
            assert server.wait_for(lambda: server.polled_on(2), timeout=120), "serve never polled"

            def ask(indices):
                for i in indices:
                    server.say(10 + i, f"jarvis, {questions[i]}")

            def answered(i):
                return replies_to(server.posts, f"Player{i}")

            ask(range(3))
            assert server.wait_for(lambda: all(answered(i) for i in range(3)), timeout=120)
            server.lag(lag)
            spike_end = time.monotonic() + lag
            ask(range(3, 6))                                   # typed during the spike
            assert server.lagging
            assert server.wait_for(lambda: not server.lagging, timeout=lag + 5)
            ask(range(6, 8))
            assert server.wait_for(lambda: all(answered(i) for i in range(8)), timeout=120), server.posts
            assert served.process.poll() is None               # still serving
            during = [server.post_times[server.posts.index(answered(i)[0])] for i in range(3, 6)]
            assert min(during) >= spike_end - 0.2              # answered after the spike, not lost
    stderr = served.stderr
    assert served.returncode == 0, stderr
    assert all(len(answered(i)) == 1 and "ask again" not in answered(i)[0] for i in range(8))
    assert "(source: Cow)" in answered(0)[0]
    stopped = dict(re.findall(r"(\w+)=(\S+)", re.search(r"event=stopped (.*)", stderr).group(1)))
    assert int(stopped["failed_polls"]) >= 1 and int(stopped["stalls"]) >= 1
    assert stopped["disconnects"] == "0" and stopped["errors"] == "0"
    assert f'event=dialect dialect="{dialect}"' in stderr
    assert server.failed and set(server.failed) == {"events.chat.posts", "auth"}   # auth: unknown to these plugins
    assert server.failed.count("auth") == server.auth_lines == server.connections
    assert_only_chat_lines(server)


def test_a_fork_taken_for_upstream_loses_no_reply_even_in_a_long_first_batch():
    with RaspberryJuiceDouble(PLAYERS, dialect=FORK) as server:
        client = ChatClient.connect(replace(FAST, mc_port=server.port, dialect=UPSTREAM))
        assert server.wait_for_clients(1)
        server.say(1, "jarvis, hello")
        # No events.clear first: three chat.post acknowledgements arrive where none were expected.
        assert client.post_and_poll(["[Jarvis] one", "[Jarvis] two", "[Jarvis] three"]) == [ChatPost(1, "jarvis, hello")]
        assert client.dialect == FORK
        server.say(2, "next")
        assert client.post_and_poll(["[Jarvis] four"]) == [ChatPost(2, "next")]
        assert client.player_name(2) == "Alex" and client.connection.stats.strays == 0
        client.close()


def test_a_bug_in_the_poller_is_logged_and_survived(double, start_bridge, monkeypatch):
    running = start_bridge(RecordingAnswerer())
    calls = []

    def broken_once(self, entity_id):
        calls.append(entity_id)
        if len(calls) == 1:
            raise ValueError("a bug")
        return "Steve"

    monkeypatch.setattr(ChatClient, "player_name", broken_once)
    double.say(1, "jarvis, survive this")
    assert double.wait_for(lambda: replies_to(double.posts, "Steve"))
    assert running.bridge.stats.errors == 1 and running.bridge.stats.reconnects == 1
    assert running.thread.is_alive()


# --------------------------------------------------------------------------- RaspberryJuice 2.x: the auth token


def test_nobody_online_a_name_lookup_neither_hangs_nor_desynchronizes(double, start_bridge):
    """upstream answers Fail, the fork Fail, 2.x nothing at all: the bridge expects each."""
    running = start_bridge(RecordingAnswerer())
    with double._changed:
        double.players.clear()                       # the asker left before the name lookup
        double.say(7, "jarvis, anyone here?")
    assert double.wait_for(lambda: double.posts)
    double.players[2] = Player("Alex")
    double.say(2, "jarvis, and now?")
    assert double.wait_for(lambda: len(double.posts) == 2)
    assert double.posts == ["[Jarvis] answer to anyone here? (source: Cow)",
                            "[Jarvis] Alex: answer to and now? (source: Cow)"]
    assert running.bridge.stats.disconnects == 0 and running.bridge.stats.stalls == 0


def test_token_server_six_of_six_answered_and_nothing_before_auth(start_bridge_on):
    with RaspberryJuiceDouble(PLAYERS, dialect=V2, token="s3cret-t0ken") as server:
        running = start_bridge_on(server, RecordingAnswerer(), mc_token="s3cret-t0ken")
        for i in range(6):
            server.say(1 + i % 2, f"jarvis, question {i}")
            if i == 2:
                assert server.wait_for(lambda: len(server.posts) == 3)
                server.drop_clients()                 # a reconnection authenticates again, first
                assert server.wait_for(lambda: len(server.session_lines) == 2
                                       and "events.chat.posts()" in server.session_lines[1])
        assert server.wait_for(lambda: sum("answer to question" in p for p in server.posts) == 6)
        assert running.bridge.stats.reconnects == 1 and running.bridge.client.dialect == V2
        assert all(lines[0] == "auth(s3cret-t0ken)" for lines in server.session_lines)
        assert server.auth_lines == server.connections == 2 and "auth" not in server.failed
        assert_only_chat_lines(server)


@pytest.mark.parametrize("token, needs", [("wrong", "refused the API token (the mc_token setting)"),
                                          ("", "set the mc_token setting")])
def test_a_refused_token_stops_the_bridge_with_one_attempt(token, needs):
    with RaspberryJuiceDouble(PLAYERS, dialect=V2, token="s3cret") as server:
        bridge = Bridge(replace(FAST, mc_port=server.port, mc_token=token), RecordingAnswerer())
        with pytest.raises(AuthRefused) as info:
            bridge.run()
        assert info.value.token_given == bool(token) and info.value.setting == "mc_token"
        assert needs in str(info.value) and "s3cret" not in str(info.value)
        assert info.value.user_error
        assert server.connections == 1 and server.auth_lines == 1    # auth() goes first, token or none
        assert server.polls == 0 and not server.posts        # nothing ever passed the plugin's gate


def test_a_token_changed_on_the_server_stops_the_bridge_at_the_reconnection(start_bridge_on):
    with RaspberryJuiceDouble(PLAYERS, dialect=V2, token="old") as server:
        running = start_bridge_on(server, RecordingAnswerer(), mc_token="old")
        server.token = "new"
        server.drop_clients()
        running.thread.join(timeout=20)
        assert not running.thread.is_alive() and isinstance(running.error, AuthRefused)
        running.error = None
        assert server.auth_lines == 2 and server.connections == 2   # one try on the new connection, no retry


def test_serve_checks_the_token_once_per_start(bundled_index, tmp_path, monkeypatch):
    """`jarvis serve` checks the API token once: when the transport is chosen, not again for the reachability
    check nor in the bridge (it was three times)."""
    import jarvis.bridge.connection as connection
    from jarvis.cli import main

    checked: list[str] = []
    real = connection.check_token
    monkeypatch.setattr(connection, "check_token", lambda token: (checked.append(token), real(token))[1])
    monkeypatch.setenv("JARVIS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("JARVIS_MC_TOKEN", "s3cret")
    with RaspberryJuiceDouble(PLAYERS, dialect=V2, token="s3cret") as server:
        done: list[int] = []
        thread = threading.Thread(target=lambda: done.append(main([
            "serve", "--mc-host", "127.0.0.1", "--mc-port", str(server.port), "--index", str(bundled_index),
            "--reader", "fallback:lexical", "--max-questions", "1", "--no-log", "-q"])), daemon=True)
        thread.start()
        assert server.wait_for(lambda: server.polled_on(2), timeout=120), "serve never polled"
        server.say(1, "jarvis, what do cows drop?")
        thread.join(timeout=120)
    assert done == [0] and server.posts and checked == ["s3cret"]


@pytest.mark.parametrize("dialect", [UPSTREAM, FORK])
def test_a_token_for_a_plugin_without_auth_is_not_used_and_says_so(dialect, start_bridge_on, caplog):
    with RaspberryJuiceDouble(PLAYERS, dialect=dialect) as server:
        with caplog.at_level("WARNING", logger="jarvis.bridge.connection"):
            running = start_bridge_on(server, RecordingAnswerer(), mc_token="unused")
            assert running.bridge.wait_connected(20)   # the session started: its warning is logged by now
        server.say(1, "jarvis, hello")
        assert server.wait_for(lambda: server.posts)
        assert server.posts == ["[Jarvis] Steve: answer to hello (source: Cow)"]
    assert "event=auth_unused" in caplog.text and "unused" not in caplog.text.replace("auth_unused", "")


@pytest.mark.parametrize("token", ["a,b", "line\nbreak", " padded"])
def test_a_token_the_plugin_could_never_accept_is_a_user_error(token):
    with pytest.raises(BridgeError) as info:
        Bridge(replace(FAST, mc_token=token), RecordingAnswerer())
    assert "API token" in str(info.value) and token not in str(info.value)


@pytest.mark.parametrize("token", ["", "wrong"])
def test_serve_with_a_refused_token_exits_non_zero_naming_the_token(token, tmp_path):
    """The issue's check: `jarvis serve` against 2.x with a token set: one clear line, exit != 0, <= 3 tries."""
    with RaspberryJuiceDouble(PLAYERS, dialect=V2, token="right") as server:
        env = {**os.environ, "JARVIS_HOME": str(tmp_path), "JARVIS_MC_TOKEN": token}
        result = subprocess.run([sys.executable, "-m", "jarvis", "serve", "--fallback", "--mc-host", "127.0.0.1",
                                 "--mc-port", str(server.port)], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jarvis serve: error: ")
    assert "right" not in result.stderr
    assert ("--mc-token or JARVIS_MC_TOKEN" if token else "set JARVIS_MC_TOKEN (or --mc-token)") in lines[0]
    assert server.auth_lines == 1 and server.connections == 1


def test_serve_says_without_v_that_it_is_connected_and_answers_players_however_they_address_it(bundled_index,
                                                                                               tmp_path):
    """`jarvis serve` without -v: one line when it connects (the server, the index, the reader), one when it loses
    the connection and one when it has it again; "hey jarvis ..." and "@jarvis ..." are answered, small talk
    that mentions Jarvis is not; the token is in no line."""
    players = {10 + i: Player(f"Player{i}") for i in range(4)}
    with RaspberryJuiceDouble(players, dialect=V2, token="classroom-42") as server:
        with jarvis_serve("--mc-host", "127.0.0.1", "--mc-port", str(server.port), "--index", str(bundled_index),
                          home=tmp_path, env={"JARVIS_MC_TOKEN": "classroom-42"},
                          verbose=False) as served:
            assert server.wait_for(lambda: server.polled_on(2), timeout=120), "serve never polled"
            server.say(10, "hey jarvis what do cows drop")
            server.say(11, "@jarvis where do blazes spawn?")
            server.say(12, "i think jarvis is cool")
            server.say(13, "what do pigs drop, jarvis?")
            assert server.wait_for(lambda: all(replies_to(server.posts, f"Player{i}") for i in (0, 1, 3)), timeout=120)
            connections = server.connections
            server.drop_clients()
            assert server.wait_for(lambda: server.connections > connections and server.polled_on(server.connections),
                                   timeout=60)
            time.sleep(1.0)
    assert served.returncode == 0, served.stderr
    assert "Leather" in replies_to(server.posts, "Player0")[0] and "Blaze" in replies_to(server.posts, "Player1")[0]
    assert replies_to(server.posts, "Player2") == []                       # small talk: no reply
    lines = served.stdout.splitlines()
    assert len(lines) == 3, served.stdout
    assert re.fullmatch(rf"jarvis serve: connected to the Minecraft server's chat API at 127\.0\.0\.1:{server.port} "
                        rf"\(the plugin API, v2\); answering from index {re.escape(str(bundled_index))}, reader \S+",
                        lines[0]), lines[0]
    assert lines[1].startswith(f"jarvis serve: lost the connection to the Minecraft server's chat API at "
                               f"127.0.0.1:{server.port} (") and lines[1].endswith("; trying again")
    assert re.fullmatch(r"jarvis serve: connected again to .* after \d+\.\d s", lines[2]), lines[2]
    assert "classroom-42" not in served.stdout + served.stderr


def test_serve_with_the_token_answers_six_of_six(bundled_index, tmp_path):
    questions = ["what do cows drop?", "how do you craft tnt?", "where do witches spawn?",
                 "how long is a minecraft day?", "what is a creeper?", "how do you make an eye of ender?"]
    players = {10 + i: Player(f"Player{i}", f"\u00a77[Member] \u00a7fPlayer{i}") for i in range(6)}
    with RaspberryJuiceDouble(players, dialect=V2, token="classroom-42") as server:
        with jarvis_serve("--mc-host", "127.0.0.1", "--mc-port", str(server.port), "--index", str(bundled_index),
                          home=tmp_path, env={"JARVIS_MC_TOKEN": "classroom-42"}) as served:
            assert server.wait_for(lambda: server.polled_on(2), timeout=120), "serve never polled"
            for i, question in enumerate(questions):
                server.say(10 + i, f"jarvis, {question}")
            assert server.wait_for(lambda: all(replies_to(server.posts, f"Player{i}") for i in range(6)), timeout=120)
    stderr = served.stderr
    assert served.returncode == 0, stderr
    assert all(len(replies_to(server.posts, f"Player{i}")) == 1 for i in range(6))
    # serve checked the server once before loading, then opened its own session: each began with auth
    assert [lines[0] for lines in server.session_lines] == ["auth(classroom-42)"] * server.connections
    assert server.failed == [] and "classroom-42" not in stderr
    assert 'event=dialect dialect="v2"' in stderr
    assert_only_chat_lines(server)
