"""The desk's pages that read: Overview (the window's counts, charts and what needs the admin), Questions (every
question, by view), Settings (what is set, and the two settings it may change)."""
from __future__ import annotations

import statistics
from collections import Counter

from flask import Blueprint, Response, request

from jarvis.config import Config
from jarvis.panel import charts, log_view, settings_edit
from jarvis.panel.web import WINDOWS, desk, page, since_arg, window_words

blueprint = Blueprint("pages", __name__)
SHOWN_GROUPS = 200          # question groups a Questions page lists
NEEDS_ON_OVERVIEW = 8


@blueprint.get("/")
def today():
    the_desk = desk()
    since_text, since = since_arg(the_desk.config.panel.since)
    rows, corrupt = the_desk.rows()
    window = log_view.select(rows, since=since)          # players' questions
    unit, points = log_view.buckets(window)
    times = log_view.latencies(window)
    counts = log_view.counts([r for r in rows if since is None or r.at >= since])
    return page("today.html", active="today", since=since_text, window=window_words(since_text), windows=WINDOWS,
                counts=counts, rate_chart=charts.answer_rate_chart(points, unit), unit=unit,
                latency_chart=charts.latency_chart(times), latency=latency_summary(times), corrupt=corrupt,
                needs=log_view.grouped(log_view.select(window, "needs"))[:NEEDS_ON_OVERVIEW],
                pages=top_pages(window))


@blueprint.get("/questions")
def questions():
    view = request.args.get("view", "all")
    if view not in log_view.VIEWS:
        view = "all"
    text = request.args.get("q", "")[:200]
    since_text, since = since_arg("all")
    rows, _ = desk().rows()
    chosen = log_view.select(rows, view, text, since)
    groups = log_view.grouped(chosen)
    heading = {"needs": "Needs you", "terminal": "Asked in the terminal"}.get(view, "Questions")
    return page("questions.html", active={"needs": "needs", "terminal": "questions"}.get(view, "questions"),
                heading=heading, view=view, views=log_view.VIEW_NAMES, q=text, since=since_text,
                window=window_words(since_text), groups=groups[:SHOWN_GROUPS], total=len(chosen),
                shown_groups=min(len(groups), SHOWN_GROUPS),
                all_counts=log_view.counts([r for r in rows if since is None or r.at >= since]),
                likely_below=desk().config.panel.likely_wrong_below)


@blueprint.route("/settings", methods=["GET", "POST"])
def settings_page():
    the_desk = desk()
    error, saved = "", False
    if request.method == "POST":
        changes = {("reader", "answer_threshold"): request.form.get("answer_threshold", ""),
                   ("bot", "reply"): request.form.get("reply", "")}
        try:
            settings_edit.update(the_desk.settings_path, changes)
            saved = True
        except settings_edit.SettingsEditError as exc:
            error = str(exc)
    config = the_desk.config
    if the_desk.settings_path is not None and the_desk.settings_path.is_file():
        from jarvis.settings_file import SettingsError, load_settings_file

        try:
            config, _ = load_settings_file(the_desk.settings_path, Config.from_env())
        except SettingsError as exc:
            error = error or str(exc)
    html = page("settings.html", active="settings", editable=settings_edit.current(the_desk.settings_path, config),
                path=the_desk.settings_path, error=error, saved=saved, live=the_desk.live_generation(),
                index_dir=the_desk.index_dir, log_path=the_desk.log_path, panel=the_desk.config.panel,
                guide=the_desk.teacher.shelf.guide)
    return Response(html, status=400 if error and request.method == "POST" else 200, mimetype="text/html")


def latency_summary(values: list[float]) -> dict:
    """p50 and p95 of the latencies, in seconds (None without questions)."""
    if not values:
        return {"p50": None, "p95": None, "n": 0}
    if len(values) == 1:
        return {"p50": values[0], "p95": values[0], "n": 1}
    q = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": round(q[49], 3), "p95": round(q[94], 3), "n": len(values)}


def top_pages(rows: list[log_view.Row]) -> list[tuple[str, str, int]]:
    """The pages answers were stated from most often: (page, site, count)."""
    counted = Counter((r.page, r.site) for r in rows if r.page and r.outcome == "answered")
    return [(name, site, n) for (name, site), n in counted.most_common(6)]
