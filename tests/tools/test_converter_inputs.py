"""Inputs as users have them (issue 36): npy_to_hdf5.py --test-ratio on one X and y (stratified,
seeded), a CSV with a UTF-8 byte-order mark and CRLF line endings, and images_to_hdf5.py skipping
files that are not images (counted). Refusals: exit status 2, one line naming the file, no output
and no temporary left behind.
"""

import os
import unittest

import numpy as np
from PIL import Image

from converter_testing import Converting


class CsvText(Converting):
    def test_byte_order_mark_and_crlf(self):
        rows = [(i * 0.5, i % 3) for i in range(30)]
        plain = self.csv("plain.csv", "x,k", rows)
        windows = self.csv("windows.csv", "x,k", rows, prefix=b"\xef\xbb\xbf", newline="\r\n")
        a, _, _ = self.converts("csv_to_hdf5.py", "--train", plain, "--label", "k")
        b, _, _ = self.converts("csv_to_hdf5.py", "--train", windows, "--label", "k")
        for key in ("train/inputs", "train/labels", "test/inputs", "test/labels"):
            np.testing.assert_array_equal(a[key], b[key])


class NpyTestRatio(Converting):
    def setUp(self):
        super().setUp()
        rng = np.random.default_rng(4)
        self.x = rng.normal(size=(90, 3)).astype(np.float32)
        np.save(self.d / "x.npy", self.x)

    def test_test_ratio_is_stratified_and_seeded(self):
        y = np.array([0] * 60 + [1] * 20 + [2] * 10)
        np.savez(self.d / "xy.npz", X=self.x, y=y)
        data, _, _ = self.converts("npy_to_hdf5.py", "--npz", self.d / "xy.npz",
                                   "--test-ratio", "0.2")
        self.assertEqual(np.bincount(data["test/labels"]).tolist(), [12, 4, 2])
        self.assertEqual(np.bincount(data["train/labels"]).tolist(), [48, 16, 8])
        rows = {tuple(r) for r in np.concatenate([data["train/inputs"], data["test/inputs"]])}
        self.assertEqual(rows, {tuple(r) for r in self.x})  # every row once
        again, _, _ = self.converts("npy_to_hdf5.py", "--npz", self.d / "xy.npz",
                                    "--test-ratio", "0.2")
        np.testing.assert_array_equal(data["test/inputs"], again["test/inputs"])
        other, _, _ = self.converts("npy_to_hdf5.py", "--npz", self.d / "xy.npz",
                                    "--test-ratio", "0.2", "--seed", "9")
        self.assertFalse(np.array_equal(data["test/inputs"], other["test/inputs"]))
        np.save(self.d / "y.npy", y)
        pair, _, _ = self.converts("npy_to_hdf5.py", "--train", self.d / "x.npy", self.d / "y.npy")
        np.testing.assert_array_equal(pair["test/inputs"], data["test/inputs"])  # default 0.2

    def test_npz_of_one_pair_without_test_ratio_says_so(self):
        np.savez(self.d / "xy.npz", X=self.x, y=np.arange(90) % 2)
        self.refuses(r"xy\.npz: holds only X, y, not x_train, .*pass --test-ratio R",
                     "npy_to_hdf5.py", "--npz", self.d / "xy.npz")


class ImageFolders(Converting):
    def test_files_that_are_not_images_are_skipped_and_counted(self):
        for name in ("ant", "bee"):
            os.makedirs(self.d / "img" / name)
            for i in range(5):
                Image.new("L", (4, 4), i * 40).save(self.d / "img" / name / f"{i}.png")
        (self.d / "img" / "ant" / "notes.txt").write_text("taken in May\n")
        (self.d / "img" / "bee" / "Thumbs.db").write_bytes(b"\0\1")
        (self.d / "img" / "LICENSE").write_text("CC-BY\n")
        data, _, stderr = self.converts("images_to_hdf5.py", "--input", self.d / "img")
        self.assertEqual(len(data["train/labels"]) + len(data["test/labels"]), 10)
        self.assertRegex(stderr, r"note: skipped 3 file\(s\) that are not PNG or JPEG images "
                                 r"\(by their names\), e\.g\. .*LICENSE")
        (self.d / "img" / "bee" / "2.png").write_bytes(b"not a png")  # named as one: an error
        self.refuses(r"bee/2\.png: cannot decode the image", "images_to_hdf5.py",
                     "--input", self.d / "img")



if __name__ == "__main__":
    unittest.main()
