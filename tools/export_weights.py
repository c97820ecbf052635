#!/usr/bin/python3
"""Export a wavetrain checkpoint's trained weights, one array per parameter, named by layer.

  export_weights.py runs/table/checkpoints/step_00000150.h5 --output table_weights.npz

The checkpoint keeps each stage's parameters as one flat float32 vector (/stages/<s>/values);
the layout wavetrain wrote beside it (/stages/<s>/param_layout: name, offset and shape of every
parameter and buffer, docs/checkpoint-format.md) says how to cut it, so this tool applies no
layout rule of its own. The output is a NumPy .npz with one float32 array per key:

  <layer>.<param>    e.g. fc1.weight [out, in], fc1.bias [out]: the layers' own shapes, which are
                     PyTorch's (linear [out, in], conv2d [out, in, kh, kw], ...)
  <layer>.<buffer>   non-trained state, e.g. bn1.running_mean (rank 0's copy)

Only the model (replica 0) is exported, not the optimizer state. Exit status: 0 written;
2 bad input (the file and the dataset named; nothing written); 1 anything else.
"""
import argparse
import json
import os
import sys

import numpy as np

PROG = "export_weights.py"


class ExportError(Exception):
    """Bad input: the message names the file and the item."""


def _layout(f, path, stage):
    key = f"/stages/{stage}/param_layout"
    if key not in f:
        raise ExportError(f"{path}: {key}: missing: the checkpoint was written before wavetrain "
                          "recorded the parameter layout; resume it for one step "
                          "(--restart-from FILE --steps N+1) to write one that has it")
    try:
        return json.loads(bytes(f[key][()]).decode())
    except (ValueError, UnicodeDecodeError) as e:
        raise ExportError(f"{path}: {key}: not a parameter layout ({e})") from None


def _cut(flat, entries, path, key):
    """{name: array} of `entries` cut from `flat`; the entries must tile it exactly."""
    cut, covered = {}, 0
    for e in sorted(entries, key=lambda e: e["offset"]):
        size = int(np.prod(e["shape"], dtype=np.int64))
        if e["offset"] != covered or covered + size > flat.size:
            raise ExportError(f"{path}: {key}: '{e['name']}' at offset {e['offset']} does not "
                              f"follow the previous entry (ends at {covered}) within "
                              f"{flat.size} values")
        cut[e["name"]] = flat[covered:covered + size].reshape(e["shape"]).astype(np.float32)
        covered += size
    if covered != flat.size:
        raise ExportError(f"{path}: {key}: the layout covers {covered} of {flat.size} values")
    return {e["name"]: cut[e["name"]] for e in _file_order(entries)}


def _file_order(entries):
    """Storage order is the stage's layers in reverse: the layers back in model-file order, each
    layer's own entries (weight, bias) as they were."""
    groups = []
    for e in entries:
        layer = e["name"].rsplit(".", 1)[0]
        if not groups or groups[-1][0] != layer:
            groups.append((layer, []))
        groups[-1][1].append(e)
    return [e for _, group in reversed(groups) for e in group]


def read_weights(path):
    """{name: float32 array} of every parameter and buffer of the checkpoint's model, and the
    root attributes (model, step, ...)."""
    import h5py
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise ExportError(f"{path}: cannot open it as an HDF5 checkpoint ({e})") from None
    with f:
        if f.attrs.get("format") not in ("wavetrain-checkpoint", b"wavetrain-checkpoint"):
            raise ExportError(f"{path}: format: not a wavetrain checkpoint")
        info = {k: f.attrs[k] for k in ("model", "step", "stages")}
        weights = {}
        for stage in range(int(info["stages"])):
            layout = _layout(f, path, stage)
            values = np.asarray(f[f"/stages/{stage}/values"][()])
            weights.update(_cut(values, layout["params"], path, f"/stages/{stage}/values"))
            buffers = np.asarray(f[f"/stages/{stage}/buffers"][()])
            row = buffers[0] if buffers.ndim == 2 and buffers.shape[0] else np.zeros(0, np.float32)
            weights.update(_cut(row, layout["buffers"], path, f"/stages/{stage}/buffers"))
    return weights, info


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def main(argv=None):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("checkpoint", help="a wavetrain checkpoint (HDF5)")
    ap.add_argument("--output", required=True, help=".npz file to write (appears only whole)")
    args = ap.parse_args(argv)
    try:
        weights, info = read_weights(args.checkpoint)
    except ExportError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    temp = args.output + ".tmp"
    try:
        with open(temp, "wb") as out:  # a file object: savez adds no .npz to the name
            np.savez(out, **weights)
        os.replace(temp, args.output)
    except OSError as e:
        if os.path.exists(temp):
            os.remove(temp)
        print(f"{PROG}: error: {args.output}: cannot write it ({e.strerror})", file=sys.stderr)
        return 2
    print(f"{PROG}: wrote {args.output}: model '{_text(info['model'])}' after step "
          f"{int(info['step'])}, {len(weights)} arrays")
    for name, array in weights.items():
        print(f"  {name:24s} {list(array.shape)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
