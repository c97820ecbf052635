"""Unit tests of the arithmetic and validation inside analysis/ (hand-computed expectations).

The scripts themselves run on a real run directory in tests/e2e/analysis_scripts.sh; these
pin down the interval union, time averages, the step breakdown and the loader's error messages
on small hand-made inputs where the right answer is known exactly.
"""

import resource
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "analysis"))
import background  # noqa: E402
import summary  # noqa: E402
import wtrun  # noqa: E402


def events(*rows):
    """Event columns from (name, begin, end) rows on stream 0 of step 0."""
    n = len(rows)
    return {
        "name": np.array([r[0] for r in rows], dtype=object),
        "begin": np.array([r[1] for r in rows], dtype=float),
        "end": np.array([r[2] for r in rows], dtype=float),
        "stage": np.zeros(n, np.int32), "batch": np.zeros(n, np.int32),
        "wave": np.zeros(n, np.int32), "stream": np.zeros(n, np.int32),
        "step": np.zeros(n, np.int64), "bytes": np.zeros(n, np.int64),
    }


class IntervalTest(unittest.TestCase):
    def test_union_merges_overlapping_and_nested_intervals(self):
        self.assertAlmostEqual(wtrun.union_length([0, 5, 1, 1.5], [2, 6, 3, 2.5]), 4.0)

    def test_union_clips_to_the_window_and_ignores_empty_intervals(self):
        self.assertAlmostEqual(wtrun.union_length([-1, 4, 9], [2, 4, 12], lo=0, hi=10), 3.0)
        self.assertEqual(wtrun.union_length([], []), 0.0)

    def test_time_average_weights_each_value_by_how_long_it_held(self):
        # 1 for 1 s, 3 for 2 s, 0 for 1 s -> 7 / 4
        self.assertAlmostEqual(wtrun.time_average([0, 1, 3], [1, 3, 0], end=4), 1.75)


class BreakdownTest(unittest.TestCase):
    def test_parts_partition_the_step(self):
        ev = events(("Forward", 0, 2), ("Backward", 2, 4), ("AllReduce", 3, 7), ("Wait", 5, 7),
                    ("LoadBatch", 7, 8))
        parts, comm, load = summary.step_breakdown(ev, 0.0, 10.0)
        self.assertAlmostEqual(parts["compute"], 4.0)
        self.assertAlmostEqual(parts["exposed comm"], 3.0)  # 4-7: communication, no compute
        self.assertAlmostEqual(parts["data"], 1.0)
        self.assertAlmostEqual(parts["other"], 2.0)
        self.assertAlmostEqual(comm, 4.0)
        self.assertAlmostEqual(load, 1.0)

    def test_step_time_is_the_slowest_rank_and_shares_average_over_ranks(self):
        def rank(r, step_ends):
            ev = events(*[("AllReduce", s * 10, s * 10 + 1) for s in range(len(step_ends))])
            ev["step"] = np.arange(len(step_ends), dtype=np.int64)
            steps = {"step": np.arange(len(step_ends), dtype=np.int64),
                     "begin": np.arange(len(step_ends), dtype=float) * 10,
                     "end": np.arange(len(step_ends), dtype=float) * 10 + step_ends}
            return wtrun.RankTrace(r, ev, steps, None)

        trace = wtrun.Trace("t.h5", {}, {0: rank(0, [2.0, 4.0]), 1: rank(1, [3.0, 1.0])})
        figures = summary.trace_figures(trace)
        self.assertAlmostEqual(figures["p50"], 3500.0)  # steps last 3 s and 4 s -> ms
        self.assertAlmostEqual(figures["comm_pct"], 100.0 * 4 / 10)


class LoaderErrorTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def assert_error(self, pattern, fn, *args):
        with self.assertRaises(wtrun.RunError) as caught:
            fn(*args)
        self.assertRegex(str(caught.exception), pattern)

    def test_metrics_header_and_rows_are_checked(self):
        f = self.dir / "metrics.csv"
        f.write_text("step,loss\n1,2\n")
        self.assert_error(r"metrics.csv: not a wavetrain metrics file", wtrun.load_metrics, f)
        rest = len(wtrun.METRICS_COLUMNS) - 4  # after kind, step, epoch, loss
        f.write_text(",".join(wtrun.METRICS_COLUMNS) + "\ntrain,1,0,x" + ",0" * rest + "\n")
        self.assert_error(r"metrics.csv:2: non-numeric", wtrun.load_metrics, f)
        f.write_text(",".join(wtrun.METRICS_COLUMNS) + "\ntrain,1,0,1" + ",0" * 6 + "\n")
        self.assert_error(r"metrics.csv:2: malformed metrics row", wtrun.load_metrics, f)

    def test_metrics_without_allocator_statistics_still_load(self):
        f = self.dir / "metrics.csv"  # written before forced_syncs and fragmentation existed
        f.write_text(",".join(wtrun.METRICS_COLUMNS[:12]) + "\ntrain,5,0.1,2.5" + ",0" * 8 + "\n")
        metrics = wtrun.load_metrics(f)
        self.assertEqual(list(metrics["train"]["loss"]), [2.5])

    def test_metrics_without_preload_counters_still_load(self):
        f = self.dir / "metrics.csv"  # written before the preload columns existed
        f.write_text(",".join(wtrun.METRICS_COLUMNS[:10]) + "\ntrain,5,0.1,2.5" + ",0" * 6 + "\n")
        metrics = wtrun.load_metrics(f)
        self.assertEqual(list(metrics["train"]["loss"]), [2.5])
        self.assertNotIn("preload_hits", metrics["train"])

    def test_trace_version_and_columns_are_checked(self):
        f = self.dir / "trace.h5"
        with h5py.File(f, "w") as h:
            h.attrs.update(format="wavetrain-trace", version=2, world_size=1, start_step=0,
                           end_step=1)
        self.assert_error(r"trace version 2 is not supported", wtrun.load_trace, f)
        with h5py.File(f, "w") as h:
            h.attrs.update(format="wavetrain-trace", version=1, world_size=1, start_step=0,
                           end_step=1)
            h.create_group("rank_0/events")["name"] = np.array([b"Forward"], dtype="S16")
        self.assert_error(r"/rank_0/events/stage missing", wtrun.load_trace, f)

    def test_a_directory_without_metrics_is_not_a_run(self):
        (self.dir / "deck.toml").write_text("")
        self.assert_error(r"not a wavetrain run directory \(no metrics.csv\)", wtrun.load_run,
                          self.dir)

    def test_a_deck_that_is_not_text_is_named(self):
        (self.dir / "metrics.csv").write_text(",".join(wtrun.METRICS_COLUMNS) + "\n")
        (self.dir / "deck.toml").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x81")
        self.assert_error(r"deck.toml: not a valid deck: 'utf-8' codec can't decode",
                          wtrun.load_run, self.dir)

    def test_tasklet_rows_are_checked_with_their_line(self):
        f = self.dir / "tasklets.csv"
        header = "kind,fg_step,fg_stream,fg_index,fg_waits_on,begin_s,end_s,planned_ms,bg_step,"
        f.write_text(header + "bg_instructions\ntasklet,3,0,1,,1.5,1.6,0.4,2,1\ntasklet,x,0\n")
        self.assert_error(r"tasklets.csv:3: malformed tasklet row 'tasklet,x,0'",
                          background.read_tasklets, f)
        f.write_text("kind,step\n")
        self.assert_error(r"tasklets.csv: not a tasklets.csv \(no column begin_s, ",
                          background.read_tasklets, f)
        f.write_text(header + "bg_instructions\ntasklet,3,0,1,,1.5,1.6,0.4,2,1\n")
        self.assertEqual(background.read_tasklets(f)[0]["fg_step"], 3)


class WriteTest(unittest.TestCase):
    def test_a_write_over_the_file_size_limit_leaves_no_file(self):
        # A real limit (ulimit -f) in a child process: 100 KB written under a 16 KiB limit.
        with tempfile.TemporaryDirectory() as tmp:
            script = ("import sys, wtrun\n"
                      "try:\n"
                      "    wtrun.write_atomically(sys.argv[1], lambda f: f.write('x' * 100000))\n"
                      "except wtrun.RunError as e:\n"
                      "    print(e)\n")
            limit = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))  # noqa: E731
            # -B: under the limit Python would also write wtrun's byte code cut short (it does
            # not check those writes), breaking every later import of wtrun.
            out = subprocess.run([sys.executable, "-B", "-c", script, f"{tmp}/fig.json"], text=True,
                                 capture_output=True, preexec_fn=limit,
                                 env={"PYTHONPATH": str(Path(wtrun.__file__).parent)})
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertRegex(out.stdout, r"fig.json: cannot write: File too large")
            self.assertEqual(list(Path(tmp).iterdir()), [])

    def test_a_figure_in_an_unknown_format_is_refused(self):
        plt = wtrun.use_agg()
        fig = plt.figure()
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(wtrun.RunError) as caught:
                wtrun.save_figure(fig, f"{tmp}/plot.xyz", "test")
            self.assertRegex(str(caught.exception),
                             r"plot.xyz: cannot write a .xyz figure \(formats: .*png")
            self.assertEqual(list(Path(tmp).iterdir()), [])


if __name__ == "__main__":
    unittest.main()
