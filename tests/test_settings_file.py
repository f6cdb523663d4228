"""`jarvis serve --config FILE`: TOML onto the settings dataclasses, `--check`, flags over the file,
secrets from the environment only, and SIGHUP reloading a running `jarvis serve` without a reconnection."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jarvis.config import Config
from jarvis.settings_file import SettingsError, load_settings_file
from jarvis_lab.raspberryjuice import Player, RaspberryJuiceDouble
from serve_process import jarvis_serve

GOOD = """\
index = "{index}"

[bridge]
mc_host = "mc.example.org"
mc_port = 4712
per_player_rate = 5      # an integer where a float is wanted

[log]
player_names = true

[bot]
host = "mc.example.org"
reply = "private"
messages_per_second = 0.5
public_patterns = ['^\\{{(?P<name>\\w+)\\}} (?P<message>.*)$']

[reader]
token_budget = 1024

[reader.passages]
bm25_weight = 2

[retrieval.page_kind_prior]
tutorial = 0.5
"""


def write(tmp_path: Path, text: str, name: str = "jarvis.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def jarvis(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jarvis", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_a_file_sets_every_table_by_the_settings_names(tmp_path):
    config, index = load_settings_file(write(tmp_path, GOOD.format(index=tmp_path)), Config())
    assert index == str(tmp_path)
    assert (config.bridge.mc_host, config.bridge.mc_port, config.bridge.per_player_rate) == ("mc.example.org", 4712, 5.0)
    assert config.log.player_names is True and config.log.enabled is True
    assert (config.bot.host, config.bot.reply, config.bot.messages_per_second) == ("mc.example.org", "private", 0.5)
    assert config.bot.public_patterns == (r"^\{(?P<name>\w+)\} (?P<message>.*)$",)
    assert config.reader.token_budget == 1024 and config.reader.passages.bm25_weight == 2.0
    assert config.retrieval.page_kind_prior["tutorial"] == 0.5 and config.retrieval.page_kind_prior["article"] == 1.0  # merged
    assert config.bridge.dialect == Config().bridge.dialect          # what the file does not say stays


def test_a_renamed_setting_is_still_read_under_its_old_name(tmp_path):
    """[retrieval.kind_prior] (before the page_kind names) sets page_kind_prior: old files keep working."""
    config, _ = load_settings_file(write(tmp_path, "[retrieval.kind_prior]\ntutorial = 0.25\n"), Config())
    assert config.retrieval.page_kind_prior["tutorial"] == 0.25 and config.retrieval.page_kind_prior["article"] == 1.0


@pytest.mark.parametrize("text, message", [
    ("[bridge]\nmc_prot = 4711\n", "[bridge] mc_prot: unknown setting (did you mean mc_port?)"),
    ("[bridge]\nmc_port = \"4711\"\n", "[bridge] mc_port: expected a whole number, got '4711'"),
    ("[bridge]\nmc_port = 70000\n", "[bridge] mc_port: 70000 is out of range (1-65535)"),
    ("[bridge]\nper_player_rate = -1\n", "[bridge] per_player_rate: -1.0 is out of range (0 or more)"),
    ("[bridge]\nmc_token = \"s3cret\"\n", "[bridge] mc_token: a secret is not kept in a settings file: set JARVIS_MC_TOKEN"),
    ("[bridge]\ndialect = \"spigot\"\n", "[bridge] dialect: 'spigot' is not one of auto, upstream, fork, v2"),
    ("[bot]\nreply = \"loud\"\n", "[bot] reply: 'loud' is not one of same, private, public"),
    ("[bot]\nmax_messages = 3\n", "[bot] max_messages: 3 is out of range (1-2)"),
    ("[bot]\npublic_patterns = \"^x$\"\n", "[bot] public_patterns: expected a list of strings"),
    ("[reader]\nquantize = \"yes\"\n", "[reader] quantize: expected true or false, got 'yes'"),
    ("[reader.passages]\nbm25 = 1\n", "[reader.passages] bm25: unknown setting (did you mean bm25_weight?)"),
    ("[log]\nplayer_name = true\n", "[log] player_name: unknown setting (did you mean player_names?)"),
    ("[log]\nmax_bytes = 5\n", "[log] max_bytes: 5 is out of range (10000 or more)"),
    ("[brige]\n", "brige: unknown table (did you mean bridge?)"),
    ("mc_host = \"x\"\n", "mc_host: unknown setting"),
    ("[bridge\n", "not valid TOML: "),
])
def test_a_bad_key_or_value_is_one_line_naming_it(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(SettingsError) as info:
        load_settings_file(path, Config())
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value)
    assert "\n" not in str(info.value) and "s3cret" not in str(info.value)
    result = jarvis("serve", "--config", str(path), "--check")
    assert result.returncode == 1 and result.stdout == ""
    # The CLI's line is the library's message, a secret's with the CLI's own way to give it.
    tail = " (or serve --mc-token)" if "mc_token = " in text else ""
    assert result.stderr.splitlines() == [f"jarvis serve: error: {info.value}{tail}"]


def test_check_says_what_serve_would_do_and_flags_override_the_file(tmp_path):
    path = write(tmp_path, GOOD.format(index=tmp_path))
    result = jarvis("serve", "--config", str(path), "--check")
    assert result.returncode == 0, result.stderr
    assert "player bot, Jarvis at mc.example.org:25565 (offline), replies private" in result.stdout
    result = jarvis("serve", "--config", str(path), "--check", "--bot", "other.host:25570", "--reply", "same",
                    "--bot-username", "WikiBot")
    assert "WikiBot at other.host:25570 (offline), replies same" in result.stdout
    api = write(tmp_path, "[bridge]\nmc_host = \"a.host\"\n", "api.toml")
    result = jarvis("serve", "--config", str(api), "--check", "--mc-port", "4800", "--mc-dialect", "v2")
    assert "plugin API at a.host:4800 (v2)" in result.stdout


def test_check_fails_on_what_serve_could_not_use(tmp_path):
    missing = write(tmp_path, f'index = "{tmp_path / "nope"}"\n')
    result = jarvis("serve", "--config", str(missing), "--check")
    assert result.returncode == 1 and "no such index directory" in result.stderr
    result = jarvis("serve", "--check", env={"JARVIS_MC_TOKEN": "a,b"})
    assert result.returncode == 1 and "the API token contains a comma" in result.stderr and "a,b" not in result.stderr
    bad = write(tmp_path, "[bot]\nhost = \"h\"\nwhisper_patterns = ['^(?P<name>\\w+ says']\n", "bad.toml")
    result = jarvis("serve", "--config", str(bad), "--check")
    assert result.returncode == 1 and "[bot] whisper_patterns: not a regular expression" in result.stderr
    result = jarvis("serve", "--check", "--reply", "private")
    assert result.returncode == 1 and "needs the player bot" in result.stderr


def test_sighup_reloads_what_it_can_without_reconnecting(bundled_index, tmp_path):
    """A running serve: per_player_rate changes at once, mc_port is logged as needing a restart, a
    broken file is refused and the settings in use are kept; the connection is never re-made."""
    players = {1: Player("Steve"), 2: Player("Alex")}
    with RaspberryJuiceDouble(players) as server:
        path = write(tmp_path, f"[bridge]\nmc_host = \"127.0.0.1\"\nmc_port = {server.port}\nper_player_rate = 600\n"
                               "poll_interval = 0.05\n")
        def said(*words: str):   # a reply may take two chat lines: look for what it says
            return lambda: all(word in " ".join(server.posts) for word in words)

        with jarvis_serve("--config", str(path), "--index", str(bundled_index), home=tmp_path / "home") as served:
            process = served.process
            assert server.wait_for(lambda: server.polled_on(2), timeout=120), "serve never polled"
            server.say(1, "jarvis, what do cows drop?")
            server.say(1, "jarvis, what is a creeper?")               # within 600 s: turned away
            assert server.wait_for(said("Cow", "one question every 600 s"), timeout=60), server.posts

            write(tmp_path, f"[bridge]\nmc_host = \"127.0.0.1\"\nmc_port = {server.port + 1}\nper_player_rate = 0\n"
                            "poll_interval = 0.05\n")
            process.send_signal(signal.SIGHUP)
            time.sleep(1.0)                                           # the poller's next turn
            server.say(1, "jarvis, where do blazes spawn?")           # the rate no longer stands in the way
            assert server.wait_for(said("Nether fortress"), timeout=60), server.posts

            write(tmp_path, "[bridge]\nper_player_rate = -5\n")
            process.send_signal(signal.SIGHUP)
            time.sleep(1.0)
            server.say(1, "jarvis, how do you craft tnt?")
            assert server.wait_for(said("TNT"), timeout=60), server.posts
            assert process.poll() is None and server.connections == 2   # serve's check, then its one session
    stderr = served.stderr
    assert served.returncode == 0, stderr
    assert 'event=reloaded changed="[\'bridge.per_player_rate\']"' in stderr
    assert re.search(r"event=reload_needs_restart settings=\"\['bridge.mc_port'\]\"", stderr)
    assert "event=reload_failed" in stderr and "per_player_rate: -5.0 is out of range" in stderr
    assert "event=disconnected" not in stderr and "reloads=1" in stderr


def test_a_reload_applies_what_it_can_and_names_what_needs_a_restart(caplog):
    from dataclasses import replace

    from jarvis.bridge import PLAYER_BOT, PLUGIN_API, Fresh, choose
    from jarvis.bridge.reload import reload_settings
    from jarvis.config import BotSettings, BridgeSettings

    bridge, bot = BridgeSettings(), BotSettings(host="mc.example.org")
    fresh = Fresh(replace(bridge, per_player_rate=9.0, mc_port=4800, max_line=150),
                  choose(PLAYER_BOT, replace(bot, burst=2, username="Other")), ("index",))
    with caplog.at_level("INFO", logger="jarvis.bridge"):
        reloaded = reload_settings(bridge, choose(PLAYER_BOT, bot), lambda: fresh)
    # The bridge's own per_player_rate; the plugin API's line width is not the bot's, so it waits for a restart.
    assert reloaded.bridge == replace(bridge, per_player_rate=9.0)        # the port stays until a restart
    assert reloaded.transport.settings == replace(bot, burst=2)           # so does the account
    assert sorted(reloaded.changed) == ["bot.burst", "bridge.per_player_rate"]
    restart = re.search(r"event=reload_needs_restart settings=(.*)", caplog.text).group(1)
    assert all(name in restart for name in ("index", "bridge.mc_port", "bridge.max_line", "bot.username"))
    with caplog.at_level("INFO", logger="jarvis.bridge"):
        on_the_api = reload_settings(bridge, choose(PLUGIN_API, bridge), lambda: fresh)
    assert on_the_api.transport.settings == on_the_api.bridge == replace(bridge, per_player_rate=9.0, max_line=150)
    assert on_the_api.transport.name == "api" and "the transport (api -> bot)" in caplog.text   # kept until a restart


def test_a_reload_that_cannot_be_applied_keeps_the_settings_in_use(caplog):
    from jarvis.bridge import PLAYER_BOT, PLUGIN_API, Fresh, ReloadSkipped, choose
    from jarvis.bridge.reload import reload_settings
    from jarvis.config import BotSettings, BridgeSettings
    from jarvis.errors import JarvisError

    def broken() -> Fresh:
        raise JarvisError("jarvis.toml: [bridge] per_player_rate: -5.0 is out of range")

    def no_file() -> Fresh:
        raise ReloadSkipped("no settings file to read (started without one)")

    def unusable() -> Fresh:   # as serve's reloader chooses the transport the file asks for: checked
        return Fresh(BridgeSettings(), choose(PLAYER_BOT, BotSettings(host="h", whisper_command="say")))

    api = choose(PLUGIN_API, BridgeSettings())
    with caplog.at_level("INFO", logger="jarvis.bridge"):
        assert reload_settings(BridgeSettings(), api, broken) is None
        assert reload_settings(BridgeSettings(), api, unusable) is None
        assert reload_settings(BridgeSettings(), api, no_file) is None
        assert reload_settings(BridgeSettings(), api, None) is None
    assert caplog.text.count("event=reload_failed") == 2 and "[bot] whisper_command" in caplog.text
    assert 'event=reload_skipped why="no settings file to read (started without one)"' in caplog.text
    assert "event=reloaded" not in caplog.text
