"""The settings the desk shows and may change, read from and written to the settings file (TOML).

Editable here, because a wrong value cannot lock anyone out and each is checked by the settings file's own
checks (jarvis/settings_file.py) before the file is replaced: ``[reader] answer_threshold`` (0-1, empty: the
reader's own) and ``[bot] reply`` (same | private | public). The file is rewritten with tomlkit, keeping its
comments and every other setting as written, then replaced atomically.

Shown, not editable: the wikis and the guide the index is built from (rebuilding from other wikis is a crawl
and an index build: `jarvis crawl`, `jarvis index`), and every other setting (the server's address, the
tokens and passwords: secrets never go in the file; changes that need a restart of serve).
"""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from jarvis.config import REPLY_MODES, Config
from jarvis.errors import JarvisError

EDITABLE = {("reader", "answer_threshold"): "float-or-empty", ("bot", "reply"): REPLY_MODES}
# When a running serve sees the change: bot.reply on SIGHUP (jarvis/bridge/reload.py); the reader's threshold at
# its next start; `jarvis ask` and new workers at once.
TAKES_EFFECT = {("reader", "answer_threshold"): "jarvis ask at once; serve and the workers at their next start",
                ("bot", "reply"): "serve on SIGHUP (kill -HUP), no restart"}


class SettingsEditError(JarvisError):
    """A change the settings file's checks refuse, or no file to write."""


@dataclass
class SettingView:
    table: str
    key: str
    value: str              # as the file says ("" when it sets none)
    effective: str          # what applies (the default when the file sets none)
    choices: tuple = ()
    takes_effect: str = ""


def current(path: Path | None, config: Config) -> list[SettingView]:
    """The editable settings: what the file says, and what applies."""
    data = _load(path) if path is not None else {}
    threshold = data.get("reader", {}).get("answer_threshold")
    reply = data.get("bot", {}).get("reply")
    return [
        SettingView("reader", "answer_threshold", "" if threshold is None else f"{threshold:g}",
                    "the reader's own" if config.reader.answer_threshold is None
                    else f"{config.reader.answer_threshold:g}", takes_effect=TAKES_EFFECT["reader", "answer_threshold"]),
        SettingView("bot", "reply", reply or "", config.bot.reply, REPLY_MODES, TAKES_EFFECT["bot", "reply"]),
    ]


def update(path: Path | None, changes: dict[tuple[str, str], str]) -> None:
    """Apply ``changes`` ({(table, key): text}; "" removes the key) to the file, checked, atomically."""
    if path is None:
        raise SettingsEditError("no settings file: start the desk with a settings file to change settings here")
    import tomlkit

    from jarvis.settings_file import SettingsError, load_settings_file

    for where in changes:
        if where not in EDITABLE:
            raise SettingsEditError(f"[{where[0]}] {where[1]} is not editable here")
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    try:
        document = tomlkit.parse(text)
    except Exception as exc:  # noqa: BLE001 - tomlkit's errors have no common base
        raise SettingsEditError(f"{path}: not valid TOML: {exc}") from None
    for (table, key), raw in changes.items():
        raw = raw.strip()
        section = document.get(table)
        if not raw:
            if section is not None and key in section:
                del section[key]
            continue
        value: object = raw
        if EDITABLE[table, key] == "float-or-empty":
            try:
                value = float(raw)
            except ValueError:
                raise SettingsEditError(f"[{table}] {key}: not a number: {raw!r}") from None
        if section is None:
            section = tomlkit.table()
            document[table] = section
        section[key] = value
    new_text = tomlkit.dumps(document)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:6]}.tmp")
    tmp.write_text(new_text, encoding="utf-8")
    try:
        load_settings_file(tmp, Config())          # the file's own checks, on what would be written
    except SettingsError as exc:
        tmp.unlink(missing_ok=True)
        raise SettingsEditError(str(exc).replace(str(tmp), str(path))) from None
    os.replace(tmp, path)


def _load(path: Path) -> dict:
    import tomllib

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
