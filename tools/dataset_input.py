"""A split of a wavetrain HDF5 dataset as wavetrain feeds it to the model: inputs normalised by the
file's mean and std attributes (docs/dataset-format.md), labels as stored. For checking exported
weights outside wavetrain (tools/torch_from_export.py, the e2e walk-through's NumPy pass)."""
import h5py
import numpy as np


def _per_element(values, shape):
    """The file's mean or std (one number, one per channel or one per feature) for every element
    of a sample of `shape`, as the reader applies it."""
    values = np.atleast_1d(np.asarray(values, dtype=np.float64))
    numel = int(np.prod(shape))
    if values.size == 1:
        return np.full(numel, values[0])
    if values.size == numel:
        return values
    return np.repeat(values, numel // values.size)  # per channel: the sample's first dimension


def read_split(path, split="test"):
    """(inputs float32 [N, sample shape...], labels int64 [N]) of /<split>."""
    with h5py.File(path, "r") as f:
        raw = f[f"/{split}/inputs"][()]
        labels = f[f"/{split}/labels"][()].astype(np.int64)
        mean = f.attrs.get("mean", 0.0)
        std = f.attrs.get("std", 1.0)
    shape = raw.shape[1:]
    x = raw.reshape(len(raw), -1).astype(np.float64)
    if raw.dtype == np.uint8:
        x /= 255.0
    x = (x - _per_element(mean, shape)) / _per_element(std, shape)
    return x.astype(np.float32).reshape(raw.shape), labels
