#!/usr/bin/env python3
"""Fake OpenSandbox server for assay's tests (stdlib only).

One process plays both halves of alibaba/OpenSandbox: the lifecycle server
(/v1/sandboxes..., specs/sandbox-lifecycle.yml) and, for every sandbox, its
execd daemon (specs/execd-api.yaml), served under the endpoint's path
prefix /sandboxes/{id}/port/44772. Commands really run, in bubblewrap, as a
container would run them: each sandbox's own host directories bound as its
/workspace and its /tmp (both persist across the sandbox's commands; the
files API reaches both, nothing else); the create body's
resourceLimits.memory as RLIMIT_AS of every command (cpu only recorded);
at most --pids-limit processes per sandbox (a pids cgroup, v1 or v2;
RLIMIT_NPROC with a warning where none can be made); and the network as
its networkPolicy says: none (--unshare-net) when it denies by default,
the host's when there is no policy or defaultAction is allow (egress rules
are validated and logged, not enforced).

  fake_opensandbox.py --port 0 --port-file F [--log F] [--key KEY]
      [--start-ms 300] [--fail-create REASON] [--ttl-scale 1] [--grace-ms 1000]
      [--pids-limit 512] [--network-mode bridge|host] [--no-egress] [--root DIR]
      [--host 127.0.0.1] [--verbose]

--no-egress refuses any networkPolicy (a server without its egress sidecar);
--network-mode host too, and gives every sandbox one execd address that reaches
the oldest one (protocols.md E.5).

See tests/fakes/README.md for the details and the log format.
"""
import argparse
import datetime
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, parse_qsl, unquote, urlsplit

EXECD_PORT = 44772
ROUTE_HEADER = "X-Fake-Route-Token"  # the endpoint's extra header: execd requires it
STATES = ("Pending", "Running", "Pausing", "Paused", "Resuming", "Stopping", "Terminated",
          "Failed")
WS = "/workspace"
HOSTNET = "hostnet"  # --network-mode host: the one execd address, /hostnet/PORT
# what a create with a networkPolicy hears without the egress component: the real
# server's words for network_mode host (protocols.md E.5); bridge: the fake's own
NO_EGRESS = {"host": "networkPolicy is not supported when docker network_mode=host.",
             "bridge": "networkPolicy is not supported: no egress image is configured "
                       "(egress.image) for docker network_mode=bridge."}
ROOTS = (WS, "/tmp")  # the sandbox paths that are host dirs of their own (the files API's reach)


def now():
    return time.time()


def rfc3339(t):
    """Go/pydantic-style UTC time: 2026-01-02T03:04:05.123456Z."""
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(s):
    if not isinstance(s, str):
        raise ValueError("not a string")
    m = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$", s)
    if not m:
        raise ValueError(f"invalid datetime {s!r}")
    base = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")
    tz = datetime.timezone.utc if m.group(3) == "Z" else datetime.timezone(
        datetime.timedelta(hours=int(m.group(3)[:3]), minutes=int(m.group(3)[0] + m.group(3)[4:])))
    frac = float(m.group(2) or 0)
    return base.replace(tzinfo=tz).timestamp() + frac


def go_json(obj):
    """JSON as Go's encoding/json writes it: raw UTF-8, and <, >, &, U+2028, U+2029 escaped."""
    s = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return (s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


class Err(Exception):
    def __init__(self, status, code, message, body=None):
        super().__init__(message)
        self.status, self.code, self.message, self.body = status, code, message, body


# ---------------------------------------------------------------- commands

class Command:
    """One execd command: a bwrap process whose output goes to files that are tailed."""

    def __init__(self, sbx, req, background):
        self.sbx, self.background = sbx, background
        self.id = uuid.uuid4().hex
        self.content = req["command"]
        self.started = now()
        self.finished = None
        self.exit_code = None
        self.error = ""
        self.killed = False  # we signalled it (interrupt, timeout, sandbox end)
        self.running = True
        d = sbx.state_dir
        if background:
            self.out_path = self.err_path = os.path.join(d, self.id + ".output")
            fo = open(self.out_path, "wb")
            fe = fo
        else:
            self.out_path = os.path.join(d, self.id + ".stdout")
            self.err_path = os.path.join(d, self.id + ".stderr")
            fo, fe = open(self.out_path, "wb"), open(self.err_path, "wb")
        env = dict(sbx.env)
        env.update(req.get("envs") or {})
        argv = sbx.bwrap_argv(req.get("cwd") or "/", env) + ["bash", "-c", self.content]
        try:
            self.proc = spawn(argv, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe,
                              start_new_session=True, close_fds=True,
                              preexec_fn=sbx.preexec())
        except (OSError, subprocess.SubprocessError) as e:
            raise Err(500, "RUNTIME_ERROR", f"error running command: fake_opensandbox could "
                      f"not start bwrap: {e}")
        finally:
            fo.close()
            if fe is not fo:
                fe.close()
        self.pgid = self.proc.pid
        self.done = threading.Event()
        timeout_ms = req.get("timeout") or 0
        if timeout_ms:
            timer = threading.Timer(timeout_ms / 1000.0, self.timeout)
            timer.daemon = True
            timer.start()
        threading.Thread(target=self.wait, daemon=True).start()

    def wait(self):
        rc = self.proc.wait()
        self.finished = now()
        # bwrap exits 128+N when the command died of signal N; a command we signalled that
        # ends so is reported as execd reports a signalled process: -1
        if rc < 0 or (self.killed and rc > 128):
            self.exit_code = -1
            sig = -rc if rc < 0 else rc - 128
            self.error = "signal: " + {signal.SIGKILL: "killed", signal.SIGTERM: "terminated",
                                       signal.SIGINT: "interrupt"}.get(sig, f"signal {sig}")
        else:
            self.exit_code = rc
            self.error = f"exit status {rc}" if rc else ""
        self.running = False
        self.done.set()

    def signal_group(self, sig):
        """Signal the command's process group. SIGKILL takes bwrap too; any other signal
        goes to the processes inside only (bwrap would die of it and, with
        --die-with-parent, SIGKILL them: a command could not trap SIGTERM)."""
        if sig == signal.SIGKILL:
            try:
                os.killpg(self.pgid, sig)
                return True
            except ProcessLookupError:
                return False
        hit = False
        for pid in group_members(self.pgid):
            try:
                with open(f"/proc/{pid}/comm") as f:
                    if f.read().strip() == "bwrap":
                        continue
                os.kill(pid, sig)
                hit = True
            except (OSError, ValueError):
                pass
        return hit

    def timeout(self):
        if self.running:
            self.killed = True
            self.signal_group(signal.SIGKILL)

    def interrupt(self):
        """execd's killPid: SIGTERM to the group, SIGKILL if it is still there after 3 s."""
        self.killed = True
        if not self.signal_group(signal.SIGTERM):
            return
        if self.done.wait(3.0):
            return
        self.signal_group(signal.SIGKILL)
        self.done.wait(1.0)

    def status(self):
        st = {"id": self.id, "content": self.content, "running": self.running}
        if not self.running:
            st["exit_code"] = self.exit_code
            if self.error:
                st["error"] = self.error
        st["started_at"] = rfc3339(self.started)
        if self.finished is not None:
            st["finished_at"] = rfc3339(self.finished)
        return st


def group_members(pgid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[2]) == pgid:
                    out.append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return out


_spawn_q = None
_spawn_lock = threading.Lock()


def spawn(argv, **kw):
    """Popen from one long-lived thread: bwrap's --die-with-parent (PR_SET_PDEATHSIG)
    fires when the *thread* that forked it ends, and a request's thread ends before a
    background command or a command whose client went away."""
    global _spawn_q
    import queue
    with _spawn_lock:
        if _spawn_q is None:
            _spawn_q = queue.Queue()
            start = True
        else:
            start = False
    if start:

        def loop():
            while True:
                a, k, box, ev = _spawn_q.get()
                try:
                    box.append(subprocess.Popen(a, **k))
                except Exception as e:  # OSError, or SubprocessError from the preexec
                    box.append(e)
                ev.set()

        threading.Thread(target=loop, daemon=True, name="spawner").start()
    box, ev = [], threading.Event()
    _spawn_q.put((argv, kw, box, ev))
    ev.wait()
    if isinstance(box[0], Exception):
        raise box[0]
    return box[0]


def tail(path, emit, done):
    """execd's tailStdPipe: read new bytes every 100 ms; one event per line, its terminator
    (\\n, \\r or \\r\\n) stripped, an empty line as "\\n", a partial line only at the end."""
    pos, cr = 0, [False]

    def read(flush):
        nonlocal pos
        try:
            with open(path, "rb") as f:
                f.seek(pos)
                data = f.read()
        except OSError:
            return
        buf = bytearray()
        consumed = 0
        for i, b in enumerate(data):
            if b in (10, 13):
                if buf:
                    emit(buf.decode("utf-8", "replace"))
                    buf.clear()
                elif not (b == 10 and cr[0]):
                    emit("\n")
                cr[0] = b == 13
                consumed = i + 1
                continue
            cr[0] = False
            buf.append(b)
        if flush:
            if buf:
                emit(buf.decode("utf-8", "replace"))
            pos += len(data)
        else:
            pos += consumed

    while not done.wait(0.1):
        read(False)
    read(True)


# ---------------------------------------------------------------- limits

_MEM_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)(?:[eE]([+-]?\d+))?\s*([A-Za-z]*)\s*$")
_MEM_UNITS = {"": 1, "b": 1}
for _i, _u in enumerate("kmgtpe", 1):
    _MEM_UNITS[_u] = _MEM_UNITS[_u + "b"] = 1000 ** _i
    _MEM_UNITS[_u + "i"] = _MEM_UNITS[_u + "ib"] = 1024 ** _i


def parse_memory(v):
    """Bytes of a memory quantity, or None when it is not one (the real server's Docker
    runtime then logs a warning and sets no limit: so does this fake). Kubernetes syntax
    ("512Mi", "2Gi", "1G", "500M", "1048576", "1.5Gi", "1e9") and, as that runtime reads
    it, case-insensitive units with an optional b ("512mb", "2g", "1GiB"): m is mega."""
    if not isinstance(v, str):
        return None
    m = _MEM_RE.match(v)
    if not m:
        return None
    mult = _MEM_UNITS.get(m.group(3).lower())
    if mult is None:
        return None
    n = int(float(m.group(1)) * 10 ** int(m.group(2) or 0) * mult)
    return n if n >= 1 else None


class PidsCgroups:
    """One pids cgroup per sandbox (pids.max = --pids-limit) under a parent of this server's
    own, fake-opensandbox.<pid>, in the v1 pids hierarchy or in v2 where the pids
    controller can be delegated. A command's process joins its sandbox's cgroup in the
    preexec before exec'ing bwrap, so whatever it forks is counted. RLIMIT_NPROC is the
    fallback where no cgroup can be made (the kernel never applies it to root: a warning)."""

    def __init__(self, limit):
        self.limit = limit
        self.base = None
        self.kind = "rlimit-nproc"
        self.warned = False
        self.warn_lock = threading.Lock()
        why = []
        for kind, parent in self.candidates():
            try:
                self.reap_stale(parent)
                if kind == "cgroup-v2":  # pids must be enabled down to our children
                    with open(os.path.join(parent, "cgroup.subtree_control")) as f:
                        if "pids" not in f.read().split():
                            self.write(os.path.join(parent, "cgroup.subtree_control"), "+pids")
                base = os.path.join(parent, f"fake-opensandbox.{os.getpid()}")
                os.makedirs(base, exist_ok=True)
                if kind == "cgroup-v2":
                    try:
                        self.write(os.path.join(base, "cgroup.subtree_control"), "+pids")
                    except OSError:
                        os.rmdir(base)
                        raise
                self.base, self.kind = base, kind
                break
            except OSError as e:
                why.append(f"{parent}: {e.strerror or e}")
        if self.base is None:
            self.warn("no pids cgroup could be made (" + ("; ".join(why) or "no pids "
                      "controller mounted") + ")")

    @staticmethod
    def write(path, text):
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)

    def warn(self, why):
        with self.warn_lock:
            if self.warned:
                return
            self.warned = True
        print(f"fake_opensandbox: warning: {why}; --pids-limit {self.limit} falls back to "
              "RLIMIT_NPROC, which the kernel does not apply to root: a fork bomb is not "
              "contained", file=sys.stderr, flush=True)

    @staticmethod
    def candidates():
        """(kind, the directory to make our parent cgroup in), v1 first."""
        own = {}
        try:
            with open("/proc/self/cgroup") as f:
                for line in f:
                    hid, ctrls, path = line.rstrip("\n").split(":", 2)
                    if "pids" in ctrls.split(","):
                        own["v1"] = path
                    if hid == "0" and ctrls == "":
                        own["v2"] = path
        except OSError:
            return []
        mounts = []
        try:
            with open("/proc/self/mounts") as f:
                for line in f:
                    dev, mnt, fstype, options = line.split()[:4]
                    mounts.append((fstype, mnt.replace("\\040", " "), options.split(",")))
        except OSError:
            return []
        out = []
        for fstype, mnt, options in mounts:
            if fstype == "cgroup" and "pids" in options and "v1" in own:
                p = os.path.join(mnt, own["v1"].lstrip("/"))
                out.append(("cgroup-v1", p if os.path.isdir(p) else mnt))
        for fstype, mnt, options in mounts:
            if fstype == "cgroup2" and "v2" in own:
                p = os.path.join(mnt, own["v2"].lstrip("/"))
                for d in (p, mnt):
                    try:
                        with open(os.path.join(d, "cgroup.controllers")) as f:
                            if "pids" in f.read().split():
                                out.append(("cgroup-v2", d))
                                break
                    except OSError:
                        pass
        return out

    def reap_stale(self, parent):
        """Remove the empty cgroups of fake servers that died without cleaning up."""
        try:
            names = os.listdir(parent)
        except OSError:
            return
        for n in names:
            m = re.match(r"^fake-opensandbox\.(\d+)$", n)
            if not m or int(m.group(1)) == os.getpid() or os.path.exists(f"/proc/{m.group(1)}"):
                continue
            d = os.path.join(parent, n)
            for c in os.listdir(d):
                if os.path.isdir(os.path.join(d, c)):
                    self.remove(os.path.join(d, c))
            try:
                os.rmdir(d)
            except OSError:
                pass

    def create(self, sid):
        """The cgroup.procs path of a new cgroup for sandbox sid (None: the fallback)."""
        if self.base is None:
            return None
        path = os.path.join(self.base, sid)
        try:
            os.mkdir(path)
            self.write(os.path.join(path, "pids.max"), str(self.limit))
            return path
        except OSError as e:
            self.warn(f"cannot make the pids cgroup {path}: {e.strerror or e}")
            try:
                os.rmdir(path)
            except OSError:
                pass
            return None

    def remove(self, path):
        """Kill what is left in the cgroup, then remove it."""
        if not path:
            return
        procs = os.path.join(path, "cgroup.procs")
        for _ in range(100):
            try:
                with open(procs) as f:
                    pids = [int(x) for x in f.read().split()]
            except (OSError, ValueError):
                pids = []
            if not pids:
                try:
                    os.rmdir(path)
                    return
                except FileNotFoundError:
                    return
                except OSError:
                    pass  # a process on its way out still counts: try again
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.02)
        print(f"fake_opensandbox: warning: could not remove the cgroup {path}",
              file=sys.stderr, flush=True)

    def close(self):
        if self.base:
            for c in os.listdir(self.base):
                if os.path.isdir(os.path.join(self.base, c)):
                    self.remove(os.path.join(self.base, c))
            try:
                os.rmdir(self.base)
            except OSError:
                pass


# ---------------------------------------------------------------- sandboxes

class Sandbox:
    def __init__(self, st, body):
        self.st = st
        self.id = str(uuid.uuid4())
        self.token = uuid.uuid4().hex
        self.created = now()
        self.image = body["image"]
        self.entrypoint = body["entrypoint"]
        self.metadata = body.get("metadata") or {}
        self.env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "HOME": "/root", "LANG": "C.UTF-8"}
        self.env.update(body.get("env") or {})
        self.timeout = body.get("timeout")
        self.expires = None if self.timeout is None else self.created + self.timeout
        # when it really ends: the nominal TTL scaled by --ttl-scale
        self.deadline = None if self.timeout is None else \
            self.created + self.timeout * st.opts.ttl_scale
        self.start_at = self.created + st.opts.start_ms / 1000.0
        self.state, self.reason, self.message = "Pending", "SANDBOX_SCHEDULED", \
            "Sandbox is being provisioned."
        self.transition = self.created
        self.host_dir = os.path.join(st.root, self.id)
        self.workspace = os.path.join(self.host_dir, "workspace")
        self.tmp = os.path.join(self.host_dir, "tmp")
        self.roots = {WS: self.workspace, "/tmp": self.tmp}  # sandbox path -> host dir
        self.state_dir = os.path.join(self.host_dir, "execd")
        os.makedirs(self.workspace)
        os.makedirs(self.tmp)
        os.chmod(self.tmp, 0o1777)
        os.makedirs(self.state_dir)
        self.commands = {}
        self.gone = False
        # resourceLimits, as a container runtime applies them: memory as RLIMIT_AS of each
        # command's process, cpu only recorded; the runtime's pids limit as a pids cgroup
        self.limits = dict(body.get("resourceLimits") or {})
        self.mem_bytes = parse_memory(self.limits.get("memory"))
        self.cgroup = st.pids.create(self.id)
        # networkPolicy: present and not defaultAction allow -> no network at all (an
        # absent defaultAction is deny, as the egress sidecar reads it); absent -> the host's
        self.policy = body.get("networkPolicy")
        self.net_denied = isinstance(self.policy, dict) and \
            self.policy.get("defaultAction") != "allow"

    def update(self):
        """Advance the state with the clock (called under the state lock)."""
        t = now()
        if self.state == "Pending" and t >= self.start_at:
            if self.st.opts.fail_create:
                self.set_state("Failed", self.st.opts.fail_create,
                               f"Sandbox failed to start: {self.st.opts.fail_create}")
            else:
                self.set_state("Running", "SANDBOX_RUNNING", "Sandbox is running.")
        if self.deadline is not None and t >= self.deadline and not self.gone:
            self.end("ttl_expiry")

    def set_state(self, state, reason, message):
        self.state, self.reason, self.message, self.transition = state, reason, message, now()

    def end(self, reason):
        self.gone = True
        self.set_state("Terminated", reason, "Sandbox terminated.")
        for c in list(self.commands.values()):
            if c.running:
                c.killed = True
                c.signal_group(signal.SIGKILL)
        # what left its command's group (setsid, daemons) is still in the cgroup
        self.st.pids.remove(self.cgroup)
        self.cgroup = None
        shutil.rmtree(self.host_dir, ignore_errors=True)

    def enforcement(self):
        """What this fake enforces of the create body (for the create's log line)."""
        out = {"rlimit_as": self.mem_bytes, "cpu": self.limits.get("cpu"),
               "pids_max": self.st.opts.pids_limit,
               "pids": self.st.pids.kind if self.cgroup else "rlimit-nproc",
               "network": "none" if self.net_denied else "host"}
        notes = []
        if "memory" in self.limits and self.mem_bytes is None:
            notes.append(f"resourceLimits.memory {self.limits['memory']!r} is not a memory "
                         "quantity: no memory limit (the real server ignores it too)")
        if isinstance(self.policy, dict):
            rules = self.policy.get("egress") or []
            if self.net_denied:
                allow = [r.get("target") for r in rules if r.get("action") == "allow"]
                if allow:
                    notes.append("egress allow rules not honoured by the fake (no network at "
                                 "all): " + ", ".join(allow))
            else:
                deny = [r.get("target") for r in rules if r.get("action") == "deny"]
                if deny:
                    notes.append("egress deny rules not honoured by the fake (the host's "
                                 "network, open): " + ", ".join(deny))
        if notes:
            out["notes"] = notes
        return out

    def preexec(self):
        """The preexec of a command's process: join the sandbox's pids cgroup, set its
        limits; then it execs bwrap, and all that runs inside inherits both."""
        procs = os.path.join(self.cgroup, "cgroup.procs") if self.cgroup else None
        mem = self.mem_bytes
        if mem is not None and mem >= resource.RLIM_INFINITY > 0:
            mem = None
        nproc = None if procs else self.st.opts.pids_limit

        def pre():
            if procs:
                fd = os.open(procs, os.O_WRONLY)
                try:
                    os.write(fd, str(os.getpid()).encode())
                finally:
                    os.close(fd)
            if mem is not None:
                resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
            if nproc is not None:
                resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))

        return pre

    def status(self):
        return {"state": self.state, "reason": self.reason, "message": self.message,
                "lastTransitionAt": rfc3339(self.transition)}

    def to_json(self, full=True):
        out = {"id": self.id, "status": self.status(), "metadata": self.metadata,
               "entrypoint": self.entrypoint, "createdAt": rfc3339(self.created)}
        if self.expires is not None:
            out["expiresAt"] = rfc3339(self.expires)
        if full:
            out["image"] = self.image
        return out

    def bwrap_argv(self, cwd, env):
        # --unshare-all less the network, which the sandbox's networkPolicy decides
        argv = ["bwrap", "--unshare-user-try", "--unshare-ipc", "--unshare-pid", "--unshare-uts",
                "--unshare-cgroup-try"]
        if self.net_denied:
            argv.append("--unshare-net")
        argv += ["--die-with-parent", "--clearenv", "--ro-bind", "/usr", "/usr"]
        for d in ("bin", "lib", "lib32", "lib64", "sbin", "libx32"):
            p = "/" + d
            if os.path.islink(p):
                argv += ["--symlink", os.readlink(p), p]
            elif os.path.isdir(p):
                argv += ["--ro-bind", p, p]
        # /etc/alternatives (read-only symlinks into /usr): Debian's libblas.so.3 and the
        # like go through it, and numpy/pandas need them; and Debian's matplotlibrc (an
        # image with matplotlib has it); no other /etc
        argv += ["--ro-bind-try", "/etc/alternatives", "/etc/alternatives",
                 "--ro-bind-try", "/etc/matplotlibrc", "/etc/matplotlibrc"]
        argv += ["--proc", "/proc", "--dev", "/dev", "--bind", self.tmp, "/tmp", "--dir", "/root",
                 "--bind", self.workspace, WS, "--chdir", cwd, "--hostname", "sandbox"]
        for k, v in env.items():
            argv += ["--setenv", str(k), str(v)]
        return argv

    def host_path(self, path):
        """(host path, normalized sandbox path) of a sandbox path; only /workspace, /tmp and
        below exist for the files API (403 elsewhere, or through a symlink out of its root)."""
        if not isinstance(path, str) or not path:
            raise Err(400, "MISSING_QUERY", "missing query parameter 'path'")
        p = os.path.normpath(os.path.join("/", path))
        if p.startswith("//"):
            p = "/" + p.lstrip("/")
        for root, hroot in self.roots.items():
            if p == root or p.startswith(root + "/"):
                break
        else:
            raise Err(403, "PERMISSION_DENIED",
                      f"fake_opensandbox: {path} is outside {' and '.join(ROOTS)} (the files "
                      f"API is confined to the sandbox's {' and '.join(ROOTS)})")
        rel = os.path.relpath(p, root)
        host = hroot if rel == "." else os.path.join(hroot, rel)
        real = os.path.realpath(host)
        if real != hroot and not real.startswith(hroot + "/"):
            raise Err(403, "PERMISSION_DENIED",
                      f"fake_opensandbox: {path} resolves outside {root}")
        return host, p

    def cwd_exists(self, ncwd):
        """Whether a (normalized) cwd exists inside the sandbox."""
        for root, hroot in self.roots.items():
            if ncwd == root or ncwd.startswith(root + "/"):
                rel = os.path.relpath(ncwd, root)
                host = hroot if rel == "." else os.path.join(hroot, rel)
                return os.path.isdir(host)
        return os.path.isdir(ncwd) and ncwd.split("/")[1] in (
            "", "usr", "bin", "lib", "lib64", "sbin", "proc", "dev", "root")


class State:
    def __init__(self, opts):
        self.opts = opts
        self.lock = threading.RLock()
        self.sandboxes = {}
        self.root = tempfile.mkdtemp(prefix="fake-opensandbox.", dir=opts.root)
        self.pids = PidsCgroups(opts.pids_limit)
        self.log_lock = threading.Lock()

    def get(self, sid):
        with self.lock:
            s = self.sandboxes.get(sid)
            if s:
                s.update()
            if not s or s.gone:
                raise Err(404, "DOCKER::SANDBOX_NOT_FOUND", f"Sandbox {sid} not found.")
            return s

    def reaper(self):
        while True:
            time.sleep(0.1)
            with self.lock:
                for s in list(self.sandboxes.values()):
                    s.update()
                    if s.gone:
                        del self.sandboxes[s.id]

    def log(self, entry):
        if self.opts.log:
            with self.log_lock, open(self.opts.log, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------- validation

def validate_create(body):
    """As the server's pydantic model: 422 {"detail": [...]} on a bad body."""
    errs = []

    def e(loc, msg, typ, inp):
        errs.append({"type": typ, "loc": ["body"] + loc, "msg": msg, "input": inp})

    if not isinstance(body, dict):
        e([], "Input should be a valid dictionary or object to extract fields from",
          "model_attributes_type", body)
        return errs
    img, snap = body.get("image"), body.get("snapshotId")
    pool = isinstance(body.get("extensions"), dict) and "poolRef" in body["extensions"]
    if img is None and snap is None and not pool:
        e([], "Value error, exactly one of image or snapshotId must be provided", "value_error",
          body)
    if img is not None:
        if not isinstance(img, dict):
            e(["image"], "Input should be a valid dictionary or object to extract fields from",
              "model_attributes_type", img)
        elif not isinstance(img.get("uri"), str) or not img.get("uri"):
            if "uri" not in img:
                e(["image", "uri"], "Field required", "missing", img)
            else:
                e(["image", "uri"], "Input should be a valid string", "string_type", img["uri"])
        ep = body.get("entrypoint")
        if ep is None:
            e(["entrypoint"], "Field required", "missing", body)
        elif not isinstance(ep, list) or not all(isinstance(x, str) for x in ep):
            e(["entrypoint"], "Input should be a valid list", "list_type", ep)
        elif not ep:
            e(["entrypoint"], "List should have at least 1 item after validation, not 0",
              "too_short", ep)
    if snap is not None:
        e(["snapshotId"], "fake_opensandbox: snapshots are not supported", "value_error", snap)
    if "timeout" in body and body["timeout"] is not None:
        t = body["timeout"]
        if not isinstance(t, int) or isinstance(t, bool):
            e(["timeout"], "Input should be a valid integer", "int_type", t)
        elif t < 60:
            e(["timeout"], "Input should be greater than or equal to 60", "greater_than_equal", t)
    if not pool and "resourceLimits" not in body:
        e(["resourceLimits"], "Field required", "missing", body)
    for k in ("env", "metadata", "resourceLimits"):
        v = body.get(k)
        if v is not None and (not isinstance(v, dict) or
                              not all(isinstance(x, str) for x in v.values())):
            e([k], "Input should be a valid dictionary of strings", "dict_type", v)
    validate_policy(body.get("networkPolicy"), e)
    return errs


def validate_policy(pol, e):
    """NetworkPolicy as specs/sandbox-lifecycle.yml defines it: {"defaultAction": "allow" |
    "deny" (optional), "egress": [{"action": "allow" | "deny", "target": "FQDN or
    *.wildcard"}]}, no other keys (the spec's additionalProperties: false, here enforced)."""
    loc = ["networkPolicy"]
    if pol is None:
        return
    if not isinstance(pol, dict):
        e(loc, "Input should be a valid dictionary or instance of NetworkPolicy", "model_type",
          pol)
        return
    for k in pol:
        if k not in ("defaultAction", "egress"):
            e(loc + [k], "Extra inputs are not permitted", "extra_forbidden", pol[k])

    def action(where, v):
        if not isinstance(v, str):
            e(where, "Input should be a valid string", "string_type", v)
        elif v not in ("allow", "deny"):
            e(where, "Input should be 'allow' or 'deny'", "literal_error", v)

    if pol.get("defaultAction") is not None:
        action(loc + ["defaultAction"], pol["defaultAction"])
    if "egress" not in pol:
        return
    rules = pol["egress"]
    if not isinstance(rules, list):
        e(loc + ["egress"], "Input should be a valid list", "list_type", rules)
        return
    for i, r in enumerate(rules):
        where = loc + ["egress", i]
        if not isinstance(r, dict):
            e(where, "Input should be a valid dictionary or instance of NetworkRule",
              "model_type", r)
            continue
        for k in r:
            if k not in ("action", "target"):
                e(where + [k], "Extra inputs are not permitted", "extra_forbidden", r[k])
        if "action" not in r:
            e(where + ["action"], "Field required", "missing", r)
        else:
            action(where + ["action"], r["action"])
        if "target" not in r:
            e(where + ["target"], "Field required", "missing", r)
        elif not isinstance(r["target"], str):
            e(where + ["target"], "Input should be a valid string", "string_type", r["target"])
        elif not r["target"]:
            e(where + ["target"], "String should have at least 1 character", "string_too_short",
              r["target"])


# ---------------------------------------------------------------- multipart

def parse_multipart(ctype, body):
    """[(name, filename, bytes)] of a multipart/form-data body."""
    m = re.search(r'boundary="?([^";]+)"?', ctype or "")
    if not m:
        raise Err(400, "INVALID_FILE", "multipart form is empty")
    delim = b"--" + m.group(1).encode()
    parts = []
    chunks = body.split(delim)
    for chunk in chunks[1:]:
        if chunk.startswith(b"--"):
            break
        if chunk.startswith(b"\r\n"):
            chunk = chunk[2:]
        head, sep, data = chunk.partition(b"\r\n\r\n")
        if not sep:
            continue
        if data.endswith(b"\r\n"):
            data = data[:-2]
        name = filename = None
        for line in head.decode("utf-8", "replace").split("\r\n"):
            if line.lower().startswith("content-disposition:"):
                n = re.search(r'\bname="([^"]*)"', line)
                f = re.search(r'\bfilename="([^"]*)"', line)
                name = n.group(1) if n else None
                filename = f.group(1) if f else None
        parts.append((name, filename, data))
    return parts


# ---------------------------------------------------------------- HTTP

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-opensandbox/1.0"
    disable_nagle_algorithm = True
    timeout = 120

    def log_message(self, fmt, *args):
        if self.server.st.opts.verbose:
            super().log_message(fmt, *args)

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def send(self, status, body=b"", ctype="application/json", headers=()):
        if isinstance(body, (dict, list)):
            # execd is Go (encoding/json); the lifecycle server is FastAPI (compact, raw UTF-8)
            body = go_json(body).encode() if self.execd else json.dumps(
                body, ensure_ascii=False, separators=(",", ":")).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("X-Request-ID", self.rid)
        if body or status not in (204,):
            self.send_header("Content-Type", ctype)
        for k, v in headers:
            self.send_header(k, v)
        if status != 204:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and status != 204:
            self.wfile.write(body)
        self.status = status

    def err(self, e):
        self.send(e.status, e.body if e.body is not None else {"code": e.code,
                                                               "message": e.message})

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def do_PATCH(self):
        self.dispatch()

    def dispatch(self):
        st = self.server.st
        self.rid = self.headers.get("X-Request-ID") or str(uuid.uuid4())
        self.status, self.execd, self.sid = 0, False, None
        self.extra = {}
        u = urlsplit(self.path)
        self.q = parse_qs(u.query, keep_blank_values=True)
        self.qs = u.query
        t0 = now()
        try:
            self.body = self.read_body()
            m = re.match(r"^/sandboxes/([^/]+)/port/(\d+)(/.*)?$", u.path)
            h = re.match(r"^/" + HOSTNET + r"/(\d+)(/.*)?$", u.path)
            if h and st.opts.network_mode == "host":
                self.execd = True
                self.route_hostnet(int(h.group(1)), h.group(2) or "/")
            elif m and st.opts.network_mode != "host":
                self.execd = True
                self.sid = m.group(1)
                self.route_execd(m.group(1), int(m.group(2)), m.group(3) or "/")
            elif u.path == "/v1" or u.path.startswith("/v1/"):
                self.route_lifecycle(u.path[3:] or "/")
            else:
                raise Err(404, "NOT_FOUND", "Not Found")
        except Err as e:
            self.err(e)
        except (BrokenPipeError, ConnectionResetError):
            self.status = self.status or 499
        entry = {"t": round(t0, 3), "method": self.command, "path": self.path,
                 "status": self.status, "api": "execd" if self.execd else "lifecycle",
                 "ms": round((now() - t0) * 1000)}
        if self.sid:
            entry["sandbox"] = self.sid
        entry.update(self.extra)
        st.log(entry)

    def json_body(self):
        try:
            return json.loads(self.body or b"null")
        except ValueError as e:
            raise Err(422, "", "", {"detail": [{"type": "json_invalid", "loc": ["body", 0],
                                                "msg": f"JSON decode error: {e}",
                                                "input": {}}]})

    # -- lifecycle
    def route_lifecycle(self, path):
        st, opts = self.server.st, self.server.st.opts
        if opts.key is not None:
            key = self.headers.get("OPEN-SANDBOX-API-KEY")
            if not key:
                raise Err(401, "MISSING_API_KEY", "Authentication credentials are missing. "
                          "Provide API key via OPEN-SANDBOX-API-KEY header.")
            if key != opts.key:
                raise Err(401, "INVALID_API_KEY", "Authentication credentials are invalid. "
                          "Check your API key and try again.")
        meth = self.command
        if path == "/sandboxes" and meth == "POST":
            body = self.json_body()
            if isinstance(body, dict):  # what the client sent (env: its keys only)
                for k in ("resourceLimits", "networkPolicy", "metadata", "timeout",
                          "entrypoint"):
                    if k in body:
                        self.extra[k] = body[k]
                if "env" in body:
                    env = body["env"]
                    self.extra["env_keys"] = sorted(env) if isinstance(env, dict) else env
            errs = validate_create(body)
            if errs:
                raise Err(422, "", "", {"detail": errs})
            if body.get("networkPolicy") is not None and opts.no_egress:
                # the real server's Docker runtime without its egress sidecar
                # (protocols.md E.5): any policy at all, deny or allow
                raise Err(400, "SANDBOX::INVALID_PARAMETER", NO_EGRESS[opts.network_mode])
            with st.lock:
                s = Sandbox(st, body)
                st.sandboxes[s.id] = s
                self.sid = s.id
                self.extra["enforced"] = s.enforcement()
                self.send(202, s.to_json(full=False),
                          headers=[("Location", f"/v1/sandboxes/{s.id}")])
            return
        if path == "/sandboxes" and meth == "GET":
            return self.list_sandboxes()
        m = re.match(r"^/sandboxes/([^/]+)(/.*)?$", path)
        if m:
            sid, rest = m.group(1), m.group(2) or ""
            self.sid = sid
            s = st.get(sid)
            if rest == "" and meth == "GET":
                return self.send(200, s.to_json())
            if rest == "" and meth == "DELETE":
                with st.lock:
                    s.end("user_delete")
                    st.sandboxes.pop(sid, None)
                return self.send(204)
            if rest == "/renew-expiration" and meth == "POST":
                body = self.json_body()
                if not isinstance(body, dict) or "expiresAt" not in body:
                    raise Err(422, "", "", {"detail": [{"type": "missing",
                                                        "loc": ["body", "expiresAt"],
                                                        "msg": "Field required", "input": body}]})
                try:
                    t = parse_time(body["expiresAt"])
                except ValueError as e:
                    raise Err(422, "", "", {"detail": [{"type": "datetime_from_date_parsing",
                                                        "loc": ["body", "expiresAt"],
                                                        "msg": str(e), "input": body["expiresAt"]}]})
                if t <= now():
                    raise Err(400, "DOCKER::INVALID_EXPIRATION",
                              "New expiration time must be in the future.")
                with st.lock:
                    if s.expires is None:
                        raise Err(409, "DOCKER::INVALID_EXPIRATION",
                                  f"Sandbox {sid} does not have automatic expiration enabled.")
                    s.expires = t
                    s.deadline = now() + (t - now()) * opts.ttl_scale
                return self.send(200, {"expiresAt": rfc3339(t)})
            m2 = re.match(r"^/endpoints/(\d+)$", rest)
            if m2 and meth == "GET":
                port = int(m2.group(1))
                if not 1 <= port <= 65535:
                    raise Err(400, "INVALID_PORT", f"Invalid port {port}.")
                host = self.server.server_address[0]
                if opts.network_mode == "host":
                    # every sandbox shares the host's network: its execd is the
                    # host's port, the same address for all, no route header
                    return self.send(200, {
                        "endpoint": f"{host}:{self.server.server_address[1]}/{HOSTNET}/{port}"})
                return self.send(200, {
                    "endpoint": f"{host}:{self.server.server_address[1]}/sandboxes/{sid}/port/{port}",
                    "headers": {ROUTE_HEADER: s.token}})
            if rest in ("/pause", "/resume") and meth == "POST":
                raise Err(501, "NOT_SUPPORTED", "fake_opensandbox: pause/resume not supported")
        raise Err(404, "NOT_FOUND", "Not Found")

    def list_sandboxes(self):
        st = self.server.st
        states = self.q.get("state", [])
        meta = {}
        for raw in self.q.get("metadata", []):
            meta.update(dict(parse_qsl(raw, keep_blank_values=True)))
        try:
            page = int(self.q.get("page", ["1"])[0])
            size = int(self.q.get("pageSize", ["20"])[0])
            if page < 1 or size < 1:
                raise ValueError
        except ValueError:
            raise Err(422, "", "", {"detail": [{"type": "greater_than_equal",
                                                "loc": ["query", "page"],
                                                "msg": "Input should be an integer >= 1",
                                                "input": self.qs}]})
        with st.lock:
            items = []
            for s in sorted(st.sandboxes.values(), key=lambda s: s.created):
                s.update()
                if s.gone:
                    continue
                if states and s.state.lower() not in [x.lower() for x in states]:
                    continue
                if any(s.metadata.get(k) != v for k, v in meta.items()):
                    continue
                items.append(s.to_json())
        total = len(items)
        pages = (total + size - 1) // size
        self.send(200, {"items": items[(page - 1) * size:page * size],
                        "pagination": {"page": page, "pageSize": size, "totalItems": total,
                                       "totalPages": pages, "hasNextPage": page < pages}})

    # -- execd
    def route_hostnet(self, port, path):
        """network_mode host: port 44772 of the host is the execd of the oldest sandbox
        still there (a later sandbox's execd could not bind it, and its container runs
        on without one); a request for any sandbox lands in that one."""
        st = self.server.st
        with st.lock:
            live = sorted((s for s in st.sandboxes.values() if not s.gone and
                           s.state == "Running"), key=lambda s: s.created)
            if not live:
                raise Err(502, "BAD_GATEWAY", "fake_opensandbox: connection refused (no "
                          f"sandbox's execd listens on the host's port {port})")
            owner = live[0]
        self.route_execd(owner.id, port, path, routed=True)

    def route_execd(self, sid, port, path, routed=False):
        self.sid = sid
        st = self.server.st
        with st.lock:
            s = st.sandboxes.get(sid)
            if s:
                s.update()
            if not s or s.gone:
                raise Err(404, "NOT_FOUND", f"fake_opensandbox: no sandbox {sid} (gone or "
                          "never created)")
            if s.state != "Running":
                raise Err(502, "SANDBOX_NOT_READY",
                          f"fake_opensandbox: sandbox {sid} is {s.state}, its execd does not "
                          "answer")
        if not routed and self.headers.get(ROUTE_HEADER) != s.token:
            raise Err(401, "MISSING_ROUTE_HEADER",
                      f"fake_opensandbox: the endpoint's header {ROUTE_HEADER} is missing or "
                      "wrong (send every header of GET /v1/sandboxes/{id}/endpoints/{port})")
        if port != EXECD_PORT:
            raise Err(502, "BAD_GATEWAY", f"fake_opensandbox: nothing listens on port {port}")
        meth = self.command
        if path == "/ping" and meth == "GET":
            return self.send(200, b"", ctype="text/plain")
        if path == "/command" and meth == "POST":
            return self.run_command(s)
        if path == "/command" and meth == "DELETE":
            cid = (self.q.get("id") or [""])[0]
            if not cid:
                raise Err(400, "MISSING_QUERY", "missing query parameter 'id'")
            c = s.commands.get(cid)
            if not c:
                raise Err(500, "RUNTIME_ERROR",
                          "error interruptting code context. no such session")
            if not c.running:
                raise Err(500, "RUNTIME_ERROR", "error interruptting code context. command "
                          f"session {cid} is not running")
            c.interrupt()
            return self.send(200, b"", ctype="text/plain")
        m = re.match(r"^/command/status/([^/]+)$", path)
        if m and meth == "GET":
            c = s.commands.get(m.group(1))
            if not c:
                raise Err(404, "INVALID_REQUEST_BODY", f"command not found: {m.group(1)}")
            return self.send(200, c.status())
        m = re.match(r"^/command/([^/]+)/logs$", path)
        if m and meth == "GET":
            c = s.commands.get(m.group(1))
            if not c:
                raise Err(400, "INVALID_REQUEST_BODY", f"command not found: {m.group(1)}")
            if not c.background:
                raise Err(400, "INVALID_REQUEST_BODY",
                          f"command {c.id} is not running in background")
            try:
                cursor = int((self.q.get("cursor") or ["0"])[0])
            except ValueError:
                cursor = 0
            with open(c.out_path, "rb") as f:
                f.seek(max(cursor, 0))
                data = f.read()
                end = f.tell()
            return self.send(200, data, ctype="text/plain; charset=utf-8",
                             headers=[("EXECD-COMMANDS-TAIL-CURSOR", str(end))])
        if path == "/files/upload" and meth == "POST":
            return self.upload(s)
        if path == "/files/download" and meth == "GET":
            return self.download(s)
        if path == "/files/info" and meth == "GET":
            out = {}
            for p in self.q.get("path", []):
                host, sp = s.host_path(p)
                try:
                    out[p] = file_info(host, sp)
                except FileNotFoundError as e:
                    raise Err(404, "FILE_NOT_FOUND", f"file not found. file not found: {p}: {e}")
            return self.send(200, out)
        if path == "/files" and meth == "DELETE":
            for p in self.q.get("path", []):
                host, sp = s.host_path(p)
                if sp in s.roots:
                    raise Err(500, "RUNTIME_ERROR", f"error removing file {p}. refusing {sp}")
                try:
                    if os.path.isdir(host) and not os.path.islink(host):
                        shutil.rmtree(host)
                    else:
                        os.remove(host)
                except FileNotFoundError:
                    pass
            return self.send(200, b"", ctype="text/plain")
        if path == "/directories/list" and meth == "GET":
            return self.list_dir(s)
        if path == "/directories" and meth == "POST":
            body = self.json_body()
            if not isinstance(body, dict):
                raise Err(400, "INVALID_REQUEST_BODY", "error parsing request")
            for p, perm in body.items():
                host, sp = s.host_path(p)
                os.makedirs(host, exist_ok=True)
                mode = (perm or {}).get("mode") if isinstance(perm, dict) else None
                if mode:
                    os.chmod(host, int(str(mode), 8))
            return self.send(200, b"", ctype="text/plain")
        if path == "/directories" and meth == "DELETE":
            for p in self.q.get("path", []):
                host, sp = s.host_path(p)
                if sp not in s.roots:
                    shutil.rmtree(host, ignore_errors=True)
            return self.send(200, b"", ctype="text/plain")
        raise Err(404, "NOT_FOUND", "404 page not found")

    def run_command(self, s):
        req = self.json_body()
        if not isinstance(req, dict) or not isinstance(req.get("command"), str) \
                or not req["command"]:
            raise Err(400, "INVALID_REQUEST_BODY", "invalid request, validation error Key: "
                      "'RunCommandRequest.Command' Error:Field validation for 'Command' failed "
                      "on the 'required' tag")
        t = req.get("timeout")
        if t is not None and (not isinstance(t, int) or isinstance(t, bool) or t < 0):
            raise Err(400, "INVALID_REQUEST_BODY", "error parsing request, MAYBE invalid body "
                      "format. json: cannot unmarshal timeout")
        cwd = req.get("cwd") or "/"
        if not cwd.startswith("/"):
            raise Err(400, "INVALID_REQUEST_BODY", f"invalid request, validation error "
                      f"working directory must be absolute: {cwd}")
        if not s.cwd_exists(os.path.normpath(cwd)):
            raise Err(400, "INVALID_REQUEST_BODY", "invalid request, validation error "
                      f"working directory does not exist: {cwd}")
        background = bool(req.get("background"))
        self.extra = {"command": req["command"][:200], "background": background}
        c = Command(s, req, background)
        s.commands[c.id] = c
        self.extra["command_id"] = c.id
        self.send_response(200)
        self.send_header("X-Request-ID", self.rid)
        for k, v in (("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
                     ("Connection", "keep-alive"), ("X-Accel-Buffering", "no"),
                     ("Transfer-Encoding", "chunked")):
            self.send_header(k, v)
        self.end_headers()
        self.status = 200
        lock = threading.Lock()
        alive = [True]

        def write(ev):
            data = (go_json(ev) + "\n\n").encode()
            with lock:
                if not alive[0]:
                    return
                try:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
                except OSError:
                    alive[0] = False  # the client left; the command goes on

        def ev(typ, **kw):
            e = {"type": typ}
            if kw.get("text"):
                e["text"] = kw["text"]
            if kw.get("execution_time"):
                e["execution_time"] = kw["execution_time"]
            e["timestamp"] = int(now() * 1000)
            if kw.get("error"):
                e["error"] = kw["error"]
            return e

        write(ev("init", text=c.id))
        stop_ping = threading.Event()

        def pinger():
            while True:
                write(ev("ping", text="pong"))
                if stop_ping.wait(3.0):
                    return

        threading.Thread(target=pinger, daemon=True).start()
        if background:
            write(ev("execution_complete", execution_time=int((now() - c.started) * 1000)))
        else:
            tails = [threading.Thread(target=tail, args=(c.out_path, lambda x: write(
                ev("stdout", text=x)), c.done), daemon=True),
                threading.Thread(target=tail, args=(c.err_path, lambda x: write(
                    ev("stderr", text=x)), c.done), daemon=True)]
            for th in tails:
                th.start()
            c.done.wait()
            for th in tails:
                th.join()
            if c.exit_code == 0:
                write(ev("execution_complete", execution_time=int((now() - c.started) * 1000)))
            else:
                write(ev("error", error={"ename": "CommandExecError", "evalue": str(c.exit_code),
                                         "traceback": [c.error]}))
            self.extra["exit_code"] = c.exit_code
        time.sleep(self.server.st.opts.grace_ms / 1000.0)  # execd's graceful shutdown wait
        stop_ping.set()
        with lock:
            if alive[0]:
                try:
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except OSError:
                    pass
            alive[0] = False

    def upload(self, s):
        parts = parse_multipart(self.headers.get("Content-Type"), self.body)
        metas = [p for p in parts if p[0] == "metadata" and p[1] is not None]
        files = [p for p in parts if p[0] == "file" and p[1] is not None]
        if not metas:
            raise Err(400, "INVALID_FILE_METADATA", "metadata file is missing")
        if not files:
            raise Err(400, "INVALID_FILE_CONTENT", "file is missing")
        if len(metas) != len(files):
            raise Err(400, "INVALID_FILE", f"metadata and file count mismatch: {len(metas)} "
                      f"vs {len(files)}")
        done = []
        for (_, _, mb), (_, _, data) in zip(metas, files):
            try:
                meta = json.loads(mb)
                if not isinstance(meta, dict):
                    raise ValueError("not an object")
            except ValueError as e:
                raise Err(400, "INVALID_FILE_METADATA", f"invalid metadata format. {e}")
            if not meta.get("path"):
                raise Err(400, "INVALID_FILE_METADATA", "metadata path is empty")
            host, sp = s.host_path(meta["path"])
            os.makedirs(os.path.dirname(host), exist_ok=True)
            with open(host, "wb") as f:
                f.write(data)
            mode = meta.get("mode") or 0
            if mode:
                try:
                    os.chmod(host, int(str(mode), 8))
                except (ValueError, OSError) as e:  # OSError: removed under it
                    raise Err(500, "RUNTIME_ERROR", f"error chmoding file {sp}. {e}")
            done.append({"path": sp, "size": len(data)})
        self.extra["uploaded"] = done
        self.send(200, b"", ctype="text/plain")

    def download(self, s):
        p = (self.q.get("path") or [""])[0]
        if not p:
            raise Err(400, "MISSING_QUERY", "missing query parameter 'path'")
        host, sp = s.host_path(p)
        try:
            with open(host, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise Err(404, "FILE_NOT_FOUND",
                      f"file not found. open {sp}: no such file or directory")
        except IsADirectoryError:
            raise Err(500, "RUNTIME_ERROR", f"error reading file {sp}: is a directory")
        size = len(data)
        hdrs = [("Content-Disposition", f'attachment; filename="{os.path.basename(sp)}"'),
                ("Accept-Ranges", "bytes")]
        rng = self.headers.get("Range")
        if rng:
            m = re.match(r"^bytes=(\d*)-(\d*)$", rng.strip())
            start = end = None
            if m and (m.group(1) or m.group(2)):
                if m.group(1):
                    start = int(m.group(1))
                    end = int(m.group(2)) if m.group(2) else size - 1
                else:
                    start, end = max(size - int(m.group(2)), 0), size - 1
                end = min(end, size - 1)
            if start is None or start >= size or start > end:
                raise Err(416, "INVALID_REQUEST_BODY", f"invalid range {rng}",
                          {"code": "INVALID_REQUEST_BODY", "message": f"invalid range {rng}"})
            hdrs.append(("Content-Range", f"bytes {start}-{end}/{size}"))
            return self.send(206, data[start:end + 1], ctype="application/octet-stream",
                             headers=hdrs)
        self.send(200, data, ctype="application/octet-stream", headers=hdrs)

    def list_dir(self, s):
        p = (self.q.get("path") or [""])[0]
        if not p:
            raise Err(400, "MISSING_QUERY", "missing query parameter 'path'")
        try:
            depth = int((self.q.get("depth") or ["1"])[0])
            if depth < 0:
                raise ValueError
        except ValueError:
            raise Err(400, "INVALID_REQUEST_BODY",
                      f"invalid query parameter 'depth': {self.q['depth'][0]}")
        host, sp = s.host_path(p)
        if not os.path.lexists(host):
            raise Err(404, "FILE_NOT_FOUND", f"file not found. lstat {sp}: no such file or "
                      "directory")
        if os.path.islink(host):
            raise Err(400, "INVALID_REQUEST_BODY",
                      f"path is a symbolic link, refusing to traverse: {sp}")
        if not os.path.isdir(host):
            raise Err(400, "INVALID_REQUEST_BODY", f"path is not a directory: {sp}")
        out = []

        def walk(h, spath, level):
            for name in sorted(os.listdir(h)):
                hh, ss = os.path.join(h, name), spath.rstrip("/") + "/" + name
                out.append(file_info(hh, ss))
                if os.path.isdir(hh) and not os.path.islink(hh) and level + 1 < depth:
                    walk(hh, ss, level + 1)

        if depth > 0:
            walk(host, sp, 0)
        self.send(200, out)


def file_info(host, spath):
    import grp
    import pwd
    import stat as st
    info = os.lstat(host)
    if st.S_ISLNK(info.st_mode):
        typ = "symlink"
    elif st.S_ISDIR(info.st_mode):
        typ = "directory"
    elif st.S_ISREG(info.st_mode):
        typ = "file"
    else:
        typ = "other"
    try:
        owner = pwd.getpwuid(info.st_uid).pw_name
    except KeyError:
        owner = str(info.st_uid)
    try:
        group = grp.getgrgid(info.st_gid).gr_name
    except KeyError:
        group = str(info.st_gid)
    return {"path": spath, "type": typ, "size": info.st_size,
            "modified_at": rfc3339(info.st_mtime), "created_at": rfc3339(info.st_ctime),
            "owner": owner, "group": group, "mode": int(oct(info.st_mode & 0o7777)[2:])}


def on_sigterm(signum, frame):
    # ignored from here on: a second SIGTERM between serve_forever's end
    # and main's own SIG_IGN raised there, past the except
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fake OpenSandbox server (lifecycle + execd) for "
                                 "assay tests.")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--port-file", help="write the chosen port here once listening")
    ap.add_argument("--log", help="append one JSON line per request")
    ap.add_argument("--key", help="require header OPEN-SANDBOX-API-KEY: KEY on /v1 (default: "
                    "no auth, as a server without server.api_key)")
    ap.add_argument("--start-ms", type=float, default=300,
                    help="a new sandbox is Pending this long, then Running (default 300)")
    ap.add_argument("--fail-create", metavar="REASON",
                    help="sandboxes go Pending -> Failed with status.reason REASON")
    ap.add_argument("--ttl-scale", type=float, default=1.0,
                    help="a sandbox really expires after timeout*SCALE seconds (expiresAt shows "
                    "the nominal time; e.g. 0.05 ends a timeout=60 sandbox after 3 s)")
    ap.add_argument("--grace-ms", type=float, default=1000,
                    help="the command stream stays open this long after its final event "
                    "(execd's graceful shutdown; default 1000)")
    ap.add_argument("--pids-limit", type=int, default=512, metavar="N",
                    help="at most N processes (tasks) per sandbox, as a runtime's pids limit: "
                    "a pids cgroup per sandbox (default 512)")
    ap.add_argument("--network-mode", choices=("bridge", "host"), default="bridge",
                    help="the Docker runtime's network_mode: host refuses any networkPolicy "
                    "(400 SANDBOX::INVALID_PARAMETER, as the real one) and gives every "
                    "sandbox the same execd endpoint, which reaches the oldest live sandbox "
                    "(default bridge: a route per sandbox)")
    ap.add_argument("--no-egress", action="store_true",
                    help="no egress sidecar configured: refuse any networkPolicy (400 "
                    "SANDBOX::INVALID_PARAMETER); implied by --network-mode host")
    ap.add_argument("--root", help="directory for the sandboxes' host dirs (default $TMPDIR)")
    ap.add_argument("--verbose", action="store_true", help="log HTTP requests on stderr")
    opts = ap.parse_args(argv)
    if opts.ttl_scale <= 0:
        print("fake_opensandbox: --ttl-scale must be > 0", file=sys.stderr)
        return 2
    if opts.network_mode == "host":
        opts.no_egress = True
    if opts.pids_limit < 1:
        print("fake_opensandbox: --pids-limit must be >= 1", file=sys.stderr)
        return 2
    if not shutil.which("bwrap"):
        print("fake_opensandbox: bwrap (bubblewrap) is not installed", file=sys.stderr)
        return 2
    ThreadingHTTPServer.block_on_close = False
    ThreadingHTTPServer.request_queue_size = 64
    srv = ThreadingHTTPServer((opts.host, opts.port), Handler)
    srv.daemon_threads = True
    srv.st = State(opts)
    threading.Thread(target=srv.st.reaper, daemon=True).start()
    port = srv.server_address[1]
    signal.signal(signal.SIGTERM, on_sigterm)
    if opts.port_file:
        tmp = f"{opts.port_file}.tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, opts.port_file)
    print(f"fake_opensandbox: listening on {opts.host}:{port} (sandboxes in {srv.st.root}; "
          f"pids limit {opts.pids_limit} by {srv.st.pids.kind})", file=sys.stderr, flush=True)
    try:
        srv.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not stop the cleanup
    with srv.st.lock:
        for s in list(srv.st.sandboxes.values()):
            s.end("server_shutdown")
    srv.st.pids.close()
    shutil.rmtree(srv.st.root, ignore_errors=True)
    srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
