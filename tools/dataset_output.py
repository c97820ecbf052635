"""Writing a wavetrain HDF5 dataset (docs/dataset-format.md) in streamed blocks, atomically.

The converters in tools/ append rows block by block, so memory stays bounded whatever the input's
size. The file is written under a temporary name next to the output and renamed into place only
when complete; any failure (bad input found late, a full disk, a file size limit) removes the
temporary, so no half-written file is ever left looking valid.
"""
import errno
import os

import h5py
import numpy as np


class ConvertError(Exception):
    """Bad input or an unwritable output: one message naming the input and the item; exit 2."""

    def __init__(self, where, message):
        super().__init__(f"{where}: {message}" if where else message)


CHUNK_BYTES = 1 << 20  # about 1 MiB per chunk of inputs, whole samples per chunk (fast reads)


def write_failure(path, error):
    """A ConvertError for an OSError raised while writing `path` (disk full, file size limit)."""
    text = str(error)
    if getattr(error, "errno", None) == errno.ENOSPC or "No space left" in text:
        return ConvertError(path, "the file system is full (No space left on device); "
                                  "free space or write elsewhere")
    if getattr(error, "errno", None) == errno.EFBIG or "File too large" in text:
        return ConvertError(path, "the file would exceed the file size limit (File too large; "
                                  "see ulimit -f)")
    return ConvertError(path, f"cannot write: {text}")


class SplitWriter:
    """One split, /<name>/inputs and /<name>/labels, grown block by block."""

    def __init__(self, h5, name, sample_shape, dtype, label_shape=(), compression=None,
                 expected_rows=None):
        self.name = name
        self.sample_shape = tuple(int(d) for d in sample_shape)
        self.label_shape = tuple(int(d) for d in label_shape)
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.dtype(np.uint8), np.dtype(np.float32)):
            raise ValueError(f"inputs must be uint8 or float32, not {self.dtype}")
        row_bytes = max(1, int(np.prod(self.sample_shape)) * self.dtype.itemsize)
        chunk_rows = max(1, CHUNK_BYTES // row_bytes)
        if expected_rows:  # no chunk larger than the whole split: small files stay small
            chunk_rows = min(chunk_rows, expected_rows)
        group = h5.create_group(name)
        self.inputs = group.create_dataset(
            "inputs", shape=(0,) + self.sample_shape, maxshape=(None,) + self.sample_shape,
            dtype=self.dtype, chunks=(chunk_rows,) + self.sample_shape, compression=compression)
        label_chunk = max(1, 65536 // max(1, int(np.prod(self.label_shape))))
        if expected_rows:
            label_chunk = min(label_chunk, expected_rows)
        self.labels = group.create_dataset(
            "labels", shape=(0,) + self.label_shape, maxshape=(None,) + self.label_shape,
            dtype="<i4", chunks=(label_chunk,) + self.label_shape)
        self.count = 0
        self.class_counts = np.zeros(0, dtype=np.int64)
        self.value_sum = 0.0  # of inputs as the reader scales them (uint8 / 255), for mean/std
        self.value_sq_sum = 0.0
        self.value_min = np.inf
        self.value_max = -np.inf

    def append(self, inputs, labels):
        """Appends a block of rows: inputs [n, *sample_shape], labels [n, *label_shape]."""
        n = len(inputs)
        if n == 0:
            return
        assert inputs.shape[1:] == self.sample_shape and labels.shape == (n,) + self.label_shape
        end = self.count + n
        self.inputs.resize(end, axis=0)
        self.inputs[self.count:end] = inputs.astype(self.dtype, copy=False)
        self.labels.resize(end, axis=0)
        self.labels[self.count:end] = labels.astype(np.int32, copy=False)
        self.count = end
        counts = np.bincount(labels.ravel(), minlength=len(self.class_counts))
        counts[:len(self.class_counts)] += self.class_counts
        self.class_counts = counts
        if self.dtype == np.uint8:  # exact integer sums, scaled as the reader scales (x / 255)
            self.value_sum += int(inputs.sum(dtype=np.uint64)) / 255.0
            self.value_sq_sum += int(np.square(inputs, dtype=np.uint32).sum(dtype=np.uint64)) / 65025.0
        else:
            self.value_sum += float(inputs.sum(dtype=np.float64))
            self.value_sq_sum += float(np.square(inputs, dtype=np.float64).sum())
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


class DatasetFile:
    """The output file: a temporary next to `path`, renamed into place by finish()."""

    def __init__(self, path, estimated_bytes=0):
        self.path = path
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise ConvertError(path, f"--output: directory {parent} does not exist")
        if os.path.isdir(path):
            raise ConvertError(path, "--output: is a directory")
        free = os.statvfs(parent)
        free_bytes = free.f_bavail * free.f_frsize
        if estimated_bytes > free_bytes:
            raise ConvertError(path, f"the output needs about {estimated_bytes / 1e6:.1f} MB but "
                                     f"the file system holds only {free_bytes / 1e6:.1f} MB free; "
                                     "free space or write elsewhere")
        self.temp = f"{path}.tmp.{os.getpid()}"
        try:
            self.h5 = h5py.File(self.temp, "w")
        except OSError as e:
            raise write_failure(self.temp, e) from e
        self.splits = {}

    def split(self, name, sample_shape, dtype, label_shape=(), compression=None, expected_rows=None):
        writer = SplitWriter(self.h5, name, sample_shape, dtype, label_shape, compression,
                             expected_rows)
        self.splits[name] = writer
        return writer

    def finish(self, num_classes, class_names=None, normalise=True, source="", token_ids=False):
        """Checks every class has training samples, writes the attributes and renames the file."""
        train = self.splits.get("train")
        if train is None or train.count == 0:
            raise ConvertError(self.path, "no training samples")
        for writer in self.splits.values():
            if len(writer.class_counts) > num_classes:
                raise ConvertError(self.path, f"/{writer.name}/labels: label "
                                              f"{len(writer.class_counts) - 1} is outside "
                                              f"[0, {num_classes}) (--num-classes)")
        counts = np.zeros(num_classes, dtype=np.int64)
        counts[:len(train.class_counts)] = train.class_counts
        empty = [int(c) for c in np.flatnonzero(counts == 0)]
        if empty:
            named = ", ".join(f"{c} ({class_names[c]})" if class_names else str(c) for c in empty)
            raise ConvertError(self.path, f"class(es) {named} of {num_classes} have no training "
                                          "samples: every class needs some")
        mean, std = train.mean_std() if normalise and not token_ids else (0.0, 1.0)
        if token_ids:
            self.h5.attrs["token_ids"] = np.int64(1)
        self.h5.attrs["num_classes"] = np.int64(num_classes)
        if class_names:
            self.h5.attrs["class_names"] = np.array(class_names, dtype=h5py.string_dtype())
        self.h5.attrs["mean"] = float(mean)
        self.h5.attrs["std"] = float(std)
        self.h5.attrs["source"] = source
        try:
            self.h5.flush()
            self.h5.close()
            with open(self.temp, "rb") as f:
                os.fsync(f.fileno())
        except OSError as e:
            raise write_failure(self.path, e) from e
        os.replace(self.temp, self.path)
        return mean, std

    def abandon(self):
        """Closes and removes the temporary (after an error)."""
        try:
            self.h5.close()
        except Exception:  # the close of a file whose writes failed may fail too
            pass
        if os.path.exists(self.temp):
            os.remove(self.temp)

    def __enter__(self):
        return self

    def __exit__(self, kind, value, trace):
        if kind is not None:
            self.abandon()
            if isinstance(value, OSError):
                raise write_failure(self.path, value) from value
        return False
