"""User errors of the index stage, as data (crawler.errors.UserError: the CLI prints them as one line).

index/ does not import jarvis; its errors are ``crawler.errors.UserError``s like every stage's. The
way out of a missing or broken index is to build it: ``REMEDIES`` says so as the library would
(``index.build_index``); the CLI says it with its own command.
"""
from __future__ import annotations

from pathlib import Path

from jarvis.crawler.errors import UserError

BUILD = "build index"        # remedy: no index there yet
REBUILD = "rebuild index"    # remedy: an index that cannot be read
BUILD_ELSEWHERE = "build index elsewhere"   # remedy: the path holds something else; build in a new directory


class SearchIndexError(UserError):
    """A problem with an index directory that the user can fix (named so it does not shadow IndexError)."""

    REMEDIES = {BUILD: "; build one with index.build_index(corpus, {path})",
                REBUILD: "; rebuild it with index.build_index(corpus, {path})",
                BUILD_ELSEWHERE: "; build one in a new directory with index.build_index(corpus, {path}) and use that"}


class IndexNotFoundError(SearchIndexError):
    """No index at the directory (missing, empty, or holding something else).

    ``problem`` says what is there instead ("no index at DIR" by default). The way out is to build one
    there (``path``: the index directory), or, when a build would refuse ``index_dir`` (a file, or a folder
    of other files), in a new directory that it accepts (``build_dir``; then ``path`` is that directory)."""

    def __init__(self, index_dir: Path, what: str = "no index", build_dir: Path | None = None,
                 problem: str = "") -> None:
        self.index_dir = index_dir
        super().__init__(problem or f"{what} at {index_dir}", path=build_dir or index_dir,
                         remedy=BUILD if build_dir is None else BUILD_ELSEWHERE)


class IndexCorruptError(SearchIndexError):
    """The directory looks like an index but cannot be opened."""

    def __init__(self, index_dir: Path, detail: str) -> None:
        super().__init__(f"index at {index_dir} is corrupt or incomplete ({detail})", path=index_dir, remedy=REBUILD)


class IndexBusyError(SearchIndexError):
    """Another process kept the build lock for too long."""
