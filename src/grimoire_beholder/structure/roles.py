"""What part of a book a section is: body text, or front matter, contents, index, notes,
bibliography, glossary.

Why: back matter shares the body's vocabulary but rarely holds the answer. An index line
``read.fwf . . . . 11`` or a translator's endnote matches a question's words as well as the
passage that explains them, so search ranks body text first (a measured prior, not an
exclusion: a question about an endnote still finds it), ``Library.lookup`` reads the index
as data, and outlines show each section's role.

Evidence, strongest first:

1. **Markup** (EPUB ``epub:type`` on the document or section, or the nav's landmarks):
   ``endnotes``, ``index``, ``bibliography``, ``toc``, ``dedication`` … A specific type wins
   over the generic ``frontmatter``/``backmatter`` (a translator's introduction is marked
   ``frontmatter introduction`` and is body text).
2. **Titles** of the section or its chapter, in English, German, French, Spanish, Italian,
   Portuguese, Dutch, Russian, Chinese and Japanese ("Concept index", "Anmerkungen",
   "Table des matières", "Bibliografía", "Примечания", "索引" …), numbering and "Appendix D"
   prefixes ignored. An index or contents title must also have the shape (a section titled
   "Creating an index" in a database book is body text).
3. **Shape** of the text alone, for untitled or misleadingly titled sections: mostly
   entries ending in page numbers (an index when the terms run in alphabetical order, a
   contents page when the pages rise — such as the "Front matter" a PDF's outline leaves
   before its first entry —, neither for a table of values like ``Timeout . . . 30``),
   mostly notes ending in a back-link (``↩``), mostly references (initials, surnames and
   years).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Collection

BODY = "body"
FRONT_MATTER = "front_matter"
CONTENTS = "contents"
INDEX = "index"
NOTES = "notes"
BIBLIOGRAPHY = "bibliography"
GLOSSARY = "glossary"
ROLES: tuple[str, ...] = (BODY, FRONT_MATTER, CONTENTS, INDEX, NOTES, BIBLIOGRAPHY, GLOSSARY)
# Bump when the rules here or in book_index.py change: libraries judge their stored
# sections again on their next writable open (ingest/derive.py).
DERIVED_VERSION = "2"

# EPUB 3 structural semantics (epub:type) → role. Specific types only; the generic
# frontmatter/bodymatter/backmatter decide nothing on their own.
_TYPE_ROLES: dict[str, str] = {
    **dict.fromkeys(("index", "index-headnotes", "index-group", "index-entry-list"), INDEX),
    **dict.fromkeys(("toc", "loi", "lot", "lov", "loa", "page-list", "landmarks"), CONTENTS),
    **dict.fromkeys(("endnotes", "footnotes", "rearnotes", "notes", "endnote",
                     "footnote", "rearnote"), NOTES),
    **dict.fromkeys(("bibliography", "biblioentry"), BIBLIOGRAPHY),
    **dict.fromkeys(("glossary", "glossdef", "glossterm"), GLOSSARY),
    **dict.fromkeys(("titlepage", "halftitlepage", "copyright-page", "dedication", "epigraph",
                     "imprint", "colophon", "cover", "frontispiece", "seriespage",
                     "acknowledgments", "acknowledgements", "contributors", "other-credits",
                     "errata", "imprimatur", "revision-history", "uncopyright"), FRONT_MATTER),
    **dict.fromkeys(("chapter", "part", "division", "volume", "subchapter", "introduction",
                     "preface", "foreword", "prologue", "epilogue", "afterword", "conclusion",
                     "appendix", "preamble", "bodymatter", "z3998:fiction"), BODY),
}
_TYPE_PRIORITY = (INDEX, CONTENTS, NOTES, BIBLIOGRAPHY, GLOSSARY, FRONT_MATTER, BODY)

# Whole (normalised) titles per role; a title may also *end* with an index word
# ("Function and variable index", "Index of names" is matched by the prefix list).
_TITLES: dict[str, tuple[str, ...]] = {
    CONTENTS: ("contents", "table of contents", "list of figures", "list of tables",
               "list of illustrations", "list of listings", "list of maps", "brief contents",
               "detailed contents", "inhalt", "inhaltsverzeichnis", "abbildungsverzeichnis",
               "tabellenverzeichnis", "table des matieres", "sommaire", "table des figures",
               "indice", "indice general", "contenido", "contenidos", "sumario", "sommario",
               "conteudo", "inhoud", "inhoudsopgave", "spis tresci", "innehall",
               "содержание", "оглавление", "目次", "目录", "目錄"),
    INDEX: ("index", "indexes", "indices", "general index", "subject index", "author index",
            "name index", "index of names", "index of subjects", "register", "sachregister",
            "stichwortverzeichnis", "namensregister", "personenregister", "schlagwortregister",
            "index analytique", "index des noms", "index general", "indice alfabetico",
            "indice analitico", "indice onomastico", "indice dei nomi", "indice remissivo",
            "trefwoordenregister", "предметный указатель", "указатель", "алфавитный указатель",
            "索引", "さくいん"),
    NOTES: ("notes", "endnotes", "footnotes", "notes on the text", "notes and references",
            "translator s notes", "editor s notes", "explanatory notes", "anmerkungen",
            "endnoten", "fussnoten", "notes de fin", "notas", "notas finales", "note",
            "note al testo", "aantekeningen", "noten", "примечания", "комментарии", "注",
            "注释", "註", "脚注"),
    BIBLIOGRAPHY: ("bibliography", "references", "works cited", "further reading",
                   "sources", "literature", "select bibliography", "literaturverzeichnis",
                   "literatur", "quellen", "bibliographie", "references bibliographiques",
                   "bibliografia", "referencias", "riferimenti bibliografici", "bibliografie",
                   "literatuur", "список литературы", "литература", "参考文献", "引用文献"),
    GLOSSARY: ("glossary", "glossary of terms", "glossar", "glossaire", "glosario",
               "glossario", "woordenlijst", "словарь", "глоссарий", "用語集", "术语表"),
    FRONT_MATTER: ("front matter", "title page", "titlepage", "half title", "copyright",
                   "copyright page", "dedication", "imprint", "colophon", "acknowledgements",
                   "acknowledgments", "about the author", "about this book", "also by",
                   "impressum", "widmung", "danksagung", "dedicace", "remerciements",
                   "dedicatoria", "agradecimientos", "ringraziamenti", "dedica",
                   "agradecimentos", "dankwoord", "посвящение", "благодарности",
                   "uncopyright"),
}
_TITLE_ROLE = {title: role for role, titles in _TITLES.items() for title in titles}
_INDEX_TITLE = re.compile(r"(?:^| )index(?:es)?$|^index (?:of|to|des|der) ")
# "Appendix D", "Chapter 3", "12", "A" (an appendix letter), "IV." before the title proper.
_TITLE_PREFIX = re.compile(
    r"^(?:(?:appendix|anhang|annexe|apendice|chapter|kapitel|chapitre|part|teil)\s+)?"
    r"(?:\d+(?:\s\d+)*|[a-z]|[ivxlc]+)\s+(?=\S)")
# "5 Sources", "Chapter 3 Copyright": a numbered chapter is part of the body's sequence, so
# its title alone does not make it back matter (its text must bear the role out).
_NUMBERED = re.compile(r"^\s*(?:(?:chapter|kapitel|chapitre|cap[ií]tulo|capitolo)\s+)?\d",
                       re.IGNORECASE)
_BACKLINK = re.compile(r"[↩↑]\ufe0e?\s*$")
_NOTE_NUMBER = re.compile(r"^\s*[\[(]?(\d{1,4})[\].)]?\s")
_YEAR = re.compile(r"\(?\b(?:1[5-9]|20)\d\d[a-z]?\b\)?")
_AUTHOR = re.compile(r"\b(?:[A-Z]\.\s?){1,3}[A-Z][a-z]+|\b[A-Z][a-z]+,\s(?:[A-Z]\.\s?){1,3}")
_SMALL = 40  # characters: below this a section has no shape to read


def normalize_title(title: str) -> str:
    """Lower case, accents and punctuation gone, numbering prefixes dropped."""
    folded = unicodedata.normalize("NFKD", title.casefold())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    words = re.sub(r"[\W_]+", " ", folded).strip()
    bare = _TITLE_PREFIX.sub("", words)
    return bare or words


def title_role(title: str) -> str | None:
    """The role a heading names ("Concept index" → index), or None for any other title."""
    norm = normalize_title(title)
    if not norm:
        return None
    if norm in _TITLE_ROLE:
        return _TITLE_ROLE[norm]
    return INDEX if _INDEX_TITLE.search(norm) else None


def hint_role(hints: Collection[str]) -> str | None:
    """The role EPUB structural semantics give, the most specific one first."""
    found = {_TYPE_ROLES[h] for h in (t.lower() for t in hints) if h in _TYPE_ROLES}
    return next((role for role in _TYPE_PRIORITY if role in found), None)


def _paragraphs(text: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", text[:200_000]) if p.strip()]


def _notes_shaped(paragraphs: list[str], *, numbered: bool) -> bool:
    """Mostly notes: paragraphs ending in a back-link (``↩``), or — only when a title
    already says "notes", since ordered lists look the same — numbered 1, 2, 3 … in turn."""
    if len(paragraphs) < 5:
        return False
    backlinked = sum(1 for p in paragraphs if _BACKLINK.search(p))
    in_turn = 0
    if numbered:
        numbers = [int(m.group(1)) for m in map(_NOTE_NUMBER.match, paragraphs) if m]
        in_turn = sum(1 for a, b in itertools.pairwise(numbers) if b == a + 1) + 1
    return max(backlinked, in_turn) >= 0.6 * len(paragraphs)


def _references_shaped(text: str) -> bool:
    """Mostly references: many author names (with initials) and years for the text's size."""
    sample = text[:50_000]
    if len(sample) < 400:
        return False
    years = len(_YEAR.findall(sample))
    authors = len(_AUTHOR.findall(sample))
    per_kchar = 1000 / len(sample)
    return (years >= 5 and authors >= 5 and years * per_kchar >= 4
            and authors * per_kchar >= 4)


def shape_role(text: str) -> str | None:
    """The role the text's shape alone says, or None for ordinary prose."""
    if len(text.strip()) < _SMALL:
        return None
    from grimoire_beholder.parse.backindex import shape  # not on a search's import path

    form = shape(text)
    if form.entries >= 5 and form.covered >= 0.5:
        if form.rising >= 0.85 and form.numbered >= 0.3:
            return CONTENTS
        if form.ordered >= 0.6:
            return INDEX if form.entries >= 8 else CONTENTS
        if form.rising >= 0.85:
            return CONTENTS
        # neither alphabetical nor rising: a table of values ("Timeout . . . 30"), not a map
    if _notes_shaped(_paragraphs(text), numbered=False):
        return NOTES
    if _references_shaped(text):
        return BIBLIOGRAPHY
    return None


def _confirms(role: str, text: str) -> bool:
    """Whether a sub-heading's role ("Notes", "References") is borne out by its text."""
    if role == NOTES:
        return _notes_shaped(_paragraphs(text), numbered=True)
    return _references_shaped(text)


def _entries_shaped(text: str) -> bool:
    from grimoire_beholder.parse.backindex import shape

    form = shape(text)
    return form.entries >= 3 and form.covered >= 0.3


def section_role(chapter_title: str, section_title: str, text: str,
                 hints: Collection[str] = ()) -> str:
    """The role of one section (see the module docstring for the order of evidence).

    ``hints`` are markup types of the section (EPUB ``epub:type`` tokens, landmarks).
    A titled sub-section takes its own title's role first, then its chapter's: the
    "Endnotes" chapter's auto-split parts are notes, a "Notes" sub-section of a body
    chapter or a numbered chapter "5 Sources" is whatever its text looks like.
    """
    marked = hint_role(hints)
    if marked is not None and marked != BODY:
        return marked
    own = title_role(section_title) if section_title else None
    chapter = title_role(chapter_title)
    shaped = shape_role(text)
    numbered = bool(_NUMBERED.match(chapter_title))
    for named, needs_proof in ((own, True), (chapter, numbered)):
        if named is None:
            continue
        if named in (INDEX, CONTENTS):
            if _entries_shaped(text) or len(text.strip()) < _SMALL:
                return named
            continue
        unproven = needs_proof and (
            (named in (NOTES, BIBLIOGRAPHY) and not _confirms(named, text))
            or (named in (FRONT_MATTER, GLOSSARY) and numbered))
        if unproven:
            continue  # a "Sources" sub-heading or chapter "5 Sources" of the body
        if named == FRONT_MATTER and shaped == CONTENTS:
            return CONTENTS  # a PDF's "Front matter" that is mostly its contents pages
        if named == FRONT_MATTER and marked == BODY:
            continue
        return named
    if marked == BODY:
        return BODY
    return shaped or BODY


def whole_book(roles: list[str]) -> list[str]:
    """A book's section roles, unless none of them is body: a file that is nothing but
    "Notes" or "Sources" (a Markdown note, a reading list) is its own subject, not the
    back matter of some body to rank below."""
    return roles if BODY in roles else [BODY] * len(roles)
