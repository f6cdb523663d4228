"""OS signals of a long-running command (jarvis serve, jarvis worker): one path for both. (Not the confidence
model's signals of an answer: jarvis/confidence/signals.py.)

SIGINT and SIGTERM stop it cleanly (the answer in hand may finish; a second SIGINT interrupts at once);
SIGHUP asks it to read its settings file again. The handler touches plain attributes only: nothing in it
may take a lock the interrupted main thread could hold (an Event's, logging's).
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, Protocol


class Stoppable(Protocol):
    """What a signal acts on: the chat bridge (jarvis.bridge.service.Bridge), the pool's worker."""

    @property
    def stopping(self) -> bool: ...

    def stop(self) -> None: ...

    def request_reload(self) -> None: ...


@contextmanager
def handle_signals(target: Stoppable, noted: Callable[[str], None] | None = None) -> Iterator[None]:
    """While inside: SIGINT/SIGTERM call ``target.stop()`` (a second SIGINT raises KeyboardInterrupt), SIGHUP
    ``target.request_reload()``; ``noted(name)`` hears of each signal (to log it later, outside the handler).
    Off the main thread (where Python cannot take signals) nothing is installed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum, frame):  # noqa: ARG001 - signal API
        if target.stopping and signum == signal.SIGINT:
            raise KeyboardInterrupt
        if signum == getattr(signal, "SIGHUP", None):
            target.request_reload()
        else:
            target.stop()
        if noted is not None:
            noted(signal.Signals(signum).name)

    wanted = [signal.SIGINT, signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
    previous = {sig: signal.signal(sig, handle) for sig in wanted}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
