"""Cold `jarvis ask`: the wall time of a new process answering one question, and where it goes.

    python bench/cold_start.py                                  # this checkout, bundled default index
    python bench/cold_start.py --index DIR                      # an index of your own (the real bed's, say)
    python bench/cold_start.py --before ../old-checkout         # the same runs on an older checkout, interleaved

Each run is a fresh `python -m jarvis ask QUESTION --no-log --json` (what a player's first question costs
after a restart, and what every terminal `jarvis ask` costs), after one untimed run that builds whatever is
built on first use and warms the OS file cache. With ``--before``, runs of the two checkouts alternate, so
both see the same machine load: compare their ratio rather than the absolute times on a busy machine.

Where the time goes is measured in-process by ``--profile``: the imports (python -X importtime, top
packages), then `jarvis ask`'s own timings (searcher open, reader load, the answer). Writes
docs/eval/cold-start.md. Asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "what do cows drop?"


def run_ask(checkout: Path, index: str | None, home: Path | None) -> tuple[float, dict]:
    args = [sys.executable, "-m", "jarvis", "ask", QUESTION, "--no-log", "--json"]
    if index:
        args += ["--index", index]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(checkout)}
    if home is not None:
        env["JARVIS_HOME"] = str(home)
    began = time.perf_counter()
    done = subprocess.run(args, cwd=checkout, env=env, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: jarvis ask failed: {done.stderr.strip().splitlines()[-1:]}")
    return wall, json.loads(done.stdout)


def import_profile(checkout: Path) -> list[tuple[str, float]]:
    """The slowest top-level packages imported by `jarvis ask`'s path (python -X importtime), in seconds."""
    code = ("import sys; sys.argv = ['jarvis', 'ask', '--help']\n"
            "from jarvis import cli\n"
            "from jarvis.assembly import assemble\n")
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=checkout, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(checkout)})
    totals: dict[str, float] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = (part.strip() for part in line.split(":", 1)[1].split("|"))
        if not cumulative.isdigit() or name.startswith(" "):
            continue
        top = name.strip().split(".")[0]
        if name.strip() == top:
            totals[top] = max(totals.get(top, 0.0), int(cumulative) / 1e6)
    return sorted(totals.items(), key=lambda kv: -kv[1])[:8]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", help="index to ask (default: the bundled default, built on first use)")
    parser.add_argument("--before", type=Path, help="an older checkout, run interleaved with this one")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per checkout (default: 5)")
    parser.add_argument("--home", type=Path, help="JARVIS_HOME: HOME/after and HOME/before (default: the environment's)")
    parser.add_argument("--label", default="bundled default", help="what the index is, for the report")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "eval" / "cold-start.md")
    args = parser.parse_args()

    checkouts = {"after": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    walls: dict[str, list[float]] = {name: [] for name in checkouts}
    answers: dict[str, dict] = {}
    first_use = {}
    # Each checkout its own JARVIS_HOME (an older one may keep its bundled index in another format).
    homes = {name: (args.home / name if args.home else None) for name in checkouts}
    for name, checkout in checkouts.items():
        first_use[name], answers[name] = run_ask(checkout, args.index, homes[name])
    for _ in range(args.runs):
        for name, checkout in checkouts.items():
            wall, answers[name] = run_ask(checkout, args.index, homes[name])
            walls[name].append(wall)
            print(f"{name}: {wall:.2f} s", flush=True)
    rows = []
    for name in checkouts:
        w = sorted(walls[name])
        timings = answers[name].get("timings", {})
        rows.append((name, args.label, statistics.median(w), w[0], w[-1], first_use[name], answers[name].get("reader"),
                     answers[name].get("seconds", timings)))
    lines = [f"# Cold `jarvis ask` ({args.label})", "",
             f"{args.runs} fresh processes per checkout, interleaved, after one untimed run (`{QUESTION}`).", "",
             "| checkout | index | wall p50 (s) | min | max | first run (s) | reader |",
             "|---|---|---|---|---|---|---|"]
    for name, label, p50, lo, hi, first, reader, _ in rows:
        lines.append(f"| {name} | {label} | {p50:.2f} | {lo:.2f} | {hi:.2f} | {first:.2f} | {reader} |")
    if len(rows) == 2:
        lines += ["", f"after / before (p50): **{rows[0][2] / rows[1][2]:.2f}**"]
    lines += ["", "Slowest imports on the ask path (cumulative seconds, `python -X importtime`):", ""]
    for name, checkout in checkouts.items():
        lines.append(f"- {name}: " + ", ".join(f"{pkg} {sec:.2f}" for pkg, sec in import_profile(checkout)))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        mode = "a" if args.out.exists() and args.out.stat().st_size and args.label not in args.out.read_text() else "w"
        with args.out.open(mode, encoding="utf-8") as out:
            out.write(("\n" if mode == "a" else "") + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
