"""The index stage: schema and ranking, question parsing, profiles, incremental and atomic rebuilds, errors.

Everything runs on real Whoosh indexes in temporary directories, built from small corpora
written by the fixtures below.
"""
from __future__ import annotations

import json
import random
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from whoosh import index as whoosh_index
from whoosh import query as whoosh_query

from jarvis.crawler.corpus import CorpusError, Page, write_corpus
from jarvis.index.errors import BUILD, REBUILD
from jarvis.index import (IndexCorruptError, IndexNotFoundError, SearchIndexError, Searcher, build_index, ensure_index,
                   question_words)
from jarvis.index.coord import coordinate
from jarvis.index.profiles import PAGES


def minecraft_pages() -> list[Page]:
    def page(title: str, *paragraphs: str, aliases: tuple[str, ...] = ()) -> Page:
        return Page(title=title, url=f"http://127.0.0.1/w/{title.replace(' ', '_')}",
                    paragraphs=list(paragraphs), aliases=list(aliases))

    return [
        page("Crafting table",
             "A crafting table is a utility block that gives access to a 3x3 crafting grid.",
             "It is made from four planks arranged in a square. Some players call it a workbench.",
             aliases=("Workbench",)),
        page("Enderman",
             "An enderman is a tall neutral mob from the End that teleports and picks up blocks.",
             "When killed, an enderman drops an ender pearl.",
             aliases=("Endermen",)),
        page("Bed",
             "A bed is a block that lets the player sleep through the night and sets the respawn point.",
             "A bed is made from three wool and three planks of any wood."),
        page("TNT",
             "TNT is a block that explodes a short time after it is ignited with flint and steel or redstone.",
             "TNT is made from five gunpowder and four sand."),
        page("Creeper",
             "A creeper is a hostile mob that silently walks up to players and explodes.",
             "A creeper drops gunpowder when killed. Creepers are afraid of cats."),
        page("Planks",
             "Planks are common blocks used for building, made from logs of any tree.",
             "Planks are used to make sticks, chests and boats."),
        page("Torch",
             "A torch is a non-solid block that emits light and melts snow and ice.",
             "A torch is made from a stick and coal or charcoal."),
        page("Cow",
             "A cow is a passive mob found in grassy biomes.",
             "Cows drop leather and raw beef, and can be milked with a bucket."),
        page("Furnace",
             "A furnace is a utility block used to smelt ores and cook food.",
             "It is made from eight cobblestone."),
        page("Sheep",
             "A sheep is a passive mob that provides wool when sheared with shears.",
             "Sheep regrow their wool by eating grass."),
    ]


def corpus_of(tmp_path: Path, pages: list[Page], name: str = "corpus.jsonl") -> Path:
    path = tmp_path / name
    write_corpus(pages, path)
    return path


def titles(hits) -> list[str]:
    return [hit.title for hit in hits]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return corpus_of(tmp_path_factory.mktemp("corpus"), minecraft_pages())


@pytest.fixture(scope="module", params=["tuned", "lexical", "pages", "baseline"])
def any_index(request, tmp_path_factory, corpus) -> Path:
    index_dir = tmp_path_factory.mktemp(f"index-{request.param}")
    build_index(corpus, index_dir, profile=request.param, progress=False)
    return index_dir


@pytest.fixture(scope="module")
def tuned_index(tmp_path_factory, corpus) -> Path:
    index_dir = tmp_path_factory.mktemp("index-tuned")
    build_index(corpus, index_dir, profile="tuned", progress=False)
    return index_dir


@pytest.fixture(scope="module")
def tuned(tuned_index):
    with Searcher(tuned_index) as searcher:
        yield searcher


@pytest.fixture(scope="module")
def lexical(tmp_path_factory, corpus):
    """BM25F alone (no page vectors, no kind prior): what the lexical tests below are about."""
    index_dir = tmp_path_factory.mktemp("index-lexical")
    build_index(corpus, index_dir, profile="lexical", progress=False)
    with Searcher(index_dir) as searcher:
        yield searcher


# --------------------------------------------------------------------------- ranking


@pytest.mark.parametrize("question, expected", [
    ("workbench", "Crafting table"),                      # an alias ranks its page first
    ("how do I make a Workbench?", "Crafting table"),
    ("endermen", "Enderman"),                              # a plural alias
    ("what do endermen drop", "Enderman"),
    ("torches", "Torch"),                                  # plural of a title: stemming
    ("how are beds made", "Bed"),
    ("what do cows drop?", "Cow"),
    ("exploding creepers", "Creeper"),
])
def test_tuned_ranks_the_page_a_player_means_first(tuned, question, expected):
    assert titles(tuned.search(question))[0] == expected


def test_hits_carry_the_page_for_the_reader(tuned):
    hits = tuned.search("crafting table", k=3)
    page = minecraft_pages()[0]
    assert hits[0].title == page.title
    assert hits[0].paragraphs == page.paragraphs
    assert hits[0].aliases == page.aliases
    assert hits[0].url == page.url
    assert all(isinstance(hit.score, float) for hit in hits)
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


def test_k_limits_the_pages(tuned):
    assert len(tuned.search("block", k=1)) == 1
    assert len(tuned.search("block", k=5)) == 5
    with pytest.raises(SearchIndexError, match="k must be"):
        tuned.search("block", k=0)


def test_a_query_with_one_indexed_term_is_still_ranked(lexical):
    # "gunpowder" occurs only in content: a coordination bonus over one term would score every page 0.
    hits = lexical.search("gunpowder")
    assert set(titles(hits)) == {"TNT", "Creeper"} and all(hit.score > 0 for hit in hits)
    assert hits[0].title == "TNT"   # two mentions in a shorter text


def test_baseline_is_content_only_bm25(tmp_path, corpus):
    build_index(corpus, tmp_path / "ix", profile="baseline", progress=False)
    with Searcher(tmp_path / "ix") as baseline:
        assert baseline.profile == "baseline"
        assert titles(baseline.search("gunpowder explodes"))[:2] in (["TNT", "Creeper"], ["Creeper", "TNT"])
        assert "Torch" not in titles(baseline.search("torches"))       # no stemming
        assert "Enderman" not in titles(baseline.search("endermen"))   # aliases are not indexed


# --------------------------------------------------------------------------- questions are not query syntax

NASTY_QUESTIONS = [
    ("what's TNT?", "TNT"),
    ('"what\'s TNT?"', "TNT"),
    ("how do i craft a bed (wood)?", "Bed"),
    ("bed (", "Bed"),
    (") bed", "Bed"),
    ("((bed", "Bed"),
    ('"unbalanced quote bed', "Bed"),
    ("'bed", "Bed"),
    ("tnt*", "TNT"),
    ("t*t", None),
    ("tnt~2", "TNT"),
    ("tnt^5", "TNT"),
    ("title:tnt", "TNT"),
    ("content:creeper", "Creeper"),
    ("[bed TO tnt]", None),
    ("{bed}", "Bed"),
    ("-bed +torch", None),
    ("bed AND NOT torch", None),
    ("tnt OR creeper", None),
    ("torch^", "Torch"),
    ("torch \\ /", "Torch"),
    ("<b>torch</b>", None),
    ("💥 tnt 💥", "TNT"),
    ("tnt\x00\x1b[31m", "TNT"),
    ("torch " * 500, "Torch"),
    ("*", None),
    ("?", None),
    ("~", None),
    ("^", None),
    (":", None),
    ("AND OR NOT", None),
    ("", None),
    ("   \n\t ", None),
    ("the of and to a", None),
    ("???!!!...", None),
]


@pytest.mark.parametrize("question, expected", NASTY_QUESTIONS, ids=[repr(q)[:30] for q, _ in NASTY_QUESTIONS])
def test_query_syntax_in_questions_is_harmless(any_index, question, expected):
    with Searcher(any_index) as searcher:
        hits = searcher.search(question)
    assert isinstance(hits, list)
    if expected:
        assert titles(hits)[0] == expected


@pytest.mark.parametrize("question", ["", "   ", "the of and to a", "AND OR NOT", "*", "?", ":", "~^"])
def test_empty_or_stop_word_questions_find_nothing(any_index, question):
    with Searcher(any_index) as searcher:
        assert searcher.search(question) == []


def test_operators_lose_their_meaning_but_words_keep_theirs(lexical):
    tuned = lexical
    # NOT is a stop word, not an operator: "torch" still counts for the pages.
    assert "Torch" in titles(tuned.search("bed AND NOT torch", k=3))
    assert set(titles(tuned.search("tnt OR creeper", k=2))) == {"TNT", "Creeper"}
    assert question_words('title:"creeper" (boom)^2 *') == "title creeper boom 2"


# --------------------------------------------------------------------------- the coordination bonus


@pytest.fixture(scope="module")
def synthetic_corpus(tmp_path_factory) -> Path:
    rng = random.Random(3)
    words = ("creeper zombie skeleton spider enderman witch villager blaze ghast slime cow pig sheep chicken wolf "
             "oak birch stone cobblestone iron gold diamond redstone coal wool glass sand gravel obsidian "
             "block slab stairs door pickaxe sword bow arrow torch chest furnace bed bucket boat rail "
             "craft smelt mine break place drop spawn breed tame trade enchant brew explode burn grow").split()
    weights = [1 / (rank + 1) for rank in range(len(words))]
    pages = []
    for i in range(600):
        subject = words[i % len(words)]
        text = rng.choices(words, weights=weights, k=120) + [subject] * rng.randint(1, 4)
        rng.shuffle(text)
        pages.append(Page(title=f"{subject.capitalize()} {i}", url=f"http://127.0.0.1/w/{i}",
                          paragraphs=[" ".join(text[:60]), " ".join(text[60:])]))
    return corpus_of(tmp_path_factory.mktemp("synthetic"), pages)


def test_coordinated_or_computes_the_coordination_bonus_exactly(tmp_path, synthetic_corpus):
    """(BM25F + (matching - 1) / (n - 0.9)^2) * (n - 1) / n for every page, with and without pruning."""
    build_index(synthetic_corpus, tmp_path / "ix", profile="pages", progress=False)   # a Whoosh-searched profile
    ix = whoosh_index.open_dir(str(next((tmp_path / "ix").glob("gen-*"))))
    rng = random.Random(5)
    vocabulary = "creeper cow iron diamond torch chest craft smelt explode tame bed wool stone sword".split()
    with ix.searcher(weighting=PAGES.weighting()) as searcher:
        parser = PAGES.parser(ix.schema)
        for _ in range(30):
            words = " ".join(rng.sample(vocabulary, rng.randint(2, 5)))
            query = parser.parse(words)
            assert isinstance(query, whoosh_query.Or) and query.scale == 0.9   # OrGroup.factory(0.9)
            n = sum(1 for term in query.iter_all_terms() if searcher.reader().doc_frequency(*term))
            plain = whoosh_query.Or(query.subqueries)                           # BM25F sum, no bonus
            expected = sorted(((-(r.score + (len(r.matched_terms()) - 1) / (n - 0.9) ** 2) * (n - 1) / n, r.docnum)
                               for r in searcher.search(plain, limit=None, terms=True)))[:5]
            expected = [(docnum, round(-score, 9)) for score, docnum in expected]
            ours = coordinate(query, searcher.reader())
            pruned = [(r.docnum, round(r.score, 9)) for r in searcher.search(ours, limit=5)]
            unpruned = [(r.docnum, round(r.score, 9)) for r in searcher.search(ours, limit=5, optimize=False)]
            assert pruned == expected, words
            assert unpruned == expected, words


def test_parallel_build_finds_the_same_pages(tmp_path, synthetic_corpus):
    # BM25F scores are what a parallel build could change (page vectors are computed in this process).
    serial = build_index(synthetic_corpus, tmp_path / "one", profile="lexical", procs=1, progress=False)
    parallel = build_index(synthetic_corpus, tmp_path / "two", profile="lexical", procs=2, progress=False)
    assert (serial.procs, parallel.procs) == (1, 2)
    assert serial.pages == parallel.pages == 600
    with Searcher(tmp_path / "one") as one, Searcher(tmp_path / "two") as two:
        assert one.page_count == two.page_count == 600
        for question in ["how do i tame a wolf", "diamond pickaxe", "what does a creeper drop", "smelt iron"]:
            # every page scores the same (only the order of equal scores may differ)
            a = {hit.title: hit.score for hit in one.search(question, k=600)}
            b = {hit.title: hit.score for hit in two.search(question, k=600)}
            assert a == pytest.approx(b) and len(a) > 5


def test_a_parallel_build_inherits_no_lock_another_thread_holds(tmp_path, synthetic_corpus, monkeypatch):
    """A forked indexing process would keep a lock that another thread of the builder held at the fork (a
    reader's inference threads, tqdm's monitor), wait for it forever, and hang the build in commit(). Here a
    thread holds a lock for the whole build, and the parent's sub-writers would take it before each job."""
    import multiprocessing

    from whoosh.multiproc import SubWriterTask

    held, release = threading.Lock(), threading.Event()
    real_process_file = SubWriterTask._process_file

    def process_file_after_the_lock(self, filename, doc_count):
        with held:
            pass
        return real_process_file(self, filename, doc_count)

    monkeypatch.setattr(SubWriterTask, "_process_file", process_file_after_the_lock)
    holder = threading.Thread(target=lambda: (held.acquire(), release.wait(300), held.release()), daemon=True)
    holder.start()
    built: list = []
    builder = threading.Thread(target=lambda: built.append(build_index(synthetic_corpus, tmp_path / "ix", profile="lexical",
                                                                       procs=2, progress=False)), daemon=True)
    try:
        builder.start()
        builder.join(240)                     # a few seconds when it works; a hang would never end
    finally:
        release.set()
        if builder.is_alive():                # hung: stop the indexing processes, or the test run waits on them
            for child in multiprocessing.active_children():
                child.terminate()
    assert built and built[0].procs == 2 and built[0].pages == 600
    with Searcher(tmp_path / "ix") as searcher:
        assert searcher.page_count == 600


def test_a_failed_parallel_build_leaves_the_live_index_and_no_workers(tmp_path, synthetic_corpus, monkeypatch):
    import multiprocessing

    import jarvis.index.build

    build_index(corpus_of(tmp_path, minecraft_pages()), tmp_path / "ix", progress=False)
    with Searcher(tmp_path / "ix") as searcher:
        version = searcher.version
        real_to_document, calls = jarvis.index.build.to_document, []

        def failing_to_document(page, profile):      # e.g. the disk fills up half-way
            calls.append(page)
            if len(calls) == 400:
                raise OSError("No space left on device")
            return real_to_document(page, profile)

        monkeypatch.setattr(jarvis.index.build, "to_document", failing_to_document)
        with pytest.raises(OSError, match="No space"):
            build_index(synthetic_corpus, tmp_path / "ix", procs=2, progress=False)
        assert searcher.version == version
        assert titles(searcher.search("workbench"))[0] == "Crafting table"
    assert not list((tmp_path / "ix").glob(".tmp-*"))
    assert multiprocessing.active_children() == []


# --------------------------------------------------------------------------- rebuilds


def changed_pages() -> list[Page]:
    """The corpus after an edit: Bed rewritten, Planks deleted, Cake added."""
    pages = [p for p in minecraft_pages() if p.title != "Planks"]
    bed = next(p for p in pages if p.title == "Bed")
    pages[pages.index(bed)] = replace(bed, paragraphs=["A bed can be dyed any of sixteen colors.",
                                                       "Sleeping in the Nether makes a bed explode."], sha1="")
    pages.append(Page(title="Cake", url="http://127.0.0.1/w/Cake",
                      paragraphs=["A cake is a food block that can be eaten seven times, one slice at a time."]))
    return pages


def generations(index_dir: Path) -> list[str]:
    return sorted(p.name for p in index_dir.glob("gen-*"))


def test_incremental_rebuild_reindexes_only_changed_pages(tmp_path):
    index_dir = tmp_path / "ix"
    first = build_index(corpus_of(tmp_path, minecraft_pages()), index_dir, progress=False)
    assert not first.incremental and first.indexed == first.pages == 10
    with Searcher(index_dir) as searcher:
        before = searcher.version
        stats = build_index(corpus_of(tmp_path, changed_pages(), "v2.jsonl"), index_dir, progress=False)
        assert stats.incremental
        assert (stats.added, stats.updated, stats.deleted, stats.unchanged) == (1, 1, 1, 8)
        assert stats.indexed == 2 and stats.pages == 10
        assert "1 added, 1 updated, 1 deleted, 8 unchanged" in stats.summary()
        # the long-lived searcher sees the new index, without being reopened
        assert searcher.version != before
        assert titles(searcher.search("cake"))[0] == "Cake"
        assert titles(searcher.search("sixteen colors dyed"))[0] == "Bed"
        assert "Planks" not in titles(searcher.search("planks logs", k=10))
        assert searcher.page_count == 10


def test_rebuild_with_nothing_changed_keeps_the_live_index(tmp_path):
    corpus = corpus_of(tmp_path, minecraft_pages())
    build_index(corpus, tmp_path / "ix", progress=False)
    with Searcher(tmp_path / "ix") as searcher:
        version = searcher.version
        stats = build_index(corpus, tmp_path / "ix", progress=False)
        assert stats.indexed == 0 and stats.unchanged == 10 and "up to date" in stats.summary()
        assert searcher.version == version
    assert generations(tmp_path / "ix") == ["gen-000001"]


def test_an_alias_change_is_a_page_change(tmp_path):
    pages = minecraft_pages()
    build_index(corpus_of(tmp_path, pages), tmp_path / "ix", progress=False)
    pages[0] = replace(pages[0], aliases=["Workbench", "Crafting bench"])
    stats = build_index(corpus_of(tmp_path, pages, "v2.jsonl"), tmp_path / "ix", progress=False)
    assert (stats.updated, stats.unchanged) == (1, 9)
    with Searcher(tmp_path / "ix") as searcher:
        assert searcher.search("crafting bench")[0].aliases == ["Workbench", "Crafting bench"]


def test_a_hand_edited_paragraph_with_a_stale_sha1_is_reindexed(tmp_path):
    corpus = corpus_of(tmp_path, minecraft_pages())
    build_index(corpus, tmp_path / "ix", progress=False)
    lines = corpus.read_text(encoding="utf-8").splitlines()
    cow = next(i for i, line in enumerate(lines) if json.loads(line)["title"] == "Cow")
    edited = json.loads(lines[cow])
    edited["paragraphs"][1] = "Cows drop leather and raw beef, and can be milked with a bucket or a mooshroomjug."
    lines[cow] = json.dumps(edited)  # "sha1" left as it was, as a hand edit does
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    stats = build_index(corpus, tmp_path / "ix", progress=False)
    assert (stats.updated, stats.unchanged) == (1, 9)
    with Searcher(tmp_path / "ix") as searcher:
        assert titles(searcher.search("mooshroomjug"))[0] == "Cow"


def test_a_profile_change_rebuilds_from_scratch(tmp_path):
    corpus = corpus_of(tmp_path, minecraft_pages())
    build_index(corpus, tmp_path / "ix", profile="tuned", progress=False)
    with Searcher(tmp_path / "ix") as searcher:
        assert searcher.profile == "tuned"
        stats = build_index(corpus, tmp_path / "ix", profile="baseline", progress=False)
        assert not stats.incremental and stats.indexed == 10
        assert searcher.profile == "baseline"


def test_a_searcher_notices_a_directory_deleted_and_rebuilt(tmp_path):
    import shutil

    build_index(corpus_of(tmp_path, minecraft_pages()), tmp_path / "ix", progress=False)
    with Searcher(tmp_path / "ix") as searcher:
        version = searcher.version
        shutil.rmtree(tmp_path / "ix")
        build_index(corpus_of(tmp_path, changed_pages(), "v2.jsonl"), tmp_path / "ix", progress=False)
        assert generations(tmp_path / "ix") == ["gen-000001"]     # the same name as before
        assert searcher.version != version
        assert titles(searcher.search("cake"))[0] == "Cake"


def test_old_generations_are_cleaned_up(tmp_path):
    corpora = [corpus_of(tmp_path, minecraft_pages(), "a.jsonl"), corpus_of(tmp_path, changed_pages(), "b.jsonl")]
    index_dir = tmp_path / "ix"
    build_index(corpora[0], index_dir, progress=False)
    with Searcher(index_dir) as searcher:       # holds gen-000001 open through every rebuild
        for round_ in range(4):
            build_index(corpora[(round_ + 1) % 2], index_dir, progress=False)
        assert generations(index_dir) == ["gen-000004", "gen-000005"]    # live + previous
        assert (index_dir / "CURRENT").read_text().split()[0] == "gen-000005"
        assert not list(index_dir.glob(".tmp-*"))
        assert titles(searcher.search("planks logs"))[0] == "Planks"     # corpus a is live again
        assert "Cake" not in titles(searcher.search("cake"))


def test_searches_during_rebuilds_see_the_old_or_the_new_index(tmp_path):
    index_dir = tmp_path / "ix"
    corpora = [corpus_of(tmp_path, minecraft_pages(), "a.jsonl"), corpus_of(tmp_path, changed_pages(), "b.jsonl")]
    build_index(corpora[0], index_dir, progress=False)
    # incremental (tuned <-> tuned) and full (profile change) rebuilds, each swapped in while searching
    rounds = [(1, "tuned"), (0, "tuned"), (1, "baseline"), (0, "baseline"), (1, "tuned"), (0, "tuned")]
    stop, building = threading.Event(), threading.Event()
    searched_during: list[int] = []
    seen: set[tuple[str, ...]] = set()
    errors: list[BaseException] = []
    first_search = threading.Event()

    def search_loop(searcher: Searcher) -> None:
        for _ in range(20_000):             # bounded; normally ends on `stop`
            if stop.is_set():
                return
            try:
                workbench = searcher.search("workbench crafting")
                cake = searcher.search("cake")
                assert workbench and workbench[0].title == "Crafting table" and workbench[0].paragraphs
                # the old index has no Cake page (the dense side then offers its nearest pages instead)
                seen.add(("Cake",) if titles(cake)[:1] == ["Cake"] else ())
                assert "Cake" not in titles(cake)[1:]
            except BaseException as exc:     # noqa: BLE001 - reported by the main thread
                errors.append(exc)
                return
            if building.is_set():
                searched_during.append(1)
            first_search.set()

    with Searcher(index_dir) as searcher:
        threads = [threading.Thread(target=search_loop, args=(searcher,)) for _ in range(2)]
        for thread in threads:
            thread.start()
        first_search.wait(timeout=30)
        versions = {searcher.version}
        for corpus_number, profile in rounds:
            building.set()
            build_index(corpora[corpus_number], index_dir, profile=profile, progress=False)
            building.clear()
            versions.add(searcher.version)
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    assert not errors, errors[0]
    assert len(versions) == len(rounds) + 1
    assert searched_during                   # the searches did overlap the rebuilds
    assert seen <= {(), ("Cake",)}           # old index: no Cake page; new one: Cake first


# --------------------------------------------------------------------------- default index


def test_ensure_index_builds_once_and_rebuilds_when_the_corpus_changes(tmp_path, capfd):
    corpus = corpus_of(tmp_path, minecraft_pages())
    index_dir = tmp_path / "home" / "index"
    assert ensure_index(corpus, index_dir, progress=False) == index_dir
    with Searcher(index_dir) as searcher:
        version = searcher.version
        ensure_index(corpus, index_dir, progress=False)
        assert searcher.version == version                   # unchanged corpus: nothing rebuilt
        corpus_of(tmp_path, changed_pages())                   # the bundled corpus is updated in place
        ensure_index(corpus, index_dir, progress=False)
        assert searcher.version != version
        assert titles(searcher.search("cake"))[0] == "Cake"
        ensure_index(corpus, index_dir, profile="baseline", progress=False)
        assert searcher.profile == "baseline"
    assert capfd.readouterr().err == ""                         # progress=False: silent


def test_ensure_index_shows_progress_on_first_build(tmp_path, capfd):
    ensure_index(corpus_of(tmp_path, minecraft_pages()), tmp_path / "ix", progress=True)
    assert "indexing" in capfd.readouterr().err


def test_ensure_index_without_corpus(tmp_path):
    with pytest.raises(CorpusError, match="not found"):
        ensure_index(tmp_path / "missing.jsonl", tmp_path / "ix", progress=False)
    build_index(corpus_of(tmp_path, minecraft_pages()), tmp_path / "ix", progress=False)
    assert ensure_index(tmp_path / "missing.jsonl", tmp_path / "ix", progress=False) == tmp_path / "ix"


# --------------------------------------------------------------------------- errors


def assert_one_line_user_error(exc: BaseException, *needles: str) -> None:
    message = str(exc)
    assert getattr(exc, "user_error", False) is True
    assert "\n" not in message
    for needle in needles:
        assert needle in message, message


def assert_cli_says_how_to_build_it(index_dir: Path, capsys, *needles: str) -> None:
    """`jarvis search` on the directory: one line on stderr with the command that builds the index."""
    from jarvis.cli import main

    assert main(["search", "bed", "--index", str(index_dir)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"jarvis index --corpus FILE --index {index_dir}" in err[0], err
    for needle in needles:
        assert needle in err[0], err


def test_missing_index_says_how_to_build_one(tmp_path, capsys):
    with pytest.raises(IndexNotFoundError) as info:
        Searcher(tmp_path / "nowhere")
    assert_one_line_user_error(info.value, "build one", str(tmp_path / "nowhere"))
    assert info.value.path == tmp_path / "nowhere" and info.value.remedy == BUILD   # data the CLI words
    assert "--corpus" not in str(info.value)                                         # library: no flags
    assert_cli_says_how_to_build_it(tmp_path / "nowhere", capsys, "no index at", "build one with")


def test_empty_index_directory_says_how_to_build_one(tmp_path, capsys):
    (tmp_path / "ix").mkdir()
    with pytest.raises(IndexNotFoundError) as info:
        Searcher(tmp_path / "ix")
    assert_one_line_user_error(info.value, "build one")
    assert_cli_says_how_to_build_it(tmp_path / "ix", capsys, "empty directory")


def _suggested_command(message: str) -> list[str]:
    """The `jarvis index ...` command a hint suggests, as arguments after `jarvis`."""
    import re
    import shlex

    match = re.search(r"`jarvis (index [^`]*)`", message)
    assert match, message
    return shlex.split(match.group(1))


@pytest.mark.parametrize("holds", ["other files", "a file"])
def test_the_hint_for_a_path_that_holds_no_index_suggests_a_build_that_works(tmp_path, holds):
    """`jarvis ask --index notanindex`, a folder of other files or a file: a build there would be refused
    (not empty, not a Jarvis index), so the hint names a new directory, and the command it gives works."""
    import subprocess
    import sys

    from jarvis.config import BUNDLED_CORPUS

    path = tmp_path / "notanindex"
    if holds == "a file":
        path.write_text("not an index\n")
    else:
        path.mkdir()
        (path / "notes.txt").write_text("my notes\n")
    (tmp_path / "notanindex-index").mkdir()              # taken: the hint must not suggest it
    (tmp_path / "notanindex-index" / "x").write_text("")
    env = {**__import__("os").environ, "JARVIS_HOME": str(tmp_path / "home")}

    def jarvis(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "jarvis", *args], capture_output=True, text=True, timeout=300,
                              env=env)

    asked = jarvis("search", "cow", "--index", str(path))
    assert asked.returncode == 1 and len(asked.stderr.strip().splitlines()) == 1, asked.stderr
    command = _suggested_command(asked.stderr)
    assert command[command.index("--index") + 1] == str(tmp_path / "notanindex-index-2"), asked.stderr
    command[command.index("FILE")] = str(BUNDLED_CORPUS)
    built = jarvis(*command, "-q")
    assert built.returncode == 0, built.stderr
    searched = jarvis("search", "what do cows drop", "--index", command[command.index("--index") + 1])
    assert searched.returncode == 0 and searched.stdout.startswith("1. Cow"), searched.stdout + searched.stderr
    assert (path / "notes.txt").is_file() if holds == "other files" else path.is_file()    # left alone


def corrupt_pointer(index_dir: Path) -> None:
    (index_dir / "CURRENT").write_text("gen-000099\n")


def corrupt_pointer_garbage(index_dir: Path) -> None:
    (index_dir / "CURRENT").write_text("../../etc\n")


def corrupt_no_pointer(index_dir: Path) -> None:
    (index_dir / "CURRENT").unlink()


def corrupt_meta(index_dir: Path) -> None:
    (index_dir / "gen-000001" / "jarvis-index.json").write_text("{not json")


def corrupt_toc(index_dir: Path) -> None:
    for toc in (index_dir / "gen-000001").glob("*.toc"):
        toc.write_bytes(b"\x00garbage" * 10)


def corrupt_segments(index_dir: Path) -> None:
    for segment in (index_dir / "gen-000001").glob("*.seg"):
        segment.unlink()


def corrupt_unknown_profile(index_dir: Path) -> None:
    meta_path = index_dir / "gen-000001" / "jarvis-index.json"
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "profile": "fancy"}))


@pytest.mark.parametrize("damage", [corrupt_pointer, corrupt_pointer_garbage, corrupt_no_pointer, corrupt_meta,
                                    corrupt_toc, corrupt_segments, corrupt_unknown_profile])
def test_corrupt_index_is_a_one_line_error(tmp_path, damage, capsys):
    corpus = corpus_of(tmp_path, minecraft_pages())
    build_index(corpus, tmp_path / "ix", progress=False)
    damage(tmp_path / "ix")
    with pytest.raises(IndexCorruptError) as info:
        Searcher(tmp_path / "ix")
    assert_one_line_user_error(info.value, "corrupt", "rebuild it")
    assert info.value.path == tmp_path / "ix" and info.value.remedy == REBUILD
    assert_cli_says_how_to_build_it(tmp_path / "ix", capsys, "corrupt", "rebuild it with")
    # ...and rebuilding repairs it
    build_index(corpus, tmp_path / "ix", progress=False)
    with Searcher(tmp_path / "ix") as searcher:
        assert titles(searcher.search("workbench"))[0] == "Crafting table"


@pytest.mark.parametrize("content, needle", [
    (None, "not found"),
    ("", "no pages"),
    ('{"title": "Bed", "url": "u", "paragraphs": ["a bed"]}\nnot json\n', ":2:"),
    ('{"url": "u"}\n', ":1:"),
])
def test_bad_corpus_is_a_one_line_error_and_keeps_the_live_index(tmp_path, content, needle):
    build_index(corpus_of(tmp_path, minecraft_pages()), tmp_path / "ix", progress=False)
    bad = tmp_path / "bad.jsonl"
    if content is not None:
        bad.write_text(content)
    with pytest.raises(CorpusError) as info:
        build_index(bad, tmp_path / "ix", progress=False)
    assert_one_line_user_error(info.value, needle)
    with Searcher(tmp_path / "ix") as searcher:
        assert titles(searcher.search("workbench"))[0] == "Crafting table"


def test_refuses_to_build_into_a_directory_that_is_not_an_index(tmp_path):
    (tmp_path / "notes.txt").write_text("my notes")
    with pytest.raises(SearchIndexError) as info:
        build_index(corpus_of(tmp_path / "c", minecraft_pages()), tmp_path, progress=False)
    assert_one_line_user_error(info.value, "not a Jarvis index")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "notes.txt"]


def test_unknown_profile_is_a_user_error(tmp_path):
    with pytest.raises(SearchIndexError) as info:
        build_index(corpus_of(tmp_path, minecraft_pages()), tmp_path / "ix", profile="fancy", progress=False)
    assert_one_line_user_error(info.value, "fancy", "tuned", "baseline")


# --------------------------------------------------------------------------- the CLI


def test_cli_index_then_search(tmp_path, capsys):
    from jarvis.cli import main

    corpus = corpus_of(tmp_path, minecraft_pages())
    assert main(["index", "--corpus", str(corpus), "--index", str(tmp_path / "ix"), "-q", "--procs", "1"]) == 0
    assert "10 pages" in capsys.readouterr().out
    assert main(["search", "what do endermen drop?", "--index", str(tmp_path / "ix"), "-k", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result[0]["title"] == "Enderman" and len(result) <= 2 and isinstance(result[0]["score"], float)
    assert main(["search", "AND OR NOT", "--index", str(tmp_path / "ix")]) == 0
    assert "no pages matched" in capsys.readouterr().out


def test_cli_corrupt_index_is_one_line_on_stderr(tmp_path, capsys):
    from jarvis.cli import main

    build_index(corpus_of(tmp_path, minecraft_pages()), tmp_path / "ix", progress=False)
    corrupt_toc(tmp_path / "ix")
    assert main(["search", "bed", "--index", str(tmp_path / "ix")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "jarvis index --corpus FILE --index" in err[0]
