#!/usr/bin/python3
"""Converts a DeepPool per-layer GPU profile (its profile/*.prof, e.g. A100_vgg.prof) into a
wavetrain layer profile (profile.h5) for a wavetrain model file, so wavetrain's burst planner can
plan on DeepPool's own measurements:

  tools/deeppool_prof_to_profile.py A100_vgg.prof models/vgg16_sim.toml -o vgg16_a100.h5
  wavetrain inputs/vgg16_sim.toml --show-plan --ranks 8 --profile vgg16_a100.h5 ...

A .prof line is `<layer key> <avg ms> <forward us> <backward us>`, the key DeepPool's planner
builds: layer name, its parameters as sorted JSON, [samples per GPU], input dimensions as JSON
(CostSim.getLayerIdentifier). Every model node is looked up under the key DeepPool would build
for it (conv2d, ReLU2d / ReLU1d, maxPool2d, flatten, linear); dropout and the loss have no
DeepPool layer and cost 0. A node's forward + backward at each batch is DeepPool's avg time (what
its planner adds up), split between the two in the ratio of the forward and backward columns.

DeepPool's VGG-16 at commit cf496d7 builds its ReLUs with inplace=false while the published
profile has inplace=true keys, so its planner misses them and prices each ReLU at 1 us (its
benchGpuTime's fallback). --relu-inplace false --missing 1us reproduces those lookups exactly;
the default (--relu-inplace any --missing error) uses the measured times.
"""
import argparse
import json
import math
import os
import sys
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import numpy as np
    from converter_cli import first_undecodable, run_converter
    from hdf5_output import ConvertError, Hdf5Output
except ImportError as e:
    print(f"deeppool_prof_to_profile.py: needs h5py and numpy ({e}); use /usr/bin/python3",
          file=sys.stderr)
    sys.exit(2)

TOOL = "deeppool_prof_to_profile.py"
FORMAT = "wavetrain-layer-profile"
VERSION = 1


def fail(msg):
    raise ConvertError("", msg)


def read_text(path, what):
    """The file's text; a file that is not UTF-8 text named with its first bad line."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        fail(f"{path}: cannot read ({e.strerror})")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        line, column, byte, _ = first_undecodable(path, "utf-8") or (0, 0, data[0], True)
        fail(f"{path}:{line}: not text (byte {column} is 0x{byte:02x}, not UTF-8): expected {what}")


def read_prof(path):
    """{key: (avg_us, fw_us, bw_us)} as DeepPool's CostSim.loadGpuProfile reads it."""
    table = {}
    what = "a DeepPool .prof file ('<key> <avg ms> <fw us> <bw us>' lines)"
    lines = read_text(path, what).splitlines()
    for number, line in enumerate(lines, 1):
        items = line.strip().split()
        if not items or items[0] == "#config" or items[0] == "SUM(avg)":
            continue  # the header and the per-batch total lines
        if len(items) not in (4, 5):
            fail(f"{path}:{number}: expected '<key> <avg ms> <fw us> <bw us>', got {len(items)} fields")
        try:
            avg, fw, bw = float(items[1]) * 1000, float(items[2]), float(items[3])
        except ValueError:
            fail(f"{path}:{number}: times of '{items[0]}' are not numbers")
        if min(avg, fw, bw) < 0 or not all(map(math.isfinite, (avg, fw, bw))):
            fail(f"{path}:{number}: times of '{items[0]}' must be finite and >= 0")
        table[items[0]] = (avg, fw, bw)  # a later line wins, as in DeepPool's dict
    if not table:
        fail(f"{path}: no profile lines (not a DeepPool .prof file?)")
    return table


def dumps(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def deeppool_layers(model_path, relu_inplace):
    """Per model node: (name, type, key template with {batch}, or None for no DeepPool layer)."""
    try:
        doc = tomllib.loads(read_text(model_path, "a wavetrain model file (TOML)"))
    except tomllib.TOMLDecodeError as e:
        fail(f"{model_path}: not TOML ({e})")
    model, layers = doc.get("model"), doc.get("layer", [])
    if not isinstance(model, dict) or not isinstance(model.get("input"), list) or \
            not model["input"] or "name" not in model:
        fail(f"{model_path}: [model] needs name and input (a wavetrain model file?)")
    if not isinstance(layers, list):
        fail(f"{model_path}: layer must be [[layer]] tables")
    shape = list(model["input"])
    nodes = []
    for index, layer in enumerate(layers):
        name = layer.get("name", f"#{index}") if isinstance(layer, dict) else f"#{index}"
        try:
            kind = layer["type"]
            key, shape = layer_key(layer, shape, relu_inplace)
        except KeyError as e:
            fail(f"{model_path}: layer '{name}': no key {e}")
        except (TypeError, ValueError, IndexError, ZeroDivisionError) as e:
            fail(f"{model_path}: layer '{name}': unusable values ({e})")
        if key is False:
            fail(f"{model_path}: layer '{name}' is a {kind}, which has no DeepPool profile entry "
                 "(conv2d, relu, maxpool2d, flatten, linear, dropout, softmax_xent only)")
        nodes.append((name, kind, key))
    if not nodes:
        fail(f"{model_path}: no [[layer]] tables")
    return model["name"], nodes


def layer_key(layer, shape, relu_inplace):
    """(the DeepPool key template of one layer given its input shape, its output shape); the key
    is None for a layer DeepPool does not time and False for one it does not know."""
    kind = layer["type"]
    dim = dumps(shape) if len(shape) > 1 else dumps(shape[0])
    if kind == "conv2d":
        k, s, p = layer["kernel"], layer.get("stride", 1), layer.get("padding", 0)
        params = {"in_channels": shape[0], "kernel_size": k, "out_channels": layer["out_channels"],
                  "padding": p, "stride": s}
        out = [layer["out_channels"], (shape[1] + 2 * p - k) // s + 1, (shape[2] + 2 * p - k) // s + 1]
        return "conv2d" + dumps(params) + "[{batch}]" + dim, out
    if kind == "maxpool2d":
        k = layer["kernel"]
        s, p = layer.get("stride", k), layer.get("padding", 0)
        out = [shape[0], (shape[1] + 2 * p - k) // s + 1, (shape[2] + 2 * p - k) // s + 1]
        return "maxPool2d" + dumps({"kernel_size": k, "padding": p, "stride": s}) + "[{batch}]" + dim, out
    if kind == "relu":
        relu = "ReLU2d" if len(shape) == 3 else "ReLU1d"
        return [relu + dumps({"inplace": flag, "kernel_size": 1, "padding": 0, "stride": 1}) +
                "[{batch}]" + dim for flag in relu_inplace], shape
    if kind == "flatten":
        return "flatten" + dumps({"kernel_size": 1}) + "[{batch}]" + dim, [math.prod(shape)]
    if kind == "linear":
        key = "linear" + dumps({"bias": True, "in_features": shape[0],
                                "out_features": layer["out_features"]}) + "[{batch}]" + dim
        return key, [layer["out_features"]]
    if kind in ("dropout", "softmax_xent"):
        return None, shape
    return False, shape


def batches_of(table):
    found = set()
    for key in table:
        head, _, rest = key.partition("}[")
        if rest and "]" in rest and rest.split("]")[0].isdigit():
            found.add(int(rest.split("]")[0]))
    return sorted(found)


def lookup(table, keys, batch, missing, where):
    for key in keys if isinstance(keys, list) else [keys]:
        hit = table.get(key.replace("{batch}", str(batch)))
        if hit:
            return hit
    if missing == "1us":
        return (1.0, 1.0, 0.0)  # DeepPool's benchGpuTime when the key is not in its profile
    shown = (keys[0] if isinstance(keys, list) else keys).replace("{batch}", str(batch))
    fail(f"{where}: no profile line '{shown}' (--missing 1us prices it at 1 us, as DeepPool does)")


def fit_line(xs, ys):
    """fixed + per_sample * x through the two largest measured batches (outside the table)."""
    if len(xs) < 2:
        return ys[-1], 0.0
    (x0, y0), (x1, y1) = (xs[-2], ys[-2]), (xs[-1], ys[-1])
    slope = (y1 - y0) / (x1 - x0)
    return max(0.0, y0 - slope * x0), max(0.0, slope)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("prof", help="DeepPool .prof file")
    ap.add_argument("model", help="wavetrain model TOML the profile is for")
    ap.add_argument("-o", "--output", required=True, help="profile.h5 to write")
    ap.add_argument("--relu-inplace", choices=["any", "true", "false"], default="any",
                    help="which ReLU keys to read: DeepPool's VGG at cf496d7 looks up false")
    ap.add_argument("--missing", choices=["error", "1us"], default="error",
                    help="a layer key not in the profile: stop, or 1 us as DeepPool's planner")
    ap.add_argument("--device", default="A100 (DeepPool's profile)", help="device text stored")
    a = ap.parse_args()
    flags = {"any": [True, False], "true": [True], "false": [False]}[a.relu_inplace]
    table = read_prof(a.prof)
    model_name, nodes = deeppool_layers(a.model, flags)
    batches = batches_of(table)
    if not batches:
        fail(f"{a.prof}: no '[samples]' field in any key")
    fw_at, bw_at = [], []
    for name, kind, key in nodes:
        fw_row, bw_row = [], []
        for b in batches:
            if key is None:
                avg, fw, bw = 0.0, 0.0, 0.0
            else:
                avg, fw, bw = lookup(table, key, b, a.missing, f"{a.prof}: node '{name}' ({kind}) at batch {b}")
            share = fw / (fw + bw) if fw + bw > 0 else 0.5
            fw_row.append(avg * share * 1e-6)
            bw_row.append(avg * (1 - share) * 1e-6)
        fw_at.append(fw_row)
        bw_at.append(bw_row)
    write_profile(a.output, model_name, nodes, batches, fw_at, bw_at, a.device)
    print(f"{a.output}: {len(nodes)} nodes of {model_name} at batches {batches}")


def write_profile(path, model_name, nodes, batches, fw_at, bw_at, device):
    import h5py

    with Hdf5Output(path) as out:
        f = out.h5
        f.attrs["format"] = FORMAT
        f.attrs["version"] = np.int64(VERSION)
        f.attrs["model"] = model_name
        f.attrs["device"] = device
        f.create_dataset("nodes", data=[n for n, _, _ in nodes], dtype=h5py.string_dtype("utf-8"))
        lines = [fit_line(batches, row) for row in fw_at], [fit_line(batches, row) for row in bw_at]
        f["forward_fixed_s"] = np.array([c for c, _ in lines[0]], dtype="f8")
        f["forward_per_sample_s"] = np.array([s for _, s in lines[0]], dtype="f8")
        f["backward_fixed_s"] = np.array([c for c, _ in lines[1]], dtype="f8")
        f["backward_per_sample_s"] = np.array([s for _, s in lines[1]], dtype="f8")
        f["batches"] = np.array(batches, dtype="i8")
        f["forward_at"] = np.array(fw_at, dtype="f8").reshape(-1)
        f["backward_at"] = np.array(bw_at, dtype="f8").reshape(-1)
        out.commit()


if __name__ == "__main__":
    sys.exit(run_converter(TOOL, main))
