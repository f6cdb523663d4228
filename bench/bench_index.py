"""Benchmark of the index stage: build throughput and query latency, tuned vs baseline.

    python bench/bench_index.py                  # bundled corpus (if present) + 10,000 synthetic pages
    python bench/bench_index.py --pages 2000 --procs 1

Prints figures, asserts nothing. The synthetic corpus (~500 words a page, Minecraft-ish
vocabulary with a Zipf-like word distribution) is generated in a temporary directory and
deleted afterwards. Targets on 2 cores: 10,000 pages indexed in under 60 s; p95 query
latency under 20 ms at 10,000 pages with one reused Searcher. "incr s" is an incremental
rebuild after 10 pages changed (the corpus is re-read, the live index copied, 10 pages re-added).
"p95 cpu" is the same latency in CPU time of this process: the figure to trust on a busy machine.
"""
from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from jarvis.percentiles import percentile  # noqa: E402
from jarvis.crawler.corpus import Page, write_corpus  # noqa: E402
from jarvis.index import PROFILES, Searcher, build_index  # noqa: E402

BUNDLED_CORPUS = ROOT / "jarvis" / "samplewiki" / "corpus.jsonl"

MOBS = ("creeper zombie skeleton spider enderman witch villager pillager blaze ghast slime piglin hoglin "
        "warden wither drowned husk stray phantom guardian shulker axolotl bee cow pig sheep chicken horse "
        "llama wolf cat fox panda parrot rabbit turtle dolphin squid goat frog allay sniffer camel strider").split()
MATERIALS = ("oak spruce birch jungle acacia cherry mangrove bamboo crimson warped stone cobblestone granite "
             "diorite andesite deepslate tuff calcite blackstone basalt sandstone prismarine quartz copper iron "
             "gold diamond emerald netherite redstone lapis coal amethyst obsidian glass terracotta wool "
             "concrete mud clay snow ice packed blue red green yellow purple white black mossy cracked chiseled "
             "polished smooth cut waxed oxidized weathered exposed").split()
THINGS = ("block slab stairs wall fence gate door trapdoor button pressure plate sign log planks leaves "
          "sapling ore ingot nugget pickaxe axe shovel hoe sword helmet chestplate leggings boots bow "
          "crossbow trident shield arrow torch lantern chest barrel furnace smoker hopper dropper dispenser "
          "piston observer repeater comparator rail minecart boat bed anvil beacon conduit cauldron "
          "brewing stand enchanting table bookshelf lectern composter potion bucket map compass clock "
          "elytra totem banner carpet candle bell campfire scaffolding ladder").split()
VERBS = ("craft smelt mine break place drop spawn breed tame trade enchant brew repair explode attack "
         "burn grow harvest farm build ride fly swim sleep open activate power detect collect combine "
         "upgrade generate appear despawn teleport shoot summon").split()
PLACES = ("overworld nether end biome village stronghold fortress bastion mineshaft dungeon temple "
          "monument mansion outpost ruined portal desert jungle savanna taiga swamp ocean river "
          "mountain cave badlands plains forest tundra beach island deep dark lush dripstone").split()
COMMON = ("the a an of to and in is it that for on with as by be can are this from or when which its "
          "at if used when player players also only more than will may each one two three four "
          "been has have not into their them they java edition bedrock version update added "
          "chance level item items mob mobs block blocks damage health hearts second seconds "
          "game survival creative mode world light water lava fire".split())


def synthetic_corpus(n_pages: int, words_per_page: int = 500, seed: int = 7) -> list[Page]:
    """Pages with Minecraft-ish titles and text; word frequencies fall off like natural language."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ren", "tor", "vex", "qua", "zil", "dor", "pha", "gri", "sen"]
    common = list(dict.fromkeys(COMMON))
    domain = [w for w in dict.fromkeys(MOBS + MATERIALS + THINGS + VERBS + PLACES) if w not in common]
    rng.shuffle(domain)                                  # no domain word is privileged
    rare = list(dict.fromkeys("".join(rng.choices(syllables, k=3)) for _ in range(4000)))  # the long tail
    vocab = common + domain + [w for w in rare if w not in domain]
    weights = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(vocab))))   # Zipf
    titles = list(dict.fromkeys(f"{m.capitalize()} {t}" for m in MATERIALS + MOBS for t in THINGS))
    rng.shuffle(titles)
    pages = []
    for i in range(n_pages):
        title = titles[i] if i < len(titles) else f"{titles[i % len(titles)]} {i // len(titles) + 1}"
        words = rng.choices(vocab, cum_weights=weights, k=words_per_page)
        words[::40] = title.lower().split()[:1] * len(words[::40])     # pages talk about their subject
        paragraphs = [" ".join(words[j:j + 60]).capitalize() + "." for j in range(0, len(words), 60)]
        aliases = [f"{title} ({rng.choice(['Java', 'Bedrock'])})"] if rng.random() < 0.2 else []
        pages.append(Page(title=title, url=f"https://wiki.example/w/{title.replace(' ', '_')}",
                          paragraphs=paragraphs, aliases=aliases))
    return pages


def questions(pages: list[Page], n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    templates = ["how do i {verb} a {thing}", "what does a {mob} drop", "where can i find {material} {thing}",
                 "how do you {verb} {material} in the {place}", "what is a {title}?", "{title}",
                 "can a {mob} {verb} a {thing} in {place}", "how much damage does a {thing} do to a {mob}"]
    return [rng.choice(templates).format(verb=rng.choice(VERBS), thing=rng.choice(THINGS), mob=rng.choice(MOBS),
                                         material=rng.choice(MATERIALS), place=rng.choice(PLACES),
                                         title=rng.choice(pages).title.lower())
            for _ in range(n)]




def bench_corpus(label: str, corpus: Path, pages: list[Page], workdir: Path, procs: int | None,
                 n_queries: int) -> None:
    queries = questions(pages, n_queries)
    for profile in PROFILES.values():
        index_dir = workdir / f"{label}-{profile.name}"
        stats = build_index(corpus, index_dir, profile=profile, procs=procs, progress=False)
        # an incremental rebuild after an edit of 10 pages (a tenth of a percent at 10,000)
        step = max(1, len(pages) // 10)
        edited = [replace(page, paragraphs=[*page.paragraphs, "Edited."], sha1="") if i % step == 0 else page
                  for i, page in enumerate(pages)]
        write_corpus(edited, workdir / "edited.jsonl")
        update = build_index(workdir / "edited.jsonl", index_dir, profile=profile, progress=False)
        with Searcher(index_dir) as searcher:
            for q in queries[:20]:              # warm up: OS cache, stemmer cache
                searcher.search(q)
            timings, cpu_timings = [], []
            for q in queries:
                start, cpu_start = time.perf_counter(), time.process_time()
                searcher.search(q, k=3)
                timings.append((time.perf_counter() - start) * 1000)
                cpu_timings.append((time.process_time() - cpu_start) * 1000)
        print(f"{label:>10} {profile.name:>8} {stats.pages:>7} {stats.procs:>5} {stats.seconds:>8.1f} "
              f"{stats.pages_per_second:>8.0f} {statistics.median(timings):>8.2f} {percentile(timings, 0.95):>8.2f} "
              f"{max(timings):>8.2f} {percentile(cpu_timings, 0.95):>8.2f} {update.seconds:>7.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10_000, help="synthetic pages (default: %(default)s)")
    parser.add_argument("--words", type=int, default=500, help="words per synthetic page (default: %(default)s)")
    parser.add_argument("--procs", type=int, default=None, help="indexing processes (default: all cores)")
    parser.add_argument("--queries", type=int, default=300, help="timed queries per index (default: %(default)s)")
    args = parser.parse_args()

    print(f"cpu cores: {os.cpu_count()}, python {sys.version.split()[0]}")
    print(f"{'corpus':>10} {'profile':>8} {'pages':>7} {'procs':>5} {'build s':>8} {'pages/s':>8} "
          f"{'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'p95 cpu':>8} {'incr s':>7}")
    with tempfile.TemporaryDirectory(prefix="jarvis-bench-") as tmp:
        workdir = Path(tmp)
        if BUNDLED_CORPUS.is_file():
            from jarvis.crawler.corpus import read_corpus

            bench_corpus("bundled", BUNDLED_CORPUS, read_corpus(BUNDLED_CORPUS), workdir, args.procs, args.queries)
        else:
            print(f"{'bundled':>10} (no {BUNDLED_CORPUS.relative_to(ROOT)} yet; skipped)")
        pages = synthetic_corpus(args.pages, args.words)
        corpus = workdir / "synthetic.jsonl"
        write_corpus(pages, corpus)
        bench_corpus("synthetic", corpus, pages, workdir, args.procs, args.queries)


if __name__ == "__main__":
    main()
