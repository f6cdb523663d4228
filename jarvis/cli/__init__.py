"""The ``jarvis`` command: parses arguments and calls each stage's public function.

Kept thin on purpose: no stage logic lives here, and stages never import this package. Heavy stages
(torch, transformers, whoosh) are imported inside the subcommand that needs them, so ``jarvis --help``
stays instant.

- ``parser``: the parser, the flags shared by several commands and their types, and the command groups
  (``GROUPS``), listed by ``jarvis --help`` in that order;
- one module per group, each registering its subcommands: ``play`` (ask, serve, worker), ``build`` (crawl,
  index, search), ``admin`` (report), ``lab`` (eval, calibrate, train-reader, average-readers, sample-wiki,
  realbed-wiki). A new command goes into its group's ``register``; a new group into ``GROUPS``;
- ``settings``: which settings a command runs with (defaults, environment, settings file, flags), in one
  place, which a reload calls too;
- ``common``: what several commands do (the models' process-wide settings, the index folder, JSON out);
- ``main``: ``main()``: parse, run, and every error as one line.
"""
from jarvis.cli.main import main
from jarvis.cli.parser import INDEX_PROFILES, build_parser

__all__ = ["INDEX_PROFILES", "build_parser", "main"]
