"""The parser of ``jarvis``: the flags shared by several commands, their types, and the command groups.

Each group module (play, build, admin, lab) has a ``TITLE`` and a ``register(commands)`` that adds its
subcommands through :class:`Commands`; ``jarvis --help`` lists the commands by group, in ``GROUPS`` order
(what a server's admin runs first, the lab's last). ``-q``, ``-v`` and ``--debug`` work before the command
and after it.
"""
from __future__ import annotations

import argparse
import textwrap
from importlib import import_module
from typing import Callable

from jarvis.config import DEFAULT_MODEL, DEFAULT_TOKEN_BUDGET, READER_BACKENDS, Config
from jarvis.readers import READERS

# The command groups, in the order --help lists them: modules of this package.
GROUPS = ("play", "build", "admin", "lab")
# The index profiles (index/profiles.py's PROFILES, kept equal by a test): named here so that parsing
# the command line does not import the index stage.
INDEX_PROFILES = ("tuned", "lexical", "pages", "baseline")

Handler = Callable[[argparse.Namespace, Config], int]


# --------------------------------------------------------------------------- the flags' types


def _parsed(text: str, cast, what: str):
    """``cast(text)``, or an argparse error naming what was expected."""
    try:
        return cast(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None


def port(text: str) -> int:
    """argparse type: a TCP port number (0 = pick a free one, where that makes sense)."""
    value = _parsed(text, int, "a port number")
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 0-65535, got {value}")
    return value


def _whole_number(text: str, minimum: int, rule: str) -> int:
    value = _parsed(text, int, "a whole number")
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be {rule}, got {value}")
    return value


def probability(text: str) -> float:
    """argparse type: a number in [0, 1]."""
    value = _parsed(text, float, "a number")
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


def positive(text: str) -> int:
    """argparse type: an integer >= 1."""
    return _whole_number(text, 1, "at least 1")


def non_negative(text: str) -> int:
    """argparse type: an integer >= 0."""
    return _whole_number(text, 0, "0 or more")


class Parser(argparse.ArgumentParser):
    """argparse that reports a bad flag in one line instead of usage + error."""

    def error(self, message: str) -> None:  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


# --------------------------------------------------------------------------- shared flags


def common_options(after_command: bool = False) -> argparse.ArgumentParser:
    """The flags of every command. Given after the command, a flag left out keeps what was given before it
    (``jarvis -q index ...`` is ``jarvis index -q ...``): the subcommand's parser then has no defaults."""
    unset = {"default": argparse.SUPPRESS} if after_command else {}
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", help="more log output (-vv: debug)",
                        **(unset or {"default": 0}))
    common.add_argument("-q", "--quiet", action="store_true", help="no progress bars, errors only", **unset)
    common.add_argument("--debug", action="store_true", help="show tracebacks for errors", **unset)
    return common


def reader_options() -> argparse.ArgumentParser:
    """The reader flags of ask, serve, worker and calibrate."""
    reader_opts = argparse.ArgumentParser(add_help=False)
    reader_opts.add_argument("--model", metavar="ID_OR_PATH",
                             help="answer with this extractive QA model instead of Jarvis's own reader: a hub id "
                                  f"(e.g. {DEFAULT_MODEL}; downloaded once, needs internet and the [models] extra) "
                                  "or a local directory; its confidence is not fitted unless you fit it (jarvis "
                                  "calibrate) (default: $JARVIS_MODEL, else Jarvis's own reader, shipped: "
                                  "jarvis-minilm-qa)")
    reader_opts.add_argument("--fallback", action="store_true",
                             help="answer with the offline reader ([reader] fallback: Jarvis's own by default)")
    reader_opts.add_argument("--reader", choices=sorted(READERS), default=None,
                             help="answer with this reader (default: Jarvis's own, jarvis; span: the --model)")
    reader_opts.add_argument("--int8", action=argparse.BooleanOptionalAction, default=None,
                             help="dynamic int8 quantization of the QA model on a CPU, about 2.7x faster "
                                  "(default: on; --no-int8 for full precision)")
    reader_opts.add_argument("--backend", choices=READER_BACKENDS, default=None,
                             help="what runs the QA model on a CPU: onnx (exported once, onnxruntime) or torch "
                                  f"(default: {Config().reader.backend}; a GPU always runs torch)")
    reader_opts.add_argument("--token-budget", type=non_negative, default=None, metavar="TOKENS",
                             help="tokens the QA model reads per question, chosen passages first "
                                  f"(default: the reader's own, else {DEFAULT_TOKEN_BUDGET}; "
                                  "0: every paragraph of the top pages)")
    reader_opts.add_argument("--max-paragraphs", type=positive, default=None, metavar="N",
                             help="read only the N paragraphs of the top pages that best match the question")
    reader_opts.add_argument("--answer-threshold", type=probability, default=None, metavar="P",
                             help="state an answer only when its confidence is at least P, else say \"not sure\" and "
                                  "point to the page (default: the one chosen with the reader's confidence model)")
    reader_opts.add_argument("--confidence-model", metavar="FILE", default=None,
                             help="the confidence model to use (default: the reader's own, see jarvis calibrate)")
    return reader_opts


def redis_flag(help_: str) -> dict:
    """The keywords of a --redis flag (ask, serve, worker)."""
    return dict(nargs="?", const="", default=None, metavar="URL",
                help=f"{help_}: redis://[:PASSWORD@]HOST[:PORT][/DB] or rediss:// (TLS); alone, the URL of "
                     "JARVIS_REDIS_URL (or [redis] url); a password is best kept in JARVIS_REDIS_URL or "
                     "JARVIS_REDIS_PASSWORD")


# --------------------------------------------------------------------------- the commands


class Commands:
    """Where a group module adds its subcommands: ``add(name, handler, help, *parents)`` returns the
    subcommand's parser (every command has the common flags; ``reader`` holds the reader flags, a parent)."""

    def __init__(self, subparsers, common: argparse.ArgumentParser, reader: argparse.ArgumentParser) -> None:
        self._subparsers = subparsers
        self._common = common
        self.reader = reader
        self.listed: list[tuple[str, str]] = []     # (name, help) of the group being registered

    def add(self, name: str, handler: Handler, help_: str, *parents: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p = self._subparsers.add_parser(name, parents=[self._common, *parents], description=help_)
        p.set_defaults(handler=handler)
        self.listed.append((name, help_))
        return p


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="jarvis", parents=[common_options()], formatter_class=argparse.RawDescriptionHelpFormatter,
                    description="Jarvis: answers Minecraft questions from a wiki, in the terminal or in game chat.")
    subs = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser,
                                 help="one of the commands below; jarvis COMMAND --help lists its flags")
    commands = Commands(subs, common_options(after_command=True), reader_options())
    sections = []
    for name in GROUPS:
        group = import_module(f"jarvis.cli.{name}")
        commands.listed = []
        group.register(commands)
        sections.append(_section(group.TITLE, commands.listed))
    parser.epilog = "\n\n".join(sections)
    return parser


def _section(title: str, listed: list[tuple[str, str]]) -> str:
    """A group's lines in --help: its title, then each command with its help (wrapped, indented)."""
    lines = [f"{title}:"]
    for name, help_ in listed:
        lines.append(textwrap.fill(help_, width=100, initial_indent=f"  {name:<17}", subsequent_indent=" " * 19,
                                   break_on_hyphens=False))
    return "\n".join(lines)
