"""A local wiki (`jarvis sample-wiki` or `jarvis realbed-wiki`) in its own process, for the benchmarks."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def start_local_wiki(command: str) -> tuple[subprocess.Popen, str]:
    """`jarvis COMMAND --port 0` in its own process; returns it and its base URL (exits when it cannot start)."""
    process = subprocess.Popen([sys.executable, "-m", "jarvis", command, "--port", "0"], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = process.stdout.readline()
    match = re.search(r"(http://[\d.]+:\d+)", line)
    if not match:
        process.kill()
        sys.exit(f"`jarvis {command}` did not start: {line.strip()}")
    return process, match.group(1)
