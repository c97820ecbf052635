"""Small wavetrain datasets for the bad-input tests, cut from a real one.

    make_dataset.py SOURCE.h5 DEST.h5 KIND

KIND: empty_train (no training samples), empty_test (no test samples), classes5 (num_classes
attribute 5 instead of 10, and the first 5 class names), declared_huge (the training split declares 10^8 samples, 78 GB, that
the small file does not hold: chunked datasets never written), small (2048 train, 256 test rows as
cut), fewer_train (2047 train rows: a stale copy one sample short), other_rows (the same counts and
shapes as small, but rows cut from further into the source: same-sized, different data).
"""
import sys

import h5py


def copy(src, dst, rows, skip=0):
    for key, value in src.attrs.items():
        dst.attrs[key] = value
    for split, n in rows.items():
        group = dst.create_group(split)
        for name in ("inputs", "labels"):
            data = src[split][name][skip:skip + n]
            chunks = (max(1, min(64, n)),) + data.shape[1:] if n and name == "inputs" else None
            group.create_dataset(name, data=data, chunks=chunks,
                                 maxshape=(None,) + data.shape[1:] if chunks else None)


def main():
    source, dest, kind = sys.argv[1], sys.argv[2], sys.argv[3]
    rows = {"train": 0 if kind == "empty_train" else 2047 if kind == "fewer_train" else 2048,
            "test": 0 if kind == "empty_test" else 256}
    with h5py.File(source, "r") as src, h5py.File(dest, "w") as dst:
        copy(src, dst, rows, skip=4096 if kind == "other_rows" else 0)
        if kind == "classes5":
            dst.attrs["num_classes"] = 5
            if "class_names" in dst.attrs:  # one name per class, or the reader refuses the names
                dst.attrs["class_names"] = dst.attrs["class_names"][:5]
        if kind == "declared_huge":
            del dst["train"]
            group = dst.create_group("train")
            n = 10 ** 8
            group.create_dataset("inputs", shape=(n, 1, 28, 28), dtype="u1", chunks=(1024, 1, 28, 28))
            group.create_dataset("labels", shape=(n,), dtype="i4", chunks=(65536,))


if __name__ == "__main__":
    main()
