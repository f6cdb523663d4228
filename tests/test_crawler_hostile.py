"""The crawler against a hostile local site: errors, slow pages, loops, binaries, robots.txt, duplicates.

The crawl must finish, keep every good page (with the aliases that reached it), skip the bad ones
with a reason, never request what robots.txt forbids or what is no article, and request no page twice.
"""
from __future__ import annotations

import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from jarvis.crawler import CrawlError, CrawlSettings, crawl, read_corpus
from crawler_site import Reply, LocalSite, article_html, article_path, link

REPO = Path(__file__).resolve().parents[1]
HTML = {"Content-Type": "text/html; charset=UTF-8"}
FAST = CrawlSettings(delay=0, workers=4, connect_timeout=1.0, read_timeout=0.5, page_deadline=0.8, retries=2,
                     backoff=0.05, max_retry_after=2.0, max_page_bytes=200_000)

HOSTILE_LINKS = [
    "Good one", "Good two", "Server error", "Flaky", "Slow", "Trickle", "Loop A", "Loop B", "Image", "Binary page",
    "Malformed", "Garbage", "Secret", "Workbench", "Crafting table", "Crafting Table", "Cows", "Huge", "Latin",
    "Bad bytes", "Minecraft Dungeons", "Minecraft Dungeons:Cow", "Talk:Cow", "Category:Mobs", "Offsite", "Missing",
    "Golem", "Empty",
]


def article(title: str, paragraphs: list[str], **kwargs) -> Reply:
    return Reply(body=article_html(title, paragraphs, **kwargs).encode("utf-8"), headers=HTML)


def build_hostile_site(site: LocalSite) -> None:
    add = site.add
    add("/robots.txt", Reply(body=b"User-agent: *\nDisallow: /w/Secret\n", headers={"Content-Type": "text/plain"}))
    main_links = "".join(link(t) + " " for t in HOSTILE_LINKS)
    add(article_path("Main Page"), article(
        "Main Page", [f"Welcome. {main_links}",
                      '<a href="/w/Good_one?action=edit">edit</a> <a href="/w/Good_one#History">history</a> '
                      '<a href="http://example.invalid/w/Cow">elsewhere</a> <a href="/index.php?title=Cow">old</a>'],
        main_page=True))
    add(article_path("Good one"), article("Good one", ["The <b>good one</b> is a fine page.", link("Deep")]))
    add(article_path("Good two"), article("Good two", ["The <b>good two</b> page is fine too."], items=("a", "b")))
    add(article_path("Deep"), article("Deep", ["<b>Deep</b> is only linked from Good one."]))
    add(article_path("Server error"), Reply(500, b"<h1>Internal error</h1>", HTML))
    add(article_path("Flaky"), [Reply(503, b"busy", {"Retry-After": "1", **HTML}),
                                article("Flaky", ["<b>Flaky</b> works on the second try."])])
    add(article_path("Slow"), Reply(body=article_html("Slow", ["Too slow."]).encode(), headers=HTML, delay=1.5))
    add(article_path("Trickle"), Reply(body=[b"<html><body><p>drip</p>"] * 8, headers=HTML, chunk_delay=0.3))
    add(article_path("Loop A"), Reply(302, headers={"Location": article_path("Loop B")}))
    add(article_path("Loop B"), Reply(302, headers={"Location": article_path("Loop A")}))
    add(article_path("Image"), Reply(body=b"\x89PNG\r\n\x1a\n" + bytes(2000), headers={"Content-Type": "image/png"}))
    add(article_path("Binary page"), Reply(body=b"\x89PNG\r\n\x1a\n\x00\x00\x00" + bytes(500), headers=HTML))
    add(article_path("Malformed"), Reply(headers=HTML, body=(
        b'<html><head><link rel="canonical" href="/w/Malformed"><h1 id="firstHeading">Malformed</h1>'
        b'<div id="mw-content-text"><div class="mw-parser-output"><p>It is <b>broken <i>but readable</p>'
        b'<p>Tags & entities &amp; all < over the place<table><tr><td>cell</div></body>')))
    add(article_path("Garbage"), Reply(body=b"<<<>>> &&& not a wiki page at all", headers=HTML))
    add(article_path("Secret"), article("Secret", ["Robots may not read this."]))
    add(article_path("Workbench"), Reply(301, headers={"Location": article_path("Crafting table")}))
    table = ["A <b>crafting table</b> is a block with a 3 x 3 grid.", "It is made from planks."]
    add(article_path("Crafting table"), article("Crafting table", table))
    add(article_path("Crafting Table"), article("Crafting Table", table))  # a copy, not a redirect
    add(article_path("Cows"), article("Cow", ["A <b>cow</b> gives milk."], canonical=article_path("Cow"),
                                      redirected_from="Cows"))  # a wiki redirect: /w/Cow itself is never linked
    add(article_path("Huge"), Reply(body=[b"<p>" + b"x" * 65_000 + b"</p>"] * 30, headers=HTML, length=False))
    add(article_path("Latin"), Reply(body=article_html("Latin", ["Crème brûlée is not Minecraft food."])
                                     .replace('<meta charset="UTF-8">', "").encode("latin-1"),
                                     headers={"Content-Type": "text/html; charset=ISO-8859-1"}))
    add(article_path("Bad bytes"), Reply(body=article_html("Bad bytes", ["x"]).encode() + b"\xff\xfe\xfa", headers=HTML))
    add(article_path("Minecraft Dungeons"), article("Minecraft Dungeons", ["<b>Minecraft Dungeons</b> is a spin-off."],
                                                    categories=("Minecraft Dungeons",)))
    add(article_path("Minecraft Dungeons:Cow"), article("Minecraft Dungeons:Cow", ["A cow in Dungeons."], namespace=10000))
    add(article_path("Talk:Cow"), article("Talk:Cow", ["Talk."], namespace=1))
    add(article_path("Category:Mobs"), article("Category:Mobs", ["Mobs."], namespace=14))
    add(article_path("Offsite"), Reply(302, headers={"Location": "http://localhost:9/w/Cow"}))
    add(article_path("Golem"), article("Golem", ["<b>Golem</b> may refer to:"], items=(link("Iron golem"),),
                                       categories=("Disambiguation pages",)))
    add(article_path("Iron golem"), article("Iron golem", ["An <b>iron golem</b> guards villages."]))
    add(article_path("Empty"), article("Empty", []))


@pytest.fixture(scope="module")
def hostile_crawl(tmp_path_factory):
    out = tmp_path_factory.mktemp("hostile") / "corpus.jsonl"
    with LocalSite() as site:
        build_hostile_site(site)
        report = crawl(site.base_url + "/w/Main_Page", out, FAST, progress=False)
        yield site, report, {p.title: p for p in read_corpus(out)}


def test_hostile_site_keeps_exactly_the_good_pages(hostile_crawl):
    _, report, pages = hostile_crawl
    assert sorted(pages) == ["Cow", "Crafting table", "Deep", "Flaky", "Good one", "Good two", "Iron golem",
                             "Latin", "Malformed", "Minecraft Dungeons", "Minecraft Dungeons:Cow"]
    assert {title for title, page in pages.items() if page.page_kind == "spinoff"} == {"Minecraft Dungeons",
                                                                                   "Minecraft Dungeons:Cow"}
    assert pages["Crafting table"].aliases == ["Crafting Table", "Workbench"]
    assert pages["Cow"].aliases == ["Cows"]
    assert pages["Latin"].paragraphs == ["Crème brûlée is not Minecraft food."]
    assert pages["Malformed"].paragraphs[0] == "It is broken but readable"
    assert pages["Good two"].paragraphs == ["The good two page is fine too.", "a", "b"]
    assert report.stored == 11 and report.aliases == 3


def test_hostile_site_reports_every_skip_with_its_reason(hostile_crawl):
    _, report, _ = hostile_crawl
    assert report.skipped == Counter({
        "timeout": 2, "redirect loop": 2, "HTTP 500": 1, "not HTML (image/png)": 1, "not HTML (binary)": 1,
        "not a wiki page": 1, "robots.txt": 1, "too large": 1, "bad encoding": 1,
        "redirect off site": 1, "HTTP 404": 1, "disambiguation": 1, "no prose": 1, "main page": 1,
    })
    assert "skipped" in report.summary() and "timeout" in report.summary()


def test_hostile_site_is_crawled_politely(hostile_crawl):
    site, _, _ = hostile_crawl
    paths = Counter(site.paths())
    never = ["/w/Secret", "/w/Talk:Cow", "/w/Category:Mobs", "/w/Special:Random",
             "/w/Cow", "/w/Minecraft_Wiki:About"]
    assert not [p for p in never if p in paths]
    assert not [p for p in paths if "?" in p], "URLs with a query string are not articles"
    retried = {"/w/Server_error": 3, "/w/Slow": 3, "/w/Trickle": 3, "/w/Flaky": 2}
    assert {p: paths[p] for p in retried} == retried  # 1 try + FAST.retries, or until it worked
    assert all(n == 1 for p, n in paths.items() if p not in retried), "no page is requested twice"
    assert all(r.headers.get("User-Agent", "").startswith("JarvisBot/") for r in site.requests)


def test_retry_after_is_honoured(hostile_crawl):
    site, _, _ = hostile_crawl
    flaky = [r.at for r in site.requests if r.path == "/w/Flaky"]
    assert flaky[1] - flaky[0] >= 0.9  # the 503 said Retry-After: 1


def test_delay_spaces_requests_to_the_host(tmp_path):
    with LocalSite() as site:
        site.add_article("Main Page", [" ".join(link(f"Page {i}") for i in range(4))], main_page=True)
        for i in range(4):
            site.add_article(f"Page {i}", [f"Page {i} is an article."])
        crawl(site.base_url + "/w/Main_Page", tmp_path / "c.jsonl", CrawlSettings(delay=0.25, workers=4),
              progress=False)
        times = sorted(r.at for r in site.requests)
    assert len(times) == 6  # robots.txt, the main page, 4 pages
    # The crawler spaces request starts 0.25 s apart; the server's receipt times jitter with thread
    # scheduling on a busy machine, so check the whole span (an unthrottled crawl takes ~0.05 s).
    assert times[-1] - times[0] >= 5 * 0.25 * 0.9


def test_unreachable_start_host_is_a_one_line_user_error(tmp_path):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = CrawlSettings(delay=0, retries=1, backoff=0.01, connect_timeout=1.0)
    with pytest.raises(CrawlError) as caught:
        crawl(f"http://127.0.0.1:{port}/w/Main_Page", tmp_path / "c.jsonl", settings, progress=False)
    assert caught.value.user_error
    assert f"cannot reach http://127.0.0.1:{port}" in str(caught.value)
    assert not (tmp_path / "c.jsonl").exists()

    cli = subprocess.run([sys.executable, "-m", "jarvis", "crawl", "--start", f"http://127.0.0.1:{port}/w/Cow",
                          "--out", str(tmp_path / "c.jsonl")], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert cli.returncode == 1
    assert cli.stderr.strip().count("\n") == 0 and "cannot reach" in cli.stderr


@pytest.mark.parametrize("start, message", [
    ("ftp://127.0.0.1/w/Cow", "must be an http(s) URL"),
    ("/w/Missing", "HTTP 404"),
    ("/w/Garbage", "is not a MediaWiki page"),
])
def test_bad_start_pages_are_user_errors(tmp_path, start, message):
    with LocalSite() as site:
        site.add("/w/Garbage", Reply(body=b"<p>hello</p>", headers=HTML))
        url = start if "://" in start else site.base_url + start
        with pytest.raises(CrawlError, match=message.replace("(", r"\(").replace(")", r"\)")):
            crawl(url, tmp_path / "c.jsonl", FAST, progress=False)


def test_max_pages_stops_the_crawl(tmp_path):
    with LocalSite() as site:
        site.add_article("Main Page", [" ".join(link(f"Page {i}") for i in range(30))], main_page=True)
        for i in range(30):
            site.add_article(f"Page {i}", [f"Page {i} is an article."])
        report = crawl(site.base_url + "/w/Main_Page", tmp_path / "c.jsonl", FAST, max_pages=5, progress=False)
        requested = len(site.requests)
    assert report.stored == 5 and report.limit_reached
    assert len(read_corpus(tmp_path / "c.jsonl")) == 5
    assert requested < 20  # it stopped fetching, up to the pages already in flight


@pytest.mark.parametrize("out, message", [
    ("corpus", "is a directory"),
    ("notes.txt/corpus.jsonl", "is not a directory"),
])
def test_an_unwritable_out_path_fails_before_any_request(tmp_path, capsys, out, message):
    from jarvis.cli import main

    (tmp_path / "corpus").mkdir()
    (tmp_path / "notes.txt").write_text("my notes")
    before = sorted(p.name for p in tmp_path.iterdir())
    with LocalSite() as site:
        site.add_article("Main Page", ["Welcome."], main_page=True)
        with pytest.raises(CrawlError, match=message) as caught:
            crawl(site.base_url + "/w/Main_Page", tmp_path / out, FAST, progress=False)
        assert "\n" not in str(caught.value)
        assert main(["crawl", "--start", site.base_url + "/w/Main_Page", "--out", str(tmp_path / out), "-q"]) == 1
        requested = len(site.requests)
    assert requested == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no .tmp, no journal
    assert list((tmp_path / "corpus").iterdir()) == []


@pytest.mark.parametrize("settings, max_pages, setting, library, cli_flags, cli", [
    (CrawlSettings(delay=-1), None, "delay", "delay cannot be negative, got -1", ["--delay", "-1"],
     "--delay cannot be negative, got -1.0"),
    (FAST, 0, "max_pages", "max_pages must be at least 1, got 0", None, None),
])
def test_a_bad_setting_is_named_as_the_library_calls_it_and_the_cli_words_its_flag(
        tmp_path, capsys, settings, max_pages, setting, library, cli_flags, cli):
    """Library errors carry data (which setting); the CLI names the flag that sets it."""
    from jarvis.cli import main

    with pytest.raises(CrawlError) as caught:
        crawl("http://127.0.0.1:9/w/Cow", tmp_path / "c.jsonl", settings, max_pages=max_pages, progress=False)
    assert caught.value.setting == setting and str(caught.value) == library and "--" not in str(caught.value)
    if cli_flags is not None:   # (the CLI's own argument checks refuse --max-pages 0 before the crawler sees it)
        assert main(["crawl", "--start", "http://127.0.0.1:9/w/Cow", "--out", str(tmp_path / "c.jsonl"), "-q",
                     *cli_flags]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"jarvis crawl: error: {cli}"]
    assert not (tmp_path / "c.jsonl").exists()


def test_update_and_resume_together_are_refused_in_the_words_of_each(tmp_path, capsys):
    from jarvis.cli import main

    with pytest.raises(CrawlError, match="update and resume do not go together"):
        crawl("http://127.0.0.1:9/w/Cow", tmp_path / "c.jsonl", FAST, update=True, resume=True, progress=False)
    assert main(["crawl", "--start", "http://127.0.0.1:9/w/Cow", "--out", str(tmp_path / "c.jsonl"), "-q",
                 "--update", "--resume"]) == 1
    assert capsys.readouterr().err.strip() == ("jarvis crawl: error: --update and --resume do not go together: "
                                               "an update is short, run it again")
