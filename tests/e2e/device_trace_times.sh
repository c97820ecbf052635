#!/usr/bin/env bash
# End to end: device times in trace.h5 (issue 31). On a device whose work runs after it is issued
# (the strict device here, a GPU's CUDA events there), every traced instruction of every stream
# gets the time its stream reached it and passed it: finite, begin <= end, in stream order, and
# inside its step; the file says whose clock (device_clock). On the host device, where issuing is
# running, they are NaN and the clock is "none". timeline.py draws either clock.
source "$(dirname "$0")/lib/common.bash"
PY=${WT_PYTHON:-/usr/bin/python3}
"$PY" -c 'import h5py, numpy, matplotlib' || fail "$PY lacks h5py, numpy or matplotlib"
data=$(fashion_mnist_h5)

train() {  # kind schedule run_dir
  "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_lenet.toml" --set "data.path=\"$data\"" \
    --set "device.kind=\"$1\"" --set "schedule.kind=\"$2\"" --set train.global_batch=32 \
    --set trace.enabled=true --set trace.start_step=2 --set trace.end_step=5 \
    --steps 6 --quiet --run-dir "$3" >"$3.txt" 2>&1 || { cat "$3.txt"; fail "$1 $2 run failed"; }
}
train strict ticktock "$dir/strict"  # two streams on one rank
train host gang "$dir/host"

"$PY" - "$dir/strict/trace.h5" "$dir/host/trace.h5" <<'EOF' || fail "device times are wrong"
import sys
import h5py
import numpy as np

def events(path):
    with h5py.File(path, "r") as f:
        clock = f.attrs["device_clock"]
        clock = clock.decode() if isinstance(clock, bytes) else str(clock)
        ev = {k: f["rank_0/events"][k][()] for k in f["rank_0/events"]}
        steps = {k: f["rank_0/steps"][k][()] for k in f["rank_0/steps"]}
    return clock, ev, steps

clock, ev, steps = events(sys.argv[1])
assert clock == "strict", clock
b, e = ev["device_begin"], ev["device_end"]
assert len(b) > 0 and np.isfinite(b).all() and np.isfinite(e).all(), "NaN device times on strict"
assert (b <= e).all(), "an instruction's device span ends before it begins"
streams = sorted(set(ev["stream"].tolist()))
assert len(streams) == 2, f"tick-tock traced streams {streams}"
for step, lo, hi in zip(steps["step"], steps["begin"], steps["end"]):
    mine = ev["step"] == step
    assert (b[mine] >= lo - 1e-9).all() and (e[mine] <= hi + 1e-9).all(), \
        f"step {step}: device times outside the step [{lo}, {hi}]"
    for s in streams:
        on = mine & (ev["stream"] == s)  # rows of one stream are in issue order
        assert (b[on][1:] >= e[on][:-1] - 1e-9).all(), f"step {step} stream {s}: out of order"
busy = (e - b)[np.isin(ev["name"], [b"Forward", b"Backward"])].sum()
assert busy > 0, "no device time in the forward and backward passes"
print(f"strict: {len(b)} instructions on streams {streams}, {busy * 1e3:.1f} ms of device "
      f"forward/backward")

clock, ev, _ = events(sys.argv[2])
assert clock == "none", clock
assert np.isnan(ev["device_begin"]).all() and np.isnan(ev["device_end"]).all(), \
    "the host device recorded device times"
print(f"host: {len(ev['device_begin'])} instructions, no device times")
EOF

for clock in device issue; do
  "$PY" "$WT_SOURCE_DIR/analysis/timeline.py" "$dir/strict" --clock "$clock" \
    -o "$dir/timeline_$clock.png" >"$dir/tl.txt" 2>&1 || { cat "$dir/tl.txt"; fail "timeline.py --clock $clock"; }
  [[ -s "$dir/timeline_$clock.png" ]] || fail "timeline.py --clock $clock wrote nothing"
done
"$PY" "$WT_SOURCE_DIR/tools/trace_to_chrome.py" "$dir/strict" -o "$dir/chrome.json" \
  >"$dir/chrome.txt" 2>&1 || { cat "$dir/chrome.txt"; fail "trace_to_chrome.py"; }
"$PY" - "$dir/chrome.json" <<'EOF2' || fail "no device stream tracks in the Chrome trace"
import json, sys
names = {e["args"]["name"] for e in json.load(open(sys.argv[1]))["traceEvents"]
         if e["ph"] == "M" and e["name"] == "thread_name"}
assert {"device stream 0", "device stream 1"} <= names, names
EOF2
echo "PASS: device times on the strict device, none on the host"
