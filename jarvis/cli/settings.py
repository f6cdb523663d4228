"""Which settings a command runs with, in one place: the defaults, then the environment
(``Config.from_env``, done by main), then the settings file (``--config FILE``), then the flags given on
the command line (a flag overrides the file). A reload (SIGHUP: serve, worker) calls the same function on a
fresh ``Config.from_env()`` with the flags as first given.

A group of flags applies when the command has it (its parser defined it): the reader's (ask, serve, worker,
calibrate), the question log's (ask, serve), the game server's and the bot's (serve), --redis (ask, serve,
worker).
"""
from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from jarvis.config import Config, ReaderSettings
from jarvis.errors import JarvisError


def command_settings(args: argparse.Namespace, config: Config, *,
                     redis_required: bool = False) -> tuple[Config, str | None]:
    """``config`` (defaults and environment) with the settings file and the flags of ``args`` applied, and
    the index folder (--index, else the settings file's ``index``; None: the bundled corpus's).
    ``redis_required`` (the worker): a Redis URL must come from somewhere."""
    index = None
    if getattr(args, "config", None):
        from jarvis.settings_file import load_settings_file

        config, index = load_settings_file(Path(args.config), config)
    if hasattr(args, "answer_threshold"):
        config = replace(config, reader=reader_settings(args, config))
    if hasattr(args, "sequential"):
        config = replace(config, reader=replace(config.reader, sequential=args.sequential or config.reader.sequential),
                         top_k=args.k)
    if hasattr(args, "mc_host"):
        config = _game_settings(args, config)
    if hasattr(args, "no_log"):
        config = _log_settings(args, config)
    if hasattr(args, "redis"):
        config = _redis_settings(args, config, required=redis_required)
    if hasattr(args, "panel_host"):
        config = _panel_settings(args, config)
    return config, getattr(args, "index", None) or index


def reader_settings(args: argparse.Namespace, config: Config) -> ReaderSettings:
    """ReaderSettings with the reader flags applied."""
    reader = replace(config.reader, model=args.model or config.reader.model,
                     quantize=config.reader.quantize if args.int8 is None else args.int8,
                     max_paragraphs=args.max_paragraphs or config.reader.max_paragraphs,
                     backend=args.backend or config.reader.backend,
                     token_budget=config.reader.token_budget if args.token_budget is None else args.token_budget)
    if args.reader:
        reader = replace(reader, reader=args.reader)
    if args.answer_threshold is not None:
        reader = replace(reader, answer_threshold=args.answer_threshold)
    if args.confidence_model:
        reader = replace(reader, confidence_model=args.confidence_model)
    return replace(reader, model="") if args.fallback else reader


def _log_settings(args: argparse.Namespace, config: Config) -> Config:
    """Config with the question-log flags (ask, serve) applied."""
    log = config.log
    if args.no_log:
        log = replace(log, enabled=False)
    if getattr(args, "log_player_names", False):
        log = replace(log, player_names=True)
    return replace(config, log=log)


def _game_settings(args: argparse.Namespace, config: Config) -> Config:
    """Config with serve's flags for the game server (the plugin API) and the player bot applied."""
    flags = {"mc_host": args.mc_host, "mc_port": args.mc_port, "connect_attempts": args.connect_attempts,
             "dialect": args.mc_dialect, "mc_token": args.mc_token}
    bridge = replace(config.bridge, **{key: value for key, value in flags.items() if value is not None})
    bot = config.bot
    if args.bot:
        host, port = args.bot
        bot = replace(bot, host=host, port=port or bot.port)
    flags = {"username": args.bot_username, "auth": args.bot_auth, "version": args.bot_version, "reply": args.reply}
    bot = replace(bot, **{key: value for key, value in flags.items() if value is not None})
    if not (bot.host or bot.realm) and args.reply == "private":
        raise JarvisError("--reply private needs the player bot (--bot HOST): the plugin API can only broadcast")
    return replace(config, bridge=bridge, bot=bot)


def _redis_settings(args: argparse.Namespace, config: Config, *, required: bool = False) -> Config:
    """Config with --redis URL applied (a bare --redis: the URL of [redis] url or JARVIS_REDIS_URL).
    ``required`` (the worker), or --redis given: a Redis URL must come from somewhere."""
    flag = args.redis
    if flag:
        config = replace(config, redis=replace(config.redis, url=flag))
    if (required or flag is not None) and not config.redis.url:
        raise JarvisError("no Redis URL: give --redis URL, or set JARVIS_REDIS_URL (or [redis] url in the settings "
                          "file)")
    return config


def _panel_settings(args: argparse.Namespace, config: Config) -> Config:
    """Config with the desk's flags (panel: --host, --port) applied."""
    flags = {"host": args.panel_host, "port": args.panel_port}
    return replace(config, panel=replace(config.panel, **{key: value for key, value in flags.items() if value is not None}))
