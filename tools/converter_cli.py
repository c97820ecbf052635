"""What every dataset converter in tools/ shares: exit statuses, progress and the summary.

Exit status: 0 written; 2 bad input or an unwritable output (one line naming the input and the
item); 1 anything else. A progress bar goes to stderr once a conversion runs longer than a moment.
"""
import os
import sys
import time

import numpy as np

from dataset_output import ConvertError


def run_converter(tool, main):
    """Runs main() and turns what escapes it into the exit status."""
    try:
        return main() or 0
    except ConvertError as e:
        print(f"{tool}: error: {e}", file=sys.stderr)
        # After a failed write (full disk, file size limit) HDF5 may still hold the file it could
        # not close, and its exit handler would crash flushing it: the temporary is already
        # removed, so leave without running exit handlers.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(2)
    except KeyboardInterrupt:
        print(f"{tool}: interrupted; nothing written", file=sys.stderr)
        return 130
    except MemoryError:
        print(f"{tool}: error: out of memory", file=sys.stderr)
        return 1


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
    print(f"  num_classes {num_classes}, normalisation mean {mean:.6f} std {std:.6f}")
