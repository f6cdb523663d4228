"""User errors: problems the user can fix (bad input, missing file, unreachable host).

The CLI prints any exception whose class has ``user_error = True`` as one line
(``jarvis ask: error: <message>``) and exits non-zero, without a traceback.
The pipeline stages crawler/ and index/ never import jarvis: they follow the same convention
with their own exception classes. (eval/ measures the whole system, so it does import jarvis.)
"""


class JarvisError(Exception):
    """A problem the user can fix."""

    user_error = True


def first_line(exc: BaseException) -> str:
    """An exception as one line: its message's first line, or its type's name if it has none."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
