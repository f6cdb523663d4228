"""All of Jarvis's configuration in one place.

``Config.from_env()`` resolves the defaults, the environment (``JARVIS_HOME``,
``JARVIS_MODEL``, the secrets ``JARVIS_MC_TOKEN``, ``JARVIS_REDIS_URL``, ``JARVIS_REDIS_PASSWORD`` and
``JARVIS_PANEL_TOKEN``) and
the paths of the bundled data. The CLI builds one ``Config`` and passes it (or the settings inside it)
down; no stage reads the environment.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from jarvis.crawler.settings import CrawlSettings
from jarvis.index.settings import RetrievalSettings

PACKAGE_DIR = Path(__file__).resolve().parent
# The bundled default: the sample wiki (wikis/samplewiki) crawled into a corpus, shipped as data.
BUNDLED_CORPUS = PACKAGE_DIR / "data" / "sample_corpus.jsonl"

# A hub model Jarvis knows by name: what `--model` is most often given (with internet and the [models] extra).
# It answers only when asked for: a reader that is not Jarvis's own has no confidence fitted for it.
DEFAULT_MODEL = "deepset/roberta-base-squad2"
# Jarvis's own reader, trained on Minecraft questions (jarvis/training) and shipped in the package: the reader
# that answers by default, with or without internet and with any extra. Its folder holds the int8 ONNX model,
# the tokenizer, its card (jarvis-reader.json) and its model card (README.md).
SHIPPED_READER = PACKAGE_DIR / "readers" / "data" / "jarvis-minilm-qa"
READER_BACKENDS = ("onnx", "torch")  # what runs the span reader on a CPU (ReaderSettings.backend)
SAMPLE_WIKI_HOST = "127.0.0.1"   # `jarvis sample-wiki` binds here by default
SAMPLE_WIKI_PORT = 8080          # ... on this port; the bundled corpus's URLs name it too
# The real-wiki test bed (not part of the project: CC BY-NC-SA text kept beside the repository).
REALBED_PAGES = PACKAGE_DIR.parent.parent / "shared" / "realwiki" / "pages.json.gz"
REALBED_PORT = 8081              # `jarvis realbed-wiki` serves it here by default


def _default_home() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("jarvis", appauthor=False))


def _weights(**weights: float):
    return field(default_factory=lambda: dict(weights))


@dataclass(frozen=True)
class FallbackSettings:
    """Tuning of the offline fallback reader (jarvis/readers/fallback/): weights of the parts of a block's and a
    sentence's score, each part in [0, 1]. Developed on dev question sets, never on eval/questions.txt."""

    block_weights_minilm: dict = _weights(semantic=0.45, words=0.35, rank=0.1, lead=0.1)
    block_weights_lexical: dict = _weights(semantic=0.0, words=0.8, rank=0.1, lead=0.1)
    # A question with no word beyond the top page's subject ("what is a creeper?") asks for the
    # definition: the page's first block gets this lead weight instead.
    definition_lead_weight: float = 0.6
    # "where do glimmers spawn": the lead says where in a player's words (the biomes, the structures);
    # the Spawning section mostly says on what blocks and at what light. 0.35 on the dev sets: real bed
    # dev3 full F1 0.633 -> 0.657, dev2 0.474 -> 0.476, others unchanged; 0.5 lowers sample dev.
    place_lead_weight: float = 0.35
    # A block in a section that holds the kind of answer asked for ("Drops" for "what do X drop",
    # "Spawning" for "where"), or whose heading names a word of the question ("Taming" for "tame").
    section_weight: float = 0.25
    block_kind_weight: float = 0.15     # a block with a phrase of the kind asked for (a number, a place...)
    block_subject_weight: float = 0.15  # a block on the page of what the question is about
    sentence_weights: dict = _weights(block=0.55, words=0.3, position=0.15)
    type_weight: float = 0.3            # a sentence with a phrase of the kind asked for (times how surely:)
    sure_kind_match: float = 1.5        # ... a number in the measure's units, a tool with its material
    table_row_kind_match: float = 2.0   # ... a row of the table that lists such answers ("Drops")
    later_row_step: float = 0.05        # ... less for each earlier row of its drop table
    sentence_length_norm: float = 0.5   # BM25's b for sentences: full normalisation over-rewards short ones
    max_embedded: int = 8               # blocks embedded per question; the rest cannot win on words
    typed_blocks: int = 6               # typed questions read more blocks: list items rarely repeat the question
    plain_blocks: int = 3               # sentences of this many best blocks compete otherwise
    # Pages the retriever scored below this share of the top page's score are not read: a clear leader
    # is the page asked about, and the others only distract a sentence picker. Chosen on the dev sets
    # (full F1: real bed 0.515 -> 0.518, sample dev 0.368 -> 0.378); 0 reads every page given.
    min_page_share: float = 0.9


DEFAULT_TOKEN_BUDGET = 1536   # tokens a question, for readers whose card names none


def resolved_token_budget(setting: int | None, own: int | None = None) -> int:
    """The tokens a question is read with: the setting if one is set, else the reader's own, else the default."""
    if setting is not None:
        return setting
    return DEFAULT_TOKEN_BUDGET if own is None else own


@dataclass(frozen=True)
class PassageSettings:
    """How jarvis/readers/passages.py ranks the candidate passages before the token budget cuts them."""

    bm25_weight: float = 1.0            # the passage's BM25 against the question, relative to the best
    dense_weight: float = 0.6           # cosine similarity of question and passage embeddings (if any)
    section_weight: float = 1.0         # the passage's section matches the question's kind (drops -> Drops),
                                        # times the page's weight
    heading_weight: float = 0.5         # the question's words in the section's headings ("... on peaceful")
    content_weight: float = 0.3         # holds what a how-long / how-many question asks for (a duration, a number)
    page_weight: float = 0.8            # the page: its retrieval score relative to the top page, over (1 + rank)
    lead_weight: float = 0.5            # a page's lead paragraphs (first ones most), times the page's weight
    title_weight: float = 0.3           # ... more when the question names the page
    dense_candidates: int = 48          # only the best N by the other parts are embedded (bounds its cost)


@dataclass(frozen=True)
class PlacementSettings:
    """jarvis/readers/placement.py: a candidate read in a table row or in a section that never holds what the
    question asks for gives way to one read in prose under a section that holds it; one read in a list's opening
    sentence gives way to any other; the same answer on two pages is cited from the higher-ranked."""

    enabled: bool = True                # off: the reader's candidates as read
    # How far below the best candidate's margin (its logit margin over no-answer) the well-placed one may be.
    # Chosen on the fitting writers' questions (w1-w6 and realbed_dev2/4 samples, 637): of the 14 misplaced
    # answers with a well-placed candidate, switching never lowered F1 up to a gap of 8 (6 within 6: +0.49 F1
    # in all), and lowered it in each case from 9 up; 6 keeps a margin below that.
    slack: float = 6.0


@dataclass(frozen=True)
class ReaderSettings:
    model: str = ""                     # a hub id or local directory asked for by name; "": Jarvis's own reader
    reader: str = ""                    # a name of jarvis.readers.READERS; "": the span reader of `model` if one is
                                        # named, else the offline reader (`fallback`: Jarvis's own)
    max_seq_len: int = 384              # tokens per window (question + context)
    doc_stride: int = 128               # overlap between windows of a long paragraph
    max_answer_tokens: int = 30         # longest span considered
    batch_size: int = 16                # windows per forward pass
    no_answer_margin: float = 0.0       # a span must beat the null score by this much
    sequential: bool = False            # the original's one-paragraph-per-pass reading
    max_paragraphs: int | None = None   # paragraph pre-ranking: read only the best N (None: all)
    cache_size: int = 256               # answers kept per index version
    # The offline reader, when the QA model's weights cannot be had: jarvis (Jarvis's own, shipped in the
    # package; the sentence reader fallback:auto if its file is missing) | auto | minilm | lexical.
    fallback: str = "jarvis"
    fallback_tuning: FallbackSettings = field(default_factory=FallbackSettings)
    # CPU threads of the process's models (torch's and the span reader's onnxruntime sessions), set once by the
    # entry point (jarvis/runtime.py; 0: the machine's cores, at most 8).
    threads: int = 0
    # Dynamic int8 quantization of the span reader on a CPU: ~2.7x faster (bench/bench_reader.py), the
    # only way to the 1.5 s target on 2 cores; a GPU, when present, is used instead (no quantization).
    quantize: bool = True
    # What runs the span reader on a CPU: "onnx" (exported once, onnxruntime; in int8 it takes less CPU
    # time and memory than torch's int8: 1.2 vs 1.4 CPU s, 0.97 vs 1.34 GB a question on the real bed,
    # bench/bench_reader.py) or "torch". A GPU always runs torch.
    backend: str = "onnx"
    export_dir: str = ""                # where ONNX exports are cached ("": <model directory>/onnx)
    # Passage selection (jarvis/readers/passages.py): the tokens the span reader may read per question,
    # question and special tokens of every window included. The budget, not a paragraph count,
    # bounds the cost of a question. 0: read every paragraph of the top pages. None: the reader's own (a trained
    # reader's card carries the budget chosen for it on dev sets, docs/eval/reader/token-budget.md), else
    # DEFAULT_TOKEN_BUDGET.
    token_budget: int | None = None
    passages: PassageSettings = field(default_factory=PassageSettings)
    placement: PlacementSettings = field(default_factory=PlacementSettings)
    # Where a "not sure" reply points: "answer", the page of the unsure answer itself (its sentence quoted), or
    # "top", the page retrieval ranked first (the reader's best candidate on it, else its passage that best
    # fits the question). With page retrieval (v0.5), on 162 held-back style questions, both pointed to the page
    # that answers for 0.52 of the unsure replies. With passage retrieval the page of the best passage does far
    # better: on the choice sets (1,254 questions, 293 unsure) "top" points to the answering page for 0.56 of
    # them, "answer" for 0.39.
    unsure_page: str = "top"
    # Honest replies: an answer whose confidence (the estimated probability that it is right, jarvis/confidence)
    # is below this is not stated as fact; Jarvis says it is not sure and points to the page. Chosen by
    # bench/fit_confidence.py on the dev sets' risk-coverage curve: the lowest threshold at which 80 % of the
    # stated answers to new questions are right (cross-validated). Held back, real bed dev5: 87.5 % right,
    # 32 % stated (docs/confidence.md).
    # None: the threshold chosen with the reader's confidence model (ConfidenceModel.threshold).
    answer_threshold: float | None = None
    # A threshold of its own for the answers read on one site's pages (a wiki's name, or "server guide"): over
    # answer_threshold and the model's own for that site (jarvis/confidence/policy.py). {}: none.
    site_thresholds: dict = field(default_factory=dict)
    confidence_model: str = ""          # a confidence model file to use instead of the reader's own
    # The reader reads the question as retrieval searched it: chat spellings spelt out and typos put right
    # against the index's words ("wat do endermn drop" is read as "what do enderman drop"; index/spelling.py).
    # Off: the question as typed (case and closing punctuation aside, question_text.reading_form).
    read_spelt: bool = True
    # Passage retrieval (an index built with a passage profile, index/profiles.py): the reranker that orders the
    # index's best passages before the reader reads them (jarvis/readers/rerank.py): "jarvis" (the shipped one;
    # none when it is not there: this version ships none, docs/retrieval.md says why), a reranker folder
    # (`jarvis train-reranker`), or "none" (the index's fused order).
    reranker: str = "jarvis"
    rerank_depth: int = 30              # the index's best passages the reranker orders (the reader reads the best)
    # The final choice among the reader's candidates: its margin over no answer plus this many times its
    # passage's score (0: the reader's order alone; without a reranker the score is the fusion's, and 0 is what
    # was measured and fitted). With the reranker trained this round, 2 had the best full F1 of {0, 0.25, 0.5, 1,
    # 2} on the choice sets (0.567 against 0.555 at 0; docs/retrieval.md): set it with such a reranker.
    rerank_weight: float = 0.0


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
    reconnect_min_delay: float = 0.25   # backoff after the second failed attempt (the first retries at once); doubles up to reconnect_max_delay
    io_timeout: float = 5.0             # seconds to open a connection, and to post the last lines when stopping
    max_reply_lines: int = 2            # chat lines per answer (the chat contract: at most 2); longer ones are shortened
    # The API's dialect: "upstream" (RaspberryJuice: no reply to chat.post/events.clear), "fork"
    # (RaspberryJuiceReload for Paper: `Success` replies, `\,` `\|` escaped in chat), or "auto":
    # learned from the server's first replies (a `Success` gives the fork away).
    dialect: str = "auto"
    # Slow is not dead: a server that lags (GC pause, chunk generation) answers late, on a live
    # connection. A reply later than slow_after is logged and counted as a stall, and waited for.
    slow_after: float = 5.0
    dead_after: float = 0.0             # seconds without a reply before a live connection is given up (0: never)
    keepalive: float = 10.0             # TCP keepalive probe interval: a vanished host is found in ~4x this (0: off)
    # RaspberryJuice 2.x's `auth-token` (its config.yml): sent as auth(<token>) before any other command.
    # A secret: from the environment (JARVIS_MC_TOKEN) or serve's token flag, never from a settings file, never logged.
    mc_token: str = field(default="", repr=False)


BOT_AUTHS = ("offline", "microsoft")
REPLY_MODES = ("same", "private", "public")   # same: a whisper by whisper, public chat in public


@dataclass(frozen=True)
class BotSettings:
    """The player-bot transport (jarvis/bridge/player.py): Jarvis joins the game server as a player."""

    host: str = ""                      # the game server; "" = no bot (the RaspberryJuice API instead)
    port: int = 25565
    username: str = "Jarvis"            # offline mode: the name; microsoft: the account's own name is used
    auth: str = "offline"               # "offline" (servers with online-mode=false) or "microsoft" (device code)
    version: str = ""                   # the game version to speak ("": ask the server)
    reply: str = "same"                 # REPLY_MODES: where an answer goes
    whisper_command: str = "msg"        # how replies are whispered: /msg (vanilla, Essentials), /tell, /w
    # Vanilla's chat limits: 256 characters a message (whisper command included); 2 messages an answer.
    max_message: int = 256
    max_messages: int = 2
    # Its own send rate, under vanilla's spam kick (each message or command adds 20 to a counter that
    # drops 1 a tick; over 200 kicks: a burst of 9, then 1 a second). Token bucket: burst, then the rate.
    messages_per_second: float = 0.8
    burst: int = 4
    # Chat that arrives as plain system text (chat plugins, older servers): which lines are a player's
    # public message or a whisper to the bot. Python regular expressions with the groups `name` and
    # `message`, tried in order; `{me}` stands for the bot's own name. Vanilla's own chat and whispers
    # arrive with their sender and type, and need no pattern.
    public_patterns: tuple[str, ...] = (
        r"^(?:[\[(][^\])]{1,32}[\])] ?)*<(?:[^<>]* )?(?P<name>[A-Za-z0-9_]{1,16})> (?P<message>.*)$",
        r"^(?:[\[(][^\])]{1,32}[\])] ?)*(?P<name>[A-Za-z0-9_]{1,16}) ?(?::|»|>>) (?P<message>.*)$",
    )
    whisper_patterns: tuple[str, ...] = (
        r"^(?P<name>[A-Za-z0-9_]{1,16}) whispers to you: (?P<message>.*)$",
        r"^\[(?:[^\]]* )?(?P<name>[A-Za-z0-9_]{1,16}) -> (?:me|{me})\] (?P<message>.*)$",
        r"^(?P<name>[A-Za-z0-9_]{1,16}) -> (?:me|{me}): (?P<message>.*)$",
    )
    join_timeout: float = 60.0          # seconds to join (microsoft sign-in: 15 minutes while a code waits)
    realm: str = ""                     # a Realm's name: join it (microsoft sign-in) instead of host:port


@dataclass(frozen=True)
class LogSettings:
    """The question log (jarvis/questionlog/): what `jarvis serve` and `jarvis ask` were asked and answered."""

    enabled: bool = True                # off: nothing is logged (ask's no-log flag)
    path: str = ""                      # "": $JARVIS_HOME/log/questions.jsonl
    max_bytes: int = 10_000_000         # the file is rotated before it grows past this
    backups: int = 5                    # rotated files kept: questions.jsonl.1 (newest) .. .5
    # Player names are personal data: by default the question log and serve's log lines keep a salted
    # hash (jarvis/privacy.py); True keeps the names as typed, for an admin who has a reason to and
    # says so to the players.
    player_names: bool = False
    feedback_window: float = 60.0       # seconds after an answer in which "jarvis, wrong" / "jarvis thanks" mark it


@dataclass(frozen=True)
class RedisSettings:
    """The worker pool (jarvis/network/): questions over a Redis stream, answered by `jarvis worker` processes.
    Used only when a command is told to use the pool: otherwise every command answers in its own process,
    and Redis is never needed."""

    # redis://[[user]:password@]host[:port][/db] or rediss:// (TLS). A URL that holds a password comes from
    # the environment (JARVIS_REDIS_URL) or the command line, never from a settings file; it is never logged.
    url: str = field(default="", repr=False)
    password: str = field(default="", repr=False)   # JARVIS_REDIS_PASSWORD: for a URL without one
    prefix: str = "jarvis"              # keys: <prefix>:questions (the stream), <prefix>:replies:<client>
    group: str = "workers"              # the workers' consumer group
    max_stream: int = 10_000            # questions kept in the stream (XADD MAXLEN ~): a bound, not a queue size
    max_replies: int = 1_000            # replies kept in one client's reply stream
    reply_ttl: float = 300.0            # seconds a client's reply stream lives after its last reply
    max_age: float = 120.0              # a question older than this is dropped with a log line, not answered late
    busy_after: float = 5.0             # seconds without an answer before the player is told "busy" (once)
    claim_after: float = 15.0           # a question pending this long on a silent worker is claimed by another
    max_attempts: int = 3               # deliveries of a question before it is answered "I don't know" (poison)
    max_waiting: int = 256              # questions one bridge may have in the pool at once
    connect_attempts: int = 5           # tries to reach Redis at start-up (0: forever); later: forever
    io_timeout: float = 5.0             # seconds to connect, and for a command's reply
    reconnect_min_delay: float = 0.25   # backoff after a lost connection, doubling ...
    reconnect_max_delay: float = 10.0   # ... up to this


PANEL_HOST = "127.0.0.1"   # `jarvis panel` binds here by default: put a reverse proxy with TLS in front of it
PANEL_PORT = 8470


@dataclass(frozen=True)
class PanelSettings:
    """The admin's web desk (jarvis/panel/): `jarvis panel`, and the ``[panel]`` table of the settings file."""

    host: str = PANEL_HOST
    port: int = PANEL_PORT
    # Where taught answers are written, as guide pages (Markdown with front matter): "" = the guide folder the
    # index was built with (`jarvis index --docs DIR`), else $JARVIS_HOME/guide (added to the index on the first one).
    guide: str = ""
    # The panel's token. A secret: from the environment (JARVIS_PANEL_TOKEN) only, never from a settings file,
    # never logged; the panel keeps only its SHA-256 and refuses to start without one.
    token: str = field(default="", repr=False)
    min_token_length: int = 16          # a shorter token is refused at start-up (it could be guessed)
    secure_cookie: bool = False         # the session cookie's Secure flag: true behind a TLS reverse proxy
    session_hours: float = 12.0         # a browser login lasts this long
    login_attempts: int = 5             # failed logins (or wrong bearer tokens) a client may make ...
    login_window: float = 300.0         # ... in this many seconds; then each further attempt waits before its check:
    login_delay: float = 1.0            # ... this long, doubling with each further failure ...
    login_max_delay: float = 30.0       # ... up to this (one guess per 30 s; the right token gets in after the wait)
    # How many proxies in front of the panel set X-Forwarded-For/-Proto (werkzeug's ProxyFix): 0 = none (the
    # client's address is the socket's; behind nginx or Caddy, 1, so that the login limit counts clients, not the proxy).
    trusted_proxies: int = 0
    # A stated answer with a confidence below this is shown as "likely wrong" (the "needs you" view). On the sample
    # wiki's dev2 questions with Jarvis's own reader (bench/likely_wrong.py): 62 % of the flagged stated answers are
    # wrong against 16 % of all stated answers, and 62 % of the wrong ones are flagged (docs/panel.md).
    likely_wrong_below: float = 0.75
    since: str = "30d"                  # the window of the Overview page (as `jarvis report --since`)
    threads: int = 4                    # waitress's worker threads
    # No longer used: taught answers need no index build (jarvis/taught.py). Still read, so that older settings
    # files load.
    build_timeout: float = 300.0


@dataclass(frozen=True)
class Config:
    home: Path = field(default_factory=_default_home)
    top_k: int = 3
    index_profile: str = "tuned"
    crawl: CrawlSettings = field(default_factory=CrawlSettings)
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    reader: ReaderSettings = field(default_factory=ReaderSettings)
    bridge: BridgeSettings = field(default_factory=BridgeSettings)
    bot: BotSettings = field(default_factory=BotSettings)
    log: LogSettings = field(default_factory=LogSettings)
    redis: RedisSettings = field(default_factory=RedisSettings)
    panel: PanelSettings = field(default_factory=PanelSettings)
    bundled_corpus: Path = BUNDLED_CORPUS
    realbed_pages: Path = REALBED_PAGES          # the real-wiki test bed (../shared/realwiki)

    @property
    def default_index_dir(self) -> Path:
        """Index of the bundled corpus, built on first use."""
        return self.home / "index"

    @property
    def question_log_path(self) -> Path:
        """The question log: LogSettings.path, else $JARVIS_HOME/log/questions.jsonl."""
        return Path(self.log.path).expanduser() if self.log.path else self.home / "log" / "questions.jsonl"

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "Config":
        env = dict(os.environ if env is None else env)
        config = cls()
        if env.get("JARVIS_HOME"):
            config = replace(config, home=Path(env["JARVIS_HOME"]).expanduser())
        # ONNX exports go to Jarvis's own cache, not into a (maybe read-only) model directory.
        config = replace(config, reader=replace(config.reader, export_dir=str(config.home / "onnx")),
                         retrieval=replace(config.retrieval, encoder_cache=str(config.home / "onnx")))
        if env.get("JARVIS_MODEL"):
            config = replace(config, reader=replace(config.reader, model=env["JARVIS_MODEL"]))
        if env.get("JARVIS_MC_TOKEN"):
            config = replace(config, bridge=replace(config.bridge, mc_token=env["JARVIS_MC_TOKEN"]))
        redis = {key: env[name] for key, name in (("url", "JARVIS_REDIS_URL"), ("password", "JARVIS_REDIS_PASSWORD"))
                 if env.get(name)}
        if redis:
            config = replace(config, redis=replace(config.redis, **redis))
        if env.get("JARVIS_PANEL_TOKEN"):
            config = replace(config, panel=replace(config.panel, token=env["JARVIS_PANEL_TOKEN"]))
        return config
