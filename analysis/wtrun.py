"""Loading a wavetrain run directory and its trace, shared by the scripts in analysis/.

A directory is a wavetrain run if it holds deck.toml and metrics.csv. It may also hold
summary.json (written when the run finished) and trace.h5 (written when the deck says
[trace] enabled = true); the trace format is described in docs/analysis.md.

Bad input raises RunError with a message naming the file; run_main() turns that into
"<script>: error: <message>" on stderr and exit status 2, never a traceback.
"""

import csv
import json
import math
import os
import re
import sys
import tomllib
from pathlib import Path

import numpy as np

TRACE_FORMAT = "wavetrain-trace"
TRACE_VERSION = 1

# How the analysis classifies opcodes (anything else counts as "other").
COMPUTE_OPS = frozenset({"Forward", "Backward", "Step", "KeepGradient", "AddKeptGradient",
                         "CopyRows"})
COMMUNICATION_OPS = frozenset({"AllReduce", "Send", "Recv", "Broadcast", "Reduce", "SendActivation",
                               "RecvActivation", "SendGradient", "RecvGradient", "SendRows",
                               "RecvRows"})
DATA_OPS = frozenset({"LoadBatch"})
WAIT_OPS = frozenset({"Wait"})

METRICS_COLUMNS = ("kind", "step", "epoch", "loss", "accuracy", "lr", "samples_per_s", "wall_s",
                   "peak_device_mb", "rss_mb", "preload_hits", "preload_misses", "peak_in_use_mb",
                   "forced_syncs", "fragmentation", "system_allocations")
# Runs written before the system allocation count have the first fifteen columns, before the
# allocator statistics the first twelve, before the preload counters the first ten.
METRICS_HEADERS = (METRICS_COLUMNS, METRICS_COLUMNS[:15], METRICS_COLUMNS[:12],
                   METRICS_COLUMNS[:10])
EVENT_COLUMNS = ("name", "stage", "batch", "wave", "stream", "step", "begin", "end", "bytes")
# When the device ran each instruction's work (NaN on the host device); traces written before
# device times have none: read as NaN.
DEVICE_EVENT_COLUMNS = ("device_begin", "device_end")
STEP_COLUMNS = ("step", "begin", "end")
MEMORY_COLUMNS = ("time", "in_use", "reserved")


class RunError(Exception):
    """Bad input: a path that is not a run directory, not a trace, or a malformed file."""


def op_class(name):
    """compute, communication, data, waiting or other, for an opcode name."""
    if name in COMPUTE_OPS:
        return "compute"
    if name in COMMUNICATION_OPS:
        return "communication"
    if name in DATA_OPS:
        return "data"
    if name in WAIT_OPS:
        return "waiting"
    return "other"


# ---------------------------------------------------------------------------------------------
# Run directory


class Run:
    """One run directory: metrics (per kind, columns as numpy arrays), summary, deck, trace path."""

    def __init__(self, path):
        self.path = Path(path)
        self.name = self.path.resolve().name
        self.metrics = load_metrics(self.path / "metrics.csv")
        self.summary = _load_summary(self.path / "summary.json")
        self.deck = _load_deck(self.path / "deck.toml")
        trace = self.path / "trace.h5"
        self.trace_path = trace if trace.exists() else None

    def deck_value(self, section, key, default=None):
        return self.deck.get(section, {}).get(key, default)

    def trace(self):
        """The run's Trace; RunError if the run wrote none."""
        if self.trace_path is None:
            raise RunError(f"{self.path}: no trace.h5 (the run needs [trace] enabled = true)")
        return load_trace(self.trace_path)


def load_run(path):
    path = Path(path)
    if not path.exists():
        raise RunError(f"{path}: no such file or directory")
    if not path.is_dir():
        raise RunError(f"{path}: not a wavetrain run directory (not a directory)")
    for required in ("metrics.csv", "deck.toml"):
        if not (path / required).is_file():
            raise RunError(f"{path}: not a wavetrain run directory (no {required})")
    return Run(path)


def load_metrics(path):
    """metrics.csv as {"train": {column: array}, "eval": {...}}; rows sorted by step."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise RunError(f"{path}: cannot read metrics: {e}") from None
    lines = text.splitlines()
    if lines and not text.endswith("\n"):
        lines = lines[:-1] if len(lines) > 1 else lines  # a row a running job is still writing
    rows = list(csv.reader(lines))
    if not rows or tuple(rows[0]) not in METRICS_HEADERS:
        found = ",".join(rows[0]) if rows else "an empty file"
        raise RunError(f"{path}: not a wavetrain metrics file (header is {found!r}, "
                       f"expected {','.join(METRICS_COLUMNS)!r})")
    columns = tuple(rows[0])
    by_kind = {"train": [], "eval": []}
    for line, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(columns) or row[0] not in by_kind:
            raise RunError(f"{path}:{line}: malformed metrics row {','.join(row)!r}")
        try:
            by_kind[row[0]].append([float(v) for v in row[1:]])
        except ValueError:
            raise RunError(f"{path}:{line}: non-numeric value in {','.join(row)!r}") from None
    metrics = {}
    for kind, values in by_kind.items():
        table = np.array(values, dtype=float).reshape(-1, len(columns) - 1)
        table = table[np.argsort(table[:, 0], kind="stable")]
        metrics[kind] = {c: table[:, i] for i, c in enumerate(columns[1:])}
    return metrics


def _load_summary(path):
    if not path.exists():
        return None  # a run that has not finished yet
    try:
        summary = json.loads(path.read_text())
    except OSError as e:
        raise RunError(f"{path}: cannot read: {e.strerror or e}") from None
    except ValueError as e:  # UnicodeDecodeError among them
        raise RunError(f"{path}: not valid JSON: {e}") from None
    if not isinstance(summary, dict):
        raise RunError(f"{path}: expected a JSON object")
    return summary


def _load_deck(path):
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise RunError(f"{path}: cannot read: {e.strerror or e}") from None
    except ValueError as e:  # TOMLDecodeError, or UnicodeDecodeError for a file that is not text
        raise RunError(f"{path}: not a valid deck: {e}") from None


# ---------------------------------------------------------------------------------------------
# Trace


class RankTrace:
    """One rank's events, steps and memory samples, each a dict of numpy column arrays."""

    def __init__(self, rank, events, steps, memory):
        self.rank = rank
        self.events = events
        self.steps = steps
        self.memory = memory

    def events_in_steps(self, first, last):
        """Event columns restricted to steps first <= step < last."""
        keep = (self.events["step"] >= first) & (self.events["step"] < last)
        return {c: v[keep] for c, v in self.events.items()}


class Trace:
    def __init__(self, path, attrs, ranks):
        self.path = Path(path)
        self.attrs = attrs
        self.ranks = ranks  # {rank: RankTrace}, sorted by rank

    @property
    def world_size(self):
        return int(self.attrs["world_size"])


def find_trace(path):
    """A trace file given either the file itself or a run directory holding trace.h5."""
    path = Path(path)
    if path.is_dir():
        trace = path / "trace.h5"
        if not trace.exists():
            what = "run directory" if (path / "metrics.csv").exists() else "directory"
            raise RunError(f"{path}: no trace.h5 in this {what} "
                           "(the run needs [trace] enabled = true)")
        return trace
    if not path.exists():
        raise RunError(f"{path}: no such file or directory")
    return path


def trace_argument(path):
    """For scripts taking "RUN or TRACE.h5": (trace path, Run or None). A directory must be a
    run directory (checked first, so a stray folder gets the run-directory message); a trace
    file inside a run directory brings that run along (for its deck)."""
    path = Path(path)
    if path.is_dir():
        run = load_run(path)
        return find_trace(path), run
    trace = find_trace(path)
    parent = trace.parent
    is_run = (parent / "metrics.csv").is_file() and (parent / "deck.toml").is_file()
    return trace, load_run(parent) if is_run else None


def load_trace(path):
    import h5py  # only the trace needs it; metrics-only scripts start faster without

    path = find_trace(path)
    try:
        f = h5py.File(path, "r")
    except OSError:
        raise RunError(f"{path}: not an HDF5 file (or unreadable)") from None
    with f:
        attrs = {k: _scalar(v) for k, v in f.attrs.items()}
        if "format" not in attrs:
            raise RunError(f"{path}: not a wavetrain trace (format attribute missing)")
        if attrs["format"] != TRACE_FORMAT:
            raise RunError(f"{path}: not a wavetrain trace (format is {attrs['format']!r}, "
                           f"expected {TRACE_FORMAT!r})")
        if attrs.get("version") != TRACE_VERSION:
            raise RunError(f"{path}: trace version {attrs.get('version')!r} is not supported "
                           f"(these scripts read version {TRACE_VERSION})")
        for key in ("world_size", "start_step", "end_step"):
            if key not in attrs:
                raise RunError(f"{path}: trace attribute {key!r} missing")
        ranks = {}
        for name in f:
            m = re.fullmatch(r"rank_(\d+)", name)
            if m:
                group = f[name]
                ranks[int(m.group(1))] = RankTrace(
                    int(m.group(1)),
                    _columns(path, group, "events", EVENT_COLUMNS, DEVICE_EVENT_COLUMNS),
                    _columns(path, group, "steps", STEP_COLUMNS),
                    _columns(path, group, "memory", MEMORY_COLUMNS))
        if not ranks:
            raise RunError(f"{path}: trace holds no /rank_<r> groups")
    return Trace(path, attrs, dict(sorted(ranks.items())))


def rank_clock_origins(path):
    """{rank: steady_clock nanoseconds at the rank's time zero} (0 where not recorded)."""
    import h5py

    with h5py.File(path, "r") as f:
        return {int(name[5:]): int(_scalar(f[name].attrs.get("clock_origin_ns", 0)))
                for name in f if re.fullmatch(r"rank_(\d+)", name)}


def _scalar(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(())[()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _columns(path, group, table, names, optional=()):
    where = f"{group.name}/{table}"
    if table not in group:
        raise RunError(f"{path}: {where} missing")
    columns = {}
    for name in names + tuple(n for n in optional if n in group[table]):
        if name not in group[table]:
            raise RunError(f"{path}: {where}/{name} missing")
        data = group[table][name][()]
        if name == "name":
            data = np.array([_decode(v) for v in data], dtype=object)
        columns[name] = np.asarray(data)
    for name in optional:
        if name not in columns:
            columns[name] = np.full(len(columns[names[0]]), np.nan)
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise RunError(f"{path}: {where}: columns differ in length "
                       f"({', '.join(f'{n}={len(v)}' for n, v in columns.items())})")
    return columns


def _decode(value):
    if isinstance(value, bytes):
        return value.split(b"\0", 1)[0].decode("utf-8", "replace")
    return str(value)


# ---------------------------------------------------------------------------------------------
# Interval arithmetic used by the breakdowns


def union_length(begins, ends, lo=-math.inf, hi=math.inf):
    """Total length of the union of [begin, end) intervals, clipped to [lo, hi)."""
    b = np.clip(np.asarray(begins, dtype=float), lo, hi)
    e = np.clip(np.asarray(ends, dtype=float), lo, hi)
    keep = e > b
    b, e = b[keep], e[keep]
    if b.size == 0:
        return 0.0
    order = np.argsort(b, kind="stable")
    b, e = b[order], np.maximum.accumulate(e[order])
    # A new piece starts wherever an interval begins after every earlier one has ended.
    starts = np.concatenate(([True], b[1:] > e[:-1]))
    piece_begin = b[starts]
    piece_end = np.concatenate((e[np.flatnonzero(starts)[1:] - 1], [e[-1]]))
    return float(np.sum(piece_end - piece_begin))


def time_average(times, values, end):
    """Average of a step function (value[i] holds from times[i] to times[i+1], the last to end)."""
    times = np.asarray(times, dtype=float)
    values = np.asarray(values, dtype=float)
    if times.size == 0:
        return math.nan
    edges = np.append(times, max(end, times[-1]))
    widths = np.diff(edges)
    total = edges[-1] - edges[0]
    if total <= 0:
        return float(values[-1])
    return float(np.sum(widths * values) / total)


def run_label(paths):
    """Short unique labels for runs: the directory name, with its parent when names clash."""
    paths = [Path(p).resolve() for p in paths]
    names = [p.name for p in paths]
    return [f"{p.parent.name}/{p.name}" if names.count(p.name) > 1 else p.name for p in paths]


# ---------------------------------------------------------------------------------------------
# Script entry points


def run_main(main, prog):
    """Calls main(); reports RunError as "<prog>: error: ..." and exit status 2."""
    try:
        status = main()
    except RunError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        sys.exit(2)
    except BrokenPipeError:
        sys.exit(1)
    sys.exit(status or 0)


def use_agg():
    """matplotlib without a display; returns pyplot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def write_atomically(path, write, newline=None, binary=False):
    """Calls write(file) on a temporary next to `path` and renames it into place when complete,
    so a full disk or a file size limit never leaves a truncated file under the name; a failure
    removes the temporary and raises RunError naming `path`."""
    path = Path(path)
    temp = path.with_name(f"{path.name}.tmp.{os.getpid()}")
    try:
        with open(temp, "wb" if binary else "w", newline=newline) as f:
            write(f)
        os.replace(temp, path)
    except OSError as e:
        temp.unlink(missing_ok=True)
        raise RunError(f"{path}: cannot write: {e.strerror or e}") from None


def save_figure(fig, path, prog):
    path = Path(path)
    kind = path.suffix[1:].lower() or "png"
    formats = fig.canvas.get_supported_filetypes()
    if kind not in formats:
        raise RunError(f"{path}: cannot write a .{kind} figure "
                       f"(formats: {', '.join(sorted(formats))})")
    write_atomically(path, lambda f: fig.savefig(f, dpi=120, format=kind), binary=True)
    print(f"{prog}: wrote {path}")
