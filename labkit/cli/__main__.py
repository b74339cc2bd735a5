"""`python -m labkit.cli`: the same as the `labkit` command."""

from labkit.cli.commands import main

if __name__ == "__main__":
    raise SystemExit(main())
