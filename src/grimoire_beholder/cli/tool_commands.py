"""CLI commands around search quality and assistants: ``eval``, ``stats`` and ``hook``.

Kept apart from ``cli/library_commands.py`` so that file stays about the library's core verbs; the
commands register on the one Typer app of ``app`` (``cli/entry.py`` imports this module).

The two ``hook`` commands are for Claude Code's hooks (see README.md). A hook runs on every
session start or prompt, so they must be fast and must never break the assistant: no model
is loaded (keyword search only), the library is opened read-only, and *any* failure prints
nothing and exits 0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from grimoire_beholder.cli.app import (
    ConfigOpt,
    JsonOpt,
    LibraryOpt,
    app,
    input_path,
    reported_errors,
    with_library,
)
from grimoire_beholder.cli.assistant_hooks import print_hook
from grimoire_beholder.cli.help_pages import command, help_when_bare
from grimoire_beholder.text import MOST_HITS

if TYPE_CHECKING:
    from grimoire_beholder.library import Library

hook_app = typer.Typer(help="Hooks for AI assistants (Claude Code): print library context.",
                       rich_markup_mode=None)
help_when_bare(hook_app)
app.add_typer(hook_app, name="hook", rich_help_panel="Assistants")

EVAL_MODES = ("hybrid", "vector", "keyword")
EVAL_KS = (1, 5, 10)


def _run_path(base: Path, mode: str, many: bool) -> Path:
    """``run.jsonl`` → ``run-hybrid.jsonl`` when several modes are written."""
    return base.with_name(f"{base.stem}-{mode}{base.suffix}") if many else base


@command(app, 'Check it', "eval", examples=(
    'grimoire-beholder eval questions.jsonl',
    'grimoire-beholder eval questions.jsonl --mode all --run-out run.jsonl',
))
def eval_(
    questions: Annotated[Path, typer.Argument(
        parser=input_path,
        help="Questions, one JSON object a line: id, question, and for an answerable one "
        "gold_file plus evidence, gold_page, gold_chapter or gold_anchor (see the README).")],
    mode: Annotated[Literal["hybrid", "vector", "keyword", "all"], typer.Option(
        help="Which retrieval to score; all scores each.")] = "hybrid",
    run_out: Annotated[Path | None, typer.Option(
        "--run-out", help="Write the run (JSONL); with --mode all one file per mode, "
        "suffixed -MODE.", show_default=False)] = None,
    top_k: Annotated[int, typer.Option(
        "--top-k", "-k", min=1, max=MOST_HITS, help="Hits per question.")] = 10,
    json_out: JsonOpt = False,
    config: ConfigOpt = None,
    library: LibraryOpt = None,
) -> None:
    """Score retrieval on a question set: recall@1/5/10, MRR@10 and abstention per mode.

    With --top-k under 10, a recall or MRR deeper than the hits searched for shows as —."""
    from grimoire_beholder.cli import evaluation

    modes = list(EVAL_MODES) if mode == "all" else [mode]

    with reported_errors():
        items, skipped = evaluation.scorable_questions(evaluation.load_questions(questions),
                                                       questions)
    if skipped:
        from grimoire_beholder.cli.rendering import err

        err.print(f"warning: left out {len(skipped)} answerable "
                  f"question{'' if len(skipped) == 1 else 's'} that no answer could match (no "
                  "gold_file, or none of evidence, gold_page, gold_chapter, gold_anchor): "
                  f"{', '.join(skipped[:5])}{' …' if len(skipped) > 5 else ''}", markup=False)

    def run(lib: Library) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for m in modes:
            records = evaluation.run_questions(lib, items, mode=m, top_k=top_k)
            if run_out is not None:
                _run_path(run_out, m, len(modes) > 1).write_text(
                    "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")
            scores = evaluation.score_run(items, records, EVAL_KS, retrieved=top_k)
            scores["abstention"] = evaluation.abstention(items, records)
            out[m] = scores
        return out

    from grimoire_beholder.config import load_config
    from grimoire_beholder.library import Library

    with reported_errors():
        # Evaluation searches are not the user's: keep them out of the savings counters.
        cfg = load_config(config, library=library).with_overrides(record_stats=False)
        with Library.open(config=cfg, read_only=True) as lib:
            results = run(lib)
    if json_out:
        from grimoire_beholder.cli.plain_output import print_json

        print_json(results)
        return
    print("| mode | R@1 | R@5 | R@10 | MRR@10 | unanswerable abstained | answerable abstained |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for m, s in results.items():
        a = s["abstention"]
        print(f"| {m} | {_num(s['recall@1'])} | {_num(s['recall@5'])} | "
              f"{_num(s['recall@10'])} | {_num(s['mrr@10'])} | "
              f"{a['unanswerable_abstained']}/{a['unanswerable']} | "
              f"{a['answerable_abstained']}/{a['answerable']} |")


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


@command(app, 'Check it', examples=(
    'grimoire-beholder stats',
))
def stats(json_out: JsonOpt = False, config: ConfigOpt = None,
          library: LibraryOpt = None) -> None:
    """Cumulative token savings: passage text served vs the full books it came from."""
    data = with_library(config, lambda lib: lib.savings(), library=library,
                        read_only=True)
    if json_out:
        from grimoire_beholder.cli.plain_output import print_json

        print_json(data.to_dict())
        return
    if not data.searches:
        print(f"no searches recorded yet ({data.stats_file})")
        return
    print(f"searches:        {data.searches} (since {data.first_at})")
    print(f"served:          {data.chars_served:,} characters "
          f"(~{data.tokens_served_est:,} tokens)")
    print(f"books behind it: {data.chars_books:,} characters")
    print(f"saved:           ~{data.tokens_saved_est:,} tokens "
          f"({(data.saving_ratio or 0.0):.1%} of the books' text never had to be read)")


BudgetOpt = Annotated[int | None, typer.Option(
    "--budget", min=1, help="Maximum characters printed (a positive number).",
    show_default=False)]


@command(hook_app, "Assistants", "session-start", examples=(
    "grimoire-beholder hook session-start --budget 2000",
))
def hook_session_start(budget: BudgetOpt = None, config: ConfigOpt = None,
                       library: LibraryOpt = None) -> None:
    """Print a compact table of contents of the library (for a SessionStart hook)."""
    print_hook("session-start", budget, config, library)


@command(hook_app, "Assistants", "prompt", examples=(
    "echo '{\"prompt\": \"how is the lamp trimmed?\"}' | grimoire-beholder hook prompt",
))
def hook_prompt(budget: BudgetOpt = None, config: ConfigOpt = None,
                library: LibraryOpt = None) -> None:
    """Read a UserPromptSubmit payload on stdin; print the best-matching passages."""
    print_hook("prompt", budget, config, library)
