"""User errors of the index stage (the CLI prints them as one line, see jarvis/errors.py).

index/ does not import jarvis, so it has its own classes with ``user_error = True``.
"""
from __future__ import annotations

from pathlib import Path

BUILD_HINT = "jarvis index --corpus FILE --index {dir}"


class SearchIndexError(Exception):
    """A problem with an index directory that the user can fix (named so it does not shadow IndexError)."""

    user_error = True


class IndexNotFoundError(SearchIndexError):
    """No index at the directory (missing or empty)."""

    def __init__(self, index_dir: Path, what: str = "no index") -> None:
        super().__init__(f"{what} at {index_dir}; build one with `{BUILD_HINT.format(dir=index_dir)}`")


class IndexCorruptError(SearchIndexError):
    """The directory looks like an index but cannot be opened."""

    def __init__(self, index_dir: Path, detail: str) -> None:
        super().__init__(f"index at {index_dir} is corrupt or incomplete ({detail}); "
                         f"rebuild it with `{BUILD_HINT.format(dir=index_dir)}`")


class IndexBusyError(SearchIndexError):
    """Another process kept the build lock for too long."""
