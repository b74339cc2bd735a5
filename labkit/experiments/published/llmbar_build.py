"""LLMBar's published judge verdicts as compact tables, rebuilt from a local clone with digests checked.

Source: princeton-nlp/LLMBar (MIT), `Dataset/LLMBar/<set>/dataset.json` and
`.../evaluators/<judge>/<strategy>/{result,statistics}.json`. What is kept (data/published/llmbar/):

- `instances.jsonl`: set, id (position in the set's dataset.json), input, output_1, output_2, label;
- `verdicts.parquet`: judge, strategy, set, id, order1, order2: the winner the authors recorded with
  `swap = False` / `swap = True` in the last round of `results` (the one their statistics score),
  already mapped back to the original output numbers; null where the reply gave no verdict;
- `published.jsonl`: each folder's statistics.json fields that labkit re-scores, verbatim strings;
- `sha256.tsv`: the digest of every original file read (`sha256sum -c` format), checked on every build.

Left out, and why: the Rating strategies (each output is scored alone; their "swap" verdicts differ
only in how a tied score is broken, so there is no order to swap); the CaseStudy sets (small probes
of one feature each, not the benchmark) and the Processed sets (other benchmarks re-labelled).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from labkit.core.errors import DigestMismatch, ReferenceDataMissing
from labkit.core.paths import DATA

__all__ = [
    "BUILD",
    "COMMIT",
    "DIGESTS",
    "INSTANCES",
    "OUT",
    "PUBLISHED",
    "PUBLISHED_FIELDS",
    "REPOSITORY",
    "SETS",
    "Source",
    "VERDICTS",
    "clone_commit",
    "discover",
    "read_digests",
    "read_source",
    "sha256",
    "verdict_frame",
    "write_tables",
]

REPOSITORY = "princeton-nlp/LLMBar"
COMMIT = "900616bff90b6c6c8e1681f7d079250637c55992"
# set name -> its folder in the repository (Natural first, then the four adversarial sets)
SETS = {
    "Natural": "Dataset/LLMBar/Natural",
    "Neighbor": "Dataset/LLMBar/Adversarial/Neighbor",
    "GPTInst": "Dataset/LLMBar/Adversarial/GPTInst",
    "GPTOut": "Dataset/LLMBar/Adversarial/GPTOut",
    "Manual": "Dataset/LLMBar/Adversarial/Manual",
}
LICENSE = "LICENSE"
PUBLISHED_FIELDS = ("correct_False", "correct_True", "correct_average", "equal")

OUT = DATA / "published" / "llmbar"
INSTANCES, VERDICTS, PUBLISHED, DIGESTS = (
    "instances.jsonl",
    "verdicts.parquet",
    "published.jsonl",
    "sha256.tsv",
)
BUILD = "python -m labkit.experiments.published build-llmbar --repo PATH"


@dataclass(frozen=True)
class Source:
    """The rows read from the original files (before they are written as tables)."""

    instances: list[dict[str, Any]]
    verdicts: list[dict[str, Any]]
    published: list[dict[str, Any]]
    digests: dict[str, str]  # original path -> sha256


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def discover(repo: Path) -> list[str]:
    """Every original path the tables come from, in a fixed order: the licence, then per set its
    dataset.json and each pairwise-comparison folder's result.json and statistics.json."""
    paths = [LICENSE]
    for folder in SETS.values():
        paths.append(f"{folder}/dataset.json")
        for stats in sorted((repo / folder / "evaluators").glob("*/*/statistics.json")):
            if not stats.parent.name.startswith("Rating"):
                rel = stats.parent.relative_to(repo).as_posix()
                paths += [f"{rel}/result.json", f"{rel}/statistics.json"]
    return paths


def read_digests(path: Path) -> dict[str, str]:
    """`sha256.tsv` (lines "<sha256>  <path>") as path -> digest."""
    if not path.is_file():
        raise ReferenceDataMissing(f"{path} is missing: the digests of LLMBar's files come with labkit")
    rows = (line.split("  ", 1) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return {p: d for d, p in rows}


def _load(repo: Path, rel: str, expected: str | None) -> Any:
    f = repo / rel
    if not f.is_file():
        raise ReferenceDataMissing(f"{f} is missing: {REPOSITORY} at {COMMIT[:12]} has it ({BUILD})")
    got = sha256(f)
    if expected is not None and got != expected:
        raise DigestMismatch(
            f"{f}: sha256 {got} is not the recorded {expected} ({REPOSITORY} at "
            f"{COMMIT[:12]}); check out that commit, or record new digests on purpose"
        )
    return json.loads(f.read_text(encoding="utf-8")) if rel.endswith(".json") else None


def _set_of(rel: str) -> str:
    for name, folder in SETS.items():
        if rel.startswith(folder + "/"):
            return name
    raise ValueError(f"{rel}: not in an LLMBar set")


def _winner(result: dict[str, Any], swap: bool, where: str) -> int | None:
    w = result[f"swap = {swap}"]["winner"]
    if w not in ("1", "2", None):
        raise ValueError(f"{where}: winner {w!r} is not '1', '2' or null")
    return None if w is None else int(w)


def read_source(repo: Path, paths: Sequence[str], digests: dict[str, str] | None) -> Source:
    """Rows from the original files at `paths` under `repo`, each file's sha256 checked against
    `digests` (None: record them instead). A result.json must list its set's instances in order."""
    seen: dict[str, str] = {}
    instances: list[dict[str, Any]] = []
    verdicts: list[dict[str, Any]] = []
    published: list[dict[str, Any]] = []
    sets: dict[str, list[dict[str, Any]]] = {}
    for rel in paths:
        data = _load(repo, rel, None if digests is None else digests.get(rel, "not recorded"))
        seen[rel] = sha256(repo / rel)
        if rel == LICENSE:
            continue
        name = _set_of(rel)
        if rel.endswith("dataset.json"):
            sets[name] = data
            instances += [
                {
                    "set": name,
                    "id": i,
                    "input": d["input"],
                    "output_1": d["output_1"],
                    "output_2": d["output_2"],
                    "label": int(d["label"]),
                }
                for i, d in enumerate(data)
            ]
            continue
        judge, strategy = rel.split("/")[-3:-1]
        if rel.endswith("statistics.json"):
            published.append(
                {
                    "judge": judge,
                    "strategy": strategy,
                    "set": name,
                    **{k: data[k] for k in PUBLISHED_FIELDS},
                }
            )
            continue
        if name not in sets:
            raise ValueError(f"{rel}: read {SETS[name]}/dataset.json first")
        if len(data) != len(sets[name]):
            raise ValueError(f"{rel}: {len(data)} instances, {SETS[name]}/dataset.json has {len(sets[name])}")
        for i, (row, inst) in enumerate(zip(data, sets[name], strict=True)):
            if any(row[k] != inst[k] for k in ("input", "output_1", "output_2", "label")):
                raise ValueError(f"{rel}: instance {i} differs from {SETS[name]}/dataset.json")
            last = row["results"][-1]
            verdicts.append(
                {
                    "judge": judge,
                    "strategy": strategy,
                    "set": name,
                    "id": i,
                    "order1": _winner(last, False, f"{rel}[{i}]"),
                    "order2": _winner(last, True, f"{rel}[{i}]"),
                }
            )
    return Source(instances, verdicts, published, seen)


def _jsonl(rows: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in rows)


def verdict_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    schema = {
        "judge": pl.String,
        "strategy": pl.String,
        "set": pl.String,
        "id": pl.Int32,
        "order1": pl.Int8,
        "order2": pl.Int8,
    }
    return pl.DataFrame(rows, schema=schema)


def write_tables(source: Source, out: Path) -> list[Path]:
    """Write the tables and the digest table to `out`; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    files = {
        INSTANCES: _jsonl(source.instances),
        PUBLISHED: _jsonl(source.published),
        DIGESTS: "".join(f"{d}  {p}\n" for p, d in source.digests.items()),
    }
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    verdict_frame(source.verdicts).write_parquet(out / VERDICTS, compression="zstd", statistics=False)
    return [out / n for n in (INSTANCES, VERDICTS, PUBLISHED, DIGESTS)]


def clone_commit(repo: Path) -> str | None:
    """The clone's checked-out commit, if it is a git work tree (informational: digests decide)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None
