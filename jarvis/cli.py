"""The ``jarvis`` command: parses arguments and calls each stage's public function.

Kept thin on purpose: no stage logic lives here, and stages never import this module.
Heavy stages (torch, transformers, whoosh) are imported inside the subcommand that
needs them, so ``jarvis --help`` stays instant.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

from jarvis.crawler.errors import FULL_CRAWL, RETRY_OR_START_OVER, START_OVER
from jarvis.crawler.settings import POLITE_DELAY, TABLE_MODES
from jarvis.config import (DEFAULT_TOKEN_BUDGET, READER_BACKENDS, REALBED_PAGES, REALBED_PORT, SAMPLE_WIKI_HOST,
                           SAMPLE_WIKI_PORT, SHIPPED_READER, Config)
from jarvis.errors import JarvisError, first_line
from jarvis.readers import READERS
from jarvis.settings_file import TABLES as SETTINGS_TABLES
from jarvis.logs import setup_logging

log = logging.getLogger(__name__)

# The index profiles (index/profiles.py's PROFILES, kept equal by a test): named here so that parsing
# the command line does not import the index stage.
INDEX_PROFILES = ("tuned", "lexical", "baseline")

# Library errors name the settings and arguments at fault as the library calls them (crawler.errors.UserError);
# this is what the flags that set them are called.
FLAGS = {"max_pages": "--max-pages", "workers": "--workers", "delay": "--delay", "tables": "--tables",
         "out_path": "--out", "update": "--update", "procs": "--procs", "since": "--since"}
# ... and the ways out they suggest, said with the flags (the tail of the message; {path}: the error's path).
CRAWL_REMEDIES = {
    FULL_CRAWL: "; run without --update for a full crawl",
    START_OVER: "; run without --resume to start over",
    RETRY_OR_START_OVER: "; try again later, or run without --resume to start over",
}
BUILD_COMMAND = "jarvis index --corpus FILE --index {path}"
# A lab command (sample-wiki, realbed-wiki, eval --realbed) where the lab is not installed.
LAB_MISSING = ("a lab command: it needs the lab (the test wikis), installed from a checkout of the repository "
               "with `pip install -e lab` (`make setup` does)")
# What to do about the questions Jarvis could not answer (jarvis report).
UNANSWERED_REMEDY = "add a guide page (`jarvis index --docs`) or your players' words (`--glossary`)"


def _parsed(text: str, cast, what: str):
    """``cast(text)``, or an argparse error naming what was expected."""
    try:
        return cast(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None


def _port(text: str) -> int:
    """argparse type: a TCP port number (0 = pick a free one, where that makes sense)."""
    value = _parsed(text, int, "a port number")
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 0-65535, got {value}")
    return value


def _whole_number(text: str, minimum: int, rule: str) -> int:
    value = _parsed(text, int, "a whole number")
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be {rule}, got {value}")
    return value


def _probability(text: str) -> float:
    """argparse type: a number in [0, 1]."""
    value = _parsed(text, float, "a number")
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


def _positive(text: str) -> int:
    """argparse type: an integer >= 1."""
    return _whole_number(text, 1, "at least 1")


def _non_negative(text: str) -> int:
    """argparse type: an integer >= 0."""
    return _whole_number(text, 0, "0 or more")


class _CorpusAction(argparse.Action):
    """--corpus FILE, repeatable: each one a [file, site] pair; --site NAME names the corpus given before it."""

    def __call__(self, parser, namespace, value, option_string=None):
        corpora = list(getattr(namespace, "corpora", None) or [])
        if option_string == "--corpus":
            corpora.append([value, ""])
        elif not corpora:
            parser.error("--site names the wiki of the --corpus given before it: give --corpus FILE first")
        elif corpora[-1][1]:
            parser.error(f"--site given twice for --corpus {corpora[-1][0]}")
        else:
            corpora[-1][1] = value
        namespace.corpora = corpora


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad flag in one line instead of usage + error."""

    def error(self, message: str) -> None:  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


# --------------------------------------------------------------------------- helpers


def _set_up_models(config: Config, answering: bool = True) -> None:
    """Before a command's first model loads (not before its quick checks): the process-wide settings of the
    libraries, once (jarvis/runtime.py): no "Loading weights" bars, and for a command that answers questions
    the compute threads (ReaderSettings.threads). Neither torch nor transformers is imported for it."""
    from jarvis.runtime import hide_loading_bars, set_threads

    hide_loading_bars()
    if answering:
        set_threads(config.reader.threads)


def _emit_json(value: object) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def _index_dir(args: argparse.Namespace, config: Config) -> Path:
    """The index named by --index, or the default one (built from the bundled corpus on first use)."""
    from jarvis.index import ensure_index

    if args.index:
        return Path(args.index)
    return ensure_index(config.bundled_corpus, config.default_index_dir, profile=config.index_profile,
                        progress=not args.quiet)


def _log_settings(args: argparse.Namespace, config: Config) -> Config:
    """Config with the question-log flags shared by ask and serve applied."""
    log = config.log
    if args.no_log:
        log = replace(log, enabled=False)
    if getattr(args, "log_player_names", False):
        log = replace(log, player_names=True)
    return replace(config, log=log)


def _reader_settings(args: argparse.Namespace, config: Config):
    """ReaderSettings with the reader flags shared by ask and serve applied."""
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


# --------------------------------------------------------------------------- subcommands


def cmd_crawl(args: argparse.Namespace, config: Config) -> int:
    from jarvis.crawler import crawl

    settings = replace(config.crawl, delay=args.delay, workers=args.workers, tables=args.tables)
    if args.user_agent:
        settings = replace(settings, user_agent=args.user_agent)
    if args.ignore_robots:
        settings = replace(settings, obey_robots=False)
    if args.no_api:
        settings = replace(settings, use_api=False)
    if args.update and args.resume:
        raise JarvisError("--update and --resume do not go together: an update is short, run it again")
    report = crawl(args.start, Path(args.out), settings, max_pages=args.max_pages, resume=args.resume,
                   progress=not args.quiet, update=args.update, site=args.site or "")
    print(report.summary(limit_name="--max-pages"))
    if args.index:
        from jarvis.index import build_index, sources_with

        # An index of several sources (other wikis, the guide) is rebuilt from all of them.
        sources = sources_with(Path(args.index), Path(args.out))
        _set_up_models(config, answering=False)
        stats = build_index(sources, Path(args.index), progress=not args.quiet)  # incremental by fingerprint
        print(stats.summary())
    elif args.update:
        print(f"to bring an index up to date (only the changed pages): jarvis index --corpus {args.out} --index DIR")
    return 0


def cmd_index(args: argparse.Namespace, config: Config) -> int:
    from jarvis.index import CorpusSource, GuideSource, SiteClashError, build_index
    from jarvis.index.glossary import Glossary

    corpora = getattr(args, "corpora", None) or []
    if not corpora and not args.docs:
        raise JarvisError("give a corpus (--corpus FILE) or a guide directory (--docs DIR) to index")
    if args.docs_url and not args.docs:
        raise JarvisError("--docs-url is the web address of the guide given with --docs DIR: give --docs too")
    sources = [CorpusSource(Path(path), site) for path, site in corpora]
    if args.docs:
        sources.append(GuideSource(Path(args.docs), docs_url=(args.docs_url or "").strip()))
    glossary = Glossary.load(args.glossary) if args.glossary else (Glossary() if args.no_glossary else None)
    _set_up_models(config, answering=False)
    try:
        stats = build_index(sources, Path(args.index), profile=args.profile, procs=args.procs,
                            progress=not args.quiet, glossary=glossary)
    except SiteClashError as exc:
        where = f" (--site NAME after --corpus {exc.path})" if exc.path else ""
        raise JarvisError(f"{first_line(exc)}{where}") from exc
    print(stats.summary())
    return 0


def cmd_search(args: argparse.Namespace, config: Config) -> int:
    from jarvis.index import Searcher

    _set_up_models(config, answering=False)
    with Searcher(_index_dir(args, config)) as searcher:
        index = searcher.snapshot()
        hits = index.search(args.query, k=args.k)
    if args.json:
        _emit_json([{"title": h.title, "score": round(h.score, 4), "url": h.url, "site": h.site} for h in hits])
    elif not hits:
        print("no pages matched")
    else:
        several = len(index.sites) > 1
        for rank, hit in enumerate(hits, 1):
            site = f", {hit.site}" if several and hit.site else ""
            print(f"{rank}. {hit.title}{site}  ({hit.score:.2f})")
    return 0


def _redis_settings(args: argparse.Namespace, config: Config, *, required: bool = False) -> Config:
    """Config with --redis URL applied (a bare --redis: the URL of [redis] url or JARVIS_REDIS_URL).
    ``required`` (the worker), or --redis given: a Redis URL must come from somewhere."""
    flag = getattr(args, "redis", None)
    if flag:
        config = replace(config, redis=replace(config.redis, url=flag))
    if (required or flag is not None) and not config.redis.url:
        raise JarvisError("no Redis URL: give --redis URL, or set JARVIS_REDIS_URL (or [redis] url in the settings "
                          "file)")
    return config


def _ask_pool(question: str, config: Config):
    """The answer to ``question`` from the worker pool (ask --redis); a line on stderr while it waits."""
    from jarvis.network import PoolClient, RedisLink

    def waiting(_: str) -> None:
        print(f"jarvis ask: no worker has answered in {config.redis.busy_after:g} s; still waiting "
              f"(up to {config.redis.max_age:g} s)", file=sys.stderr)

    with PoolClient(RedisLink(config.redis), origin="ask") as pool:
        return pool.ask(question, notify=waiting)


def cmd_ask(args: argparse.Namespace, config: Config) -> int:
    from jarvis.assembly import assemble
    from jarvis.pipeline import check_question

    question = check_question(args.question)  # fail fast, before loading anything heavy
    reader = replace(_reader_settings(args, config), sequential=args.sequential or config.reader.sequential)
    config = replace(config, reader=reader, top_k=args.k)
    from jarvis.questionlog import open_question_log

    config = _redis_settings(args, _log_settings(args, config))
    if args.redis is not None:
        answer = _ask_pool(question, config)
    else:
        _set_up_models(config)
        with assemble(config, _index_dir(args, config)) as jarvis:
            answer = jarvis.ask(question)
    if args.json:
        _emit_json(answer.to_json())
    else:
        print(answer.describe())
    try:
        question_log = open_question_log(config)
        if question_log is not None:
            question_log.record(question, answer, latency=answer.seconds, origin="ask")
    except OSError as exc:   # the answer was given; a log that cannot be written is no reason to fail
        log.warning("question not logged: %s", exc)
    return 0


def _bot_address(text: str) -> tuple[str, int | None]:
    """argparse type for --bot: HOST, HOST:PORT or [IPv6]:PORT."""
    host, port = text, None
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest:
            port = rest.removeprefix(":")
    elif text.count(":") == 1:
        host, port = text.split(":")
    if not host:
        raise argparse.ArgumentTypeError(f"no host in {text!r} (HOST or HOST:PORT)")
    if port is not None:
        port = _port(port)
        if port == 0:
            raise argparse.ArgumentTypeError("the game port cannot be 0")
    return host, port


def _serve_settings(args: argparse.Namespace, config: Config) -> tuple[Config, str | None]:
    """The settings serve runs with: defaults, the environment (Config.from_env), the --config file,
    then the flags given on the command line (a flag overrides the file). Also the index directory."""
    index = None
    if args.config:
        from jarvis.settings_file import load_settings_file

        config, index = load_settings_file(Path(args.config), config)
    bridge = config.bridge
    flags = {"mc_host": args.mc_host, "mc_port": args.mc_port, "connect_attempts": args.connect_attempts,
             "dialect": args.mc_dialect, "mc_token": args.mc_token}
    bridge = replace(bridge, **{key: value for key, value in flags.items() if value is not None})
    bot = config.bot
    if args.bot:
        host, port = args.bot
        bot = replace(bot, host=host, port=port or bot.port)
    flags = {"username": args.bot_username, "auth": args.bot_auth, "version": args.bot_version, "reply": args.reply}
    bot = replace(bot, **{key: value for key, value in flags.items() if value is not None})
    config = _log_settings(args, replace(config, bridge=bridge, bot=bot, reader=_reader_settings(args, config)))
    config = _redis_settings(args, config)
    if not (bot.host or bot.realm) and args.reply == "private":
        raise JarvisError("--reply private needs the player bot (--bot HOST): the plugin API can only broadcast")
    return config, args.index or index


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
    from jarvis.bridge import Fresh, ReloadSkipped, check_bot, check_player_bot, check_server, check_token, serve
    from jarvis.assembly import assemble
    from jarvis.privacy import load_salt

    flags = argparse.Namespace(**vars(args))   # as given: a reload reads the file again under the same flags
    config, index = _serve_settings(flags, config)
    bot = config.bot if (config.bot.host or config.bot.realm) else None
    check_token(config.bridge.mc_token)
    if bot is not None:
        check_bot(bot)
    if index and not Path(index).is_dir():
        raise JarvisError(f"index: {index}: no such index directory (build it: jarvis index --corpus FILE --index DIR)")
    if args.redis is not None:
        from jarvis.network import RedisLink, redact

        RedisLink(config.redis)   # the URL and names are usable (NetworkError, one line, if not)
        answers = f"answers from the worker pool at {redact(config.redis.url)}"
    else:
        answers = f"index {index or 'the bundled corpus'}"
    if args.check:
        where = (f"the player bot, {bot.username} at {bot.realm or f'{bot.host}:{bot.port}'} ({bot.auth}), "
                 f"replies {bot.reply}" if bot else
                 f"the plugin API at {config.bridge.mc_host}:{config.bridge.mc_port} ({config.bridge.dialect})")
        print(f"{args.config or 'settings'}: OK: serve would join {where}; {answers}")
        return 0
    salt = load_salt(config.home)
    pool = None
    if args.redis is not None:   # a thin client: the worker pool answers (jarvis/network/)
        from jarvis.network import open_pool

        pool = open_pool(config, origin="serve", salt=salt)   # fails fast: no Redis, a refused password
    try:
        if bot is not None:
            check_player_bot(config.bridge, bot)   # fail fast, before loading anything heavy
        else:
            check_server(config.bridge)
    except BaseException:
        if pool is not None:
            pool.close()
        raise
    if index:
        args.index = index

    def reload() -> Fresh:
        if not args.config:
            raise ReloadSkipped("no settings file to read (serve --config FILE)")
        fresh, fresh_index = _serve_settings(flags, Config.from_env())
        others = [name for name in ("reader", "retrieval", "log", "redis")
                  if getattr(fresh, name) != getattr(config, name)]
        if fresh_index != index:
            others.append("index")
        return Fresh(fresh.bridge, fresh.bot if (fresh.bot.host or fresh.bot.realm) else None, tuple(others))

    from jarvis.questionlog import open_question_log

    question_log = open_question_log(config)
    if pool is None:
        _set_up_models(config)
    with (pool if pool is not None else assemble(config, _index_dir(args, config))) as answerer:
        return serve(config.bridge, answerer, max_questions=args.max_questions, bot=bot, salt=salt,
                     log_player_names=config.log.player_names, profiles=config.home / "microsoft",
                     reload=reload, question_log=question_log)


def cmd_worker(args: argparse.Namespace, config: Config) -> int:
    import signal

    from jarvis.assembly import assemble
    from jarvis.bridge.wire import format_event
    from jarvis.network import RedisLink, Worker

    index = None
    if args.config:
        from jarvis.settings_file import load_settings_file

        config, index = load_settings_file(Path(args.config), config)
    config = _redis_settings(args, replace(config, reader=_reader_settings(args, config)), required=True)
    if args.index or index:
        args.index = args.index or index
        if not Path(args.index).is_dir():
            raise JarvisError(f"index: {args.index}: no such index directory (build it: jarvis index --corpus FILE "
                              "--index DIR)")
    link = RedisLink(config.redis)
    link.check()                     # fail fast (a wrong password, no server), before loading anything heavy

    def reload():
        from jarvis.settings_file import load_settings_file

        fresh, fresh_index = load_settings_file(Path(args.config), Config.from_env())
        fresh = _redis_settings(args, replace(fresh, reader=_reader_settings(args, fresh)), required=True)
        others = [name for name in ("reader", "retrieval") if getattr(fresh, name) != getattr(config, name)]
        return fresh.redis, others + (["index"] if fresh_index != index else [])

    _set_up_models(config)
    with assemble(config, _index_dir(args, config)) as jarvis:
        worker = Worker(link, jarvis.ask, reader_name=jarvis.reader.name, name=args.name,
                        max_questions=args.max_questions, reload=reload if args.config else None)

        def on_signal(signum, frame):  # noqa: ARG001 - plain attributes only: no lock in a signal handler
            worker.request_reload() if signum == signal.SIGHUP else worker.stop()

        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        log.info(format_event("worker_started", worker=worker.name, redis=link.where, reader=jarvis.reader.name,
                              group=config.redis.group, stream=f"{config.redis.prefix}:questions"))
        try:
            worker.run()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            link.close()
    return 0


def cmd_report(args: argparse.Namespace, config: Config) -> int:
    from datetime import datetime, timezone

    from jarvis.questionlog import build_report, parse_since, read_log

    now = datetime.now(timezone.utc)
    since = parse_since(args.since, now)
    contents = read_log(Path(args.log) if args.log else config.question_log_path, config.log.backups)
    if contents.corrupt:
        log.warning("skipped %d corrupt line(s) of the question log", contents.corrupt)
    report = build_report(contents, since, now)
    paths = report.write_all(Path(args.out), remedy=UNANSWERED_REMEDY) if args.out else []
    if args.json:
        _emit_json(report.to_json())
    else:
        print(report.markdown(chart_name="chart.png" if paths else None, remedy=UNANSWERED_REMEDY))
        if paths:
            print(f"wrote {', '.join(str(p) for p in paths)}")
    return 0


def cmd_eval(args: argparse.Namespace, config: Config) -> int:
    from jarvis.eval import EvalOptions, run_eval

    if args.realbed and args.corpus:
        raise JarvisError("--realbed and --corpus both name the corpus: give one")
    corpus, questions = (Path(args.corpus) if args.corpus else config.bundled_corpus), config.questions
    if args.realbed:
        from jarvis.eval.realbed import realbed_corpus

        corpus = realbed_corpus(config.home, config.realbed_pages, config.crawl, progress=not args.quiet)
        questions = config.realbed_questions
    options = EvalOptions(
        questions=Path(args.questions) if args.questions else questions,
        index_dir=Path(args.index) if args.index else None,
        corpus=corpus,
        out_dir=Path(args.out),
        json_path=Path(args.json) if args.json else None,
        models=args.model or [config.reader.model],
        quick=args.quick,
        progress=not args.quiet,
    )
    _set_up_models(config)
    report = run_eval(options, config)
    print(report.table())
    return 0


def cmd_calibrate(args: argparse.Namespace, config: Config) -> int:
    from jarvis.eval.calibration import CalibrationOptions, run_calibration

    if args.realbed and args.corpus:
        raise JarvisError("--realbed and --corpus both name the corpus: give one")
    corpus = Path(args.corpus) if args.corpus else config.bundled_corpus
    if args.realbed:
        from jarvis.eval.realbed import realbed_corpus

        corpus = realbed_corpus(config.home, config.realbed_pages, config.crawl, progress=not args.quiet)
    config = replace(config, reader=_reader_settings(args, config))
    options = CalibrationOptions(questions=[Path(q) for q in args.questions], corpus=corpus,
                                 index_dir=Path(args.index) if args.index else None,
                                 out=Path(args.out) if args.out else None, precision=args.precision,
                                 progress=not args.quiet)
    _set_up_models(config)
    result = run_calibration(options, config, reader_name=config.reader.reader or None)
    print(result.summary())
    return 0


def cmd_train_reader(args: argparse.Namespace, config: Config) -> int:
    from jarvis.training import (ExamplesFileError, TrainOptions, TrainSettings, read_examples, train_on_examples,
                                 write_examples)

    if not args.questions and not args.examples:
        raise JarvisError("train-reader needs --questions FILE (or --examples FILE written by --write-examples)")
    if not args.write_examples and not args.out:
        raise JarvisError("train-reader needs --out DIR: where to write the trained reader")
    _set_up_models(config, answering=False)   # the trainer sets its own threads (--threads)
    try:
        dev = [e for path in args.dev_examples or [] for e in read_examples(Path(path))]
        prebuilt = [e for path in args.examples or [] for e in read_examples(Path(path))]
    except ExamplesFileError as exc:
        raise JarvisError(str(exc)) from exc
    train = TrainSettings(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
                          seed=args.seed, threads=args.threads, freeze_embeddings=not args.train_embeddings)
    sources = [Path(q).name for q in (args.questions or []) + (args.examples or [])]
    options = TrainOptions(out=Path(args.out or "."), base=_reader_folder(args.base or ""),
                           max_seq_len=args.max_seq_len, doc_stride=args.doc_stride, fraction=args.fraction,
                           train=train, sources=tuple(sources),
                           held_back=tuple(Path(q).name for q in args.held_back or []))
    examples = _training_examples(args, config, options) if args.questions else []
    if args.write_examples:
        write_examples(Path(args.write_examples), examples)
        print(f"wrote {len(examples)} examples of {len({e.question for e in examples})} questions "
              f"to {args.write_examples}")
        return 0
    result = train_on_examples(prebuilt + examples, options, progress=not args.quiet, dev=dev)
    print(result.summary())
    return 0


def cmd_average_readers(args: argparse.Namespace, config: Config) -> int:
    from jarvis.training import average_readers

    _set_up_models(config, answering=False)
    result = average_readers([_reader_folder(name) for name in args.readers], Path(args.out))
    print(result.summary())
    return 0


def _reader_folder(name: str) -> str:
    """A reader named on the command line: "jarvis" is Jarvis's own (shipped) reader, as for --reader."""
    return str(SHIPPED_READER) if name == "jarvis" else name


def _training_examples(args: argparse.Namespace, config: Config, options) -> list:
    """The SQuAD 2.0 shaped examples of ``--questions``: contexts from the corpora, wrong pages from a search."""
    from jarvis.crawler.corpus import read_corpus
    from jarvis.crawler.guide import read_guide
    from jarvis.eval.questions import load_questions
    from jarvis.eval.runner import corpus_key
    from jarvis.index import Searcher, ensure_index
    from jarvis.pipeline import normalize_question
    from jarvis.readers.ranking import PassageRanker
    from jarvis.training import GoldQuestion, build_examples, search_all

    corpora = [Path(c) for c in args.corpus or []]
    excluded: set[str] = set()
    if args.realbed:
        from jarvis.eval.realbed import heldout_titles, realbed_corpus

        corpora.insert(0, realbed_corpus(config.home, config.realbed_pages, config.crawl, progress=not args.quiet))
        excluded = {title.casefold() for title in heldout_titles(config.realbed_pages)}
    corpora = corpora or [config.bundled_corpus]
    questions = [GoldQuestion(q.text, q.expected_title, q.answers) for path in args.questions
                 for q in load_questions(path)]
    held_back = {normalize_question(q.text) for path in args.held_back or [] for q in load_questions(path)}
    kept = [q for q in questions if q.title.casefold() not in excluded and normalize_question(q.text) not in held_back]
    if len(kept) < len(questions):
        log.warning("left out %d questions about held-out pages or asked in a held-back set (never trained on)",
                    len(questions) - len(kept))
    # The wrong pages retrieval returns come from the first corpus's index.
    index_dir = Path(args.index) if args.index else ensure_index(
        corpora[0], config.home / "eval-indexes" / corpus_key(corpora[0]) / "tuned", profile="tuned",
        progress=not args.quiet)
    pages = [page for corpus in corpora for page in read_corpus(corpus)]
    pages += [page for guide in args.docs or [] for page in read_guide(guide)]
    with Searcher(index_dir, config.retrieval) as searcher:
        searcher.warm_up()
        hits = search_all(searcher, [q.text for q in kept], k=4, progress=not args.quiet)
    ranker = PassageRanker(config.reader.passages)
    examples, report = build_examples(kept, pages, ranker, search=lambda question, k: hits[question][:k],
                                      same_page=options.same_page, other_page=options.other_page,
                                      seed=options.train.seed, progress=not args.quiet)
    log.info("%s", report.summary())
    return examples


def cmd_sample_wiki(args: argparse.Namespace, config: Config) -> int:
    from jarvis_lab.samplewiki import serve_sample_wiki

    serve_sample_wiki(host=args.host, port=args.port)
    return 0


def cmd_realbed_wiki(args: argparse.Namespace, config: Config) -> int:
    from jarvis_lab.realbed import serve_realbed_wiki

    serve_realbed_wiki(pages=Path(args.pages), host=args.host, port=args.port)
    return 0


# --------------------------------------------------------------------------- parser


def _redis_flag(help_: str) -> dict:
    """The keywords of a --redis flag (ask, serve, worker)."""
    return dict(nargs="?", const="", default=None, metavar="URL",
                help=f"{help_}: redis://[:PASSWORD@]HOST[:PORT][/DB] or rediss:// (TLS); alone, the URL of "
                     "JARVIS_REDIS_URL (or [redis] url); a password is best kept in JARVIS_REDIS_URL or "
                     "JARVIS_REDIS_PASSWORD")


def _add_worker(p: argparse.ArgumentParser) -> None:
    """The flags of ``jarvis worker`` (besides the reader's)."""
    p.add_argument("--redis", **_redis_flag("the Redis of the pool"))
    p.add_argument("--index", metavar="DIR", help="index directory (default: the bundled corpus's)")
    p.add_argument("--config", metavar="FILE", default=None,
                   help="settings file (TOML: [redis], [reader], [retrieval], index); flags override it")
    p.add_argument("--name", default=None, metavar="NAME",
                   help="this worker's name in the consumer group (default: host-pid-random)")
    p.add_argument("--max-questions", type=_positive, default=None, metavar="N", help="stop after answering N questions")


def build_parser() -> argparse.ArgumentParser:
    common, reader_opts = _common_options(), _reader_options()
    parser = _Parser(prog="jarvis", parents=[common],
                     description="Jarvis: answers Minecraft questions from a wiki, in the terminal or in game chat.")
    subs = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def sub(name: str, handler: Callable[[argparse.Namespace, Config], int], help_: str,
            *extra_parents: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p = subs.add_parser(name, parents=[common, *extra_parents], help=help_, description=help_)
        p.set_defaults(handler=handler)
        return p

    for add_command in (_crawl_command, _index_command, _search_command, _ask_command, _serve_command,
                        _worker_command, _report_command, _eval_command, _calibrate_command, _train_reader_command,
                        _average_readers_command, _sample_wiki_command,
                        _realbed_wiki_command):
        add_command(sub, reader_opts)
    return parser


def _common_options() -> argparse.ArgumentParser:
    """The flags of every command."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv: debug)")
    common.add_argument("-q", "--quiet", action="store_true", help="no progress bars, errors only")
    common.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    return common


def _reader_options() -> argparse.ArgumentParser:
    """The reader flags of ask, serve and calibrate."""
    reader_opts = argparse.ArgumentParser(add_help=False)
    reader_opts.add_argument("--model", metavar="ID_OR_PATH", help="QA model: hub id or local directory "
                             f"(default: $JARVIS_MODEL or {Config().reader.model})")
    reader_opts.add_argument("--fallback", action="store_true", help="use the offline fallback reader, no QA model")
    reader_opts.add_argument("--reader", choices=sorted(READERS), default=None,
                             help="answer with this reader (default: the QA model, else the offline fallback)")
    reader_opts.add_argument("--int8", action=argparse.BooleanOptionalAction, default=None,
                             help="dynamic int8 quantization of the QA model on a CPU, about 2.7x faster "
                                  "(default: on; --no-int8 for full precision)")
    reader_opts.add_argument("--backend", choices=READER_BACKENDS, default=None,
                             help="what runs the QA model on a CPU: onnx (exported once, onnxruntime) or torch "
                                  f"(default: {Config().reader.backend}; a GPU always runs torch)")
    reader_opts.add_argument("--token-budget", type=_non_negative, default=None, metavar="TOKENS",
                             help="tokens the QA model reads per question, chosen passages first "
                                  f"(default: the reader's own, else {DEFAULT_TOKEN_BUDGET}; "
                                  "0: every paragraph of the top pages)")
    reader_opts.add_argument("--max-paragraphs", type=_positive, default=None, metavar="N",
                             help="read only the N paragraphs of the top pages that best match the question")
    reader_opts.add_argument("--answer-threshold", type=_probability, default=None, metavar="P",
                             help="state an answer only when its confidence is at least P, else say \"not sure\" and "
                                  f"point to the page (default: the one chosen with the reader's confidence model)")
    reader_opts.add_argument("--confidence-model", metavar="FILE", default=None,
                             help="the confidence model to use (default: the reader's own, see jarvis calibrate)")
    return reader_opts


def _crawl_command(sub: Callable[..., argparse.ArgumentParser], reader_opts: argparse.ArgumentParser) -> None:
    p = sub("crawl", cmd_crawl, "crawl a MediaWiki site into a corpus JSONL file")
    p.add_argument("--start", required=True, metavar="URL", help="article URL to start from, e.g. https://minecraft.wiki/w/Cow")
    p.add_argument("--out", required=True, metavar="FILE", help="corpus JSONL to write")
    p.add_argument("--max-pages", type=_positive, default=None, metavar="N", help="stop after N stored pages")
    p.add_argument("--delay", type=float, default=None, metavar="S",
                   help="seconds between requests to the host, raised by its robots.txt's Crawl-delay (default: "
                        "none for a wiki on this machine: localhost, 127.0.0.0/8, ::1; "
                        f"{POLITE_DELAY:g} s, or its Crawl-delay, for any other host)")
    p.add_argument("--workers", type=_positive, default=Config().crawl.workers, metavar="N",
                   help="fetch threads (default: %(default)s)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted crawl of --out")
    p.add_argument("--update", action="store_true",
                   help="only what changed since the last crawl of --out (MediaWiki API recent changes; "
                        "without an API: conditional requests)")
    p.add_argument("--index", metavar="DIR", default=None,
                   help="then update this search index from --out (incremental: only changed pages)")
    p.add_argument("--no-api", action="store_true", help="follow links even where the wiki has an API")
    p.add_argument("--user-agent", default=None, help="override the crawler's User-Agent")
    p.add_argument("--ignore-robots", action="store_true", help="do not obey robots.txt (only for your own sites)")
    p.add_argument("--site", metavar="NAME", default=None,
                   help="the wiki's name, recorded on every page (default: as the wiki states it)")
    p.add_argument("--tables", choices=list(TABLE_MODES), default=Config().crawl.tables,
                   help="content tables: drop them, make each row a sentence (\"Header: cell; ...\"), or a text "
                        "led by the row's subject (\"Raw Beef — Roll Chance: 100%%; ...\") (default: %(default)s)")


def _index_command(sub: Callable[..., argparse.ArgumentParser], reader_opts: argparse.ArgumentParser) -> None:
    p = sub("index", cmd_index, "build (or rebuild, atomically) a search index from corpora and a server guide")
    p.add_argument("--corpus", action=_CorpusAction, metavar="FILE", dest="corpora",
                   help="corpus JSONL of a wiki (repeatable: several wikis in one index)")
    p.add_argument("--site", action=_CorpusAction, metavar="NAME", dest="corpora",
                   help="the name of the wiki of the --corpus just before it (default: the name its crawl "
                        "recorded); two wikis of one index need different names")
    p.add_argument("--docs", metavar="DIR", default=None,
                   help="your server's own guide: every Markdown file under DIR becomes a page (site "
                        "\"server guide\"), preferred to the wiki when both answer about equally")
    p.add_argument("--docs-url", metavar="BASE", default=None,
                   help="the guide's address on your server's site: a page's link is BASE + its file's path "
                        "without .md (home.md -> BASE/home), unless its front matter gives a url "
                        "(default: none; replies name the page and the guide)")
    p.add_argument("--index", required=True, metavar="DIR", help="index directory")
    p.add_argument("--profile", choices=INDEX_PROFILES, default="tuned",
                   help="tuned: BM25F over title+aliases+content fused with page vectors (default); lexical: "
                        "the same BM25F alone, no vectors (no encoder: quicker to build, smaller); baseline: the "
                        "original's content-only BM25")
    p.add_argument("--procs", type=_positive, default=None, metavar="N", help="indexing processes (default: all cores)")
    words = p.add_mutually_exclusive_group()
    words.add_argument("--glossary", metavar="FILE", default=None,
                       help="your players' own words for wiki names (TSV: 'name<TAB>their word<TAB>wiki name'), "
                            "searched with over the bundled ones; kept by later builds of the index")
    words.add_argument("--no-glossary", action="store_true", help="remove the index's own players' words")


def _search_command(sub: Callable[..., argparse.ArgumentParser], reader_opts: argparse.ArgumentParser) -> None:
    p = sub("search", cmd_search, "show the top pages for a query")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--index", metavar="DIR", help="index directory (default: the bundled corpus's)")
    p.add_argument("-k", type=_positive, default=Config().top_k, metavar="N", help="number of pages (default: %(default)s)")
    p.add_argument("--json", action="store_true", help='print [{"title": ..., "score": ..., "url": ..., "site": ...}]')


def _ask_command(sub: Callable[..., argparse.ArgumentParser], reader_opts: argparse.ArgumentParser) -> None:
    p = sub("ask", cmd_ask, "answer one question", reader_opts)
    p.add_argument("question", metavar="QUESTION")
    p.add_argument("--index", metavar="DIR", help="index directory (default: the bundled corpus's)")
    p.add_argument("--sequential", action="store_true", help="read one paragraph per forward pass (the original's way)")
    p.add_argument("-k", type=_positive, default=Config().top_k, metavar="N", help="pages to read (default: %(default)s)")
    p.add_argument("--json", action="store_true",
                   help='print {"answer", "score", "title", "reader", "seconds", "site", ...}')
    p.add_argument("--no-log", action="store_true", help="do not add the question to the question log")
    p.add_argument("--redis", **_redis_flag("ask the worker pool instead of answering here (the same output)"))


def _serve_command(sub: Callable[..., argparse.ArgumentParser], reader_opts: argparse.ArgumentParser) -> None:
    p = sub("serve", cmd_serve, "run the in-game chat bridge: the RaspberryJuice API, or a player bot (--bot)",
            reader_opts)
    p.add_argument("--config", metavar="FILE", default=None,
                   help=f"settings file (TOML: {', '.join(f'[{table}]' for table in SETTINGS_TABLES)} with the "
                        "settings' names; flags override it; SIGHUP reloads it)")
    p.add_argument("--check", action="store_true", help="check the settings (--config FILE and flags) and exit")
    p.add_argument("--mc-host", default=None, metavar="H", help=f"server host (default: {Config().bridge.mc_host})")
    p.add_argument("--mc-port", type=_port, default=None, metavar="P", help=f"API port (default: {Config().bridge.mc_port})")
    p.add_argument("--mc-token", default=None, metavar="TOKEN",
                   help="RaspberryJuice 2.x's auth-token (better: the environment variable JARVIS_MC_TOKEN)")
    p.add_argument("--index", metavar="DIR", help="index directory (default: the bundled corpus's)")
    p.add_argument("--max-questions", type=_positive, default=None, metavar="N", help="stop after answering N questions")
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
    p.add_argument("--redis", **_redis_flag("send the questions to the worker pool (jarvis worker) instead of "
                                          "answering here; the bridge's chat rules stay the same"))
    p.add_argument("--reply", choices=("same", "private", "public"), default=None,
                   help="where the bot answers: a whisper by whisper and public chat in public (same), always by "
                        f"whisper (private), always in public (public) (default: {Config().bot.reply})")



def _worker_command(sub: Callable[..., argparse.ArgumentParser], reader_opts: argparse.ArgumentParser) -> None:
    _add_worker(sub("worker", cmd_worker, "answer questions from the Redis stream of the worker pool (any number "
                    "of workers, on any machines that reach Redis)", reader_opts))


def _report_command(sub: Callable[..., argparse.ArgumentParser], reader_opts: argparse.ArgumentParser) -> None:
    p = sub("report", cmd_report, "summarise the question log: questions answered, unsure and unknown, latency, "
                                  "the questions left unanswered or marked wrong, the most-read pages")
    p.add_argument("--since", default="7d", metavar="SPAN",
                   help="the questions of the last 7d, 24h, 30m, 2w, since a date (2026-11-01), or all "
                        "(default: %(default)s)")
    p.add_argument("--json", action="store_true",
                   help='print JSON: {"questions", "answered", "unsure", "unknown", "unanswered": '
                        '[{"question", "count"}], "marked_wrong", "latency", "pages", "per_day", ...}')
    p.add_argument("--out", metavar="DIR", default=None, help="also write report.md, chart.png and report.json here")
    p.add_argument("--log", metavar="FILE", default=None,
                   help="the question log (default: $JARVIS_HOME/log/questions.jsonl)")


def _eval_command(sub: Callable[..., argparse.ArgumentParser], reader_opts: argparse.ArgumentParser) -> None:
    p = sub("eval", cmd_eval, "run the IR, QA and full-system evaluations")
    p.add_argument("--questions", metavar="FILE", help="question file (default: eval/questions.txt)")
    p.add_argument("--index", metavar="DIR", help="tuned index to evaluate (default: built from --corpus)")
    p.add_argument("--corpus", metavar="FILE", help="corpus for the indexes (default: the bundled corpus)")
    p.add_argument("--realbed", action="store_true",
                   help="evaluate on the real-wiki test bed (../shared/realwiki, crawled through the local mirror "
                        "once) with its dev questions (eval/dev/realbed_dev.txt)")
    p.add_argument("--model", action="append", metavar="ID_OR_PATH",
                   help="QA model to evaluate (repeatable; default: the configured model)")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    p.add_argument("--out", default="eval-report", metavar="DIR",
                   help="directory for report.md, chart.png and questions.csv (default: %(default)s)")
    p.add_argument("--quick", action="store_true", help="only the default configuration, no side-by-side")


def _calibrate_command(sub: Callable[..., argparse.ArgumentParser], reader_opts: argparse.ArgumentParser) -> None:
    p = sub("calibrate", cmd_calibrate, "fit the confidence model of a reader on questions with gold answers",
            reader_opts)
    p.add_argument("--questions", action="append", required=True, metavar="FILE",
                   help="question file with gold answers (repeatable), e.g. eval/questions.txt")
    p.add_argument("--corpus", metavar="FILE", help="the corpus the questions are about (default: the bundled one)")
    p.add_argument("--realbed", action="store_true", help="the questions are about the real-wiki test bed")
    p.add_argument("--index", metavar="DIR", help="an index of that corpus (default: built under $JARVIS_HOME)")
    p.add_argument("--out", metavar="FILE",
                   help="where to write the model (default: $JARVIS_HOME/calibration/confidence-<reader>.json, "
                        "which jarvis then uses for that reader)")
    p.add_argument("--precision", type=_probability, default=0.8, metavar="P",
                   help="suggest the threshold at which stated answers are this share right (default: %(default)s)")


def _train_reader_command(sub: Callable[..., argparse.ArgumentParser], reader_opts: argparse.ArgumentParser) -> None:
    p = sub("train-reader", cmd_train_reader,
            "fine-tune an extractive reader on questions with gold spans (docs/reader-training.md)")
    p.add_argument("--questions", action="append", metavar="FILE",
                   help="question file (question|page title|gold|gold...), repeatable")
    p.add_argument("--examples", action="append", metavar="FILE",
                   help="SQuAD 2.0 shaped examples written by --write-examples (JSON lines, .gz allowed), repeatable")
    p.add_argument("--write-examples", metavar="FILE",
                   help="build the examples of --questions, write them to FILE and stop (train later, or elsewhere)")
    p.add_argument("--dev-examples", action="append", metavar="FILE",
                   help="examples to score the trained reader on (dev F1, in its card), repeatable")
    p.add_argument("--corpus", action="append", metavar="FILE",
                   help="a corpus the questions are about (repeatable; default: the bundled one)")
    p.add_argument("--realbed", action="store_true",
                   help="the questions are (also) about the real-wiki test bed; its held-out pages are never trained on")
    p.add_argument("--docs", action="append", metavar="DIR",
                   help="a server's own guide (Markdown pages, as `jarvis index --docs` reads it) the questions "
                        "are (also) about, repeatable")
    p.add_argument("--index", metavar="DIR",
                   help="an index of that corpus, for the wrong-page examples (default: built under $JARVIS_HOME)")
    p.add_argument("--held-back", action="append", metavar="FILE",
                   help="a question file judged on, never trained on: its questions are left out (repeatable)")
    p.add_argument("--base", metavar="MODEL",
                   help="encoder or QA checkpoint to start from: hub id, folder, or 'jarvis' (Jarvis's own reader; "
                        "default: the bundled all-MiniLM-L6-v2)")
    p.add_argument("--out", metavar="DIR", help="where to write the trained reader")
    p.add_argument("--epochs", type=float, default=2.0, metavar="N", help="passes over the data (default: %(default)s)")
    p.add_argument("--batch-size", type=_positive, default=32, metavar="N", help="windows per step (default: %(default)s)")
    p.add_argument("--learning-rate", type=float, default=1e-4, metavar="LR", help="peak learning rate (default: %(default)s)")
    p.add_argument("--max-seq-len", type=_positive, default=256, metavar="N",
                   help="tokens per window, question included (default: %(default)s)")
    p.add_argument("--doc-stride", type=_positive, default=96, metavar="N",
                   help="overlap of a long paragraph's windows (default: %(default)s)")
    p.add_argument("--fraction", type=_probability, default=1.0, metavar="F",
                   help="train on this share of the questions (a learning curve's points; default: all)")
    p.add_argument("--train-embeddings", action="store_true",
                   help="train the word embeddings too (free on a GPU; on a CPU a step costs about a third more)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="random seed (default: %(default)s)")
    p.add_argument("--threads", type=_non_negative, default=0, metavar="N", help="CPU threads (default: torch's)")


def _average_readers_command(sub: Callable[..., argparse.ArgumentParser], reader_opts: argparse.ArgumentParser) -> None:
    p = sub("average-readers", cmd_average_readers,
            "write the reader whose weights are the mean of two or more readers' (docs/reader-training.md)")
    p.add_argument("readers", nargs="+", metavar="READER",
                   help="reader folders trained from the same base (weights, or only the int8 export); "
                        "'jarvis': Jarvis's own reader")
    p.add_argument("--out", required=True, metavar="DIR", help="where to write the averaged reader")


def _sample_wiki_command(sub: Callable[..., argparse.ArgumentParser], reader_opts: argparse.ArgumentParser) -> None:
    p = sub("sample-wiki", cmd_sample_wiki, "serve the bundled sample wiki on localhost as MediaWiki-style HTML")
    p.add_argument("--port", type=_port, default=SAMPLE_WIKI_PORT, metavar="P", help="port (default: %(default)s; 0 picks a free one)")
    p.add_argument("--host", default=SAMPLE_WIKI_HOST, metavar="H", help="address to bind (default: %(default)s)")


def _realbed_wiki_command(sub: Callable[..., argparse.ArgumentParser], reader_opts: argparse.ArgumentParser) -> None:
    p = sub("realbed-wiki", cmd_realbed_wiki,
            "serve the real-wiki test bed (../shared/realwiki) on localhost as minecraft.wiki serves it")
    p.add_argument("--port", type=_port, default=REALBED_PORT, metavar="P", help="port (default: %(default)s; 0 picks a free one)")
    p.add_argument("--host", default=SAMPLE_WIKI_HOST, metavar="H", help="address to bind (default: %(default)s)")
    p.add_argument("--pages", default=str(REALBED_PAGES), metavar="FILE",
                   help="the test bed's pages.json.gz (default: ../shared/realwiki/pages.json.gz beside the repository)")


def _worded(exc: BaseException) -> str:
    """An error as one line in the CLI's words: the settings a library error names as their flags, the way
    out it suggests with the flags and commands that take it."""
    worded = getattr(exc, "worded", None)
    if worded is None:
        return first_line(exc)
    from jarvis.index.errors import BUILD, BUILD_ELSEWHERE, REBUILD
    from jarvis.settings_file import secret_remedy

    remedies = {**CRAWL_REMEDIES, BUILD: f"; build one with `{BUILD_COMMAND}`",
                REBUILD: f"; rebuild it with `{BUILD_COMMAND}`",
                BUILD_ELSEWHERE: f"; build one in a new directory with `{BUILD_COMMAND}` and use that",
                secret_remedy("bridge", "mc_token"): " (or serve --mc-token)"}
    text = str(worded(lambda setting: FLAGS.get(setting, setting), remedies)).strip()
    return text.splitlines()[0] if text else first_line(exc)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    setup_logging(args.verbose, args.quiet)
    try:
        config = Config.from_env()
        return args.handler(args, config)
    except KeyboardInterrupt:
        print("jarvis: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the one place errors become messages
        if args.debug:
            raise
        user_error = isinstance(exc, (JarvisError, OSError)) or getattr(exc, "user_error", False)
        message = _worded(exc)
        if isinstance(exc, ModuleNotFoundError) and (exc.name or "").partition(".")[0] == "jarvis_lab":
            user_error, message = True, LAB_MISSING
        if user_error:
            print(f"jarvis {args.command}: error: {message}", file=sys.stderr)
            return 1
        print(f"jarvis {args.command}: internal error: {type(exc).__name__}: {message} "
              "(rerun with --debug for the traceback)", file=sys.stderr)
        return 3


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
