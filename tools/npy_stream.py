"""Reading a .npy array, or one member of an .npz, a block of rows at a time.

np.load would read a whole .npz member into memory; this reads the header, then the rows in
blocks, from the file or straight from the zip member, so memory stays bounded.
"""
import zipfile

import numpy as np

from dataset_output import ConvertError


class NpyStream:
    """Rows of one array: shape, dtype and blocks(rows) of at most `rows` rows each."""

    def __init__(self, path, member=None):
        self.where = f"{path}[{member}]" if member else path
        self.path, self.member = path, member
        try:
            if member is None:
                self.file = open(path, "rb")
            else:
                self.zip = zipfile.ZipFile(path)
                names = {n[:-4] if n.endswith(".npy") else n: n for n in self.zip.namelist()}
                if member not in names:
                    raise ConvertError(path, f"no array '{member}' in the .npz; it has: "
                                             f"{', '.join(sorted(names)) or 'nothing'}")
                self.file = self.zip.open(names[member])
            version = np.lib.format.read_magic(self.file)
            if version == (1, 0):
                header = np.lib.format.read_array_header_1_0(self.file)
            else:
                header = np.lib.format.read_array_header_2_0(self.file)
        except ConvertError:
            raise
        except FileNotFoundError:
            raise ConvertError(path, "file not found") from None
        except (OSError, ValueError, zipfile.BadZipFile) as e:
            raise ConvertError(self.where, f"not a NumPy array file ({e})") from None
        self.shape, fortran, self.dtype = header
        if fortran and len(self.shape) > 1:
            raise ConvertError(self.where, "Fortran-ordered array: save it with "
                                           "np.save(path, np.ascontiguousarray(a))")
        if self.dtype.hasobject or self.dtype.fields is not None:
            raise ConvertError(self.where, f"unsupported dtype {self.dtype} (object or structured "
                                           "arrays: store numbers)")
        if len(self.shape) == 0:
            raise ConvertError(self.where, "a scalar, not an array of samples")

    def __len__(self):
        return int(self.shape[0])

    def blocks(self, rows):
        """Yields (first_row, array) for consecutive blocks of at most `rows` rows."""
        row_shape = tuple(self.shape[1:])
        row_bytes = int(np.prod(row_shape, dtype=np.int64)) * self.dtype.itemsize
        for first in range(0, len(self), rows):
            n = min(rows, len(self) - first)
            data = self.file.read(n * row_bytes)
            if len(data) != n * row_bytes:
                raise ConvertError(self.where, f"file ends inside row {first + len(data) // max(1, row_bytes)} "
                                               f"of {len(self)} (truncated)")
            yield first, np.frombuffer(data, dtype=self.dtype).reshape((n,) + row_shape)

    def close(self):
        self.file.close()
        if hasattr(self, "zip"):
            self.zip.close()


def input_block(stream, first, block):
    """Inputs of one block as uint8 or float32: integers must lie in 0..255, floats be finite."""
    kind = block.dtype.kind
    if block.dtype == np.uint8:
        return block
    if kind in "iub":
        bad = np.flatnonzero((block.reshape(len(block), -1) < 0).any(1) |
                             (block.reshape(len(block), -1) > 255).any(1))
        if len(bad):
            row = first + int(bad[0])
            raise ConvertError(stream.where, f"row {row}: integer inputs must lie in 0..255 to be "
                                             f"stored as uint8, found {block[bad[0]].min()}.."
                                             f"{block[bad[0]].max()}; convert to float32 first")
        return block.astype(np.uint8)
    if kind == "f":
        out = block.astype(np.float32)
        finite = np.isfinite(out.reshape(len(out), -1)).all(1)
        if not finite.all():
            row = first + int(np.flatnonzero(~finite)[0])
            raise ConvertError(stream.where, f"row {row}: non-finite value (NaN or Inf, or beyond "
                                             "float32's range)")
        return out
    raise ConvertError(stream.where, f"unsupported dtype {block.dtype}: inputs must be integers "
                                     "(0..255, stored as uint8) or floats (stored as float32)")


def npz_members(path):
    """The array names in an .npz (without .npy), [] if it cannot be read as one."""
    try:
        with zipfile.ZipFile(path) as z:
            return [n[:-4] if n.endswith(".npy") else n for n in z.namelist()]
    except (OSError, zipfile.BadZipFile):
        return []


def all_labels(stream, rows=65536):
    """Every row of a label array, read through a fresh stream (the given one stays unread)."""
    again = NpyStream(stream.path, stream.member)
    try:
        return np.concatenate([b for _, b in again.blocks(rows)] or
                              [np.zeros((0,) + tuple(stream.shape[1:]), stream.dtype)])
    finally:
        again.close()


def text_labels(stream):
    """Whether a label array holds strings (class names)."""
    return stream.dtype.kind in "US"


def check_one_hot(stream, block):
    """Refuses [N, K] labels of 0s and 1s, one 1 per row: one-hot rows, not class indices."""
    if block.ndim != 2 or block.shape[1] < 2 or not len(block) or block.dtype.kind not in "iubf":
        return
    if np.isin(block, (0, 1)).all() and (block.sum(axis=1) == 1).all():
        raise ConvertError(stream.where, f"labels of shape {list(stream.shape)} are one-hot rows "
                                         "(one 1 per row): store class indices instead, "
                                         "np.save(path, y.argmax(axis=1))")


def label_block(stream, first, block, label_map=None):
    """Labels of one block as int32: integers >= 0 (or floats holding whole numbers), or class
    names numbered by label_map."""
    kind = block.dtype.kind
    if first == 0:
        check_one_hot(stream, block)
    if kind in "US":
        flat = block.reshape(-1)
        numbers = np.array([label_map.get(str(v), -1) for v in flat], dtype=np.int64)
        if (numbers < 0).any():
            at = int(np.flatnonzero(numbers < 0)[0])
            per = max(1, flat.size // max(1, len(block)))
            raise ConvertError(stream.where, f"row {first + at // per}: label '{flat[at]}' is not "
                                             f"one of the class names ({', '.join(label_map)}) "
                                             "(--class-names)")
        return numbers.reshape(block.shape).astype(np.int32)
    if kind == "f":
        flat = block.reshape(len(block), -1)
        whole = np.isfinite(flat) & (flat == np.round(flat))
        if not whole.all():
            row, col = (int(i[0]) for i in np.nonzero(~whole))
            raise ConvertError(stream.where, f"row {first + row}: label {flat[row, col]!r} is not "
                                             "a whole number (labels are class indices 0..K-1)")
    elif kind not in "iub":
        raise ConvertError(stream.where, f"unsupported label dtype {block.dtype}: labels must be "
                                         "integer class indices 0..K-1")
    if len(block) and (block.min() < 0 or block.max() > np.iinfo(np.int32).max):
        rows = np.flatnonzero(((block < 0) | (block > np.iinfo(np.int32).max)).reshape(len(block), -1).any(1))
        row = first + int(rows[0])
        raise ConvertError(stream.where, f"row {row}: label outside 0..2^31-1 "
                                         f"({block[rows[0]]!r})")
    return block.astype(np.int32)
