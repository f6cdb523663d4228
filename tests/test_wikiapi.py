"""The server-side Action API (wikis/actionapi) over the sample wiki's page store: answers shaped as
MediaWiki 1.43's with formatversion=2, limits and continuation, recent changes, maxlag, errors."""
from __future__ import annotations

import json

import pytest



@pytest.fixture(scope="module")
def site():
    from jarvis_lab.samplewiki.server import SampleWikiSite
    from jarvis_lab.samplewiki.site import SampleWiki

    return SampleWikiSite(SampleWiki.load(), "http://wiki.test")


def call(site, **params) -> dict:
    answer = site.api.respond({"format": "json", "formatversion": "2", **params})
    assert answer.status == 200 and answer.content_type.startswith("application/json")
    return json.loads(answer.body)


def follow(site, **params) -> list[dict]:
    """Every answer of a continued query, as a client sends the continue object back."""
    answers, cont = [], {}
    for _ in range(200):
        data = call(site, **params, **cont)
        answers.append(data)
        if "continue" not in data:
            return answers
        cont = data["continue"]
    pytest.fail("the continuation never ended")


def test_allpages_continues_in_order_and_filters_redirects(site):
    answers = follow(site, action="query", list="allpages", apnamespace="0", apfilterredir="nonredirects", aplimit="7")
    titles = [p["title"] for a in answers for p in a["query"]["allpages"]]
    everything = call(site, action="query", list="allpages", apfilterredir="nonredirects", aplimit="max")
    assert titles == [p["title"] for p in everything["query"]["allpages"]]
    assert len(answers) > 10 and titles == sorted(titles, key=lambda t: t.replace(" ", "_"))
    assert "Workbench" not in titles and "Crafting table" in titles          # a redirect, its target
    redirects = call(site, action="query", list="allpages", apfilterredir="redirects", aplimit="max")
    assert "Workbench" in [p["title"] for p in redirects["query"]["allpages"]]


def test_generator_with_props_merges_to_the_same_facts_whatever_the_limits(site):
    params = dict(action="query", generator="allpages", gapfilterredir="nonredirects", prop="info|categories|redirects",
                  rdnamespace="0")
    small = follow(site, **params, gaplimit="20", cllimit="7", rdlimit="5")
    large = follow(site, **params, gaplimit="max", cllimit="max", rdlimit="max")
    assert len(large) == 1 and len(small) > 8

    def merged(answers):
        pages: dict[str, dict] = {}
        for data in answers:
            for page in data["query"]["pages"]:
                entry = pages.setdefault(page["title"], {"redirects": [], "categories": []})
                entry["redirects"] += [r["title"] for r in page.get("redirects", [])]
                entry["categories"] += [c["title"] for c in page.get("categories", [])]
        return pages

    assert merged(small) == merged(large)
    table = merged(large)["Crafting table"]
    assert {"Workbench", "Crafting tables"} <= set(table["redirects"])
    assert all(c.startswith("Category:") for c in table["categories"])


def test_titles_are_normalized_and_redirects_resolved(site):
    data = call(site, action="query", titles="workbench|Cow|No such page", redirects="1", prop="info")
    query = data["query"]
    assert query["normalized"] == [{"fromencoded": False, "from": "workbench", "to": "Workbench"}]
    assert query["redirects"] == [{"from": "Workbench", "to": "Crafting table"}]
    pages = {p["title"]: p for p in query["pages"]}
    assert pages["No such page"]["missing"] is True
    assert pages["Cow"]["lastrevid"] > 0 and pages["Cow"]["touched"].endswith("Z")
    too_many = call(site, action="query", titles="|".join(f"T{i}" for i in range(51)))
    assert too_many["error"]["code"] == "toomanyvalues"


def test_parse_returns_the_rendered_content(site):
    data = call(site, action="parse", page="Workbench", redirects="1", prop="text|categories|revid")
    parse = data["parse"]
    assert parse["title"] == "Crafting table" and parse["redirects"] == [{"from": "Workbench", "to": "Crafting table"}]
    assert parse["text"].startswith("<div ") and "mw-parser-output" in parse["text"][:80]
    assert call(site, action="parse", page="No such page")["error"]["code"] == "missingtitle"


def test_recent_changes_record_edits_moves_and_deletions(tmp_path):
    from jarvis_lab.samplewiki.server import SampleWikiSite
    from jarvis_lab.samplewiki.site import SampleWiki

    site = SampleWikiSite(SampleWiki.load(), "http://wiki.test")
    assert call(site, action="query", list="recentchanges")["query"]["recentchanges"] == []
    site.edit("Cow", "A **cow** was edited.")
    site.move("Pig", "Hog")
    site.delete("Anvil")
    rows = [r for a in follow(site, action="query", list="recentchanges", rcdir="newer", rclimit="2",
                              rcprop="title|ids|timestamp|loginfo|redirect") for r in a["query"]["recentchanges"]]
    kinds = [(r["type"], r.get("logtype"), r["title"]) for r in rows]
    assert kinds[0] == ("edit", None, "Cow") and ("log", "move", "Pig") in kinds and ("log", "delete", "Anvil") in kinds
    move = next(r for r in rows if r.get("logtype") == "move")
    assert move["logparams"] == {"target_ns": 0, "target_title": "Hog"}
    assert [r["rcid"] for r in rows] == sorted(r["rcid"] for r in rows)
    assert b"was edited" in site.respond("/w/Cow").body
    assert site.respond("/w/Anvil").status == 404
    assert b"Redirected from" in site.respond("/w/Pig").body


def test_maxlag_and_bad_parameters_are_error_answers(site):
    site.store.lag_seconds = 9.0
    try:
        answer = site.api.respond({"format": "json", "formatversion": "2", "action": "query", "maxlag": "5"})
    finally:
        site.store.lag_seconds = 0.0
    error = json.loads(answer.body)["error"]
    assert error["code"] == "maxlag" and answer.headers["Retry-After"] == "5" and answer.headers["X-Database-Lag"] == "9"
    assert call(site, action="query", list="nosuchlist")["error"]["code"] == "badvalue"
    assert call(site, action="query", list="recentchanges", rcstart="yesterday")["error"]["code"] == "badtimestamp"
    assert json.loads(site.api.respond({"action": "query"}).body)["error"]["code"] == "badvalue"
