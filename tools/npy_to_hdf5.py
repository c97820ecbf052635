#!/usr/bin/python3
"""Convert NumPy arrays (.npy pairs, or one .npz) into a wavetrain HDF5 dataset.

  npy_to_hdf5.py --npz mnist.npz --output data/mnist.h5 --shape 1,28,28
  npy_to_hdf5.py --train x_train.npy y_train.npy --test x_test.npy y_test.npy --output d.h5

Inputs are [N, ...] arrays: integers 0..255 are stored as uint8, floats as float32. Labels are
[N] class indices (or [N, T] per-token labels), or class names (strings, numbered in sorted
order or in --class-names' order). An .npz holds x_train, y_train, x_test, y_test
(Keras' names; --keys picks others). Rows stream through in blocks: memory stays bounded.
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
                        text_labels)

TOOL = "npy_to_hdf5.py"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--npz", help=".npz file holding the train and test arrays")
    p.add_argument("--keys", default="x_train,y_train,x_test,y_test",
                   help="names of the train inputs, train labels, test inputs, test labels in the .npz (default: %(default)s)")
    p.add_argument("--train", nargs=2, metavar=("INPUTS.npy", "LABELS.npy"), help="training arrays")
    p.add_argument("--test", nargs=2, metavar=("INPUTS.npy", "LABELS.npy"), help="test arrays")
    p.add_argument("--output", required=True, help="HDF5 file to write (appears only when complete)")
    p.add_argument("--shape", help="per-sample shape to store, e.g. 1,28,28 for [N, 28, 28] images (same element count)")
    p.add_argument("--channels-last", action="store_true",
                   help="inputs are [N, H, W, C] (TensorFlow's layout): store them as [N, C, H, W]")
    p.add_argument("--num-classes", type=positive_int, help="class count (default: largest label + 1)")
    p.add_argument("--class-names", help="comma-separated class names, one per class (string "
                                         "labels are numbered in this order)")
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
    if args.train and not args.test:
        p.error("--train needs --test INPUTS LABELS too (a run evaluates on the test split)")
    return args


def open_streams(args):
    if args.npz:
        keys = args.keys.split(",")
        if len(keys) != 4:
            raise ConvertError("--keys", f"expected 4 comma-separated names, got '{args.keys}'")
        return {"train": (NpyStream(args.npz, keys[0]), NpyStream(args.npz, keys[1])),
                "test": (NpyStream(args.npz, keys[2]), NpyStream(args.npz, keys[3]))}
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


def convert_split(out, name, inputs, labels, args, progress, label_map=None):
    shape = sample_shape(args, inputs)
    dtype = input_dtype(inputs)
    writer = out.split(name, shape, dtype, tuple(labels.shape[1:]),
                       compression=None if args.compression == "none" else "gzip",
                       expected_rows=len(inputs), source=labels.where)
    for (first, x), (_, y) in zip(inputs.blocks(args.block_rows), labels.blocks(args.block_rows)):
        x = input_block(inputs, first, x)
        if args.channels_last:
            x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
        writer.append(x.reshape((len(x),) + shape), label_block(labels, first, y, label_map),
                      rows=np.arange(first, first + len(x)))
        progress.advance(len(x))
    return writer


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
        writers = [convert_split(out, s, x, y, args, progress, label_map) for s, (x, y) in streams.items()]
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
