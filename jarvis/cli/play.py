"""The commands that answer players: ask (one question, here or through the worker pool), serve (the game
chat bridge), worker (a member of the worker pool)."""
from __future__ import annotations

import argparse
import logging
import sys

from jarvis.cli.common import check_index_folder, emit_json, index_dir, set_up_models
from jarvis.cli.parser import Commands, port, positive, redis_flag
from jarvis.cli.settings import command_settings
from jarvis.config import Config
from jarvis.errors import JarvisError
from jarvis.settings_file import TABLES as SETTINGS_TABLES

TITLE = "answer players"
log = logging.getLogger(__name__)


def register(commands: Commands) -> None:
    _ask_command(commands)
    _serve_command(commands)
    _worker_command(commands)


# --------------------------------------------------------------------------- ask


def cmd_ask(args: argparse.Namespace, config: Config) -> int:
    from jarvis.assembly import assemble
    from jarvis.question_text import check_question
    from jarvis.questionlog import open_question_log

    question = check_question(args.question)  # fail fast, before loading anything heavy
    config, _ = command_settings(args, config)
    if args.redis is not None:
        answer = _ask_pool(question, config)
    else:
        set_up_models(config)
        with assemble(config, index_dir(args, config)) as jarvis:
            answer = jarvis.ask(question)
    from jarvis.replies import answer_json, compose_reply, describe

    try:   # logged as serve logs (QuestionLog.record), before the output (which a closed pipe may cut short)
        question_log = open_question_log(config)
        if question_log is not None:   # with the reply the terminal shows
            question_log.record(question, answer, reply=compose_reply(answer), latency=answer.seconds, origin="ask")
    except OSError as exc:   # the answer was given; a log that cannot be written is no reason to fail
        log.warning("question not logged: %s", exc)
    if args.json:
        emit_json(answer_json(answer))
    else:
        print(describe(answer))
    return 0


def _ask_pool(question: str, config: Config):
    """The answer to ``question`` from the worker pool (ask --redis); a line on stderr while it waits."""
    from jarvis.network import PoolClient, RedisLink

    def waiting(_: str) -> None:
        print(f"jarvis ask: no worker has answered in {config.redis.busy_after:g} s; still waiting "
              f"(up to {config.redis.max_age:g} s)", file=sys.stderr)

    with PoolClient(RedisLink(config.redis), origin="ask") as pool:
        return pool.ask(question, notify=waiting)


def _ask_command(commands: Commands) -> None:
    p = commands.add("ask", cmd_ask, "answer one question", commands.reader)
    p.add_argument("question", metavar="QUESTION")
    p.add_argument("--index", metavar="DIR", help="index directory (default: the bundled corpus's)")
    p.add_argument("--sequential", action="store_true", help="read one paragraph per forward pass (the original's way)")
    p.add_argument("-k", type=positive, default=Config().top_k, metavar="N", help="pages to read (default: %(default)s)")
    p.add_argument("--json", action="store_true",
                   help='print {"answer", "score", "title", "reader", "seconds", "site", ...}')
    p.add_argument("--no-log", action="store_true", help="do not add the question to the question log")
    p.add_argument("--redis", **redis_flag("ask the worker pool instead of answering here (the same output)"))


# --------------------------------------------------------------------------- serve


def _token_refused(token_given: bool) -> JarvisError:
    """The bridge's AuthRefused (the server refused the token, or wants one) in the words of serve's flags."""
    if token_given:
        return JarvisError("the server refused the API token (--mc-token or JARVIS_MC_TOKEN): it must equal "
                           "auth-token in the RaspberryJuice plugin's config.yml")
    return JarvisError("the server's RaspberryJuice 2.x asks for an API token: set JARVIS_MC_TOKEN (or "
                       "--mc-token) to the auth-token in the plugin's config.yml")


def cmd_serve(args: argparse.Namespace, config: Config) -> int:
    from jarvis.bridge import AuthRefused

    try:
        return _serve(args, config)
    except AuthRefused as exc:
        raise _token_refused(exc.token_given) from exc


def _serve(args: argparse.Namespace, config: Config) -> int:
    from jarvis.assembly import assemble
    from jarvis.bridge import Announcer, pick, serve
    from jarvis.privacy import load_salt
    from jarvis.questionlog import open_question_log

    flags = argparse.Namespace(**vars(args))   # as given: a reload reads the file again under the same flags
    config, index = command_settings(flags, config)
    transport = pick(config)      # the player bot when [bot] names a host or a Realm, else the plugin API; checked
    check_index_folder(index)
    if args.redis is not None:
        from jarvis.network import RedisLink, redact

        RedisLink(config.redis)   # the URL and names are usable (NetworkError, one line, if not)
        answers = f"answers from the worker pool at {redact(config.redis.url)}"
    else:
        answers = f"index {index or 'the bundled corpus'}"
    if args.check:
        where = transport.kind.describe(config.bridge, transport.settings)
        print(f"{args.config or 'settings'}: OK: serve would join {where}; {answers}")
        return 0
    salt = load_salt(config.home)
    pool = None
    if args.redis is not None:   # a thin client: the worker pool answers (jarvis/network/)
        from jarvis.network import open_pool

        pool = open_pool(config, origin="serve", salt=salt)   # fails fast: no Redis, a refused password
    try:
        transport.kind.check_reachable(config.bridge, transport.settings)   # fail fast, before loading anything
    except BaseException:
        if pool is not None:
            pool.close()
        raise
    if index:
        args.index = index
    question_log = open_question_log(config)
    folder = None
    if pool is None:
        set_up_models(config)
        folder = index_dir(args, config)
    with (pool if pool is not None else assemble(config, folder)) as answerer:
        answering = answers.removeprefix("answers from ") if pool is not None else \
            f"index {folder}, reader {answerer.reader.name}"
        return serve(config.bridge, answerer, max_questions=args.max_questions, transport=transport, salt=salt,
                     log_player_names=config.log.player_names, home=config.home,
                     reload=_serve_reloader(args, flags, config, index), question_log=question_log,
                     announcer=Announcer(_say_serve, answering))


def _serve_reloader(args: argparse.Namespace, flags: argparse.Namespace, config: Config, index: str | None):
    """What SIGHUP reads: the settings file again under the same flags, the transport it asks for (checked), and
    the names of the settings that changed which serve takes up only at a restart."""
    from jarvis.bridge import Fresh, ReloadSkipped, pick

    def reload() -> Fresh:
        if not args.config:
            raise ReloadSkipped("no settings file to read (serve --config FILE)")
        fresh, fresh_index = command_settings(flags, Config.from_env())
        others = [name for name in ("reader", "retrieval", "log", "redis")
                  if getattr(fresh, name) != getattr(config, name)]
        if fresh_index != index:
            others.append("index")
        return Fresh(fresh.bridge, pick(fresh), tuple(others))

    return reload


def _say_serve(line: str) -> None:
    """What `jarvis serve` tells the admin without -v (the connection made, lost, made again): one line on stdout."""
    print(f"jarvis serve: {line}", flush=True)


def _bot_address(text: str) -> tuple[str, int | None]:
    """argparse type for --bot: HOST, HOST:PORT or [IPv6]:PORT."""
    host, port_ = text, None
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest:
            port_ = rest.removeprefix(":")
    elif text.count(":") == 1:
        host, port_ = text.split(":")
    if not host:
        raise argparse.ArgumentTypeError(f"no host in {text!r} (HOST or HOST:PORT)")
    if port_ is not None:
        port_ = port(port_)
        if port_ == 0:
            raise argparse.ArgumentTypeError("the game port cannot be 0")
    return host, port_


def _serve_command(commands: Commands) -> None:
    p = commands.add("serve", cmd_serve, "run the in-game chat bridge: the RaspberryJuice API, or a player bot (--bot)",
                     commands.reader)
    p.add_argument("--config", metavar="FILE", default=None,
                   help=f"settings file (TOML: {', '.join(f'[{table}]' for table in SETTINGS_TABLES)} with the "
                        "settings' names; flags override it; SIGHUP reloads it)")
    p.add_argument("--check", action="store_true", help="check the settings (--config FILE and flags) and exit")
    p.add_argument("--mc-host", default=None, metavar="H", help=f"server host (default: {Config().bridge.mc_host})")
    p.add_argument("--mc-port", type=port, default=None, metavar="P", help=f"API port (default: {Config().bridge.mc_port})")
    p.add_argument("--mc-token", default=None, metavar="TOKEN",
                   help="RaspberryJuice 2.x's auth-token (better: the environment variable JARVIS_MC_TOKEN)")
    p.add_argument("--index", metavar="DIR", help="index directory (default: the bundled corpus's)")
    p.add_argument("--max-questions", type=positive, default=None, metavar="N", help="stop after answering N questions")
    p.add_argument("--no-log", action="store_true",
                   help="keep no question log (default: $JARVIS_HOME/log/questions.jsonl, players as salted hashes)")
    p.add_argument("--log-player-names", action="store_true",
                   help="name players as typed in the question log and the log lines, not by salted hashes "
                        "(personal data: tell your players)")
    p.add_argument("--connect-attempts", type=int, default=None, metavar="N",
                   help=f"tries to reach the server at start-up, 0 = forever (default: {Config().bridge.connect_attempts})")
    p.add_argument("--mc-dialect", choices=("auto", "upstream", "fork", "v2"), default=None,
                   help="the server plugin: upstream RaspberryJuice (Spigot/Bukkit up to 1.12), its fork for "
                        "current Paper (RaspberryJuiceReload), RaspberryJuice 2.x (current Paper, auth token), or "
                        f"learned from its replies (default: {Config().bridge.dialect})")
    p.add_argument("--bot", type=_bot_address, default=None, metavar="HOST[:PORT]",
                   help="join the game server as a player instead (any Java server, no plugin needed; "
                        f"port default {Config().bot.port})")
    p.add_argument("--bot-username", default=None, metavar="NAME",
                   help=f"the bot's player name, offline mode (default: {Config().bot.username})")
    p.add_argument("--bot-auth", choices=("offline", "microsoft"), default=None,
                   help="offline (online-mode=false servers) or microsoft (a device code to enter once; "
                        f"the sign-in is cached under $JARVIS_HOME) (default: {Config().bot.auth})")
    p.add_argument("--bot-version", default=None, metavar="V", help="game version to speak (default: ask the server)")
    p.add_argument("--redis", **redis_flag("send the questions to the worker pool (jarvis worker) instead of "
                                         "answering here; the bridge's chat rules stay the same"))
    p.add_argument("--reply", choices=("same", "private", "public"), default=None,
                   help="where the bot answers: a whisper by whisper and public chat in public (same), always by "
                        f"whisper (private), always in public (public) (default: {Config().bot.reply})")


# --------------------------------------------------------------------------- worker


def cmd_worker(args: argparse.Namespace, config: Config) -> int:
    from jarvis.assembly import assemble
    from jarvis.logs import format_event
    from jarvis.network import RedisLink, PoolWorker
    from jarvis.process_signals import handle_signals

    config, index = command_settings(args, config, redis_required=True)
    check_index_folder(index)
    args.index = index
    link = RedisLink(config.redis)
    link.check()                     # fail fast (a wrong password, no server), before loading anything heavy

    def reload():
        fresh, fresh_index = command_settings(args, Config.from_env(), redis_required=True)
        others = [name for name in ("reader", "retrieval") if getattr(fresh, name) != getattr(config, name)]
        return fresh.redis, others + (["index"] if fresh_index != index else [])

    set_up_models(config)
    with assemble(config, index_dir(args, config)) as jarvis:
        worker = PoolWorker(link, jarvis.ask, reader_name=jarvis.reader.name, name=args.name,
                        max_questions=args.max_questions, reload=reload if args.config else None)
        with handle_signals(worker):   # before the first log line: a supervisor may signal once it reads it
            log.info(format_event("worker_started", worker=worker.name, redis=link.where, reader=jarvis.reader.name,
                                  group=config.redis.group, stream=f"{config.redis.prefix}:questions"))
            try:
                worker.run()
            finally:
                link.close()
    return 0


def _worker_command(commands: Commands) -> None:
    p = commands.add("worker", cmd_worker, "answer questions from the Redis stream of the worker pool (any number "
                     "of workers, on any machines that reach Redis)", commands.reader)
    p.add_argument("--redis", **redis_flag("the Redis of the pool"))
    p.add_argument("--index", metavar="DIR", help="index directory (default: the bundled corpus's)")
    p.add_argument("--config", metavar="FILE", default=None,
                   help="settings file (TOML: [redis], [reader], [retrieval], index); flags override it")
    p.add_argument("--name", default=None, metavar="NAME",
                   help="this worker's name in the consumer group (default: host-pid-random)")
    p.add_argument("--max-questions", type=positive, default=None, metavar="N", help="stop after answering N questions")
