"""End to end in a real Minecraft server: flying-squid + chat API plugin + `jarvis serve` + a mineflayer bot.

Needs Node.js and mcserver/node_modules (`make setup`); skipped with the reason otherwise.
"""
from __future__ import annotations

import pytest

from jarvis.demo import DemoError, LocalMinecraft, node_executable, run_bot, start_jarvis

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def node():
    try:
        return node_executable()
    except DemoError as exc:
        pytest.skip(f"end-to-end Minecraft test needs Node.js and mcserver/node_modules: {exc}")


@pytest.fixture
def minecraft(node, tmp_path):
    server = LocalMinecraft(tmp_path, max_seconds=600).start()
    yield server
    server.stop()


def test_bot_asks_in_game_chat_and_reads_jarvis_answer(minecraft, bundled_index, tmp_path):
    jarvis = start_jarvis(minecraft.api_port, tmp_path, fallback=True, index_dir=bundled_index,
                          env={"JARVIS_HOME": str(tmp_path / "home")})
    try:
        events = list(run_bot(minecraft.port, ["jarvis, what do cows drop?"], reply_timeout=120, max_seconds=180))
    finally:
        status = jarvis.stop()
    chat = [e["text"] for e in events if e["event"] == "chat"]
    replies = [e["text"] for e in events if e["event"] == "reply"]
    assert "<Steve> jarvis, what do cows drop?" in chat, chat
    assert len(replies) == 1, (chat, jarvis.last_lines(10))
    reply = replies[0]
    assert reply.startswith("[Jarvis] Steve: ") and len(reply) <= 200
    assert "leather" in reply.lower() and "raw beef" in reply.lower()
    assert reply.endswith("(source: Cow)")
    assert reply in chat                       # the bot read it in its own chat
    assert status == 0, jarvis.last_lines(10)  # SIGTERM: a clean exit
    assert "event=stopped" in jarvis.log_text()
