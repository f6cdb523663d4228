"""The reader registry: one place that names the readers for the CLI, the eval and the pipeline."""
from __future__ import annotations

import logging

import pytest

from jarvis.config import ReaderSettings
from jarvis.readers import READERS, UnknownReaderError, load_reader


def test_every_named_reader_loads_and_says_what_it_is():
    assert {"span", "fallback:minilm", "fallback:lexical", "fallback:auto"} <= set(READERS)
    assert load_reader(ReaderSettings(model=""), name="fallback:lexical").name == "fallback:lexical"
    assert load_reader(ReaderSettings(model=""), name="fallback:minilm").name == "fallback:minilm"


def test_every_reader_offers_what_the_reader_protocol_declares():
    """The span reader and the sentence readers offer every member the pipeline calls (Reader, readers/base.py),
    with its parameters: the pipeline probes for nothing."""
    import inspect

    from jarvis.readers.base import Reader
    from jarvis.readers.fallback import SentenceReader
    from jarvis.readers.span import SpanReader

    methods = [name for name, member in vars(Reader).items() if not name.startswith("_") and callable(member)]
    assert set(methods) == {"warm_up", "read", "candidates"} and set(Reader.__annotations__) == {"name", "id", "needs"}
    for implementation in (SpanReader, SentenceReader):
        for name in methods:
            offered = inspect.signature(getattr(implementation, name)).parameters
            assert list(offered) == list(inspect.signature(getattr(Reader, name)).parameters), (implementation, name)
    reader = load_reader(ReaderSettings(model=""), name="fallback:lexical")
    assert reader.name and reader.id == "fallback:lexical" and reader.needs is not None


def test_no_model_configured_means_the_configured_fallback():
    assert load_reader(ReaderSettings(model="", fallback="lexical")).name == "fallback:lexical"


def test_an_unloadable_model_gives_way_to_the_fallback_with_a_warning(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="jarvis.readers"):
        reader = load_reader(ReaderSettings(model=str(tmp_path / "no-such-model"), fallback="lexical"))
    assert reader.name == "fallback:lexical"
    assert "QA model unavailable" in caplog.text


def test_a_reader_named_explicitly_does_not_fall_back(tmp_path):
    from jarvis.readers.base import ModelUnavailableError

    with pytest.raises(ModelUnavailableError):
        load_reader(ReaderSettings(model=str(tmp_path / "no-such-model")), name="span")


@pytest.mark.parametrize("settings, name", [(ReaderSettings(), "fallback:nope"),
                                            (ReaderSettings(model="", fallback="nope"), None)])
def test_an_unknown_reader_is_a_one_line_user_error(settings, name):
    with pytest.raises(UnknownReaderError) as info:
        load_reader(settings, name=name)
    assert "\n" not in str(info.value) and "nope" in str(info.value) and info.value.user_error


def test_the_fallback_shares_the_searchers_encoder():
    from jarvis.index.dense import DenseEncoder

    encoder = DenseEncoder.load()
    assert load_reader(ReaderSettings(model=""), encoder=encoder, name="fallback:minilm").encoder is encoder
