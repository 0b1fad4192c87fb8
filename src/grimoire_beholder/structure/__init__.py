"""Chapters, sections and chunks from a parsed document (``chunks``, ``tokens``, ``roles``…).

:data:`MAX_CHUNK_CHARS` lives here, not in ``chunks``, so that a search, which widens a hit
up to it (``search.passages``), reads it without importing the chunker and the parser.
"""

MAX_CHUNK_CHARS = 1200
"""The most characters of one chunk, and so of what one search hit returns (issue 26's bound)."""
