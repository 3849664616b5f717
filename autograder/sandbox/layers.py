"""Isolation layers for a sandboxed worker, each detected and reported.

Once, in the zygote (root, in its own mount namespace): :func:`build_root`
makes an allow-list root (system libraries, the Python installation, the
engine's package, a minimal /dev) and every mount read-only.  Per worker,
in ``worker.isolate``, in this order: network, PID, IPC and UTS namespaces
(while still privileged) -> a masked private /proc and private /tmp and
/dev/shm -> rlimits -> its own uid -> seccomp.  Student code never runs as
uid 0: where there are no namespaces, the Python must be reachable by an
unprivileged uid, or the engine refuses to grade (docs/sandbox.md).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import resource
import socket
import sys
from pathlib import Path

_libc = ctypes.CDLL(None, use_errno=True)

CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWPID = 0x00020000, 0x40000000, 0x20000000
CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWUSER, CLONE_NEWCGROUP = 0x08000000, 0x04000000, 0x10000000, 0x02000000
CLONE_NEWTIME = 0x00000080
NAMESPACE_FLAGS = (CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWPID, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWUSER,
                   CLONE_NEWCGROUP, CLONE_NEWTIME)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    1, 2, 4, 8, 32, 4096, 16384, 1 << 18)
MNT_DETACH = 2
NO_NAMESPACES_ENV = "IRONLAW_SANDBOX_NO_NAMESPACES"  # simulate Gradescope (no CAP_SYS_ADMIN)
UID_BASE = 200_000  # worker uid = UID_BASE + (its pid % 50_000): one uid per live worker

# The allow-list of the workers' root (build_root).  /etc: only what libc and
# Python read; never shadow, gshadow, the machine's keys or configuration.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("passwd", "group", "nsswitch.conf", "localtime", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
             "hosts", "host.conf", "gai.conf", "mime.types")
DEVICES = ("null", "zero", "full", "random", "urandom")
# What container runtimes (runc's defaults) mask or make read-only in /proc.
PROC_MASKED = ("/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
               "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/proc/kmsg",
               "/proc/sysrq-trigger", "/proc/kallsyms", "/proc/kpagecount", "/proc/kpageflags",
               "/proc/kpagecgroup", "/proc/config.gz", "/proc/vmallocinfo", "/proc/pagetypeinfo")
PROC_READ_ONLY = ("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys")

DENIED_SYSCALLS = (  # nothing a lab needs; each could undo a layer or reach out
    "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "unshare", "setns",
    "pivot_root", "chroot", "setsid", "setpgid", "bpf", "perf_event_open", "keyctl", "add_key",
    "request_key", "kexec_load", "init_module", "finit_module", "delete_module", "reboot",
    "swapon", "swapoff", "acct", "syslog", "tkill", "io_uring_setup", "userfaultfd",
    "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_send_signal", "pidfd_getfd", "pidfd_open",
    "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
    "open_tree", "move_mount", "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr",
    "name_to_handle_at", "open_by_handle_at", "sethostname", "setdomainname", "settimeofday",
    "clock_settime", "clock_adjtime", "adjtimex", "quotactl", "lookup_dcookie", "vhangup",
    "iopl", "ioperm", "personality", "fanotify_init", "kcmp",
    # System V IPC: keyed objects any uid can open where there is no IPC namespace
    "shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl",
    "msgget", "msgsnd", "msgrcv", "msgctl",
)
ENOSYS_SYSCALLS = ("clone3",)  # its flags sit in memory seccomp cannot read: glibc falls back to clone


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


def needed_paths() -> list[Path]:
    """What a worker must still see of the Python: the installation (its
    stdlib and site-packages) and the engine's own package folder.  Never
    sys.path as a whole: an editable install puts the project root there."""
    keep = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), Path(sys.base_exec_prefix),
            Path(os.path.realpath(sys.executable)).parent.parent, Path(__file__).resolve().parents[1]}
    keep |= {Path(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix)}
    return sorted({p.resolve() for p in keep if p.is_dir()} - {Path("/")})  # "/" would keep everything


def _bind(src: Path, dst: Path, *, recursive: bool = True) -> None:
    """Bind ``src`` at ``dst`` (made inside the new root's own tmpfs)."""
    if src.is_symlink():
        dst.parent.mkdir(parents=True, exist_ok=True)
        if not dst.is_symlink():
            dst.symlink_to(os.readlink(src))
        return
    if src.is_dir():
        dst.mkdir(parents=True, exist_ok=True)
    else:
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.touch(exist_ok=True)
    _mount(str(src), str(dst), None, MS_BIND | (MS_REC if recursive else 0))


UNDER_TMP = Path("/.python-under-tmp")  # in the workers' root: see build_root


def build_root(new: Path, hide: list[Path]) -> dict:
    """Make ``new`` (an empty tmpfs) the root of this mount namespace, holding
    only the allow-list: the system's programs and libraries, a few /etc
    files, the Python installation and the engine's package, a minimal /dev,
    empty /tmp and /proc mount points.  Nothing created on the host later
    can appear in it.  ``hide``: folders that must stay out even when they
    lie inside an allowed one (the project, the batch); what the worker
    needs inside them (a venv in the project) is bound back on top.
    Runs once, in the zygote, as root; every mount of it ends read-only."""
    _mount("none", "/", None, MS_REC | MS_PRIVATE)  # our mounts must not leak to the host
    _mount("tmpfs", str(new), "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0755")
    allowed = [Path(p) for p in SYSTEM_DIRS] + [Path("/etc") / f for f in ETC_FILES]
    python = needed_paths()
    for src in sorted(p for p in allowed + python if os.path.lexists(p)):
        if any(is_within(src, a) and src != a for a in allowed + python if os.path.lexists(a)):
            continue  # bound with an allowed ancestor
        _bind(src, new / src.relative_to("/"))
    covered = []
    for h in sorted({p.resolve() for p in hide}):
        target = new / h.relative_to("/")
        if h == Path("/") or not target.is_dir() or target.is_symlink():
            continue  # not reachable through the allow-list
        _mount("tmpfs", str(target), "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755")
        covered.append(h)
        for k in python:  # a venv inside the project: bind it back over the cover
            if is_within(k, h) and k != h:
                _bind(k, new / k.relative_to("/"))
    dev = new / "dev"
    dev.mkdir()
    _mount("tmpfs", str(dev), "tmpfs", MS_NOSUID, "size=64k,mode=0755")
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            _bind(Path(f"/dev/{name}"), dev / name, recursive=False)
    (dev / "shm").mkdir()
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        (dev / name).symlink_to(target)
    for d in ("proc", "tmp"):
        (new / d).mkdir(exist_ok=True)
    # A Python under /tmp (a venv in a clone there) would vanish under each worker's own /tmp
    # tmpfs, and with it every module imported lazily: keep a second binding the worker can
    # put back on top of its tmpfs (rebind_under_tmp).
    under_tmp = [k for k in python if is_within(k, Path("/tmp"))]
    stashes = [UNDER_TMP / str(i) for i in range(len(under_tmp))]
    for k, stash in zip(under_tmp, stashes):
        _bind(k, new / stash.relative_to("/"))
    # the devices' own mounts keep device access (nodev would make even /dev/null "permission denied")
    read_only_everywhere(new, devices={dev / name for name in DEVICES})
    _pivot_root(new)
    return {"filesystem": "allow-list", "covered_inside_allowed": len(covered),
            "under_tmp": [[str(st), str(k)] for st, k in zip(stashes, under_tmp)]}


def rebind_under_tmp(root: dict) -> list[Path]:
    """In a worker, after its /tmp tmpfs is mounted: bind the parts of the Python that lie
    under /tmp back at their paths, read-only.  Returns the top folders it made in /tmp."""
    tops = []
    for stash, dst in root.get("under_tmp", []):
        dst = Path(dst)
        dst.mkdir(parents=True, exist_ok=True)
        _mount(stash, str(dst), None, MS_BIND | MS_REC)
        read_only_everywhere(dst)
        tops.append(Path("/tmp") / dst.relative_to("/tmp").parts[0])
    return tops


def _pivot_root(new: Path) -> None:
    """Make ``new`` the root and drop the old one (pivot_root(".", ".") idiom)."""
    nr = {"x86_64": 155, "aarch64": 41}.get(platform.machine())
    if nr is None:
        raise OSError(errno.ENOSYS, f"pivot_root: unknown syscall number on {platform.machine()}")
    os.chdir(new)
    _check(_libc.syscall(ctypes.c_long(nr), b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", ctypes.c_int(MNT_DETACH)), "umount old root")
    os.chdir("/")


def read_only_everywhere(under: Path, devices: set[Path] = frozenset()) -> int:
    """Remount every mount at or below ``under`` read-only, nosuid, and nodev but
    for ``devices`` (bound device files: still read-only, a device written to
    does not need a writable mount).  Workers write only to their own tmpfs
    (/tmp, /dev/shm), mounted later in their own namespace."""
    with open("/proc/self/mountinfo") as f:
        points = sorted({line.split()[4] for line in f}, key=len)
    done = 0
    for mp in points:
        mp = mp.encode().decode("unicode_escape")  # mountinfo escapes spaces as \040
        if not is_within(Path(mp), under):
            continue
        nodev = 0 if Path(mp) in devices else MS_NODEV
        try:
            _mount("none", mp, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | nodev)
            done += 1
        except OSError:
            try:  # some mounts refuse nodev/nosuid changes; read-only is what matters
                _mount("none", mp, None, MS_REMOUNT | MS_BIND | MS_RDONLY)
                done += 1
            except OSError:
                pass
    return done


def mount_proc() -> bool:
    """A /proc that shows only this PID namespace, masked as container
    runtimes mask it: kernel settings read-only, kernel memory and the
    sysrq trigger unreadable."""
    try:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError:
        return False
    for p in PROC_MASKED:
        if os.path.isdir(p):
            _mount("tmpfs", p, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=0555")
        elif os.path.exists(p):
            _mount("/dev/null", p, None, MS_BIND)
    for p in PROC_READ_ONLY:
        if os.path.exists(p):
            _mount(p, p, None, MS_BIND | MS_REC)
            _mount("none", p, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    return True


def mount_tmpfs(path: Path, size_mb: int) -> None:
    """A worker's own writable folder, in its own mount namespace."""
    _mount("tmpfs", str(path), "tmpfs", MS_NOSUID | MS_NODEV, f"size={size_mb}m,mode=0700")


def set_rlimits(*, memory_mb: int, cpu_s: int, fsize_mb: int = 64, nofile: int = 256,
                nproc: int | None = None) -> dict:
    limits = {
        resource.RLIMIT_AS: memory_mb * 2**20,
        resource.RLIMIT_CPU: cpu_s,
        resource.RLIMIT_FSIZE: fsize_mb * 2**20,
        resource.RLIMIT_NOFILE: nofile,
        resource.RLIMIT_CORE: 0,
    }
    if nproc is not None:  # per uid; every worker has its own.  Never above what the host allows
        limits[resource.RLIMIT_NPROC] = min(nproc, _pid_max())
    for which, value in limits.items():
        resource.setrlimit(which, (value, value))
    return {"memory_mb": memory_mb, "cpu_s": cpu_s, "fsize_mb": fsize_mb, "nofile": nofile, "nproc": nproc}


def _pid_max() -> int:
    try:
        with open("/proc/sys/kernel/pid_max") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 4096


def world_usable(paths: list[Path]) -> bool:
    """Could an unprivileged uid import from these paths?  A venv on a pyenv
    Python in /root (mode 700) cannot, outside the zygote's allow-list root
    (docs/sandbox.md)."""
    for p in paths:
        for d in [p, *p.parents]:
            try:
                mode = d.stat().st_mode
            except OSError:
                return False
            if d.is_dir() and not mode & 0o001:
                return False
    return True


def make_python_reachable() -> list[str]:
    """In this process's own new mount namespace, cover each folder that keeps
    an unprivileged uid from the Python (a mode-700 home) with a tmpfs, and
    bind back only the Python's subtrees.  What the zygote's allow-list root
    does for workers, for a whole grading run without namespaces (the
    "world-readable Python" configuration the hostile suite tests)."""
    needed = needed_paths()
    blockers = set()
    for p in needed:  # the shallowest folder on the way to p that others cannot enter
        for d in [*reversed(p.parents), p]:
            if d != Path("/") and not d.stat().st_mode & 0o001:
                blockers.add(d)
                break
    if not blockers:
        return []
    _check(_libc.unshare(ctypes.c_int(CLONE_NEWNS)), "unshare")
    _mount("none", "/", None, MS_REC | MS_PRIVATE)
    covered = []
    for b in sorted(blockers):
        inside = [p for p in needed if is_within(p, b)]
        keep = Path(f"/tmp/.ironlaw-keep-{os.getpid()}-{len(covered)}")
        keep.mkdir(mode=0o700)
        _mount(str(b), str(keep), None, MS_BIND | MS_REC)  # the real folder, to bind from
        _mount("tmpfs", str(b), "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755")
        for p in inside:
            dst = b / p.relative_to(b)
            dst.mkdir(parents=True, exist_ok=True)
            _mount(str(keep / p.relative_to(b)), str(dst), None, MS_BIND | MS_REC)
        _check(_libc.umount2(str(keep).encode(), ctypes.c_int(MNT_DETACH)), "umount")
        keep.rmdir()
        covered.append(str(b))
    return covered


def zygote_can_drop_uid() -> bool:
    """world_usable() as a fresh zygote sees it (``python -I``, cwd /): a caller's own
    sys.path may hold private folders (pytest's temporary ones, say)."""
    import subprocess

    code = "from autograder.sandbox import layers; print(layers.world_usable(layers.needed_paths()))"
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, cwd="/")
    return out.stdout.strip() == "True"


def drop_uid(uid: int) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def install_seccomp(my_pid: int) -> bool:
    """Deny network sockets, ptrace, mounts, namespaces (also through clone's
    flags), session changes, queued signals and message queues, and signals
    to any process but this one."""
    try:
        import pyseccomp as sc
    except Exception:  # libseccomp missing: say so in the result
        return False
    f = sc.SyscallFilter(defaction=sc.ALLOW)
    f.add_rule(sc.ERRNO(errno.EPERM), "socket", sc.Arg(0, sc.NE, socket.AF_UNIX))
    for op in (sc.GT, sc.LT):  # libseccomp takes one comparison per argument per rule
        f.add_rule(sc.ERRNO(errno.EPERM), "kill", sc.Arg(0, op, my_pid))
        f.add_rule(sc.ERRNO(errno.EPERM), "tgkill", sc.Arg(0, op, my_pid))
    for flag in NAMESPACE_FLAGS:  # clone(flags, ...): a new namespace would undo a layer
        f.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    for name in DENIED_SYSCALLS:
        try:
            f.add_rule(sc.ERRNO(errno.EPERM), name)
        except (OSError, ValueError, RuntimeError):
            pass  # a syscall this kernel does not have
    for name in ENOSYS_SYSCALLS:
        try:
            f.add_rule(sc.ERRNO(errno.ENOSYS), name)
        except (OSError, ValueError, RuntimeError):
            pass
    f.load()  # also sets no_new_privs
    return True
