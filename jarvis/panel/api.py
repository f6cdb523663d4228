"""The desk's JSON API (docs/panel.md "The HTTP API"): the report, the questions, the taught answers."""
from __future__ import annotations

from datetime import datetime, timezone

from flask import Blueprint, jsonify, request, url_for

from jarvis.panel import log_view
from jarvis.panel.teach import TeachError
from jarvis.panel.web import desk, since_arg

blueprint = Blueprint("api", __name__, url_prefix="/api")
MAX_LIMIT = 1000


@blueprint.get("/report")
def report():
    from jarvis.questionlog import ReportError, build_report, read_log

    _, since = since_arg("7d")
    try:
        contents = read_log(desk().log_path, desk().config.log.backups)
    except ReportError as exc:
        return jsonify({"error": str(exc)}), 404
    return jsonify(build_report(contents, since, datetime.now(timezone.utc)).to_json())


@blueprint.get("/questions")
def questions():
    view = request.args.get("view", "all")
    if view not in log_view.VIEWS:
        return jsonify({"error": f"view must be one of {', '.join(log_view.VIEWS)}"}), 400
    try:
        limit = max(1, min(MAX_LIMIT, int(request.args.get("limit", "100"))))
    except ValueError:
        return jsonify({"error": "limit must be a whole number"}), 400
    _, since = since_arg("all")
    rows, corrupt = desk().rows()
    chosen = log_view.select(rows, view, request.args.get("q", "")[:200], since,
                             player=request.args.get("player", ""), origin=request.args.get("origin", ""),
                             page=request.args.get("page", ""))
    if request.args.get("grouped") in ("1", "true", "yes"):
        groups = log_view.grouped(chosen)
        return jsonify({"total": len(chosen), "groups": [grp.to_json() for grp in groups[:limit]]})
    return jsonify({"total": len(chosen), "corrupt_lines": corrupt,
                    "questions": [row.to_json() for row in chosen[:limit]]})


@blueprint.get("/answers")
def answers():
    return jsonify({"answers": [a.to_json() for a in desk().teacher.shelf.all()]})


@blueprint.post("/answers")
def teach():
    """201: saved, and the answer to its question from the next question on (ask, serve, the workers)."""
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        return jsonify({"error": 'send JSON: {"question": ..., "answer": ...[, "title": ...]}'}), 400
    try:
        taught = desk().teacher.teach(data.get("question"), data.get("answer"), data.get("title") or "",
                                      who=str(data.get("who") or "admin (api)"))
    except TeachError as exc:
        return jsonify({"error": str(exc)}), 400
    response = jsonify({**taught.to_json(), "in_use": True})
    response.status_code = 201
    response.headers["Location"] = url_for("api.answer", answer_id=taught.id)
    return response


@blueprint.get("/answers/<answer_id>")
def answer(answer_id: str):
    try:
        return jsonify(desk().teacher.shelf.get(answer_id).to_json())
    except TeachError as exc:
        return jsonify({"error": str(exc)}), 404


@blueprint.delete("/answers/<answer_id>")
def forget(answer_id: str):
    try:
        taught = desk().teacher.remove(answer_id)
    except TeachError as exc:
        return jsonify({"error": str(exc)}), 404
    return jsonify({**taught.to_json(), "removed": True,
                    "restore": url_for("api.restore", answer_id=answer_id)})


@blueprint.post("/answers/<answer_id>/restore")
def restore(answer_id: str):
    try:
        taught = desk().teacher.restore(answer_id)
    except TeachError as exc:
        return jsonify({"error": str(exc)}), 404
    return jsonify({**taught.to_json(), "in_use": True})


@blueprint.get("/index")
def index():
    """The live index generation the desk reads (its name, pages and when it was built)."""
    live = desk().live_generation()
    if live is None:
        return jsonify({"error": f"no index at {desk().index_dir}"}), 404
    return jsonify({"generation": live.name, "pages": live.meta.pages, "built_at": live.meta.built_at,
                    "profile": live.meta.profile})
