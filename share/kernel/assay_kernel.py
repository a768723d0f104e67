# assay_kernel.py: the python tool's kernel. It runs inside the sandbox
# with the sandbox's own python3 (standard library only) for the whole
# run, so variables, imports and loaded data survive between cells.
#
# Protocol (both directions): frames of one type byte, a 4-byte
# big-endian payload length, then the payload.
#   assay -> kernel (stdin):   'x' {"id", "code"}  run a cell
#                              'i' {"id"}          interrupt that cell
#   kernel -> assay (stdout):  'h' {hello: python, packages, ...}
#                              'o' / 'e' raw bytes of the cell's stdout
#                                        and stderr, as they come
#                              'r' {"id", "status", "value", ...}
# The kernel keeps private copies of the pipes it was given and points
# fd 0 at /dev/null and fds 1 and 2 at fresh pipes that it relays in
# 'o'/'e' frames: whatever a cell prints, closes or redirects (even a
# subprocess writing to fd 1) cannot forge or corrupt a frame. Code that
# goes looking for the kernel's private fds can write to them, as it
# could do anything this process does; assay checks every frame, so the
# most it gets is a fake result for its own cell or a killed kernel.
# Interrupts come as frames; a reader thread turns them into SIGINT for
# the main thread (KeyboardInterrupt). Anything else (a cell that
# ignores it, a crash) is assay's to handle by killing and restarting.
import os
import sys

# Read the system's compiled modules but write none: a cache prefix
# (which some sandboxes set to keep /workspace clean) would make every
# import compile from source, 2-3 times slower for pandas. assay starts
# the kernel with -S so that site, too, is imported after this.
sys.pycache_prefix = None
sys.dont_write_bytecode = True
if sys.flags.no_site:
    import site
    site.main()

PROTOCOL = 1
CHUNK = 65536
VALUE_MAX = 32768  # characters of a value's repr sent back
TB_MAX = 32768     # characters of a traceback sent back
PACKAGES = (
    # (distribution, import name) of the libraries worth telling about
    ("numpy", "numpy"), ("pandas", "pandas"), ("scipy", "scipy"),
    ("matplotlib", "matplotlib"), ("scikit-learn", "sklearn"),
    ("statsmodels", "statsmodels"), ("seaborn", "seaborn"),
    ("pyarrow", "pyarrow"), ("polars", "polars"), ("sympy", "sympy"),
    ("networkx", "networkx"), ("openpyxl", "openpyxl"), ("xlrd", "xlrd"),
    ("odfpy", "odf"), ("tables", "tables"), ("h5py", "h5py"),
    ("pillow", "PIL"), ("beautifulsoup4", "bs4"), ("lxml", "lxml"),
    ("tabulate", "tabulate"), ("plotly", "plotly"), ("numba", "numba"),
    ("numexpr", "numexpr"), ("bottleneck", "bottleneck"),
    ("xarray", "xarray"), ("duckdb", "duckdb"), ("shapely", "shapely"),
    ("geopandas", "geopandas"), ("joblib", "joblib"), ("patsy", "patsy"),
    ("python-dateutil", "dateutil"), ("pytz", "pytz"), ("pyyaml", "yaml"),
    ("requests", "requests"),
)


def write_all(fd, data):
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except InterruptedError:
            continue
        view = view[n:]


def frame(kind, payload):
    return kind + len(payload).to_bytes(4, "big") + payload


def text_json(obj):
    import json
    return json.dumps(obj, ensure_ascii=False).encode("utf-8")


def clean(s):
    """A str that encodes as UTF-8 (lone surrogates escaped)."""
    return s.encode("utf-8", "backslashreplace").decode("utf-8")


def bounded(s, limit):
    if len(s) <= limit:
        return s
    half = limit // 2
    return (s[:half] + "\n... [%d characters omitted] ...\n" %
            (len(s) - 2 * half) + s[-half:])


def packages():
    """Versions of the interesting libraries from the names of their
    dist-info/egg-info directories: no import, no file read."""
    import re
    want = {re.sub(r"[-_.]+", "_", d).lower(): (d, m) for d, m in PACKAGES}
    pat = re.compile(r"^([A-Za-z0-9_.+-]+?)-(\d[^-]*?)(?:-py\d[.\d]*)?"
                     r"\.(?:dist|egg)-info$")
    found = {}
    for p in sys.path:
        if not p or not os.path.isabs(p) or p.startswith("/workspace"):
            continue
        try:
            entries = os.scandir(p)
        except OSError:
            continue
        with entries:
            for e in entries:
                m = pat.match(e.name)
                if not m:
                    continue
                key = re.sub(r"[-_.]+", "_", m.group(1)).lower()
                if key in want and want[key][0] not in found:
                    found[want[key][0]] = {"version": m.group(2),
                                           "import": want[key][1]}
    return [dict(name=d, **found[d]) for d, _ in PACKAGES if d in found]


class Kernel:
    def __init__(self):
        import threading
        # private protocol fds (os.dup: not inherited by subprocesses)
        self.pin = os.dup(0)
        self.pout = os.dup(1)
        self.diag = os.dup(2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        self.out_r, out_w = os.pipe()
        self.err_r, err_w = os.pipe()
        self.keep = (os.dup(out_w), os.dup(err_w))
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.close(out_w)
        os.close(err_w)
        os.set_blocking(self.out_r, False)
        os.set_blocking(self.err_r, False)
        self.wake_r, self.wake_w = os.pipe()
        self.send_lock = threading.Lock()
        self.state_lock = threading.Lock()
        self.running = None  # id of the cell being run
        self.results = []    # result frames for the relay to send
        self.requests = []
        self.have_request = threading.Condition()
        self.main_ident = threading.get_ident()
        self.stdout = sys.stdout
        self.stderr = sys.stderr
        self.count = 0
        import faulthandler
        self.diag_file = os.fdopen(self.diag, "w")
        faulthandler.enable(file=self.diag_file, all_threads=False)
        self.ns = self.namespace()
        threading.Thread(target=self.reader, daemon=True).start()
        threading.Thread(target=self.relay, daemon=True).start()

    def namespace(self):
        import builtins
        import types
        mod = types.ModuleType("__main__")
        mod.__dict__["__builtins__"] = builtins
        sys.modules["__main__"] = mod
        return mod.__dict__

    def send(self, kind, payload):
        with self.send_lock:
            write_all(self.pout, frame(kind, payload))

    # ---- stdin: requests and interrupts ----
    def read_exact(self, n):
        out = b""
        while len(out) < n:
            try:
                chunk = os.read(self.pin, n - len(out))
            except InterruptedError:
                continue
            if not chunk:
                os._exit(0)  # assay is gone
            out += chunk
        return out

    def reader(self):
        import json
        import signal
        while True:
            head = self.read_exact(5)
            body = self.read_exact(int.from_bytes(head[1:], "big"))
            try:
                msg = json.loads(body.decode("utf-8"))
            except ValueError:
                continue  # not from assay; nothing to answer
            if head[:1] == b"x":
                with self.have_request:
                    self.requests.append(msg)
                    self.have_request.notify()
            elif head[:1] == b"i":
                with self.state_lock:
                    if self.running is not None and \
                            self.running == msg.get("id"):
                        signal.pthread_kill(self.main_ident,
                                            signal.SIGINT)

    # ---- the cell's stdout/stderr, relayed in frames ----
    def drain(self, fd, kind, limit):
        sent = 0
        while sent < limit:
            try:
                data = os.read(fd, CHUNK)
            except BlockingIOError:
                return
            except InterruptedError:
                continue
            if not data:
                return
            self.send(kind, data)
            sent += len(data)

    def relay(self):
        import select
        fds = [self.out_r, self.err_r, self.wake_r]
        while True:
            try:
                ready, _, _ = select.select(fds, [], [])
            except InterruptedError:
                continue
            if self.out_r in ready:
                self.drain(self.out_r, b"o", CHUNK)
            if self.err_r in ready:
                self.drain(self.err_r, b"e", CHUNK)
            if self.wake_r in ready:
                os.read(self.wake_r, 512)
                with self.state_lock:
                    results, self.results = self.results, []
                for r in results:
                    # what the cell wrote before it ended goes first
                    self.drain(self.out_r, b"o", 1 << 20)
                    self.drain(self.err_r, b"e", 1 << 20)
                    self.send(b"r", r)

    def post_result(self, result):
        with self.state_lock:
            self.results.append(text_json(result))
        write_all(self.wake_w, b".")

    # ---- running cells ----
    def restore_streams(self):
        """Undo what the last cell did to the standard streams."""
        import signal
        os.dup2(self.keep[0], 1)
        os.dup2(self.keep[1], 2)
        for name, orig, fd in (("stdout", self.stdout, 1),
                               ("stderr", self.stderr, 2)):
            if orig.closed:
                orig = open(fd, "w", encoding="utf-8",
                            errors="backslashreplace", buffering=1,
                            closefd=False)
                if name == "stdout":
                    self.stdout = orig
                else:
                    self.stderr = orig
            setattr(sys, name, orig)
            setattr(sys, "__%s__" % name, orig)
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def compile_cell(self, code, name):
        import ast
        flags = getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
        tree = ast.parse(code, name, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        body = compile(tree, name, "exec", flags=flags)
        expr = compile(last, name, "eval", flags=flags) if last else None
        return body, expr

    def evaluate(self, co):
        import inspect
        value = eval(co, self.ns)
        if co.co_flags & inspect.CO_COROUTINE:
            import asyncio
            value = asyncio.new_event_loop().run_until_complete(value)
        return value

    def run(self, msg):
        import linecache
        import time
        self.count += 1
        cid = msg.get("id")
        code = msg.get("code", "")
        name = "<cell %d>" % self.count
        linecache.cache[name] = (len(code), None,
                                 code.splitlines(True), name)
        result = {"id": cid, "status": "ok", "value": None}
        t0 = time.monotonic()
        self.restore_streams()
        with self.state_lock:
            self.running = cid
        try:
            try:
                body, expr = self.compile_cell(code, name)
                self.evaluate(body)
                if expr is not None:
                    value = self.evaluate(expr)
                    if value is not None:
                        import builtins
                        builtins._ = value
                        result["value"] = clean(bounded(repr(value),
                                                        VALUE_MAX))
            except BaseException as exc:  # noqa: the cell's own errors
                self.describe(exc, result)
            finally:
                with self.state_lock:
                    self.running = None
        except KeyboardInterrupt:  # an interrupt that came too late
            pass
        result["duration_ms"] = int((time.monotonic() - t0) * 1000)
        try:
            for s in (sys.stdout, sys.stderr):
                if s is not None and not s.closed:
                    s.flush()
        except Exception:
            pass
        self.figures(result)
        self.post_result(result)

    def describe(self, exc, result):
        import traceback
        tb = exc.__traceback__
        # drop the kernel's own frames: the cell's start at "<cell"
        while tb is not None and \
                not tb.tb_frame.f_code.co_filename.startswith("<cell"):
            tb = tb.tb_next
        if isinstance(exc, SyntaxError):
            tb = None
        text = "".join(traceback.format_exception(type(exc), exc, tb))
        result["status"] = ("interrupted"
                            if isinstance(exc, KeyboardInterrupt)
                            else "error")
        result["error"] = {"type": type(exc).__name__,
                           "message": clean(bounded(str(exc), 2000))}
        result["traceback"] = clean(bounded(text, TB_MAX))

    def figures(self, result):
        """Open matplotlib figures that nobody saved: mention each once."""
        helpers = sys.modules.get("matplotlib._pylab_helpers")
        if helpers is None:
            return
        try:
            self.watch_savefig()
            unsaved = []
            for m in helpers.Gcf.get_all_fig_managers():
                fig = m.canvas.figure
                if getattr(fig, "_assay_saved", False) or \
                        getattr(fig, "_assay_told", False):
                    continue
                fig._assay_told = True
                label = fig.get_label() or ""
                unsaved.append("Figure %d%s" % (
                    m.num, " (%s)" % label if label else ""))
            if unsaved:
                result["open_figures"] = unsaved
        except Exception:
            pass

    def watch_savefig(self):
        fig_mod = sys.modules.get("matplotlib.figure")
        if fig_mod is None or getattr(fig_mod.Figure, "_assay_watch",
                                      False):
            return
        orig = fig_mod.Figure.savefig

        def savefig(fig, *args, **kwargs):
            fig._assay_saved = True
            return orig(fig, *args, **kwargs)
        savefig.__doc__ = orig.__doc__
        savefig.__wrapped__ = orig
        fig_mod.Figure.savefig = savefig
        fig_mod.Figure._assay_watch = True

    def hello(self, t0):
        import time
        info = {"protocol": PROTOCOL,
                "python": sys.version.split()[0],
                "executable": sys.executable,
                "pid": os.getpid(),
                "packages": packages()}
        info["startup_ms"] = int((time.monotonic() - t0) * 1000)
        self.send(b"h", text_json(info))

    def serve(self):
        while True:
            try:
                with self.have_request:
                    while not self.requests:
                        self.have_request.wait()
                    msg = self.requests.pop(0)
            except KeyboardInterrupt:
                continue
            try:
                self.run(msg)
            except KeyboardInterrupt:
                self.post_result({"id": msg.get("id"),
                                  "status": "interrupted", "value": None})


def main():
    import time
    t0 = time.monotonic()
    os.environ.setdefault("MPLBACKEND", "Agg")
    k = Kernel()
    k.hello(t0)
    k.serve()


main()
