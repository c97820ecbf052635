#!/usr/bin/env bash
# End to end: the gang schedule on 2 MPI ranks, each reading its shard from the same HDF5 file.
# Both ranks must finish, rank 0 alone writes the run directory, and the loss must fall.
# summary.json gives every rank's device memory peaks (rank 0's are also the top-level ones).
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
mpiexec -n 2 --oversubscribe "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" \
  --set "data.path=\"$data\"" --set train.log_every_steps=20 --steps 200 --run-dir "$dir/run" \
  | tee "$dir/out.txt"
grep -q "on 2 ranks" "$dir/out.txt" || fail "did not run on 2 ranks"
[[ $(grep -c "wavetrain: done" "$dir/out.txt") == 1 ]] || fail "expected one summary line (rank 0 only)"
first=$(awk -F, '$1=="train" { print $4; exit }' "$dir/run/metrics.csv")
last=$(last_metric "$dir/run/metrics.csv" train loss)
echo "loss $first -> $last"
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a && b < 0.8) }' || fail "loss did not fall ($first -> $last)"
grep -q '"ranks": 2' "$dir/run/summary.json" || fail "summary.json does not record 2 ranks"
/usr/bin/python3 - "$dir/run/summary.json" <<'EOF' || fail "summary.json's per-rank peaks are wrong"
import json, sys
s = json.load(open(sys.argv[1]))
for key, rank0 in (("rank_peak_device_mb", "peak_device_mb"),
                   ("rank_peak_device_in_use_mb", "peak_device_in_use_mb")):
    v = s[key]
    assert len(v) == 2 and all(x > 0 for x in v), (key, v)
    assert abs(v[0] - s[rank0]) < 1e-3 * s[rank0], (key, v, rank0, s[rank0])
print("per-rank peaks MB: reserved", s["rank_peak_device_mb"], "in use", s["rank_peak_device_in_use_mb"])
EOF
