"""python -m labkit.experiments.long_projects record [--seeds N] [--out FILE] | show"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from labkit.core.paths import data_root


def main(argv: list[str] | None = None) -> int:
    from labkit.experiments.long_projects import study
    from labkit.experiments.long_projects.project import load_project

    parser = argparse.ArgumentParser(prog="python -m labkit.experiments.long_projects")
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run the study (real validations, simulated roles) and write the recording")
    rec.add_argument("--seeds", type=int, default=len(study.SEEDS))
    rec.add_argument("--out", type=Path, default=data_root() / study.RECORDING)
    show = sub.add_parser("show", help="print the tables from the recording")
    show.add_argument("--file", type=Path, default=data_root() / study.RECORDING)
    args = parser.parse_args(argv)
    if args.command == "record":
        data = study.measure(load_project("shop"), seeds=range(args.seeds))
        args.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {args.out} ({len(data['runs'])} runs)")
        return 0
    from labkit.core.paths import read_recording

    data = read_recording(args.file, study.COMMAND)
    print(json.dumps(study.summary(data), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
