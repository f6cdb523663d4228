"""The on-disk layout of an index directory, and the atomic swap that makes rebuilds safe.

    DIR/
      CURRENT              one line: the live generation's name and build id (replaced with os.replace)
      gen-000007/          a complete Whoosh index + jarvis-index.json (its metadata), page vectors
                           and the user glossary it was built with (user-glossary.tsv, if any)
      gen-000006/          the previous generation, kept for searchers that still have it open
      .tmp-gen-000008/     a build in progress (never named by CURRENT)
      build.lock           held by the one process building

A build writes a whole new generation beside the live one, renames it into place, then
replaces CURRENT; a searcher reads CURRENT and only ever opens finished generations.
Older generations are deleted under the build lock, keeping the previous one.
"""
from __future__ import annotations

import json
import logging
import os
import re
import shutil
import time
import uuid
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from whoosh.util.filelock import FileLock

from jarvis.index.errors import IndexBusyError, IndexCorruptError, IndexNotFoundError, SearchIndexError

log = logging.getLogger(__name__)

POINTER_FILE = "CURRENT"
META_FILE = "jarvis-index.json"
LOCK_FILE = "build.lock"
USER_GLOSSARY_FILE = "user-glossary.tsv"   # a server's own players' words (index/glossary.py), if any
FORMAT = 1                       # bump when the stored fields or layout change incompatibly
GEN_RE = re.compile(r"^gen-(\d{6,})$")
TMP_PREFIX = ".tmp-"


@dataclass
class IndexMeta:
    """What a generation was built from; ensure_index compares it with the corpus."""

    profile: str
    profile_signature: str
    corpus_sha256: str
    pages: int
    glossary_sha256: str = ""        # of the user glossary built in ("" for none)
    sites: list = field(default_factory=list)     # the wikis' names (and "server guide"), source order
    sources: list = field(default_factory=list)   # [{"corpus": path, "site": name given} | {"docs": path[, "docs_url"]}]
    encoder: str = ""                # the passage encoder's id (dense.DenseEncoder.id) a dense passage profile embedded with
    build_id: str = ""
    built_at: str = ""
    format: int = FORMAT

    def __post_init__(self) -> None:
        self.build_id = self.build_id or uuid.uuid4().hex[:12]
        self.built_at = self.built_at or datetime.now(timezone.utc).isoformat(timespec="seconds")

    @classmethod
    def from_json(cls, data: dict) -> "IndexMeta":
        # Fields added later have defaults: an index built before them still opens.
        return cls(**{name: data[name] for name in cls.__dataclass_fields__ if name in data})


@dataclass(frozen=True)
class Generation:
    """One finished, immutable index build."""

    name: str
    path: Path
    meta: IndexMeta

    @property
    def version(self) -> str:
        """Changes whenever the live index changes (a new build gets a new build_id)."""
        return f"{self.name}-{self.meta.build_id}"


def write_text_atomically(path: Path, text: str) -> None:
    """Readers see the old file or the new one, never half of one."""
    tmp = path.with_name(f"{TMP_PREFIX}{path.name}.{uuid.uuid4().hex[:8]}")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def write_meta(gen_path: Path, meta: IndexMeta) -> None:
    write_text_atomically(gen_path / META_FILE, json.dumps(asdict(meta), indent=1) + "\n")


class IndexDir:
    """An index directory: finds the live generation, publishes new ones, cleans up old ones."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)

    # ------------------------------------------------------------------ reading

    def pointer(self) -> str | None:
        """CURRENT's content ("gen-000007 <build id>"), or None when there is none.

        Searchers compare it to notice a swap: the build id also tells apart two builds of the
        same name (a directory deleted and rebuilt while a bot was serving from it).
        """
        try:
            return (self.root / POINTER_FILE).read_text(encoding="utf-8").strip() or None
        except (FileNotFoundError, NotADirectoryError):
            return None
        except UnicodeDecodeError:
            return "<unreadable>"      # not a generation name: reported as a corrupt index

    def current_name(self) -> str | None:
        """The live generation's name, or None when there is no pointer."""
        pointer = self.pointer()
        return pointer.split()[0] if pointer else None

    def live(self, pointer: str | None = None) -> Generation:
        """The live generation (named by `pointer`, default: CURRENT's content); a user error when
        there is none or it is unusable."""
        if self.root.exists() and not self.root.is_dir():
            raise IndexNotFoundError(self.root, problem=f"{self.root} is a file, not an index",
                                     build_dir=self.fresh_sibling())
        if not self.root.is_dir():
            raise IndexNotFoundError(self.root)
        pointer = pointer or self.pointer()
        name = pointer.split()[0] if pointer else None
        if name is None:
            if self._generation_numbers():
                raise IndexCorruptError(self.root, f"no {POINTER_FILE} file")
            foreign = self._foreign()
            if foreign:   # a build refuses this directory: the hint names one it accepts
                raise IndexNotFoundError(self.root, problem=f"{self.root} holds no index but other files "
                                         f"(e.g. {foreign[0]!r})", build_dir=self.fresh_sibling())
            raise IndexNotFoundError(self.root, "no index" if any(self.root.iterdir()) else "empty directory")
        return self.open_generation(name)

    def live_or_none(self) -> Generation | None:
        try:
            return self.live()
        except SearchIndexError:
            return None

    def open_generation(self, name: str) -> Generation:
        if not GEN_RE.match(name):
            raise IndexCorruptError(self.root, f"{POINTER_FILE} names {name!r}")
        path = self.root / name
        try:
            meta = IndexMeta.from_json(json.loads((path / META_FILE).read_text(encoding="utf-8")))
        except FileNotFoundError:
            raise IndexCorruptError(self.root, f"{name}/{META_FILE} is missing") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise IndexCorruptError(self.root, f"{name}/{META_FILE} is unreadable: {exc}") from None
        if meta.format != FORMAT:
            raise IndexCorruptError(self.root, f"format {meta.format}, this Jarvis reads format {FORMAT}")
        return Generation(name=name, path=path, meta=meta)

    def _foreign(self) -> list[str]:
        """The names in the directory that are not a Jarvis index's, sorted ([] when there are none)."""
        ours = {POINTER_FILE, LOCK_FILE}
        try:
            return sorted(p.name for p in self.root.iterdir()
                          if p.name not in ours and not GEN_RE.match(p.name) and not p.name.startswith(TMP_PREFIX))
        except (FileNotFoundError, NotADirectoryError):
            return []

    def fresh_sibling(self) -> Path:
        """A directory beside this one that does not exist yet ("notes" -> "notes-index", "notes-index-2", ...):
        where to build an index when this path holds something else."""
        base = self.root if self.root.name else self.root.absolute()     # "." -> the folder's own name
        parent, stem = (base.parent, base.name) if base.name else (base, "jarvis")   # "/": inside it
        for number in range(1, 1000):
            candidate = parent / (f"{stem}-index" + (f"-{number}" if number > 1 else ""))
            if not candidate.exists():
                return candidate
        return parent / f"{stem}-index-{uuid.uuid4().hex[:8]}"

    def _generation_numbers(self) -> list[int]:
        try:
            names = [p.name for p in self.root.iterdir()]
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(int(m.group(1)) for m in map(GEN_RE.match, names) if m)

    # ------------------------------------------------------------------ building

    def check_buildable(self) -> None:
        """Refuse to build into a directory that holds something other than a Jarvis index."""
        if self.root.exists() and not self.root.is_dir():
            raise SearchIndexError(f"{self.root} is a file, not an index directory")
        if not self.root.is_dir():
            return
        foreign = self._foreign()
        if foreign:
            raise SearchIndexError(f"{self.root} is not empty and is not a Jarvis index "
                                   f"(it holds {foreign[0]!r}); choose a new or empty directory "
                                   f"(e.g. {self.fresh_sibling()})")

    @contextmanager
    def build_lock(self, timeout: float = 600.0) -> Iterator[None]:
        """One build at a time per directory, across processes (an OS file lock: freed if we crash)."""
        self.root.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.root / LOCK_FILE))
        deadline = time.monotonic() + timeout
        while not lock.acquire(blocking=False):
            if time.monotonic() >= deadline:
                raise IndexBusyError(f"another build of {self.root} has held {LOCK_FILE} for over "
                                     f"{timeout:.0f} s; wait for it or stop it")
            time.sleep(0.2)
        try:
            yield
        finally:
            lock.release()

    def new_build_path(self) -> tuple[Path, str]:
        """A fresh temporary directory for a build, and the generation name it will get."""
        numbers = self._generation_numbers()
        name = f"gen-{(numbers[-1] + 1 if numbers else 1):06d}"
        path = self.root / f"{TMP_PREFIX}{name}"
        if path.exists():          # left over by a crashed build (we hold the lock)
            shutil.rmtree(path)
        return path, name

    def publish(self, build_path: Path, name: str) -> Generation:
        """Make a finished build the live generation: rename it into place, then swap CURRENT."""
        os.replace(build_path, self.root / name)
        _fsync_dir(self.root)
        generation = self.open_generation(name)
        write_text_atomically(self.root / POINTER_FILE, f"{name} {generation.meta.build_id}\n")
        _fsync_dir(self.root)
        return generation

    def cleanup(self, keep_previous: int = 1) -> list[str]:
        """Delete stale temporary builds and all but the newest `keep_previous` retired generations.

        Call with the build lock held. The previous generation stays so a searcher that opened it
        just before the swap finishes its query; a deletion that fails (e.g. a file still open on
        Windows) is logged and retried at the next build.
        """
        match = GEN_RE.match(self.current_name() or "")
        current = int(match.group(1)) if match else None
        numbers = self._generation_numbers()
        older = [n for n in numbers if current is not None and n < current]
        orphans = [n for n in numbers if current is None or n > current]   # published by no one
        doomed = [f"gen-{n:06d}" for n in (older[:-keep_previous] if keep_previous else older) + orphans]
        doomed += [p.name for p in self.root.iterdir() if p.name.startswith(TMP_PREFIX)]
        removed = []
        for name in doomed:
            path = self.root / name
            try:
                shutil.rmtree(path) if path.is_dir() else path.unlink()
                removed.append(name)
            except OSError as exc:
                log.warning("could not remove old index generation %s: %s", self.root / name, exc)
        return removed


def _fsync_dir(path: Path) -> None:
    """Persist a rename (POSIX); a no-op where directories cannot be opened (Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
