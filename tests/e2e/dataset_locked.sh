#!/usr/bin/env bash
# End to end: a dataset another program holds open for writing (issue 17 §5). HDF5's file locking
# makes H5Fopen fail with EWOULDBLOCK while a writer has the file open; that used to be reported as
# a damaged file. A Python process (h5py) opens a copy of the dataset for writing and keeps it
# open; a two-rank run on that copy must end with status 2 at once, with one message naming the
# file and saying it is locked by that process, never calling it damaged or corrupt. Once the
# writer has closed the file, the same run trains.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
writer=""
trap '[[ -n $writer ]] && kill "$writer" 2>/dev/null; kill_matching "$dir/run"; rm -rf "$dir"' EXIT
python=${WT_PYTHON:-/usr/bin/python3}
data=$(fashion_mnist_h5)
"$python" "$WT_SOURCE_DIR/tests/e2e/lib/make_dataset.py" "$data" "$dir/data.h5" small

# The writer: opens the file for writing, says so, and holds it until it is told to close it
# (a line on its standard input; its own 120 s limit bounds the test if nobody does).
cat >"$dir/writer.py" <<'PY'
import select, sys, h5py
with h5py.File(sys.argv[1], "a") as f:
    f.attrs["being_edited"] = 1
    open(sys.argv[2], "w").write("open\n")
    select.select([sys.stdin], [], [], 120)
PY
mkfifo "$dir/to_writer"
"$python" "$dir/writer.py" "$dir/data.h5" "$dir/ready" <"$dir/to_writer" &
writer=$!
exec 3>"$dir/to_writer"  # holds the fifo open, so the writer waits for a line, not for EOF
for ((i = 0; i < 600; ++i)); do [[ -f "$dir/ready" ]] && break; sleep 0.1; done
[[ -f "$dir/ready" ]] || fail "the writer did not open the file within 60 s"

run() {  # output_file
  set +e
  timeout 120 mpiexec -n 2 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" \
    --set "data.path=\"$dir/data.h5\"" --steps 3 --run-dir "$dir/run" >"$1" 2>&1
  rc=$?
  set -e
}

start=$SECONDS
run "$dir/locked.txt"
echo "case locked: exit $rc after $((SECONDS - start)) s"
grep "wavetrain: error" "$dir/locked.txt" || true
[[ $rc == 2 ]] || { cat "$dir/locked.txt"; fail "exit status $rc, expected 2"; }
grep -q "^wavetrain: error: $dir/data.h5: locked: process $writer (python3) holds a write lock on it" \
  "$dir/locked.txt" || fail "the message does not say the file is locked by process $writer"
[[ $(grep -c "locked: process" "$dir/locked.txt") == 1 ]] || fail "the message is printed more than once"
grep -Eiq "damaged|corrupt|not an HDF5 file" "$dir/locked.txt" && fail "a locked file was called damaged"
[[ -z $(ls "$dir/run/checkpoints" 2>/dev/null) ]] || fail "checkpoints were written"

echo close >&3  # the writer closes the file: now it reads
exec 3>&-
wait "$writer" || fail "the writer failed"
writer=""
run "$dir/unlocked.txt"
[[ $rc == 0 ]] || { cat "$dir/unlocked.txt"; fail "after the writer closed the file: exit $rc"; }
echo "case unlocked: exit 0"
echo "PASS"
