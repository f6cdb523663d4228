"""The question log: one JSON line per question asked and per feedback given, appended, rotated by size.

    $JARVIS_HOME/log/questions.jsonl     (questions.jsonl.1 .. .N: older, rotated)

    {"type": "question", "id": "9c1e…", "time": "2026-11-25T18:02:11.204Z", "origin": "serve",
     "player": "3fa1b2c4d5e6f708", "question": "what do cows drop?", "answer": "0-2 Leather and 1-3 Raw beef",
     "reply": "0-2 Leather and 1-3 Raw beef (source: Cow)", "found": true, "confidence": 0.84,
     "abstained": false, "page": "Cow", "site": "Minecraft Wiki", "rule": "wiki", "threshold": 0.4368,
     "latency_s": 0.412}
    {"type": "feedback", "id": "9c1e…", "time": "…", "feedback": "wrong", "player": "3fa1b2c4d5e6f708"}

``reply`` is what the player was shown: for a question served in the chat, the posted lines less their
"[Jarvis] " prefix and the "NAME: " that addresses the player, joined by one space (the bridge's
``ReplyLayout.shown``); for `jarvis ask`, the terminal's reply.

A feedback line names the question line it marks by ``id``: the log is only ever appended to, so a
mark never rewrites a line (and survives a rotation between the two). ``player`` is a salted hash
(jarvis/privacy.py), or the name when the admin asked for names, or null (`jarvis ask`).

Every write holds a lock (a thread lock and an OS file lock beside the log, so that several
processes — `jarvis serve` and a `jarvis ask` — can share it), rotates if the line would take the
file past ``max_bytes``, then opens the file in append mode, writes the one line and closes it: a
process never keeps writing into a file another one rotated away. A log that cannot be written
(disk full, no permission) is a warning, never a failed answer.
"""
from __future__ import annotations

import json
import logging
import os
import threading
import uuid
from datetime import datetime, timezone
from pathlib import Path

from filelock import FileLock, Timeout

from jarvis.config import LogSettings
from jarvis.privacy import player_hash

log = logging.getLogger(__name__)

LOCK_TIMEOUT = 30.0          # seconds to wait for another process's write (they take microseconds)
FEEDBACK_KINDS = ("wrong", "thanks")


def utc_now() -> str:
    """The log's time stamps: UTC, ISO 8601, milliseconds, 'Z'."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def rotated_paths(path: Path, backups: int) -> list[Path]:
    """The log's files, oldest first: questions.jsonl.N .. .1, questions.jsonl."""
    return [path.with_name(f"{path.name}.{i}") for i in range(backups, 0, -1)] + [path]


def answer_facts(answer, reply: str) -> dict:
    """What the log keeps of an answer (a jarvis.answer.Answer): the span, ``reply`` (what the player was shown:
    the chat's lines, or the terminal's reply), how sure Jarvis was and whether it stated the answer, the page
    stated or pointed to, its site, and the answer policy's rule and threshold that judged it."""
    return {"answer": answer.text, "reply": reply, "found": answer.found,
            "confidence": round(float(answer.confidence), 4), "abstained": bool(answer.abstained),
            "page": answer.title, "site": answer.site, "rule": answer.rule,
            "threshold": None if answer.threshold is None else round(float(answer.threshold), 4)}


class QuestionLog:
    """Appends question and feedback lines to the log (see the module docstring). Thread-safe."""

    def __init__(self, path: str | os.PathLike, settings: LogSettings | None = None, salt: bytes = b"") -> None:
        self.settings = settings or LogSettings()
        if not self.settings.player_names and not salt:
            raise ValueError("a salt is needed to hash player names (jarvis.privacy.load_salt)")
        self.path = Path(path)
        self._salt = salt
        self._lock = threading.Lock()
        self._file_lock = FileLock(str(self.path.with_name(self.path.name + ".lock")), timeout=LOCK_TIMEOUT)
        self.written = 0
        self.failed = 0

    def player(self, name: str | None) -> str | None:
        """The player as the log records them: a salted hash, or the name if the admin asked for names."""
        if not name:
            return None
        return name if self.settings.player_names else player_hash(name, self._salt)

    def record(self, question: str, answer=None, *, reply: str = "", player: str | None = None,
               latency: float | None = None, origin: str = "serve", error: str = "") -> str:
        """Log one question with ``reply``, what the player was shown, and its answer (or the error that
        stopped it: ``reply`` is then the error, unless the shown text is given); returns the line's id."""
        if answer is not None and not reply:
            raise ValueError("an answer is logged with the reply the player was shown")
        entry_id = uuid.uuid4().hex[:16]
        facts = answer_facts(answer, reply) if answer is not None else {
            "answer": "", "reply": reply or error, "found": False, "confidence": None, "abstained": None, "page": "",
            "site": "", "rule": "", "threshold": None}
        record = {"type": "question", "id": entry_id, "time": utc_now(), "origin": origin,
                  "player": self.player(player), "question": question, **facts,
                  "latency_s": None if latency is None else round(latency, 3)}
        if error:
            record["error"] = error
        self._append(record)
        return entry_id

    def mark(self, entry_id: str, feedback: str, *, player: str | None = None) -> None:
        """Mark a logged answer: feedback is "wrong" or "thanks"."""
        if feedback not in FEEDBACK_KINDS:
            raise ValueError(f"feedback must be one of {FEEDBACK_KINDS}, got {feedback!r}")
        self._append({"type": "feedback", "id": entry_id, "time": utc_now(), "feedback": feedback,
                      "player": self.player(player)})

    # ------------------------------------------------------------------ writing

    def _append(self, record: dict) -> None:
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        try:
            with self._lock, self._file_lock:
                self._rotate_if_full(len(line))
                with self.path.open("ab") as fh:
                    fh.write(line)
            self.written += 1
        except (OSError, Timeout) as exc:
            self.failed += 1
            log.warning("question log %s: line not written (%s)", self.path, exc)

    def _rotate_if_full(self, incoming: int) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size == 0 or size + incoming <= self.settings.max_bytes:
            return
        files = rotated_paths(self.path, self.settings.backups)
        if self.settings.backups == 0:
            self.path.unlink()
            return
        files[0].unlink(missing_ok=True)          # the oldest goes
        for older, newer in zip(files, files[1:]):
            if newer.exists():
                os.replace(newer, older)
        log.info("question log rotated: %s -> %s", self.path, files[-2])
