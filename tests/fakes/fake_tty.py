#!/usr/bin/env python3
"""fake_tty.py: a terminal for the end-to-end tests, on a real pty.

Runs CMD on a pty (its controlling terminal) and plays the terminal on
the master side: waits for assay's terminal queries (they end with DA1,
ESC [ c), then writes what the test asks for, when it asks:

  --after-query BYTES  right after the queries (e.g. a Ctrl-C: \\x03)
  --reply BYTES        the terminal's answer, --reply-ms after the queries
                       (400 plays a slow ssh link: later than assay waits)
  --key MS:BYTES       typed MS after the queries (repeatable)
  --out FILE           everything CMD wrote to the terminal
  --timeout S          CMD is killed (SIGKILL) after S seconds

BYTES use Python escapes (\\x1b[?62;4;22c). Prints one JSON line: the
exit code or the signal CMD ended by, whether the queries came, and the
terminal's modes as CMD left them (echo, icanon, isig).
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--after-query", default="")
    ap.add_argument("--reply", default="")
    ap.add_argument("--reply-ms", type=int, default=0)
    ap.add_argument("--key", action="append", default=[])
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
    for k in a.key:
        ms, _, text = k.partition(":")
        plan.append((int(ms) / 1000, unescape(text)))
    plan.sort(key=lambda p: p[0])
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
        "echo": bool(lflag & termios.ECHO),
        "icanon": bool(lflag & termios.ICANON),
        "isig": bool(lflag & termios.ISIG),
    }))


if __name__ == "__main__":
    sys.exit(main())
