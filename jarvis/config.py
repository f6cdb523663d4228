"""All of Jarvis's configuration in one place.

``Config.from_env()`` resolves the defaults, the environment (``JARVIS_HOME``,
``JARVIS_MODEL``) and the paths of the bundled data. The CLI builds one ``Config``
and passes it (or the settings inside it) down; no stage reads the environment.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from crawler.settings import CrawlSettings

PACKAGE_DIR = Path(__file__).resolve().parent
SAMPLE_WIKI_DIR = PACKAGE_DIR / "samplewiki"
ARTICLES_DIR = SAMPLE_WIKI_DIR / "articles"
BUNDLED_CORPUS = SAMPLE_WIKI_DIR / "corpus.jsonl"
DEFAULT_QUESTIONS = PACKAGE_DIR.parent / "eval" / "questions.txt"

DEFAULT_MODEL = "deepset/roberta-base-squad2"
SAMPLE_WIKI_HOST = "127.0.0.1"   # `jarvis sample-wiki` binds here by default
SAMPLE_WIKI_PORT = 8080          # ... on this port; the bundled corpus's URLs name it too


def _default_home() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("jarvis", appauthor=False))


@dataclass(frozen=True)
class ReaderSettings:
    model: str = DEFAULT_MODEL          # hub id or local directory
    max_seq_len: int = 384              # tokens per window (question + context)
    doc_stride: int = 128               # overlap between windows of a long paragraph
    max_answer_tokens: int = 30         # longest span considered
    batch_size: int = 16                # windows per forward pass
    no_answer_margin: float = 0.0       # a span must beat the null score by this much
    sequential: bool = False            # the original's one-paragraph-per-pass reading
    max_paragraphs: int | None = None   # paragraph pre-ranking: read only the best N (None: all)
    cache_size: int = 256               # answers kept per index version
    fallback: str = "auto"              # offline reader when weights are missing: auto | minilm | lexical
    threads: int = 0                    # torch threads for the span reader (0: torch's default, at most 8)
    # Dynamic int8 quantization of the span reader on a CPU: ~2.7x faster (bench/bench_reader.py), the
    # only way to the 1.5 s target on 2 cores; a GPU, when present, is used instead (no quantization).
    quantize: bool = True


@dataclass(frozen=True)
class BridgeSettings:
    mc_host: str = "localhost"
    mc_port: int = 4711
    poll_interval: float = 0.25         # seconds between chat polls
    queue_size: int = 32                # questions waiting for the reader
    per_player_rate: float = 3.0        # seconds a player waits between questions
    max_line: int = 200                 # characters per chat line, [Jarvis] prefix included
    reconnect_max_delay: float = 30.0   # backoff cap when the server is gone
    connect_attempts: int = 5           # at start-up; 0 = keep trying forever
    reconnect_min_delay: float = 0.25   # first backoff delay; doubles up to reconnect_max_delay
    io_timeout: float = 5.0             # seconds to open a connection, and to post the last lines when stopping
    max_reply_lines: int = 3            # chat lines per answer; longer answers are shortened
    # The API's dialect: "upstream" (RaspberryJuice: no reply to chat.post/events.clear), "fork"
    # (RaspberryJuiceReload for Paper: `Success` replies, `\,` `\|` escaped in chat), or "auto":
    # learned from the server's first replies (a `Success` gives the fork away).
    dialect: str = "auto"
    # Slow is not dead: a server that lags (GC pause, chunk generation) answers late, on a live
    # connection. A reply later than slow_after is logged and counted as a stall, and waited for.
    slow_after: float = 5.0
    dead_after: float = 0.0             # seconds without a reply before a live connection is given up (0: never)
    keepalive: float = 10.0             # TCP keepalive probe interval: a vanished host is found in ~4x this (0: off)


@dataclass(frozen=True)
class Config:
    home: Path = field(default_factory=_default_home)
    top_k: int = 3
    index_profile: str = "tuned"
    crawl: CrawlSettings = field(default_factory=CrawlSettings)
    reader: ReaderSettings = field(default_factory=ReaderSettings)
    bridge: BridgeSettings = field(default_factory=BridgeSettings)
    bundled_corpus: Path = BUNDLED_CORPUS
    questions: Path = DEFAULT_QUESTIONS

    @property
    def default_index_dir(self) -> Path:
        """Index of the bundled corpus, built on first use."""
        return self.home / "index"

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "Config":
        env = dict(os.environ if env is None else env)
        config = cls()
        if env.get("JARVIS_HOME"):
            config = replace(config, home=Path(env["JARVIS_HOME"]).expanduser())
        if env.get("JARVIS_MODEL"):
            config = replace(config, reader=replace(config.reader, model=env["JARVIS_MODEL"]))
        return config
