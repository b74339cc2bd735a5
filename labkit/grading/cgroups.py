"""Per-run cgroups for the warm runner (`zygote.py`): memory and process caps for a whole run.

Standalone (stdlib only): bound next to the runner inside bubblewrap. cgroup v1 (memory +
pids controllers) or v2 (memory.max, pids.max), whichever this machine lets root write;
neither means the rlimits are the only bounds, and the verdict says so.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time

ROOT = "/sys/fs/cgroup"


def cgroup_kind() -> str:
    """'v1', 'v2' or '' (no writable cgroup: the rlimits are the only bounds)."""
    for kind, base in (("v1", f"{ROOT}/memory"), ("v2", ROOT)):
        probe = f"{base}/labkit-probe-{os.getpid()}"
        if kind == "v2" and not os.path.exists(f"{ROOT}/cgroup.controllers"):
            continue
        try:
            os.mkdir(probe)
            limit = "memory.limit_in_bytes" if kind == "v1" else "memory.max"
            with open(f"{probe}/{limit}", "w") as f:
                f.write(str(64 * 1024 * 1024))
            if kind == "v1" and not os.access(f"{ROOT}/pids", os.W_OK):
                continue
            return kind
        except OSError:
            continue
        finally:
            with contextlib.suppress(OSError):
                os.rmdir(probe)
    return ""


def make_cgroups(kind: str, memory_mb: int, processes: int) -> list[str]:
    if not kind:
        return []
    name = f"labkit-{secrets.token_hex(6)}"
    if kind == "v1":
        mem, pids = f"{ROOT}/memory/{name}", f"{ROOT}/pids/{name}"
        os.mkdir(mem)
        os.mkdir(pids)
        write(f"{mem}/memory.limit_in_bytes", memory_mb * 1024 * 1024)
        if os.path.exists(f"{mem}/memory.memsw.limit_in_bytes"):
            write(f"{mem}/memory.memsw.limit_in_bytes", memory_mb * 1024 * 1024)
        write(f"{pids}/pids.max", processes + 1)  # +1: the run's waiting parent
        return [mem, pids]
    path = f"{ROOT}/{name}"
    os.mkdir(path)
    write(f"{path}/memory.max", memory_mb * 1024 * 1024)
    write(f"{path}/memory.swap.max", 0)
    write(f"{path}/pids.max", processes + 1)
    return [path]


def write(path: str, value: object) -> None:
    with open(path, "w") as f:
        f.write(str(value))


def cgroup_events(paths: list[str]) -> list[str]:
    hits = []
    for path in paths:
        for fname, key, what in (
            ("memory.failcnt", None, "memory"),
            ("memory.memsw.failcnt", None, "memory"),
            ("memory.oom_control", "oom_kill", "memory"),
            ("memory.events", "max", "memory"),
            ("pids.events", "max", "processes"),
        ):
            try:
                with open(f"{path}/{fname}") as f:
                    text = f.read()
            except OSError:
                continue
            count = (
                int(text.split()[0])
                if key is None
                else int(dict(line.split() for line in text.splitlines() if line.strip()).get(key, 0))
            )
            if count:
                hits.append(what)
    return sorted(set(hits))


def remove_cgroups(paths: list[str]) -> None:
    for path in paths:
        for _ in range(200):  # the run's processes are dying; the group empties within ms
            try:
                os.rmdir(path)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.005)


STALE_SECONDS = 120.0  # a live run's group is empty only between mkdir and its child joining


def sweep_cgroups() -> None:
    """Remove run cgroups a killed runner left behind (rmdir only succeeds on empty groups).

    Only groups older than STALE_SECONDS: another process's runner may have just made its
    group and not yet moved its run in (removing it then failed that run with ENODEV).
    """
    now = time.time()
    for base in (f"{ROOT}/memory", f"{ROOT}/pids", ROOT):
        try:
            names = [n for n in os.listdir(base) if n.startswith("labkit-")]
        except OSError:
            continue
        for name in names:
            with contextlib.suppress(OSError):
                if now - os.stat(f"{base}/{name}").st_mtime > STALE_SECONDS:
                    os.rmdir(f"{base}/{name}")
