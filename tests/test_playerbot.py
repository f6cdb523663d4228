"""The player-bot transport's rules, without a server: which chat line is whose question, where a
reply goes and how it is cut, how fast messages go, and what the Node client refuses to send.

The transport end to end (a real mineflayer client on the vanilla-strict test server) is in
test_e2e_playerbot.py.
"""
from __future__ import annotations

import json
import shutil
import socket
import subprocess
from dataclasses import replace

import pytest
from hypothesis import given, settings as hyp_settings, strategies as st

from jarvis.bridge import (PLAYER_BOT, PLUGIN_API, BridgeError, ChatPost, OutLine, Question, ReplyLayout, SettingError,
                           check_bot, choose)
from jarvis.bridge.player import (CLIENT_DIR, CLIENT_SCRIPT, ChatRules, Echo, SendPacer, account_name,
                                  neutralise_command, utf16_len)
from jarvis.config import BotSettings, BridgeSettings

BOT = BotSettings(host="mc.example.org")


def rules(**overrides) -> ChatRules:
    return ChatRules(replace(BOT, **overrides), "Jarvis")


def player_chat(chat_type, sender, content, target=None, username=None):
    return {"event": "chat", "source": "player", "chat_type": chat_type, "sender": sender,
            "sender_username": username, "target": target, "content": content, "text": None}


def system(text, translate=None, args=()):
    return {"event": "chat", "source": "system", "text": text, "translate": translate, "args": list(args)}


# --------------------------------------------------------------------------- reading the chat


@pytest.mark.parametrize("event, expected", [
    # vanilla 1.19+: player_chat packets carry the type and the sender
    (player_chat("minecraft:chat", "Steve", "jarvis, what do cows drop?"),
     ChatPost(-1, "jarvis, what do cows drop?", player="Steve")),
    (player_chat("minecraft:msg_command_incoming", "Steve", "how do I make tnt"),
     ChatPost(-1, "how do I make tnt", player="Steve", private=True)),
    (player_chat("minecraft:msg_command_outgoing", "Jarvis", "an answer", target="Steve"), Echo("Steve", "an answer")),
    (player_chat("minecraft:chat", "Jarvis", "Steve: an answer"), Echo(None, "Steve: an answer")),
    (player_chat("minecraft:emote_command", "Steve", "waves"), None),
    (player_chat("minecraft:say_command", "Steve", "jarvis, hi"), None),
    # a nickname shown, the account's name from the tab list
    (player_chat("minecraft:chat", "~Stevie", "jarvis, hi", username="Steve"), ChatPost(-1, "jarvis, hi", player="Steve")),
    (player_chat("minecraft:chat", "[Admin] Steve", "jarvis, hi"), ChatPost(-1, "jarvis, hi", player="Steve")),
    # Paper with a chat renderer: the rendered line under a type of its own, read as text
    ({**player_chat("paper:raw", "Steve", "[Admin] Steve: jarvis, hi"), "text": "[Admin] Steve: jarvis, hi"},
     ChatPost(-1, "jarvis, hi", player="Steve")),
    # 1.18 and older: translated text components
    (system("<Steve> jarvis, hi", "chat.type.text", ["Steve", "jarvis, hi"]), ChatPost(-1, "jarvis, hi", player="Steve")),
    (system("Steve whispers to you: hi", "commands.message.display.incoming", ["Steve", "hi"]),
     ChatPost(-1, "hi", player="Steve", private=True)),
    # chat plugins: system text through the patterns
    (system("[Admin] <Steve> jarvis, hi"), ChatPost(-1, "jarvis, hi", player="Steve")),
    (system("<[VIP] Steve> jarvis, hi"), ChatPost(-1, "jarvis, hi", player="Steve")),
    (system("[Member] Steve: jarvis, hi"), ChatPost(-1, "jarvis, hi", player="Steve")),
    (system("Steve » jarvis, hi"), ChatPost(-1, "jarvis, hi", player="Steve")),
    (system("[Steve -> me] what is a creeper"), ChatPost(-1, "what is a creeper", player="Steve", private=True)),
    (system("[Steve -> Jarvis] what is a creeper"), ChatPost(-1, "what is a creeper", player="Steve", private=True)),
    (system("Steve whispers to you: hi"), ChatPost(-1, "hi", player="Steve", private=True)),
    (system("<Jarvis> Steve: an answer"), Echo(None, "Steve: an answer")),
    # not a player's message
    (system("Steve joined the game"), None),
    (system("&eSteve joined the game."), None),
    (system("Server restarting in 5 minutes"), None),
])
def test_chat_lines_are_read_as_the_server_means_them(event, expected):
    assert rules().read(event) == expected


@pytest.mark.parametrize("typed", [
    "Steve whispers to you: jarvis, give me op",
    "[Steve -> me] jarvis, op me",
    "You whisper to Steve: x",
])
def test_a_player_cannot_fake_a_whisper_in_public_chat(typed):
    """What a player types arrives inside their own public message, never as a line of its own."""
    for event in (player_chat("minecraft:chat", "Eve", typed), system(f"<Eve> {typed}"), system(f"[Member] Eve: {typed}")):
        found = rules().read(event)
        assert found == ChatPost(-1, typed, player="Eve")


def test_patterns_are_configurable_and_checked():
    custom = rules(public_patterns=(r"^\{(?P<name>\w+)\} (?P<message>.*)$",), whisper_patterns=())
    assert custom.read(system("{Steve} jarvis, hi")) == ChatPost(-1, "jarvis, hi", player="Steve")
    assert custom.read(system("<Steve> jarvis, hi")) is None
    with pytest.raises(BridgeError, match=r"\[bot\] public_patterns: .*needs the groups"):
        check_bot(replace(BOT, public_patterns=(r"^(\w+): (.*)$",)))
    with pytest.raises(BridgeError, match=r"\[bot\] whisper_patterns: not a regular expression"):
        check_bot(replace(BOT, whisper_patterns=(r"^(?P<name>\w+",)))


@pytest.mark.parametrize("shown, name", [("Steve", "Steve"), ("[Admin] Steve", "Steve"), ("\u00a7c[Admin] \u00a7fSteve", "Steve"),
                                         ("~Stevie the Great", "Great"), ("~~", None), ("", None)])
def test_account_names(shown, name):
    assert account_name(shown) == name


# --------------------------------------------------------------------------- what is sent


def test_a_public_message_never_runs_a_command():
    assert neutralise_command("/op Eve") == "\u2215op Eve"
    assert neutralise_command("//wand") == "\u2215/wand"
    assert neutralise_command("Steve: /op is a command") == "Steve: /op is a command"


def layout(reply="same", **bot) -> ReplyLayout:
    return ReplyLayout(BridgeSettings(), choose(PLAYER_BOT, replace(BOT, reply=reply, **bot)))


def question(private: bool, player: str | None = "Steve") -> Question:
    return Question(-1, player, "q", 0.0, private=private)


@pytest.mark.parametrize("mode, private, to", [
    ("same", False, None), ("same", True, "Steve"),
    ("private", False, "Steve"), ("private", True, "Steve"),
    ("public", False, None), ("public", True, None),
])
def test_reply_modes(mode, private, to):
    lines = layout(mode).lines_for(question(private), "0-2 leather", source="Cow")
    assert [line.to for line in lines] == [to]
    assert lines[0].text == ("0-2 leather (source: Cow)" if to else "Steve: 0-2 leather (source: Cow)")


@pytest.mark.parametrize("mode, private", [("same", False), ("same", True), ("public", True)])
def test_what_a_reply_showed_is_its_lines_less_the_addressee(mode, private):
    """What the question log keeps: the lines the bot sent, less "Steve: " in public, joined by one space."""
    text = "0-2 leather and 1-3 raw beef, " * 12
    bot = layout(mode)
    lines = bot.lines_for(question(private), text, source="Cow")
    assert len(lines) == 2
    assert bot.shown(question(private), lines) == " ".join(line.text for line in lines).removeprefix(
        "" if lines[0].to else "Steve: ")


def test_a_player_whose_name_is_unknown_is_answered_in_public():
    assert layout("private").lines_for(question(True, player=None), "x")[0].to is None


def test_the_plugin_api_only_broadcasts_with_its_prefix():
    api = ReplyLayout(BridgeSettings(), choose(PLUGIN_API, BridgeSettings()))
    lines = api.lines_for(question(True), "0-2 leather", source="Cow")
    assert [(line.text, line.to) for line in lines] == [("[Jarvis] Steve: 0-2 leather (source: Cow)", None)]


@given(st.text(min_size=1, max_size=700), st.sampled_from(["same", "private"]), st.booleans(),
       st.sampled_from(["msg", "tell", "w"]), st.from_regex(r"[A-Za-z0-9_]{1,16}", fullmatch=True))
@hyp_settings(max_examples=300, deadline=None)
def test_every_message_fits_vanillas_limits(text, mode, private, command, player):
    """At most 2 messages, each at most 256 UTF-16 units with its /msg NAME, no line break, never a command."""
    lines = layout(mode, whisper_command=command).lines_for(question(private, player), text, source="Cow")
    assert 1 <= len(lines) <= 2
    for line in lines:
        sent = f"/{command} {line.to} {line.text}" if line.to else neutralise_command(line.text)
        assert utf16_len(sent) <= 256
        assert "\n" not in sent and "\r" not in sent and "\u00a7" not in sent
        assert line.to is not None or not sent.startswith("/")


def test_emoji_count_twice_as_minecraft_counts_them():
    lines = layout().lines_for(question(False), "🐄" * 300)
    assert all(utf16_len(line.text) <= 256 for line in lines)
    assert utf16_len("🐄") == 2


def test_the_pacer_stays_under_vanillas_spam_kick():
    """Vanilla kicks when 20 a message minus 1 a tick reaches 200; the default pace never gets near."""
    now = [0.0]
    pacer = SendPacer(BotSettings().messages_per_second, BotSettings().burst, clock=lambda: now[0])
    counter, sent, kicked = 0.0, 0, False
    for tick in range(20 * 600):               # ten minutes of ticks, a message wanted at every one
        now[0] = tick / 20
        counter = max(0.0, counter - 1)
        if pacer.take():
            sent += 1
            counter += 20
            kicked |= counter >= 200
    assert not kicked and 0.75 * 600 <= sent <= 0.8 * 600 + BotSettings().burst


def test_the_pacer_can_be_retuned():
    now = [0.0]
    pacer = SendPacer(1.0, 2, clock=lambda: now[0])
    assert [pacer.take() for _ in range(3)] == [True, True, False]
    pacer.retune(0.1, 1)
    now[0] = 5.0
    assert [pacer.take() for _ in range(2)] == [False, False]   # 5 s at 0.1 a second: half a message
    now[0] = 10.0
    assert pacer.take()


@pytest.mark.parametrize("bad, setting", [
    ({"reply": "loud"}, "reply"), ({"whisper_command": "say"}, "whisper_command"),
    ({"username": "Jarvis the Bot"}, "username"), ({"max_message": 300}, "max_message"),
])
def test_bot_settings_that_cannot_work_are_named(bad, setting):
    with pytest.raises(SettingError, match=rf"\[bot\] {setting}:") as info:
        check_bot(replace(BOT, **bad))
    assert (info.value.section, info.value.setting) == ("bot", setting)


# --------------------------------------------------------------------------- the Node client's own refusals


@pytest.mark.skipif(shutil.which("node") is None or not (CLIENT_DIR / "node_modules" / "mineflayer").is_dir(),
                    reason="needs Node.js and jarvis/bridge/playerbot/node_modules (make setup)")
def test_the_node_client_refuses_what_python_would_never_send():
    """A second line of defence: the client refuses commands, line breaks, overlong and misaddressed
    messages itself (here before it has joined: a server that accepts and says nothing)."""
    requests = [
        {"op": "say", "id": 1, "text": "/op Eve"},
        {"op": "say", "id": 2, "text": "two\nlines"},
        {"op": "say", "id": 3, "text": "x" * 257},
        {"op": "whisper", "id": 4, "to": "Steve; /op Eve", "text": "hi"},
        {"op": "whisper", "id": 5, "to": "Steve", "text": "hi", "command": "op"},
        {"op": "whisper", "id": 6, "to": "Steve", "text": "x" * 250},
        {"op": "say", "id": 7, "text": "\u00a7kobfuscated"},
        {"op": "say", "id": 8, "text": "fine, but not joined yet"},
    ]
    stdin = "".join(json.dumps(r) + "\n" for r in requests)
    with socket.create_server(("127.0.0.1", 0)) as silent:
        options = {"host": "127.0.0.1", "port": silent.getsockname()[1], "version": "1.21.4"}
        result = subprocess.run(["node", str(CLIENT_SCRIPT), json.dumps(options)], input=stdin,
                                capture_output=True, text=True, timeout=60)
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    refused = {e["id"]: e["why"] for e in events if e["event"] == "refused"}
    assert refused == {
        1: "a public message that would run a command",
        2: "a line break, control character or section sign",
        3: "longer than 256 characters",
        4: "not a player name",
        5: "not a whisper command: op",
        6: "longer than 256 characters",
        7: "a line break, control character or section sign",
        8: "not joined yet",
    }
    assert not any(e["event"] == "sent" for e in events)


def test_the_pacer_holds_while_the_server_lags_and_earns_nothing_meanwhile():
    now = [0.0]
    pacer = SendPacer(1.0, 2, clock=lambda: now[0])
    assert pacer.take()                       # one token left
    pacer.pause()
    now[0] = 30.0                             # a 30 s freeze: no tick on the server, no refill here
    assert not pacer.take()
    pacer.resume()
    assert pacer.take() and not pacer.take()  # the token left before the freeze, nothing more


# --------------------------------------------------------------------------- the transport's bookkeeping


def out_line(text: str, to: str | None = None, player: str | None = None) -> OutLine:
    return OutLine(text, Question(-1, player, "q", 0.0) if player else None, to=to)


@pytest.fixture
def quiet_bot():
    """A PlayerBot whose client events are fed by the test, as client.js would print them, over a
    child process that only reads its stdin (what the transport writes there is checked)."""
    import queue as queue_module
    import sys
    from collections import deque

    from jarvis.bridge.player import PlayerBot
    from jarvis.bridge.transport import WireStats

    child = subprocess.Popen([sys.executable, "-c", "import sys; [None for _ in sys.stdin]"], stdin=subprocess.PIPE,
                             text=True)
    events = queue_module.Queue()
    bot = PlayerBot(child, BOT, "Jarvis", stats=WireStats(), events=events, stderr=deque(), online={"Steve"})
    yield bot, events
    child.kill()
    child.wait()


def test_chat_read_just_before_the_connection_ends_is_kept(quiet_bot):
    from jarvis.bridge.transport import ConnectionLost

    bot, events = quiet_bot
    events.put({"event": "chat", **player_chat("minecraft:chat", "Steve", "jarvis, typed in the freeze")})
    events.put({"event": "kicked", "reason": "KeepAliveTimeout", "translate": None})
    events.put({"event": "end", "reason": "KeepAliveTimeout"})
    assert bot.exchange([]) == [ChatPost(-1, "jarvis, typed in the freeze", player="Steve")]
    with pytest.raises(ConnectionLost, match="kicked: KeepAliveTimeout"):
        bot.exchange([])
    assert bot.stats.kicks == 1 and bot.stats.spam_kicks == 0


def test_an_answer_waits_for_its_asker_who_left(quiet_bot):
    bot, events = quiet_bot
    bot.seen.update({"steve", "alex"})
    for_alex = out_line("Alex: an answer", player="Alex")            # Alex was seen, is not here now
    for_steve = out_line("Steve: an answer", player="Steve")
    for_nick = out_line("~Nick: an answer", player="Nick")            # never in the tab list: not held
    bot.exchange([for_alex, for_steve, for_nick])
    assert [f.line for f in bot._sent_ids.values()] == [for_steve, for_nick]
    events.put({"event": "player_joined", "name": "Alex"})
    bot.exchange([])
    assert [f.line for f in bot._sent_ids.values()] == [for_steve, for_nick, for_alex]


def test_a_line_is_delivered_by_its_echo_not_while_the_server_lags(quiet_bot):
    bot, events = quiet_bot
    public, whisper = out_line("Steve: 0-2 leather"), out_line("0-2 leather", to="Steve")
    bot.exchange([public, whisper])
    for flight_id in list(bot._sent_ids):
        events.put({"event": "sent", "id": flight_id})
    events.put({"event": "stalled"})
    bot.exchange([])
    for flight in bot._written.values():
        flight.sent_at -= 60                                   # long ago: the time alone would confirm it
    bot.exchange([])
    assert not public.delivered and not whisper.delivered      # a stalled server handled nothing
    events.put({"event": "chat", **player_chat("minecraft:msg_command_outgoing", "Jarvis", "0-2 leather",
                                               target="Steve")})
    bot.exchange([])
    assert whisper.delivered and not public.delivered
