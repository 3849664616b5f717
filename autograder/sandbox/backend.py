"""The grader's side: a seam backend whose calls run in sandboxed workers.

A worker lives for one submission's tests and is replaced after a crash or
a time-out; the test that caused it fails with a message that says which.
Wall time, CPU time and peak memory are read from /proc, outside the worker.
Time limits run on the worker's clock (``clock``): a busy machine does not
use them up.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.calls import errors, seam, wire
from autograder.core import course, files, i18n
from autograder.core.i18n import N_, _
from autograder.core.files import find_root, scoped_environ
from autograder.core.manifest import Manifest
from autograder.core.limits import MAX_FILE_BYTES
from autograder.sandbox import cgroups, channel, clock
from autograder.sandbox.secret_paths import secret_list
from autograder.sandbox.worker import SHM_MB

ZYGOTE_ENV = "IRONLAW_ZYGOTE"  # a shared zygote's socket, set by `grade` for its graders
HIDE_ENV = "IRONLAW_HIDE"  # extra folders to hide, os.pathsep-separated
SPAWN_TIMEOUT_S = 60.0
HIDE_ALWAYS = ("/tmp", "/var/tmp", "/dev/shm", "/root", "/home", "/srv", "/opt", "/mnt", "/media")
SIGNAL_CAUSES = {
    signal.SIGKILL: N_("killed (SIGKILL): over the memory or process limit?"),
    signal.SIGXCPU: N_("killed: CPU time limit of {cpu_s} s"),
    signal.SIGXFSZ: N_("killed: file size limit (too much output?)"),
    signal.SIGSEGV: N_("crashed: segmentation fault"),
    signal.SIGABRT: N_("crashed: aborted"),
}


class SandboxUnavailable(errors.GraderError):
    """No worker could be started; the message is the engine's own and names the cause."""


# A Unix socket's path is at most 107 bytes (sun_path); a deep $TMPDIR (pytest-xdist's
# /tmp/pytest-of-root/pytest-N/popen-gwK/..., a course's nested scratch folder) overruns it.
SOCKET_PATH_MAX = 107
SOCKET_NAME = "zygote.sock"


def socket_dir() -> str:
    """A new mode-700 folder for the zygote's socket: in the temporary folder, or in /tmp
    when the socket's path would be too long there (the folder is private either way)."""
    tmpdir = tempfile.mkdtemp(prefix="ironlaw-zygote-")
    if len(os.fsencode(os.path.join(tmpdir, SOCKET_NAME))) > SOCKET_PATH_MAX:
        os.rmdir(tmpdir)
        # outside the run's own folder: named as this process's, so a run killed outright
        # leaves nothing here that the next one does not sweep
        files.sweep_stale("/tmp")
        tmpdir = tempfile.mkdtemp(prefix=files.owned_name("zygote"), dir="/tmp")
    os.chmod(tmpdir, 0o700)
    return tmpdir


class Zygote:
    """A zygote process this grader started, or one shared through $IRONLAW_ZYGOTE."""

    def __init__(self, path: str, proc: subprocess.Popen | None = None, tmpdir: str | None = None):
        self.path, self.proc, self.tmpdir = path, proc, tmpdir

    @classmethod
    def start(cls, hide: list[str], private: list[str] = (), preload: list[str] | None = None) -> "Zygote":
        """Start one; it builds its workers' root once, in a mount namespace they inherit.
        ``preload``: the modules it imports first (default: the course's, :func:`preload_list`).

        ``private``: folders of this run no worker may read or change (a batch's output
        and submissions): hidden with namespaces, and without them secrets like
        :func:`secret_list`'s, which the zygote completes with its own engine's
        (``zygote.secrets``) and refuses to run workers while another uid can reach."""
        tmpdir = socket_dir()
        path = os.path.join(tmpdir, SOCKET_NAME)
        # -I's isolation (no user site-packages, no script folder on sys.path, no PYTHON* variable
        # but one) with a fixed hash seed, which -I would ignore: a zygote hashing with a seed of its
        # own gives each batch's workers another order for a set of strings, and a result of student
        # code that depends on that order would change grade from one run to the next.
        env = {k: v for k, v in os.environ.items() if not k.startswith(("IRONLAW_SUBMISSION", "PYTHON"))}
        env["PYTHONHASHSEED"] = "0"
        proc = subprocess.Popen(
            [sys.executable, "-s", "-P", "-m", "autograder.sandbox.zygote", "--socket", path, "--hide", json.dumps(hide),
             "--secrets", json.dumps(sorted({*secret_list(), *map(str, private)})),
             "--preload", json.dumps(preload_list() if preload is None else preload)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, env=env, close_fds=True,
            cwd="/", preexec_fn=_die_with_parent,
        )
        line = proc.stdout.readline()
        if line.strip() != b"ready":
            proc.kill()
            shutil.rmtree(tmpdir, ignore_errors=True)
            raise SandboxUnavailable(f"the sandbox zygote did not start: {line!r}")
        return cls(path, proc, tmpdir)

    def request(self, req: dict, timeout: float = 10.0) -> tuple[socket.socket, dict]:
        data = json.dumps(req).encode()
        if len(data) > channel.REQUEST_LIMIT:  # the zygote would hang up: say why instead
            raise SandboxUnavailable(f"a request of {len(data)} bytes is over the zygote's "
                                     f"{channel.REQUEST_LIMIT}-byte limit")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(timeout)
            s.connect(self.path)
            channel.send(s, data)
            return s, channel.recv_json(s)
        except BaseException:
            s.close()
            raise

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)


def _die_with_parent() -> None:
    import ctypes

    ctypes.CDLL(None).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG


_shared: dict[str, Zygote] = {}


def hide_list(extra: list[str] = ()) -> list[str]:
    """What workers must not see: the project, everyone's temporary and home
    folders, and what the batch adds (its output and submissions folders)."""
    from_env = [p for p in os.environ.get(HIDE_ENV, "").split(os.pathsep) if p]
    import autograder

    roots = {find_root(), Path(autograder.__file__).resolve().parents[1]}  # the engine's checkout too
    beside = [str(r.parent) for r in roots if r.parent != Path("/")]  # other checkouts, shared folders
    return [*map(str, sorted(roots)), *beside, *HIDE_ALWAYS, *from_env, *extra]


def preload_list(*for_labs: Manifest) -> list[str]:
    """What the zygote imports for student code: for each lab given, its ``[sandbox] preload``, or
    the course file's choice where it has none (no lab given: the course's), all of them in order."""
    def course_list() -> list[str]:
        try:
            return list(course.load().preload)
        except (FileNotFoundError, course.CourseError):
            return []

    lists = [course_list() if m.preload is None else list(m.preload) for m in for_labs] or [course_list()]
    return list(dict.fromkeys(name for names in lists for name in names))


def zygote(manifest: Manifest | None = None) -> Zygote:
    """One zygote per grader process (or the batch's shared one); one it starts itself imports
    ``manifest``'s preload list (a grader process grades one lab)."""
    if "z" not in _shared:
        path = os.environ.get(ZYGOTE_ENV)
        labs_served = [manifest] if manifest is not None else []
        _shared["z"] = Zygote(path) if path else Zygote.start(hide_list(), preload=preload_list(*labs_served))
    return _shared["z"]


@contextlib.contextmanager
def shared_zygote(hide: list[Path] = (), for_labs: list[Manifest] = ()):
    """One warm zygote for a whole batch; grader processes find it via the env.
    ``for_labs``: the labs it serves, whose preload lists it imports (none given: the course's)."""
    private = [str(Path(p).resolve()) for p in hide]
    z = Zygote.start(hide_list(private), private, preload_list(*for_labs))
    try:
        with scoped_environ(**{ZYGOTE_ENV: z.path,
                               HIDE_ENV: os.pathsep.join(str(Path(p).resolve()) for p in hide)}):
            yield z
    finally:
        z.stop()


def stop_zygote() -> None:
    """Stop the zygote this process started (a shared one belongs to `grade`)."""
    z = _shared.pop("z", None)
    if z is not None:
        z.stop()


def _proc_fields(pid: int) -> dict[str, int]:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmHWM", "VmRSS")):
                key, val = line.split(":")
                out[key] = int(val.split()[0]) * 1024
    out["cpu_ticks"] = clock.cpu_ticks(pid)  # a joined child's work counts as the call's CPU time
    return out


class SandboxBackend:
    """Calls the submission's functions in a sandboxed worker.

    Deadlines: each call's reply must arrive, whole, within ``timeout_s`` on the
    worker's clock (``clock``: wall time less its waits for a core);
    all of a submission's spawns and calls share ``submission_timeout_s``,
    after which every further call fails at once.  A measured call runs in a
    fresh worker that may start no thread or process (its pids cgroup is
    frozen from outside, where one can be made: ``cgroups``), and its peak
    memory is counted from the worker's resident memory before it imported
    any student file: nothing kept from an earlier call or from import time
    can hide an allocation.

    What the worker says is believed only up to its isolation report, which
    engine code sends before any student file is loaded: its pid (checked to
    be the zygote's child or that child's child) and the report.  Everything
    after (hello, each reply) may have been written by student code, so it is
    read as student output: an error's kind is one of the worker's own
    (``errors.StudentCodeError.from_worker``), never the grader's.  A message
    sent and not answered whole (a time-out, a crash, an exception in the
    grader) ends the worker: no later call reads another's reply.
    """

    label = "sandbox"

    def __init__(self, code_dir: Path, manifest: Manifest, assignment_dir: Path):
        self.manifest = manifest
        # contents, not paths: the zygote's workers no longer see the grader's folders
        paths = {f: Path(code_dir) / f for f in manifest.student_files if (Path(code_dir) / f).is_file()}
        paths.update({f: Path(assignment_dir) / f for f in manifest.support_files})
        self.broken: errors.StudentCodeError | None = None  # the submission cannot even load
        # Staging refuses larger files; `check --sandbox` reads a student's folder as it is. Bounded
        # files keep every spawn request under the zygote's limit, which is derived from this one.
        too_big = sorted(f for f, p in paths.items() if p.stat().st_size > MAX_FILE_BYTES)
        if too_big:
            self.broken = errors.StudentCodeError(errors.MISSING_FILE, _("file {file} is larger than {mib} MiB").format(
                file=too_big[0], mib=MAX_FILE_BYTES // 2**20))
            paths = {}
        files = {f: base64.b64encode(p.read_bytes()).decode() for f, p in paths.items()}
        lim = manifest.limits
        self.req = {
            "op": "spawn", "files": files, "student_files": list(manifest.student_files),
            "support_files": list(manifest.support_files), "lang": i18n.current(),
            "limits": {"memory_mb": lim.memory_mb, "cpu_s": lim.cpu_s, "fsize_mb": 64, "work_mb": WORK_MB,
                       "nproc": NPROC if cgroups.memory_available() else NPROC_NO_MEMORY_GROUP},
        }
        self.conn: socket.socket | None = None
        self.pid = self.worker_pid = None
        self.pidfd: int | None = None  # the worker's: a signal through it never reaches a recycled pid
        self.proc: clock.ProcFiles | None = None  # the worker's /proc files its clock reads, opened once
        self.in_flight = False  # a message was sent to the worker (or it was asked for) and not yet answered whole
        self.work: str | None = None
        self.isolation: dict = {}
        self.spawn_s: list[float] = []
        self.calls = 0  # calls the current worker has served
        self.baseline_rss = 0  # the current worker's resident memory before student code loaded
        self.budget_end: float | None = None  # time.monotonic() when the submission's budget runs out
        self.timed_out: set[str] = set()  # functions that hit the time limit once already
        self.group: cgroups.WorkerGroup | None = None

    # -- deadlines ----------------------------------------------------------
    def _deadline(self, seconds: float) -> clock.WorkerClock:
        """``seconds`` on the current worker's clock from now, within the submission's budget
        (wall clock, from the first worker's go: a zygote's start is the engine's time)."""
        if self.budget_end is None:
            self.budget_end = time.monotonic() + self.manifest.limits.submission_timeout_s
        return clock.WorkerClock(self.proc, seconds, self.budget_end,
                                 self.group.cpu_seconds if self.group else None)

    def _budget_error(self) -> errors.StudentCodeError:
        return errors.StudentCodeError(errors.TIMEOUT, _(
            "the submission's total time limit of {seconds:g} s is used up: this and the remaining "
            "tests were not run").format(seconds=self.manifest.limits.submission_timeout_s))

    # -- worker lifecycle ---------------------------------------------------
    def _spawn(self) -> None:
        t0 = time.perf_counter()
        timeout = self.manifest.limits.timeout_s
        if self.budget_end is not None and time.monotonic() >= self.budget_end:
            raise self._budget_error()
        self.in_flight = True  # until the hello: _exchange ends a worker whose start was interrupted
        try:
            report = self._start_worker()
        except Exception as exc:  # noqa: BLE001  (the same request would fail the same way: never retried)
            # Before the worker's report no student code has run: the engine failed, not the
            # submission (kind GRADER: the score is pending, never a zero; grading/runner.py).
            self._kill()
            self.broken = errors.StudentCodeError(errors.GRADER, _(
                "the grader could not start a sandbox for your code ({cause}): the grader's failure, not your "
                "code's; this test's score is pending").format(cause=_spawn_cause(exc)))
            raise self.broken from None
        conn = self.conn
        self.baseline_rss = _reset_peak(self.worker_pid)  # before any student code: trusted
        nproc = self.req["limits"]["nproc"]
        self.group = cgroups.for_worker(self.worker_pid, nproc, self._tree_limit_mb() * 2**20)
        report = {**report, "report": {**report["report"], **self._group_report(report["report"])}}
        self.calls = 0
        try:
            # hello comes after importing the files: the call limit, from the go (the worker's start,
            # and the zygote's, are the engine's time), as the message says
            deadline = self._deadline(timeout)
            channel.send_json(conn, {"go": True})
            hello = json.loads(self._recv(deadline, channel.CONTROL_LIMIT))  # student code may have written it
            if not isinstance(hello, dict) or "hello" not in hello:
                raise ValueError("no hello")
        except socket.timeout:
            self._kill()
            if deadline.past_wall_end():
                raise self._budget_error() from None
            self.broken = errors.StudentCodeError(
                errors.TIMEOUT, _("importing your files timed out after {seconds:g} s").format(seconds=timeout))
            raise self.broken from None
        except (channel.ChannelClosed, OSError, ValueError, RecursionError):
            cause = self._death_cause()
            self._kill()
            self.broken = errors.StudentCodeError(errors.CRASH, _("importing your files stopped the worker: {cause}").format(cause=cause))
            raise self.broken from None
        self.in_flight = False
        # Only what the engine reported before student code ran; never a path of the grader's.
        self.spawn_s.append(time.perf_counter() - t0)
        self.isolation = {**report["report"], "timeout_s": timeout, "sandbox": True,
                          "ready_ms": round(self.spawn_s[-1] * 1e3, 1)}  # on the grader's clock

    def _tree_limit_mb(self) -> int:
        """A memory group's limit: the lab's ``memory_mb`` for the worker's processes and tmpfs together."""
        return self.manifest.limits.memory_mb

    def _group_report(self, report: dict) -> dict:
        """Which of the grader's limits hold the worker's whole tree, for the isolation report:
        ``tree_memory_mb`` bounds its memory (None: nothing does, as when the grader is not root)."""
        lim = self.req["limits"]
        rlimits = report.get("rlimits")
        nproc = rlimits.get("nproc") if isinstance(rlimits, dict) else None  # set where the worker drops to its own uid
        if self.group.memory:
            tree = self._tree_limit_mb()
        elif nproc:  # each process under RLIMIT_AS, at most nproc of them, and the tmpfs folders
            tree = nproc * lim["memory_mb"] + lim["work_mb"] + SHM_MB
        else:
            tree = None
        return {"process_group": self.group.pids is not None, "memory_group": self.group.memory is not None,
                "tree_memory_mb": tree}

    def _start_worker(self) -> dict:
        """Ask the zygote for a worker; its isolation report, sent before any student code ran."""
        self.work = tempfile.mkdtemp(prefix="ironlaw-work-")  # used only where there are no namespaces
        self.conn, first = zygote(self.manifest).request({**self.req, "work": self.work}, timeout=SPAWN_TIMEOUT_S)
        if not _is_pid(first.get("pid")):  # killpg(0) would be this grader's own group
            raise SandboxUnavailable("sandbox setup failed: the zygote's answer is malformed")
        self.pid = first["pid"]
        try:
            worker_pid = channel.recv_json(self.conn, deadline=time.monotonic() + SPAWN_TIMEOUT_S)["worker_pid"]
            report = channel.recv_json(self.conn, deadline=time.monotonic() + SPAWN_TIMEOUT_S)
        except (socket.timeout, channel.ChannelClosed, OSError, ValueError, KeyError, TypeError) as exc:
            raise SandboxUnavailable(f"sandbox setup failed: no report from the worker ({type(exc).__name__})") from None
        if isinstance(report, dict) and "fatal" in report:
            raise SandboxUnavailable(str(report["fatal"]))
        if not (isinstance(report, dict) and _plain_report(report.get("report"))):
            raise SandboxUnavailable("sandbox setup failed: the worker's report is malformed")
        # The pid the grader reads /proc of and kills (taken only once checked): the zygote's
        # child, or (in its own PID namespace) that child's child, waiting for the go.
        if not (_is_pid(worker_pid) and (worker_pid == self.pid or _ppid(worker_pid) == self.pid)):
            raise SandboxUnavailable("sandbox setup failed: the worker's pid is not the zygote's child")
        self.worker_pid = worker_pid
        self.proc = clock.ProcFiles(worker_pid)
        with contextlib.suppress(OSError, AttributeError):  # no pidfd (an old kernel): plain kill
            self.pidfd = os.pidfd_open(self.worker_pid)
        return report

    def _kill(self) -> None:
        """End the worker and everything it started: its groups' processes (orphans too), its
        process group (W's), the worker itself through its pidfd."""
        if self.group:
            self.group.kill()
        if self.pid:
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)
        if self.pidfd is not None:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            os.close(self.pidfd)
        elif self.worker_pid:
            with contextlib.suppress(OSError):
                os.kill(self.worker_pid, signal.SIGKILL)
        if self.conn:
            self.conn.close()
        if self.work:
            shutil.rmtree(self.work, ignore_errors=True)
        if self.group:
            self.group.remove()
        if self.proc:
            self.proc.close()
        self.conn = self.pid = self.worker_pid = self.pidfd = self.work = self.group = self.proc = None
        self.in_flight = False

    def _out_of_memory(self) -> bool:
        """Has the memory group's limit killed a process of the worker's tree?"""
        return bool(self.group and self.group.oom_kills())

    def _recv(self, deadline: clock.WorkerClock, limit: int) -> bytes:
        """The worker's next message, whole, by ``deadline`` (else socket.timeout).  With a
        memory group, a process of the tree killed over its limit ends the wait at once
        (ChannelClosed): the worker itself, or a child it would wait for forever."""
        if self.group and self.group.memory:
            while not select.select([self.conn], [], [], max(0.0, min(OOM_POLL_S, deadline())))[0]:
                if self._out_of_memory():
                    raise channel.ChannelClosed("a process was killed over the memory limit")
                if deadline() <= 0:
                    raise socket.timeout("deadline passed")
        try:
            return channel.recv(self.conn, limit, deadline=deadline)
        except socket.timeout:
            if self._out_of_memory():
                raise channel.ChannelClosed("a process was killed over the memory limit") from None
            raise

    def _death_cause(self) -> str:
        if self._out_of_memory():
            return _(MEMORY_GROUP_CAUSE).format(mib=self._tree_limit_mb())
        for _attempt in range(50):  # the zygote reaps within ~0.2 s
            s, reply = zygote().request({"op": "status", "pid": self.pid})
            s.close()
            code = reply["status"]
            if code is not None:
                break
            time.sleep(0.05)
        else:
            return _("the worker stopped answering")
        if code > 128 and code - 128 in SIGNAL_CAUSES:
            return _(SIGNAL_CAUSES[code - 128]).format(cpu_s=self.manifest.limits.cpu_s)
        if code > 128:
            return _("killed by signal {number}").format(number=code - 128)
        return _("the worker exited with code {code} (sys.exit or os._exit in your code?)").format(code=code)

    def close(self) -> None:
        self._kill()
        cgroups.sweep()

    # -- calls --------------------------------------------------------------
    def call(self, name, args, kwargs, measure=False):
        return self._exchange(name, seam.call_message(name, args, kwargs), measure=measure)

    def call_each(self, name: str, calls: list[dict]) -> list:
        """Many keyword calls of ``name`` in one message and one reply (``seam._Function.each``)."""
        if not calls:
            return []
        value, _m = self._exchange(name, seam.each_message(name, calls), count=len(calls))
        if not (isinstance(value, list) and len(value) == len(calls)):
            self._kill()  # only engine code answers this shape: a forged reply
            raise errors.StudentCodeError(errors.UNSUPPORTED, _("{name}(): unreadable reply ({error})").format(
                name=name, error="not one value per call"))
        return value

    def call_chain(self, name: str, calls: list[dict], carry: tuple[str | None, ...]) -> list:
        """A chain of calls of ``name`` in one message, one reply per call (``seam._Function.chain``)."""
        if not calls:
            return []
        values, _m = self._exchange(name, seam.chain_message(name, calls, carry), chain=(len(calls), carry))
        return values

    def _exchange(self, name: str, payload: bytes, *, measure: bool = False, count: int = 1,
                  chain: tuple[int, tuple[str | None, ...]] | None = None):
        """Send one call message (``count`` calls of ``name``) and read its reply: (value, Measurement);
        a chain of ``chain[0]`` calls: read one reply per call, each by its own deadline, and
        give the list of values (``seam._Function.chain``).

        Whatever ends it before the whole reply is read (a time-out or crash here, or an
        exception raised into the grader: pytest-timeout's, a MemoryError, a KeyboardInterrupt)
        ends the worker, spawn included: the late reply still on its way belongs to no call."""
        if self.in_flight:  # left so by nothing here; a worker owing a reply is never asked again
            self._kill()
        try:
            return self._call(name, payload, measure=measure, count=count, chain=chain)
        finally:
            if self.in_flight:
                self._kill()

    def _call(self, name: str, payload: bytes, *, measure: bool, count: int,
              chain: tuple[int, tuple[str | None, ...]] | None):
        if self.broken:
            raise self.broken
        if name in self.timed_out:  # don't spend the limit again on every test
            raise errors.StudentCodeError(errors.TIMEOUT, _("{name}() was not run again: it timed out in an earlier test").format(name=name))
        if self.budget_end is not None and time.monotonic() >= self.budget_end:
            self._kill()
            raise self._budget_error()
        if measure and self.conn is not None and self.calls:
            self._kill()  # measure in a fresh worker: nothing kept from earlier calls
        if self.conn is None:
            self._spawn()
        timeout = self.manifest.limits.timeout_s
        deadline = self._deadline(timeout * count)  # calls made together share their limits
        cpu0 = None
        if measure:
            self.group.freeze()  # no new thread or process while measured
            cpu0 = self.proc.cpu_ticks()
        t0 = time.perf_counter()
        self.calls += 1
        self.in_flight = True
        raw = self._reply(name, deadline, count, send=payload)
        if chain is None:
            self.in_flight = False  # the whole reply is read: the worker owes nothing
            measurement = self._measurement(time.perf_counter() - t0, cpu0) if measure else None
            if measure:
                self.group.thaw()
            return self._value(name, raw), measurement
        n, carry = chain
        values = []
        while True:  # one reply per call, each by its own deadline, as if the calls were made one by one
            try:
                values.append(self._value(name, raw))
            except errors.StudentCodeError:
                self.in_flight = False  # an error is the chain's last reply (or it ended the worker)
                raise
            if len(values) == n or not seam.feeds(values[-1], carry):
                self.in_flight = False  # the worker ends the chain by the same rule: it owes nothing
                return values, None
            raw = self._reply(name, self._deadline(timeout), 1)

    def _reply(self, name: str, deadline: clock.WorkerClock, count: int, send: bytes | None = None) -> bytes:
        """The worker's next reply, whole, by ``deadline`` (after sending ``send``, if given); a
        time-out, a death or an oversized message ends the worker and is the student's error."""
        timeout = self.manifest.limits.timeout_s
        try:
            if send is not None:
                channel.send(self.conn, send)
            raw = self._recv(deadline, wire.MAX_BYTES + 4096)
            if self._out_of_memory():  # a child killed over the limit while the worker answered
                raise channel.ChannelClosed("a process was killed over the memory limit")
            return raw
        except socket.timeout:
            self._kill()
            if deadline.past_wall_end():
                raise self._budget_error() from None
            self.timed_out.add(name)
            if count > 1:
                raise errors.StudentCodeError(errors.TIMEOUT, _(
                    "{count} calls of {name}() made together did not finish within {seconds:g} s ({limit:g} s "
                    "a call)").format(count=count, name=name, seconds=timeout * count, limit=timeout)) from None
            raise errors.StudentCodeError(errors.TIMEOUT, _("{name}() timed out after {seconds:g} s").format(name=name, seconds=timeout)) from None
        except (channel.ChannelClosed, ConnectionError, OSError):
            cause = self._death_cause()
            self._kill()
            raise errors.StudentCodeError(errors.CRASH, _("{name}() did not return: {cause}").format(name=name, cause=cause)) from None
        except ValueError as exc:  # an oversized message
            self._kill()
            raise errors.StudentCodeError(errors.UNSUPPORTED, f"{name}(): {exc}") from None

    def _value(self, name: str, raw: bytes):
        """A reply's value; its error, the student's, raised; an unreadable one ends the worker."""
        try:
            msg = wire.loads(raw)
            del raw
            if not isinstance(msg, dict) or not ({"ok", "error"} & set(msg)):
                raise wire.WireError("malformed reply")
        except (wire.WireError, ValueError, KeyError, IndexError, TypeError, RecursionError) as exc:
            self._kill()
            raise errors.StudentCodeError(errors.UNSUPPORTED, _("{name}(): unreadable reply ({error})").format(name=name, error=str(exc)[:200])) from None
        if "error" in msg:
            # the student's own words, whoever wrote them: never the grader's failure. What the
            # call printed goes in .output: the plugin shows it for public tests only
            raise errors.StudentCodeError.from_worker(msg["error"])
        return msg["ok"]

    def _measurement(self, wall: float, cpu0: int | None) -> seam.Measurement:
        try:
            after = _proc_fields(self.worker_pid)
        except OSError:
            after = None
        if after is None or cpu0 is None or not self.baseline_rss:
            return seam.Measurement(wall, float("nan"), -1, "unavailable")
        return seam.Measurement(wall, (after["cpu_ticks"] - cpu0) / clock.HZ,
                                max(0, after["VmHWM"] - self.baseline_rss), "rss")


# Threads and processes of one worker (each has its own uid: RLIMIT_NPROC, and its pids group).
# With a memory group the group bounds the tree's memory; without one the count does (each
# process under RLIMIT_AS: at most NPROC_NO_MEMORY_GROUP x memory_mb, plus the tmpfs folders),
# so it is as low as honest work allows: a worker runs torch and numpy on one thread (the
# zygote sets it), the labs' references use 2 (a prefetching thread), a fork-context
# multiprocessing child with its queue 5, a torch DataLoader with num_workers=2 takes 9.
NPROC = 64
NPROC_NO_MEMORY_GROUP = 12
WORK_MB = 256  # the worker's tmpfs /tmp (and SHM_MB at /dev/shm)
OOM_POLL_S = 0.2  # while a reply is awaited, how often the memory group's kills are read
MEMORY_GROUP_CAUSE = N_("killed: over the memory limit of {mib} MiB for all of its processes together")
REPORT_TEXT_LIMIT = 200


def _plain_report(report) -> bool:
    """An isolation report as the engine writes it: names to booleans, numbers and short
    texts without a path, or one level of those (rlimits).  The worker sends it before any
    student code runs; the results show it, so nothing else may ride in it."""
    def plain(v, nested: bool) -> bool:
        if v is None or isinstance(v, (bool, int, float)):
            return True
        if isinstance(v, str):
            return len(v) <= REPORT_TEXT_LIMIT and "/" not in v
        return (not nested and isinstance(v, dict) and len(v) <= 32
                and all(isinstance(k, str) and plain(x, True) for k, x in v.items()))
    return (isinstance(report, dict) and len(report) <= 64
            and all(isinstance(k, str) and len(k) <= 64 and plain(v, False) for k, v in report.items()))


def _is_pid(value) -> bool:
    return type(value) is int and value > 1


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _spawn_cause(exc: Exception) -> str:
    """Why no worker started, without a path of the grader's (an OSError's filename)."""
    if isinstance(exc, SandboxUnavailable):
        return str(exc)  # the engine's own words (a refusal names its fix)
    if isinstance(exc, OSError) and exc.strerror:
        return f"{type(exc).__name__}: {exc.strerror}"
    return type(exc).__name__


def _reset_peak(pid: int) -> int:
    """Reset ``pid``'s resident-memory high-water mark; return its resident memory."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return _proc_fields(pid)["VmRSS"]
    except OSError:
        return 0

