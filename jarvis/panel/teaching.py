"""The Teach page: write an answer (or pick a sentence of the pages the index finds), edit one, remove one after
a confirmation, and undo a removal. What it stores and how: teach.py; how it is answered: jarvis/taught.py."""
from __future__ import annotations

import logging

from flask import Blueprint, Response, abort, redirect, request, url_for

from jarvis.panel.teach import TeachError
from jarvis.panel.web import desk, page

log = logging.getLogger(__name__)

blueprint = Blueprint("teaching", __name__)
MAX_CANDIDATES = 12
WHO = "admin (panel)"


@blueprint.get("/teach")
def teach_form():
    shelf = desk().teacher.shelf
    question = request.args.get("question", "")[:300]
    editing = None
    if request.args.get("edit"):
        try:
            editing = shelf.get(request.args["edit"])
        except TeachError:
            editing = None
    return page("teach.html", active="teach", question=question,
                candidates=candidates(question) if question.strip() else [], taught=shelf.all(), editing=editing,
                guide=shelf.guide, saved=request.args.get("saved", ""), removed=_removed(request.args.get("removed")))


@blueprint.post("/teach")
def teach_save():
    shelf = desk().teacher.shelf
    answer = request.form.get("answer", "").strip() or request.form.get("sentence", "")
    try:
        taught = desk().teacher.teach(request.form.get("question", ""), answer, request.form.get("title", ""),
                                      who=WHO, answer_id=request.form.get("id") or None)
    except TeachError as exc:
        return Response(page("teach.html", active="teach", question=request.form.get("question", ""),
                             candidates=[], taught=shelf.all(), editing=None, guide=shelf.guide, saved="",
                             removed=None, error=str(exc)),
                        status=400, mimetype="text/html")
    return redirect(url_for("teaching.teach_form", saved=taught.title), 303)


@blueprint.get("/teach/<answer_id>/remove")
def teach_remove_confirm(answer_id: str):
    """Remove asks first: the answer, and what players get once it is gone."""
    try:
        taught = desk().teacher.shelf.get(answer_id)
    except TeachError:
        abort(404)
    return page("remove.html", active="teach", taught=taught)


@blueprint.post("/teach/<answer_id>/remove")
def teach_remove(answer_id: str):
    try:
        desk().teacher.remove(answer_id)
    except TeachError:
        abort(404)
    return redirect(url_for("teaching.teach_form", removed=answer_id), 303)


@blueprint.post("/teach/<answer_id>/restore")
def teach_restore(answer_id: str):
    """The undo of a removal."""
    try:
        taught = desk().teacher.restore(answer_id)
    except TeachError as exc:
        shelf = desk().teacher.shelf
        return Response(page("teach.html", active="teach", question="", candidates=[], taught=shelf.all(),
                             editing=None, guide=shelf.guide, saved="", removed=None, error=str(exc)),
                        status=409, mimetype="text/html")
    return redirect(url_for("teaching.teach_form", saved=taught.title), 303)


def _removed(answer_id: str | None):
    """The answer just removed (to offer its undo), when it is still kept aside."""
    if not answer_id:
        return None
    try:
        return desk().teacher.shelf.removed_answer(answer_id)
    except TeachError:
        return None


def candidates(question: str, limit: int = MAX_CANDIDATES) -> list[dict]:
    """Sentences of the pages the index finds for a question, those sharing most words with it first: what the
    admin may pick as the answer."""
    from jarvis.crawler.sentences import split_sentences
    from jarvis.lexical import TermAnalyzer

    try:
        hits = desk().searcher().search(question, k=3)
    except Exception as exc:  # noqa: BLE001 - no candidates is not an error of the page
        log.warning("no sentences to pick from: %s", exc)
        return []
    analyzer = TermAnalyzer()
    words = set(analyzer.terms(question))
    found = []
    for rank, hit in enumerate(hits):
        for paragraph in hit.paragraphs:
            for start, end in split_sentences(paragraph):
                sentence = paragraph[start:end]
                if 20 <= len(sentence) <= 400:
                    overlap = len(words & set(analyzer.terms(sentence)))
                    found.append({"sentence": sentence, "page": hit.title, "site": hit.site,
                                  "score": overlap - 0.3 * rank})
    found.sort(key=lambda c: -c["score"])
    seen, out = set(), []
    for candidate in found:
        if candidate["sentence"] not in seen:
            seen.add(candidate["sentence"])
            out.append(candidate)
        if len(out) >= limit:
            break
    return out
