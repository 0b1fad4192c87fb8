"""``check``: is the library file sound? SQLite's own integrity check plus the consistency
rules every interrupted library is held to in the crash tests (``store.chunks.integrity``).

Read-only, so it runs beside a live ``serve-mcp`` or on a library on read-only media. Exit 0
when sound, 1 with one line per problem and what to do about it.
"""

from __future__ import annotations

import typer

from .cli_app import ConfigOpt, JsonOpt, app, with_library

ADVICE = ("restore the library file from a backup, or delete and ingest again the books "
          "concerned; `reindex-fts` rebuilds the keyword index alone")


@app.command()
def check(json_out: JsonOpt = False, config: ConfigOpt = None) -> None:
    """Check the library file: SQLite's integrity check and the index consistency rules."""
    from .cli_render import err, out, print_json

    result = with_library(config, lambda lib: {"database": str(lib.config.database_path),
                                               **lib.integrity()}, read_only=True)
    problems = list(result["problems"])
    if json_out:
        print_json({**result, "ok": not problems})
    elif problems:
        for problem in problems:
            err.print(f"problem: {problem}", markup=False)
        err.print(f"{result['database']}: {len(problems)} problem(s): {ADVICE}", markup=False)
    else:
        out.print(f"{result['database']}: ok — {result['embedded_chunks']} embedded chunks, "
                  f"{result['vectors']} vectors, {result['fts_rows']} keyword rows",
                  markup=False)
    if problems:
        raise typer.Exit(1)
