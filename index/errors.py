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
    """No index at the directory (missing, empty, or holding something else).

    ``problem`` says what is there instead ("no index at DIR" by default); ``build_dir`` is where the hint
    says to build one when it cannot be ``index_dir`` itself (a file, or a folder of other files: a build
    refuses both, so the hint names a new directory that it accepts)."""

    def __init__(self, index_dir: Path, what: str = "no index", build_dir: Path | None = None,
                 problem: str = "") -> None:
        if build_dir is None:
            hint = f"build one with `{BUILD_HINT.format(dir=index_dir)}`"
        else:
            hint = f"build one in a new directory with `{BUILD_HINT.format(dir=build_dir)}` and use that"
        super().__init__(f"{problem or f'{what} at {index_dir}'}; {hint}")


class IndexCorruptError(SearchIndexError):
    """The directory looks like an index but cannot be opened."""

    def __init__(self, index_dir: Path, detail: str) -> None:
        super().__init__(f"index at {index_dir} is corrupt or incomplete ({detail}); "
                         f"rebuild it with `{BUILD_HINT.format(dir=index_dir)}`")


class IndexBusyError(SearchIndexError):
    """Another process kept the build lock for too long."""
