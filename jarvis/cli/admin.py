"""The admin's commands: report (what the players asked, and what Jarvis could not answer) and panel (the web
desk where the admin sees the same and teaches Jarvis)."""
from __future__ import annotations

import argparse
import logging
from pathlib import Path

from jarvis.cli.common import check_index_folder, emit_json, index_dir
from jarvis.cli.parser import Commands, port
from jarvis.cli.settings import command_settings
from jarvis.config import Config
from jarvis.errors import JarvisError

TITLE = "look after the server"
# What to do about the questions Jarvis could not answer (jarvis report).
UNANSWERED_REMEDY = "add a guide page (`jarvis index --docs`) or your players' words (`--glossary`)"
log = logging.getLogger(__name__)


def register(commands: Commands) -> None:
    _report_command(commands)
    _panel_command(commands)


def cmd_report(args: argparse.Namespace, config: Config) -> int:
    from datetime import datetime, timezone

    from jarvis.questionlog import build_report, parse_since, read_log

    now = datetime.now(timezone.utc)
    since = parse_since(args.since, now)
    contents = read_log(Path(args.log) if args.log else config.question_log_path, config.log.backups)
    if contents.corrupt:
        log.warning("skipped %d corrupt line(s) of the question log", contents.corrupt)
    report = build_report(contents, since, now)
    paths = report.write_all(Path(args.out), remedy=UNANSWERED_REMEDY) if args.out else []
    if args.json:
        emit_json(report.to_json())
    else:
        print(report.markdown(chart_name="chart.png" if paths else None, remedy=UNANSWERED_REMEDY))
        if paths:
            print(f"wrote {', '.join(str(p) for p in paths)}")
    return 0


def _report_command(commands: Commands) -> None:
    p = commands.add("report", cmd_report, "summarise the question log: questions answered, unsure and unknown, "
                     "latency, the questions left unanswered or marked wrong, the most-read pages")
    p.add_argument("--since", default="7d", metavar="SPAN",
                   help="the questions of the last 7d, 24h, 30m, 2w, since a date (2026-11-01), or all "
                        "(default: %(default)s)")
    p.add_argument("--json", action="store_true",
                   help='print JSON: {"questions", "answered", "unsure", "unknown", "unanswered": '
                        '[{"question", "count"}], "marked_wrong", "latency", "pages", "per_day", ...}')
    p.add_argument("--out", metavar="DIR", default=None, help="also write report.md, chart.png and report.json here")
    p.add_argument("--log", metavar="FILE", default=None,
                   help="the question log (default: $JARVIS_HOME/log/questions.jsonl)")


def cmd_panel(args: argparse.Namespace, config: Config) -> int:
    """`jarvis panel`: the admin's web desk (jarvis/panel/). Settings as every command's (cli/settings.py): the
    token from JARVIS_PANEL_TOKEN, the --config file's [panel] (and its index), then the flags."""
    from jarvis.panel import PanelPlan, serve_panel

    config, index = command_settings(args, config)
    if not config.panel.token:   # before any index is built or opened: no token, no panel
        raise JarvisError("no token: set JARVIS_PANEL_TOKEN (16 characters or more); the panel never starts without one")
    check_index_folder(index)
    args.index = index
    return serve_panel(PanelPlan(config, index_dir(args, config), Path(args.config) if args.config else None))


def _panel_command(commands: Commands) -> None:
    p = commands.add("panel", cmd_panel, "the admin's web desk: what players asked, what needs you, teach Jarvis "
                                         "(token: JARVIS_PANEL_TOKEN; docs/panel.md)")
    p.add_argument("--host", dest="panel_host", default=None, metavar="H",
                   help=f"address to bind (default: {Config().panel.host}; put a TLS reverse proxy in front)")
    p.add_argument("--port", dest="panel_port", type=port, default=None, metavar="P",
                   help=f"port (default: {Config().panel.port})")
    p.add_argument("--index", metavar="DIR", help="the index taught answers go into (default: the settings file's "
                                                  "index, else the bundled corpus's)")
    p.add_argument("--config", metavar="FILE", default=None,
                   help="settings file (TOML): its [panel], [log] and index; the Settings page writes to it")
