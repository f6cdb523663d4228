"""Shared fixtures: the bundled corpus's index (built once per session)."""
from __future__ import annotations

from pathlib import Path

import pytest

from jarvis.config import BUNDLED_CORPUS


@pytest.fixture(scope="session", autouse=True)
def quiet_model_loading() -> None:
    """The test process is an entry point: it sets the libraries' progress bars once, as jarvis/cli.py does."""
    from jarvis.runtime import hide_loading_bars

    hide_loading_bars()


@pytest.fixture(scope="session")
def bundled_corpus() -> Path:
    if not BUNDLED_CORPUS.is_file():
        pytest.fail(f"bundled corpus missing: {BUNDLED_CORPUS} (run `make corpus`)")
    return BUNDLED_CORPUS


@pytest.fixture(scope="session")
def bundled_index(tmp_path_factory, bundled_corpus) -> Path:
    """A real Whoosh index of the bundled corpus (tuned profile)."""
    from jarvis.index import build_index

    index_dir = tmp_path_factory.mktemp("bundled-index")
    build_index(bundled_corpus, index_dir, profile="tuned", progress=False)
    return index_dir


@pytest.fixture(scope="session")
def tiny_qa_model(tmp_path_factory) -> Path:
    """A tiny, randomly initialised RoBERTa QA model and its BPE tokenizer, saved like a downloaded
    model (2 layers, hidden 64, seed 0; see jarvis_lab.qa_models). Its answers are arbitrary but deterministic."""
    from jarvis_lab.qa_models import MINECRAFT_TEXT, build_qa_model

    return build_qa_model(tmp_path_factory.mktemp("tiny-qa"), MINECRAFT_TEXT, tokenizer_vocab=600)


@pytest.fixture(scope="session")
def realbed():
    """The real-wiki test bed's pages (``../shared/realwiki``, read at run time, never copied into the
    project); skips the test where it is not there (a fresh clone)."""
    from jarvis_lab.realbed import RealBed, RealBedMissing

    try:
        return RealBed.load()
    except RealBedMissing as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def serve_realbed():
    """Starts a test-bed site on a free port: ``serve_realbed(bed) -> base URL``; stopped at the end."""
    from jarvis.config import SAMPLE_WIKI_HOST
    from jarvis_lab.realbed import RealBedServer

    servers = []

    def start(bed) -> str:
        server = RealBedServer(SAMPLE_WIKI_HOST, 0, bed)
        server.serve_in_thread("realbed-wiki")
        servers.append(server)
        return server.base_url

    yield start
    for server in servers:
        server.shutdown()
