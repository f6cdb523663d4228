"""What MediaWiki's parser writes inside ``.mw-parser-output``, for the sample wiki's sources.

Paragraphs, lists, tables, headings with ``[edit]`` links, a table of contents, reference markers
and the reference list, infoboxes, hatnotes and navboxes, in the markup MediaWiki 1.43 gives the
Minecraft Wiki.

Paragraph contract: the text of each ``<p>`` and body ``<li>`` is exactly the source's
``plain_text``. Everything else (infobox, navbox, hatnote, table of contents, references) sits in
the elements the contract drops, and no ``<p>`` or ``<li>`` is generated outside them.
"""
from __future__ import annotations

import html
from urllib.parse import quote

from jarvis_lab.samplewiki.site import SampleWiki
from jarvis_lab.samplewiki.source import (
    Article, Block, Bold, Heading, Inlines, Link, ListBlock, Paragraph, Ref, Table, Text, iter_block_inlines,
    plain_text,
)
from jarvis_lab.samplewiki.titles import dbkey, index_php, normalize_title, split_namespace, talk_title, url_path

TOC_MIN_HEADINGS = 4          # MediaWiki shows a table of contents from four headings on
IMAGE_SIZE = 150


def esc(value: str) -> str:
    return html.escape(value, quote=False)


def esc_attr(value: str) -> str:
    return html.escape(value, quote=True)


def image_path(file_title: str) -> str:
    return "/images/" + quote(dbkey(split_namespace(file_title)[1]))


def wrap_parser_output(inner: str) -> str:
    return (f'<div class="mw-content-ltr mw-parser-output" lang="en" dir="ltr">{inner}\n'
            "<!-- \nNewPP limit report\nRendered by the Jarvis sample wiki\n-->\n</div>")



def unique_anchor(text: str, taken: set[str]) -> str:
    """A heading's id as MediaWiki makes it ("Drops_2" for the second "Drops"), added to ``taken``."""
    base = dbkey(" ".join(text.split())) or "section"
    anchor, n = base, 1
    while anchor in taken:
        n += 1
        anchor = f"{base}_{n}"
    taken.add(anchor)
    return anchor

class Body:
    """HTML of one page's content, written as MediaWiki's parser writes it."""

    def __init__(self, wiki: SampleWiki, title: str) -> None:
        self.wiki = wiki
        self.title = title                 # links to it become self-links; [edit] links edit it
        self.notes: list[str] = []         # reference texts, in order of their markers
        self.anchors: set[str] = set()
        self.sections = 0

    # ------------------------------------------------------------------ inline

    def inline(self, inlines: Inlines) -> str:
        out = []
        for part in inlines:
            if isinstance(part, Text):
                out.append(esc(part.text))
            elif isinstance(part, Link):
                out.append(self.link(part))
            elif isinstance(part, Bold):
                out.append(f"<b>{self.inline(part.children)}</b>")
            elif isinstance(part, Ref):
                out.append(self.ref(part))
        return "".join(out)

    def link(self, link: Link) -> str:
        label = esc(link.label)
        target = normalize_title(link.target)
        fragment = "#" + dbkey(link.anchor) if link.anchor else ""
        if target == self.title:
            if fragment:
                return f'<a href="{esc_attr(fragment)}" class="mw-selflink-fragment">{label}</a>'
            return f'<a class="mw-selflink selflink">{label}</a>'
        kind = self.wiki.kind(target)
        if kind is None:
            href = index_php(target, action="edit", redlink="1")
            return f'<a href="{esc_attr(href)}" class="new" title="{esc_attr(target)} (page does not exist)">{label}</a>'
        css = {"redirect": ' class="mw-redirect"', "disambiguation": ' class="mw-disambig"'}.get(kind, "")
        return f'<a href="{esc_attr(url_path(target) + fragment)}"{css} title="{esc_attr(target)}">{label}</a>'

    def ref(self, ref: Ref) -> str:
        # No whitespace around the marker: the paragraph's text must stay exactly the source's.
        self.notes.append(self.inline(ref.note))
        n = len(self.notes)
        return (f'<sup id="cite_ref-{n}" class="reference"><a href="#cite_note-{n}">'
                f'<span class="cite-bracket">&#91;</span>{n}<span class="cite-bracket">&#93;</span></a></sup>')

    # ------------------------------------------------------------------ blocks

    def _anchor(self, text: str) -> str:
        return unique_anchor(text, self.anchors)

    def blocks(self, blocks: list[Block], toc: bool = True) -> str:
        """Paragraphs, lists, tables and headings; the table of contents goes before the first heading
        and the reference list (with its own heading) at the end."""
        blocks = list(blocks)
        if _has_refs(blocks) or self.notes:
            blocks.append(Heading(2, (Text("References"),)))
        sections = [(b, self._anchor(plain_text(b.inlines))) for b in blocks if isinstance(b, Heading)]
        anchors = iter(anchor for _, anchor in sections)
        toc_html = self.toc(sections) if toc and len(sections) >= TOC_MIN_HEADINGS else ""
        out = []
        for block in blocks:
            if isinstance(block, Heading):
                out.append(toc_html)
                toc_html = ""
                out.append(self.heading(block, next(anchors)))
            elif isinstance(block, Paragraph):
                out.append(f"<p>{self.inline(block.inlines)}\n</p>")
            elif isinstance(block, ListBlock):
                tag = "ol" if block.ordered else "ul"
                items = "\n".join(f"<li>{self.inline(item)}</li>" for item in block.items)
                out.append(f"<{tag}>{items}</{tag}>")
            elif isinstance(block, Table):
                out.append(self.table(block))
        if self.notes:
            out.append(self.references())
        return "\n".join(part for part in out if part)

    def heading(self, heading: Heading, anchor: str) -> str:
        self.sections += 1
        text = self.inline(heading.inlines)
        edit = index_php(self.title, action="edit", section=str(self.sections))
        tooltip = f"Edit section: {' '.join(plain_text(heading.inlines).split())}"
        return (f'<div class="mw-heading mw-heading{heading.level}"><h{heading.level} id="{esc_attr(anchor)}">{text}'
                f'</h{heading.level}><span class="mw-editsection"><span class="mw-editsection-bracket">[</span>'
                f'<a href="{esc_attr(edit)}" title="{esc_attr(tooltip)}"><span>edit</span></a>'
                f'<span class="mw-editsection-bracket">]</span></span></div>')

    def toc(self, sections: list[tuple[Heading, str]]) -> str:
        out = ['<div id="toc" class="toc" role="navigation" aria-labelledby="mw-toc-heading">'
               '<input type="checkbox" role="button" id="toctogglecheckbox" class="toctogglecheckbox" style="display:none">'
               '<div class="toctitle" lang="en" dir="ltr"><h2 id="mw-toc-heading">Contents</h2><span class="toctogglespan">'
               '<label class="toctogglelabel" for="toctogglecheckbox"></label></span></div>', "<ul>"]
        top = sub = 0
        for index, (heading, anchor) in enumerate(sections, 1):
            is_sub = heading.level == 3 and top > 0
            if is_sub:
                sub += 1
                if sub == 1:
                    out.append("<ul>")
                number, level = f"{top}.{sub}", 2
            else:
                if sub:
                    out.append("</ul>")
                if top:
                    out.append("</li>")
                top, sub = top + 1, 0
                number, level = str(top), 1
            out.append(f'<li class="toclevel-{level} tocsection-{index}"><a href="#{esc_attr(anchor)}">'
                       f'<span class="tocnumber">{number}</span> <span class="toctext">'
                       f'{esc(" ".join(plain_text(heading.inlines).split()))}</span></a>' + ("</li>" if is_sub else ""))
        if sub:
            out.append("</ul>")
        if top:
            out.append("</li>")
        out.append("</ul>\n</div>")
        return "\n".join(out)

    def table(self, table: Table) -> str:
        rows = []
        if table.header:
            rows.append("<tr>\n" + "\n".join(f"<th>{self.inline(cell)}\n</th>" for cell in table.header) + "</tr>")
        for row in table.rows:
            rows.append("<tr>\n" + "\n".join(f"<td>{self.inline(cell)}\n</td>" for cell in row) + "</tr>")
        return '<table class="wikitable">\n<tbody>' + "\n".join(rows) + "</tbody></table>"

    def references(self) -> str:
        items = "\n".join(f'<li id="cite_note-{n}"><span class="mw-cite-backlink"><a href="#cite_ref-{n}">&#8593;</a>'
                          f'</span> <span class="reference-text">{note}</span>\n</li>'
                          for n, note in enumerate(self.notes, 1))
        return f'<div class="reflist"><div class="mw-references-wrap"><ol class="references">\n{items}\n</ol></div></div>'

    # ------------------------------------------------------------------ article parts

    def hatnote(self, inlines: Inlines) -> str:
        return f'<div role="note" class="hatnote navigation-not-searchable">{self.inline(inlines)}</div>'

    def infobox(self, article: Article) -> str:
        file_title = self.wiki.file_title(article.title)
        image = (f'<span typeof="mw:File"><a href="{esc_attr(url_path(file_title))}" class="mw-file-description" '
                 f'title="{esc_attr(article.title)}"><img alt="{esc_attr(article.title)}" src="{esc_attr(image_path(file_title))}" '
                 f'decoding="async" width="{IMAGE_SIZE}" height="{IMAGE_SIZE}" class="mw-file-element"></a></span>')
        rows = [f'<tr><th colspan="2" class="infobox-title">{esc(article.title)}</th></tr>',
                f'<tr><td colspan="2" class="infobox-image">{image}</td></tr>']
        rows += [f"<tr><th>{esc(key)}</th><td>{self.inline(value)}\n</td></tr>" for key, value in article.infobox.items()]
        return '<table class="infobox">\n<tbody>' + "\n".join(rows) + "</tbody></table>"

    def navbox(self, group: str) -> str:
        template = f"Template:Navbox {group}"
        talk = talk_title(template)
        title_id = dbkey(split_namespace(template)[1])
        bar = (f'<div class="navbar plainlinks hlist navbar-mini"><ul>'
               f'<li class="nv-view"><a href="{esc_attr(url_path(template))}" title="{esc_attr(template)}"><abbr title="View this template">v</abbr></a></li>'
               f'<li class="nv-talk"><a href="{esc_attr(index_php(talk, action="edit", redlink="1"))}" class="new" '
               f'title="{esc_attr(talk)} (page does not exist)"><abbr title="Discuss this template">t</abbr></a></li>'
               f'<li class="nv-edit"><a href="{esc_attr(index_php(template, action="edit"))}" title="{esc_attr(template)}">'
               f'<abbr title="Edit this template">e</abbr></a></li></ul></div>')
        rows = [f'<tr><th colspan="2" class="navbox-title">{bar}<div id="{esc_attr(title_id)}">{esc(group.title())}</div></th></tr>']
        for row in self.wiki.navbox_rows(group):
            entries = "".join(f"<li>{self.link(Link(t, '', t))}</li>" for t in row.titles)
            rows.append(f'<tr><th scope="row" class="navbox-group">{esc(row.label)}</th>'
                        f'<td class="navbox-list hlist"><ul>{entries}</ul></td></tr>')
        return (f'<div role="navigation" class="navbox" aria-labelledby="{esc_attr(title_id)}">'
                f'<table class="navbox-inner">\n<tbody>' + "\n".join(rows) + "</tbody></table></div>")


def _has_refs(blocks: list[Block]) -> bool:
    def walk(inlines: Inlines) -> bool:
        return any(isinstance(p, Ref) or (isinstance(p, Bold) and walk(p.children)) for p in inlines)
    return any(walk(inlines) for inlines in iter_block_inlines(blocks))
