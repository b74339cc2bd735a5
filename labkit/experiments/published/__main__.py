"""`python -m labkit.experiments.published <command> ...`: each command lives in its source's module.

Every module named here has `main(argv: list[str]) -> int`, which parses its own options.
"""

from __future__ import annotations

import importlib
import sys

# command -> the module (in this package) that runs it
COMMANDS = {
    "build-llmbar": "llmbar",
    "build-reflexion": "reflexion",
    "ladder": "reflexion",
    "llmbar": "llmbar",
    "regrade": "reflexion",
}


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help") or args[0] not in COMMANDS:
        print("usage: python -m labkit.experiments.published {" + ",".join(sorted(COMMANDS)) + "} [options]")
        print("       (each command takes --help)")
        return 0 if args and args[0] in ("-h", "--help") else 2
    module = importlib.import_module(f"labkit.experiments.published.{COMMANDS[args[0]]}")
    return int(module.main(args))


if __name__ == "__main__":
    raise SystemExit(main())
