#!/usr/bin/env python3
"""Exit 0 when two checkpoints hold bitwise the same weights, optimizer state and kept gradients.

usage: same_weights.py A.h5 B.h5 [--tolerance RTOL]
Every float dataset under /stages, /replicas and /kept is compared bit for bit; the first
difference is named. Headers (wall time, provenance) are not compared. --tolerance: equal within
|a - b| <= RTOL * (1 + |b|) instead (a sum in another order: gradients accumulated over
micro-batches).
"""
import sys

import h5py
import numpy as np


def float_datasets(f):
    found = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and obj.dtype.kind == "f":
            if name.split("/")[0] in ("stages", "replicas", "kept"):
                found[name] = obj[()]

    f.visititems(visit)
    return found


def main():
    a_path, b_path = sys.argv[1:3]
    tolerance = float(sys.argv[4]) if sys.argv[3:4] == ["--tolerance"] else None
    with h5py.File(a_path, "r") as fa, h5py.File(b_path, "r") as fb:
        a, b = float_datasets(fa), float_datasets(fb)
    if not a:
        sys.exit(f"{a_path}: no weights found")
    if sorted(a) != sorted(b):
        sys.exit(f"different datasets: {sorted(set(a) ^ set(b))}")
    for name in sorted(a):
        if a[name].shape != b[name].shape:
            sys.exit(f"{name}: shapes differ")
        if tolerance is not None:
            diff = np.abs(a[name].astype(np.float64) - b[name])
            if not np.all(diff <= tolerance * (1 + np.abs(b[name].astype(np.float64)))):
                sys.exit(f"{name}: differs beyond {tolerance} (max |a - b| = {diff.max():.3g})")
        elif not np.array_equal(a[name].view(np.uint32), b[name].view(np.uint32)):
            diff = np.max(np.abs(a[name].astype(np.float64) - b[name]))
            sys.exit(f"{name}: differs (max |a - b| = {diff:.3g})")
    how = "bitwise" if tolerance is None else f"within {tolerance}"
    print(f"{len(a)} datasets, {sum(v.size for v in a.values())} values {how} equal")


if __name__ == "__main__":
    main()
