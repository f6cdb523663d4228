"""Several wikis in one index: each corpus names its wiki (the crawl records it, or the caller names it),
a clash of names is a one-line error, pages with one title on two wikis stay two pages, answers carry
their site. The real-bed tests skip where ../shared/realwiki is absent."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jarvis.crawler import CrawlSettings, crawl, read_corpus
from jarvis.crawler.corpus import Page, write_corpus
from jarvis.index import CorpusSource, Searcher, SiteClashError, build_index, load_sources, sources_with
from jarvis.config import Config, ReaderSettings
from jarvis_lab.realbed import RealBed
from jarvis.replies import answer_json, page_source

REALBED_STRIDE = 13        # one page in this many (title order), plus the pages below: about 150 pages
REALBED_PAGES = ["Cow", "Mooshroom", "Leather", "Raw Beef", "Pig", "Creeper", "Blaze"]


def run_jarvis(*args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jarvis", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "JARVIS_HOME": str(home)})


@pytest.fixture(scope="module")
def realbed_corpus(realbed, serve_realbed, tmp_path_factory) -> Path:
    """A crawl of part of the real bed through its mirror's API, as a user crawls the Minecraft Wiki."""
    titles = sorted(realbed.pages, key=str.casefold)[::REALBED_STRIDE] + [t for t in REALBED_PAGES if t in realbed.pages]
    if "Cow" not in titles:
        pytest.skip("the test bed has no Cow page")
    subset = RealBed({title: realbed.pages[title] for title in titles}, mtime=realbed.mtime)
    out = tmp_path_factory.mktemp("realbed") / "realbed.jsonl"
    report = crawl(serve_realbed(subset) + "/w/Main_Page", out, CrawlSettings(delay=0), progress=False)
    assert report.api and report.site == "Minecraft Wiki"
    return out


@pytest.fixture(scope="module")
def two_wikis(realbed_corpus, bundled_corpus, tmp_path_factory) -> Path:
    index_dir = tmp_path_factory.mktemp("two-wikis")
    build_index([CorpusSource(bundled_corpus, site="Sample wiki"), CorpusSource(realbed_corpus)], index_dir,
                progress=False)
    return index_dir


def test_a_crawl_records_the_wikis_name_on_every_page(realbed_corpus):
    pages = read_corpus(realbed_corpus)
    assert pages and {page.site for page in pages} == {"Minecraft Wiki"}   # siteinfo's sitename


def test_a_link_crawl_takes_the_name_from_the_page_and_a_given_name_wins(realbed, serve_realbed, tmp_path):
    subset = RealBed({title: realbed.pages[title] for title in ["Cow", "Pig"] if title in realbed.pages},
                     mtime=realbed.mtime)
    base = serve_realbed(subset)
    links = crawl(base + "/w/Main_Page", tmp_path / "links.jsonl", CrawlSettings(delay=0, use_api=False), progress=False)
    assert links.api is None and {p.site for p in read_corpus(tmp_path / "links.jsonl")} == {"Minecraft Wiki"}
    named = crawl(base + "/w/Main_Page", tmp_path / "named.jsonl", CrawlSettings(delay=0), progress=False,
                  site="Test bed")
    assert named.site == "Test bed" and {p.site for p in read_corpus(tmp_path / "named.jsonl")} == {"Test bed"}
    assert "(site: Test bed)" in named.summary()


def test_two_wikis_with_one_name_clash_until_one_is_renamed(realbed_corpus, bundled_corpus, tmp_path):
    with pytest.raises(SiteClashError, match="names its wiki 'Minecraft Wiki', as"):
        load_sources([bundled_corpus, realbed_corpus])
    home = tmp_path / "home"
    result = run_jarvis("index", "--corpus", str(bundled_corpus), "--corpus", str(realbed_corpus),
                        "--index", str(tmp_path / "index"), home=home)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert lines[0].startswith("jarvis index: error:") and "--site NAME after --corpus" in lines[0]
    assert not (tmp_path / "index" / "CURRENT").exists()            # nothing built
    ok = run_jarvis("index", "--corpus", str(bundled_corpus), "--site", "Sample wiki", "--corpus", str(realbed_corpus),
                    "--index", str(tmp_path / "index"), "-q", home=home)
    assert ok.returncode == 0, ok.stderr
    hits = json.loads(run_jarvis("search", "cow", "--index", str(tmp_path / "index"), "-k", "5", "--json",
                                 home=home).stdout)
    assert {(h["title"], h["site"]) for h in hits} >= {("Cow", "Sample wiki"), ("Cow", "Minecraft Wiki")}


def test_both_cow_pages_are_found_and_answers_carry_their_site(two_wikis):
    from jarvis.assembly import assemble

    with Searcher(two_wikis) as searcher:
        assert searcher.sites == ["Sample wiki", "Minecraft Wiki"]
        hits = searcher.search("cow", k=5)
        cows = {hit.site: hit for hit in hits if hit.title == "Cow"}
        assert set(cows) == {"Sample wiki", "Minecraft Wiki"}
        assert cows["Sample wiki"].url != cows["Minecraft Wiki"].url
        assert cows["Sample wiki"].paragraphs != cows["Minecraft Wiki"].paragraphs   # two pages, not one
    config = Config(reader=ReaderSettings(model="", cache_size=0))
    with assemble(config, two_wikis) as jarvis:
        answer = jarvis.ask("what do cows drop?")
    assert answer.found and answer.title == "Cow" and answer.site in {"Sample wiki", "Minecraft Wiki"}
    assert page_source(answer) == f"Cow, {answer.site}" and answer_json(answer)["site"] == answer.site


def test_a_page_of_one_wiki_changes_without_touching_the_same_title_on_the_other(tmp_path):
    def corpus(path: Path, site: str, cow: str) -> Path:
        write_corpus([Page("Cow", f"https://{site}/w/Cow", [cow], site=site),
                      Page("Pig", f"https://{site}/w/Pig", [f"A pig of {site}."], site=site)], path)
        return path

    first = corpus(tmp_path / "a.jsonl", "a.example", "A cow of wiki A gives milk.")
    second = corpus(tmp_path / "b.jsonl", "b.example", "A cow of wiki B gives beef.")
    sources = [CorpusSource(first), CorpusSource(second)]
    build_index(sources, tmp_path / "index", progress=False)
    corpus(second, "b.example", "A cow of wiki B gives leather.")
    stats = build_index(sources, tmp_path / "index", progress=False)
    assert stats.incremental and (stats.updated, stats.unchanged) == (1, 3), stats.summary()
    with Searcher(tmp_path / "index") as searcher:
        texts = {(h.site, h.paragraphs[0]) for h in searcher.search("cow", k=4) if h.title == "Cow"}
    assert texts == {("a.example", "A cow of wiki A gives milk."), ("b.example", "A cow of wiki B gives leather.")}


def test_a_corpus_without_a_name_is_named_after_its_host_and_crawl_updates_keep_the_other_sources(tmp_path):
    path = tmp_path / "old.jsonl"
    write_corpus([Page("Cow", "https://old.example/w/Cow", ["A cow."])], path)   # a crawl from before sites
    other = tmp_path / "other.jsonl"
    write_corpus([Page("Creeper", "https://mods.example/w/Creeper", ["A creeper."], site="Mod Wiki")], other)
    loaded = load_sources([path, other])
    assert loaded.sites == ["old.example", "Mod Wiki"]
    build_index([path, other], tmp_path / "index", progress=False)
    assert [s.path for s in sources_with(tmp_path / "index", path)] == [path.resolve(), other.resolve()]
    assert [s.path for s in sources_with(tmp_path / "index", tmp_path / "new.jsonl")] == [tmp_path / "new.jsonl"]
    with pytest.raises(SiteClashError, match="the name of the server guide"):
        write_corpus([Page("Cow", "https://x.example/w/Cow", ["A cow."], site="Server Guide")], tmp_path / "bad.jsonl")
        load_sources([tmp_path / "bad.jsonl", CorpusSource(other)] + [_guide(tmp_path)])


def _guide(tmp_path: Path):
    from jarvis.index import GuideSource

    (tmp_path / "guide").mkdir(exist_ok=True)
    (tmp_path / "guide" / "rules.md").write_text("# Rules\n\nBe kind.\n", encoding="utf-8")
    return GuideSource(tmp_path / "guide")
