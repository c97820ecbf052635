#!/usr/bin/env bash
# Speed and peak memory of the Python dataset converters (tools/*_to_hdf5.py) on realistic sizes,
# made from Fashion-MNIST: 70,000 28x28 images as .npy pairs and as one .npz, 10,000 rows of 785
# CSV columns, and 5,000 PNG files in class folders. Beside them, the C++ fmnist_to_hdf5 on the
# same 70,000 images (idx files). Prints seconds, samples/s and peak RSS per converter.
#   bash bench/converter_speed.sh [data/fashion_mnist.h5] [build]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
h5=${1:-$src/data/fashion_mnist.h5}
build=${2:-$src/build}
PY=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/wt-convspeed.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
"$PY" - "$h5" <<'PY'
import os, sys, h5py, numpy as np
from PIL import Image
f = h5py.File(sys.argv[1], "r")
xt, yt, xs, ys = (f[k][:] for k in ("train/inputs", "train/labels", "test/inputs", "test/labels"))
np.save("x_train.npy", xt[:, 0]); np.save("y_train.npy", yt)
np.save("x_test.npy", xs[:, 0]); np.save("y_test.npy", ys)
np.savez("fmnist.npz", x_train=xt[:, 0], y_train=yt, x_test=xs[:, 0], y_test=ys)
with open("fmnist.csv", "w") as out:
    out.write(",".join(f"p{i}" for i in range(784)) + ",label\n")
    for i in range(10000):
        out.write(",".join(map(str, xt[i, 0].ravel())) + f",{yt[i]}\n")
for i in range(5000):
    os.makedirs(f"png/{yt[i]}", exist_ok=True)
    Image.fromarray(xt[i, 0]).save(f"png/{yt[i]}/{i}.png")
PY
measure() {  # label samples command...
  local label=$1 samples=$2
  shift 2
  /usr/bin/time -f "%e %M" -o time.txt "$@" >/dev/null
  read -r seconds kb <time.txt
  awk -v l="$label" -v n="$samples" -v s="$seconds" -v kb="$kb" \
    'BEGIN { printf "%-34s %8d samples %7.2f s %10.0f samples/s  peak RSS %5.0f MB\n", l, n, s, n / s, kb / 1024 }'
}
T=$src/tools
measure "npy_to_hdf5.py (.npy pairs)" 70000 "$PY" "$T/npy_to_hdf5.py" --train x_train.npy y_train.npy \
  --test x_test.npy y_test.npy --shape 1,28,28 --output npy.h5
measure "npy_to_hdf5.py (.npz)" 70000 "$PY" "$T/npy_to_hdf5.py" --npz fmnist.npz --shape 1,28,28 --output npz.h5
measure "csv_to_hdf5.py (785 columns)" 10000 "$PY" "$T/csv_to_hdf5.py" --train fmnist.csv --label label \
  --dtype uint8 --shape 1,28,28 --output csv.h5
measure "images_to_hdf5.py (PNG folders)" 5000 "$PY" "$T/images_to_hdf5.py" --input png --output png.h5
if [[ -x $build/fmnist_to_hdf5 && -d /usr/share/datasets/fashion-mnist ]]; then
  measure "fmnist_to_hdf5 (C++, idx.gz)" 70000 "$build/fmnist_to_hdf5" --output idx.h5
fi
