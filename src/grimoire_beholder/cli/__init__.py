"""The command-line adapter: a typer app; commands parse arguments, call the core, render."""
