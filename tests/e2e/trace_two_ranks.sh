#!/usr/bin/env bash
# End to end: HDF5 profiling traces. 2 ranks of the mlp deck with the window [2, 4) of 6 steps;
# trace.h5 is read back with h5py. Then 1 rank whose run ends inside its window [3, 50): the
# trace must still be written, covering steps 3 and 4.
source "$(dirname "$0")/lib/common.bash"
/usr/bin/python3 -c "import h5py, numpy" 2>/dev/null ||
  fail "python3-h5py/python3-numpy are missing (tools/setup.sh installs them)"
data=$(fashion_mnist_h5)
deck="$WT_SOURCE_DIR/inputs/fashion_mlp.toml"
common=(--set "data.path=\"$data\"" --set train.eval_every_epoch=false --set trace.enabled=true)

# Instructions per step on each rank, as the schedule generator emits them.
instructions() {  # ranks -> comma-separated count per rank
  "$WAVETRAIN" "$deck" "${common[@]}" --show-schedule --ranks "$1" |
    awk '/^rank [0-9]+ stream/ { r=$2 } /^ +[0-9]+: / { n[r]++ }
         END { for (r = 0; r in n; r++) printf "%s%d", (r ? "," : ""), n[r] }'
}
per_step2=$(instructions 2)
per_step1=$(instructions 1)
echo "instructions per step: 2 ranks ($per_step2), 1 rank ($per_step1)"
[[ $per_step2 =~ ^[1-9][0-9]*,[1-9][0-9]*$ && $per_step1 =~ ^[1-9][0-9]*$ ]] ||
  fail "could not count instructions in --show-schedule"

mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" --set trace.start_step=2 --set trace.end_step=4 \
  --steps 6 --run-dir "$dir/two" > "$dir/two.txt" || fail "2-rank run failed: $(cat "$dir/two.txt")"
"$WAVETRAIN" "$deck" "${common[@]}" --set trace.start_step=3 --set trace.end_step=50 \
  --steps 5 --run-dir "$dir/one" > "$dir/one.txt" || fail "1-rank run failed: $(cat "$dir/one.txt")"
"$WAVETRAIN" "$deck" --set "data.path=\"$data\"" --set train.eval_every_epoch=false \
  --steps 2 --run-dir "$dir/off" > /dev/null || fail "untraced run failed"
[[ ! -e "$dir/off/trace.h5" ]] || fail "trace.h5 written with trace.enabled = false"

/usr/bin/python3 - "$dir" "$per_step2" "$per_step1" <<'PY' || fail "trace.h5 contents are wrong"
import sys
import h5py
import numpy as np

run_root = sys.argv[1]
per_step2, per_step1 = ([int(x) for x in a.split(",")] for a in sys.argv[2:4])
errors = []

def check(cond, what):
    if not cond:
        errors.append(what)

def check_trace(path, ranks, window, per_rank_instructions, world_size):
    with h5py.File(path, "r") as f:
        a = f.attrs
        check(a["format"] == "wavetrain-trace", f"{path}: format {a['format']!r}")
        check(int(a["version"]) == 1, f"{path}: version")
        check(int(a["world_size"]) == world_size, f"{path}: world_size {a['world_size']}")
        check(a["schedule"] == "gang" and a["model"] == "mlp", f"{path}: schedule/model")
        check(sorted(k for k in f.keys()) == sorted(f"rank_{r}" for r in ranks),
              f"{path}: groups {list(f.keys())}")
        for r in ranks:
            g = f[f"rank_{r}"]
            check(int(g.attrs["rank"]) == r, f"rank_{r}: rank attribute")
            ev, st, mem = g["events"], g["steps"], g["memory"]
            n = len(ev["name"])
            for col in ("stage", "batch", "wave", "stream", "step", "begin", "end", "bytes"):
                check(len(ev[col]) == n, f"rank_{r}: events/{col} length {len(ev[col])} != {n}")
            check(ev["name"].dtype == np.dtype("S16"), f"rank_{r}: name dtype {ev['name'].dtype}")
            expected = per_rank_instructions[r] * len(window)
            check(n == expected, f"rank_{r}: {n} events, expected {expected}")
            steps = st["step"][:]
            check(list(steps) == list(window), f"rank_{r}: steps {list(steps)} != {list(window)}")
            check(set(ev["step"][:]) == set(window), f"rank_{r}: event steps {set(ev['step'][:])}")
            begin, end = ev["begin"][:], ev["end"][:]
            check(np.all(begin <= end), f"rank_{r}: an event ends before it begins")
            check(np.all(begin >= 0), f"rank_{r}: times before the start barrier")
            # Every event lies inside its own step's run_step call.
            sb = dict(zip(steps, st["begin"][:]))
            se = dict(zip(steps, st["end"][:]))
            for s, b, e in zip(ev["step"][:], begin, end):
                if not (sb[s] <= b and e <= se[s]):
                    errors.append(f"rank_{r}: event [{b}, {e}] outside step {s} [{sb[s]}, {se[s]}]")
                    break
            names = [x.decode() for x in ev["name"][:]]
            per_name = {x: names.count(x) for x in set(names)}
            check(per_name.get("LoadBatch", 0) == len(window), f"rank_{r}: LoadBatch {per_name}")
            check(per_name.get("Forward", 0) == len(window), f"rank_{r}: Forward {per_name}")
            check(per_name.get("Step", 0) == len(window), f"rank_{r}: Step {per_name}")
            b = ev["bytes"][:]
            nm = np.array(names)
            check(np.all(b[nm == "LoadBatch"] > 0), f"rank_{r}: LoadBatch without bytes")
            check(np.all(b[(nm == "Forward") | (nm == "Backward")] == 0), f"rank_{r}: compute bytes")
            if world_size > 1:
                check(np.all(b[nm == "AllReduce"] > 0), f"rank_{r}: AllReduce without bytes")
            t = mem["time"][:]
            check(len(t) > 1, f"rank_{r}: {len(t)} memory samples")
            check(len(mem["in_use"]) == len(t) and len(mem["reserved"]) == len(t),
                  f"rank_{r}: memory columns differ in length")
            check(np.all(mem["in_use"][:] <= mem["reserved"][:]), f"rank_{r}: in_use > reserved")
            check(np.all(mem["in_use"][:] > 0), f"rank_{r}: nothing in use")
            # One job on the rank: its own account is everything in use.
            check(np.array_equal(mem["job_in_use"][:], mem["in_use"][:]),
                  f"rank_{r}: the job's bytes in use differ from the device's with one job")
            check(t.min() >= st["begin"][0] - 1 and np.all(np.diff(t) >= 0),
                  f"rank_{r}: memory sample times")

check_trace(f"{run_root}/two/trace.h5", [0, 1], range(2, 4), per_step2, 2)
check_trace(f"{run_root}/one/trace.h5", [0], range(3, 5), per_step1, 1)
for e in errors:
    print("FAIL:", e, file=sys.stderr)
print("trace checks:", "ok" if not errors else f"{len(errors)} failed")
sys.exit(1 if errors else 0)
PY
