"""The desk in a real browser: Debian's chromium, headless, driven by selenium through chromium-driver
(/usr/bin/chromedriver, named explicitly: no driver is downloaded). Skipped where chromium is not installed,
except on CI (CI=true), where that is a failure: `make setup` installs both."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from jarvis.panel import PanelPlan
from panel_support import (LOGGED, LONG_QUESTION, TERMINAL, TOKEN, XSS_IMG, XSS_QUESTION, copy_index, http,
                           panel_config, running_panel, write_extra_log, write_log)

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def require_chromium() -> None:
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(path)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (pip install -e '.[dev]')")
    if missing:
        message = (f"no {', '.join(missing)} (Debian: apt-get install chromium chromium-driver; "
                   "`make setup` installs them)")
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message + ": the browser tests must run on CI")
        pytest.skip(message)


@pytest.fixture
def browser():
    require_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,1000", "--disable-extensions", "--no-first-run"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def panel(tmp_path, bundled_index):
    config = panel_config(tmp_path / "home", login_delay=0.2, login_max_delay=1.0)
    write_log(config)
    write_extra_log(config)
    plan = PanelPlan(config, copy_index(bundled_index, tmp_path / "index"))
    with running_panel(plan) as server:
        yield server


def follow(driver, element) -> None:
    """Click a link or a form's button and wait for the page it leads to (a click returns before a busy
    machine has loaded it; a held-back login attempt takes its wait, too)."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    driver.execute_script("document.documentElement.dataset.left = 'yes'")     # gone once the next page is in
    element.click()
    WebDriverWait(driver, 120, ignored_exceptions=(WebDriverException,)).until(lambda d: d.execute_script(
        "return document.readyState === 'complete' && !document.documentElement.dataset.left"))


def log_in(driver, url: str, token: str = TOKEN) -> None:
    from selenium.webdriver.common.by import By

    driver.get(url)
    assert driver.find_elements(By.ID, "token"), "no login form"
    driver.find_element(By.ID, "token").send_keys(token)
    follow(driver, driver.find_element(By.ID, "login"))


def texts(driver, selector: str) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, selector)]


def test_log_in_see_the_questions_teach_and_jarvis_ask_answers_it(browser, panel):
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    status, _, _ = http("GET", panel.url + "/questions")
    assert status == 401                                        # no token: 401
    browser.get(panel.url + "/questions")
    assert "claim" not in browser.page_source                   # the login form, nothing of the log
    assert not browser.find_elements(By.CSS_SELECTOR, ".note.bad")     # and no error before any attempt
    log_in(browser, panel.url + "/questions?view=needs")
    assert browser.current_url.endswith("/questions?view=needs")
    shown = texts(browser, ".question-text")
    assert any(text.startswith("how do i claim land") for text in shown)
    assert any(text.startswith("what do sheep drop") for text in shown)          # marked wrong
    assert any(text.startswith("how many eyes of ender") for text in shown)      # likely wrong
    assert not any(text.startswith("what do cows drop") for text in shown)       # answered, thanked: not here
    assert not any(text.startswith(TERMINAL[0]) for text in shown)               # the admin's own: not here
    # what a player typed is text: the script is shown, not run; the image is no element
    assert any(text.startswith(XSS_QUESTION) for text in shown)
    assert any(text.startswith(XSS_IMG) for text in shown)
    assert browser.find_elements(By.CSS_SELECTOR, "main img, main script") == []
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text
    assert browser.execute_script("return document.querySelectorAll('script').length") == 0

    # teach the question Jarvis could not answer
    row = next(r for r in browser.find_elements(By.CSS_SELECTOR, ".question-row")
               if r.find_element(By.CSS_SELECTOR, ".question-text").text.startswith("how do i claim land"))
    follow(browser, row.find_element(By.LINK_TEXT, "Teach"))
    assert browser.find_element(By.ID, "question").get_attribute("value").startswith("how do i claim land")
    browser.find_element(By.ID, "answer").send_keys("Claim land with a golden shovel: right-click two opposite "
                                                    "corners of your base.")
    saved_at = time.monotonic()
    follow(browser, browser.find_element(By.ID, "teach-save"))
    assert browser.find_elements(By.ID, "saved")                                  # at once: no index build
    taught = browser.find_elements(By.CSS_SELECTOR, ".taught-row")
    assert len(taught) == 1 and "golden shovel" in taught[0].text
    asked = subprocess.run([sys.executable, "-m", "jarvis", "ask", "How do I claim land", "--index",
                            str(panel.desk.index_dir), "--json", "--reader", "fallback:lexical", "--no-log"],
                           capture_output=True, text=True, env={**os.environ, "JARVIS_HOME": str(panel.desk.config.home)},
                           timeout=300)
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["site"] == "server guide" and answer["title"] == "Claim land with a golden shovel", answer
    assert answer["abstained"] is False and answer["confidence"] == 1.0 and "golden shovel" in answer["reply"]
    print(f"\nsave -> a new jarvis ask process answered with it: {time.monotonic() - saved_at:.1f} s")
    # taught: the question leaves "Needs you"
    browser.get(panel.url + "/questions?view=needs")
    assert not any(text.startswith("how do i claim land") for text in texts(browser, ".question-text"))

    # logged out, the browser sees the login form again, and a CSRF-less form post is refused
    browser.delete_all_cookies()
    browser.get(panel.url + "/teach")
    assert browser.find_elements(By.ID, "token") and "golden shovel" not in browser.page_source


def test_no_page_is_wider_than_the_window_with_a_480_character_question(browser, panel):
    """A player's 480-character unbroken question (and its as long reply) in the log: every page stays inside a
    1280 px window, and every Teach button is on the screen."""
    from selenium.webdriver.common.by import By

    log_in(browser, panel.url + "/")
    assert browser.execute_script("return window.innerWidth") == 1280
    widths = {}
    for path in ("/", "/questions", "/questions?view=needs", "/questions?view=unanswered",
                 f"/questions?q={LONG_QUESTION[:40]}", "/teach?question=" + LONG_QUESTION, "/teach", "/settings",
                 "/questions?view=terminal"):
        browser.get(panel.url + path)
        widths[path[:40]] = browser.execute_script("return document.documentElement.scrollWidth")
        buttons = browser.find_elements(By.LINK_TEXT, "Teach")
        rights = [browser.execute_script("return arguments[0].getBoundingClientRect().right", b) for b in buttons]
        assert all(0 < right <= 1280 for right in rights), (path, rights)
    print("\npage widths at 1280 px:", widths)
    assert max(widths.values()) <= 1280, widths
    browser.get(panel.url + "/questions")
    assert any(text.startswith("jarvisxxxx") for text in texts(browser, ".question-text"))   # shown, wrapped


def test_remove_asks_first_and_is_undone(browser, panel):
    from selenium.webdriver.common.by import By

    taught = panel.desk.teacher.teach("where is the shop?", "The shop is at spawn, behind the fountain.")
    log_in(browser, panel.url + "/teach")
    follow(browser, browser.find_element(By.CSS_SELECTOR, "a.remove"))
    assert browser.find_element(By.TAG_NAME, "h1").text == "Remove this taught answer?"
    assert panel.desk.teacher.shelf.all()                         # a click on Remove removed nothing yet
    follow(browser, browser.find_element(By.ID, "keep"))
    assert len(browser.find_elements(By.CSS_SELECTOR, ".taught-row")) == 1
    follow(browser, browser.find_element(By.CSS_SELECTOR, "a.remove"))
    follow(browser, browser.find_element(By.ID, "confirm-remove"))
    assert "Removed: The shop is at spawn" in browser.find_element(By.ID, "removed").text
    assert browser.find_elements(By.CSS_SELECTOR, ".taught-row") == [] and panel.desk.teacher.shelf.all() == []
    follow(browser, browser.find_element(By.ID, "undo"))
    assert [r.text.splitlines()[0] for r in browser.find_elements(By.CSS_SELECTOR, ".taught-row")] == [taught.question]
    assert panel.desk.teacher.shelf.get(taught.id).answer == taught.answer


def test_headings_say_what_they_show_and_terminal_asks_are_apart(browser, panel):
    from selenium.webdriver.common.by import By

    log_in(browser, panel.url + "/")
    assert browser.find_element(By.ID, "heading").text == "Players' questions, the last 30 days"
    players = int(browser.find_element(By.ID, "count-questions").text)
    assert players == len(LOGGED) + 1                               # the long one; not the terminal's
    assert "2 question(s) you asked in the terminal" in browser.find_element(By.ID, "terminal-note").text
    follow(browser, browser.find_element(By.LINK_TEXT, "the last 7 days"))
    assert browser.find_element(By.ID, "heading").text == "Players' questions, the last 7 days"
    browser.get(panel.url + "/questions?view=needs")
    assert browser.find_element(By.ID, "heading").text.startswith("Needs you, all time")
    assert not any("zzqx" in text for text in texts(browser, ".question-text"))     # terminal junk: never here
    browser.get(panel.url + "/questions?view=terminal")
    assert browser.find_element(By.ID, "heading").text.startswith("Asked in the terminal")
    assert sorted(t.split("\n")[0] for t in texts(browser, ".question-text")) == sorted(TERMINAL)


def test_a_taught_answer_is_never_likely_wrong(browser, panel):
    from selenium.webdriver.common.by import By

    log_in(browser, panel.url + "/questions?view=likely")
    assert any(t.startswith("how many eyes of ender") for t in texts(browser, ".question-text"))
    panel.desk.teacher.teach("how many eyes of ender to fill a portal?", "12 eyes of ender fill an end portal.")
    for view in ("likely", "needs"):
        browser.get(panel.url + f"/questions?view={view}")
        assert not any(t.startswith("how many eyes of ender") for t in texts(browser, ".question-text")), view
    browser.get(panel.url + "/questions?view=taught")
    row = browser.find_element(By.CSS_SELECTOR, ".question-row")
    assert "taught" in row.text and "likely wrong" not in row.text


def test_the_right_token_gets_in_after_five_wrong_ones(browser, panel):
    from selenium.webdriver.common.by import By

    for i in range(5):
        log_in(browser, panel.url + "/questions", token=f"wrong-token-{i:010d}")
        assert browser.find_element(By.ID, "login-error").text == "Wrong token."
    log_in(browser, panel.url + "/questions", token=f"wrong-token-{6:010d}")        # held back, then refused
    assert browser.find_element(By.ID, "login-error").text == "Wrong token."
    began = time.monotonic()
    log_in(browser, panel.url + "/questions")
    assert browser.find_elements(By.CSS_SELECTOR, "#questions"), browser.page_source[:500]   # in
    print(f"\nthe right token after six wrong ones: in after {time.monotonic() - began:.1f} s")
