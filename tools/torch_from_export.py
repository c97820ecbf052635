#!/usr/bin/python3
"""Load weights exported by tools/export_weights.py into the equivalent PyTorch model and measure
its accuracy on a dataset's test split: an example of using a wavetrain model outside wavetrain.

  torch_from_export.py models/table_mlp.toml table_weights.npz data/table.h5

The PyTorch model is built from the wavetrain model file: a plain chain of linear, relu, dropout
and flatten layers (an MLP) ending in softmax_xent, which becomes the argmax of the logits. The
arrays load under their own names (fc1.weight into the nn.Linear built for layer fc1): wavetrain's
shapes are PyTorch's. Prints "test accuracy A (C of N)". Exit status: 0; 2 a model this example
does not build, or weights that do not fit it; 1 anything else.
"""
import argparse
import sys
import tomllib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dataset_input import read_split  # noqa: E402

PROG = "torch_from_export.py"


def build(model_file, torch):
    """An nn.Sequential of the model file's layers (the loss left out), each module named as the
    wavetrain layer."""
    with open(model_file, "rb") as f:
        doc = tomllib.load(f)
    features = int(np.prod(doc["model"]["input"]))
    layers = []
    for layer in doc["layer"]:
        kind, name = layer["type"], layer["name"]
        if layer.get("inputs", None) not in (None, [layers[-1][0] if layers else "input"]):
            raise ValueError(f"{model_file}: layer '{name}': only a plain chain of layers is built")
        if kind == "linear":
            out = int(layer["out_features"])
            layers.append((name, torch.nn.Linear(features, out, bias=layer.get("bias", True))))
            features = out
        elif kind in ("relu", "dropout", "flatten"):
            module = {"relu": torch.nn.ReLU, "dropout": torch.nn.Identity,  # evaluation: no drop
                      "flatten": torch.nn.Flatten}[kind]()
            layers.append((name, module))
        elif kind == "softmax_xent" and layer is doc["layer"][-1]:
            break
        else:
            raise ValueError(f"{model_file}: layer '{name}': type '{kind}' is not built by this "
                             "example (linear, relu, dropout, flatten, then softmax_xent)")
    from collections import OrderedDict
    return torch.nn.Sequential(OrderedDict(layers))


def main(argv=None):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("model", help="the wavetrain model file (TOML) the weights were trained as")
    ap.add_argument("weights", help=".npz written by tools/export_weights.py")
    ap.add_argument("data", help="a wavetrain HDF5 dataset")
    ap.add_argument("--split", default="test", help="the split to measure (default: test)")
    args = ap.parse_args(argv)
    import torch
    try:
        net = build(args.model, torch)
        with np.load(args.weights) as arrays:
            state = {k: torch.from_numpy(arrays[k]) for k in arrays.files}
        net.load_state_dict(state, strict=True)
    except (ValueError, KeyError, RuntimeError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    x, y = read_split(args.data, args.split)
    net.eval()
    with torch.no_grad():
        predicted = net(torch.from_numpy(x)).argmax(dim=1).numpy()
    correct = int((predicted == y).sum())
    print(f"test accuracy {correct / len(y):.6f} ({correct} of {len(y)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
