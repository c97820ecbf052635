#!/usr/bin/env bash
# End to end: the bundle a lent GPU machine runs (issue 31, docs/gpu-check.md), made here from
# this build as the GPU session's first call makes it (make-gpu-bundle.sh --tar --training), and
# run by gpu-check.sh --bundle on this machine, which has no GPU: the archive unpacks, every CUDA
# library the binaries need is found, the binary loads with the bundle's libraries and Open MPI,
# and the op check ends with exit status 77 (no GPU seen), as on any machine without one (0 where
# a GPU is seen: the op check then runs for real and must pass).
source "$(dirname "$0")/lib/common.bash"
build=$(dirname "$WAVETRAIN")
[[ -x "$build/wt_cuda_check" ]] || { echo "SKIP: this build has no CUDA (wt_cuda_check)"; exit 77; }

bash "$WT_SOURCE_DIR/tools/make-gpu-bundle.sh" --build "$build" --output "$dir/bundle" --tar \
  --training >"$dir/make.txt" 2>&1 || { cat "$dir/make.txt"; fail "make-gpu-bundle.sh failed"; }
tail -3 "$dir/make.txt"
for f in bin/wavetrain bin/wt_cuda_check bin/fmnist_to_hdf5 bin/text_to_hdf5 ompi/bin/mpirun \
  ompi/bin/orted MANIFEST DEVICE_LIBS; do
  [[ -e "$dir/bundle/$f" ]] || fail "the bundle lacks $f"
done
ls "$dir/bundle/data/fashion-mnist/"*.gz >/dev/null || fail "the bundle lacks Fashion-MNIST"
[[ -s "$dir/bundle/data/kjv.txt.xz" ]] || fail "the bundle lacks the KJV text"

status=0
TMPDIR=$dir bash "$WT_SOURCE_DIR/tools/gpu-check.sh" --bundle "$dir/bundle.tar.xz" \
  --cuda-libs /usr/local/cuda/lib64 >"$dir/check.txt" 2>&1 || status=$?
grep -E 'NOT FOUND|not found|skipped|exit status' "$dir/check.txt" || true
expected=77  # no GPU seen; a CUDA machine with one runs the op check for real
if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then expected=0; fi
[[ $status == "$expected" ]] ||
  { cat "$dir/check.txt"; fail "gpu-check.sh --bundle exited $status, not $expected"; }
((expected == 0)) || grep -q "no CUDA device on this machine" "$dir/check.txt" ||
  fail "the op check did not run"
if grep -qE 'NOT FOUND|=> not found' "$dir/check.txt"; then fail "a library is missing"; fi
echo "ok"
