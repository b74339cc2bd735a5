"""`python -m labkit.cli`: the same as the `labkit` command."""

from labkit.cli.commands import main

raise SystemExit(main())
