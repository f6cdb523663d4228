"""What the two soak benchmarks share (bench_soak.py: one bridge; bench_network_soak.py: bridges and a worker
pool): the players' pace, when a question counts as lost, and a process's memory."""
from __future__ import annotations

from pathlib import Path

THINK_SECONDS = (3.5, 15.0)      # between an answer and the player's next question (serve's rate limit: 3 s)
GIVE_UP_SECONDS = 300.0          # a question unanswered this long counts as lost


def rss_mb(pid: int) -> float:
    """The resident memory of process ``pid`` in MB (Linux /proc); NaN once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")
