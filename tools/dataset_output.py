"""Writing a wavetrain HDF5 dataset (docs/dataset-format.md) in streamed blocks, atomically.

The converters in tools/ append rows block by block, so memory stays bounded whatever the input's
size. The file is written through Hdf5Output (hdf5_output.py): under a temporary name, renamed
into place only when complete, the temporary removed on any failure.
"""
import math

import h5py
import numpy as np

from hdf5_output import ConvertError, Hdf5Output  # noqa: F401 (ConvertError: the converters')

CHUNK_BYTES = 1 << 20  # about 1 MiB per chunk of inputs, whole samples per chunk (fast reads)
LABEL_CHUNK_VALUES = 65536
# HDF5's own bytes besides the chunks, measured with h5py 3.7 / HDF5 1.10 on files of 10 to 10^6
# rows: 18-22 KB for the groups, datasets and attributes of a two-split file, 42-52 bytes of chunk
# index per chunk, and about 40 bytes per class name besides its text. Rounded up; the estimate
# lies within 1% + 32 KB above the real file (e2e.converter_failures checks it on real files).
METADATA_BYTES = 24 << 10
INDEX_BYTES_PER_CHUNK = 64
ATTRIBUTE_BYTES_PER_NAME = 48


def input_chunk_rows(sample_shape, dtype, expected_rows=None):
    row_bytes = max(1, math.prod(sample_shape) * np.dtype(dtype).itemsize)
    rows = max(1, CHUNK_BYTES // row_bytes)
    return min(rows, expected_rows) if expected_rows else rows  # small files stay small


def label_chunk_rows(label_shape, expected_rows=None):
    rows = max(1, LABEL_CHUNK_VALUES // max(1, math.prod(label_shape)))
    return min(rows, expected_rows) if expected_rows else rows


def split_bytes(rows, sample_shape, dtype, label_shape=(), expected_rows=None):
    """Bytes HDF5 allocates for one uncompressed split of `rows` rows: whole chunks (the last
    one padded) and their index entries."""
    expected_rows = expected_rows or rows
    total = 0
    for chunk_rows, row_bytes in (
            (input_chunk_rows(sample_shape, dtype, expected_rows),
             math.prod(sample_shape) * np.dtype(dtype).itemsize),
            (label_chunk_rows(label_shape, expected_rows), math.prod(label_shape) * 4)):
        chunks = -(-rows // chunk_rows)
        total += chunks * (chunk_rows * row_bytes + INDEX_BYTES_PER_CHUNK)
    return total


def dataset_bytes(splits, class_names=None, source=""):
    """The size of an uncompressed dataset file, HDF5's overhead included: splits are
    (rows, sample_shape, dtype[, label_shape[, expected_rows]]) tuples."""
    text = len(source.encode()) + sum(len(n.encode()) + ATTRIBUTE_BYTES_PER_NAME
                                      for n in class_names or ())
    return METADATA_BYTES + text + sum(split_bytes(*s) for s in splits)


def name_classes(classes, class_names, most=10):
    """"1 (b), 2 (c)": class indices with their names, the first `most` of them."""
    named = [f"{c} ({class_names[c]})" if class_names else str(c) for c in classes[:most]]
    more = f" and {len(classes) - most} more" if len(classes) > most else ""
    return ", ".join(named) + more


SCALES = ("none", "global", "per-feature")
SPREAD_WARNING_RATIO = 100.0  # feature spreads this far apart train badly under one scale


class FeatureStats:
    """Per-feature sums of a split's inputs as the reader scales them (uint8 / 255): one feature
    per element of 1-D samples (a table's columns), one per channel (the first dimension) of
    samples with more dimensions (images). Sums are shifted by the first row's values, so a
    column of large values with a small spread keeps its precision."""

    def __init__(self, sample_shape):
        self.features = sample_shape[0] if sample_shape else 1
        self.count = 0
        self.shift = self.sum = self.sq_sum = None
        self.low = self.high = None

    def add(self, inputs, factor=1.0):
        rows = max(1, (1 << 22) // max(1, inputs[0].size)) if len(inputs) else 1
        for start in range(0, len(inputs), rows):  # float64 copies of at most 32 MiB
            self.add_rows(inputs[start:start + rows], factor)

    def add_rows(self, inputs, factor):
        x = np.asarray(inputs, dtype=np.float64).reshape(len(inputs), self.features, -1) * factor
        if self.shift is None:
            self.shift = x[0].mean(axis=1)
            self.sum = np.zeros(self.features)
            self.sq_sum = np.zeros(self.features)
            self.low = np.full(self.features, np.inf)
            self.high = np.full(self.features, -np.inf)
        d = x - self.shift[None, :, None]
        self.sum += d.sum(axis=(0, 2))
        self.sq_sum += np.square(d).sum(axis=(0, 2))
        self.count += x.shape[0] * x.shape[2]
        self.low = np.minimum(self.low, x.min(axis=(0, 2)))
        self.high = np.maximum(self.high, x.max(axis=(0, 2)))

    def mean_std(self):
        """Per-feature mean and std (std 1 where a feature is constant)."""
        if not self.count:
            return np.zeros(self.features), np.ones(self.features)
        d = self.sum / self.count
        std = np.sqrt(np.maximum(0.0, self.sq_sum / self.count - d * d))
        return self.shift + d, np.where(std > 1e-12, std, 1.0)

    def spread_warning(self, names=None):
        """A sentence when the features' spreads differ by SPREAD_WARNING_RATIO or more, else
        None: under one mean and std the small ones barely move the model."""
        if not self.count or self.features < 2:
            return None
        _, std = self.mean_std()
        spread = np.where(std == 1.0, self.high - self.low, std)  # constant: std was set to 1
        live = np.flatnonzero(spread > 0)
        if len(live) < 2:
            return None
        small, large = live[np.argmin(spread[live])], live[np.argmax(spread[live])]
        ratio = spread[large] / spread[small]
        if ratio < SPREAD_WARNING_RATIO:
            return None

        def name(i):
            return f"'{names[i]}'" if names else f"feature {i}"
        return (f"the features' spreads differ by a factor of {ratio:.3g} (std {spread[small]:.3g} "
                f"of {name(small)} .. {spread[large]:.3g} of {name(large)})")


def scaling_text(mean, std, sample_shape=()):
    """How the summary states the normalisation (as wavetrain --check-data does)."""
    mean, std = np.atleast_1d(mean), np.atleast_1d(std)
    if len(mean) == 1:
        return f"normalisation mean {float(mean[0]):.6f} std {float(std[0]):.6f}"
    per = "channel" if len(sample_shape) > 1 else "feature"
    return (f"normalisation per {per} ({len(mean)} {per}s): mean {mean.min():.6g}.."
            f"{mean.max():.6g}, std {std.min():.6g}..{std.max():.6g}")


class SplitWriter:
    """One split, /<name>/inputs and /<name>/labels, grown block by block. `source` names the
    input its rows come from and `row_word` how that input counts them ("row", "line"), for the
    messages about its labels."""

    def __init__(self, h5, name, sample_shape, dtype, label_shape=(), compression=None,
                 expected_rows=None, source="", row_word="row"):
        self.name, self.source, self.row_word = name, source, row_word
        self.sample_shape = tuple(int(d) for d in sample_shape)
        self.label_shape = tuple(int(d) for d in label_shape)
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.dtype(np.uint8), np.dtype(np.float32)):
            raise ValueError(f"inputs must be uint8 or float32, not {self.dtype}")
        chunk_rows = input_chunk_rows(self.sample_shape, self.dtype, expected_rows)
        group = h5.create_group(name)
        self.inputs = group.create_dataset(
            "inputs", shape=(0,) + self.sample_shape, maxshape=(None,) + self.sample_shape,
            dtype=self.dtype, chunks=(chunk_rows,) + self.sample_shape, compression=compression)
        label_chunk = label_chunk_rows(self.label_shape, expected_rows)
        self.labels = group.create_dataset(
            "labels", shape=(0,) + self.label_shape, maxshape=(None,) + self.label_shape,
            dtype="<i4", chunks=(label_chunk,) + self.label_shape)
        self.count = 0
        self.class_counts = np.zeros(0, dtype=np.int64)
        self.largest_label_at = None  # the row (in the source's numbering) of the largest label
        self.value_sum = 0.0  # of inputs as the reader scales them (uint8 / 255), for mean/std
        self.value_sq_sum = 0.0
        self.value_min = np.inf
        self.value_max = -np.inf
        self.features = FeatureStats(self.sample_shape)

    def append(self, inputs, labels, rows=None):
        """Appends a block of rows: inputs [n, *sample_shape], labels [n, *label_shape]; `rows`
        numbers them in the source (default: their index in the split)."""
        n = len(inputs)
        if n == 0:
            return
        assert inputs.shape[1:] == self.sample_shape and labels.shape == (n,) + self.label_shape
        end = self.count + n
        self.inputs.resize(end, axis=0)
        self.inputs[self.count:end] = inputs.astype(self.dtype, copy=False)
        self.labels.resize(end, axis=0)
        self.labels[self.count:end] = labels.astype(np.int32, copy=False)
        counts = np.bincount(labels.ravel(), minlength=len(self.class_counts))
        if len(counts) > len(self.class_counts):  # a new largest label: remember where
            first = int(np.flatnonzero((labels.reshape(n, -1) == len(counts) - 1).any(1))[0])
            self.largest_label_at = int(rows[first]) if rows is not None else self.count + first
        counts[:len(self.class_counts)] += self.class_counts
        self.class_counts = counts
        self.count = end
        if self.dtype == np.uint8:  # exact integer sums, scaled as the reader scales (x / 255)
            self.value_sum += int(inputs.sum(dtype=np.uint64)) / 255.0
            self.value_sq_sum += int(np.square(inputs, dtype=np.uint32).sum(dtype=np.uint64)) / 65025.0
        else:
            self.value_sum += float(inputs.sum(dtype=np.float64))
            self.value_sq_sum += float(np.square(inputs, dtype=np.float64).sum())
        self.features.add(inputs, 1.0 if self.dtype == np.float32 else 1 / 255.0)
        self.value_min = min(self.value_min, float(inputs.min()))
        self.value_max = max(self.value_max, float(inputs.max()))

    def mean_std(self):
        values = self.count * max(1, int(np.prod(self.sample_shape)))
        if values == 0:
            return 0.0, 1.0
        mean = self.value_sum / values
        var = max(0.0, self.value_sq_sum / values - mean * mean)
        std = float(np.sqrt(var))
        return float(mean), std if std > 1e-12 else 1.0


class DatasetFile(Hdf5Output):
    """The output file: a temporary next to `path`, renamed into place by finish()."""

    def __init__(self, path, estimated_bytes=0):
        super().__init__(path, estimated_bytes)
        self.splits = {}
        # How a converter's user renumbers labels that count from 1.
        self.one_based_fix = "subtract 1 from every label (NumPy: y - 1)"

    def split(self, name, sample_shape, dtype, label_shape=(), compression=None, expected_rows=None,
              source="", row_word="row"):
        writer = SplitWriter(self.h5, name, sample_shape, dtype, label_shape, compression,
                             expected_rows, source, row_word)
        self.splits[name] = writer
        return writer

    def check_labels(self, num_classes, class_names):
        """Every label inside [0, num_classes) and every class with training samples; the
        messages name the input the labels came from."""
        train = self.splits.get("train")
        if train is None or train.count == 0:
            raise ConvertError(train.source if train else self.path, "no training samples")
        for w in self.splits.values():
            if len(w.class_counts) > num_classes:
                raise ConvertError(w.source, f"{w.row_word} {w.largest_label_at}: label "
                                             f"{len(w.class_counts) - 1} is outside [0, "
                                             f"{num_classes}) (--num-classes)")
        counts = np.zeros(num_classes, dtype=np.int64)
        counts[:len(train.class_counts)] = train.class_counts
        empty = [int(c) for c in np.flatnonzero(counts == 0)]
        if empty == [0] and num_classes > 1:
            raise ConvertError(train.source, f"no label 0: labels run from 1 to {num_classes - 1}, "
                                             "but class indices count from 0; "
                                             f"{self.one_based_fix}")
        if empty:
            raise ConvertError(train.source, f"class(es) {name_classes(empty, class_names)} of "
                                             f"{num_classes} have no training samples: every "
                                             "class needs some")

    def finish(self, num_classes, class_names=None, scale="global", source="", token_ids=False):
        """Checks the labels, writes the attributes and renames the file into place. `scale`:
        "none" (mean 0, std 1), "global" (one mean and std, the training split's) or
        "per-feature" (arrays: one per feature, see FeatureStats); True and False mean "global"
        and "none". Returns the mean and std written (numbers, or arrays)."""
        scale = {True: "global", False: "none"}.get(scale, scale)
        if scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, not {scale!r}")
        self.check_labels(num_classes, class_names)
        train = self.splits["train"]
        if token_ids or scale == "none":
            mean, std = 0.0, 1.0
        elif scale == "per-feature" and train.features.features > 1:
            mean, std = train.features.mean_std()
        else:
            mean, std = train.mean_std()
        if token_ids:
            self.h5.attrs["token_ids"] = np.int64(1)
        self.h5.attrs["num_classes"] = np.int64(num_classes)
        if class_names:
            self.h5.attrs["class_names"] = np.array(class_names, dtype=h5py.string_dtype())
        if np.ndim(mean):
            self.h5.attrs["mean"] = np.asarray(mean, dtype=np.float64)
            self.h5.attrs["std"] = np.asarray(std, dtype=np.float64)
        else:
            self.h5.attrs["mean"] = float(mean)
            self.h5.attrs["std"] = float(std)
        self.h5.attrs["source"] = source
        self.commit()
        return mean, std
