"""xterm_relay.py FIFO EXIT_FILE PROGRAM [ARG]...: the pty relay of the
xterm tests (tui_images_xterm.sh, tui_light_xterm.sh). PROGRAM runs on a
pty of its own inside the xterm; bytes pass both ways unchanged, the
bytes written to FIFO are typed, and PROGRAM's exit code goes to
EXIT_FILE."""
import errno, fcntl, os, select, signal, sys, termios, tty
fifo, exit_file, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
def winsize(fd):
    return fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8)
master, slave = os.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, winsize(0))
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(slave, fd)
    os.close(master)
    os.close(slave)
    os.execvp(argv[0], argv)
os.close(slave)
tty.setraw(0)
signal.signal(signal.SIGWINCH,
              lambda *_: fcntl.ioctl(master, termios.TIOCSWINSZ, winsize(0)))
keys = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
def write_all(fd, data):
    while data:
        try:
            data = data[os.write(fd, data):]
        except (InterruptedError, BlockingIOError):
            select.select([], [fd], [], 0.1)
while True:
    try:
        ready = select.select([0, master, keys], [], [])[0]
        if master in ready:
            data = os.read(master, 65536)
            if not data:
                break
            write_all(1, data)
        for fd in (0, keys):
            if fd in ready:
                write_all(master, os.read(fd, 4096))
    except InterruptedError:
        continue
    except OSError as e:
        if e.errno == errno.EIO:  # the program has gone
            break
        raise
status = os.waitpid(pid, 0)[1]
with open(exit_file, "w") as f:
    f.write("%d\n" % os.waitstatus_to_exitcode(status))
