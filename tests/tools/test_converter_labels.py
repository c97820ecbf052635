"""Labels as users have them (issue 36): string class labels (CSV and NumPy), float labels
holding whole numbers, labels counting from 1 and one-hot label arrays (refused with how to fix
them), and row-id columns. Every refusal: exit status 2, one line naming the file, no output and
no temporary left behind.
"""

import unittest

import numpy as np

from converter_testing import Converting


class CsvLabels(Converting):
    def rows(self, labels):
        return [(i * 0.5, (i * 7) % 5, labels[i % len(labels)]) for i in range(60)]

    def test_string_labels_are_numbered_in_sorted_order(self):
        f = self.csv("t.csv", "a,b,diagnosis", self.rows(["malignant", "benign", "benign"]))
        data, stdout, _ = self.converts("csv_to_hdf5.py", "--train", f, "--label", "diagnosis")
        self.assertEqual([n.decode() if isinstance(n, bytes) else n
                          for n in data["attrs"]["class_names"]], ["benign", "malignant"])
        y = np.concatenate([data["train/labels"], data["test/labels"]])
        self.assertEqual(int((y == 1).sum()), 20)  # malignant: every third row
        self.assertIn("classes: benign=", stdout)

    def test_string_labels_in_class_names_order(self):
        f = self.csv("t.csv", "a,b,diagnosis", self.rows(["malignant", "benign", "benign"]))
        data, _, _ = self.converts("csv_to_hdf5.py", "--train", f, "--label", "diagnosis",
                                   "--class-names", "malignant,benign", "--test-ratio", "0.1")
        y = np.concatenate([data["train/labels"], data["test/labels"]])
        self.assertEqual(int((y == 0).sum()), 20)

    def test_unknown_name_and_mixed_labels_are_refused(self):
        f = self.csv("t.csv", "a,b,diagnosis", self.rows(["malignant", "benign"]))
        self.refuses(r"t\.csv: line 2, column 'diagnosis': label 'malignant' is not one of the "
                     r"class names \(benign, malign\)", "csv_to_hdf5.py", "--train", f,
                     "--label", "diagnosis", "--class-names", "benign,malign")
        f = self.csv("m.csv", "a,b,diagnosis", self.rows(["malignant", "benign", "2"]))
        self.refuses(r"m\.csv: column 'diagnosis' mixes class names \('malignant'\) and numbers "
                     r"\('2'\)", "csv_to_hdf5.py", "--train", f, "--label", "diagnosis")
        f = self.csv("n.csv", "a,b,diagnosis", self.rows([0, 1, "two"]))
        self.refuses(r"n\.csv: line 4, column 'diagnosis': label 'two' is not an integer",
                     "csv_to_hdf5.py", "--train", f, "--label", "diagnosis")

    def test_float_labels_holding_whole_numbers(self):
        f = self.csv("t.csv", "a,b,k", self.rows(["0.0", "1.0", "2"]))
        data, _, _ = self.converts("csv_to_hdf5.py", "--train", f, "--label", "k")
        y = np.concatenate([data["train/labels"], data["test/labels"]])
        self.assertEqual(sorted(set(y.tolist())), [0, 1, 2])
        f = self.csv("h.csv", "a,b,k", self.rows(["0.0", "1.5"]))
        self.refuses(r"h\.csv: line 3, column 'k': label '1\.5' is not an integer",
                     "csv_to_hdf5.py", "--train", f, "--label", "k")

    def test_labels_from_one_say_how_to_fix_them(self):
        f = self.csv("t.csv", "a,b,k", self.rows([1, 2, 3]))
        self.refuses(r"t\.csv: no label 0: labels run from 1 to 3, but class indices count from "
                     r"0; .*--class-names 1,2,3", "csv_to_hdf5.py", "--train", f, "--label", "k")
        data, _, _ = self.converts("csv_to_hdf5.py", "--train", f, "--label", "k",
                                   "--class-names", "1,2,3")
        self.assertEqual(int(data["attrs"]["num_classes"]), 3)
        self.assertEqual(int(data["train/labels"].max()), 2)

    def test_id_column_dropped_unless_kept(self):
        rows = [(1000 + i, i * 0.5, i % 2) for i in range(40)]
        f = self.csv("t.csv", "Id,x,k", rows)
        data, _, stderr = self.converts("csv_to_hdf5.py", "--train", f, "--label", "k")
        self.assertEqual(data["train/inputs"].shape[1:], (1,))
        self.assertIn("note: " + str(f) + ": column 'Id' dropped: a row id (unique per row), "
                      "not a feature; pass --keep Id to keep it", stderr)
        data, _, stderr = self.converts("csv_to_hdf5.py", "--train", f, "--label", "k",
                                        "--keep", "Id")
        self.assertEqual(data["train/inputs"].shape[1:], (2,))
        self.assertNotIn("dropped", stderr)
        repeated = self.csv("r.csv", "index,x,k", [(i % 3, i * 0.5, i % 2) for i in range(40)])
        data, _, stderr = self.converts("csv_to_hdf5.py", "--train", repeated, "--label", "k")
        self.assertEqual(data["train/inputs"].shape[1:], (2,))  # not unique: a feature
        self.refuses(r"t\.csv: line 1: no column 'ID' \(--keep\)", "csv_to_hdf5.py",
                     "--train", f, "--label", "k", "--keep", "ID")



class NpyLabels(Converting):
    def setUp(self):
        super().setUp()
        rng = np.random.default_rng(4)
        self.x = rng.normal(size=(90, 3)).astype(np.float32)
        np.save(self.d / "x.npy", self.x)

    def test_string_labels(self):
        np.save(self.d / "y.npy", np.array(["dog", "cat", "cat"] * 30))
        np.save(self.d / "yt.npy", np.array(["cat", "dog"] * 5))
        np.save(self.d / "xt.npy", self.x[:10])
        data, _, _ = self.converts("npy_to_hdf5.py", "--train", self.d / "x.npy", self.d / "y.npy",
                                   "--test", self.d / "xt.npy", self.d / "yt.npy")
        self.assertEqual(list(data["attrs"]["class_names"]), ["cat", "dog"])
        self.assertEqual(data["train/labels"][:3].tolist(), [1, 0, 0])
        self.assertEqual(data["test/labels"][:2].tolist(), [0, 1])
        data, _, _ = self.converts("npy_to_hdf5.py", "--train", self.d / "x.npy", self.d / "y.npy",
                                   "--test", self.d / "xt.npy", self.d / "yt.npy",
                                   "--class-names", "dog,cat")
        self.assertEqual(data["train/labels"][:3].tolist(), [0, 1, 1])
        self.refuses(r"y\.npy: row 0: label 'dog' is not one of the class names \(cat, bird\)",
                     "npy_to_hdf5.py", "--train", self.d / "x.npy", self.d / "y.npy", "--test",
                     self.d / "xt.npy", self.d / "yt.npy", "--class-names", "cat,bird")

    def test_labels_from_one_and_one_hot_are_refused_with_the_fix(self):
        np.save(self.d / "y1.npy", np.arange(90) % 3 + 1)
        self.refuses(r"y1\.npy: no label 0: labels run from 1 to 3, .*subtract 1 from every label "
                     r"\(NumPy: y - 1\)", "npy_to_hdf5.py", "--train", self.d / "x.npy",
                     self.d / "y1.npy", "--test", self.d / "x.npy", self.d / "y1.npy")
        np.save(self.d / "yoh.npy", np.eye(3)[np.arange(90) % 3])
        self.refuses(r"yoh\.npy: labels of shape \[90, 3\] are one-hot rows .*y\.argmax\(axis=1\)",
                     "npy_to_hdf5.py", "--train", self.d / "x.npy", self.d / "yoh.npy",
                     "--test", self.d / "x.npy", self.d / "yoh.npy")



if __name__ == "__main__":
    unittest.main()
