"""Logging, set up once by the CLI. Library code only calls ``logging.getLogger(__name__)``."""
from __future__ import annotations

import json
import logging
import sys


def setup_logging(verbose: int = 0, quiet: bool = False) -> None:
    """Configure the root logger: warnings by default, info with -v, debug with -vv."""
    if quiet:
        level = logging.ERROR
    elif verbose >= 2:
        level = logging.DEBUG
    elif verbose == 1:
        level = logging.INFO
    else:
        level = logging.WARNING
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
        force=True,
    )
    # Third-party libraries are chatty at INFO; keep them at WARNING unless debugging.
    for noisy in ("urllib3", "filelock", "transformers", "huggingface_hub", "matplotlib", "PIL"):
        logging.getLogger(noisy).setLevel(logging.DEBUG if verbose >= 2 else logging.WARNING)


def format_event(event: str, **fields: object) -> str:
    """One log line: ``event=name key=value ...``; strings JSON-quoted (a newline cannot split it). The bridge's,
    the worker pool's and the CLI's event lines all go through it."""
    parts = [f"event={event}"]
    for key, value in fields.items():
        if isinstance(value, float):
            value = round(value, 3)
        elif not isinstance(value, (int, bool)) and value is not None:
            value = json.dumps(str(value), ensure_ascii=False)
        parts.append(f"{key}={value}")
    return " ".join(parts)
