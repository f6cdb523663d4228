"""User errors as data, the shape every stage's errors share, and the crawler's own.

A user error is a problem the user can fix (a bad setting, a missing file, an unreachable host): a
front end prints it as one line, without a traceback (``user_error = True``). Library code never
speaks in a front end's words, so an error carries data: ``what`` is wrong, the ``setting`` at fault
(an argument or settings field, as the library calls it), the ``path`` concerned, and the ``remedy``
(a key of the class's ``REMEDIES``: the way out, as the library says it, the tail of the message). ``str(error)`` is the
library's wording ("max_pages must be at least 1, got 0"); ``error.worded(name, remedies)`` is a
front end's: jarvis/cli/main.py names the setting by the flag that sets it and says the way out with its
flags.

``UserError`` lives here, in the lowest stage, so that every stage can share it: index/ imports
crawler/ (never jarvis/), and jarvis.errors.JarvisError is one too.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, ClassVar, Mapping


class UserError(Exception):
    """A problem the user can fix, as data (see the module docstring)."""

    user_error = True
    # remedy -> the way out, as the tail of the message ("; build one with ..."); "{path}" stands for the path
    REMEDIES: ClassVar[Mapping[str, str]] = {}

    def __init__(self, what: str, *, setting: str | None = None, path: Path | None = None,
                 remedy: str | None = None) -> None:
        self.what = what
        self.setting = setting
        self.path = path
        self.remedy = remedy
        super().__init__(self.worded())

    def worded(self, name: Callable[[str], str] = str, remedies: Mapping[str, str] | None = None) -> str:
        """The message, the setting called ``name(setting)`` and the way out as ``remedies`` (else the
        class's ``REMEDIES``) say it."""
        text = f"{name(self.setting)} {self.what}" if self.setting else self.what
        if self.remedy is None:
            return text
        remedy = (remedies or {}).get(self.remedy, self.REMEDIES[self.remedy])
        return text + remedy.format(path=self.path)


# The ways out of a crawl that cannot go on.
FULL_CRAWL = "full crawl"          # an update that cannot be made: crawl everything instead
START_OVER = "start over"          # a resume that cannot be made: start a new crawl
RETRY_OR_START_OVER = "retry or start over"


class CrawlError(UserError):
    """A crawl that cannot start or go on: bad arguments, an unreachable start host, a start page that
    fails, nothing to resume or update. ``setting``: the argument of ``crawl()`` or the ``CrawlSettings``
    field at fault; ``path``: the corpus file."""

    REMEDIES = {
        FULL_CRAWL: "; crawl without update for a full crawl",
        START_OVER: "; crawl without resume to start over",
        RETRY_OR_START_OVER: "; try again later, or crawl without resume to start over",
    }
