"""Settings in a file: ``jarvis serve`` and ``jarvis worker`` read a TOML file (Python's ``tomllib``) onto a Config.

The file's tables are the settings dataclasses of jarvis/config.py, under the names ``Config``
gives them, with their field names as keys:

    index = "/srv/jarvis/mcwiki-index"     # the only top-level key: serve's index directory

    [bridge]                  # BridgeSettings: mc_host, mc_port, dialect, per_player_rate, ...
    [bot]                     # BotSettings: host, port, username, auth, reply, messages_per_second, ...
    [log]                     # LogSettings: the question log (enabled, path, player_names, ...)
    [reader]                  # ReaderSettings (and [reader.passages], [reader.fallback_tuning])
    [retrieval]               # index.settings.RetrievalSettings
    [redis]                   # RedisSettings: the worker pool (url without a password, prefix, max_age, ...)
    [panel]                   # PanelSettings: the admin's web desk (host, port, guide, secure_cookie, ...)

Types follow the fields' annotations (an integer is a float where a float is wanted; a list is a
tuple). A key or table that is not a setting, a value of the wrong type or out of range is a
:class:`SettingsError` whose one line names it (``[bridge] mc_prot: unknown setting (did you mean
mc_port?)``). Secrets are not read from files: ``[bridge] mc_token`` is an error that says to use
the environment (``JARVIS_MC_TOKEN``), and so is ``[redis] password`` (``JARVIS_REDIS_PASSWORD``), ``[panel] token`` (``JARVIS_PANEL_TOKEN``) and a
``[redis] url`` that holds a password (``JARVIS_REDIS_URL``). The CLI applies its flags over what the file says.
"""
from __future__ import annotations

import dataclasses
import difflib
import tomllib
import types
import typing
from dataclasses import replace
from pathlib import Path

from functools import cache

from jarvis.index.settings import FUSIONS
from jarvis.config import BOT_AUTHS, READER_BACKENDS, REPLY_MODES, Config
from jarvis.errors import JarvisError

TABLES = ("bridge", "bot", "log", "reader", "retrieval", "redis", "panel")
TOP_LEVEL = {"index": str}
SECRETS = {("bridge", "mc_token"): "JARVIS_MC_TOKEN (or serve's token flag)",
           ("redis", "password"): "JARVIS_REDIS_PASSWORD (or put the URL with its password in JARVIS_REDIS_URL)",
           ("panel", "token"): "JARVIS_PANEL_TOKEN"}
# Settings renamed since files were written with the old name: still read, under the new one.
RENAMED = {("retrieval", "kind_prior"): "page_kind_prior"}


@cache
def choices() -> dict[tuple[str, str], tuple[str, ...]]:
    """Values with a fixed set of choices: the constants of the parts that use them (imported when a file
    is read, not with this module)."""
    from jarvis.bridge.connection import AUTO
    from jarvis.bridge.player import WHISPER_COMMANDS
    from jarvis.bridge.wire import DIALECTS
    from jarvis.readers import OFFLINE_READERS, READERS

    return {
        ("bridge", "dialect"): (AUTO, *DIALECTS),
        ("bot", "auth"): BOT_AUTHS,
        ("bot", "reply"): REPLY_MODES,
        ("bot", "whisper_command"): WHISPER_COMMANDS,
        ("reader", "backend"): READER_BACKENDS,
        ("reader", "fallback"): OFFLINE_READERS,
        ("reader", "reader"): ("", *sorted(READERS)),
        ("retrieval", "fusion"): FUSIONS,
    }


# Numbers with bounds (inclusive; None: open). Every other number of [bridge], [bot] and [log] must be 0 or more.
BOUNDS = {
    ("bridge", "mc_port"): (1, 65535),
    ("bot", "port"): (1, 65535),
    ("bridge", "queue_size"): (1, None),
    ("bridge", "max_line"): (40, 256),
    ("bridge", "max_reply_lines"): (1, 5),
    ("bridge", "poll_interval"): (0.01, 60),
    ("bot", "max_message"): (40, 256),
    ("bot", "max_messages"): (1, 2),
    ("bot", "messages_per_second"): (0.05, 20),
    ("bot", "burst"): (1, 50),
    ("bot", "join_timeout"): (1, None),
    ("log", "max_bytes"): (10_000, None),
    ("reader", "batch_size"): (1, None),
    ("reader", "max_seq_len"): (32, None),
    ("redis", "max_stream"): (100, None),
    ("redis", "max_replies"): (10, None),
    ("redis", "reply_ttl"): (1, None),
    ("redis", "max_age"): (1, None),
    ("redis", "claim_after"): (0.1, None),
    ("redis", "max_attempts"): (1, 100),
    ("redis", "max_waiting"): (1, None),
    ("redis", "io_timeout"): (0.1, None),
    ("panel", "port"): (0, 65535),        # 0: a free port (the line it prints names it)
    ("panel", "min_token_length"): (8, None),
    ("panel", "session_hours"): (0.01, None),
    ("panel", "login_attempts"): (1, None),
    ("panel", "login_window"): (1, None),
    ("panel", "login_delay"): (0.01, 60),
    ("panel", "login_max_delay"): (0.01, 600),
    ("panel", "likely_wrong_below"): (0, 1),
    ("panel", "threads"): (1, 64),
    ("panel", "build_timeout"): (1, None),
    ("reader", "answer_threshold"): (0, 1),
    ("reader", "site_thresholds"): (0, 1),    # each site's
}
NON_NEGATIVE_TABLES = ("bridge", "bot", "log", "redis", "panel")


class SettingsError(JarvisError):
    """A settings file that cannot be used; the message names the file (``path``), the table and the key.
    A secret found in the file has the remedy ``secret_remedy(table, key)``: its tail says nothing more
    than the message, a front end may add its own way to give the secret."""

    REMEDIES = {f"secret {table}.{key}": "" for table, key in SECRETS}


def secret_remedy(table: str, key: str) -> str:
    """The remedy of a SettingsError for a secret found in a settings file."""
    return f"secret {table}.{key}"


def load_settings_file(path: Path, base: Config) -> tuple[Config, str | None]:
    """``base`` with the file's settings applied, and the file's ``index`` (None when it sets none)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SettingsError(f"{path}: no such settings file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read it: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from None
    try:
        return _apply(data, base)
    except SettingsError as exc:
        raise SettingsError(f"{path}: {exc.what}", path=path, remedy=exc.remedy) from None


def _apply(data: dict, base: Config) -> tuple[Config, str | None]:
    index = None
    config = base
    for key, value in data.items():
        if key in TOP_LEVEL:
            if not isinstance(value, str) or not value:
                raise SettingsError(f"{key}: expected a directory path (a string), got {_show(value)}")
            index = value
        elif key in TABLES:
            if not isinstance(value, dict):
                raise SettingsError(f"{key}: expected a table ([{key}]), got {_show(value)}")
            config = replace(config, **{key: _table(key, getattr(config, key), value)})
        else:
            raise SettingsError(f"{key}: unknown {'table' if isinstance(value, dict) else 'setting'}"
                                f"{_suggest(key, [*TABLES, *TOP_LEVEL])} (tables: {', '.join(TABLES)}; "
                                "top level: index)")
    return config, index


def _table(name: str, current, values: dict):
    """``current`` (a settings dataclass) with ``values`` applied; ``name`` is its table, e.g. "reader.passages"."""
    hints = typing.get_type_hints(type(current))
    known = {field.name for field in dataclasses.fields(current)}
    changes = {}
    for key, value in values.items():
        key = RENAMED.get((name, key), key)
        where = f"[{name}] {key}"
        if (name, key) in SECRETS:
            raise SettingsError(f"{where}: a secret is not kept in a settings file: set {SECRETS[name, key]}",
                                remedy=secret_remedy(name, key))
        if key not in known:
            raise SettingsError(f"{where}: unknown setting{_suggest(key, sorted(known))}")
        annotation = hints[key]
        if dataclasses.is_dataclass(annotation):
            if not isinstance(value, dict):
                raise SettingsError(f"{where}: expected a table ([{name}.{key}]), got {_show(value)}")
            changes[key] = _table(f"{name}.{key}", getattr(current, key), value)
            continue
        converted = _convert(where, annotation, value)
        if isinstance(converted, dict):   # a table of weights: the keys given change, the others stay
            converted = {**getattr(current, key), **converted}
        changes[key] = _check(name, key, converted)
    if name == "redis" and changes.get("url"):
        _check_redis_url(where=f"[{name}] url", url=changes["url"])
    return replace(current, **changes)


def _check_redis_url(where: str, url: str) -> None:
    """A Redis URL in a file: redis:// or rediss://, and no password (that is a secret: the environment)."""
    from jarvis.network.link import RedisURLError, parse_url

    try:
        parsed = parse_url(url)
    except RedisURLError as exc:
        raise SettingsError(f"{where}: {exc}") from None
    if parsed.password:
        raise SettingsError(f"{where}: holds a password, and a secret is not kept in a settings file: put the URL "
                            "in JARVIS_REDIS_URL, or the password alone in JARVIS_REDIS_PASSWORD")


def _convert(where: str, annotation, value):
    """``value`` as the ``annotation`` wants it, or SettingsError."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        return _convert(where, options[0], value)   # TOML has no null: the non-None type
    if annotation is bool:
        if isinstance(value, bool):
            return value
        raise SettingsError(f"{where}: expected true or false, got {_show(value)}")
    if annotation is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise SettingsError(f"{where}: expected a whole number, got {_show(value)}")
    if annotation is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise SettingsError(f"{where}: expected a number, got {_show(value)}")
    if annotation is str:
        if isinstance(value, str):
            return value
        raise SettingsError(f"{where}: expected a string, got {_show(value)}")
    if origin is tuple:
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return tuple(value)
        raise SettingsError(f"{where}: expected a list of strings, got {_show(value)}")
    if origin is dict or annotation is dict:
        if isinstance(value, dict) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                           for v in value.values()):
            return {k: float(v) for k, v in value.items()}
        raise SettingsError(f"{where}: expected a table of numbers, got {_show(value)}")
    raise SettingsError(f"{where}: cannot be set from a file")


def _check(table: str, key: str, value):
    where = f"[{table}] {key}"
    if isinstance(value, dict) and (table, key) in BOUNDS:   # a table of bounded numbers: each one in bounds
        low, high = BOUNDS[table, key]
        for name, number in value.items():
            if not low <= number <= high:
                raise SettingsError(f"{where}: {name} = {number} is out of range ({low}-{high})")
        return value
    allowed = choices().get((table, key))
    if allowed is not None and value not in allowed:
        raise SettingsError(f"{where}: {_show(value)} is not one of {', '.join(allowed)}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        low, high = BOUNDS.get((table, key), (0 if table in NON_NEGATIVE_TABLES else None, None))
        if (low is not None and value < low) or (high is not None and value > high):
            span = f"{low} or more" if high is None else f"{low}-{high}"
            raise SettingsError(f"{where}: {value} is out of range ({span})")
    return value


def _suggest(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6) or [k for k in known if k.startswith(key)][:1]
    return f" (did you mean {close[0]}?)" if close else ""


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
