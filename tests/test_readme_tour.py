"""The README tour's multi-case block with a custom strategy runs as written (so it cannot rot).

The block is read out of README.md (the python block that defines `class ShippedPatches`), must
stay under 25 lines, and runs in a fresh process in a scratch folder; what it prints is checked:
both cases kept a patch that turns their visible tests green, and the hidden tests, which the
strategy never saw, score chunks' patch wrong and flatten's right."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tour_block() -> str:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    (block,) = [b for b in blocks if "class ShippedPatches" in b]
    return block


def test_the_readme_multi_case_block_runs_as_written(tmp_path: Path) -> None:
    code = tour_block()
    assert len(code.strip().splitlines()) < 25
    assert "from labkit import " in code and "run(tasks, ShippedPatches()" in code
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[:2] == ["chunks ['keep'] True", "flatten ['keep'] True"], done.stdout
    rows = [
        re.findall(r"[\w]+", line)
        for line in lines
        if line.startswith("│ ") and ("chunks" in line or "flatten" in line)
    ]
    assert rows == [
        ["chunks", "0", "false"],
        ["chunks", "1", "false"],
        ["flatten", "0", "false"],
        ["flatten", "1", "true"],
    ], done.stdout
    assert list(tmp_path.iterdir()) == []  # an in-memory ledger: the block leaves nothing behind
