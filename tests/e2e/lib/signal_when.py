#!/usr/bin/env python3
"""Sends a signal to a process the moment a sign appears in a directory (for the e2e tests).

  signal_when.py --pid PID --signal STOP --timeout SECONDS --dir DIR
                 (--file-suffix SUFFIX | --new-line FILE REGEX)

--file-suffix: a file in DIR whose name ends with SUFFIX exists (a checkpoint's temporary file:
               its write is under way).
--new-line:    DIR/FILE gets a line matching REGEX that was not there when this started (a new
               epoch-end row of metrics.csv: an evaluation begins). Counting from the start makes
               the sign a future event, so a fast run cannot have passed it before we watch.

Some tests must stop a rank inside a phase that lasts a fraction of a second (a checkpoint
write, an evaluation). Polling with sleeps, or a busy loop that a loaded machine deschedules,
reacts late; this blocks in inotify and, where allowed, runs at real-time priority, so the signal
follows the sign within about a millisecond however busy the machine is. Exits 0 once signalled;
1 with a message if the process ended or the timeout (a bound against a hang) passed first.
"""
import argparse
import ctypes
import os
import re
import select
import signal
import sys
import time

IN_MODIFY, IN_CLOSE_WRITE, IN_MOVED_TO, IN_CREATE = 0x2, 0x8, 0x80, 0x100


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--signal", required=True, help="a name without SIG: STOP, USR1, KILL")
    p.add_argument("--timeout", type=float, required=True)
    p.add_argument("--dir", required=True)
    sign = p.add_mutually_exclusive_group(required=True)
    sign.add_argument("--file-suffix")
    sign.add_argument("--new-line", nargs=2, metavar=("FILE", "REGEX"))
    a = p.parse_args()
    sig = getattr(signal, "SIG" + a.signal)
    end = time.monotonic() + a.timeout

    def alive():
        try:
            os.kill(a.pid, 0)
            return True
        except ProcessLookupError:
            return False

    def give_up(why):
        sys.exit(f"signal_when: {why} (waiting in {a.dir} to send SIG{a.signal} to {a.pid})")

    try:  # wake first when the sign comes, even beside a CPU hog; not needed where refused
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    except (OSError, AttributeError):
        pass

    while not os.path.isdir(a.dir):  # the run creates it at its start
        if not alive():
            give_up("the process ended before its directory appeared")
        if time.monotonic() > end:
            give_up(f"{a.dir} did not appear within {a.timeout:g} s")
        time.sleep(0.02)
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC)
    if fd < 0 or libc.inotify_add_watch(fd, a.dir.encode(),
                                        IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE) < 0:
        give_up("inotify: " + os.strerror(ctypes.get_errno()))

    def matches(path, rx):
        try:
            with open(path, errors="replace") as f:
                return sum(1 for line in f if rx.search(line))
        except FileNotFoundError:
            return 0

    if a.new_line:
        path, rx = os.path.join(a.dir, a.new_line[0]), re.compile(a.new_line[1])
        before = matches(path, rx)  # after the watch is set: no line can slip between
        seen = lambda: matches(path, rx) > before
    else:
        seen = lambda: any(n.endswith(a.file_suffix) for n in os.listdir(a.dir))

    while True:
        if seen():
            os.kill(a.pid, sig)
            return
        if not alive():
            give_up("the process ended before the sign")
        left = end - time.monotonic()
        if left <= 0:
            give_up(f"no sign within {a.timeout:g} s")
        # Events wake us at once; the short timeout only re-checks that the process lives.
        if select.select([fd], [], [], min(left, 0.2))[0]:
            os.read(fd, 65536)


if __name__ == "__main__":
    main()
