"""Where labkit's shipped material lives: one data root, resolved here and nowhere else.

In order: `LABKIT_DATA` (a researcher's own copy); `labkit/data` inside an installed package
(a wheel carries the repository's `data/` folder there, see setup.py); the `data/` folder
beside the package in a source checkout (an editable install included).
"""

from __future__ import annotations

import os
from pathlib import Path

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
