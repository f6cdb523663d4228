"""One pool of answerers for a network of game servers: questions over Redis Streams.

    with open_pool(config, origin="serve", salt=salt) as pool:   # a bridge, or `jarvis ask` through the pool
        serve(config.bridge, pool, ...)                          # the bridge hands it each question
        answer = pool.ask("what do cows drop?")                  # or asks and waits

    worker = PoolWorker(RedisLink(config.redis), jarvis.ask, reader_name=jarvis.reader.name)
    worker.run()                                                  # `jarvis worker`

Modules: link.py (the URL, its secret, the client, backoff), messages.py (what a question and a reply
look like on the streams), worker.py (the consumer group's side), client.py (the asking side: busy
notices, late answers, each answer delivered once). docs/network.md has the topology and the sizing.
Unless a command is told to use the pool, nothing here is imported: Redis is never needed to answer in one
process.
"""
from __future__ import annotations

from jarvis.config import Config
from jarvis.network.client import BUSY_NOTICE, Asked, PoolBusy, PoolClient, PoolStats, PoolTimeout
from jarvis.network.link import NetworkError, RedisLink, RedisURLError, parse_url, redact
from jarvis.network.worker import PoolWorker, WorkerStats


def open_pool(config: Config, *, origin: str = "serve", salt: bytes = b"") -> PoolClient:
    """A started PoolClient on ``config.redis`` (NetworkError, one line, when Redis cannot be used).
    Players travel as salted hashes (jarvis/privacy.py) unless ``[log] player_names`` says otherwise."""
    from jarvis.privacy import player_hash

    def player_id(name: str | None) -> str:
        if not name:
            return ""
        if config.log.player_names:
            return name
        if not salt:
            raise ValueError("a salt is needed to hash player names (jarvis.privacy.load_salt)")
        return player_hash(name, salt)

    return PoolClient(RedisLink(config.redis), player_id=player_id, origin=origin).start()


__all__ = ["BUSY_NOTICE", "Asked", "NetworkError", "PoolBusy", "PoolClient", "PoolStats", "PoolTimeout", "RedisLink",
           "RedisURLError", "PoolWorker", "WorkerStats", "open_pool", "parse_url", "redact"]
