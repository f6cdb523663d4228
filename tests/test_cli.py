"""The command-line contract of DESIGN.md: subcommands, --help, one-line errors."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SUBCOMMANDS = ["crawl", "index", "search", "ask", "serve", "report", "eval", "sample-wiki", "realbed-wiki", "panel"]


def run_jarvis(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the installed CLI in a subprocess, as a user would."""
    return subprocess.run([sys.executable, "-m", "jarvis", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def test_top_level_help_lists_every_subcommand():
    result = run_jarvis("--help")
    assert result.returncode == 0
    for name in SUBCOMMANDS:
        assert name in result.stdout


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_subcommand_help(name):
    result = run_jarvis(name, "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: jarvis {name}")


@pytest.mark.parametrize("flags", [
    ["crawl", "--start", "http://x/w/A", "--out", "c.jsonl", "--max-pages"],
    ["index", "--corpus", "c.jsonl"],
    ["search", "cow", "-k", "many"],
    ["ask", "what?", "--no-such-flag"],
])
def test_bad_flags_give_one_line(flags):
    result = run_jarvis(*flags)
    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "error" in result.stderr


@pytest.mark.parametrize("question", ["", "   ", "\t\n"])
def test_empty_question_is_a_one_line_error(question, tmp_path):
    result = run_jarvis("ask", question, env={"JARVIS_HOME": str(tmp_path)})
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "question" in lines[0].lower(), result.stderr
    assert "Traceback" not in result.stderr


def test_missing_index_is_a_one_line_error(tmp_path):
    result = run_jarvis("search", "cow", "--index", str(tmp_path / "nowhere"))
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "jarvis index" in lines[0], result.stderr


def test_missing_corpus_is_a_one_line_error(tmp_path):
    result = run_jarvis("index", "--corpus", str(tmp_path / "none.jsonl"), "--index", str(tmp_path / "idx"))
    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "none.jsonl" in result.stderr


def test_realbed_wiki_without_its_pages_is_a_one_line_error(tmp_path):
    result = run_jarvis("realbed-wiki", "--port", "0", "--pages", str(tmp_path / "pages.json.gz"))
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "test bed is not there" in result.stderr and "pages.json.gz" in result.stderr


def test_unreachable_host_is_a_one_line_error(tmp_path):
    # Port 9 on loopback: nothing listens there, the connection is refused at once.
    result = run_jarvis("crawl", "--start", "http://127.0.0.1:9/w/Cow", "--out", str(tmp_path / "c.jsonl"),
                        "--delay", "0")
    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "127.0.0.1:9" in result.stderr


def test_serve_with_no_server_is_a_one_line_error(tmp_path, bundled_index):
    """With the default start-up retries: the retries are not shown, only the one-line error."""
    from jarvis.config import Config

    result = run_jarvis("serve", "--mc-port", "9", "--index", str(bundled_index), "--fallback", timeout=60)
    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert f"after {Config().bridge.connect_attempts} attempt(s)" in result.stderr


def test_config_honours_jarvis_home(tmp_path):
    from jarvis.config import Config

    config = Config.from_env({"JARVIS_HOME": str(tmp_path), "JARVIS_MODEL": "/models/qa"})
    assert config.default_index_dir == Path(tmp_path) / "index"
    assert config.reader.model == "/models/qa"


def test_the_cli_offers_every_index_profile():
    from jarvis.index.profiles import PROFILES
    from jarvis.cli import INDEX_PROFILES

    assert sorted(INDEX_PROFILES) == sorted(PROFILES)
    assert "lexical" in run_jarvis("index", "--help").stdout


def test_the_lexical_profile_builds_searches_and_answers(tmp_path, bundled_corpus):
    """`jarvis index --profile lexical`, as the README documents it: BM25F alone, no page vectors."""
    env = {"JARVIS_HOME": str(tmp_path / "home")}
    index_dir = tmp_path / "lex-index"
    built = run_jarvis("index", "--corpus", str(bundled_corpus), "--index", str(index_dir), "--profile", "lexical",
                       "-q", env=env)
    assert built.returncode == 0, built.stderr
    assert "profile lexical" in built.stdout, built.stdout
    generation = index_dir / (index_dir / "CURRENT").read_text().split()[0]
    assert json.loads((generation / "jarvis-index.json").read_text())["profile"] == "lexical"
    assert not list(generation.glob("vectors*"))            # no page vectors: nothing to encode
    hits = json.loads(run_jarvis("search", "where do blazes spawn", "--index", str(index_dir), "--json",
                                 env=env).stdout)
    assert hits[0]["title"] in ("Blaze", "Blaze rod") and "Blaze" in [h["title"] for h in hits]
    # Both offline readers answer from a lexical index: the default one (Jarvis's own) and the sentence reader.
    asked = run_jarvis("ask", "what do cows drop?", "--index", str(index_dir), "--fallback", "--json", "--no-log",
                       env=env)
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["title"] == "Cow"
    asked = run_jarvis("ask", "what do cows drop?", "--index", str(index_dir), "--reader", "fallback:minilm", "--json",
                       "--no-log", env=env)
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["title"] == "Cow" and "Leather" in answer["answer"]


def test_serve_help_lists_every_settings_table():
    from jarvis.settings_file import TABLES

    shown = run_jarvis("serve", "--help").stdout
    assert all(f"[{table}]" in shown for table in TABLES), shown
    assert "[log]" in shown


def test_help_lists_the_commands_by_group_the_admins_first():
    out = run_jarvis("--help").stdout
    groups = ["answer players:", "build the index:", "look after the server:", "the lab: measure, fit and train:"]
    at = [out.index(group) for group in groups]
    assert at == sorted(at)
    admin, lab = out[at[0]:at[3]], out[at[3]:]
    for name in ("ask", "serve", "worker", "crawl", "index", "search", "report"):
        assert f"\n  {name} " in admin
    for name in ("eval", "calibrate", "train-reader", "average-readers", "sample-wiki", "realbed-wiki"):
        assert f"\n  {name} " in lab


@pytest.mark.parametrize("argv", [["-q", "index", "--corpus", "c.jsonl", "--index", "ix"],
                                  ["index", "-q", "--corpus", "c.jsonl", "--index", "ix"]])
def test_quiet_works_before_or_after_the_command(argv):
    from jarvis.cli import build_parser

    args = build_parser().parse_args(argv)
    assert args.quiet and args.command == "index"


def test_verbose_and_debug_work_before_or_after_the_command():
    from jarvis.cli import build_parser

    parse = build_parser().parse_args
    assert parse(["-v", "report"]).verbose == 1 and parse(["report", "-vv"]).verbose == 2
    assert parse(["--debug", "report"]).debug and parse(["report", "--debug"]).debug
    assert (parse(["report"]).verbose, parse(["report"]).quiet, parse(["report"]).debug) == (0, False, False)


def test_quiet_before_the_command_hides_the_progress_bars(tmp_path, bundled_corpus):
    result = run_jarvis("-q", "index", "--corpus", str(bundled_corpus), "--index", str(tmp_path / "ix"),
                        "--profile", "lexical", "--procs", "1", timeout=600)
    assert result.returncode == 0, result.stderr
    assert "indexing" not in result.stderr and "%|" not in result.stderr


def test_a_closed_pipe_ends_quietly(tmp_path):
    """`jarvis report | head -1`: the reader went away; no "Broken pipe" error, no traceback."""
    log = tmp_path / "questions.jsonl"
    log.write_text("")
    child = subprocess.Popen([sys.executable, "-m", "jarvis", "report", "--log", str(log), "--since", "all"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "JARVIS_HOME": str(tmp_path)})
    child.stdout.close()
    err = child.stderr.read().decode()
    assert child.wait(timeout=120) == 141
    assert err == ""


def test_a_lab_command_without_the_lab_is_one_line(tmp_path):
    """An installed product has no lab: its commands say how to get it, in one line."""
    hide = tmp_path / "sitecustomize.py"
    hide.write_text("import sys\nclass _NoLab:\n    def find_spec(self, name, path=None, target=None):\n"
                    "        if name.split('.')[0] == 'jarvis_lab':\n            raise ModuleNotFoundError(name=name)\n"
                    "sys.meta_path.insert(0, _NoLab())\n")
    result = run_jarvis("sample-wiki", "--port", "0", env={"PYTHONPATH": str(tmp_path), "JARVIS_HOME": str(tmp_path)})
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install -e lab" in lines[0], result.stderr
