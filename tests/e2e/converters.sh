#!/usr/bin/env bash
# The dataset converters (tools/npy_to_hdf5.py, csv_to_hdf5.py, images_to_hdf5.py; issue 23):
# good inputs give files the reader accepts (--check-data) with the right counts, class names and
# values; each bad input exits 2 with one message naming the input and the item, and leaves no
# output file and no temporary behind. A full disk is a real tmpfs (skipped where none can be
# mounted); a file size limit is `ulimit -f`.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/converter_checks.bash"
cd "$dir"

"$PY" - <<'PY'
import os
import numpy as np
from PIL import Image
rng = np.random.default_rng(3)
np.save("x.npy", rng.integers(0, 256, (300, 12, 12), dtype=np.uint8))
np.save("y.npy", rng.integers(0, 4, 300).astype(np.int64))
np.save("xt.npy", rng.integers(0, 256, (50, 12, 12), dtype=np.uint8))
np.save("yt.npy", rng.integers(0, 4, 50).astype(np.int64))
np.savez("d.npz", x_train=rng.random((200, 3, 8, 8)), y_train=np.arange(200) % 3,
         x_test=rng.random((40, 3, 8, 8)), y_test=np.arange(40) % 3)
np.save("complex.npy", np.zeros((10, 4), dtype=np.complex64))
np.save("ylong.npy", np.arange(10) % 2)
np.save("yfloat.npy", np.array([0, 1, 0.5, 1] * 75))
np.save("y3.npy", (np.arange(300) % 4 == 3) * 3)  # classes 0 and 3 only: 1 and 2 have none
np.save("big.npy", rng.integers(0, 256, (3000, 32, 32), dtype=np.uint8))  # 3 MB
np.save("ybig.npy", np.arange(3000) % 2)
with open("table.csv", "w") as f:
    f.write("f1,f2,f3,kind\n")
    for i in range(400):
        f.write(f"{rng.random():.5f},{rng.random():.5f},{i % 7},{i % 3}\n")
for c, name in enumerate(["ant", "bee"]):
    os.makedirs(f"img/{name}")
    for i in range(20):
        Image.fromarray(rng.integers(0, 256, (10, 14), dtype=np.uint8)).save(f"img/{name}/{i}.png")
PY

check() {  # file pattern: --check-data accepts it and prints the pattern
  "$WAVETRAIN" --check-data "$1" >"$1.check" || { cat "$1.check"; fail "--check-data $1"; }
  grep -qE -- "$2" "$1.check" || { cat "$1.check"; fail "--check-data $1 lacks '$2'"; }
}

for tool in npy_to_hdf5.py csv_to_hdf5.py images_to_hdf5.py; do
  "$PY" "$tools/$tool" --help | grep -q -- "--output" || fail "$tool --help"
done

# Good inputs.
converts npy npy_to_hdf5.py --train x.npy y.npy --test xt.npy yt.npy --shape 1,12,12 \
  --class-names a,b,c,d --output npy.h5
check npy.h5 "^/train: 300 samples, inputs 1x12x12 uint8"
check npy.h5 "^/test: 50 samples"
check npy.h5 "4 classes: a, b, c, d"
converts npz npy_to_hdf5.py --npz d.npz --compression gzip --output npz.h5
check npz.h5 "^/train: 200 samples, inputs 3x8x8 float32"
check npz.h5 "classes: 0=67 1=67 2=66"
check npz.h5 "through HDF5"
converts csv csv_to_hdf5.py --train table.csv --label kind --output csv.h5
check csv.h5 "^/train: [0-9]+ samples, inputs 3 float32"
"$PY" - <<'PY' || fail "csv.h5: rows lost or labels wrong"
import h5py, numpy as np
f = h5py.File("csv.h5", "r")
n = len(f["train/labels"]) + len(f["test/labels"])
assert n == 400, n
assert 40 < len(f["test/labels"]) < 130, len(f["test/labels"])
x = np.concatenate([f["train/inputs"][:], f["test/inputs"][:]])
y = np.concatenate([f["train/labels"][:], f["test/labels"][:]])
assert sorted(np.unique(x[:, 2])) == list(range(7)) and set(y) == {0, 1, 2}
PY
converts img images_to_hdf5.py --input img --test-ratio 0.25 --output img.h5
check img.h5 "2 classes: ant, bee"
check img.h5 "^/train: 30 samples, inputs 1x10x14 uint8"
check img.h5 "^/test: 10 samples"
grep -q "classes: ant=15 bee=15" img.out || fail "images summary lacks the balance"
# Existing train/ and test/ folders are kept as they are: 16 + 4 images per class.
for c in ant bee; do
  mkdir -p "split/train/$c" "split/test/$c"
  cp img/$c/{0,1,2,3}.png "split/test/$c/"
  cp img/$c/1[0-9].png img/$c/[4-9].png "split/train/$c/"
done
converts split images_to_hdf5.py --input split --output split.h5
check split.h5 "^/train: 32 samples"
check split.h5 "^/test: 8 samples"
check split.h5 "classes: ant=4 bee=4"

# Bad inputs: each named, exit 2, nothing left behind.
refuses npy_dtype "complex.npy: unsupported dtype complex64" npy_to_hdf5.py --train complex.npy ylong.npy --test xt.npy yt.npy
refuses npy_count "ylong.npy: 10 labels for the 300 train samples" npy_to_hdf5.py --train x.npy ylong.npy --test xt.npy yt.npy
refuses npy_float_label "yfloat.npy: row 2: label 0.5 is not a whole number" npy_to_hdf5.py --train x.npy yfloat.npy --test xt.npy yt.npy
refuses npy_empty_class "y3.npy: class\(es\) 1 \(b\), 2 \(c\) of 4 have no training samples" npy_to_hdf5.py --train x.npy y3.npy --test xt.npy yt.npy --class-names a,b,c,d
refuses npz_key "d.npz: no array 'x_val' in the .npz" npy_to_hdf5.py --npz d.npz --keys x_val,y_train,x_test,y_test
refuses npy_missing "nothere.npy: file not found" npy_to_hdf5.py --train nothere.npy y.npy --test xt.npy yt.npy

sed '5s/,[0-9]$/,two/' table.csv >bad_label.csv
refuses csv_label "bad_label.csv: line 5, column 'kind': label 'two' is not an integer" csv_to_hdf5.py --train bad_label.csv --label kind
sed '9s/^[^,]*,/x1,/' table.csv >bad_cell.csv
refuses csv_cell "bad_cell.csv: line 9, column 'f1': 'x1' is not a number" csv_to_hdf5.py --train bad_cell.csv --label kind
sed '12s/,[^,]*$//' table.csv >short.csv
refuses csv_fields "short.csv: line 12: 3 fields, the header has 4" csv_to_hdf5.py --train short.csv --label kind
refuses csv_column "table.csv: line 1: no column 'label'" csv_to_hdf5.py --train table.csv --label label

mkdir empty
refuses img_empty "empty: empty folder" images_to_hdf5.py --input empty
cp -r img ragged && "$PY" -c "from PIL import Image; Image.new('L', (12, 10)).save('ragged/bee/7.png')"
refuses img_ragged "ragged/bee/7.png: ragged sizes: this image is 12x10, .* is 14x10; pass --resize" images_to_hdf5.py --input ragged
cp -r img mixed && "$PY" -c "from PIL import Image; Image.new('RGB', (14, 10)).save('mixed/ant/3.png')"
refuses img_modes "mixed/ant/3.png: mixed modes: this image is RGB, .* is L" images_to_hdf5.py --input mixed
cp -r img noclass && mkdir noclass/cat
refuses img_no_samples "noclass/cat: class 'cat' has no images" images_to_hdf5.py --input noclass
# Files that are not images (by their names) are skipped and counted, not fatal (issue 36).
cp -r img notimage && echo text >notimage/bee/notes.txt && echo text >notimage/README
converts img_not_image images_to_hdf5.py --input notimage --output notimage.h5
grep -q "^images_to_hdf5.py: note: skipped 2 file(s) that are not PNG or JPEG images (by their names), e.g. notimage/README" img_not_image.err ||
  { cat img_not_image.err; fail "img_not_image: no count of the skipped files"; }
check notimage.h5 "^/train: 32 samples"
cp -r img broken && echo garbage >broken/ant/5.png
refuses img_broken "broken/ant/5.png: cannot decode the image" images_to_hdf5.py --input broken
# The same folder converts once told what to do.
converts ragged_resized images_to_hdf5.py --input ragged --resize 14x10 --output resized.h5
converts mixed_to_rgb images_to_hdf5.py --input mixed --mode RGB --output rgb.h5
check rgb.h5 "inputs 3x10x14 uint8"

# A file size limit (ulimit -f, in 1 KiB blocks): the 3 MB output is refused before writing.
set +e
(ulimit -f 1024; "$PY" "$tools/npy_to_hdf5.py" --train big.npy ybig.npy --test xt.npy yt.npy \
  --shape 1,32,32 --output "$dir/limited.h5") >limited.out 2>limited.err
rc=$?
set -e
cat limited.err
[[ $rc == 2 ]] || fail "file size limit: exit status $rc, expected 2"
grep -qE "limited.h5: the output needs about 3\.[0-9]+ MB: the file would exceed the file size limit of 1\.0 MB" limited.err ||
  fail "file size limit: message"
[[ ! -e limited.h5 ]] && ! compgen -G "$dir/*.tmp.*" >/dev/null || fail "file size limit: output left"

# A full disk: a 2 MB tmpfs. The 3 MB output is refused up front (too little free space); an
# output that passes that check but meets a disk filled meanwhile fails while writing.
mnt="$dir/mnt"
mkdir -p "$mnt"
if mount -t tmpfs -o size=2m tmpfs "$mnt" 2>/dev/null; then
  trap 'umount "$mnt" 2>/dev/null || umount -l "$mnt"; rm -rf "$dir"' EXIT
  set +e
  "$PY" "$tools/npy_to_hdf5.py" --train big.npy ybig.npy --test xt.npy yt.npy --shape 1,32,32 \
    --output "$mnt/full.h5" 2>full.err
  rc=$?
  set -e
  cat full.err
  [[ $rc == 2 ]] && grep -qE "full.h5: the output needs about 3\.[0-9]+ MB but the file system holds only" full.err ||
    fail "full disk (up front): status $rc"
  [[ -z $(ls -A "$mnt") ]] || fail "full disk: left $(ls "$mnt")"
  # gzip output has no size estimate; filling the disk meanwhile leaves 0.2 MB for 3 MB of noise.
  "$PY" -c "import numpy as np; np.save('noise.npy', np.random.default_rng(1).integers(0, 256, (3000, 32, 32), dtype=np.uint8))"
  head -c 1800k /dev/zero >"$mnt/filler"
  set +e
  "$PY" "$tools/npy_to_hdf5.py" --train noise.npy ybig.npy --test xt.npy yt.npy --shape 1,32,32 \
    --compression gzip --output "$mnt/full.h5" 2>full2.err
  rc=$?
  set -e
  cat full2.err
  [[ $rc == 2 ]] && grep -q "full.h5: the file system is full" full2.err || fail "full disk (while writing): status $rc"
  [[ $(ls -A "$mnt") == filler ]] || fail "full disk: left $(ls "$mnt")"
else
  echo "cannot mount a tmpfs: the full-disk cases skipped"
fi
echo "converters: all cases passed"
