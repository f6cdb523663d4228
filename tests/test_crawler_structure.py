"""Structure that survives extraction: section paths from both heading markups, chrome that is not
content (hatnotes, captions, navigation, infoboxes, table of contents), content tables as citable
text, and page kinds. Synthetic pages in MediaWiki's markup; no network."""
from __future__ import annotations

import pytest

from jarvis.crawler import extract_article
from jarvis.crawler.page_kinds import classify_page
from jarvis.crawler.tables import Grid, row_texts

from test_crawler_extract import BASE, page

URL = f"{BASE}/w/Cow"


def heading_143(level: int, text: str) -> str:
    """MediaWiki 1.43: the heading inside div.mw-heading, the [edit] link beside it."""
    anchor = text.replace(" ", "_")
    return (f'<div class="mw-heading mw-heading{level}"><h{level} id="{anchor}">{text}</h{level}>'
            f'<span class="mw-editsection"><span class="mw-editsection-bracket">[</span>'
            f'<a href="/w/Cow?action=edit&amp;section=1"><span>edit</span></a>'
            f'<span class="mw-editsection-bracket">]</span></span></div>')


def heading_old(level: int, text: str) -> str:
    """MediaWiki before 1.43: span.mw-headline and the [edit] link inside the heading."""
    return (f'<h{level}><span class="mw-headline" id="{text.replace(" ", "_")}">{text}</span>'
            f'<span class="mw-editsection">[<a href="/w/Cow?action=edit&amp;section=1">edit</a>]</span></h{level}>')


@pytest.mark.parametrize("heading", [heading_143, heading_old])
def test_every_paragraph_keeps_its_section_path_in_both_heading_markups(heading):
    body = ("<p>A cow is a mob.</p>"
            + heading(2, "Drops") + "<p>Cows drop things.</p>"
            + heading(3, "On death") + "<ul><li>Some leather</li><li>Some beef</li></ul>"
            + heading(4, "Looting") + "<p>Looting adds more.</p>"
            + heading(3, "Milking") + "<p>Use a bucket.</p>"
            + heading(2, "Behavior") + "<p>Cows wander.</p>")
    article = extract_article(page(body), URL)
    assert list(zip(article.paragraphs, article.sections)) == [
        ("A cow is a mob.", []),
        ("Cows drop things.", ["Drops"]),
        ("Some leather", ["Drops", "On death"]),
        ("Some beef", ["Drops", "On death"]),
        ("Looting adds more.", ["Drops", "On death", "Looting"]),
        ("Use a bucket.", ["Drops", "Milking"]),
        ("Cows wander.", ["Behavior"]),
    ]


def test_edit_links_written_as_text_leave_the_heading_text():
    body = '<p>Lead.</p><h2>Drops [edit]</h2><p>Cows drop things.</p><h2><span class="mw-headline">Usage</span> [edit | edit source]</h2><p>Milk.</p>'
    assert extract_article(page(body), URL).sections == [[], ["Drops"], ["Usage"]]


def test_hatnotes_captions_navigation_infoboxes_and_the_toc_are_not_content():
    body = ('<div role="note" class="hatnote navigation-not-searchable">For the spin-off mob, see elsewhere.</div>'
            '<div class="notaninfobox"><div class="infobox-title">Cow</div><table class="infobox-rows"><tr><th>Health</th>'
            '<td><p>Ten points</p></td></tr></table></div>'
            '<p>A cow is a mob.</p>'
            '<div id="toc" class="toc"><h2 id="mw-toc-heading">Contents</h2><ul><li>1 Drops</li></ul></div>'
            + heading_143(2, "Drops")
            + '<div role="note" class="hatnote navigation-not-searchable">Main article: Drops</div>'
            '<figure class="mw-default-size" typeof="mw:File/Thumb"><a href="/w/File:Cow.png"><img src="/images/Cow.png"></a>'
            '<figcaption>A cow in a field.</figcaption></figure>'
            '<div class="thumb tright"><div class="thumbinner"><div class="thumbcaption"><p>An old caption.</p></div></div></div>'
            '<p>Cows drop leather.</p>'
            '<div role="navigation" class="navbox"><table class="navbox-inner"><tr><td><ul><li><a href="/w/Pig">Pig</a></li></ul>'
            '</td></tr></table></div>')
    for tables in ("drop", "text"):
        article = extract_article(page(body), URL, tables=tables)
        assert list(zip(article.paragraphs, article.sections)) == [("A cow is a mob.", []),
                                                                   ("Cows drop leather.", ["Drops"])]
        assert article.hatnotes == ["For the spin-off mob, see elsewhere.", "Main article: Drops"]
        assert f"{BASE}/w/Pig" in article.links  # navigation still serves discovery


DROP_TABLE = (  # two header rows, a colspan over an icon and a name, a rowspan, footnote markers
    '<table class="wikitable"><tbody>'
    '<tr><th colspan="2" rowspan="2">Item</th><th rowspan="2">Roll Chance</th><th colspan="2">Quantity</th></tr>'
    '<tr><th>Default</th><th>Looting I</th></tr>'
    '<tr><td><span typeof="mw:File"><img src="/images/Leather.png"></span></td><td>Leather[d 1]</td>'
    '<td rowspan="2">100%</td><td>0–2</td><td>0–3[note 1]</td></tr>'
    '<tr><td><img src="/images/Beef.png"></td><td>Raw Beef<sup class="reference">[A]</sup></td><td>1–3</td><td>1–4</td></tr>'
    '<tr><td></td><td>Java Edition:</td><td></td><td></td><td></td></tr>'
    '</tbody></table>')


def test_a_drop_table_becomes_citable_text_per_row_with_headers_spans_and_footnotes_resolved():
    body = "<p>A cow is a mob.</p>" + heading_143(2, "Drops") + heading_143(3, "On death") + "<p>An adult cow drops:</p>" \
        + DROP_TABLE + "<p>Calves drop nothing.</p>"
    article = extract_article(page(body), URL, tables="text")
    assert list(zip(article.paragraphs, article.sections))[1:] == [
        ("An adult cow drops:", ["Drops", "On death"]),
        ("Leather — Roll Chance: 100%; Quantity: Default 0–2, Looting I 0–3.", ["Drops", "On death"]),
        ("Raw Beef — Roll Chance: 100%; Quantity: Default 1–3, Looting I 1–4.", ["Drops", "On death"]),
        ("Calves drop nothing.", ["Drops", "On death"]),
    ]
    sentences = extract_article(page(body), URL, tables="sentences").paragraphs
    assert sentences[2] == "Item: Leather; Roll Chance: 100%; Quantity, Default: 0–2; Quantity, Looting I: 0–3."
    assert extract_article(page(body), URL).paragraphs == [  # "drop": tables are not content
        "A cow is a mob.", "An adult cow drops:", "Calves drop nothing."]


def test_a_transposed_table_leads_each_row_with_its_property_and_layout_tables_read_as_prose():
    transposed = ('<table class="wikitable"><tr><th>Block</th><th>Diamond Ore</th><th>Deepslate Diamond Ore</th></tr>'
                  '<tr><th>Hardness</th><td>3</td><td>4.5</td></tr></table>')
    layout = '<table><tr><td><p>A paragraph laid out in a table.</p><ul><li>An item in it</li></ul></td></tr></table>'
    article = extract_article(page(transposed + layout), URL, tables="text")
    assert article.paragraphs == ["Hardness — Diamond Ore: 3; Deepslate Diamond Ore: 4.5.",
                                  "A paragraph laid out in a table.", "An item in it"]


def test_a_recipe_drawn_as_an_image_keeps_its_ingredients_as_a_row_about_the_page():
    # The wiki draws a crafting recipe as an image beside the ingredient list: the list is the row's
    # only text, and the row is about the page. A lone name beside an image says nothing.
    recipe = ('<table class="wikitable"><tr><th>Ingredients</th><th>Crafting recipe</th></tr>'
              '<tr><td>Glass+<br>Glow Dust</td><td><img src="/images/Grid.png"></td></tr></table>')
    names = ('<table class="wikitable"><tr><th>Name</th><th>Picture</th></tr>'
             '<tr><td>Glimmer Lamp</td><td><img src="/images/Lamp.png"></td></tr></table>')
    body = heading_143(2, "Obtaining") + heading_143(3, "Crafting") + recipe + names
    article = extract_article(page(body, title="Glimmer Lamp"), f"{BASE}/w/Glimmer_Lamp", tables="text")
    assert list(zip(article.paragraphs, article.sections)) == [
        ("Glimmer Lamp — Ingredients: Glass+ Glow Dust.", ["Obtaining", "Crafting"])]
    grid = Grid(header=[["Ingredients", "Crafting recipe"]], rows=[["Glass+ Glow Dust", ""]])
    assert row_texts(grid, "sentences", subject="Glimmer Lamp") == ["Glimmer Lamp; Ingredients: Glass+ Glow Dust."]
    assert row_texts(grid, "text") == []   # no subject known: no row


def test_row_texts_of_a_grid_without_header():
    grid = Grid(header=[], rows=[["Leather", "0–2"], ["", ""], ["Beef", "1–3"]])
    assert row_texts(grid, "sentences") == ["Leather; 0–2.", "Beef; 1–3."]
    assert row_texts(grid, "text") == ["Leather — 0–2.", "Beef — 1–3."]


@pytest.mark.parametrize("title, lead, hatnotes, categories, namespace, kind", [
    ("Cow", "A cow is a passive mob that wanders grassy places.", [], [], 0, "article"),
    ("Tutorials/Tree farming", "Growing trees in rows saves time.", [], [], 0, "tutorial"),
    ("Spud Lamp (April Fools' joke)", "A spud lamp lights a room.", [], [], 0, "joke"),
    ("Spud Lamp", "A spud lamp is a block that lights the Potato dimension in 24w14potato.", [], [], 0, "joke"),
    ("Crate", "A crate is a joke block that holds nothing at all.", [], [], 0, "joke"),
    ("Glowing Rock", "Glowing rock lights caves.", ["This article is about the April Fools' feature. For the block, "
                                                    "see Rock."], [], 0, "joke"),
    ("Cog", "The cog was a block that turned when powered.", [], [], 0, "removed"),
    ("Stonecutter (old)", "The old stonecutter cuts stone.", [], [], 0, "removed"),
    ("Giant rat", "Giant rats are unused mobs that hide in the code.", [], [], 0, "removed"),
    ("Lantern", "A lantern is a light block.", [], ["Removed blocks"], 0, "removed"),
    ("Java Edition 1.20.5", "A small update.", [], [], 0, "version"),
    ("Bedrock Edition beta 1.20.80.22", "A beta.", [], [], 0, "version"),
    ("Education Edition 1.0.21", "An update.", [], [], 0, "version"),
    ("Classic 0.0.23a_01", "An early version.", [], [], 0, "version"),
    ("Pocket Edition v0.16.0 alpha", "An update.", [], [], 0, "version"),
    ("24w14a", "A snapshot.", [], [], 0, "version"),
    ("Frost Update", "The Frost Update is a major update released in winter.", [], [], 0, "version"),
    ("Minecraft  Dungeons:Battlestaff", "A staff.", [], [], 10000, "spinoff"),
    ("Key golem", "A key golem carries a key.", [], ["Minecraft Dungeons mobs"], 0, "spinoff"),
    ("Tappable", "A tappable is an object found in Minecraft Earth that gives items.", [], [], 0, "spinoff"),
    ("Launcher", "The launcher starts Minecraft, Minecraft Dungeons and Minecraft Legends.", [], [], 0, "article"),
    ("Stone (disambiguation)", "Stone may refer to:", [], [], 0, "disambiguation"),
    ("Polished Andesite", "Polished andesite is the polished version of andesite.", [], [], 0, "article"),
    ("Moon", "The moon is a body that appears in the night sky.", [], [], 0, "article"),
    ("Event 2021", "Event 2021 was a livestream held in October.", [], [], 0, "article"),
])
def test_page_kinds_from_what_the_wiki_shows(title, lead, hatnotes, categories, namespace, kind):
    assert classify_page(title, namespace=namespace, categories=categories, lead=lead, hatnotes=hatnotes) == kind
