"""Transports behind one interface: a third one (tests/relay_transport.py, a chat relay over TCP) is added with
its module and one registry line, and the bridge serves on it as on the plugin API and the player bot."""
from __future__ import annotations

import ast
import json
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from jarvis.answer import Answer
from jarvis.bridge import (TRANSPORTS, AnswerFunction, Bridge, BridgeError, SettingError, choose, pick)
from jarvis.config import BotSettings, BridgeSettings, LogSettings
from jarvis.questionlog import QuestionLog
from relay_transport import RELAY, RelayServer, RelaySettings

FAST = BridgeSettings(poll_interval=0.02, per_player_rate=0.0, io_timeout=2.0, reconnect_min_delay=0.05,
                      reconnect_max_delay=0.2, connect_attempts=3)
BRIDGE_PACKAGE = Path(__file__).resolve().parent.parent / "jarvis" / "bridge"


@dataclass(frozen=True)
class Tables:
    """The settings tables a configuration holds (as jarvis.config.Config does), with the relay's."""

    bridge: BridgeSettings = FAST
    bot: BotSettings = field(default_factory=BotSettings)
    relay: RelaySettings = field(default_factory=RelaySettings)


@pytest.fixture
def registered(monkeypatch):
    """The registry line of the relay (in the product: one more entry of TRANSPORTS)."""
    monkeypatch.setitem(TRANSPORTS, RELAY.name, RELAY)


def long_answer(question: str) -> Answer:
    return Answer(question=question, text="0-2 Leather and 1-3 Raw beef, " * 6 + "and sometimes a saddle", score=1.0,
                  title="Cow", reader="test", seconds=0.1, confidence=0.9, abstained=False, site="Minecraft Wiki")


def test_the_registry_picks_the_transport_the_settings_ask_for(registered):
    tables = Tables()
    assert pick(tables).name == "api" and pick(tables).settings is FAST             # none asked for: the default
    assert pick(replace(tables, relay=RelaySettings("127.0.0.1", 1))).name == "relay"
    assert pick(replace(tables, bot=BotSettings(host="mc.example.org"))).name == "bot"
    with pytest.raises(BridgeError, match=r"2 transports \(bot, relay\)"):
        pick(replace(tables, bot=BotSettings(host="h"), relay=RelaySettings("127.0.0.1", 1)))
    with pytest.raises(SettingError, match=r"\[relay\] max_line"):                    # checked once, when chosen
        pick(replace(tables, relay=RelaySettings("127.0.0.1", 1, max_line=5)))
    with pytest.raises(TypeError, match="takes RelaySettings"):
        choose(RELAY, BotSettings())


def test_the_bridge_serves_on_a_third_transport_as_on_the_others(registered, tmp_path):
    """Its width and line count, its direct messages, the question log: all as the relay's kind declares."""
    log = QuestionLog(tmp_path / "q.jsonl", LogSettings(player_names=True))
    with RelayServer() as relay:
        settings = RelaySettings("127.0.0.1", relay.port, max_line=80, max_lines=3)
        transport = pick(Tables(relay=settings))
        transport.kind.check_reachable(FAST, transport.settings)
        bridge = Bridge(FAST, AnswerFunction(long_answer), transport=transport, question_log=log)
        thread = threading.Thread(target=bridge.run, daemon=True)
        thread.start()
        try:
            assert bridge.wait_connected(20)
            relay.say("Steve", "jarvis, what do cows drop?")
            assert relay.wait_for(lambda: len(relay.posts) >= 2)
            relay.say("Alex", "what do pigs drop", dm=True)        # a direct message needs no "jarvis"
            assert relay.wait_for(lambda: any(to == "Alex" for to, _ in relay.posts))
            assert relay.wait_for(lambda: bridge.stats.answered == 2)
        finally:
            bridge.stop()
            thread.join(timeout=20)
    public = [text for to, text in relay.posts if to is None]
    private = [text for to, text in relay.posts if to == "Alex"]
    assert public[0].startswith("Steve: ") and not private[0].startswith("Alex: ")
    assert all(len(text) <= 80 for _, text in relay.posts) and 2 <= len(public) <= 3 and 2 <= len(private) <= 3
    assert public[-1].endswith("(source: Cow)") and private[-1].endswith("(source: Cow)")
    logged = [json.loads(line) for line in log.path.read_text(encoding="utf-8").splitlines()]
    replies = {line["question"]: line["reply"] for line in logged}
    assert replies == {"what do cows drop?": " ".join(public).removeprefix("Steve: "),
                       "what do pigs drop": " ".join(private)}


def test_the_bridges_own_modules_know_no_transport_by_name():
    """Only a transport's own module (connection.py, player.py) and the registry (transports.py) name it: the
    service, the layout, reloading, answering and the rest branch on no "api" or "bot" and import neither's
    classes, so a new transport touches none of them."""
    own = {"connection.py", "player.py", "transports.py", "__init__.py", "wire.py"}
    names = {"ChatClient", "PlayerBot", "BotSettings", "PLUGIN_API", "PLAYER_BOT", "whisper_overhead", "check_bot",
             "check_token", "api_endpoint", "bot_endpoint"}
    for path in sorted(BRIDGE_PACKAGE.glob("*.py")):
        if path.name in own:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        strings = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)}
        used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        used |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
        assert not {"api", "bot"} & strings, path.name
        assert not names & used, (path.name, names & used)
