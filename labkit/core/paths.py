"""Where labkit's shipped material lives: one data root, resolved here and nowhere else.

`LABKIT_DATA` overrides it (a researcher's own copy); otherwise it is the `data/` folder
beside the package in a source checkout.
"""

from __future__ import annotations

import os
from pathlib import Path


def data_root() -> Path:
    """The folder holding the worked examples' cases, transcripts and tables."""
    override = os.environ.get("LABKIT_DATA")
    return Path(override) if override else Path(__file__).resolve().parents[2] / "data"


DATA = data_root()
