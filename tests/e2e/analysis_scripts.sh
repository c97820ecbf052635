#!/usr/bin/env bash
# End to end: the post-run scripts in analysis/ and tools/trace_to_chrome.py on the run directory
# of a short real 2-rank run with a trace window: each exits 0 and writes a real PNG (or JSON),
# the tables hold numbers; on a directory that is not a run and on files that are not traces
# each exits 2 with one "error:" line naming the path, never a Python traceback.
source "$(dirname "$0")/lib/common.bash"
# Debian's interpreter: the one python3-h5py/numpy/matplotlib install into (tools/setup.sh).
PY=${WT_PYTHON:-/usr/bin/python3}
"$PY" -c 'import h5py, numpy, matplotlib' ||
  fail "$PY lacks h5py, numpy or matplotlib (apt-get install python3-h5py python3-numpy python3-matplotlib)"
A="$WT_SOURCE_DIR/analysis"
CHROME="$WT_SOURCE_DIR/tools/trace_to_chrome.py"
data=$(fashion_mnist_h5)
run="$dir/run"

mpiexec -n 2 --oversubscribe "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" \
  --set "data.path=\"$data\"" --set train.global_batch=32 --set train.log_every_steps=5 \
  --set trace.enabled=true --set trace.start_step=2 --set trace.end_step=6 \
  --steps 30 --quiet --run-dir "$run" >"$dir/train.txt" 2>&1 || { cat "$dir/train.txt"; fail "training run failed"; }

is_png() {  # file: exists and starts with the 8-byte PNG signature
  [[ -s "$1" ]] || fail "$1 was not written"
  [[ $(head -c 8 "$1" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || fail "$1 is not a PNG"
}
ok() {  # name command...: must exit 0; its stdout goes to $dir/<name>.out
  local name=$1; shift
  "$@" >"$dir/$name.out" 2>"$dir/$name.err" || { cat "$dir/$name.out" "$dir/$name.err"; fail "$name exited $?"; }
  cat "$dir/$name.out"
}
expect_error() {  # message command...: must exit 2 with message in one stderr line, no traceback
  local message=$1; shift
  local status=0
  "$@" >/dev/null 2>"$dir/err.txt" || status=$?
  [[ $status == 2 ]] || { cat "$dir/err.txt"; fail "$(basename "$2") $3: exit status $status, expected 2"; }
  grep -qF -- "$(basename "$2"): error: $message" "$dir/err.txt" ||
    { cat "$dir/err.txt"; fail "$(basename "$2") $3: expected '$message'"; }
  ! grep -q Traceback "$dir/err.txt" || { cat "$dir/err.txt"; fail "$(basename "$2"): traceback"; }
}

# Scripts that need only metrics.csv and summary.json.
ok curves "$PY" "$A/curves.py" "$run"
is_png "$run/curves.png"
ok summary "$PY" "$A/summary.py" "$run" --csv "$dir/summary.csv"
is_png "$run/summary.png"
# The run's row: name, 2 ranks, gang, a positive samples/s, a peak memory in MB.
awk '$1=="run" && $2==2 && $3=="gang" && $4+0 > 0 && $NF+0 > 0 { found=1 } END { exit !found }' \
  "$dir/summary.out" || fail "summary table lacks a row with numbers for the run"
[[ $(wc -l <"$dir/summary.csv") == 2 ]] || fail "summary CSV should hold a header and one row"

# Everything that reads the trace.
[[ -f "$run/trace.h5" ]] || fail "the run wrote no trace.h5 although trace.enabled = true"
ok timeline "$PY" "$A/timeline.py" "$run"
is_png "$run/timeline.png"
ok timeline_steps "$PY" "$A/timeline.py" "$run" --steps 3:5 -o "$dir/tl35.png"
is_png "$dir/tl35.png"
ok memory "$PY" "$A/memory.py" "$run"
is_png "$run/memory.png"
for r in 0 1; do  # rank, peak, average, peak reserved (MB), utilisation %: all numbers
  awk -v r=$r '$1==r && $2+0 > 0 && $3+0 > 0 && $4+0 >= $2+0 && $5 ~ /^[0-9.]+%$/ { f=1 } END { exit !f }' \
    "$dir/memory.out" || fail "memory table lacks a row with numbers for rank $r"
done
# With a trace the step-time percentiles and shares are numbers, not n/a.
awk '$1=="run" && $5+0 > 0 && $6+0 >= $5+0 && $7+0 >= $6+0 && $8 ~ /^[0-9.]+$/ { f=1 } END { exit !f }' \
  "$dir/summary.out" || fail "summary table lacks step times from the trace"
ok chrome "$PY" "$CHROME" "$run" -o "$dir/trace.json"
"$PY" - "$dir/trace.json" <<'EOF' || fail "Chrome JSON check failed"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
slices = [e for e in events if e["ph"] == "X" and e.get("cat") != "step"]
for rank in (0, 1):
    mine = [e for e in slices if e["pid"] == rank]
    assert mine, f"no X events for rank {rank}"
    assert all(e["dur"] >= 0 and "batch" in e["args"] for e in mine)
    assert {"Forward", "Backward"} <= {e["name"] for e in mine}, f"rank {rank}: no compute"
    steps = {e["args"]["step"] for e in mine}
    assert steps == {2, 3, 4, 5}, f"rank {rank}: traced steps {steps}, expected 2-5"
    assert any(e["ph"] == "C" and e["pid"] == rank for e in events), f"rank {rank}: no memory"
print(f"chrome trace: {len(slices)} instruction slices on ranks 0 and 1")
EOF

# Bad input: a directory that is not a run ...
mkdir "$dir/not_a_run" && touch "$dir/not_a_run/notes.txt"
for script in "$A/timeline.py" "$A/memory.py" "$A/curves.py" "$A/summary.py" "$CHROME"; do
  expect_error "$dir/not_a_run: not a wavetrain run directory (no metrics.csv)" \
    "$PY" "$script" "$dir/not_a_run"
done
# ... a run whose trace.h5 is an HDF5 file but not a trace (the dataset) ...
mkdir "$dir/bad_trace"
cp "$run/deck.toml" "$run/metrics.csv" "$dir/bad_trace/"
ln -s "$data" "$dir/bad_trace/trace.h5"
for script in "$A/timeline.py" "$A/memory.py" "$A/summary.py" "$CHROME"; do
  expect_error "$dir/bad_trace/trace.h5: not a wavetrain trace (format attribute missing)" \
    "$PY" "$script" "$dir/bad_trace"
done
# ... a trace argument that is not HDF5 at all, a metrics file that is not ours, a missing path.
expect_error "$run/deck.toml: not an HDF5 file" "$PY" "$CHROME" "$run/deck.toml"
expect_error "$run/deck.toml: not an HDF5 file" "$PY" "$A/timeline.py" "$run/deck.toml"
echo "step,loss" >"$dir/bad_trace/metrics.csv"
expect_error "$dir/bad_trace/metrics.csv: not a wavetrain metrics file" "$PY" "$A/curves.py" "$dir/bad_trace"
expect_error "$dir/missing: no such file or directory" "$PY" "$A/summary.py" "$run" "$dir/missing"
# An output over the file size limit (ulimit -f, 8 KiB): the error, and no truncated file left.
# No byte code written: Python would write a module's .pyc cut short by the same limit (it does
# not check for short writes there) and break every later import of that module.
for out in limited.json limited.png; do
  script=$CHROME
  [[ $out == *.png ]] && script=$A/timeline.py
  (
    ulimit -f 8
    export PYTHONDONTWRITEBYTECODE=1
    expect_error "$dir/$out: cannot write: File too large" "$PY" "$script" "$run" -o "$dir/$out"
  )
  [[ -z $(compgen -G "$dir/limited.*") ]] || fail "a write over the limit left $(ls "$dir"/limited.*)"
done
expect_error "$dir/curves.xyz: cannot write a .xyz figure" "$PY" "$A/curves.py" "$run" -o "$dir/curves.xyz"
for script in timeline memory curves summary; do
  "$PY" "$A/$script.py" --help | grep -q "example" || fail "$script.py --help shows no example"
done
echo "analysis scripts: all checks passed"
