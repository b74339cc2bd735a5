"""Where labkit's shipped material lives: one data root, resolved here and nowhere else.

In order: `LABKIT_DATA` (a researcher's own copy); `labkit/data` inside an installed package
(a wheel carries the repository's `data/` folder there, see setup.py); the `data/` folder
beside the package in a source checkout (an editable install included).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parents[1]
INSTALLED = _PACKAGE / "data"
CHECKOUT = _PACKAGE.parent / "data"


def data_root() -> Path:
    """The folder holding the worked examples' cases, transcripts and tables."""
    override = os.environ.get("LABKIT_DATA")
    if override:
        return Path(override)
    return INSTALLED if INSTALLED.is_dir() else CHECKOUT


DATA = data_root()


def read_recording(path: Path, command: str, see: str = "") -> dict[str, Any]:
    """A recorded result stored as JSON under data/ (what a page shows on open), read whole.

    A missing or unreadable file is ReferenceDataMissing naming the file and `command`, the one
    command that records it again (and `see`, where that is documented); a page never shows
    half a recording."""
    from labkit.core.errors import ReferenceDataMissing

    how = f"`{command}`" + (f" (see {see})" if see else "")
    if not path.is_file():
        raise ReferenceDataMissing(f"{path} is missing: record it with {how}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ReferenceDataMissing(f"{path} cannot be read ({e}): record it again with {how}") from e
    if not isinstance(data, dict):
        raise ReferenceDataMissing(f"{path} is not a recording (a JSON object): record it again with {how}")
    return data
