"""The converters' --scale (issue 36): per-feature means and stds computed on the training split
only and stored as 1-D arrays, global ones as numbers, none as 0 and 1; the warning when columns'
spreads differ by orders of magnitude and scaling is off. Each converter runs as a user runs it
(a subprocess); the expectations are computed here with NumPy from the rows the file holds.
"""

import os
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np
from PIL import Image

from converter_testing import load, run


def badly_scaled_table(path, n=300, seed=0):
    """A CSV of three columns of very different spreads (0.002, 100s, 1) and a class label."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    a = rng.normal(0.01 + 0.002 * y, 0.001)
    b = rng.normal(800 + 300 * y, 100)
    c = rng.normal(5, 1, n)
    with open(path, "w") as f:
        f.write("acidity,proline,hue,class\n")
        for i in range(n):
            f.write(f"{a[i]:.5f},{b[i]:.1f},{c[i]:.3f},{y[i]}\n")


class CsvScaling(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.d = Path(self.dir.name)
        badly_scaled_table(self.d / "t.csv")

    def tearDown(self):
        self.dir.cleanup()

    def convert(self, *extra):
        out = self.d / "t.h5"
        rc, stdout, stderr = run("csv_to_hdf5.py", "--train", self.d / "t.csv", "--label", "class",
                                 "--output", out, *extra)
        self.assertEqual(rc, 0, stderr)
        return load(out), stdout, stderr

    def test_per_feature_is_the_default_and_uses_the_training_split_only(self):
        f, stdout, stderr = self.convert()
        x = f["train/inputs"][:].astype(np.float64)
        mean, std = f["attrs"]["mean"], f["attrs"]["std"]
        self.assertEqual(mean.shape, (3,))
        np.testing.assert_allclose(mean, x.mean(axis=0), rtol=1e-6)
        np.testing.assert_allclose(std, x.std(axis=0), rtol=1e-5)
        everything = np.concatenate([x, f["test/inputs"][:]])
        self.assertFalse(np.allclose(mean, everything.mean(axis=0), rtol=1e-6),
                         "the test split's rows went into the mean")
        self.assertIn("normalisation per feature (3 features): mean", stdout)
        self.assertNotIn("warning", stderr)

    def test_global_is_one_number_and_warns_about_the_spreads(self):
        f, stdout, stderr = self.convert("--scale", "global")
        x = f["train/inputs"][:].astype(np.float64)
        self.assertEqual(np.ndim(f["attrs"]["mean"]), 0)
        self.assertAlmostEqual(float(f["attrs"]["mean"]), x.mean(), places=3)
        self.assertAlmostEqual(float(f["attrs"]["std"]), x.std(), places=2)
        self.assertRegex(stderr, r"warning: .*t\.csv: the features' spreads differ by a factor of "
                                 r"[0-9.e+]+ \(std [0-9.e-]+ of 'acidity' \.\. [0-9.]+ of "
                                 r"'proline'\); with --scale global .* use --scale per-feature")

    def test_none_and_no_normalise_store_zero_and_one(self):
        for flag in (["--scale", "none"], ["--no-normalise"]):
            f, _, stderr = self.convert(*flag)
            self.assertEqual((float(f["attrs"]["mean"]), float(f["attrs"]["std"])), (0.0, 1.0))
            self.assertIn("with --scale none", stderr)

    def test_constant_column_gets_std_one_and_large_offsets_keep_precision(self):
        with open(self.d / "t.csv", "w") as f:
            f.write("k,big,class\n")
            for i in range(200):
                f.write(f"7,{1e6 + (i % 5) * 1e-2:.2f},{i % 2}\n")
        g, _, _ = self.convert("--test-ratio", "0.1")
        x = g["train/inputs"][:].astype(np.float64)
        self.assertEqual(g["attrs"]["std"][0], 1.0)
        self.assertEqual(g["attrs"]["mean"][0], 7.0)
        np.testing.assert_allclose(g["attrs"]["std"][1], x[:, 1].std(), rtol=1e-3)

    def test_bad_scale_is_a_usage_error(self):
        rc, _, stderr = run("csv_to_hdf5.py", "--train", self.d / "t.csv", "--label", "class",
                            "--output", self.d / "t.h5", "--scale", "per-column")
        self.assertEqual(rc, 2)
        self.assertIn("invalid choice: 'per-column'", stderr)
        self.assertFalse((self.d / "t.h5").exists())


class NpyAndImageScaling(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.d = Path(self.dir.name)
        rng = np.random.default_rng(1)
        self.x = np.stack([rng.normal(0, 1e-3, 200), rng.normal(100, 50, 200)], 1)
        y = np.arange(200) % 2
        np.savez(self.d / "t.npz", x_train=self.x[:150], y_train=y[:150], x_test=self.x[150:],
                 y_test=y[150:])
        self.img = rng.integers(0, 256, (40, 3, 4, 4), dtype=np.uint8)
        self.img[:, 0] //= 4  # channel 0 darker than the others
        np.savez(self.d / "i.npz", x_train=self.img[:30], y_train=y[:30], x_test=self.img[30:],
                 y_test=y[30:40])

    def tearDown(self):
        self.dir.cleanup()

    def test_npy_float_table_defaults_to_per_feature(self):
        rc, _, stderr = run("npy_to_hdf5.py", "--npz", self.d / "t.npz", "--output", self.d / "n.h5")
        self.assertEqual(rc, 0, stderr)
        with h5py.File(self.d / "n.h5", "r") as f:
            train = self.x[:150].astype(np.float32).astype(np.float64)
            np.testing.assert_allclose(f.attrs["mean"], train.mean(axis=0), rtol=1e-5, atol=1e-9)
            np.testing.assert_allclose(f.attrs["std"], train.std(axis=0), rtol=1e-5)
        rc, _, stderr = run("npy_to_hdf5.py", "--npz", self.d / "t.npz", "--output",
                            self.d / "n.h5", "--scale", "global")
        self.assertEqual(rc, 0, stderr)
        self.assertIn("(std 0.00", stderr)
        self.assertIn("of feature 0 ..", stderr)

    def test_npy_images_default_to_global_and_per_feature_means_per_channel(self):
        out = self.d / "i.h5"
        rc, _, stderr = run("npy_to_hdf5.py", "--npz", self.d / "i.npz", "--output", out)
        self.assertEqual(rc, 0, stderr)
        with h5py.File(out, "r") as f:
            self.assertEqual(np.ndim(f.attrs["mean"]), 0)
        rc, stdout, stderr = run("npy_to_hdf5.py", "--npz", self.d / "i.npz", "--output", out,
                                 "--scale", "per-feature")
        self.assertEqual(rc, 0, stderr)
        train = self.img[:30] / 255.0
        with h5py.File(out, "r") as f:
            np.testing.assert_allclose(f.attrs["mean"], train.mean(axis=(0, 2, 3)), rtol=1e-9)
            np.testing.assert_allclose(f.attrs["std"], train.std(axis=(0, 2, 3)), rtol=1e-9)
        self.assertIn("normalisation per channel (3 channels)", stdout)

    def test_images_per_channel(self):
        for c, name in enumerate(["ant", "bee"]):
            os.makedirs(self.d / "img" / name)
            for i in range(10):
                Image.fromarray(self.img[c * 10 + i].transpose(1, 2, 0)).save(
                    self.d / "img" / name / f"{i}.png")
        out = self.d / "img.h5"
        rc, _, stderr = run("images_to_hdf5.py", "--input", self.d / "img", "--output", out,
                            "--scale", "per-feature")
        self.assertEqual(rc, 0, stderr)
        with h5py.File(out, "r") as f:
            train = f["train/inputs"][:] / 255.0
            self.assertEqual(f.attrs["mean"].shape, (3,))
            np.testing.assert_allclose(f.attrs["mean"], train.mean(axis=(0, 2, 3)), rtol=1e-9)
            self.assertLess(f.attrs["mean"][0], f.attrs["mean"][1])


if __name__ == "__main__":
    unittest.main()
