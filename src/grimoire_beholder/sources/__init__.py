"""External libraries as sources: a Calibre library, a Zotero data folder.

Each reader turns its application's database (read from a private copy, never in place:
``store/foreign_copy.py``) into :class:`~grimoire_beholder.sources.items.SourceItem` s — one
per book or paper, with the file to read, the metadata the person curated and, for Zotero,
their highlights and notes — which ``ingest/external.py`` ingests and syncs.
"""
