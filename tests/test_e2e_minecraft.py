"""End to end in a real Minecraft server: flying-squid + chat API plugin + `jarvis serve` + a mineflayer bot.

The plugin (mcserver/raspberryjuice.js) behaves like RaspberryJuice, its Paper fork or 2.x (with an
auth token): replies once per tick, Fail, lag spikes (SIGUSR2), decorated tab-list names. Every
dialect runs, with Fail on one chat poll in six and a 12 s lag spike during which a question is typed.
Needs Node.js and mcserver/node_modules (`make setup`); skipped with the reason otherwise.
"""
from __future__ import annotations

import re
import signal
import time

import pytest

from jarvis.demo import DemoError, LocalMinecraft, node_executable, run_bot, start_jarvis
from jarvis_lab.raspberryjuice import RaspberryJuiceDouble, raw_exchange

pytestmark = pytest.mark.e2e

LAG_SECONDS = 12


@pytest.fixture(scope="module")
def node():
    try:
        return node_executable()
    except DemoError as exc:
        pytest.skip(f"end-to-end Minecraft test needs Node.js and mcserver/node_modules: {exc}")


# Nobody online: upstream's entity.getName throws (no host player) -> Fail, like the fork's; 2.x
# sends nothing, and answers Fail to the malformed lines the others drop.
RAW = (b"no parenthesis\nevents.clearAll()\nchat.post(hi,,)\nchat.post(,)\nevents.clear()\nentity.getName(1)\n"
       b"world.getPlayerEntityIds()\nworld.getPlayerIds()\nevents.chat.posts(\nauth()\n")
TOKEN_RAW = b"world.getPlayerIds()\nauth(wrong)\nauth(tok)\n" + RAW
EXPECTED = {"upstream": [b"Fail"] * 6,
            "fork": [b"Fail", b"Success", b"Success", b"Success", b"Fail", b"Fail", b"Fail", b"Fail"],
            "v2": [b"Fail"] * 6 + [b"1"],
            "v2+token": [b"Fail", b"Fail", b"1"] + [b"Fail"] * 6 + [b"1"]}


def whole_reply(first: str, chat: list[str]) -> str:
    """A reply as the player reads it: its first line (addressed ``[Jarvis] Steve: …``) and the line that
    continues it, if any (``[Jarvis] …`` without an addressee; a reply is at most two lines)."""
    after = chat[chat.index(first) + 1:]
    more = next((line for line in after if line.startswith(PREFIX_LINE) and not line.startswith(PREFIX_LINE + "Steve:")),
                None)
    ends = first.endswith(")") and "(source: " in first
    return first if ends or more is None else first + " " + more.removeprefix(PREFIX_LINE)


PREFIX_LINE = "[Jarvis] "


@pytest.mark.parametrize("dialect", ["upstream", "fork", "v2", "v2+token"])
def test_our_plugin_and_the_double_reply_alike(node, dialect, tmp_path):
    """mcserver/raspberryjuice.js and wikis/raspberryjuice.py (jarvis_lab.raspberryjuice), same bytes in: the same replies."""
    name, _, token = dialect.partition("+")
    token = "tok" if token else ""
    raw = TOKEN_RAW if token else RAW
    server = LocalMinecraft(tmp_path, max_seconds=120, server_args=["--api-dialect", name, "--api-token", token]).start()
    try:
        plugin = raw_exchange(server.api_port, raw, len(EXPECTED[dialect]))
    finally:
        server.stop()
    with RaspberryJuiceDouble({}, dialect=name, token=token) as double:
        assert raw_exchange(double.port, raw, len(EXPECTED[dialect])) == EXPECTED[dialect]
    assert plugin == EXPECTED[dialect]


@pytest.mark.parametrize("dialect", ["upstream", "fork", "v2"])
def test_bot_asks_in_game_chat_through_fail_and_a_lag_spike(node, dialect, bundled_index, tmp_path):
    token = "e2e-token" if dialect == "v2" else ""   # 2.x with its auth-token set, as SECURITY.md asks
    server = LocalMinecraft(tmp_path, max_seconds=600, server_args=[
        "--api-dialect", dialect, "--api-fail-polls", "6", "--lag-seconds", str(LAG_SECONDS),
        "--api-list-prefix", "\u00a77[Member] \u00a7f", "--api-token", token]).start()
    try:
        jarvis = start_jarvis(server.api_port, tmp_path, fallback=True, index_dir=bundled_index,
                              env={"JARVIS_HOME": str(tmp_path / "home"), "JARVIS_MC_TOKEN": token})
        try:
            questions = ["jarvis, what do cows drop?", "jarvis, how do you craft tnt?", "jarvis: what do cows drop?"]
            events, lag_began, typed_during_lag = [], None, None
            for event in run_bot(server.port, questions, reply_timeout=120, max_seconds=300):
                events.append(event)
                if event["event"] == "reply" and lag_began is None:
                    server.child.process.send_signal(signal.SIGUSR2)   # the main thread stalls from now
                    lag_began = time.monotonic()
                elif event["event"] == "sent" and lag_began is not None and typed_during_lag is None:
                    typed_during_lag = time.monotonic() - lag_began < LAG_SECONDS
            running = jarvis.process.poll() is None
        finally:
            status = jarvis.stop()
        log = jarvis.log_text()
    finally:
        server.stop()
    chat = [e["text"] for e in events if e["event"] == "chat"]
    replies = [e["text"] for e in events if e["event"] == "reply"]
    assert "<Steve> jarvis, what do cows drop?" in chat
    assert typed_during_lag, "the second question was not typed during the lag spike"
    assert len(replies) == 3, (chat, jarvis.last_lines(10))
    for reply in replies:
        assert reply.startswith("[Jarvis] Steve: ") and len(reply) <= 200   # the tab-list prefix is gone
        assert reply in chat                                                   # the bot read it in its chat
    assert "leather" in whole_reply(replies[0], chat).lower() and whole_reply(replies[0], chat).endswith("(source: Cow)")
    # The crafting answer, read on its page (quality: bench/); a reply of two lines names its source at the end.
    assert whole_reply(replies[1], chat).endswith("(source: TNT)"), whole_reply(replies[1], chat)
    assert running, "jarvis serve stopped by itself"
    assert status == 0, jarvis.last_lines(10)                                  # SIGTERM: a clean exit
    stopped = dict(re.findall(r"(\w+)=(\S+)", re.search(r"event=stopped (.*)", log).group(1)))
    assert int(stopped["stalls"]) >= 1 and int(stopped["failed_polls"]) >= 1 and stopped["disconnects"] == "0" and stopped["errors"] == "0"
    assert f'event=dialect dialect="{dialect}"' in log
