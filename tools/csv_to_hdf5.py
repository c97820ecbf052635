#!/usr/bin/python3
"""Convert CSV tables (one row per sample, a header row) into a wavetrain HDF5 dataset.

  csv_to_hdf5.py --train train.csv --test test.csv --label class --output data/table.h5
  csv_to_hdf5.py --train all.csv --test-ratio 0.2 --label class --output data/table.h5

The column named by --label holds integer class indices 0..K-1 (1.0 counts as 1) or class names
(e.g. 'malignant', numbered in sorted order or in --class-names' order); a row-id column (named id
or index, unique per row) is dropped unless --keep names it; every other column is a feature
(numbers, stored as float32, or --dtype uint8 for values 0..255). Samples are [F] features, or
--shape C,H,W. Files are read as UTF-8 (a byte-order mark is skipped) unless --encoding names
another. Rows stream through in blocks: memory stays bounded. Exit status: 0 written, 2 bad input
(file, line and column named), 1 other.
"""
import argparse
import codecs
import csv
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from converter_cli import (Progress, add_scale_option, first_undecodable,  # noqa: E402
                           positive_int, print_summary, run_converter, warn_spread)
from dataset_output import ConvertError, DatasetFile, dataset_bytes  # noqa: E402

TOOL = "csv_to_hdf5.py"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train", required=True, help="CSV file of training samples")
    p.add_argument("--test", help="CSV file of test samples (else --test-ratio of --train's rows)")
    p.add_argument("--test-ratio", type=float, default=0.2,
                   help="without --test: share of rows held out for testing, chosen by a seeded draw (default: %(default)s)")
    p.add_argument("--seed", type=int, default=1, help="seed of the held-out draw (default: %(default)s)")
    p.add_argument("--label", required=True, help="name of the label column")
    p.add_argument("--output", required=True, help="HDF5 file to write (appears only when complete)")
    p.add_argument("--dtype", choices=["float32", "uint8"], default="float32", help="feature storage (default: %(default)s)")
    p.add_argument("--shape", help="per-sample shape, e.g. 1,28,28 (default: [number of features])")
    p.add_argument("--num-classes", type=positive_int, help="class count (default: largest label + 1)")
    p.add_argument("--class-names",
                   help="comma-separated class names, one per class: labels that are names are "
                        "numbered in this order (default: class names sorted)")
    p.add_argument("--keep", action="append", default=[], metavar="COLUMN",
                   help="keep this column as a feature even if it looks like a row id (named "
                        "id or index, unique per row), which is otherwise dropped")
    p.add_argument("--delimiter", default=",", help="field separator (default: ',')")
    p.add_argument("--encoding", default="utf-8",
                   help="the files' text encoding, e.g. latin1 or cp1252 for a spreadsheet's "
                        "export (default: %(default)s)")
    add_scale_option(p, "per-feature", "column")
    p.add_argument("--block-rows", type=positive_int, help="rows per written block (default: about a million cells)")
    p.add_argument("--source", default="", help="provenance text stored in the file")
    args = p.parse_args()
    if not args.test and not 0.0 < args.test_ratio < 1.0:
        p.error("--test-ratio must lie strictly between 0 and 1")
    try:
        codecs.lookup(args.encoding)
    except LookupError:
        p.error(f"--encoding: unknown encoding '{args.encoding}' (e.g. utf-8, latin1, cp1252)")
    return args


class CsvRows:
    """The rows of one CSV file as (line, features, label) blocks, checked as they are read."""

    def __init__(self, path, args):
        self.path, self.args = path, args
        # utf-8-sig: a spreadsheet's "CSV UTF-8" export starts with a byte-order mark.
        self.encoding = "utf-8-sig" if codecs.lookup(args.encoding).name == "utf-8" else args.encoding
        try:
            self.file = open(path, newline="", encoding=self.encoding)
        except OSError as e:
            raise ConvertError(path, f"cannot open ({e.strerror})") from None
        self.reader = csv.reader(self.file, delimiter=args.delimiter)
        header = self.next_row()
        if not header:
            raise ConvertError(path, "empty file: expected a header row naming the columns")
        self.header = [h.strip() for h in header]
        for i, name in enumerate(self.header):
            if name in self.header[:i]:
                raise ConvertError(path, f"line 1: column '{name}' is named twice (columns "
                                         f"{self.header.index(name) + 1} and {i + 1}): rename one")
        if args.label not in self.header:
            raise ConvertError(path, f"line 1: no column '{args.label}' (--label); columns: {', '.join(self.header)}")
        for name in args.keep:
            if name not in self.header:
                raise ConvertError(path, f"line 1: no column '{name}' (--keep); columns: "
                                         f"{', '.join(self.header)}")
        self.bytes_read = 0  # approximately, for the progress bar (tell() is off while iterating)
        self.label_col = self.header.index(args.label)
        self.label_map = None  # class name -> index, set by number_labels() for named labels
        # Parsed cells are Python strings (~60 bytes each) until converted: bound them per block.
        self.block_rows = args.block_rows or max(64, (1 << 20) // len(self.header))
        # Read ahead: a block where a column may be a row id (judged on it), else one row (whose
        # label says whether labels are names); the rest streams (a pipe's rows as they come).
        candidates = [c for c, name in enumerate(self.header)
                      if c != self.label_col and name.lower() in ("id", "index")
                      and name not in args.keep]
        self.first_block = self.read_block(self.block_rows if candidates else 1)
        self.dropped = self.id_columns(candidates)
        self.features = [i for i in range(len(self.header))
                         if i != self.label_col and i not in self.dropped]
        if not self.features:
            raise ConvertError(path, "line 1: no feature columns besides the label")

    def id_columns(self, candidates):
        """Of the candidates (columns named id or index, any case, not --keep), those whose
        values differ in every row of the first block: row identifiers, not features."""
        rows, _ = self.first_block
        return [c for c in candidates if len({row[c].strip() for row in rows}) == len(rows) > 1]

    def size_hint(self):
        return os.path.getsize(self.path)

    def next_row(self):
        """The next row, or None at the end; undecodable text and malformed CSV named by line."""
        try:
            return next(self.reader, None)
        except UnicodeDecodeError:
            raise self.decode_error() from None
        except csv.Error as e:
            raise ConvertError(self.path, f"line {self.reader.line_num + 1}: not CSV ({e})") \
                from None

    def decode_error(self):
        with open(self.path, "rb") as f:
            if f.read(2) in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
                return ConvertError(self.path, "UTF-16 text (a spreadsheet's \"Unicode text\" "
                                               "export?): pass --encoding utf-16")
        where = first_undecodable(self.path, self.encoding)
        if where is None:
            return ConvertError(self.path, f"not {self.args.encoding} text")
        line, column, byte, binary = where
        if binary:
            return ConvertError(self.path, f"line {line}: a binary file, not CSV text (byte "
                                           f"{column} is 0x{byte:02x})")
        return ConvertError(self.path, f"line {line}, byte {column}: 0x{byte:02x} is not "
                                       f"{self.args.encoding} (a spreadsheet's Latin-1 or "
                                       "Windows-1252 export?): pass --encoding latin1 (or cp1252), "
                                       f"or convert it: iconv -f latin1 -t utf-8 {self.path} > "
                                       "utf8.csv")

    def blocks(self):
        """Yields (line numbers [n], features [n, F] float64, labels [n] int64)."""
        rows, lines = self.first_block
        self.first_block = ([], [])
        while rows:
            yield self.parse(rows, lines)
            rows, lines = self.read_block()

    def label_texts(self):
        """Every label in the file, as text (a pass of its own, before the conversion's)."""
        again = CsvRows.__new__(CsvRows)
        again.__dict__.update(self.__dict__)
        again.file = open(self.path, newline="", encoding=self.encoding)
        again.reader = csv.reader(again.file, delimiter=self.args.delimiter)
        again.next_row()  # the header
        try:
            while True:
                rows, _ = again.read_block()
                if not rows:
                    return
                for row in rows:
                    yield row[self.label_col].strip()
        finally:
            again.file.close()

    def read_block(self, most=None):
        """Up to `most` (default block_rows) rows and their line numbers, blank lines skipped."""
        rows, lines = [], []
        most = most or self.block_rows
        while len(rows) < most and (row := self.next_row()) is not None:
            line = self.reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # blank line
            if len(row) != len(self.header):
                raise ConvertError(self.path, f"line {line}: {len(row)} fields, the header has {len(self.header)}")
            rows.append(row)
            lines.append(line)
            self.bytes_read += sum(len(f) for f in row) + len(row)
        return rows, lines

    def parse(self, rows, lines):
        labels = np.empty(len(rows), dtype=np.int64)
        for i, row in enumerate(rows):
            labels[i] = self.label(row[self.label_col].strip(), lines[i])
        try:
            features = np.array([[row[c] for c in self.features] for row in rows], dtype=np.float64)
        except ValueError:
            features = self.find_bad_cell(rows, lines)
        bad = ~np.isfinite(features)
        if bad.any():
            i, j = (int(k[0]) for k in np.nonzero(bad))
            raise ConvertError(self.path, f"line {lines[i]}, column '{self.header[self.features[j]]}': "
                                          f"non-finite value '{rows[i][self.features[j]]}'")
        return np.array(lines), features, labels

    def label(self, text, line):
        """A label's class index: its name's number (label_map), or the number it is."""
        where = f"line {line}, column '{self.args.label}'"
        value = whole_number(text)
        if self.label_map is not None:  # names first: --class-names 1,2,3 renumbers 1..3
            for key in (text, str(value)):
                if key in self.label_map:
                    return self.label_map[key]
        if value is None:
            if self.label_map is not None:
                raise ConvertError(self.path, f"{where}: label '{text}' is not one of the class "
                                              f"names ({', '.join(self.label_map)}) (--class-names)")
            raise ConvertError(self.path, f"{where}: label '{text}' is not an integer (class "
                                          "indices 0..K-1, or class names in every row)")
        if value < 0:
            raise ConvertError(self.path, f"{where}: label {text} is negative")
        return value

    def find_bad_cell(self, rows, lines):
        for i, row in enumerate(rows):
            for c in self.features:
                try:
                    float(row[c])
                except ValueError:
                    raise ConvertError(self.path, f"line {lines[i]}, column '{self.header[c]}': "
                                                  f"'{row[c]}' is not a number") from None
        raise AssertionError("a block failed to parse but no cell is bad")


def whole_number(text):
    """The integer a label's text holds ('3', '3.0', '3e0'), or None."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if np.isfinite(value) and value == int(value) else None


def number_labels(readers, names):
    """Class names for labels that are names, the readers told how to number them: --class-names'
    order, or, without it, the names sorted (a pass over the label columns first). Numeric labels
    (the first row's says) keep their numbers. Returns the class names (None if none)."""
    if names:
        for r in readers:
            r.label_map = {n: i for i, n in enumerate(names)}
        return names
    first = readers[0].first_block[0]
    if not first or whole_number(first[0][readers[0].label_col].strip()) is not None:
        return None
    found = set()
    for r in readers:
        if not os.path.isfile(r.path):
            raise ConvertError(r.path, f"labels are class names ('{first[0][r.label_col].strip()}'"
                                       "), read from a pipe: name the classes with --class-names "
                                       "(a file is read twice to find them)")
        found.update(r.label_texts())
    numbers = sorted(t for t in found if whole_number(t) is not None)
    if numbers:
        name = first[0][readers[0].label_col].strip()
        raise ConvertError(readers[0].path, f"column '{readers[0].args.label}' mixes class names "
                                            f"('{name}') and numbers ('{numbers[0]}'): give every "
                                            "row a name, or name them all with --class-names")
    names = sorted(found)
    for r in readers:
        r.label_map = {n: i for i, n in enumerate(names)}
    return names


def stored(features, reader, lines, args, shape):
    if args.dtype == "uint8":
        bad = (features < 0) | (features > 255) | (features != np.round(features))
        if bad.any():
            i, j = (int(k[0]) for k in np.nonzero(bad))
            raise ConvertError(reader.path, f"line {lines[i]}, column "
                                            f"'{reader.header[reader.features[j]]}': {features[i, j]:g} "
                                            "is not a whole number 0..255 (--dtype uint8)")
        return features.astype(np.uint8).reshape((len(features),) + shape)
    return features.astype(np.float32).reshape((len(features),) + shape)


def sample_shape(args, reader):
    if not args.shape:
        return (len(reader.features),)
    try:
        shape = tuple(int(d) for d in args.shape.split(","))
    except ValueError:
        raise ConvertError("--shape", f"expected comma-separated sizes, got '{args.shape}'") from None
    if int(np.prod(shape)) != len(reader.features):
        raise ConvertError(reader.path, f"--shape {list(shape)} has {int(np.prod(shape))} elements, "
                                        f"the file has {len(reader.features)} feature columns")
    return shape


def main():
    args = parse_args()
    started = time.monotonic()
    train = CsvRows(args.train, args)
    test = CsvRows(args.test, args) if args.test else None
    if test and test.header != train.header:
        raise ConvertError(args.test, f"line 1: columns differ from {args.train}'s")
    shape = sample_shape(args, train)
    names = [n.strip() for n in args.class_names.split(",")] if args.class_names else None
    readers = [r for r in (train, test) if r]
    names = number_labels(readers, names)
    for c in train.dropped:
        print(f"{TOOL}: note: {args.train}: column '{train.header[c]}' dropped: a row id (unique "
              f"per row), not a feature; pass --keep {train.header[c]} to keep it", file=sys.stderr)
    if test and test.dropped != train.dropped:
        test.dropped, test.features = train.dropped, train.features
    source = args.source or f"{args.train}, converted by csv_to_hdf5.py"
    size = sum(r.size_hint() for r in (train, test) if r)
    # At least two bytes per CSV field (a digit and a separator): an upper bound on the rows, so
    # small files get small chunks, and on the output's size (the test split's chunk padding too).
    most_rows = size // (2 * (len(train.features) + 1)) + 1
    dtype = np.dtype(args.dtype)
    estimate = dataset_bytes([(most_rows, shape, dtype, (), most_rows),
                              (1, shape, dtype, (), most_rows)], names, source)
    progress = Progress("converting", size, "bytes")
    rng = np.random.default_rng(args.seed)
    with DatasetFile(args.output, estimate) as out:
        out.one_based_fix = ("number them from 0, or name each label in order with "
                             "--class-names (e.g. --class-names 1,2,3 for labels 1 to 3)")
        train_w = out.split("train", shape, dtype, expected_rows=most_rows, source=args.train,
                            row_word="line")
        test_w = out.split("test", shape, dtype, expected_rows=most_rows,
                           source=args.test or args.train, row_word="line")
        for reader in (train, test) if test else (train,):
            for lines, features, labels in reader.blocks():
                x = stored(features, reader, lines, args, shape)
                if reader is test:
                    test_w.append(x, labels, lines)
                elif test:
                    train_w.append(x, labels, lines)
                else:
                    held = rng.random(len(x)) < args.test_ratio
                    test_w.append(x[held], labels[held], lines[held])
                    train_w.append(x[~held], labels[~held], lines[~held])
                progress.done = 0
                progress.advance(sum(r.bytes_read for r in (train, test) if r))
        progress.close()
        classes = args.num_classes or max(len(train_w.class_counts), len(test_w.class_counts))
        if names and len(names) != classes:
            raise ConvertError("--class-names", f"{len(names)} names for {classes} classes")
        mean, std = out.finish(classes, names, args.scale, source)
    print_summary(TOOL, args.output, [train_w, test_w], classes, names, mean, std, started)
    if not args.shape:
        warn_spread(TOOL, train_w, args.scale, [train.header[c] for c in train.features])


if __name__ == "__main__":
    sys.exit(run_converter(TOOL, main))
