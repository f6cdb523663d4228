"""The in-game demo: a local Minecraft server, Jarvis in its chat, a bot player asking questions.

    python -m jarvis.demo [--fallback] [--question "jarvis, ..."]... [--timeout S] [--stay]

Starts, each as a child process with its log in a temporary directory:
1. ``mcserver/server.js``: flying-squid (Minecraft Java 1.21.4, offline, flat world) with the
   RaspberryJuice-style chat API plugin, on free local ports;
2. ``jarvis serve``: the chat bridge with Jarvis's own reader (``--fallback``: the same, the offline
   reader's setting), on the default index of the bundled corpus, keeping no question log (the demo's
   bot is none of your players: ``jarvis report`` never counts it);
3. ``mcserver/bot.js``: a mineflayer player that asks the questions and leaves.
It prints the chat transcript as a player sees it (formatting codes such as ``&e`` not shown) and stops
everything, within ``--timeout``.
``--stay`` keeps the server and Jarvis running afterwards (game port 25565) so you can join
with a Minecraft Java 1.21.4 client; Ctrl-C stops them.

The helpers (``LocalMinecraft``, ``start_jarvis``, ``run_bot``) are also what the end-to-end
test and the bridge benchmark use.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from jarvis.config import PACKAGE_DIR
from jarvis.errors import JarvisError

MCSERVER_DIR = PACKAGE_DIR.parent / "mcserver"
MINECRAFT_VERSION = "1.21.4"   # server.js and bot.js speak this version
DEFAULT_QUESTIONS = (
    "jarvis, what do cows drop?",
    "Jarvis: where do blazes spawn?",
    "jarvis how do I make a crafting table?",
    "jarvis, what is a creeper?",
)
READY = re.compile(r"READY port=(\d+) api_port=(\d+)")
# Minecraft's formatting codes: § and its code character (the game's own), and the & codes servers and
# plugins write for them (flying-squid's "&eSteve joined the game."): & and a colour/format character, or
# Essentials' &#RRGGBB, where a word starts (so "Q&A" and "R&D" stay as written).
_SECTION_CODE = re.compile("\u00a7.?", re.DOTALL)
_AMPERSAND_CODES = re.compile(r"(^|(?<=\s))(?:&(?:#[0-9a-f]{6}|[0-9a-fk-orx]))+", re.IGNORECASE)
STOP_GRACE = 15.0   # seconds a child gets to exit after SIGTERM before it is killed


class DemoError(JarvisError):
    """The demo cannot run (Node.js or mcserver/node_modules missing, a part failed to start)."""


def node_executable() -> str:
    """The ``node`` binary, after checking that mcserver/node_modules is installed."""
    node = shutil.which("node")
    if node is None:
        raise DemoError("Node.js is not installed (the demo's Minecraft server needs Node.js 20+)")
    if not (MCSERVER_DIR / "server.js").is_file():
        raise DemoError(f"{MCSERVER_DIR} not found: run the demo from a checkout of the Jarvis repository")
    if not (MCSERVER_DIR / "node_modules" / "flying-squid").is_dir() or \
            not (MCSERVER_DIR / "node_modules" / "mineflayer").is_dir():
        raise DemoError("mcserver/node_modules is missing: run `make setup` (or `npm ci` in mcserver/)")
    return node


@dataclass
class Child:
    """A child process whose stdout and stderr go to a log file."""

    name: str
    process: subprocess.Popen
    log_path: Path

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""

    def wait_for_log(self, pattern: re.Pattern, timeout: float, start: int = 0) -> re.Match:
        """The first match of ``pattern`` in the log (from character ``start``); DemoError if the
        child exits or time runs out."""
        deadline = time.monotonic() + timeout
        while True:
            match = pattern.search(self.log_text(), start)
            if match:
                return match
            if self.process.poll() is not None:
                raise DemoError(f"{self.name} exited with status {self.process.returncode}: {self.last_lines()}")
            if time.monotonic() > deadline:
                raise DemoError(f"{self.name} was not ready within {timeout:g} s: {self.last_lines()}")
            time.sleep(0.1)

    def last_lines(self, n: int = 3) -> str:
        lines = [line.strip() for line in self.log_text().splitlines() if line.strip()]
        return " | ".join(lines[-n:]) or "(no output)"

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after STOP_GRACE seconds; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def _spawn(name: str, command: Sequence[str], log_dir: Path, env: dict | None = None, *,
           console: bool = False) -> Child:
    """A child with its output in ``log_dir/name.log``; ``console``: its stdin is a pipe (Child.process.stdin)."""
    log_path = log_dir / f"{name}.log"
    with open(log_path, "ab") as log_file:
        process = subprocess.Popen(list(command), stdout=log_file, stderr=subprocess.STDOUT,
                                   stdin=subprocess.PIPE if console else subprocess.DEVNULL, env=env)
    return Child(name, process, log_path)


@dataclass
class LocalMinecraft:
    """The flying-squid server with the chat API plugin, on free ports unless told otherwise."""

    log_dir: Path
    port: int = 0          # game port (0: a free one)
    api_port: int = 0      # chat API port (0: a free one)
    max_seconds: float = 0  # the server stops by itself after this long (0: never)
    server_args: Sequence[str] = ()   # more server.js options (e.g. --api-dialect fork)
    child: Child | None = field(default=None, init=False)

    def start(self, timeout: float = 60.0) -> "LocalMinecraft":
        node = node_executable()
        command = [node, str(MCSERVER_DIR / "server.js"), "--port", str(self.port), "--api-port", str(self.api_port),
                   "--max-seconds", str(int(self.max_seconds)), "--quiet", *self.server_args]
        log_path = self.log_dir / "mcserver.log"
        began = len(log_path.read_text(encoding="utf-8", errors="replace")) if log_path.exists() else 0
        self.child = _spawn("mcserver", command, self.log_dir, console=True)   # appended to across restarts
        try:
            match = self.child.wait_for_log(READY, timeout, start=began)
        except BaseException:   # a caller whose `server = LocalMinecraft(...).start()` failed has nothing to stop
            self.child.stop()
            raise
        self.port, self.api_port = int(match.group(1)), int(match.group(2))
        return self

    def stop(self) -> None:
        if self.child is not None:
            self.child.stop()

    def restart(self, timeout: float = 60.0) -> "LocalMinecraft":
        """Stop the server and start it again on the same ports (players are disconnected)."""
        self.stop()
        return self.start(timeout)

    def console(self, command: str) -> None:
        """A server console command, e.g. ``kick Jarvis`` (flying-squid reads them from stdin)."""
        self.child.process.stdin.write(command.encode("utf-8") + b"\n")
        self.child.process.stdin.flush()

    def vanilla_events(self, event: str | None = None) -> list[dict]:
        """What mcserver/vanilla_chat.js recorded: chat messages, commands and kicks, oldest first."""
        found = []
        for line in self.child.log_text().splitlines():
            at = line.find("VANILLA {")   # flying-squid's console may put cursor codes before it
            if at >= 0:
                try:
                    record = json.loads(line[at + len("VANILLA "):])
                except json.JSONDecodeError:
                    continue
                if event is None or record.get("event") == event:
                    found.append(record)
        return found


def start_jarvis(api_port: int | None, log_dir: Path, *, fallback: bool, index_dir: Path | None = None,
                 extra_args: Sequence[str] = (), env: dict | None = None, timeout: float = 300.0) -> Child:
    """``jarvis serve`` against the local server (its chat API; None: ``extra_args`` say how, e.g.
    ``--bot 127.0.0.1:PORT``); returns once it is polling the chat or has joined."""
    command = [sys.executable, "-m", "jarvis", "serve", "-v"]
    if api_port is not None:
        command += ["--mc-host", "127.0.0.1", "--mc-port", str(api_port)]
    if fallback:
        command.append("--fallback")
    if index_dir is not None:
        command += ["--index", str(index_dir)]
    command += list(extra_args)
    child = _spawn("jarvis-serve", command, log_dir, env={**os.environ, **(env or {})})
    try:
        child.wait_for_log(re.compile(r"event=connected"), timeout)
    except BaseException:   # the caller never gets the child, so it cannot stop it (Ctrl-C included)
        child.stop()
        raise
    return child


def run_bot(game_port: int, questions: Sequence[str], *, players: int = 1, username: str = "Steve",
            interval: float = 3.5, reply_timeout: float = 30.0, max_seconds: float = 120.0,
            spread: bool = False, jarvis: str = "", listen: bool = False) -> Iterator[dict]:
    """Run bot.js and yield its events (dicts, see mcserver/bot.js) as they happen.

    ``jarvis``: Jarvis is the player of that name (the player-bot transport), not the chat API;
    ``listen``: ask nothing, stay ``max_seconds`` and report the chat."""
    command = [node_executable(), str(MCSERVER_DIR / "bot.js"), "--port", str(game_port), "--json",
               "--username", username, "--players", str(players), "--interval", str(interval),
               "--reply-timeout", str(reply_timeout), "--max-seconds", str(int(max_seconds))]
    if spread:
        command.append("--spread")
    if jarvis:
        command += ["--jarvis", jarvis]
    if listen:
        command.append("--listen")
    for question in questions:
        command += ["--question", question]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               stdin=subprocess.DEVNULL, encoding="utf-8", errors="replace")
    try:
        for line in process.stdout:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue
        try:
            process.wait(timeout=max_seconds + 10)
        except subprocess.TimeoutExpired:
            raise DemoError(f"the bot closed its output but did not exit within {max_seconds:g} s") from None
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def as_seen(text: str) -> str:
    """A chat message as a player reads it: Minecraft's § and & formatting codes are not shown."""
    return _AMPERSAND_CODES.sub("", _SECTION_CODE.sub("", text))


def transcript_line(event: dict) -> str | None:
    """What the demo prints for one of bot.js's events (None: nothing)."""
    if event["event"] == "chat":
        return f"  {as_seen(event['text'])}"
    if event["event"] == "no_reply":
        return f"  -- no reply to: {event['question']}"
    if event["event"] == "error":
        return f"  -- bot: {event['message']}"
    return None


def _reader_used(jarvis_log: str) -> str:
    readers = re.findall(r'event=answered .*?reader="([^"]*)"', jarvis_log)
    return readers[-1] if readers else "unknown"


def run_demo(questions: Sequence[str], *, fallback: bool, timeout: float, stay: bool) -> int:
    node_executable()   # fail fast, before anything starts
    deadline = time.monotonic() + timeout
    with tempfile.TemporaryDirectory(prefix="jarvis-demo-") as tmp:
        log_dir = Path(tmp)
        server = LocalMinecraft(log_dir, port=25565 if stay else 0, max_seconds=0 if stay else timeout + 30)
        jarvis: Child | None = None
        try:
            print(f"starting the Minecraft {MINECRAFT_VERSION} server (flying-squid, offline) ...", flush=True)
            server.start(timeout=max(5.0, deadline - time.monotonic()))
            print(f"  game port {server.port}, chat API port {server.api_port}", flush=True)
            print("starting jarvis serve (loads the index and the reader) ...", flush=True)
            # --no-log: the demo's bot is no player of yours (jarvis report would count it)
            jarvis = start_jarvis(server.api_port, log_dir, fallback=fallback, extra_args=("--no-log",),
                                  timeout=max(5.0, deadline - time.monotonic()))
            print("a bot player joins and asks; the chat as a player sees it:\n", flush=True)
            answered = asked = 0
            latencies = []
            for event in run_bot(server.port, questions, max_seconds=max(10.0, deadline - time.monotonic())):
                line = transcript_line(event)
                if line is not None:
                    print(line, flush=True)
                if event["event"] == "sent":
                    asked += 1
                elif event["event"] == "reply":
                    answered += 1
                    latencies.append(event["latency_ms"])
            reader = _reader_used(jarvis.log_text())
            print(f"\n{answered} of {asked} questions answered in game chat (reader: {reader}; "
                  f"question-to-reply {', '.join(f'{ms} ms' for ms in latencies) or '-'})")
            if stay:
                print(f"\nstill running: join localhost:{server.port} with Minecraft Java {MINECRAFT_VERSION} "
                      "(Multiplayer > Direct Connection) and type `jarvis, what do cows drop?`. Ctrl-C stops.")
                while server.child.process.poll() is None and jarvis.process.poll() is None:
                    time.sleep(0.5)
            return 0 if asked and answered == asked else 1
        except KeyboardInterrupt:
            return 130
        finally:
            if jarvis is not None and jarvis.stop() not in (0, None):
                print(f"jarvis serve exited with status {jarvis.process.returncode}: {jarvis.last_lines()}",
                      file=sys.stderr)
            server.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jarvis.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--question", action="append", metavar="TEXT",
                        help="a chat message for the bot to send (repeatable; default: four questions)")
    parser.add_argument("--fallback", action="store_true", help="use the offline fallback reader, no QA model")
    parser.add_argument("--timeout", type=float, default=300.0, metavar="S",
                        help="stop everything after this long (default: %(default)s)")
    parser.add_argument("--stay", action="store_true",
                        help=f"keep the server (port 25565) and Jarvis running to join with Minecraft {MINECRAFT_VERSION}")
    args = parser.parse_args(argv)
    try:
        return run_demo(args.question or DEFAULT_QUESTIONS, fallback=args.fallback, timeout=args.timeout,
                        stay=args.stay)
    except JarvisError as exc:
        print(f"jarvis demo: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
