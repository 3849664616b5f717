"""Isolation layers for a sandboxed worker, each detected and reported.

Once, in the zygote: a mount namespace hiding the grader's folders, then
every mount read-only.  Per worker, in ``worker.isolate``, in this order:
network and PID namespaces (while still privileged) -> rlimits ->
privileges (uid drop, or capabilities dropped) -> seccomp.  The worker
reports which layers were active, so a result says what protected it.  Facts behind the choices: GRADING.md.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import socket
import sys
from pathlib import Path

_libc = ctypes.CDLL(None, use_errno=True)

CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWPID = 0x00020000, 0x40000000, 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP = 38, 24
NO_NAMESPACES_ENV = "IRONLAW_SANDBOX_NO_NAMESPACES"  # simulate Gradescope (no CAP_SYS_ADMIN)
UID_BASE = 200_000  # worker uid = UID_BASE + (its pid % 50_000): one uid per live worker

DENIED_SYSCALLS = (  # nothing a lab needs; each could undo a layer or reach out
    "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "unshare", "setns",
    "pivot_root", "chroot", "setsid", "setpgid", "bpf", "perf_event_open", "keyctl", "add_key",
    "request_key", "kexec_load", "init_module", "finit_module", "delete_module", "reboot",
    "swapon", "swapoff", "acct", "syslog", "tkill", "io_uring_setup", "userfaultfd",
)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def unshare(flags: int) -> bool:
    if os.environ.get(NO_NAMESPACES_ENV) == "1":
        return False
    return _libc.unshare(ctypes.c_int(flags)) == 0


def _mount(src: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(src.encode(), target.encode(), fstype.encode() if fstype else None,
                       ctypes.c_ulong(flags), data.encode() if data else None), f"mount {target}")


def is_within(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def needed_paths(extra: list[Path]) -> list[Path]:
    """What the worker must still see: the Python installation and its work dir."""
    keep = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent,
            Path(os.path.realpath(sys.executable)).parent, Path(__file__).resolve().parents[1]}
    keep |= {Path(p) for p in sys.path if p and Path(p).is_dir()}
    keep |= set(extra)
    return sorted({p.resolve() for p in keep} - {Path("/")})  # "/" would keep everything


def hide(paths: list[Path], keep: list[Path]) -> list[str]:
    """Cover each path with an empty tmpfs (files with /dev/null), except what
    ``keep`` needs: a kept path's ancestors are descended into instead.
    Follow with read_only_everywhere(), so nothing new can be written beside
    what stays visible."""
    _mount("none", "/", None, MS_REC | MS_PRIVATE)  # our mounts must not leak to the host
    return _cover(paths, keep)


def _cover(paths: list[Path], keep: list[Path]) -> list[str]:
    hidden = []
    for p in paths:
        p = p.resolve()
        if not p.exists() or any(is_within(p, k) for k in keep):
            continue
        if any(is_within(k, p) for k in keep):
            try:
                children = list(p.iterdir())
            except OSError:
                continue
            hidden += _cover(children, keep)
            continue
        if p.is_dir() and not p.is_symlink():
            _mount("tmpfs", str(p), "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
        elif p.is_file():
            _mount("/dev/null", str(p), None, MS_BIND)
        hidden.append(str(p))
    return hidden


def read_only_everywhere() -> int:
    """Remount every mount of this namespace read-only.  Without it a worker
    that keeps uid 0 (capabilities dropped) could still write root-owned
    files by owner permission: /etc, the venv, the engine.  Workers write
    only to their own work tmpfs, mounted later in their own namespace."""
    with open("/proc/self/mountinfo") as f:
        points = sorted({line.split()[4] for line in f}, key=len)
    done = 0
    for mp in points:
        mp = mp.encode().decode("unicode_escape")  # mountinfo escapes spaces as \040
        if mp.startswith(("/proc", "/sys")):
            continue  # the worker mounts a private /proc; /sys is not written through
        try:
            _mount("none", mp, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
            done += 1
        except OSError:
            try:  # some mounts refuse nodev/nosuid changes; read-only is what matters
                _mount("none", mp, None, MS_REMOUNT | MS_BIND | MS_RDONLY)
                done += 1
            except OSError:
                pass
    return done


def mount_proc() -> bool:
    """A /proc that shows only this PID namespace."""
    try:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV)
        return True
    except OSError:
        return False


def mount_work(work: Path, size_mb: int, hidden: list[str]) -> None:
    """Mount this worker's own tmpfs at ``work``, in its own mount namespace.

    The zygote's namespace is read-only, and it may have covered the work
    dir's folder (/tmp) with an empty tmpfs, so ``work`` may not exist here
    and cannot be made.  Then a fresh tmpfs, private to this worker, shadows
    that empty cover just long enough to hold the mount point, and is made
    read-only again: workers share nothing writable but their own work dir."""
    if not work.is_dir():
        cover = next(p for p in work.parents if p.is_dir())  # what this namespace shows there
        if str(cover) not in hidden:  # not an empty cover: shadowing it would hide real files
            raise FileNotFoundError(f"work dir {work} is not visible in the sandbox")
        _mount("tmpfs", str(cover), "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755")
        work.mkdir(parents=True)
        _mount("none", str(cover), None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    _mount("tmpfs", str(work), "tmpfs", MS_NOSUID | MS_NODEV, f"size={size_mb}m,mode=0700")


def set_rlimits(*, memory_mb: int, cpu_s: int, fsize_mb: int = 64, nofile: int = 256,
                nproc: int | None = None) -> dict:
    limits = {
        resource.RLIMIT_AS: memory_mb * 2**20,
        resource.RLIMIT_CPU: cpu_s,
        resource.RLIMIT_FSIZE: fsize_mb * 2**20,
        resource.RLIMIT_NOFILE: nofile,
        resource.RLIMIT_CORE: 0,
    }
    if nproc is not None:
        limits[resource.RLIMIT_NPROC] = nproc
    for which, value in limits.items():
        resource.setrlimit(which, (value, value))
    return {"memory_mb": memory_mb, "cpu_s": cpu_s, "fsize_mb": fsize_mb, "nofile": nofile, "nproc": nproc}


def world_usable(paths: list[Path]) -> bool:
    """Could an unprivileged uid import from these paths?  A venv on a pyenv
    Python in /root (mode 700) cannot: GRADING.md's pitfall."""
    for p in paths:
        for d in [p, *p.parents]:
            try:
                mode = d.stat().st_mode
            except OSError:
                return False
            if d.is_dir() and not mode & 0o001:
                return False
    return True


def zygote_can_drop_uid() -> bool:
    """world_usable() as a fresh zygote sees it (``python -I``, cwd /): a caller's own
    sys.path may hold private folders (pytest's temporary ones, say)."""
    import subprocess

    code = "from autograder.sandbox import layers; print(layers.world_usable(layers.needed_paths([])))"
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, cwd="/")
    return out.stdout.strip() == "True"


def drop_uid(uid: int) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def drop_capabilities() -> None:
    """Stay uid 0 but give up every capability, for good."""
    for cap in range(64):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    hdr, data = Header(0x20080522, 0), (Data * 2)()  # _LINUX_CAPABILITY_VERSION_3
    _check(_libc.capset(ctypes.byref(hdr), ctypes.byref(data)), "capset")


def install_seccomp(my_pid: int) -> bool:
    """Deny network sockets, ptrace, mounts, namespace and session changes,
    and signals to any process but this one."""
    try:
        import pyseccomp as sc
    except Exception:  # libseccomp missing: say so in the result
        return False
    f = sc.SyscallFilter(defaction=sc.ALLOW)
    f.add_rule(sc.ERRNO(errno.EPERM), "socket", sc.Arg(0, sc.NE, socket.AF_UNIX))
    for op in (sc.GT, sc.LT):  # libseccomp takes one comparison per argument per rule
        f.add_rule(sc.ERRNO(errno.EPERM), "kill", sc.Arg(0, op, my_pid))
        f.add_rule(sc.ERRNO(errno.EPERM), "tgkill", sc.Arg(0, op, my_pid))
    for name in DENIED_SYSCALLS:
        try:
            f.add_rule(sc.ERRNO(errno.EPERM), name)
        except (OSError, ValueError):
            pass  # a syscall this kernel does not have
    f.load()  # also sets no_new_privs
    return True
