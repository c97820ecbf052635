"""tools/export_weights.py on checkpoints made here with h5py (the e2e walk-through exports a real
one): arrays cut by the recorded layout, in model-file order, buffers from rank 0's row; a layout
that leaves a gap, overlaps or falls short of the vector, and a checkpoint without a layout, are
refused with exit status 2, naming the file and the dataset, and nothing is written.
"""

import json
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np

from converter_testing import run


def entry(name, offset, shape):
    return {"name": name, "offset": offset, "shape": shape}


# Storage order, as wavetrain writes it: the stage's layers in reverse.
LAYOUT = {"params": [entry("fc2.weight", 0, [2, 3]), entry("fc2.bias", 6, [2]),
                     entry("fc1.weight", 8, [3, 4]), entry("fc1.bias", 20, [3])],
          "buffers": [entry("bn.running_mean", 0, [2])]}


class ExportWeights(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def checkpoint(self, layout=LAYOUT, values=23):
        path = self.dir / "c.h5"
        with h5py.File(path, "w") as f:
            f.attrs["format"] = "wavetrain-checkpoint"
            f.attrs.update(model="m", step=np.int64(7), stages=np.int64(1))
            f["stages/0/values"] = np.arange(values, dtype=np.float32)
            f["stages/0/buffers"] = np.array([[1, 2], [3, 4]], dtype=np.float32)  # 2 ranks
            if layout is not None:
                f["stages/0/param_layout"] = np.frombuffer(json.dumps(layout).encode(), np.uint8)
        return path

    def test_cuts_by_the_layout_in_model_file_order(self):
        out = self.dir / "w.npz"
        status, stdout, stderr = run("export_weights.py", self.checkpoint(), "--output", out)
        self.assertEqual(status, 0, stderr)
        self.assertIn("model 'm' after step 7, 5 arrays", stdout)
        w = np.load(out)
        self.assertEqual(w.files, ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias",
                                   "bn.running_mean"])
        np.testing.assert_array_equal(w["fc1.weight"], np.arange(8, 20).reshape(3, 4))
        np.testing.assert_array_equal(w["fc2.bias"], [6, 7])
        np.testing.assert_array_equal(w["bn.running_mean"], [1, 2])  # rank 0's row

    def refused(self, path, *said):
        out = self.dir / "w.npz"
        status, _, stderr = run("export_weights.py", path, "--output", out)
        self.assertEqual(status, 2, stderr)
        self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
        for text in said:
            self.assertIn(text, stderr)
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), [Path(path).name])

    def test_a_gap_or_an_overlap_is_refused(self):
        gap = {"params": [entry("a.weight", 0, [2]), entry("a.bias", 3, [2])], "buffers": []}
        self.refused(self.checkpoint(gap, values=5), "c.h5: /stages/0/values: 'a.bias' at offset 3")
        overlap = {"params": [entry("a.weight", 0, [2]), entry("a.bias", 1, [2])], "buffers": []}
        self.refused(self.checkpoint(overlap, values=3), "'a.bias' at offset 1")

    def test_a_layout_short_of_the_vector_is_refused(self):
        self.refused(self.checkpoint(values=30), "/stages/0/values: the layout covers 23 of 30")

    def test_no_layout_is_refused_with_how_to_get_one(self):
        self.refused(self.checkpoint(layout=None), "c.h5: /stages/0/param_layout: missing",
                     "--restart-from")

    def test_not_a_checkpoint(self):
        path = self.dir / "c.h5"
        path.write_text("hello")
        self.refused(path, "c.h5: cannot open it as an HDF5 checkpoint")


if __name__ == "__main__":
    unittest.main()
