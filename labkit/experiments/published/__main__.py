"""`python -m labkit.experiments.published <command> ...`: each command lives in its source's module.

Each command names a function `(argv: list[str]) -> int` that parses the options after it.
"""

from __future__ import annotations

import importlib
import sys

# command -> "module:function" (the module in this package) that runs it
COMMANDS = {
    "build-llmbar": "llmbar:build_main",
    "build-reflexion": "reflexion:build_main",
    "ladder": "ladder:main",
    "llmbar": "llmbar:report_main",
    "regrade": "regrade:main",
}


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help") or args[0] not in COMMANDS:
        print("usage: python -m labkit.experiments.published {" + ",".join(sorted(COMMANDS)) + "} [options]")
        print("       (each command takes --help)")
        return 0 if args and args[0] in ("-h", "--help") else 2
    module, function = COMMANDS[args[0]].split(":")
    run = getattr(importlib.import_module(f"labkit.experiments.published.{module}"), function)
    return int(run(args[1:]))


if __name__ == "__main__":
    raise SystemExit(main())
