"""Copies the first rows of a wavetrain dataset into a new file whose train inputs are gzip-chunked
one row per chunk, then overwrites the compressed bytes of one row's chunk: reading that row fails
(a real damaged file), every other row reads as before.

    damaged_dataset.py SOURCE.h5 DEST.h5 BAD_ROW [TRAIN_ROWS] [TEST_ROWS]
"""
import sys

import h5py
import numpy as np


def copy_attrs(src, dst):
    for key, value in src.attrs.items():
        dst.attrs[key] = value


def main():
    source, dest, bad_row = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rows = {"train": int(sys.argv[4]) if len(sys.argv) > 4 else 512,
            "test": int(sys.argv[5]) if len(sys.argv) > 5 else 128}
    with h5py.File(source, "r") as src, h5py.File(dest, "w") as dst:
        copy_attrs(src, dst)
        for split, n in rows.items():
            group = dst.create_group(split)
            copy_attrs(src[split], group)
            inputs = src[split]["inputs"][:n]
            chunks = (1,) + inputs.shape[1:] if split == "train" else None
            ds = group.create_dataset("inputs", data=inputs, chunks=chunks,
                                      compression="gzip" if chunks else None)
            copy_attrs(src[split]["inputs"], ds)
            labels = group.create_dataset("labels", data=src[split]["labels"][:n])
            copy_attrs(src[split]["labels"], labels)
    with h5py.File(dest, "r") as f:
        ds = f["train/inputs"]
        info = ds.id.get_chunk_info_by_coord((bad_row,) + (0,) * (ds.ndim - 1))
        offset, size = info.byte_offset, info.size
    with open(dest, "r+b") as f:
        f.seek(offset)
        f.write(np.full(size, 0xA5, dtype=np.uint8).tobytes())


if __name__ == "__main__":
    main()
