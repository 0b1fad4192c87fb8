"""The ``--help`` pages: commands grouped by what a person does, plain words for values, and
examples.

Typer's plain help (kept for speed: its rich help imports markdown and pygments) lists
commands in the order they were registered and shows Python types (``<str>``,
``list[str]``, ``{path}``). ``Grouped`` lists the commands under ``PANELS`` in that order,
each panel in ``ORDER``;
``Taught`` gives every argument and option a metavar in words (``QUESTION``, ``BOOK``,
``hybrid|vector|keyword``) and writes the examples of its epilog as they are typed.
``command`` is how the command modules register: ``@command(app, "Ask it", examples=…)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

PANELS = ("Build the library", "Ask it", "Read it", "Check it", "Assistants")
# Within a panel, what a new user reaches for first comes first; a command not named here
# follows these, in the order it was registered.
ORDER = ("ingest", "sync", "delete", "unfollow", "query", "lookup", "verify", "list",
         "outline", "show", "page", "web", "status", "health", "check", "stats", "eval",
         "reindex-fts", "mcp-config", "serve-mcp", "hook")
# What a value of a given Python type is called in help, when the option names no metavar.
_WORDS = {"str": "TEXT", "int": "N", "float": "NUMBER", "path": "PATH"}


def _metavar(param: Any, ctx: Any) -> str:
    """A value's name in words: its choices, else what its type is called."""
    label = param.display_type(ctx).strip("<>")
    if label.startswith("list[") and label.endswith("]"):
        label = label[5:-1]
    if "|" in label:
        return label
    if param.param_type_name == "argument":
        return str(param.name).upper()
    return _WORDS.get(label.split(" ")[0].lower(), str(param.name).upper())


_KEPT_HYPHEN = "\u2011"  # a non-breaking hyphen while the text is wrapped


def _keep(text: str) -> str:
    return text.replace("-", _KEPT_HYPHEN)


class _WordKeeping:
    """A help formatter seen through this wraps at spaces only: click breaks at hyphens too
    (``claude-`` / ``code``, ``serve-`` / ``mcp``), and names a person types must stay
    whole. Hyphens are made non-breaking on the way in, and ``KeepsWords.get_help`` turns
    them back."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        self._inner.write_usage(prog, _keep(args), prefix)

    def write_text(self, text: str) -> None:
        self._inner.write_text(_keep(text))

    def write_dl(self, rows: Iterable[tuple[str, str]], *args: Any, **kwargs: Any) -> None:
        self._inner.write_dl([(_keep(a), _keep(b)) for a, b in rows], *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class KeepsWords:
    """A command (or group) whose help never breaks a word at its hyphen."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        super().format_help(ctx, _WordKeeping(formatter))  # type: ignore[misc]

    def get_help(self, ctx: Any) -> str:
        return str(super().get_help(ctx)).replace(_KEPT_HYPHEN, "-")  # type: ignore[misc]


class Taught(KeepsWords, TyperCommand):
    """A command whose help names values in words and keeps its examples' lines."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name != "argument":
                continue
            name = param.metavar or _metavar(param, ctx)
            name = name if param.required else f"[{name}]"
            pieces.append(name + ("..." if param.nargs != 1 else ""))
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        args, opts = [], []
        for param in self.get_params(ctx):
            if param.param_type_name == "option" and param.metavar is None \
                    and not getattr(param, "is_flag", False):
                param.metavar = _metavar(param, ctx)
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                args.append((param.metavar or _metavar(param, ctx), record[1]))
            else:
                opts.append(record)
        if args:
            with formatter.section("Arguments"):
                formatter.write_dl(args)
        if opts:
            with formatter.section("Options"):
                formatter.write_dl(opts)


class Grouped(KeepsWords, TyperGroup):
    """A command group whose help lists its commands under ``PANELS``, in that order."""

    def listed(self, ctx: Any, name: str) -> Any:
        """The command ``name`` as the help lists it (its panel and short help), or None."""
        return self.get_command(ctx, name)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        names = sorted(self.list_commands(ctx),
                       key=lambda n: ORDER.index(n) if n in ORDER else len(ORDER))
        commands = [(name, cmd) for name in names
                    if (cmd := self.listed(ctx, name)) is not None and not cmd.hidden]
        if not commands:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in commands)
        panels: dict[str, list[tuple[str, str]]] = {panel: [] for panel in (*PANELS,
                                                                            "Commands")}
        for name, cmd in commands:
            panel = getattr(cmd, "rich_help_panel", None) or "Commands"
            panels.setdefault(panel, []).append((name, cmd.get_short_help_str(limit)))
        for panel, rows in panels.items():
            if rows:
                with formatter.section(panel):
                    formatter.write_dl(rows)


def examples_epilog(examples: Sequence[str]) -> str | None:
    """The epilog that shows ``examples`` one a line, unwrapped (click's ``\\b`` marker)."""
    if not examples:
        return None
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in examples)


def command(on: typer.Typer, panel: str, name: str | None = None, *,
            examples: Sequence[str] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a command on ``on`` under help panel ``panel``, with ``examples``."""
    if panel not in PANELS:
        raise ValueError(f"unknown help panel {panel!r}")
    return on.command(name, cls=Taught, rich_help_panel=panel,
                      epilog=examples_epilog(examples))


def help_when_bare(group: typer.Typer) -> None:
    """Give ``group`` a callback that prints its help (stdout, exit 0) when no subcommand is
    named, as the bare ``grimoire-beholder`` does; click's ``no_args_is_help`` raises a usage
    error instead (``error: Usage: …``, exit 2)."""

    @group.callback(invoke_without_command=True)
    def _bare(ctx: typer.Context) -> None:
        if ctx.invoked_subcommand is None:
            print(ctx.get_help())
            raise typer.Exit()
