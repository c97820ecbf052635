#!/usr/bin/env bash
# The converters' failure paths (issue 33): every error a user can cause is one line naming the
# file (and line or row) with exit status 2, never a traceback, and no temporary is left.
#   1. A write that fails during HDF5's final flush (h5py raises RuntimeError there, not OSError):
#      a file size limit (ulimit -f) and a full tmpfs just under the gzip output's size.
#   2. The size estimate includes HDF5's overhead (chunk padding, metadata): an output whose raw
#      data fits but whose file does not is refused up front; the estimate bounds real files.
#   3. Undecodable input: a CSV with a Latin-1 byte (then converted with --encoding latin1), a
#      binary file as CSV and as a DeepPool profile, an image over PIL's decompression-bomb limit.
#   4. A CSV column named twice; label errors name the input and its row or line, not the output;
#      a class without test samples is warned about.
#   5. SIGTERM removes the temporary; an output another process holds open is not replaced.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/converter_checks.bash"
holder=""
mnt="$dir/mnt"
cleanup() {
  [[ -n $holder ]] && kill "$holder" 2>/dev/null
  mountpoint -q "$mnt" 2>/dev/null && { umount "$mnt" 2>/dev/null || umount -l "$mnt"; }
  rm -rf "$dir"
}
trap cleanup EXIT
cd "$dir"

"$PY" - <<'PY'
import os
import numpy as np
from PIL import Image
rng = np.random.default_rng(5)
np.save("x.npy", rng.integers(0, 256, (3000, 32, 32), dtype=np.uint8))  # noise: gzip keeps 3 MB
np.save("y.npy", np.arange(3000) % 3)
np.save("xt.npy", rng.integers(0, 256, (50, 32, 32), dtype=np.uint8))
np.save("yt.npy", np.arange(50) % 3)
with open("table.csv", "w") as f:
    f.write("f1,f2,kind\n")
    for i in range(60):
        f.write(f"{rng.random():.4f},{i % 5},{i % 3}\n")
for split, n in (("train", 6), ("test", 2)):
    for c in ("ant", "bee"):
        os.makedirs(f"img/{split}/{c}")
        for i in range(n if (split, c) != ("test", "bee") else 0):  # test/bee: empty
            Image.fromarray(rng.integers(0, 256, (8, 8), dtype=np.uint8)).save(f"img/{split}/{c}/{i}.png")
PY
npy=(npy_to_hdf5.py --train x.npy y.npy --test xt.npy yt.npy)

# 1. The final flush fails. gzip output has no size estimate, so nothing refuses it up front: a
# limit 4 KiB under its real size lets every chunk through and fails when HDF5 flushes the rest.
converts gz "${npy[@]}" --compression gzip --output gz.h5 >/dev/null
size=$(stat -c %s gz.h5)
set +e
(ulimit -f $((size / 1024 - 4)); exec "$PY" "$tools/npy_to_hdf5.py" "${npy[@]:1}" \
  --compression gzip --output "$dir/limit.h5") >limit.out 2>limit.err
rc=$?
set -e
one_line_error limit "$rc" "limit.h5: the file would exceed the file size limit \(File too large"
[[ ! -e limit.h5 ]] || fail "limit: left limit.h5"
no_temporary limit "$dir"

mkdir -p "$mnt"
if mount -t tmpfs -o size=$(((size / 4096 - 1) * 4))k tmpfs "$mnt" 2>/dev/null; then
  set +e
  "$PY" "$tools/npy_to_hdf5.py" "${npy[@]:1}" --compression gzip --output "$mnt/full.h5" \
    >full.out 2>full.err
  rc=$?
  set -e
  one_line_error full "$rc" "full.h5: the file system is full \(No space left on device\)"
  [[ -z $(ls -A "$mnt") ]] || fail "full: left $(ls -A "$mnt")"
  umount "$mnt"
else
  echo "cannot mount a tmpfs: the full-disk case skipped"
fi

# 2. The estimate. Uncompressed, the raw samples and labels take $raw bytes; the file takes more
# (the last chunk of each split is whole, plus HDF5's metadata). A limit between the two was
# once let through and failed in the final flush; now it is refused before anything is written.
converts plain "${npy[@]}" --output plain.h5 >/dev/null
real=$(stat -c %s plain.h5)
raw=$(((3000 + 50) * (32 * 32 + 4)))
((real - 8192 > raw)) || fail "the output ($real bytes) is not 8 KiB over its raw data ($raw)"
set +e
(ulimit -f $(((real - 8192) / 1024)); exec "$PY" "$tools/npy_to_hdf5.py" "${npy[@]:1}" \
  --output "$dir/tight.h5") >tight.out 2>tight.err
rc=$?
set -e
one_line_error tight "$rc" "tight.h5: the output needs about 3\.[0-9]+ MB: the file would exceed the file size limit of 3\.[0-9]+ MB"
no_temporary tight "$dir"
if mount -t tmpfs -o size=$(((real - 8192) / 4096 * 4))k tmpfs "$mnt" 2>/dev/null; then
  set +e
  "$PY" "$tools/npy_to_hdf5.py" "${npy[@]:1}" --output "$mnt/tight.h5" >tight_fs.out 2>tight_fs.err
  rc=$?
  set -e
  one_line_error tight_fs "$rc" "tight.h5: the output needs about 3\.[0-9]+ MB but the file system holds only 3\.[0-9]+ MB free"
  [[ -z $(ls -A "$mnt") ]] || fail "tight_fs: left $(ls -A "$mnt")"
  umount "$mnt"
fi
# The estimate bounds real files of other shapes too, within 1% + 32 KB (the numbers measured).
PYTHONPATH="$tools" "$PY" - <<'PY' || fail "the size estimate misses real files"
import os
import numpy as np
from dataset_output import DatasetFile, dataset_bytes
cases = [((3, 8, 8), np.float32, 200, 40, (), None), ((128,), np.uint8, 5000, 700, (16,), None),
         ((1,), np.float32, 300000, 1, (), None), ((4,), np.uint8, 900, 100, (), [f"c{i}" for i in range(900)])]
for shape, dtype, n_train, n_test, label_shape, names in cases:
    classes = len(names) if names else 3
    with DatasetFile("est.h5") as out:
        for split, n in (("train", n_train), ("test", n_test)):
            labels = (np.arange(n * int(np.prod(label_shape))) % classes).reshape((n,) + label_shape)
            out.split(split, shape, dtype, label_shape, expected_rows=n).append(
                np.ones((n,) + shape, dtype), labels)
        out.finish(classes, names, source="estimate check")
    real = os.path.getsize("est.h5")
    estimate = dataset_bytes([(n_train, shape, dtype, label_shape), (n_test, shape, dtype, label_shape)],
                             names, "estimate check")
    print(f"{shape} x {n_train}+{n_test}: file {real} bytes, estimate {estimate}")
    assert real <= estimate <= real * 1.01 + 32000, (real, estimate)
PY

# 3. Undecodable input. A spreadsheet's Latin-1 export: one byte (0xe9) in a column's name.
printf 'temp\xe9rature,kind\n' >latin1.csv
tail -n +2 table.csv | cut -d, -f2,3 >>latin1.csv
refuses latin1 "latin1.csv: line 1, byte 5: 0xe9 is not utf-8 .* --encoding latin1 .*iconv -f latin1 -t utf-8 latin1.csv" \
  csv_to_hdf5.py --train latin1.csv --label kind
converts latin1_ok csv_to_hdf5.py --train latin1.csv --label kind --encoding latin1 --output latin1.h5
"$WAVETRAIN" --check-data latin1.h5 | grep -q "^/train: [0-9]* samples, inputs 1 float32" ||
  fail "--encoding latin1: the converted file does not check"
refuses binary_csv "x.npy: line 1: a binary file, not CSV text" csv_to_hdf5.py --train x.npy --label kind
iconv -f utf-8 -t utf-16 table.csv >utf16.csv  # a spreadsheet's "Unicode text": has NUL bytes
refuses utf16 "utf16.csv: UTF-16 text .*: pass --encoding utf-16" csv_to_hdf5.py --train utf16.csv --label kind
set +e
"$PY" "$tools/deeppool_prof_to_profile.py" plain.h5 "$WT_SOURCE_DIR/models/mlp.toml" -o prof.h5 \
  >binary_prof.out 2>binary_prof.err
rc=$?
set -e
one_line_error binary_prof "$rc" "plain.h5:1: not text \(byte 1 is 0x89, not UTF-8\): expected a DeepPool .prof file"
[[ ! -e prof.h5 ]] || fail "binary_prof: wrote prof.h5"
printf '[model]\nname = "m"\ninput = [1, 28, 28]\n[[layer]]\nname = "c1"\ntype = "conv2d"\n' >nokernel.toml
echo 'conv2d{} 1 1 1' >one.prof
set +e
"$PY" "$tools/deeppool_prof_to_profile.py" one.prof nokernel.toml -o prof.h5 >model_key.out 2>model_key.err
rc=$?
set -e
one_line_error model_key "$rc" "nokernel.toml: layer 'c1': no key 'kernel'"
# A PNG whose header claims 20000 x 10000 pixels (PIL refuses more than 2 x 89478485 unread).
cp -r img bomb
"$PY" - <<'PY'
import struct, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
header = struct.pack(">IIBBBBB", 20000, 10000, 8, 0, 0, 0, 0)
with open("bomb/train/bee/3.png", "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))
PY
refuses bomb "bomb/train/bee/3.png: too large to decode safely: Image size \(200000000 pixels\) exceeds limit" \
  images_to_hdf5.py --input bomb

# 4. A column named twice: the second became a feature (here the label's copy, a leak).
awk -F, -v OFS=, '{ print $0, $3 }' table.csv >twice.csv
refuses twice "twice.csv: line 1: column 'kind' is named twice \(columns 3 and 4\)" \
  csv_to_hdf5.py --train twice.csv --label kind
# Label errors name the input and where in it, not the output being written.
refuses label_range "table.csv: line [0-9]+: label 2 is outside \[0, 2\) \(--num-classes\)" \
  csv_to_hdf5.py --train table.csv --label kind --num-classes 2
line=$(sed -E 's/.*line ([0-9]+):.*/\1/' label_range.err)
[[ $(sed -n "${line}p" table.csv) == *,2 ]] || fail "label_range: line $line of table.csv has no label 2"
refuses npy_range "y.npy: row 2: label 2 is outside \[0, 2\) \(--num-classes\)" "${npy[@]}" --num-classes 2
# A block size of 0 (a range step of 0 once) is an argument error like any other.
set +e
"$PY" "$tools/images_to_hdf5.py" --input img --output zero.h5 --block-rows 0 2>zero.err
rc=$?
set -e
[[ $rc == 2 ]] && grep -q "argument --block-rows: expected a whole number of at least 1, got '0'" zero.err &&
  ! grep -q Traceback zero.err || { cat zero.err; fail "--block-rows 0: exit status $rc"; }
# img/test/bee is empty: the file is written, and the class without test samples is warned about.
converts untested images_to_hdf5.py --input img --output untested.h5 >/dev/null
grep -qx "images_to_hdf5.py: warning: img/test: class(es) 1 (bee) of 2 have no test samples: their test accuracy is not measured" \
  untested.err || { cat untested.err; fail "no warning for the untested class"; }
echo "ok untested: $(cat untested.err)"

# 5. SIGTERM while converting: the CSV comes through a pipe that holds back all but one row, so
# the converter is inside its conversion (its temporary exists) when the signal comes.
mkfifo rows.csv
"$PY" "$tools/csv_to_hdf5.py" --train rows.csv --label kind --output term.h5 >term.out 2>term.err &
converter=$!
exec 3<>rows.csv  # read-write: opening it never blocks, even if the converter died
printf 'f1,kind\n0.5,1\n' >&3
for ((i = 0; i < 300; ++i)); do compgen -G "$dir/term.h5.tmp.*" >/dev/null && break; sleep 0.1; done
compgen -G "$dir/term.h5.tmp.*" >/dev/null || fail "sigterm: the converter made no temporary in 30 s"
kill -TERM "$converter"
set +e
wait "$converter"
rc=$?
set -e
exec 3>&-
[[ $rc == 143 ]] || { cat term.err; fail "sigterm: exit status $rc, expected 143"; }
grep -qx "csv_to_hdf5.py: stopped by SIGTERM; nothing written" term.err || { cat term.err; fail "sigterm: message"; }
[[ ! -e term.h5 ]] || fail "sigterm: wrote term.h5"
no_temporary sigterm "$dir"
echo "ok sigterm: $(cat term.err)"

# An output another process has open (HDF5 locks every file it opens, readers included): a job
# reading it, a program writing it. Refused, the file untouched; converted once it is closed.
cp plain.h5 held.h5
cp held.h5 held.before
"$PY" -c 'import h5py, sys, time
f = h5py.File(sys.argv[1], "r"); open(sys.argv[2], "w").close(); time.sleep(120)' held.h5 held.ready &
holder=$!
for ((i = 0; i < 300; ++i)); do [[ -f held.ready ]] && break; sleep 0.1; done
[[ -f held.ready ]] || fail "the holder did not open held.h5 in 30 s"
set +e
"$PY" "$tools/npy_to_hdf5.py" "${npy[@]:1}" --output "$dir/held.h5" >held.out 2>held.err
rc=$?
set -e
one_line_error held "$rc" "held.h5: in use: process $holder \([^)]+\) has it open .*; nothing written"
cmp -s held.h5 held.before || fail "held: the open file was replaced"
no_temporary held "$dir"
kill "$holder"
wait "$holder" 2>/dev/null || true
holder=""
converts held_closed "${npy[@]}" --output held.h5 >/dev/null
echo "converter failures: all cases passed"
