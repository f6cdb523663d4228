"""User errors: problems the user can fix (bad input, missing file, unreachable host).

The CLI prints any exception whose class has ``user_error = True`` as one line
(``jarvis ask: error: <message>``) and exits non-zero, without a traceback.
Stage packages (crawler/, index/, eval/) never import jarvis: they follow the same
convention with their own exception classes.
"""


class JarvisError(Exception):
    """A problem the user can fix."""

    user_error = True
