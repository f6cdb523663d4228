"""A real redis-server for the worker-pool tests: started on a free port of 127.0.0.1 in a folder of its own,
stopped at the end; restartable on the same port and folder (its append-only file keeps the data).

    with RedisServer(tmp_path, password="pw") as server:
        server.url                      # redis://:pw@127.0.0.1:PORT/0
        server.restart(down_for=1.0)    # SIGTERM (Redis writes its AOF and exits), then the same again

The binary is Debian's ``redis-server`` (``make setup`` installs it when missing) or any on PATH.
:func:`require_redis_server` skips a test where there is none, except on CI (``CI=true``), where a
missing server is a failure: the pool's tests never silently skip there.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest


def require_redis_server() -> str:
    binary = shutil.which("redis-server")
    if binary is None:
        message = "no redis-server on PATH (Debian: apt-get install redis-server; `make setup` installs it)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message + ": the worker-pool tests must run on CI")
        pytest.skip(message)
    return binary


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    def __init__(self, folder: Path, *, password: str = "", appendonly: bool = True) -> None:
        self.binary = require_redis_server()
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.password = password
        self.appendonly = appendonly
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.restarts = 0

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self) -> "RedisServer":
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder),
                "--save", "", "--appendonly", "yes" if self.appendonly else "no", "--appendfsync", "everysec",
                "--logfile", str(self.folder / "redis.log"), "--daemonize", "no"]
        if self.password:
            args += ["--requirepass", self.password]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited: {(self.folder / 'redis.log').read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    reply = sock.recv(64)
                if reply.startswith((b"+PONG", b"-NOAUTH")):
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("redis-server did not answer within 20 s")

    def stop(self) -> None:
        """As an admin stops it: SIGTERM (Redis flushes its append-only file and exits)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def restart(self, down_for: float = 0.5) -> None:
        self.stop()
        time.sleep(down_for)
        self.start()
        self.restarts += 1

    def client(self):
        import redis

        return redis.Redis.from_url(self.url, decode_responses=True)

    def __enter__(self) -> "RedisServer":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
