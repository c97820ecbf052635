#!/usr/bin/python3
"""Convert NumPy arrays (.npy pairs, or one .npz) into a wavetrain HDF5 dataset.

  npy_to_hdf5.py --npz mnist.npz --output data/mnist.h5 --shape 1,28,28
  npy_to_hdf5.py --train x_train.npy y_train.npy --test x_test.npy y_test.npy --output d.h5
  npy_to_hdf5.py --npz xy.npz --test-ratio 0.2 --output d.h5      # one X and y, split here

Inputs are [N, ...] arrays: integers 0..255 are stored as uint8, floats as float32. Labels are
[N] class indices (or [N, T] per-token labels), or class names (strings, numbered in sorted
order or in --class-names' order). An .npz holds x_train, y_train, x_test, y_test (Keras' names;
--keys picks others); or, with --test-ratio (or --train without --test), one inputs and one labels
array (x and y, or --keys INPUTS,LABELS), the test split held out per class by a seeded draw.
Rows stream through in blocks: memory stays bounded.
Exit status: 0 written, 2 bad input (named), 1 other.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from converter_cli import (Progress, add_scale_option, positive_int, print_summary,  # noqa: E402
                           run_converter, warn_spread)
from dataset_output import ConvertError, DatasetFile, dataset_bytes  # noqa: E402
from npy_stream import (NpyStream, all_labels, input_block, label_block,  # noqa: E402
                        npz_members, text_labels)

TOOL = "npy_to_hdf5.py"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--npz", help=".npz file holding the train and test arrays")
    p.add_argument("--keys",
                   help="names of the train inputs, train labels, test inputs, test labels in the "
                        ".npz (default: x_train,y_train,x_test,y_test); with --test-ratio, of the "
                        "inputs and labels (default: x,y)")
    p.add_argument("--train", nargs=2, metavar=("INPUTS.npy", "LABELS.npy"), help="training arrays")
    p.add_argument("--test", nargs=2, metavar=("INPUTS.npy", "LABELS.npy"), help="test arrays")
    p.add_argument("--output", required=True, help="HDF5 file to write (appears only when complete)")
    p.add_argument("--shape", help="per-sample shape to store, e.g. 1,28,28 for [N, 28, 28] images (same element count)")
    p.add_argument("--channels-last", action="store_true",
                   help="inputs are [N, H, W, C] (TensorFlow's layout): store them as [N, C, H, W]")
    p.add_argument("--num-classes", type=positive_int, help="class count (default: largest label + 1)")
    p.add_argument("--class-names", help="comma-separated class names, one per class (string "
                                         "labels are numbered in this order)")
    p.add_argument("--test-ratio", type=float,
                   help="hold out this share of each class for the test split, from one inputs "
                        "and one labels array (default 0.2 for --train without --test)")
    p.add_argument("--seed", type=int, default=1,
                   help="seed of the --test-ratio draw (default: %(default)s)")
    add_scale_option(p, None, "feature of [N, F] inputs, one per channel of [N, C, H, W] ones; "
                              "default: per-feature for float [N, F] inputs, else global")
    p.add_argument("--compression", choices=["none", "gzip"], default="none",
                   help="gzip: smaller file, slower reads (default: none, the fast layout)")
    p.add_argument("--block-rows", type=positive_int, default=4096, help="rows per streamed block (default: %(default)s)")
    p.add_argument("--token-ids", action="store_true",
                   help="uint8 inputs are token ids (a text model's): read as the ids themselves, not scaled")
    p.add_argument("--source", default="", help="provenance text stored in the file")
    args = p.parse_args()
    if bool(args.npz) == bool(args.train):
        p.error("give either --npz FILE or --train INPUTS LABELS (with --test INPUTS LABELS)")
    if args.test_ratio is not None and args.test:
        p.error("give either --test INPUTS LABELS or --test-ratio R, not both")
    if args.train and not args.test and args.test_ratio is None:
        args.test_ratio = 0.2
    if args.test_ratio is not None and not 0.0 < args.test_ratio < 1.0:
        p.error("--test-ratio must lie strictly between 0 and 1")
    return args


def npz_keys(args):
    """The .npz member names: 4 (train and test arrays), or 2 (one pair, --test-ratio)."""
    want = 2 if args.test_ratio is not None else 4
    keys = (args.keys or ("x,y" if want == 2 else "x_train,y_train,x_test,y_test")).split(",")
    if len(keys) != want:
        raise ConvertError("--keys", f"expected {want} comma-separated names, got '{args.keys}'")
    members = npz_members(args.npz)
    if want == 2 and not args.keys and members and not set(keys) <= set(members):
        lower = {m.lower(): m for m in members}  # X and y, or X and Y
        keys = [lower.get("x", "x"), lower.get("y", "y")]
    if want == 4 and not args.keys and len(members) == 2 and "x_train" not in members:
        raise ConvertError(args.npz, f"holds only {', '.join(sorted(members))}, not x_train, "
                                     "y_train, x_test, y_test: pass --test-ratio R (e.g. 0.2) to "
                                     "hold out a test split (--keys INPUTS,LABELS names them)")
    return keys


def open_streams(args):
    if args.npz:
        keys = npz_keys(args)
        if len(keys) == 2:
            return {"all": (NpyStream(args.npz, keys[0]), NpyStream(args.npz, keys[1]))}
        return {"train": (NpyStream(args.npz, keys[0]), NpyStream(args.npz, keys[1])),
                "test": (NpyStream(args.npz, keys[2]), NpyStream(args.npz, keys[3]))}
    if not args.test:
        return {"all": (NpyStream(args.train[0]), NpyStream(args.train[1]))}
    return {"train": (NpyStream(args.train[0]), NpyStream(args.train[1])),
            "test": (NpyStream(args.test[0]), NpyStream(args.test[1]))}


def number_labels(streams, names):
    """Class names of string labels: --class-names' order, else sorted (a pass over the labels).
    Returns (names, label_map); label_map is None for numeric labels."""
    labels = [y for _, y in streams.values()]
    kinds = {text_labels(y) for y in labels}
    if kinds == {False}:
        return names, None
    if len(kinds) > 1:
        raise ConvertError(labels[1].where, f"labels are {'strings' if text_labels(labels[1]) else 'numbers'}"
                                            f", those of {labels[0].where} are not")
    if not names:
        names = sorted({str(v) for y in labels for v in np.unique(all_labels(y))})
    return names, {n: i for i, n in enumerate(names)}


def held_out(labels, label_map, ratio, seed):
    """A mask of the rows held out for testing: round(ratio * n) of each class's n rows, drawn
    with the seed (at least one row of each class stays for training)."""
    y = label_block(labels, 0, all_labels(labels), label_map)
    if y.ndim != 1:
        raise ConvertError("--test-ratio", f"labels of shape {list(y.shape)}: a per-class draw "
                                           "needs one label per sample")
    rng = np.random.default_rng(seed)
    mask = np.zeros(len(y), dtype=bool)
    for c in np.unique(y):
        rows = np.flatnonzero(y == c)
        rng.shuffle(rows)
        mask[rows[:min(len(rows) - 1, int(round(len(rows) * ratio)))]] = True
    return mask


def sample_shape(args, inputs):
    shape = tuple(inputs.shape[1:])
    if args.channels_last:
        if len(shape) != 3:
            raise ConvertError(inputs.where, f"--channels-last needs [N, H, W, C] inputs, found {list(inputs.shape)}")
        shape = (shape[2], shape[0], shape[1])
    if args.shape:
        try:
            wanted = tuple(int(d) for d in args.shape.split(","))
        except ValueError:
            raise ConvertError("--shape", f"expected comma-separated sizes, got '{args.shape}'") from None
        if int(np.prod(wanted)) != int(np.prod(shape)):
            raise ConvertError(inputs.where, f"--shape {list(wanted)} has {int(np.prod(wanted))} "
                                             f"elements, samples of {list(shape)} have {int(np.prod(shape))}")
        shape = wanted
    if not shape:
        raise ConvertError(inputs.where, f"inputs of shape {list(inputs.shape)} have no sample dimensions: "
                                         "expected [N, ...] (use --shape to give them one)")
    return shape


def check_pair(split, inputs, labels):
    if len(inputs) != len(labels):
        raise ConvertError(labels.where, f"{len(labels)} labels for the {len(inputs)} {split} samples of {inputs.where}")


def input_dtype(stream):
    kind = stream.dtype.kind
    if kind in "iub":
        return np.uint8
    if kind == "f":
        return np.float32
    raise ConvertError(stream.where, f"unsupported dtype {stream.dtype}: inputs must be integers "
                                     "(0..255, stored as uint8) or floats (stored as float32)")


def convert_split(out, names, inputs, labels, args, progress, label_map=None, test_rows=None):
    """Writes the split(s) `names` from one inputs and labels pair: one split, or, with a mask
    test_rows, ("train", "test") with the masked rows in the test split. Returns the writers."""
    shape = sample_shape(args, inputs)
    dtype = input_dtype(inputs)
    writers = [out.split(name, shape, dtype, tuple(labels.shape[1:]),
                         compression=None if args.compression == "none" else "gzip",
                         expected_rows=len(inputs), source=labels.where) for name in names]
    for (first, x), (_, y) in zip(inputs.blocks(args.block_rows), labels.blocks(args.block_rows)):
        x = input_block(inputs, first, x)
        if args.channels_last:
            x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
        x, y = x.reshape((len(x),) + shape), label_block(labels, first, y, label_map)
        rows = np.arange(first, first + len(x))
        if test_rows is None:
            writers[0].append(x, y, rows=rows)
        else:
            held = test_rows[first:first + len(x)]
            writers[0].append(x[~held], y[~held], rows=rows[~held])
            writers[1].append(x[held], y[held], rows=rows[held])
        progress.advance(len(x))
    return writers


def main():
    args = parse_args()
    started = time.monotonic()
    streams = open_streams(args)
    for split, (inputs, labels) in streams.items():
        check_pair(split, inputs, labels)
        input_dtype(inputs)
    names = [n.strip() for n in args.class_names.split(",")] if args.class_names else None
    names, label_map = number_labels(streams, names)
    source = args.source or f"{args.npz or args.train[0]}, converted by npy_to_hdf5.py"
    estimate = dataset_bytes([(len(x), (int(np.prod(x.shape[1:])),), input_dtype(x), y.shape[1:])
                              for x, y in streams.values()], names, source)
    total = sum(len(x) for x, _ in streams.values())
    progress = Progress("converting", total)
    with DatasetFile(args.output, estimate if args.compression == "none" else 0) as out:
        if "all" in streams:
            x, y = streams["all"]
            writers = convert_split(out, ("train", "test"), x, y, args, progress, label_map,
                                    held_out(y, label_map, args.test_ratio, args.seed))
        else:
            writers = [w for s, (x, y) in streams.items()
                       for w in convert_split(out, (s,), x, y, args, progress, label_map)]
        progress.close()
        seen = max(len(w.class_counts) for w in writers)
        classes = args.num_classes or seen
        if names and len(names) != classes:
            raise ConvertError("--class-names", f"{len(names)} names for {classes} classes")
        scale = args.scale or default_scale(writers[0])
        mean, std = out.finish(classes, names, scale, source, args.token_ids)
    print_summary(TOOL, args.output, writers, classes, names, mean, std, started)
    if len(writers[0].sample_shape) == 1 and not args.token_ids:
        warn_spread(TOOL, writers[0], scale)


def default_scale(train):
    """per-feature for a table (float [N, F] inputs), global for the rest (images, tokens)."""
    tabular = len(train.sample_shape) == 1 and train.dtype == np.float32
    return "per-feature" if tabular else "global"


if __name__ == "__main__":
    sys.exit(run_converter(TOOL, main))
