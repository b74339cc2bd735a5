"""What the importers share: writing a case folder and its one-round reference transcript."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from labkit.core.errors import CaseError

__all__ = ["reference_transcript", "write_case"]


def write_case(folder: Path, files: Mapping[str, str | bytes], spec: Mapping[str, object]) -> Path:
    """Write `files` and case.json under `folder` (new or empty). Returns the folder."""
    if folder.exists() and any(folder.iterdir()):
        raise CaseError(f"{folder} is not empty; import into a new folder")
    for rel, data in {**files, "case.json": json.dumps(spec, indent=2) + "\n"}.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
    return folder


def reference_transcript(
    *,
    phenomenon: str,
    evidence_ref: str,
    environment: str,
    cause: str,
    refuted_if: str,
    action: str,
    acceptance: Sequence[str],
    protective: Sequence[str],
    diff: str,
) -> str:
    """transcript.jsonl text: key "main/round-1", the record (with the diff) as a JSON string."""
    record = {
        "phenomenon": phenomenon,
        "evidence_ref": evidence_ref,
        "environment": environment,
        "hypothesis": {"cause": cause, "refuted_if": refuted_if},
        "action": action,
        "expected": {"acceptance": list(acceptance), "protective": list(protective)},
        "diff": diff,
    }
    return json.dumps({"key": "main/round-1", "reply": json.dumps(record, indent=1)}) + "\n"
