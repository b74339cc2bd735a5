"""A narrower kernel surface for a run: a seccomp filter, built with libseccomp, and no capabilities.

Standalone (stdlib only), bound next to the warm runner inside bubblewrap. `deny()` loads
a filter into the calling process (inherited by everything it starts) that refuses, with
EPERM, the system calls no test needs and attacks start from: user, mount and other
namespaces (`unshare`, `setns`, `clone` with CLONE_NEWUSER; `clone3` answers ENOSYS so the
C library falls back to `clone`, where the flag is checked), io_uring, ptrace, mount,
keyrings, bpf, perf_event_open, kernel modules, kexec. The filter is built by libseccomp
(the system's libseccomp.so.2, through ctypes), not by hand. `drop_capabilities()` empties
the bounding set, so no later exec can regain a capability.
"""

from __future__ import annotations

import ctypes
import errno

DENIED = (
    "unshare", "setns", "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen",
    "fsmount", "fsconfig", "io_uring_setup", "io_uring_enter", "io_uring_register", "ptrace",
    "process_vm_readv", "process_vm_writev", "keyctl", "add_key", "request_key", "bpf",
    "perf_event_open", "userfaultfd", "init_module", "finit_module", "delete_module",
    "kexec_load", "kexec_file_load", "open_by_handle_at",
)  # fmt: skip
CLONE_NEWUSER = 0x10000000
_ALLOW = 0x7FFF0000
_MASKED_EQ = 7  # SCMP_CMP_MASKED_EQ
_PR_CAPBSET_DROP = 24


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]  # fmt: skip


def _refuse(code: int) -> int:
    return 0x00050000 | code  # SCMP_ACT_ERRNO(code)


def _library() -> ctypes.CDLL | str:
    try:
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError as e:
        return f"libseccomp is not installed ({e})"
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                           ctypes.c_uint, ctypes.POINTER(_ArgCmp)]  # fmt: skip
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


LIBRARY = _library()  # loaded once, in the warm runner: every run forks with it


def deny() -> str:
    """Load the filter into this process; "" if it holds, else why it could not be loaded."""
    lib = LIBRARY
    if isinstance(lib, str):
        return lib
    ctx = lib.seccomp_init(_ALLOW)
    if not ctx:
        return "seccomp_init failed"
    try:
        for name in (*DENIED, "clone3", "clone"):
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            if nr < 0:
                continue  # not on this architecture
            if name == "clone":  # only with CLONE_NEWUSER in its flags (argument 0)
                cmp = _ArgCmp(0, _MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)
                rc = lib.seccomp_rule_add_array(ctx, _refuse(errno.EPERM), nr, 1, ctypes.byref(cmp))
            else:
                code = errno.ENOSYS if name == "clone3" else errno.EPERM
                rc = lib.seccomp_rule_add_array(ctx, _refuse(code), nr, 0, None)
            if rc < 0:
                return f"seccomp rule for {name} failed ({-rc})"
        rc = lib.seccomp_load(ctx)
        return "" if rc == 0 else f"seccomp_load failed ({-rc})"
    finally:
        lib.seccomp_release(ctx)


def drop_capabilities(libc: ctypes.CDLL) -> None:
    """Empty the capability bounding set (needs CAP_SETPCAP: call it while still root)."""
    for cap in range(64):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == errno.EINVAL:
            break  # past the last capability this kernel knows
