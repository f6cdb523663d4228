"""The demo's transcript is what a player sees: Minecraft's formatting codes are not printed (jarvis/demo.py)."""
from __future__ import annotations

import pytest

from jarvis.demo import as_seen, transcript_line


@pytest.mark.parametrize("raw, seen", [
    ("&eSteve joined the game.", "Steve joined the game."),              # flying-squid's join message
    ("\u00a7eSteve left the game.", "Steve left the game."),
    ("&l&6Welcome &rto &#ff8800Blockhaven", "Welcome to Blockhaven"),
    ("\u00a7x\u00a7f\u00a7f\u00a78\u00a78\u00a70\u00a70Orange", "Orange"),
    ("[Jarvis] Steve: Q&A, R&D and salt & pepper (source: Cow)",         # an & inside words is text
     "[Jarvis] Steve: Q&A, R&D and salt & pepper (source: Cow)"),
    ("<Steve> jarvis, what do cows drop?", "<Steve> jarvis, what do cows drop?"),
])
def test_formatting_codes_are_not_shown(raw, seen):
    assert as_seen(raw) == seen


def test_the_transcript_prints_chat_as_seen_and_counts_nothing_else():
    assert transcript_line({"t": 1.0, "event": "chat", "player": "Steve", "text": "&eSteve joined the game."}) == \
        "  Steve joined the game."
    assert transcript_line({"t": 2.0, "event": "sent", "player": "Steve", "text": "jarvis, hi"}) is None
    assert transcript_line({"t": 9.0, "event": "no_reply", "player": "Steve", "question": "jarvis, hi"}) == \
        "  -- no reply to: jarvis, hi"


@pytest.mark.e2e
def test_the_demo_writes_nothing_into_the_question_log(tmp_path):
    """`make demo` on an admin's machine: its bot player is none of theirs, so `jarvis report` must not count it."""
    import os
    import subprocess
    import sys

    from jarvis.demo import DemoError, node_executable

    try:
        node_executable()
    except DemoError as exc:
        pytest.skip(f"the demo needs Node.js and mcserver/node_modules: {exc}")
    home = tmp_path / "home"
    result = subprocess.run([sys.executable, "-m", "jarvis.demo", "--fallback", "--timeout", "400",
                             "--question", "jarvis, what do cows drop?"], capture_output=True, text=True,
                            timeout=480, env={**os.environ, "JARVIS_HOME": str(home)})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "1 of 1 questions answered" in result.stdout
    assert not (home / "log" / "questions.jsonl").exists()
