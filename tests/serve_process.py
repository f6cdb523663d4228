"""`jarvis serve` as a child process, for the tests that run it against a test server.

    with jarvis_serve("--mc-port", str(port), home=tmp_path) as served:
        ...                                  # served.process is running: talk to it through the server
    assert served.returncode == 0, served.stderr

Leaving the block stops it as an admin would (SIGTERM, then a kill if it hangs) and keeps its log.
"""
from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator


@dataclass
class Served:
    process: subprocess.Popen
    stderr: str = ""                 # serve's log (-v), once it has stopped
    returncode: int | None = None
    stdout: str = ""                 # what it says to the admin (the connection's lines), once it has stopped


@contextmanager
def jarvis_serve(*args: str, home: Path, env: dict[str, str] | None = None, verbose: bool = True) -> Iterator[Served]:
    """``jarvis serve -v --fallback ARGS`` (without -v unless ``verbose``) with JARVIS_HOME=home (and ``env``),
    stopped on leaving."""
    process = subprocess.Popen([sys.executable, "-m", "jarvis", "serve", *(["-v"] if verbose else []), "--fallback",
                                *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "JARVIS_HOME": str(home), **(env or {})})
    served = Served(process)
    try:
        yield served
    finally:
        if process.poll() is None:
            process.terminate()
        try:
            served.stdout, served.stderr = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            served.stdout, served.stderr = process.communicate()
        served.returncode = process.returncode
