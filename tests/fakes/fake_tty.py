#!/usr/bin/env python3
"""fake_tty.py: a terminal for the end-to-end tests, on a real pty.

Runs CMD on a pty (its controlling terminal) and plays the terminal on
the master side: waits for assay's terminal queries (they end with DA1,
ESC [ c), then writes what the test asks for, when it asks:

  --after-query BYTES  right after the queries (e.g. a Ctrl-C: \\x03)
  --reply BYTES        the terminal's answer, --reply-ms after the queries
                       (400 plays a slow ssh link: later than assay waits)
  --key-out TEXT:BYTES typed once CMD has written TEXT to the terminal
                       since the key before (or the reply)
  --key-file PATH:N:TEXT:BYTES
                       typed once N lines of the file PATH hold TEXT
                       (a transcript's events, say)
  --out FILE           everything CMD wrote to the terminal
  --timeout S          CMD is killed (SIGKILL) after S seconds

The keys are typed one after the other, in the order given, after the
reply: each waits for what it names, never for a time. BYTES (after
the last colon: a colon in them is \\x3a) use Python escapes
(\\x1b[?62;4;22c). Prints one JSON line: the exit code or
the signal CMD ended by, whether the queries came, the keys never
typed (what they waited for did not come), and the terminal's modes as
CMD left them (echo, icanon, isig).
"""
import argparse
import codecs
import json
import os
import pty
import select
import signal
import struct
import sys
import termios
import time
import fcntl


def unescape(s):
    return codecs.escape_decode(s.encode())[0]


def file_count(path, text):
    """How many lines of the file at path hold text (0 if it is not there)."""
    try:
        with open(path, "rb") as f:
            return sum(1 for line in f if text in line)
    except OSError:
        return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--after-query", default="")
    ap.add_argument("--reply", default="")
    ap.add_argument("--reply-ms", type=int, default=0)
    ap.add_argument("--key-out", action="append", default=[], dest="keys",
                    type=lambda v: ("out", v))
    ap.add_argument("--key-file", action="append", default=[], dest="keys",
                    type=lambda v: ("file", v))
    ap.add_argument("--out")
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--cols", type=int, default=120)
    ap.add_argument("--rows", type=int, default=40)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ,
                struct.pack("HHHH", a.rows, a.cols, 0, 0))
    # (when, bytes), relative to the queries
    plan = []
    if a.after_query:
        plan.append((0, unescape(a.after_query)))
    if a.reply:
        plan.append((a.reply_ms / 1000, unescape(a.reply)))
    plan.sort(key=lambda p: p[0])
    # the keys: (ready(out since the key before) -> bool, bytes), in order
    keys = []
    for kind, v in a.keys:
        if kind == "out":
            text, _, b = v.rpartition(":")
            want = unescape(text)
            keys.append((lambda o, want=want: want in o, unescape(b), v))
        else:
            path, n, rest = v.split(":", 2)
            text, _, b = rest.rpartition(":")
            want, n = unescape(text), int(n)
            keys.append((lambda o, path=path, want=want, n=n:
                         file_count(path, want) >= n, unescape(b), v))
    key_from = 0  # where the output since the last key starts
    out = bytearray()
    start = time.monotonic()
    queried = None
    status = None
    while status is None:
        now = time.monotonic()
        if queried is None and b"\x1b[c" in out:
            queried = now
        while plan and queried is not None and now >= queried + plan[0][0]:
            os.write(fd, plan.pop(0)[1])
            key_from = len(out)
        if queried is not None and not plan and keys and keys[0][0](bytes(out[key_from:])):
            os.write(fd, keys.pop(0)[1])
            key_from = len(out)
        if now - start > a.timeout:
            os.kill(pid, signal.SIGKILL)
        r, _, _ = select.select([fd], [], [], 0.01)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            out += data
        w, st = os.waitpid(pid, os.WNOHANG)
        if w == pid:
            status = st
    # what is left to read, then the modes the pty was left in
    try:
        while select.select([fd], [], [], 0.05)[0]:
            data = os.read(fd, 65536)
            if not data:
                break
            out += data
    except OSError:
        pass
    lflag = termios.tcgetattr(fd)[3]
    if a.out:
        with open(a.out, "wb") as f:
            f.write(out)
    print(json.dumps({
        "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "queried": queried is not None,
        "keys_left": [k[2] for k in keys],
        "echo": bool(lflag & termios.ECHO),
        "icanon": bool(lflag & termios.ICANON),
        "isig": bool(lflag & termios.ISIG),
    }))


if __name__ == "__main__":
    sys.exit(main())
