"""The `labkit` command (console script `labkit = "labkit.cli:main"`). See `labkit --help`."""

from labkit.cli.commands import app, main

__all__ = ["app", "main"]
