"""What every converter in tools/ shares: exit statuses, signals, decoding errors, progress and
the summary.

Exit status: 0 written; 2 bad input or an unwritable output (one line naming the input and the
item); 128 + the signal's number after SIGINT, SIGTERM or SIGHUP (the temporary removed, nothing
written); 1 anything else. A progress bar goes to stderr once a conversion runs longer than a
moment.
"""
import argparse
import os
import signal
import sys
import time

import numpy as np

from dataset_output import SCALES, name_classes, scaling_text
from hdf5_output import ConvertError


class Stopped(BaseException):
    """A signal asked the converter to stop. A BaseException, as KeyboardInterrupt, so that no
    `except Exception` swallows it on its way out through the output's cleanup."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _stop(signum, frame):
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # a second signal must not cut
        signal.signal(s, signal.SIG_IGN)                      # the cleanup short
    raise Stopped(signum)


def _leave(status):
    """Exits without running exit handlers: after a failed write HDF5 may still hold the file it
    could not close (its temporary already removed), and its exit handler would crash flushing
    it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:  # a closed pipe
            pass
    os._exit(status)


def run_converter(tool, main):
    """Runs main() and turns what escapes it into the exit status."""
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(s) != signal.SIG_IGN:  # what the shell ignores (`&`, nohup) stays so
            signal.signal(s, _stop)
    try:
        return main() or 0
    except ConvertError as e:
        print(f"{tool}: error: {e}", file=sys.stderr)
        _leave(2)
    except (Stopped, KeyboardInterrupt) as e:
        name = e.args[0] if isinstance(e, Stopped) else "SIGINT"
        print(f"{tool}: stopped by {name}; nothing written", file=sys.stderr)
        _leave(128 + (e.signum if isinstance(e, Stopped) else signal.SIGINT))
    except MemoryError:
        print(f"{tool}: error: out of memory", file=sys.stderr)
        _leave(1)
    except BrokenPipeError:  # the summary's reader went away (`| head`): as analysis/ does
        _leave(1)


def positive_int(text):
    """An argparse type: a whole number of at least 1 (--block-rows, --num-classes)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got '{text}'")
    return value


def add_scale_option(parser, default, per_feature):
    """--scale, and --no-normalise (the older spelling of --scale none)."""
    parser.add_argument("--scale", choices=SCALES, default=default,
                        help="normalisation stored in the file, from the training split: none "
                             "(mean 0, std 1), global (one mean and std) or per-feature (one "
                             f"per {per_feature})" + (" (default: %(default)s)" if default else ""))
    parser.add_argument("--no-normalise", action="store_const", const="none", dest="scale",
                        help="the same as --scale none")


def warn_spread(tool, writer, scale, names=None):
    """A warning on stderr when one mean and std serves features of very different spreads."""
    if scale == "per-feature":
        return
    text = writer.features.spread_warning(names)
    if text:
        where = f"{writer.source}: " if writer.source else ""
        print(f"{tool}: warning: {where}{text}; with --scale {scale} the small ones barely reach "
              "the model: use --scale per-feature", file=sys.stderr)


def first_undecodable(path, encoding):
    """Where `path` stops being text in `encoding`: (line, byte in the line, its value, whether the
    line holds a NUL: a binary file), all counted from 1; None if it decodes (or cannot be read:
    the caller's own read reports that)."""
    try:
        with open(path, "rb") as f:
            for number, line in enumerate(f, 1):
                try:
                    line.decode(encoding)
                except UnicodeDecodeError as e:
                    return number, e.start + 1, line[e.start], b"\0" in line
    except OSError:
        pass
    return None


class Progress:
    """A progress bar on stderr, drawn at most twice a second and only after the first half second:
    short conversions print nothing. Off a terminal, a line every 10 seconds instead."""

    def __init__(self, label, total, unit="samples"):
        self.label, self.total, self.done, self.unit = label, max(1, total), 0, unit
        self.started = time.monotonic()
        self.shown = self.started
        self.tty = sys.stderr.isatty()
        self.drawn = False

    def advance(self, n):
        self.done += n
        now = time.monotonic()
        if now - self.shown < (0.5 if self.tty else 10.0):
            return
        self.shown = now
        frac = min(1.0, self.done / self.total)
        rate = self.done / max(1e-9, now - self.started)
        eta = (self.total - self.done) / rate if rate > 0 else 0
        bar = "#" * int(frac * 30)
        line = (f"{self.label} [{bar:<30}] {self.done}/{self.total} ({frac:4.0%}) "
                f"{rate:,.0f} {self.unit}/s ETA {eta:.0f}s")
        if self.tty:
            sys.stderr.write("\r" + line)
            self.drawn = True
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def close(self):
        if self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()


def balance(counts, names):
    parts = []
    for c, n in enumerate(counts):
        parts.append(f"{names[c] if names else c}={int(n)}")
    return " ".join(parts)


def print_summary(tool, output, splits, num_classes, class_names, mean, std, started):
    """The lines a converter prints when done: what it wrote, per split and in all."""
    size_mb = os.path.getsize(output) / 1e6
    print(f"{tool}: wrote {output} ({size_mb:.1f} MB in {time.monotonic() - started:.2f} s)")
    for w in splits:
        shape = "x".join(str(d) for d in w.sample_shape)
        labels = "per sample" if not w.label_shape else f"per token {list(w.label_shape)}"
        counts = np.zeros(num_classes, dtype=np.int64)
        counts[:len(w.class_counts)] = w.class_counts
        values = f"values {w.value_min:g}..{w.value_max:g}" if w.count else "no samples"
        print(f"  /{w.name}: {w.count} samples of {shape} {w.dtype.name}, labels int32 {labels}, "
              f"{values}")
        print(f"    classes: {balance(counts, class_names)}")
    shape = splits[0].sample_shape if splits else ()
    print(f"  num_classes {num_classes}, {scaling_text(mean, std, shape)}")
    warn_untested_classes(tool, splits, num_classes, class_names)


def warn_untested_classes(tool, splits, num_classes, class_names):
    """A warning on stderr for classes the test split lacks: the run cannot measure them."""
    test = next((w for w in splits if w.name == "test"), None)
    if test is None:
        return
    where = f"{test.source}: " if test.source else ""
    if test.count == 0:
        print(f"{tool}: warning: {where}no test samples: a run on this file trains without "
              "evaluation", file=sys.stderr)
        return
    counts = np.zeros(num_classes, dtype=np.int64)
    counts[:len(test.class_counts)] = test.class_counts
    untested = [int(c) for c in np.flatnonzero(counts == 0)]
    if untested:
        print(f"{tool}: warning: {where}class(es) {name_classes(untested, class_names)} of "
              f"{num_classes} have no test samples: their test accuracy is not measured",
              file=sys.stderr)
