"""The corpus file format: a malformed corpus is a one-line error naming file and line, never a crash
or a silently wrong page; writing a corpus is atomic and leaves nothing behind when it fails."""
from __future__ import annotations

import json

import pytest

from jarvis.crawler.corpus import CorpusError, Page, read_corpus, write_corpus

GOOD = {"title": "Bed", "url": "http://127.0.0.1/w/Bed", "paragraphs": ["A bed sets the spawn point."]}


def corpus_file(tmp_path, *lines: bytes):
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def line(**fields) -> bytes:
    return json.dumps({**GOOD, **fields}).encode("utf-8")


def assert_corpus_error(path, needle: str) -> None:
    with pytest.raises(CorpusError) as info:
        read_corpus(path)
    message = str(info.value)
    assert info.value.user_error is True
    assert "\n" not in message
    assert f"{path}:2:" in message, message
    assert needle in message, message


def test_a_corpus_that_is_not_utf8_names_the_file_and_line(tmp_path):
    latin1 = json.dumps({**GOOD, "title": "Caf\u00e9"}, ensure_ascii=False).encode("latin-1")
    assert_corpus_error(corpus_file(tmp_path, line(), latin1), "not UTF-8")


@pytest.mark.parametrize("fields, needle", [
    ({"paragraphs": [1, 2]}, "paragraphs"),
    ({"paragraphs": "A bed sets the spawn point."}, "paragraphs"),
    ({"paragraphs": None}, "paragraphs"),
    ({"aliases": "Beds"}, "aliases"),
    ({"aliases": [["Beds"]]}, "aliases"),
    ({"title": 7}, "title"),
    ({"title": None}, "title"),
    ({"url": ["http://127.0.0.1/w/Bed"]}, "url"),
    ({"sha1": 12}, "sha1"),
])
def test_mistyped_fields_are_errors_naming_the_field(tmp_path, fields, needle):
    assert_corpus_error(corpus_file(tmp_path, line(), line(**fields)), needle)


@pytest.mark.parametrize("content", [b"[1, 2]", b'"a page"', b"null", json.dumps({"url": "u", "paragraphs": []}).encode()])
def test_a_line_that_is_not_a_page_object_is_an_error(tmp_path, content):
    assert_corpus_error(corpus_file(tmp_path, line(), content), "not a corpus page")


def test_optional_fields_default_and_good_pages_round_trip(tmp_path):
    minimal = json.dumps({"title": "Bed", "paragraphs": ["A bed sets the spawn point."]}).encode()
    [page] = read_corpus(corpus_file(tmp_path, minimal))
    assert (page.url, page.aliases) == ("", [])
    assert page.paragraphs == ["A bed sets the spawn point."] and page.sha1  # filled in from the content

    pages = [Page(title="Bed", url="u", paragraphs=["Un lit \u00e9clate dans le Nether."], aliases=["Beds"])]
    assert write_corpus(pages, tmp_path / "out.jsonl") == 1
    assert read_corpus(tmp_path / "out.jsonl") == pages


def test_a_failed_write_keeps_the_old_corpus_and_leaves_no_temp_file(tmp_path):
    out = tmp_path / "corpus.jsonl"
    write_corpus([Page(title="Bed", url="u", paragraphs=["old"])], out)

    def pages_then_failure():
        yield Page(title="Cake", url="u", paragraphs=["new"])
        raise OSError("No space left on device")

    with pytest.raises(OSError, match="No space left"):
        write_corpus(pages_then_failure(), out)
    assert [p.title for p in read_corpus(out)] == ["Bed"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.jsonl"]


def test_writing_onto_a_directory_fails_and_leaves_no_temp_file(tmp_path):
    (tmp_path / "out").mkdir()
    with pytest.raises(IsADirectoryError):
        write_corpus([Page(title="Bed", url="u", paragraphs=["a bed"])], tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_the_structure_keys_are_optional_and_round_trip(tmp_path):
    old = json.dumps({"title": "Bed", "paragraphs": ["A bed sets the spawn point.", "Beds explode in the Nether."]})
    new = json.dumps({**GOOD, "title": "Cow", "paragraphs": ["A cow is a mob.", "Cows drop leather."],
                      "sections": [[], ["Drops", "On death"]], "kind": "article", "categories": ["Passive mobs"]})
    pages = read_corpus(corpus_file(tmp_path, old.encode(), new.encode()))
    assert pages[0].sections == [[], []] and pages[0].page_kind == "article" and pages[0].categories == []
    assert pages[1].sections == [[], ["Drops", "On death"]] and pages[1].categories == ["Passive mobs"]
    write_corpus(pages, tmp_path / "again.jsonl")
    again = read_corpus(tmp_path / "again.jsonl")
    assert [(p.sections, p.page_kind, p.categories) for p in again] == [(p.sections, p.page_kind, p.categories) for p in pages]
    assert "categories" not in json.loads((tmp_path / "again.jsonl").read_text().splitlines()[0])


@pytest.mark.parametrize("fields, needle", [
    ({"sections": [["Drops"]] * 2}, '"sections" has 2 entries for 1 paragraphs'),
    ({"sections": ["Drops"]}, '"sections" must be a list of lists of strings'),
    ({"sections": [[1]]}, '"sections" must be a list of lists of strings'),
    ({"sections": "Drops"}, '"sections" must be a list of lists of strings'),
    ({"kind": "fan fiction"}, '"kind" must be one of'),
    ({"kind": 3}, '"kind" must be a string'),
    ({"categories": "Mobs"}, "categories"),
])
def test_bad_structure_keys_are_one_line_errors_naming_the_line(tmp_path, fields, needle):
    assert_corpus_error(corpus_file(tmp_path, line(), line(**fields)), needle)
