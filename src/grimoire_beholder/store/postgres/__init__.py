"""A library in PostgreSQL with pgvector: the second storage engine (``engine.PostgresEngine``).

Imported only when a library's locator is a ``postgresql://`` URL; it needs the optional
``postgres`` extra (psycopg 3 and pgvector's client).
"""
