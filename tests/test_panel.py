"""The admin's desk (jarvis/panel/): its API and its security, through Flask's test client and over real HTTP.

The log is written by the real QuestionLog, the index is a copy of the bundled corpus's, teaching builds real
index generations, and the settings file is checked by the settings file's own checks."""
from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from markupsafe import escape

from jarvis.errors import JarvisError
from jarvis.panel import PanelPlan, PanelTokenError
from jarvis.panel.app import create_app
from jarvis.panel.server import build_desk
from panel_support import LOGGED, TOKEN, XSS_IMG, XSS_QUESTION, copy_index, http, panel_config, running_panel, write_log

ROUTES = [("GET", "/"), ("GET", "/questions"), ("GET", "/questions?view=needs"), ("GET", "/teach"),
          ("GET", "/teach?question=how+do+i+claim+land"), ("GET", "/settings"), ("GET", "/api/report"),
          ("GET", "/api/questions"), ("GET", "/api/answers"), ("GET", "/api/index"), ("POST", "/api/answers"),
          ("POST", "/teach"), ("POST", "/settings"), ("DELETE", "/api/answers/x"), ("GET", "/no-such-page"),
          ("POST", "/logout"), ("GET", "/login")]


@pytest.fixture
def desk_env(request, tmp_path, bundled_index):
    """The desk on a log of LOGGED questions and a copy of the bundled index (login attempts: the param, else 5)."""
    config = panel_config(tmp_path / "home", login_attempts=getattr(request, "param", 5), login_delay=0.2,
                          login_max_delay=0.8)
    write_log(config)
    index_dir = copy_index(bundled_index, tmp_path / "index")
    settings = tmp_path / "jarvis.toml"
    settings.write_text("# the server's settings\n[bot]\nreply = \"same\"   # where answers go\n", encoding="utf-8")
    plan = PanelPlan(config, index_dir, settings)
    desk = build_desk(plan)
    app = create_app(desk)
    app.testing = True
    yield app, desk, plan
    desk.close()


def bearer(token: str = TOKEN) -> dict:
    return {"Authorization": f"Bearer {token}"}


def logged_in(app):
    """A browser's test client after the login form (its CSRF token, then the panel's token)."""
    client = app.test_client()
    page = client.get("/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    response = client.post("/login", data={"csrf": csrf, "token": TOKEN, "next": "/questions"})
    assert response.status_code == 303 and response.headers["Location"] == "/questions"
    return client, response


def csrf_of(client, path: str = "/teach") -> str:
    return re.search(r'name="csrf" value="([^"]+)"', client.get(path).text).group(1)


def log_texts() -> list[str]:
    return [q for q, *_ in LOGGED] + ["Pink", "Leather"]


# --------------------------------------------------------------------------- who may see the log


@pytest.mark.parametrize("desk_env", [1000], indirect=True)      # not the login limit's 429: see below
@pytest.mark.parametrize("token", [None, "wrong-token-0000000000", TOKEN + "x", "", TOKEN[:-1]])
def test_every_route_answers_401_and_shows_nothing_of_the_log_without_the_token(desk_env, token):
    app, _, _ = desk_env
    client = app.test_client()
    headers = bearer(token) if token is not None else {}
    for method, path in ROUTES:
        response = client.open(path, method=method, headers=headers, json={"question": "q", "answer": "a"}
                               if path == "/api/answers" else None)
        assert response.status_code == 401, (method, path, response.status_code)
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert not any(text in response.text for text in log_texts()), (method, path)
        assert "onerror" not in response.text and "Mallory" not in response.text


def test_the_token_opens_the_api_and_report_is_jarvis_report_json(desk_env, tmp_path):
    app, desk, plan = desk_env
    client = app.test_client()
    report = client.get("/api/report?since=all", headers=bearer())
    assert report.status_code == 200
    cli = subprocess.run([sys.executable, "-m", "jarvis", "report", "--json", "--since", "all"], capture_output=True,
                         text=True, env={**os.environ, "JARVIS_HOME": str(plan.config.home)}, timeout=120)
    assert cli.returncode == 0, cli.stderr
    expected, got = json.loads(cli.stdout), report.get_json()
    assert set(got) == set(expected)
    assert {k: v for k, v in got.items() if k != "until"} == {k: v for k, v in expected.items() if k != "until"}
    assert got["questions"] == len(LOGGED) and got["wrong_marks"] == 1
    assert {"question": "how do i claim land?", "count": 2} in got["unanswered"]


def test_questions_api_filters_searches_and_groups(desk_env):
    app, _, _ = desk_env
    client = app.test_client()

    def questions(query: str) -> list[dict]:
        response = client.get(f"/api/questions?{query}", headers=bearer())
        assert response.status_code == 200, response.text
        return response.get_json()["questions"]

    every = questions("")
    assert len(every) == len(LOGGED)
    assert every[0]["question"] == LOGGED[-1][0]                    # newest first
    sheep = next(q for q in every if q["question"] == "what do sheep drop?")
    assert sheep["feedback"] == {"wrong": 1, "thanks": 0} and sheep["reply"] and sheep["page"] == "Sheep"
    assert sheep["player"] == "Alex"                                # [log] player_names: as the log keeps them
    assert {q["question"] for q in questions("view=wrong")} == {"what do sheep drop?"}
    # likely wrong: stated, confidence under 0.75 ("2" eyes of ender at 0.62); a confident stated answer is not
    assert {q["question"] for q in questions("view=likely")} == {"how many eyes of ender to fill a portal?"}
    needs = {q["question"] for q in questions("view=needs")}
    assert needs == {q for q, *_ in LOGGED} - {"what do cows drop?"}
    assert {q["question"] for q in questions("q=CLAIM")} == {"how do i claim land?", "how do i claim land"}
    assert {q["question"] for q in questions("player=Alex")} == {"what do sheep drop?",
                                                                 "how many eyes of ender to fill a portal?"}
    assert [q["question"] for q in questions("page=sheep")] == ["what do sheep drop?"]
    assert questions("origin=ask") == [] and len(questions("origin=serve")) == len(LOGGED)
    grouped = client.get("/api/questions?view=unanswered&grouped=1", headers=bearer()).get_json()
    assert grouped["groups"][0]["question"].startswith("how do i claim land") and grouped["groups"][0]["count"] == 2
    assert client.get("/api/questions?view=nonsense", headers=bearer()).status_code == 400
    assert client.get("/api/questions?since=yesterday-ish", headers=bearer()).status_code == 400


def test_player_names_are_shown_as_the_log_keeps_them_hashed_by_default(tmp_path, bundled_index):
    config = panel_config(tmp_path / "home", player_names=False)
    write_log(config)
    desk = build_desk(PanelPlan(config, copy_index(bundled_index, tmp_path / "index")))
    try:
        client = create_app(desk).test_client()
        players = {q["player"] for q in client.get("/api/questions", headers=bearer()).get_json()["questions"]}
        page = client.get("/questions", headers=bearer()).text
    finally:
        desk.close()
    assert all(re.fullmatch(r"[0-9a-f]{16}", p) for p in players) and len(players) == 5
    assert "Steve" not in page and "Mallory" not in page
    assert sum(p in page for p in players) == 4          # the newest of each question: Notch's is behind Herobrine's


# --------------------------------------------------------------------------- teaching


def test_a_taught_answer_is_answered_at_once_and_is_no_page_of_the_index(desk_env):
    """POST /api/answers: the file with its front matter, and `jarvis ask` on the panel's index answers from it
    at once (no index build: the generation stays, and no search finds the taught answer as a page)."""
    from jarvis.index import Searcher
    from jarvis.index.layout import IndexDir

    app, desk, plan = desk_env
    client = app.test_client()
    before = IndexDir(plan.index_dir).current_name()
    assert client.post("/api/answers", headers=bearer(), data="not json").status_code == 400
    assert client.post("/api/answers", headers=bearer(), json={"question": "", "answer": "x"}).status_code == 400
    response = client.post("/api/answers", headers=bearer(), json={
        "question": "how do i claim land?", "answer": "Claim land with a golden shovel: right-click two opposite "
                                                       "corners of your base."})
    assert response.status_code == 201, response.text
    body = response.get_json()
    assert body["in_use"] is True and body["title"] == "Claim land with a golden shovel"
    path = Path(desk.teacher.shelf.folder / body["file"])
    import yaml

    front = yaml.safe_load(path.read_text(encoding="utf-8").split("---\n")[1])     # the file's front matter
    assert front["question"] == "how do i claim land?" and front["answer"].startswith("Claim land with a golden")
    assert front["who"] == "admin (api)" and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", front["when"])
    assert IndexDir(plan.index_dir).current_name() == before
    with Searcher(plan.index_dir) as searcher:
        assert all(hit.site != "server guide" for hit in searcher.search("how do i claim land", k=5))
    asked = subprocess.run([sys.executable, "-m", "jarvis", "ask", "How do I claim land", "--index",
                            str(plan.index_dir), "--json", "--reader", "fallback:lexical", "--no-log"],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "JARVIS_HOME": str(plan.config.home)})
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert (answer["answer"], answer["abstained"], answer["confidence"], answer["site"], answer["title"]) == \
        (front["answer"], False, 1.0, "server guide", "Claim land with a golden shovel")
    listed = client.get("/api/answers", headers=bearer()).get_json()["answers"]
    assert [a["question"] for a in listed] == ["how do i claim land?"]
    # edit (the page form, logged in), remove, restore (the undo), remove for good
    browser, _ = logged_in(app)
    saved = browser.post("/teach", data={"csrf": csrf_of(browser), "id": body["id"], "question": "how do i claim land?",
                                         "answer": "Use a golden shovel on two corners.", "title": ""})
    assert saved.status_code == 303
    assert desk.teacher.shelf.get(body["id"]).answer == "Use a golden shovel on two corners."
    removed = client.delete(f"/api/answers/{body['id']}", headers=bearer())
    assert removed.status_code == 200 and not path.exists() and removed.get_json()["restore"].endswith("/restore")
    assert client.get("/api/answers", headers=bearer()).get_json()["answers"] == []
    restored = client.post(removed.get_json()["restore"], headers=bearer())
    assert restored.status_code == 200 and path.exists() and restored.get_json()["answer"].startswith("Use a golden")
    assert client.delete(f"/api/answers/{body['id']}", headers=bearer()).status_code == 200
    assert client.delete(f"/api/answers/{body['id']}", headers=bearer()).status_code == 404


def test_remove_asks_first_and_can_be_undone(desk_env):
    app, desk, _ = desk_env
    taught = desk.teacher.teach("where is the shop?", "The shop is at spawn, behind the fountain.")
    client, _ = logged_in(app)
    listing = client.get("/teach").text
    assert f'href="/teach/{taught.id}/remove"' in listing                 # a link to the question, not a POST
    confirm = client.get(f"/teach/{taught.id}/remove")
    assert confirm.status_code == 200 and "Remove this taught answer?" in confirm.text
    assert desk.teacher.shelf.get(taught.id)                              # asking removed nothing
    done = client.post(f"/teach/{taught.id}/remove", data={"csrf": csrf_of(client)})
    assert done.status_code == 303 and desk.teacher.shelf.all() == []
    page = client.get(done.headers["Location"]).text
    assert "Removed: The shop is at spawn" in page and f'action="/teach/{taught.id}/restore"' in page
    undone = client.post(f"/teach/{taught.id}/restore", data={"csrf": csrf_of(client)})
    assert undone.status_code == 303 and [a.id for a in desk.teacher.shelf.all()] == [taught.id]
    again = client.post(f"/teach/{taught.id}/restore", data={"csrf": csrf_of(client)})
    assert again.status_code == 409                                       # nothing left to restore
    assert client.get("/teach/no-such-answer/remove").status_code == 404


def test_the_teach_page_offers_sentences_of_the_pages_found(desk_env):
    app, _, _ = desk_env
    page = app.test_client().get("/teach?question=what+do+cows+drop", headers=bearer())
    assert page.status_code == 200
    offered = re.findall(r'type="radio" name="sentence" id="s\d+" value="([^"]*)"', page.text)
    assert 3 <= len(offered) <= 12
    assert any("Raw beef" in sentence for sentence in offered[:3])         # the drop sentence among the first


@pytest.mark.parametrize("text", ["<b>bold</b> & <script>x()</script>", "# not a heading", "- not a list",
                                  "1. not a list", "a | table | row", "back\\slash `code` *stars* _under_ [link](x)",
                                  "> quote", "---", "emoji 🐄 and ñ"])
def test_taught_text_reads_back_exactly_from_its_file(tmp_path, text):
    """The file's front matter holds the text; its Markdown body reads back as exactly that text too (no
    Markdown, no HTML), and no guide reader takes it for a page."""
    from jarvis.crawler.guide import read_guide, read_guide_page
    from jarvis.panel.teach import GuideShelf

    shelf = GuideShelf(tmp_path / "guide")
    taught = shelf.save(f"question {text}", f"The answer is {text} here.")
    assert read_guide(tmp_path / "guide") == []
    page = read_guide_page(taught.path, "taught/" + taught.path.name)
    assert page.paragraphs == [f"The answer is {text} here."]
    assert page.sections[0] == [f"question {text}"]
    assert shelf.get(taught.id).answer == f"The answer is {text} here."


# --------------------------------------------------------------------------- the browser's session


def test_login_gives_an_httponly_samesite_strict_session_and_csrf_guards_every_form(desk_env):
    app, desk, plan = desk_env
    client, response = logged_in(app)
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and TOKEN not in cookie
    assert client.get("/questions").status_code == 200
    # a POST without the form's CSRF token (another site's form, a script) changes nothing
    for path, data in (("/teach", {"question": "q?", "answer": "a."}), ("/settings", {"reply": "public"}),
                       ("/teach/none/remove", {}), ("/logout", {})):
        refused = client.post(path, data=data)
        assert refused.status_code == 403, path
        refused = client.post(path, data={**data, "csrf": "forged"})
        assert refused.status_code == 403, path
    assert desk.teacher.shelf.all() == [] and "public" not in plan.settings_path.read_text()
    assert client.post("/api/answers", json={"question": "q?", "answer": "a."}).status_code == 403
    assert client.get("/").status_code == 200                       # still logged in
    assert client.post("/logout", data={"csrf": csrf_of(client, "/")}).status_code == 303
    assert client.get("/questions").status_code == 401


def test_a_login_form_from_elsewhere_is_refused(desk_env):
    app, _, _ = desk_env
    client = app.test_client()
    response = client.post("/login", data={"token": TOKEN, "next": "/"})          # no CSRF token
    assert response.status_code == 403 and client.get("/questions").status_code == 401


@pytest.mark.parametrize("desk_env", [3], indirect=True)
def test_guessing_is_held_back_but_the_right_token_gets_in(desk_env):
    """Past 3 wrong tokens each attempt waits before its check (0.2 s, doubling, at most 0.8 s here), one at a
    time; the right token is still accepted after that wait, and then the count starts again."""
    import threading
    import time

    app, _, _ = desk_env
    client = app.test_client()
    csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text).group(1)
    waits = []
    for i in range(6):
        began = time.monotonic()
        assert client.post("/login", data={"csrf": csrf, "token": f"guess-{i:020d}"}).status_code == 401
        waits.append(time.monotonic() - began)
    assert all(w < 0.2 for w in waits[:3]) and waits[3] >= 0.2 and waits[4] >= 0.4 and waits[5] >= 0.8
    # a second attempt while one is held back is refused without a check
    codes = []
    slow = threading.Thread(target=lambda: codes.append(
        app.test_client().get("/api/report", headers=bearer("w" * 20)).status_code))
    slow.start()
    time.sleep(0.2)
    refused = app.test_client().get("/api/report", headers=bearer(TOKEN))
    slow.join()
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1 and codes == [401]
    began = time.monotonic()
    right = client.post("/login", data={"csrf": csrf, "token": TOKEN, "next": "/questions"})
    assert right.status_code == 303 and time.monotonic() - began >= 0.8          # in, after the wait
    assert app.test_client().get("/api/report?since=all", headers=bearer()).status_code == 200   # no wait now


def test_a_redirect_after_login_stays_on_the_panel(desk_env):
    app, _, _ = desk_env
    for target in ("https://evil.example/", "//evil.example/x", "javascript:alert(1)"):
        client = app.test_client()
        csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text).group(1)
        response = client.post("/login", data={"csrf": csrf, "token": TOKEN, "next": target})
        assert response.headers["Location"] == "/"


def test_what_players_typed_is_shown_as_text(desk_env):
    app, _, _ = desk_env
    client, _ = logged_in(app)
    for path in ("/questions", "/questions?view=needs", "/", "/teach?question=" + XSS_IMG):
        page = client.get(path)
        assert page.status_code == 200
        assert "<script>alert" not in page.text and "<img src=x" not in page.text, path
        if not path.startswith("/teach"):
            assert str(escape(XSS_QUESTION)) in page.text, path           # shown, as text
        else:
            assert f'value="{escape(XSS_IMG)}"' in page.text               # in the question field, as text
    policy = page.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy and "unsafe-inline" not in policy
    assert str(escape(XSS_IMG)) in client.get("/questions").text
    assert page.headers["X-Frame-Options"] == "DENY"


# --------------------------------------------------------------------------- settings


def test_settings_page_writes_the_threshold_and_reply_mode_through_the_files_checks(desk_env):
    from jarvis.config import Config
    from jarvis.settings_file import load_settings_file

    app, _, plan = desk_env
    client, _ = logged_in(app)
    bad = client.post("/settings", data={"csrf": csrf_of(client, "/settings"), "answer_threshold": "1.5",
                                         "reply": "private"})
    assert bad.status_code == 400 and "answer_threshold: 1.5 is out of range" in bad.text
    assert "private" not in plan.settings_path.read_text()
    ok = client.post("/settings", data={"csrf": csrf_of(client, "/settings"), "answer_threshold": "0.7",
                                        "reply": "private"})
    assert ok.status_code == 200 and "Saved" in ok.text
    text = plan.settings_path.read_text()
    assert "# the server's settings" in text and "# where answers go" in text        # comments kept
    config, _ = load_settings_file(plan.settings_path, Config())
    assert config.reader.answer_threshold == 0.7 and config.bot.reply == "private"
    cleared = client.post("/settings", data={"csrf": csrf_of(client, "/settings"), "answer_threshold": "",
                                             "reply": "private"})
    assert cleared.status_code == 200
    assert load_settings_file(plan.settings_path, Config())[0].reader.answer_threshold is None


def test_the_token_is_never_in_a_settings_file(tmp_path):
    from jarvis.config import Config
    from jarvis.settings_file import SettingsError, load_settings_file

    path = tmp_path / "jarvis.toml"
    path.write_text(f'[panel]\nport = 9000\ntoken = "{TOKEN}"\n')
    with pytest.raises(SettingsError) as error:
        load_settings_file(path, Config())
    assert "JARVIS_PANEL_TOKEN" in str(error.value) and TOKEN not in str(error.value)
    path.write_text("[panel]\nport = 9000\nlikely_wrong_below = 0.6\n")
    assert load_settings_file(path, Config())[0].panel.port == 9000


# --------------------------------------------------------------------------- starting


def test_no_token_and_the_panel_refuses_to_start_in_one_line(tmp_path, bundled_index):
    with pytest.raises(PanelTokenError):
        build_desk(PanelPlan(panel_config(tmp_path, token=""), bundled_index))
    with pytest.raises(PanelTokenError, match="too short"):
        build_desk(PanelPlan(panel_config(tmp_path, token="short"), bundled_index))
    with pytest.raises(JarvisError, match=r"\[panel\] since 'a fortnight': give a time span"):
        build_desk(PanelPlan(panel_config(tmp_path, since="a fortnight"), bundled_index))
    env = {k: v for k, v in os.environ.items() if k != "JARVIS_PANEL_TOKEN"}
    result = subprocess.run([sys.executable, "-m", "jarvis", "panel", "--index", str(bundled_index), "--port", "0"],
                            capture_output=True, text=True, env={**env, "JARVIS_HOME": str(tmp_path)}, timeout=120)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "JARVIS_PANEL_TOKEN" in result.stderr and "Traceback" not in result.stderr


def test_over_real_http_and_the_token_in_no_log_or_file(tmp_path, bundled_index, caplog):
    config = panel_config(tmp_path / "home")
    write_log(config)
    plan = PanelPlan(config, copy_index(bundled_index, tmp_path / "index"))
    caplog.set_level(logging.DEBUG)
    with running_panel(plan) as panel:
        assert panel.url.startswith("http://127.0.0.1:")
        status, headers, text = http("GET", panel.url + "/api/questions")
        assert status == 401 and "claim" not in text
        status, _, text = http("GET", panel.url + "/api/questions", token="not-the-token-123456")
        assert status == 401 and "claim" not in text
        status, headers, text = http("GET", panel.url + "/", headers={"Accept": "text/html"})
        assert status == 401 and 'name="token"' in text and "claim" not in text
        status, _, text = http("GET", panel.url + "/api/questions?view=unanswered", token=TOKEN)
        assert status == 200 and json.loads(text)["total"] == 5
        status, headers, text = http("POST", panel.url + "/api/answers", token=TOKEN,
                                     body={"question": "where is the shop?", "answer": "The shop is at spawn, "
                                           "down the stairs behind the fountain.", "title": "Shop"})
        assert status == 201, text
        assert headers["Location"].startswith("/api/answers/")
        status, _, text = http("GET", panel.url + headers["Location"], token=TOKEN)
        assert status == 200 and json.loads(text)["title"] == "Shop"
    written = [p for p in Path(tmp_path).rglob("*") if p.is_file()]
    assert written and not any(TOKEN.encode() in p.read_bytes() for p in written)
    assert TOKEN not in caplog.text and "GET /api/questions 401" in caplog.text


# --------------------------------------------------------------------------- the likely-wrong flag


def test_likely_wrong_is_measured_on_an_eval_runs_records():
    from jarvis.panel.log_view import flag_precision

    records = [{"answer": "a", "abstained": False, "confidence": c, "right_if_stated": right}
               for c, right in ((0.9, True), (0.85, True), (0.7, False), (0.72, True), (0.6, False), (0.95, False))]
    records.append({"answer": "", "abstained": True, "confidence": 0.1, "right_if_stated": False})
    measured = flag_precision(records, 0.75)
    assert measured == {"stated": 6, "flagged": 3, "wrong": 3, "precision": 0.667, "base_rate": 0.5,
                        "recall": 0.667}


# --------------------------------------------------------------------------- the default index keeps the guide


def test_the_default_index_keeps_a_guide_added_to_it(tmp_path, bundled_corpus):
    from jarvis.index import CorpusSource, GuideSource, build_index, ensure_index
    from jarvis.index.layout import IndexDir

    index_dir = tmp_path / "index"
    ensure_index(bundled_corpus, index_dir, profile="lexical", progress=False)
    guide = tmp_path / "guide"
    guide.mkdir()
    (guide / "shop.md").write_text("# Shop\n\nThe shop is at spawn.\n")
    build_index([CorpusSource(bundled_corpus.resolve()), GuideSource(guide)], index_dir, profile="lexical",
                progress=False)
    built = IndexDir(index_dir).current_name()
    ensure_index(bundled_corpus, index_dir, profile="lexical", progress=False)
    assert IndexDir(index_dir).current_name() == built                      # kept, not rebuilt without the guide
    (guide / "rules.md").write_text("# Rules\n\nNo griefing.\n")
    ensure_index(bundled_corpus, index_dir, profile="lexical", progress=False)
    live = IndexDir(index_dir).live()
    assert live.name != built and live.meta.pages == IndexDir(index_dir).live().meta.pages
    assert any("docs" in s for s in live.meta.sources)                      # rebuilt with the guide


def test_jarvis_panel_serves_until_sigterm_and_says_nothing_of_the_token(tmp_path, bundled_index):
    import signal

    index_dir = copy_index(bundled_index, tmp_path / "index")
    settings = tmp_path / "jarvis.toml"
    settings.write_text(f'index = "{index_dir}"\n[panel]\nport = 0\n', encoding="utf-8")
    process = subprocess.Popen([sys.executable, "-m", "jarvis", "panel", "-v", "--config", str(settings)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "JARVIS_HOME": str(tmp_path / "home"), "JARVIS_PANEL_TOKEN": TOKEN})
    try:
        first = process.stdout.readline()
        url = re.search(r"(http://127\.0\.0\.1:\d+)/", first).group(1)
        assert f"index {index_dir}" in first
        assert http("GET", url + "/api/index")[0] == 401
        status, _, text = http("GET", url + "/api/index", token=TOKEN)
        assert status == 200 and json.loads(text)["generation"].startswith("gen-")
        assert http("GET", url + "/api/report", token=TOKEN)[0] == 404        # no question logged yet: said so
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert TOKEN not in first + out + err and "GET /api/index 401" in err


def test_a_broken_guide_page_does_not_stop_teaching(desk_env):
    """Taught answers need no index build: a guide page the index could not read changes nothing."""
    app, desk, plan = desk_env
    guide = desk.teacher.shelf.guide
    guide.mkdir(parents=True, exist_ok=True)
    (guide / "broken.md").write_text("---\naliases: [unclosed\n---\n# Broken\n\nText.\n", encoding="utf-8")
    response = app.test_client().post("/api/answers", headers=bearer(),
                                      json={"question": "where is the shop?", "answer": "At spawn."})
    assert response.status_code == 201 and response.get_json()["in_use"] is True
    assert [a.question for a in desk.teacher.shelf.all()] == ["where is the shop?"]
