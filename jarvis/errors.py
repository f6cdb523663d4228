"""User errors: problems the user can fix (bad input, missing file, unreachable host).

The CLI prints any exception whose class has ``user_error = True`` as one line
(``jarvis ask: error: <message>``) and exits non-zero, without a traceback. ``JarvisError`` is a
``crawler.errors.UserError``, the shape the errors of every stage share: data (what, which setting,
which file, the way out) that the CLI words with its flag names. The pipeline stages crawler/ and
index/ never import jarvis. (eval/ measures the whole system, so it does import jarvis.)
"""
from __future__ import annotations

from jarvis.crawler.errors import UserError


class JarvisError(UserError):
    """A problem the user can fix."""


def first_line(exc: BaseException) -> str:
    """An exception as one line: its message's first line, or its type's name if it has none."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
