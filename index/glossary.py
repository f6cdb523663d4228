"""Players' words for things the wiki calls otherwise: community slang, abbreviations and old names.

Redirects already carry many old names as aliases ("Workbench" -> Crafting table), but a crawl only
learns the redirects it meets, and players use words no redirect has ("notch apple", "boa", "skellies").
A question that uses one gets the wiki's name added ("what does a notch apple do (enchanted golden
apple)"), so both the lexical and the dense ranking see the name the pages use. The table is general
Minecraft knowledge, not tuned to any question set; extend it freely.
"""
from __future__ import annotations

import re
from functools import lru_cache

# players' word or phrase -> the wiki's name
GLOSSARY: dict[str, str] = {
    # items and blocks
    "notch apple": "enchanted golden apple", "god apple": "enchanted golden apple",
    "enchanted gapple": "enchanted golden apple", "egap": "enchanted golden apple", "gapple": "golden apple",
    "workbench": "crafting table", "crafting bench": "crafting table",
    "ench table": "enchanting table", "enchant table": "enchanting table", "enchantment table": "enchanting table",
    "dynamite": "tnt", "cobble": "cobblestone", "obby": "obsidian", "debris": "ancient debris",
    "mob spawner": "monster spawner", "spawner": "monster spawner", "pearl": "ender pearl",
    "ender eye": "eye of ender", "totem": "totem of undying", "wings": "elytra", "grass path": "dirt path",
    "pumpkin head": "carved pumpkin", "jack o lantern": "jack o'lantern", "redstone dust": "redstone",
    "furnace minecart": "minecart with furnace", "nametag": "name tag", "spider web": "cobweb",
    "web": "cobweb", "webs": "cobweb", "lapis": "lapis lazuli", "quartz": "nether quartz",
    # mobs
    "pigman": "zombified piglin", "pigmen": "zombified piglin", "zombie pigman": "zombified piglin",
    "zombie pigmen": "zombified piglin", "zpm": "zombified piglin", "enderdragon": "ender dragon",
    "the dragon": "ender dragon", "skelly": "skeleton", "skellies": "skeleton", "skele": "skeleton",
    "wither skele": "wither skeleton", "mushroom cow": "mooshroom", "snowman": "snow golem",
    "snow man": "snow golem", "golem": "iron golem", "testificate": "villager", "testificates": "villager",
    "squidward": "squid", "zombie pig": "zombified piglin", "dog": "wolf", "dogs": "wolf", "puppy": "wolf",
    "kitty": "cat", "kitten": "cat", "horsey": "horse",
    # enchantments, effects, potions
    "boa": "bane of arthropods", "prot": "protection", "fire prot": "fire protection",
    "blast prot": "blast protection", "proj prot": "projectile protection", "sharp": "sharpness",
    "unbreak": "unbreaking", "eff": "efficiency", "regen": "regeneration", "invis": "invisibility",
    "str potion": "strength potion", "pot": "potion", "pots": "potion", "fire res": "fire resistance",
    # places
    "mesa": "badlands", "mushroom island": "mushroom fields", "mushroom biome": "mushroom fields",
    "roofed forest": "dark forest", "swampland": "swamp", "extreme hills": "windswept hills",
    "cold taiga": "snowy taiga", "ice plains": "snowy plains", "water temple": "ocean monument",
    "ocean temple": "ocean monument", "desert temple": "desert pyramid", "jungle temple": "jungle pyramid",
    "witch hut": "swamp hut", "warden city": "ancient city", "deep dark city": "ancient city",
    "hell": "the nether", "end dimension": "the end", "nether fort": "nether fortress",
    "bastion": "bastion remnant", "mansion": "woodland mansion",
    # mechanics
    "xp": "experience", "exp": "experience", "hp": "health", "hearts": "health",
    "day night cycle": "daylight cycle", "day length": "daylight cycle",
    "minecraft day": "daylight cycle", "mob cap": "spawn", "afk": "idle",
    # where a material is mined is said on its ore's page ("what y level are diamonds at": Diamond Ore)
    "y level": "ore", "y-level": "ore", "branch mine": "ore", "strip mine": "ore",
}


# players' everyday verbs -> the verbs the wiki writes ("Cobwebs can be obtained using shears")
ACTIONS: dict[str, str] = {
    "pick up": "obtain", "pick it up": "obtain", "collect": "obtain", "farm": "obtain",
    "set off": "ignite activate", "light up": "ignite", "blow up": "explode",
    "get rid of": "remove cure", "take off": "remove", "power up": "charge", "fill up": "charge",
    "dupe": "duplicate", "fix": "repair", "make babies": "breed", "turn into": "convert transform",
}
# Words the wiki's prose uses for a player's verb, that help a reader pick the sentence but would pull
# general pages into retrieval ("love mode" is on every breedable mob's page and on Breeding): the wiki
# says how to breed a mob as what "activates love mode".
PROSE: dict[str, str] = {"breed": "love mode", "breeding": "love mode", "make babies": "love mode"}


@lru_cache(maxsize=2)
def _pattern(table: str) -> re.Pattern:
    # Longest phrases first, so "zombie pigman" wins over "pigman".
    phrases = sorted(_TABLES[table], key=len, reverse=True)
    # A name counts in the plural too ("mushroom islands", "witch huts"); a verb as written.
    plural = r"(?:s|es)?" if table == "names" else ""
    return re.compile(r"(?<![\w'])(" + "|".join(re.escape(p) for p in phrases) + r")" + plural + r"(?![\w'])",
                      re.IGNORECASE)


_TABLES = {"names": GLOSSARY, "actions": ACTIONS, "prose": PROSE}


def expand_question(question: str, tables: tuple[str, ...] = ("names", "actions")) -> str:
    """The question with the wiki's words for the players' words it uses added in brackets: names
    of things (GLOSSARY), verbs (ACTIONS) and the prose's words for them (PROSE, for readers only);
    ``tables`` picks which."""
    added = []
    for table in tables:
        for match in _pattern(table).finditer(question):
            word = _TABLES[table][match.group(1).casefold()]
            if word not in added and word not in question.casefold():
                added.append(word)
    return f"{question} ({', '.join(added)})" if added else question
