"""Screenshots of the desk for docs/: questions answered by Jarvis on the bundled index and logged as `serve`
logs a player's (in a temporary JARVIS_HOME: the desk shows players' questions, not terminal asks), the panel
on them, chromium headless (Debian's chromium and chromium-driver, through selenium).

    python bench/panel_screenshot.py docs/          # writes docs/panel-today.png, docs/panel-questions.png
"""
from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from jarvis.config import Config, PanelSettings
from jarvis.panel import PanelPlan, PanelServer

QUESTIONS = ["what do cows drop?", "how do you craft tnt?", "where do witches spawn?", "what is a creeper?",
             "how long is a minecraft day?", "how do you make an eye of ender?", "what do cows drop",
             "where do blazes spawn?", "how much durability do shears have?", "what do sheep drop?",
             "how do i claim land?", "how do i claim land", "where is the shop?", "can i tame a fox?",
             "<script>alert('hi')</script> what do pigs drop?", "how do I set my home?", "what food heals the most?"]
TOKEN = "screenshot-token-0123456789"
PLAYERS = ["Steve", "Alex", "Notch", "Herobrine"]


def ask_as_players(jarvis, question_log, questions) -> None:
    for number, question in enumerate(questions):
        answer = jarvis.ask(question)
        question_log.record(question, answer, player=PLAYERS[number % len(PLAYERS)], latency=answer.seconds,
                            origin="serve")
        print("asked:", question, "->", answer.reply[:60], flush=True)


def main() -> int:
    from jarvis.assembly import assemble
    from jarvis.cli.common import set_up_models
    from jarvis.index import ensure_index
    from jarvis.questionlog import open_question_log

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs")
    home = Path(tempfile.mkdtemp(prefix="jarvis-desk-"))
    config = replace(Config.from_env({**os.environ, "JARVIS_HOME": str(home)}),
                     panel=replace(PanelSettings(), token=TOKEN, port=0))
    config = replace(config, log=replace(config.log, player_names=True))
    set_up_models(config)
    index_dir = ensure_index(config.bundled_corpus, config.default_index_dir, progress=False)
    question_log = open_question_log(config)
    server = PanelServer(PanelPlan(config, index_dir))
    server.run_in_thread()
    with assemble(config, index_dir) as jarvis:
        ask_as_players(jarvis, question_log, QUESTIONS)
        # the loop once: an answer taught through the desk, then the question asked again
        taught = server.desk.teacher.teach("where is the shop?", "The shop is at spawn, down the stairs behind the "
                                           "fountain; it opens at dusk.", title="Shop", who="admin")
        print("taught:", taught.title, flush=True)
        ask_as_players(jarvis, question_log, ["where's the shop"])
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900",
                 "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
    try:
        driver.get(server.url + "/")
        driver.find_element(By.ID, "token").send_keys(TOKEN)
        driver.find_element(By.ID, "login").click()
        for path, name in (("/", "panel-today.png"), ("/questions", "panel-questions.png"),
                           ("/teach?question=how+do+i+claim+land", "panel-teach.png")):
            driver.get(server.url + path)
            for _ in range(2):     # the window's size includes what is not the page: fit the page itself
                height = driver.execute_script("return document.documentElement.scrollHeight")
                chrome = driver.execute_script("return window.outerHeight - window.innerHeight")
                driver.set_window_size(1280, min(max(height, 700), 1500) + chrome)
            driver.save_screenshot(str(out / name))
            print("wrote", out / name)
    finally:
        driver.quit()
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
