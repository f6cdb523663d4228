"""``jarvis``'s entry point: parse, run the command, and turn every error into one line on stderr.

Exit statuses: 0 done; 1 a user error (a bad file, a missing index, a refused password...); 2 a bad flag;
3 an internal error (--debug shows its traceback); 130 interrupted. Output cut short by a closed pipe
(``jarvis ask ... | head -1``) ends quietly.
"""
from __future__ import annotations

import os
import sys
from typing import Sequence

from jarvis.cli.common import BUILD_COMMAND
from jarvis.cli.parser import build_parser
from jarvis.config import Config
from jarvis.crawler.errors import FULL_CRAWL, RETRY_OR_START_OVER, START_OVER
from jarvis.errors import JarvisError, first_line
from jarvis.logs import setup_logging

# Library errors name the settings and arguments at fault as the library calls them (crawler.errors.UserError);
# this is what the flags that set them are called.
FLAGS = {"max_pages": "--max-pages", "workers": "--workers", "delay": "--delay", "tables": "--tables",
         "out_path": "--out", "update": "--update", "procs": "--procs", "since": "--since"}
# ... and the ways out they suggest, said with the flags (the tail of the message; {path}: the error's path).
CRAWL_REMEDIES = {
    FULL_CRAWL: "; run without --update for a full crawl",
    START_OVER: "; run without --resume to start over",
    RETRY_OR_START_OVER: "; try again later, or run without --resume to start over",
}
# A lab command (sample-wiki, realbed-wiki, eval --realbed) where the lab is not installed.
LAB_MISSING = ("a lab command: it needs the lab (the test wikis), installed from a checkout of the repository "
               "with `pip install -e lab` (`make setup` does)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    setup_logging(args.verbose, args.quiet)
    try:
        config = Config.from_env()
        status = args.handler(args, config)
        sys.stdout.flush()   # output cut short by a closed pipe shows here, not as a message at exit
        return status
    except KeyboardInterrupt:
        print("jarvis: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _pipe_closed()
    except Exception as exc:  # noqa: BLE001 - the one place errors become messages
        if args.debug:
            raise
        user_error = isinstance(exc, (JarvisError, OSError)) or getattr(exc, "user_error", False)
        message = _worded(exc)
        if isinstance(exc, ModuleNotFoundError) and (exc.name or "").partition(".")[0] == "jarvis_lab":
            user_error, message = True, LAB_MISSING
        if user_error:
            print(f"jarvis {args.command}: error: {message}", file=sys.stderr)
            return 1
        print(f"jarvis {args.command}: internal error: {type(exc).__name__}: {message} "
              "(rerun with --debug for the traceback)", file=sys.stderr)
        return 3


def _pipe_closed() -> int:
    """The reader of our output went away (``| head``): nothing more to say. What Python would still flush
    at exit goes nowhere, so no "Exception ignored" follows."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141   # as a shell reports a command ended by SIGPIPE (128 + 13)


def _worded(exc: BaseException) -> str:
    """An error as one line in the CLI's words: the settings a library error names as their flags, the way
    out it suggests with the flags and commands that take it."""
    worded = getattr(exc, "worded", None)
    if worded is None:
        return first_line(exc)
    from jarvis.index.errors import BUILD, BUILD_ELSEWHERE, REBUILD
    from jarvis.settings_file import secret_remedy

    remedies = {**CRAWL_REMEDIES, BUILD: f"; build one with `{BUILD_COMMAND}`",
                REBUILD: f"; rebuild it with `{BUILD_COMMAND}`",
                BUILD_ELSEWHERE: f"; build one in a new directory with `{BUILD_COMMAND}` and use that",
                secret_remedy("bridge", "mc_token"): " (or serve --mc-token)"}
    if type(exc).__module__.startswith("jarvis.training."):   # loaded already: the error came from it
        from jarvis.training.models import PARTS_FOLDER

        remedies[PARTS_FOLDER] = "; or pip download them into a folder and give it as --parts)"
    text = str(worded(lambda setting: FLAGS.get(setting, setting), remedies)).strip()
    return text.splitlines()[0] if text else first_line(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
