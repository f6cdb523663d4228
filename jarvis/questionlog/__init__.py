"""The question log and the admin's report on it.

    log = open_question_log(config)                    # None when logging is off
    entry = log.record(question, answer, reply=shown, player="Steve", latency=0.41)   # shown: what the chat showed
    log.mark(entry, "wrong", player="Steve")           # "jarvis, wrong" in chat
    report = build_report(read_log(config.question_log_path), since=None)

log.py writes (one JSON line per question or feedback, salted player hashes, rotation by size, a
lock shared by threads and processes); usage_report.py reads the log and its rotated files back and
summarises them (`jarvis report`). The format: docs/data-formats.md.
"""
from __future__ import annotations

from jarvis.config import Config
from jarvis.questionlog.log import FEEDBACK_KINDS, QuestionLog, answer_facts, rotated_paths
from jarvis.questionlog.usage_report import LogContents, ReportError, UsageReport, build_report, parse_since, read_log


def open_question_log(config: Config) -> QuestionLog | None:
    """The question log as the configuration says (None when it is off); the salt is made on first use."""
    if not config.log.enabled:
        return None
    salt = b""
    if not config.log.player_names:
        from jarvis.privacy import load_salt

        salt = load_salt(config.home)
    return QuestionLog(config.question_log_path, config.log, salt)


__all__ = ["FEEDBACK_KINDS", "LogContents", "QuestionLog", "ReportError", "UsageReport", "answer_facts",
           "build_report", "open_question_log", "parse_since", "read_log", "rotated_paths"]
